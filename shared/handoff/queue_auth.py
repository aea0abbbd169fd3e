"""Only the queue may call functions/reconcile (DESIGN §1: private, OIDC).

* Embedded default (``LOCAL_INTERNAL_TOKEN`` set): the embedded queue sends
  ``Authorization: Bearer <LOCAL_INTERNAL_TOKEN>``, compared with ``hmac.compare_digest``.
* Production (no internal token): Cloud Tasks sends a Google-signed OIDC ID token whose audience
  is the function's URL (``RECONCILE_FUNCTION_URL``); it is verified with google-auth's
  ``id_token.verify_oauth2_token`` (signature, expiry, issuer, audience) and, when
  ``LOCAL_TASKS_SERVICE_ACCOUNT`` is set, its ``email`` must be that service account (verified).
  google-auth is imported only on that path.

Source: Cloud Tasks docs, "Create HTTP target tasks" (OIDC token, audience); google-auth
``google.oauth2.id_token``; Python ``hmac.compare_digest``.
"""
from __future__ import annotations

import hmac
from typing import Any

from shared.config import Settings

_BEARER = "Bearer "


class QueueAuthError(Exception):
    """The caller is not the queue; ``status`` is the HTTP answer (401 or 403); not retryable."""

    status = 401


class Unauthenticated(QueueAuthError):
    """No ``Authorization: Bearer …`` header (401); not retryable."""

    status = 401


class Forbidden(QueueAuthError):
    """Credentials presented but wrong, expired, for another audience or another account (403); not retryable."""

    status = 403


class VerifierUnavailable(QueueAuthError):
    """Google's signing certificates could not be fetched (503); retryable: the queue tries again."""

    status = 503


def verify_queue_caller(settings: Settings, authorization: str | None, *, request: Any = None) -> None:
    """Accept only calls from the handoff queue.

    Args:
        settings: ``internal_token`` (embedded), else ``reconcile_function_url`` (the OIDC audience)
            and optionally ``tasks_service_account`` (the expected caller).
        authorization: the ``Authorization`` header, or None.
        request: a ``google.auth.transport.Request`` used to fetch Google's certificates
            (default: ``google.auth.transport.requests.Request()``); injectable for tests.
    Raises:
        Unauthenticated: no bearer credentials.
        Forbidden: a wrong internal token, an ID token that does not verify, or no way to verify.
        VerifierUnavailable: the certificates to verify with could not be fetched.
    """
    if not authorization or not authorization.startswith(_BEARER) or not authorization[len(_BEARER):].strip():
        raise Unauthenticated("bearer credentials required")
    presented = authorization[len(_BEARER):].strip()
    if settings.internal_token:
        if not hmac.compare_digest(presented.encode("utf-8"), settings.internal_token.encode("utf-8")):
            raise Forbidden("wrong internal token")
        return
    if not settings.reconcile_function_url:
        raise Forbidden("no OIDC audience configured (RECONCILE_FUNCTION_URL)")
    from google.auth import exceptions as google_exceptions
    from google.oauth2 import id_token

    if request is None:
        from google.auth.transport import requests as google_requests

        request = google_requests.Request()
    try:
        claims = id_token.verify_oauth2_token(presented, request, audience=settings.reconcile_function_url)
    except google_exceptions.TransportError as exc:
        raise VerifierUnavailable("could not fetch Google's certificates") from exc
    except (ValueError, google_exceptions.GoogleAuthError) as exc:  # bad signature, expiry, audience, issuer
        raise Forbidden("ID token did not verify") from exc
    expected = settings.tasks_service_account
    if expected and (claims.get("email") != expected or not claims.get("email_verified")):
        raise Forbidden("ID token is not from the queue's service account")
