"""Who may call functions/reconcile: the internal token (embedded) or a Google OIDC ID token
(production). The ID tokens here are signed with a throwaway RSA key; the only fake is google-auth's
transport seam, which serves that key's certificate instead of Google's."""
from __future__ import annotations

import json
import time

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from google.auth import crypt, jwt

from shared.caller_auth import Forbidden, Unauthenticated, VerifierUnavailable
from shared.handoff.queue_auth import verify_queue_caller

AUDIENCE = "https://reconcile-abc-de.a.run.app/"
INVOKER = "tasks-invoker@demo-project.iam.gserviceaccount.com"


class _CertsResponse:
    def __init__(self, status: int, data: bytes):
        self.status, self.data, self.headers = status, data, {}


class FakeCertsTransport:
    """google.auth.transport.Request stand-in: answers the certs URL with our certificate."""

    def __init__(self, cert_pem: str, status: int = 200):
        self.cert_pem, self.status = cert_pem, status

    def __call__(self, url, method="GET", body=None, headers=None, timeout=None, **kwargs):
        return _CertsResponse(self.status, json.dumps({"k1": self.cert_pem}).encode())


def token(signer, **changes) -> str:
    now = int(time.time())
    claims = {"iss": "https://accounts.google.com", "aud": AUDIENCE, "iat": now, "exp": now + 600,
              "email": INVOKER, "email_verified": True, "sub": "1234567890"}
    claims.update(changes)
    return jwt.encode(signer, claims).decode()


@pytest.fixture
def production(make_settings):
    return make_settings(LOCAL_INTERNAL_TOKEN="", RECONCILE_FUNCTION_URL=AUDIENCE,
                         LOCAL_TASKS_SERVICE_ACCOUNT=INVOKER)


def test_queue_auth_internal_token_compared_exactly(settings):
    verify_queue_caller(settings, f"Bearer {settings.internal_token}")
    with pytest.raises(Forbidden):
        verify_queue_caller(settings, f"Bearer {settings.internal_token}x")
    for header in (None, "", "Bearer ", "Basic abc"):
        with pytest.raises(Unauthenticated):
            verify_queue_caller(settings, header)


def test_queue_auth_oidc_token_for_audience_and_invoker_accepted(production, signing):
    signer, cert = signing
    verify_queue_caller(production, f"Bearer {token(signer)}", request=FakeCertsTransport(cert))


@pytest.mark.parametrize("changes", [
    {"aud": "https://someone-else.example/"},
    {"email": "attacker@example.com"},
    {"email_verified": False},
    {"iss": "https://evil.example"},
    {"exp": int(time.time()) - 60, "iat": int(time.time()) - 700},
])
def test_queue_auth_oidc_token_wrong_claims_forbidden(production, signing, changes):
    signer, cert = signing
    with pytest.raises(Forbidden):
        verify_queue_caller(production, f"Bearer {token(signer, **changes)}", request=FakeCertsTransport(cert))


def test_queue_auth_oidc_token_signed_by_another_key_forbidden(production, signing):
    _, cert = signing
    other = rsa.generate_private_key(public_exponent=65537, key_size=2048).private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    forged = token(crypt.RSASigner.from_string(other, key_id="k1"))
    with pytest.raises(Forbidden):
        verify_queue_caller(production, f"Bearer {forged}", request=FakeCertsTransport(cert))


def test_queue_auth_certificates_unreachable_is_retryable(production, signing):
    signer, cert = signing
    with pytest.raises(VerifierUnavailable) as raised:
        verify_queue_caller(production, f"Bearer {token(signer)}", request=FakeCertsTransport(cert, status=500))
    assert raised.value.status == 503
