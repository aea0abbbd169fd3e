"""Background work of a serving process, started once per process after gunicorn's fork.

functions-framework runs gunicorn, which imports ``main.py`` in its master and then forks the
worker that serves (``functions_framework/_http/gunicorn.py``: ``GunicornApplication.load``
returns the app built before the fork). Threads do not survive a fork, and a connection opened
in the master must not be shared, so nothing here runs at import: ``BackgroundStart`` is armed at
import with ``os.register_at_fork(after_in_child=…)`` and also called on every request; it runs
once per process id (a respawned worker — e.g. after SIGKILL — runs it again).
"""
from __future__ import annotations

import os
import threading
from typing import Callable

from shared.logs import log
from shared.queue.port import TaskQueue


class BackgroundStart:
    """Run ``start`` once per process, in the process that serves; safe from any thread.

    Args:
        start: the work to begin (start the dispatcher, launch the re-queue); exceptions are logged.
    """

    def __init__(self, start: Callable[[], None]):
        self._start = start
        self._lock = threading.Lock()
        self._pid: int | None = None

    def after_fork(self) -> None:
        """The ``os.register_at_fork(after_in_child=…)`` hook: a fresh lock, then start."""
        self._lock = threading.Lock()
        self._pid = None
        self.ensure_started()

    def ensure_started(self) -> bool:
        """Start unless this process already did. Returns True when this call started it."""
        pid = os.getpid()
        if self._pid == pid:
            return False
        with self._lock:
            if self._pid == pid:
                return False
            self._pid = pid
        try:
            self._start()
        except Exception:  # noqa: BLE001 - background start must never break serving; it is logged
            log("ERROR", "background start failed", exc_info=True)
        return True


def start_dispatcher(queue: TaskQueue | None) -> None:
    """Start the queue's dispatcher thread (the embedded queue has one; Cloud Tasks has none)."""
    start = getattr(queue, "start", None)
    if callable(start):
        start()
