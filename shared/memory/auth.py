"""Function-to-function authentication for functions/memory (DESIGN §1, §9).

- Embedded default (``LOCAL_INTERNAL_TOKEN`` set): ``Authorization: Bearer <LOCAL_INTERNAL_TOKEN>``,
  compared with ``hmac.compare_digest``.
- Production (no internal token): a Google-signed ID token whose audience is
  ``MEMORY_FUNCTION_URL``, fetched by the caller with ``google.oauth2.id_token.fetch_id_token``
  (the metadata server on Cloud Run) and verified by the function with
  ``google.oauth2.id_token.verify_oauth2_token``. google-auth is imported lazily, on first use.
Source: Google Cloud docs, "Authenticating service-to-service"; google-auth ``google.oauth2.id_token``.
"""
from __future__ import annotations

import hmac
import threading
import time

from shared.config import Settings

_BEARER = "Bearer "
#: Google ID tokens live one hour; refresh well before that (seconds).
_ID_TOKEN_REUSE_SECONDS = 45 * 60


class CallerAuthError(Exception):
    """Base of caller authentication failures; never retryable. ``status`` is the HTTP answer."""

    status = 401


class Unauthenticated(CallerAuthError):
    """No usable ``Authorization: Bearer …`` header (HTTP 401); not retryable."""

    status = 401


class Forbidden(CallerAuthError):
    """Credentials were presented but are wrong, expired or for another audience (HTTP 403); not retryable."""

    status = 403


def verify_caller(settings: Settings, authorization: str | None) -> None:
    """Accept only the webhook's authenticated calls.

    Args:
        settings: ``internal_token`` (embedded default) or ``memory_function_url`` (the audience).
        authorization: the request's ``Authorization`` header, or None.
    Raises:
        Unauthenticated: missing or not a bearer header.
        Forbidden: wrong internal token, or an ID token that does not verify for the audience.
    """
    if not authorization or not authorization.startswith(_BEARER) or not authorization[len(_BEARER):].strip():
        raise Unauthenticated("bearer credentials required")
    presented = authorization[len(_BEARER):].strip()
    if settings.internal_token:
        if not hmac.compare_digest(presented.encode(), settings.internal_token.encode()):
            raise Forbidden("wrong internal token")
        return
    if not settings.memory_function_url:
        raise Forbidden("no audience configured (MEMORY_FUNCTION_URL)")
    from google.auth.transport import requests as google_requests
    from google.oauth2 import id_token

    try:
        id_token.verify_oauth2_token(presented, google_requests.Request(), audience=settings.memory_function_url)
    except ValueError as exc:
        raise Forbidden("ID token did not verify") from exc


class InternalTokenCredentials:
    """``Bearer <LOCAL_INTERNAL_TOKEN>`` (embedded default)."""

    def __init__(self, token: str):
        self._token = token

    def authorization(self) -> str:
        """The header value."""
        return _BEARER + self._token


class GoogleIdTokenCredentials:
    """A Google ID token for ``audience`` from the runtime's service account, reused for 45 min.

    Args:
        audience: the memory function's URL.
    """

    def __init__(self, audience: str):
        self.audience = audience
        self._lock = threading.Lock()
        self._cached: tuple[str, float] | None = None

    def authorization(self) -> str:
        """The header value. Raises google.auth exceptions when no token can be fetched."""
        with self._lock:
            now = time.monotonic()
            if self._cached is None or now - self._cached[1] > _ID_TOKEN_REUSE_SECONDS:
                from google.auth.transport import requests as google_requests
                from google.oauth2 import id_token

                self._cached = (id_token.fetch_id_token(google_requests.Request(), self.audience), now)
            return _BEARER + self._cached[0]


def caller_credentials(settings: Settings):
    """Credentials the webhook presents: the internal token when configured, else an ID token."""
    if settings.internal_token:
        return InternalTokenCredentials(settings.internal_token)
    return GoogleIdTokenCredentials(settings.memory_function_url or "")
