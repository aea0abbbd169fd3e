"""Handoff reconcile: functions-framework target ``reconcile`` (Cloud Tasks target, private).

Body: a reconcile task (``shared.handoff.reconcile.ReconcileTask``). Accepts only the queue
(``Bearer LOCAL_INTERNAL_TOKEN`` on the embedded default, an OIDC ID token in production).
Answers 2xx when the operation is settled (or refused for good), 401/403 for bad credentials,
400 for a malformed body, 503 when the outcome is still unknown so the queue retries with backoff.
A body ``{"kind": "handoff_sweep"}`` (the scheduler, same credentials) re-queues what the store
shows unsettled (``shared.sweep.sweep``) and answers ``{"outcome": "swept", …}``.
The last attempt is read from ``X-CloudTasks-TaskRetryCount`` (docs/design.md §4).
"""
import functools
import os

import functions_framework

from shared import logs, trace, wiring
from shared.caller_auth import CallerAuthError
from shared.config import RECONCILE_REQUIRED, Settings
from shared.handoff.queue_auth import verify_queue_caller
from shared.handoff.reconcile import ReconcileService, ReconcileTask
from shared.http_body import BodyError, read_json
from shared.logs import log
from shared.queue import background
from shared.staff.service import StaffTaskService, is_staff_task, reconcile_service
from shared.store import StoreError
from shared.sweep import sweep

#: Body of the scheduler's sweep call: ``{"kind": "handoff_sweep"}`` (docs/design.md §11).
SWEEP_KIND = "handoff_sweep"

SETTINGS = Settings.from_env(required=RECONCILE_REQUIRED)
logs.use_user_hasher(wiring.user_hasher(SETTINGS))  # keyed user hashes in logs (shared/keys.py)
logs.use_trace_project(SETTINGS.trace_project)  # trace names on log lines (shared/trace.py)


@functools.cache
def _service() -> ReconcileService:
    return reconcile_service(SETTINGS, wiring.open_store(SETTINGS), wiring.open_store(SETTINGS, read_only=True),
                             wiring.line_gateway(SETTINGS))


@functools.cache
def _staff() -> StaffTaskService:
    return StaffTaskService(SETTINGS, wiring.open_store(SETTINGS), wiring.line_gateway(SETTINGS),
                            wiring.task_queue(SETTINGS))


def _start_background() -> None:
    # Any process that uses the embedded queue may dispatch it; this one re-queues nothing.
    background.start_dispatcher(wiring.task_queue(SETTINGS))


_BACKGROUND = background.BackgroundStart(_start_background)
os.register_at_fork(after_in_child=_BACKGROUND.after_fork)


@functions_framework.http
@trace.traced  # the request's trace on every line and task (shared/trace.py)
def reconcile(request):
    """One task delivery (flask.Request, POST JSON, X-CloudTasks-* headers) → (JSON body, status)."""
    _BACKGROUND.ensure_started()
    if request.method != "POST":
        return {"error": "POST only"}, 405
    try:
        verify_queue_caller(SETTINGS, request.headers.get("Authorization"))
    except CallerAuthError as exc:
        log("WARNING", "reconcile call refused", reason=exc.__class__.__name__)
        return {"error": "unauthorized"}, exc.status
    try:
        payload = read_json(request)
    except BodyError as exc:
        return {"error": str(exc)}, exc.status
    if isinstance(payload, dict) and payload.get("kind") == SWEEP_KIND:
        # The scheduler's sweep (production; a serving webhook sweeps on the embedded default).
        try:
            service = _service()
            counts = sweep(SETTINGS, service.store, wiring.task_queue(SETTINGS), wiring.agent_queue(SETTINGS),
                           line=service.line)
        except StoreError as exc:
            return {"error": "store_unavailable", "detail": exc.__class__.__name__}, 503
        return {"outcome": "swept", **counts}, 200
    try:
        retry_count = int(request.headers.get("X-CloudTasks-TaskRetryCount", "0"))
        if is_staff_task(payload):  # pushes of the staff group's outbox (docs/design.md §10)
            staff_result = _staff().run(payload, retry_count=max(0, retry_count))
            return staff_result.body(), staff_result.http_status
        task = ReconcileTask.from_payload(payload)
    except ValueError as exc:  # InvalidReconcileTask / InvalidStaffTask, or a retry count that is not a number
        return {"error": str(exc) or "bad task"}, 400
    result = _service().run(task, retry_count=max(0, retry_count))
    return result.body(), result.http_status
