"""LINE webhook: functions-framework target ``webhook`` (HTTP, public, signature required).

Start: ``python -m functions_framework --source functions/webhook/main.py --target webhook``.
Settings are checked at import so a missing secret stops start-up; the store, the LINE client
and the task queue are built on first use, in the worker. gunicorn imports this module in its
master and forks the worker, so the queue's dispatcher and the start-up re-queue begin after the
fork (``os.register_at_fork``) or on the first request, never at import (docs/design.md §9).
"""
import functools
import os

import functions_framework

from shared import logs, sweep, trace, wiring
from shared.config import WEBHOOK_REQUIRED, Settings
from shared.http_body import BodyError, SlowClientGate, read_body
from shared.logs import log
from shared.queue import background
from shared.webhook import service as _service_module  # noqa: F401  (import cost paid at start-up, not in LINE's 2 s)

SETTINGS = Settings.from_env(required=WEBHOOK_REQUIRED)
logs.use_user_hasher(wiring.user_hasher(SETTINGS))  # keyed user hashes in logs (shared/keys.py)
logs.use_trace_project(SETTINGS.trace_project)  # trace names on log lines (shared/trace.py)
#: Slow bodies hold at most this many threads, each for at most the body timeout.
_GATE = SlowClientGate(SETTINGS.webhook_slow_client_slots, SETTINGS.webhook_body_timeout_seconds)


@functools.cache
def _service():
    return wiring.webhook_service(SETTINGS)


def _start_background() -> None:
    service = _service()
    background.start_dispatcher(service.queue)
    background.start_dispatcher(service.event_queue)
    # Without an event queue, the answers still owed by push are answered here (``local_events``).
    events = service.event_queue if service.event_queue is not None else service.local_events
    # the start-up re-queue, then the sweep (LINE's push quota read once per window)
    sweep.start_background(SETTINGS, service.store, service.queue, events, line=service.line)


_BACKGROUND = background.BackgroundStart(_start_background)
os.register_at_fork(after_in_child=_BACKGROUND.after_fork)


@functions_framework.http
@trace.traced  # the request's trace on every line and task (shared/trace.py)
def webhook(request):
    """Handle one LINE delivery (flask.Request, POST, JSON body) → (JSON body, status)."""
    _BACKGROUND.ensure_started()
    try:  # first, whatever the method: functions-framework reads the whole body after any answer
        body = read_body(request, max_bytes=SETTINGS.webhook_max_body_bytes, gate=_GATE)
    except BodyError as exc:
        log("WARNING", "webhook rejected", reason=exc.__class__.__name__, status=exc.status)
        return {"error": str(exc)}, exc.status
    if request.method != "POST":
        return {"error": "POST only"}, 405
    result = _service().handle(body, request.headers.get("X-Line-Signature"))
    return result.body, result.status
