"""Events ingestion: functions-framework target ``ingest`` (HTTP, private; Cloud Scheduler, daily).

Fetches Changhua County's activities from TDX, validates and maps every record, and writes a new
versioned events snapshot (docs/design.md §5). Accepts only ``Bearer LOCAL_INTERNAL_TOKEN`` on the embedded
default, or a Google ID token for ``INGEST_FUNCTION_URL`` (from ``LOCAL_INGEST_CALLER_EMAIL`` when set).
Answers 200 ``{outcome, snapshot_version, counts, reason}`` when the data is current
(``snapshot_written`` / ``unchanged`` / ``not_modified``), 502 with the same body when the fetch failed
or had no valid record (the last good snapshot stays; the reason is recorded), 401/403 for bad
credentials, 503 when the store failed (running it again is safe).
"""
import functools

import functions_framework

from shared import logs, trace, wiring
from shared.caller_auth import CallerAuthError, verify_caller
from shared.clock import utc_now
from shared.config import INGEST_REQUIRED, Settings
from shared.events.ingest import ingest_events, log_snapshot_age
from shared.logs import log
from shared.store import StoreError

SETTINGS = Settings.from_env(required=INGEST_REQUIRED)
logs.use_user_hasher(wiring.user_hasher(SETTINGS))  # keyed user hashes in logs (shared/keys.py)
logs.use_trace_project(SETTINGS.trace_project)  # trace names on log lines (shared/trace.py)


@functools.cache
def _store():
    return wiring.open_store(SETTINGS)


@functools.cache
def _source():
    return wiring.activity_source(SETTINGS)


@functions_framework.http
@trace.traced  # the request's trace on every line and task (shared/trace.py)
def ingest(request):
    """One scheduled run (flask.Request, POST, any body) → (JSON body, status)."""
    if request.method != "POST":
        return {"error": "POST only"}, 405
    try:
        verify_caller(request.headers.get("Authorization"), internal_token=SETTINGS.internal_token,
                      audience=SETTINGS.ingest_function_url, expected_email=SETTINGS.ingest_caller_email)
    except CallerAuthError as exc:
        log("WARNING", "ingest call refused", reason=exc.__class__.__name__)
        return {"error": "unauthorized"}, exc.status
    now = utc_now()
    try:
        result = ingest_events(_store(), _source(), now=now)
    except StoreError as exc:
        log("WARNING", "ingest store error", error=exc.__class__.__name__, retryable=exc.retryable)
        return {"error": "store_unavailable"}, 503
    log_snapshot_age(_store(), now=now, stale_after_seconds=SETTINGS.events_stale_after_seconds)  # an alert
    return result.as_dict(), 200 if result.ok else 502
