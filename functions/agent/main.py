"""Queued webhook events: functions-framework target ``agent`` (Cloud Tasks target, private).

The webhook hands this function every event it cannot finish inside LINE's 2-second budget
(docs/design.md §3, §11); the model turn plugs in here as the worker's handler (docs/design.md §8). Body: a
queued-event task (``shared.deferred_events.task.QueuedEventTask``); the event itself waits in the
store. Accepts only the queue (``Bearer LOCAL_INTERNAL_TOKEN`` on the embedded default, an OIDC ID
token for ``AGENT_FUNCTION_URL`` in production). Answers 200 when the event's answer is settled,
401/403 for bad credentials, 400 for a malformed body, 503 when the queue should try again.
"""
import functools
import os

import functions_framework

from shared import logs, trace, wiring
from shared.caller_auth import CallerAuthError, verify_caller
from shared.config import AGENT_REQUIRED, Settings
from shared.deferred_events.task import QueuedEventTask
from shared.http_body import BodyError, read_json
from shared.logs import log
from shared.queue import background

SETTINGS = Settings.from_env(required=AGENT_REQUIRED)
logs.use_user_hasher(wiring.user_hasher(SETTINGS))  # keyed user hashes in logs (shared/keys.py)
logs.use_trace_project(SETTINGS.trace_project)  # trace names on log lines (shared/trace.py)


@functools.cache
def _worker():
    return wiring.deferred_event_worker(SETTINGS)


def _start_background() -> None:
    # This process dispatches both embedded queues it uses; the webhook re-queues at start-up.
    background.start_dispatcher(wiring.agent_queue(SETTINGS))
    background.start_dispatcher(wiring.task_queue(SETTINGS))
    if SETTINGS.model_backend != "offline":
        _worker()  # load ADK and google-genai in the worker before the first model turn, not during it


_BACKGROUND = background.BackgroundStart(_start_background)
os.register_at_fork(after_in_child=_BACKGROUND.after_fork)


@functions_framework.http
@trace.traced  # the request's trace on every line and task (shared/trace.py)
def agent(request):
    """One task delivery (flask.Request, POST JSON, X-CloudTasks-* headers) → (JSON body, status)."""
    _BACKGROUND.ensure_started()
    if request.method != "POST":
        return {"error": "POST only"}, 405
    try:
        verify_caller(request.headers.get("Authorization"), internal_token=SETTINGS.internal_token,
                      audience=SETTINGS.agent_function_url, expected_email=SETTINGS.tasks_service_account)
    except CallerAuthError as exc:
        log("WARNING", "agent call refused", reason=exc.__class__.__name__)
        return {"error": "unauthorized"}, exc.status
    try:
        task = QueuedEventTask.from_payload(read_json(request))
        retry_count = int(request.headers.get("X-CloudTasks-TaskRetryCount", "0"))
    except BodyError as exc:
        return {"error": str(exc)}, exc.status
    except ValueError as exc:  # InvalidQueuedEventTask, or a retry count that is not a number
        return {"error": str(exc) or "bad task"}, 400
    result = _worker().run(task, retry_count=max(0, retry_count))
    return result.body(), result.http_status
