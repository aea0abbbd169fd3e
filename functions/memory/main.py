"""Consented dietary memory: functions-framework target ``memory`` (HTTP, private).

The only writer of preferences (docs/design.md §6). Accepts only authenticated calls from the webhook
(``Bearer LOCAL_INTERNAL_TOKEN`` on the embedded default, a Google ID token in production).
Body: ``{tenant_id, user_id, token, tapped_at?}``; the actor and the tap's time (ISO 8601 with an
offset: the verified event's ``timestamp``, at which the card's expiry is judged) come from the
webhook's verified event.
Answers 200 ``{outcome, revision, dietary_type, operation}`` for every domain outcome (refusals
included), 401/403 for bad credentials, 400 for a malformed body, 503 when the store failed
(``error: outcome_unknown`` when a write may have landed; the same token can be sent again).
"""
import functools
from datetime import datetime

import functions_framework

from shared import logs, trace, wiring
from shared.caller_auth import CallerAuthError
from shared.clock import from_iso
from shared.config import MEMORY_REQUIRED, Settings
from shared.http_body import BodyError, read_json
from shared.identity import Actor
from shared.logs import log
from shared.memory.auth import verify_caller
from shared.memory.service import submit_card
from shared.store import StoreError, StoreTimeout

SETTINGS = Settings.from_env(required=MEMORY_REQUIRED)
logs.use_user_hasher(wiring.user_hasher(SETTINGS))  # keyed user hashes in logs (shared/keys.py)
logs.use_trace_project(SETTINGS.trace_project)  # trace names on log lines (shared/trace.py)


@functools.cache
def _store():
    return wiring.open_store(SETTINGS)


def _actor(body) -> tuple[Actor, str] | None:
    if not isinstance(body, dict):
        return None
    tenant, user, token = body.get("tenant_id"), body.get("user_id"), body.get("token")
    if not all(isinstance(v, str) and v for v in (tenant, user, token)) or tenant != SETTINGS.tenant_id:
        return None
    return Actor(tenant, user), token


def _tapped_at(body) -> tuple[bool, datetime | None]:
    """(readable, the tap's aware time or None): ``tapped_at`` is optional, ISO 8601 with an offset."""
    value = body.get("tapped_at") if isinstance(body, dict) else None
    if value is None:
        return True, None
    if not isinstance(value, str) or len(value) > 40:
        return False, None
    try:
        return True, from_iso(value)
    except ValueError:
        return False, None


@functions_framework.http
@trace.traced  # the request's trace on every line and task (shared/trace.py)
def memory(request):
    """Apply one consent-card token (flask.Request, POST JSON) → (JSON body, status)."""
    if request.method != "POST":
        return {"error": "POST only"}, 405
    try:
        verify_caller(SETTINGS, request.headers.get("Authorization"))
    except CallerAuthError as exc:
        log("WARNING", "memory call refused", reason=exc.__class__.__name__)
        return {"error": "unauthorized"}, exc.status
    try:
        payload = read_json(request)
    except BodyError as exc:
        return {"error": str(exc)}, exc.status
    parsed = _actor(payload)
    readable, tapped_at = _tapped_at(payload)
    if parsed is None or not readable:
        return {"error": "expected JSON {tenant_id, user_id, token, tapped_at?} for this tenant"}, 400
    try:
        result = submit_card(SETTINGS, _store(), *parsed, tapped_at=tapped_at)
    except StoreTimeout:
        return {"error": "outcome_unknown"}, 503
    except StoreError as exc:
        log("WARNING", "memory store error", error=exc.__class__.__name__, retryable=exc.retryable)
        return {"error": "unavailable" if exc.retryable else "store_error"}, 503 if exc.retryable else 500
    return result.as_dict(), 200
