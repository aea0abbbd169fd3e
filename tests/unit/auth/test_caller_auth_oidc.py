"""OIDC caller authentication against garbage and repeated calls (issue 13, item 9): a bearer that
is not a well-formed JWT is refused (401) before any certificate fetch, and Google's certificates
are cached for as long as their Cache-Control header says. The ID tokens are signed with a
throwaway RSA key; the only fake is a requests requests transport (a third-party seam) that serves
that key's certificate, and counts how often it is asked."""
from __future__ import annotations

import http.client
import io
import json
import time

import pytest
import requests
import urllib3
from google.auth import jwt

from shared.caller_auth import (
    Forbidden,
    Unauthenticated,
    certificate_request,
    is_well_formed_jwt,
    verify_caller,
)

AUDIENCE = "https://memory-abc-de.a.run.app/"


class CertsTransport:
    """Stands in for the network under requests' ``HTTPAdapter.send``: answers Google's
    certificate URL with our certificate and the given Cache-Control, and counts the fetches."""

    def __init__(self, cert_pem: str, cache_control: str):
        self.cert_pem, self.cache_control, self.fetches = cert_pem, cache_control, 0

    def send(self, adapter, request):
        self.fetches += 1
        payload = json.dumps({"k1": self.cert_pem}).encode()
        head = (f"HTTP/1.1 200 OK\r\nContent-Type: application/json; charset=UTF-8\r\n"
                f"Content-Length: {len(payload)}\r\nCache-Control: {self.cache_control}\r\n"
                f"Date: {time.strftime('%a, %d %b %Y %H:%M:%S GMT', time.gmtime())}\r\n\r\n")
        wire = http.client.HTTPResponse(_Wire(head.encode() + payload), method="GET")
        wire.begin()
        raw = urllib3.HTTPResponse(body=wire, headers=dict(wire.getheaders()), status=wire.status,
                                   preload_content=False, original_response=wire,
                                   request_method=request.method, request_url=request.url)
        return adapter.build_response(request, raw)  # CacheControl's adapter sees a real response


class _Wire:
    """The bytes of one HTTP answer, as a socket that ``http.client`` can read."""

    def __init__(self, data: bytes):
        self._file = io.BytesIO(data)

    def makefile(self, *args, **kwargs):
        return self._file


def cached_request(monkeypatch, cert_pem: str, cache_control: str):
    transport = CertsTransport(cert_pem, cache_control)
    monkeypatch.setattr(requests.adapters.HTTPAdapter, "send",
                        lambda adapter, request, *args, **kwargs: transport.send(adapter, request))
    return transport, certificate_request(requests.Session())


def id_token(signer, **changes) -> str:
    now = int(time.time())
    claims = {"iss": "https://accounts.google.com", "aud": AUDIENCE, "iat": now, "exp": now + 600, "sub": "1"}
    claims.update(changes)
    return jwt.encode(signer, claims).decode()


@pytest.mark.parametrize("bearer", [
    "garbage", "a.b.c", "a.b", "....", "eyJhbGciOiJub25lIn0.e30.c2ln",  # alg none
    "eyJhbGciOiJSUzI1NiJ9.e30.c2ln",  # RS256 but no kid
    "!!.??.**", "x" * 9000 + ".e30.c2ln", "eyJhbGciOiJSUzI1NiIsImtpZCI6ImsifQ.e30.c2ln\ud800",
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
