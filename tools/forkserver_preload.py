"""What the fork server of ``tools/function_process.py`` imports before it forks a function.

The fork server serves the tests' function processes and ``make run`` (``start_preloaded_module``,
``FunctionProcess(preloaded=True)``). It has imported the heavy third-party libraries
(``PRELOADED_MODULES``); importing this module adds LOCAL's own modules that the functions'
``main.py`` files import, and OpenCC's converter, so that each forked function pays neither
(about 0.1 s of CPU each, and 0.1 s more on its first text turn; the suite starts well over a
hundred functions).

Why this is the same process as a new interpreter's:

- LOCAL's modules read the environment only in ``Settings.from_env`` (shared/config.py), which each
  function's ``main.py`` calls in the child, with the child's own environment.
- They start no thread at import: background work starts after the fork (``os.register_at_fork``
  hooks) or on the first request (docs/design.md §9). The fork server itself runs one thread, so what it
  holds forks cleanly.
- OpenCC's converter holds read-only dictionaries; a function built it on its first text turn
  anyway (``shared.text``).

Nothing here imports ADK, genai or Google's clients: a forked webhook must not get them for free
(tests/unit/tools/test_forkserver_preload.py). What a function imports on a real cold start is
checked in a new interpreter (tests/integration/functions/test_cold_start_imports.py).
"""
from __future__ import annotations

import shared.caller_auth  # noqa: F401
import shared.deferred_events.task  # noqa: F401
import shared.events.ingest  # noqa: F401
import shared.handoff.queue_auth  # noqa: F401
import shared.handoff.reconcile  # noqa: F401
import shared.handoff.requeue  # noqa: F401
import shared.http_body  # noqa: F401
import shared.memory.auth  # noqa: F401
import shared.memory.service  # noqa: F401
import shared.queue.background  # noqa: F401
import shared.staff.service  # noqa: F401
import shared.sweep  # noqa: F401
import shared.webhook.service  # noqa: F401
import shared.wiring  # noqa: F401
from shared.text import reading_form

reading_form("预热")  # builds OpenCC's converter once (shared.text caches it per process)
