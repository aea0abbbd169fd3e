"""Function-to-function authentication for functions/memory (docs/design.md §1, §9).

- Embedded default (``LOCAL_INTERNAL_TOKEN`` set): ``Authorization: Bearer <LOCAL_INTERNAL_TOKEN>``,
  compared with ``hmac.compare_digest``.
- Production (no internal token): a Google-signed ID token whose audience is
  ``MEMORY_FUNCTION_URL``, fetched by the caller with ``google.oauth2.id_token.fetch_id_token``
  (the metadata server on Cloud Run) and verified by the function with
  ``google.oauth2.id_token.verify_oauth2_token``. google-auth is imported lazily, on first use.
Source: Google Cloud docs, "Authenticating service-to-service"; google-auth ``google.oauth2.id_token``.
"""
from __future__ import annotations

import threading
import time

from shared.caller_auth import BEARER as _BEARER
from shared.caller_auth import verify_caller as _verify_caller
from shared.config import Settings

#: Google ID tokens live one hour; refresh well before that (seconds).
_ID_TOKEN_REUSE_SECONDS = 45 * 60


def verify_caller(settings: Settings, authorization: str | None) -> None:
    """Accept only the webhook's authenticated calls to functions/memory.

    Raises:
        Unauthenticated, Forbidden, VerifierUnavailable: see ``shared.caller_auth.verify_caller``.
    """
    _verify_caller(authorization, internal_token=settings.internal_token, audience=settings.memory_function_url)


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
