"""Google ID tokens for the caller-authentication tests, Google's certificates served without the
network (``CertsTransport`` stands in for requests' ``HTTPAdapter.send``, a third-party seam, and
answers with the ``signing`` fixture's certificate, counting the fetches), and hypothesis
strategies for hostile credentials and JSON (``BEARERS``, ``JSON_VALUES``, ``ANY_TEXT``)."""
from __future__ import annotations

import base64
import http.client
import io
import json
import time

import requests
import urllib3
from google.auth import jwt
from hypothesis import strategies as st


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


def serve_certificates(monkeypatch, cert_pem: str, cache_control: str) -> CertsTransport:
    """Every requests call in this process is answered by a ``CertsTransport`` (returned)."""
    transport = CertsTransport(cert_pem, cache_control)
    monkeypatch.setattr(requests.adapters.HTTPAdapter, "send",
                        lambda adapter, request, *args, **kwargs: transport.send(adapter, request))
    return transport


def serve_process_certificates(monkeypatch, cert_pem: str) -> CertsTransport:
    """The process-wide certificate fetch of ``shared.caller_auth`` (what a function in this process
    uses) answered by a ``CertsTransport`` (returned), never cached; every other HTTP call is untouched."""
    from google.auth.transport import requests as google_requests

    from shared import caller_auth

    transport = CertsTransport(cert_pem, "no-store")

    class Adapter(requests.adapters.HTTPAdapter):
        def send(self, request, *args, **kwargs):
            return transport.send(self, request)

    session = requests.Session()
    session.mount("https://", Adapter())
    session.mount("http://", Adapter())
    monkeypatch.setattr(caller_auth, "_CERT_REQUEST", google_requests.Request(session=session))
    return transport


def id_token(signer, audience: str, **changes) -> str:
    """A Google-style ID token for ``audience`` signed by ``signer`` (valid for 10 minutes), with
    ``changes`` to its claims."""
    now = int(time.time())
    claims = {"iss": "https://accounts.google.com", "aud": audience, "iat": now, "exp": now + 600, "sub": "1"}
    claims.update(changes)
    return jwt.encode(signer, claims).decode()


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


#: Any text, lone surrogates included (an in-process header can carry any but CR and LF).
ANY_TEXT = st.text(st.characters(exclude_categories=()), max_size=60)
_JSON_SCALARS = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | ANY_TEXT
#: Any JSON value (lone surrogates included in its strings: ``json.dumps`` escapes them).
JSON_VALUES = st.recursive(_JSON_SCALARS, lambda inner: st.lists(inner, max_size=3)
                           | st.dictionaries(ANY_TEXT, inner, max_size=3), max_leaves=8)
_SEGMENT_BYTES = st.one_of(
    st.binary(max_size=40),
    JSON_VALUES.map(lambda value: json.dumps(value).encode()),
    st.dictionaries(ANY_TEXT, JSON_VALUES, max_size=3).map(
        lambda extra: json.dumps({**extra, "alg": "RS256", "kid": "k1"}).encode()),
)
#: Nesting deep enough for ``json`` to raise RecursionError, short enough for the 8,192-character cap.
_DEEP = st.integers(900, 3000).map(lambda depth: b"[" * depth + b"]" * depth)
_HEADERS = st.one_of(_SEGMENT_BYTES, st.just(b'{"alg":"RS256","kid":"k1"}'),
                     _DEEP.map(lambda deep: b'{"alg":"RS256","kid":"k1","x":' + deep + b"}"))
_CLAIMS = st.one_of(_SEGMENT_BYTES, st.just(b"{}"), _DEEP)


def _compact(parts) -> str:
    return ".".join(_b64(part) for part in parts)


_JWT_LIKE = st.one_of(st.tuples(_HEADERS, _CLAIMS, st.binary(min_size=1, max_size=300)).map(_compact),
                      st.lists(_SEGMENT_BYTES, min_size=1, max_size=5).map(_compact))
#: ``Authorization`` values: any text, "Bearer " and any text, JWT-shaped bearers (any segments, a
#: header naming RS256 and a key id, JSON nested past ``json``'s recursion limit), huge ones.
BEARERS = st.one_of(ANY_TEXT, ANY_TEXT.map("Bearer ".__add__), _JWT_LIKE.map("Bearer ".__add__),
                    st.integers(8000, 40000).map(lambda n: "Bearer " + "a" * n))
