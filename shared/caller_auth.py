"""Authentication of calls between LOCAL's own functions (reconcile and memory are private).

- Embedded default (``LOCAL_INTERNAL_TOKEN`` set): ``Authorization: Bearer <LOCAL_INTERNAL_TOKEN>``,
  compared with ``hmac.compare_digest``.
- Production (no internal token): a Google-signed ID token whose audience is the called function's
  URL, verified with google-auth's ``id_token.verify_oauth2_token`` (signature, expiry, issuer,
  audience) and, when an expected caller is configured, its verified ``email``. google-auth is
  imported only on that path.

Source: Google Cloud docs, "Authenticating service-to-service" and Cloud Tasks "Create HTTP
target tasks" (OIDC token, audience); google-auth ``google.oauth2.id_token``; ``hmac.compare_digest``.
"""
from __future__ import annotations

import hmac
from typing import Any

BEARER = "Bearer "


class CallerAuthError(Exception):
    """Base of caller authentication failures. ``status`` is the HTTP answer."""

    status = 401


class Unauthenticated(CallerAuthError):
    """No usable ``Authorization: Bearer …`` header (HTTP 401); not retryable."""

    status = 401


class Forbidden(CallerAuthError):
    """Credentials presented but wrong, expired, for another audience or account (HTTP 403); not retryable."""

    status = 403


class VerifierUnavailable(CallerAuthError):
    """Google's signing certificates could not be fetched (HTTP 503); retryable."""

    status = 503


def verify_caller(authorization: str | None, *, internal_token: str | None, audience: str | None,
                  expected_email: str | None = None, request: Any = None) -> None:
    """Accept only an authenticated call from another LOCAL function or its queue.

    Args:
        authorization: the request's ``Authorization`` header, or None.
        internal_token: ``LOCAL_INTERNAL_TOKEN`` (embedded default); when set, it is the only credential.
        audience: the called function's URL, the ID token's expected audience (production).
        expected_email: the caller's service account, checked when given.
        request: a ``google.auth.transport.Request`` to fetch Google's certificates (tests inject one).
    Raises:
        Unauthenticated: no bearer credentials.
        Forbidden: a wrong internal token, an ID token that does not verify, or no audience to verify for.
        VerifierUnavailable: the certificates could not be fetched.
    """
    if not authorization or not authorization.startswith(BEARER) or not authorization[len(BEARER):].strip():
        raise Unauthenticated("bearer credentials required")
    presented = authorization[len(BEARER):].strip()
    if internal_token:
        if not hmac.compare_digest(presented.encode("utf-8"), internal_token.encode("utf-8")):
            raise Forbidden("wrong internal token")
        return
    if not audience:
        raise Forbidden("no ID token audience configured")
    from google.auth import exceptions as google_exceptions
    from google.oauth2 import id_token

    if request is None:
        from google.auth.transport import requests as google_requests

        request = google_requests.Request()
    try:
        claims = id_token.verify_oauth2_token(presented, request, audience=audience)
    except google_exceptions.TransportError as exc:
        raise VerifierUnavailable("could not fetch Google's certificates") from exc
    except (ValueError, google_exceptions.GoogleAuthError) as exc:  # signature, expiry, audience, issuer
        raise Forbidden("ID token did not verify") from exc
    if expected_email and (claims.get("email") != expected_email or not claims.get("email_verified")):
        raise Forbidden("ID token is not from the expected caller")
