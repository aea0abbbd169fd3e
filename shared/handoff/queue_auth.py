"""Only the queue may call functions/reconcile (docs/design.md §1: private, OIDC).

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

from typing import Any

from shared.caller_auth import verify_caller
from shared.config import Settings


def verify_queue_caller(settings: Settings, authorization: str | None, *, request: Any = None) -> None:
    """Accept only calls from the handoff queue.

    Args:
        settings: ``internal_token`` (embedded), else ``reconcile_function_url`` (the OIDC audience)
            and optionally ``tasks_service_account`` (the expected caller).
        authorization: the ``Authorization`` header, or None.
        request: a ``google.auth.transport.Request`` (tests inject one).
    Raises:
        Unauthenticated, Forbidden, VerifierUnavailable (``shared.caller_auth.CallerAuthError``,
            with ``status``): see ``shared.caller_auth.verify_caller``.
    """
    verify_caller(authorization, internal_token=settings.internal_token,
                  audience=settings.reconcile_function_url, expected_email=settings.tasks_service_account,
                  request=request)
