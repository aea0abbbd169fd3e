"""OIDC caller authentication against garbage and repeated calls: a bearer that
is not a well-formed JWT is refused (401) before any certificate fetch, and Google's certificates
are cached for as long as their Cache-Control header says. The ID tokens are signed with a
throwaway RSA key; the only fake is a requests requests transport (a third-party seam) that serves
that key's certificate, and counts how often it is asked."""
from __future__ import annotations

import base64

import pytest
import requests
from hypothesis import HealthCheck, example, given, settings

from shared.caller_auth import (
    Forbidden,
    Unauthenticated,
    certificate_request,
    is_well_formed_jwt,
    verify_caller,
)
from tests import auth_support
from tests.auth_support import BEARERS, serve_certificates

AUDIENCE = "https://memory-abc-de.a.run.app/"


def cached_request(monkeypatch, cert_pem: str, cache_control: str):
    return serve_certificates(monkeypatch, cert_pem, cache_control), certificate_request(requests.Session())


def id_token(signer, **changes) -> str:
    return auth_support.id_token(signer, AUDIENCE, **changes)


@pytest.mark.parametrize("bearer", [
    "garbage", "a.b.c", "a.b", "....", "eyJhbGciOiJub25lIn0.e30.c2ln",  # alg none
    "eyJhbGciOiJSUzI1NiJ9.e30.c2ln",  # RS256 but no kid
    "!!.??.**", "x" * 9000 + ".e30.c2ln", "eyJhbGciOiJSUzI1NiIsImtpZCI6ImsifQ.e30.c2ln\ud800",
    "eyJhbGciOiJSUzI1NiIsImtpZCI6ImsxIn0.WzFd.c2ln",  # claims not an object: [1]
    "eyJhbGciOiJSUzI1NiIsImtpZCI6ImsxIn0.bm90IGpzb24.c2ln",  # claims not JSON
    "__57ImFsZyI6IlJTMjU2Iiwia2lkIjoiazEifQ.e30.c2ln",  # a header that is not UTF-8
    "eyJhbGciOiJSUzI1NiIsImtpZCI6ImsxIn0.e30.c2lnZ",  # a signature that does not decode
    "eyJhbGciOiJSUzI1NiIsImtpZCI6ImsxIn0.e30.c2ln.c2ln",  # four segments
    "Zm9v" * 3000 + ".e30.c2ln", "eyJhbGciOiJSUzI1NiIsImtpZCI6ImsxIn0.e30.c2ln\u00e9",  # huge; non-ASCII
])
def test_caller_auth_bearer_not_a_jwt_is_401_before_any_fetch(monkeypatch, signing, bearer):
    adapter, request = cached_request(monkeypatch, signing[1], "public, max-age=3600")
    with pytest.raises(Unauthenticated) as raised:
        verify_caller(f"Bearer {bearer}", internal_token=None, audience=AUDIENCE, request=request)
    assert raised.value.status == 401
    assert adapter.fetches == 0


def test_caller_auth_well_formed_but_forged_is_403_after_one_fetch(monkeypatch, signing):
    signer, cert = signing
    adapter, request = cached_request(monkeypatch, cert, "public, max-age=3600")
    forged = id_token(signer)[:-4] + "AAAA"
    assert is_well_formed_jwt(forged)
    with pytest.raises(Forbidden):
        verify_caller(f"Bearer {forged}", internal_token=None, audience=AUDIENCE, request=request)
    assert adapter.fetches == 1


def test_caller_auth_certificates_cached_while_max_age_lasts(monkeypatch, signing):
    signer, cert = signing
    adapter, request = cached_request(monkeypatch, cert, "public, max-age=3600, must-revalidate, no-transform")
    for _ in range(5):
        verify_caller(f"Bearer {id_token(signer)}", internal_token=None, audience=AUDIENCE, request=request)
    assert adapter.fetches == 1


def test_caller_auth_certificates_refetched_when_headers_forbid_caching(monkeypatch, signing):
    signer, cert = signing
    adapter, request = cached_request(monkeypatch, cert, "no-store")
    for _ in range(3):
        verify_caller(f"Bearer {id_token(signer)}", internal_token=None, audience=AUDIENCE, request=request)
    assert adapter.fetches == 3


def test_caller_auth_default_request_is_one_cached_session():
    assert certificate_request() is certificate_request()


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


_HEADER = b'{"alg":"RS256","kid":"k1"}'


@pytest.mark.parametrize("bearer", [
    _b64(b'{"alg":"RS256","kid":"k1","x":' + b"[" * 3000 + b"]" * 3000 + b"}") + ".e30.c2ln",  # deep header
    _b64(b'{"alg":"RS256","kid":"k1","x":' + b'{"a":' * 5 + b"1" + b"}" * 5 + b"}") + ".e30.c2ln",
    _b64(_HEADER) + "." + _b64(b"[" * 3000 + b"]" * 3000) + ".c2ln",  # deep claims
    _b64(b"[" * 1000 + b"]" * 1000) + ".e30.c2ln",  # a deep header that is not an object
    _b64(_HEADER) + "." + _b64(rb'{"sub":"\ud800"}') + ".c2ln",  # a lone surrogate in the claims
    _b64(rb'{"alg":"RS256","kid":"\udfff"}') + ".e30.c2ln",  # and in the key id
    _b64(b'{"alg":"RS256","kid":"k1","n":NaN}') + ".e30.c2ln",  # NaN is not JSON
])
def test_caller_auth_bearer_shaped_like_a_jwt_but_malformed_is_401_before_any_fetch(monkeypatch, signing, bearer):
    adapter, request = cached_request(monkeypatch, signing[1], "public, max-age=3600")
    assert not is_well_formed_jwt(bearer)
    with pytest.raises(Unauthenticated):
        verify_caller(f"Bearer {bearer}", internal_token=None, audience=AUDIENCE, request=request)
    assert adapter.fetches == 0


@pytest.mark.parametrize("claims", [{"iat": "now"}, {"exp": [1]}, {"iat": None, "exp": None}])
def test_caller_auth_signed_token_with_claims_of_the_wrong_type_is_401_or_403(monkeypatch, signing, claims):
    signer, cert = signing
    _, request = cached_request(monkeypatch, cert, "public, max-age=3600")
    with pytest.raises((Unauthenticated, Forbidden)):
        verify_caller(f"Bearer {id_token(signer, **claims)}", internal_token=None, audience=AUDIENCE,
                      request=request, expected_email="tasks@example.iam.gserviceaccount.com")


# One patch of requests' transport for all examples (monkeypatch is per test, not per example).
@settings(max_examples=200, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(bearer=BEARERS)
@example(bearer="Bearer " + _b64(b'{"alg":"RS256","kid":"k1","x":' + b"[" * 2000 + b"]" * 2000 + b"}") + ".e30.c2ln")
def test_caller_auth_any_bearer_is_401_or_403_and_only_a_well_formed_jwt_is_fetched_for(monkeypatch, signing, bearer):
    transport, request = cached_request(monkeypatch, signing[1], "no-store")
    try:
        verify_caller(bearer, internal_token=None, audience=AUDIENCE, request=request)
    except (Unauthenticated, Forbidden):
        pass
    else:
        raise AssertionError("accepted")
    token = bearer[len("Bearer "):].strip() if bearer.startswith("Bearer ") else None
    assert transport.fetches == (1 if token and is_well_formed_jwt(token) else 0)
