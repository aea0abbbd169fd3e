"""HTTP adapter of the MemoryClient port: the webhook's client of functions/memory.

POST ``MEMORY_FUNCTION_URL`` with JSON ``{tenant_id, user_id, token, tapped_at?}`` and an ``Authorization``
header (shared.memory.auth); the function answers 200 ``{outcome, revision, …}`` for every domain
outcome, 401/403/400 for a refused call and 503 for a retryable store error. The timeout is the
caller's, cut to fit LINE's 2-second webhook budget (docs/design.md §3). The call carries the current
request's trace with a span of its own (``shared.trace.outgoing_headers``), so functions/memory's
lines join the webhook's.
"""
from __future__ import annotations

from datetime import datetime

import requests
from urllib3.exceptions import ConnectTimeoutError, MaxRetryError, NewConnectionError

from shared import trace
from shared.clock import to_iso
from shared.identity import Actor
from shared.logs import hash_user, log
from shared.memory.errors import MemoryCallRejected, MemoryOutcomeUnknown, MemoryUnavailable
from shared.memory.port import OUTCOMES, MemoryResult


def _never_sent(exc: requests.ConnectionError) -> bool:
    """True when the connection was never made (refused, no route): the call cannot have applied."""
    reason = exc.args[0] if exc.args else None
    if isinstance(reason, MaxRetryError):
        reason = reason.reason
    return isinstance(reason, (NewConnectionError, ConnectTimeoutError))


class HttpMemoryClient:
    """Calls functions/memory over HTTP.

    Args:
        url: MEMORY_FUNCTION_URL.
        credentials: has ``authorization() -> str`` (internal token or Google ID token).
        session: an injected ``requests.Session``; default: one built on first use.
    """

    def __init__(self, url: str, credentials, session: requests.Session | None = None):
        self.url = url
        self.credentials = credentials
        self._session = session

    def _http(self) -> requests.Session:
        if self._session is None:
            self._session = requests.Session()
        return self._session

    def submit(self, actor: Actor, token: str, *, timeout_seconds: float,
               tapped_at: datetime | None = None) -> MemoryResult:
        """See MemoryClient.submit. ``tapped_at`` is sent as ``tapped_at`` (ISO 8601, UTC).

        Raises:
            MemoryUnavailable: no connection, no credentials, or 503 before writing.
            MemoryOutcomeUnknown: read timeout, a dropped connection, 5xx other than a plain 503.
            MemoryCallRejected: 400/401/403, or a 200 body that is not an outcome.
        """
        if timeout_seconds <= 0:
            raise MemoryUnavailable("no time left in the webhook budget")
        try:
            authorization = self.credentials.authorization()
        except Exception as exc:  # google.auth errors: metadata server unreachable, etc.
            raise MemoryUnavailable(f"no credentials: {exc.__class__.__name__}") from exc
        body = {"tenant_id": actor.tenant_id, "user_id": actor.user_id, "token": token}
        if tapped_at is not None:
            body["tapped_at"] = to_iso(tapped_at)
        try:
            response = self._http().post(self.url, json=body, timeout=timeout_seconds,
                                         headers={"Authorization": authorization, **trace.outgoing_headers()})
        except requests.ConnectTimeout as exc:
            raise MemoryUnavailable("connect timeout") from exc
        except requests.Timeout as exc:
            raise MemoryOutcomeUnknown("read timeout") from exc
        except requests.ConnectionError as exc:
            if _never_sent(exc):
                raise MemoryUnavailable("connection refused") from exc
            raise MemoryOutcomeUnknown("connection dropped") from exc
        return self._result(response, actor)

    @staticmethod
    def _result(response: requests.Response, actor: Actor) -> MemoryResult:
        status = response.status_code
        try:
            data = response.json()
        except ValueError:
            data = {}
        if status == 200:
            outcome = data.get("outcome") if isinstance(data, dict) else None
            if outcome not in OUTCOMES or not isinstance(data.get("revision"), int):
                raise MemoryCallRejected(status, "unexpected body")
            return MemoryResult(outcome, data["revision"], data.get("dietary_type"), data.get("operation"))
        log("WARNING", "memory function refused or failed", status=status, user=hash_user(actor.user_id))
        if status == 503:
            if isinstance(data, dict) and data.get("error") == "outcome_unknown":
                raise MemoryOutcomeUnknown("store outcome unknown")
            raise MemoryUnavailable("memory function unavailable")
        if status >= 500:
            raise MemoryOutcomeUnknown(f"memory function answered {status}")
        raise MemoryCallRejected(status, str(data.get("error", "")) if isinstance(data, dict) else "")
