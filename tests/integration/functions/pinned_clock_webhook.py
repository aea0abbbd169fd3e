"""functions/webhook/main.py served by functions-framework as it is, with one change: the webhook use
case's clock reads ``PINNED_NOW`` (ISO 8601 with its offset) instead of the wall clock, so a test can
send signed bodies over HTTP to a real webhook process and assert the dates a reply names.

Start: ``FunctionProcess("webhook", env | {"PINNED_NOW": …}, log, source=<this file>, preloaded=True)``;
never import it in a test process (main.py reads its settings at import). Test support only.
"""
from __future__ import annotations

import functools
import importlib.util
import os
from datetime import datetime
from pathlib import Path

_MAIN = Path(__file__).resolve().parents[3] / "functions" / "webhook" / "main.py"
_spec = importlib.util.spec_from_file_location("webhook_main", _MAIN)
assert _spec is not None and _spec.loader is not None
main = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(main)

_PINNED = datetime.fromisoformat(os.environ["PINNED_NOW"]) if "PINNED_NOW" in os.environ else None
_wall_clock_service = main._service


@functools.cache
def _pinned_service():
    service = _wall_clock_service()
    if _PINNED is not None:
        service.clock = lambda: _PINNED
    return service


main._service = _pinned_service
webhook = main.webhook
