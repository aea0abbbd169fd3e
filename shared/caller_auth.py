"""Authentication of calls between LOCAL's own functions (reconcile and memory are private).

- Embedded default (``LOCAL_INTERNAL_TOKEN`` set): ``Authorization: Bearer <LOCAL_INTERNAL_TOKEN>``,
  compared with ``hmac.compare_digest``.
- Production (no internal token): a Google-signed ID token whose audience is the called function's
  URL, verified with google-auth's ``id_token.verify_oauth2_token`` (signature, expiry, issuer,
  audience) and, when an expected caller is configured, its verified ``email``. google-auth is
  imported only on that path. A bearer that is not a well-formed JWT is refused with 401 before
  anything is fetched and before google-auth reads it: three base64url segments, at most 8,192
  characters, a header and a claims set that are JSON objects nested at most 4 deep with Unicode
  text only (``shared.bounded_json``: google-auth's own ``json.loads`` would raise
  ``RecursionError`` on a deeply nested header), the header naming RS256 and a key id, and a
  signature that decodes. Whatever google-auth then raises on a token it cannot verify is a 403
  (a ``ValueError`` or ``GoogleAuthError``: signature, expiry, audience, issuer) or, anything
  else, a 401: no credential ever answers 500. Google's certificates are fetched through one
  process-wide CacheControl session, which keeps them for as long as Google's ``Cache-Control``
  headers allow (google-auth's documented way).

Source: Google Cloud docs, "Authenticating service-to-service" and Cloud Tasks "Create HTTP
target tasks" (OIDC token, audience); google-auth ``google.oauth2.id_token`` (its module docstring:
"caching … using CacheControl"), ``google.auth.jwt`` (it decodes the header and claims with
``json.loads``); RFC 7515 §7.1 (compact serialization), RFC 7519 §7.2 (JWT validation);
``hmac.compare_digest``.
"""
from __future__ import annotations

import base64
import binascii
import hmac
import re
import threading
from typing import Any

from shared import bounded_json

BEARER = "Bearer "
#: One JWS compact segment: base64url without padding (RFC 7515 §2, §7.1).
_SEGMENT = re.compile(r"[A-Za-z0-9_-]+")
#: Google ID tokens are about 1 KiB; anything far longer is not one.
_MAX_JWT_CHARS = 8192
#: A JOSE header and an ID token's claims are flat objects (RFC 7515 §4, RFC 7519 §4).
_MAX_JWT_DEPTH = 4
_CERT_REQUEST: Any = None
_CERT_REQUEST_LOCK = threading.Lock()


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
        Unauthenticated: no bearer credentials, or (production) a bearer that is not a well-formed
            JWT; refused before any certificate fetch.
        Forbidden: a wrong internal token, an ID token that does not verify, or no audience to verify for.
        VerifierUnavailable: the certificates could not be fetched.
    """
    if not authorization or not authorization.startswith(BEARER) or not authorization[len(BEARER):].strip():
        raise Unauthenticated("bearer credentials required")
    presented = authorization[len(BEARER):].strip()
    if internal_token:  # surrogatepass: any str has bytes to compare, even a lone surrogate
        if not hmac.compare_digest(presented.encode("utf-8", "surrogatepass"),
                                   internal_token.encode("utf-8", "surrogatepass")):
            raise Forbidden("wrong internal token")
        return
    if not audience:
        raise Forbidden("no ID token audience configured")
    if not is_well_formed_jwt(presented):
        raise Unauthenticated("bearer is not a JWT")
    from google.auth import exceptions as google_exceptions
    from google.oauth2 import id_token

    if request is None:
        request = certificate_request()
    try:
        claims = id_token.verify_oauth2_token(presented, request, audience=audience)
    except google_exceptions.TransportError as exc:
        raise VerifierUnavailable("could not fetch Google's certificates") from exc
    except (ValueError, google_exceptions.GoogleAuthError) as exc:  # signature, expiry, audience, issuer
        raise Forbidden("ID token did not verify") from exc
    except Exception as exc:  # noqa: BLE001 - e.g. a TypeError on a claim of the wrong type: unreadable
        raise Unauthenticated("ID token could not be read") from exc
    if not isinstance(claims, dict):
        raise Unauthenticated("ID token could not be read")
    if expected_email and (claims.get("email") != expected_email or not claims.get("email_verified")):
        raise Forbidden("ID token is not from the expected caller")


def is_well_formed_jwt(token: str) -> bool:
    """True when ``token`` has the shape of a Google ID token: a signed JWT in compact form.

    Three non-empty base64url segments, at most 8,192 characters; the header and the claims set
    decode to JSON objects (``shared.bounded_json.loads``: UTF-8, at most ``_MAX_JWT_DEPTH`` deep,
    Unicode text), the header with ``alg`` RS256 and a ``kid``; the signature decodes. Nothing is
    verified and nothing is fetched: this spares the certificate fetch for what cannot be a token,
    and google-auth only ever reads what passed it.
    """
    if len(token) > _MAX_JWT_CHARS:
        return False
    parts = token.split(".")
    if len(parts) != 3 or not all(_SEGMENT.fullmatch(part) for part in parts):
        return False
    header, claims, signature = (_base64url(part) for part in parts)
    if header is None or claims is None or signature is None:
        return False
    try:
        header_value = bounded_json.loads(header, max_depth=_MAX_JWT_DEPTH)
        claims_value = bounded_json.loads(claims, max_depth=_MAX_JWT_DEPTH)
    except bounded_json.MalformedJSON:
        return False
    return (isinstance(header_value, dict) and isinstance(claims_value, dict)
            and header_value.get("alg") == "RS256" and isinstance(header_value.get("kid"), str))


def _base64url(segment: str) -> bytes | None:
    """The bytes of one base64url segment without padding (RFC 7515 §2), or None."""
    try:
        return base64.urlsafe_b64decode(segment + "=" * (-len(segment) % 4))
    except (binascii.Error, ValueError):
        return None


def certificate_request(session: Any = None) -> Any:
    """The ``google.auth.transport.Request`` that fetches Google's certificates, cache-aware.

    Args:
        session: a ``requests.Session`` to wrap (tests mount a fake transport adapter on it); None
            for the process-wide one, built once on first use.
    Returns:
        ``google.auth.transport.requests.Request`` over ``cachecontrol.CacheControl(session)``:
        a certificate response is reused while its ``Cache-Control: max-age`` lasts, then revalidated.
    """
    global _CERT_REQUEST
    import cachecontrol
    import requests
    from google.auth.transport import requests as google_requests

    if session is not None:
        return google_requests.Request(session=cachecontrol.CacheControl(session))
    with _CERT_REQUEST_LOCK:
        if _CERT_REQUEST is None:
            _CERT_REQUEST = google_requests.Request(session=cachecontrol.CacheControl(requests.Session()))
        return _CERT_REQUEST
