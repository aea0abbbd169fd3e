"""The internal functions (reconcile, memory, agent, ingest) against any credential and any body:
401 or 403 for whatever is not a verified caller, 400 for a body that is not theirs even from an
authenticated caller, and never a 5xx.

In process through each function's real app (functions-framework's ``create_app(...).test_client()``)
on the production auth path (no ``LOCAL_INTERNAL_TOKEN``: Google ID tokens, whose certificates come
from a stand-in transport that counts its fetches), and over real HTTP against function processes.
No test reaches the network: the processes get a proxy on a closed loopback port for anything but
loopback, so a certificate fetch would fail (and answer 503) instead of leaving the machine.
"""
from __future__ import annotations

import base64
import json

import pytest
import requests
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from shared.caller_auth import is_well_formed_jwt
from tests.auth_support import ANY_TEXT, BEARERS, JSON_VALUES, id_token, serve_process_certificates
from tests.conftest import REPO, TEST_USER
from tools.function_process import free_port
from tools.tdx_standin import CLIENT_ID, CLIENT_SECRET, TdxStandin

FUNCTIONS = ("reconcile", "memory", "agent", "ingest")
AUDIENCES = {"reconcile": ("RECONCILE_FUNCTION_URL", "https://reconcile-abc-de.a.run.app/"),
             "memory": ("MEMORY_FUNCTION_URL", "https://memory-abc-de.a.run.app/"),
             "agent": ("AGENT_FUNCTION_URL", "https://agent-abc-de.a.run.app/"),
             "ingest": ("INGEST_FUNCTION_URL", "https://ingest-abc-de.a.run.app/")}
#: A body of each kind each function reads; the hypothesis bodies change their fields.
BODIES = {
    "reconcile": [{"v": 1, "kind": "handoff_reconcile", "tenant_id": "test-tenant", "user_id": TEST_USER,
                   "idempotency_key": "0" * 32, "content_hash": "0" * 64, "reason": "relay",
                   "reply_event_id": None, "tag": None, "tapped_at": None},
                  {"v": 1, "kind": "staff_notice", "tenant_id": "test-tenant", "notice_id": "n"},
                  {"kind": "handoff_sweep"}],
    "memory": [{"tenant_id": "test-tenant", "user_id": TEST_USER, "token": "x.y"}],
    "agent": [{"v": 1, "kind": "queued_event", "tenant_id": "test-tenant", "webhook_event_id": "01J0AAAA",
               "tag": None}],
    "ingest": [{"source": "scheduler"}],  # read by no one: ingest takes any body
}
#: Strings no function could take as an id: a lone surrogate, a huge one, one with NUL and emoji.
WEIRD_TEXT = st.one_of(ANY_TEXT, st.just("\ud800"), st.just("a" * 70_000), st.just("\x00🙂\u202e"))
FIELD_VALUES = st.one_of(JSON_VALUES, WEIRD_TEXT)


def _deep(depth: int, kind: str) -> bytes:
    return (b'{"a":' * depth + b"1" + b"}" * depth) if kind == "object" else (b"[" * depth + b"]" * depth)


#: Bodies no internal function reads: 400. Bytes that are not JSON (or not UTF-8), JSON that is not
#: an object, nesting past the functions' depth and past ``json``'s recursion limit, and a lone
#: surrogate in any string of an otherwise well-formed body.
MALFORMED = st.one_of(
    st.binary(max_size=80).filter(lambda data: not data.strip().startswith(b"{")),
    JSON_VALUES.filter(lambda value: not isinstance(value, dict)).map(lambda value: json.dumps(value).encode()),
    st.tuples(st.integers(9, 3000), st.sampled_from(["object", "array"])).map(lambda spec: _deep(*spec)),
)


def _with_surrogate(name: str):
    return st.tuples(st.sampled_from(BODIES[name]), ANY_TEXT).map(
        lambda pair: json.dumps({**pair[0], next(iter(pair[0])): "\ud800" + pair[1]}).encode())


def _changed(name: str):
    """A body of ``name``'s kind with some fields (its own or new ones) set to any value."""
    def change(base: dict):
        keys = st.sampled_from(sorted(base)) | ANY_TEXT
        return st.dictionaries(keys, FIELD_VALUES, max_size=3).map(lambda changes: {**base, **changes})
    return st.sampled_from(BODIES[name]).flatmap(change).map(lambda body: json.dumps(body).encode())


#: Bodies of any function's kind with a lone surrogate in a field (400), and with fields changed.
WITH_SURROGATE = st.sampled_from(FUNCTIONS).flatmap(_with_surrogate)
CHANGED = st.sampled_from(FUNCTIONS).flatmap(_changed)
#: What a caller could send: any of the above.
ANY_BODY = st.one_of(MALFORMED, WITH_SURROGATE, CHANGED)
#: A JWT-shaped bearer whose header nests past ``json``'s recursion limit (google-auth's
#: ``json.loads`` raised RecursionError on it), and a body that does.
DEEP_HEADER_BEARER = "Bearer " + base64.urlsafe_b64encode(
    b'{"alg":"RS256","kid":"k1","x":' + b"[" * 2000 + b"]" * 2000 + b"}").rstrip(b"=").decode() + ".e30.c2ln"
DEEP_BODY = b'{"v": 1, "kind": "handoff_reconcile", "tag": ' + b"[" * 5000 + b"]" * 5000 + b"}"


#: ``X-CloudTasks-TaskRetryCount`` values, or none.
RETRY_COUNTS = st.none() | st.sampled_from(["0", "3", "-1", "١", " 2 ", "9" * 5000]) | ANY_TEXT


def _header_text(value: str) -> str:
    return value.replace("\r", "").replace("\n", "")  # a header cannot carry them


@pytest.fixture
def tdx():
    with TdxStandin(json.loads((REPO / "tests" / "fixtures" / "tdx" / "changhua-activities.json").read_text())) as standin:
        yield standin


def production_env(base_env: dict[str, str], tdx) -> dict[str, str]:
    """``base_env`` on the production auth path: no internal token, every function's audience."""
    return {**base_env, "LOCAL_INTERNAL_TOKEN": "", **dict(AUDIENCES.values()),
            "TDX_CLIENT_ID": CLIENT_ID, "TDX_CLIENT_SECRET": CLIENT_SECRET, "TDX_API_BASE_URL": tdx.api_base_url,
            "TDX_TOKEN_URL": tdx.token_url, "LOCAL_TDX_MAX_RETRIES": "0"}


@pytest.fixture
def production(function_app, base_env, tdx, monkeypatch, signing):
    """Each internal function's app on the production auth path, and the certificate transport."""
    env = production_env(base_env, tdx)
    apps = {name: function_app(name, env) for name in FUNCTIONS}
    return apps, serve_process_certificates(monkeypatch, signing[1])


# One app and one certificate transport for all examples (fixtures are per test, not per example).
# Derandomized, without a database, as the webhook fuzz test: the same examples on every run.
_PER_TEST = settings(deadline=None, derandomize=True, database=None,
                     suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


@pytest.mark.parametrize("name", FUNCTIONS)
@settings(_PER_TEST, max_examples=50)
@given(bearer=BEARERS.map(_header_text))
@example(bearer=DEEP_HEADER_BEARER)
def test_internal_functions_any_bearer_is_401_or_403_and_malformed_ones_fetch_nothing(production, name, bearer):
    apps, certificates = production
    before = certificates.fetches
    response = apps[name].post("/", data=b"{}", headers={"Authorization": bearer,
                                                         "Content-Type": "application/json"})
    assert response.status_code in (401, 403), response.get_data(as_text=True)
    token = bearer[len("Bearer "):].strip() if bearer.startswith("Bearer ") else ""
    if not is_well_formed_jwt(token):
        assert certificates.fetches == before


def _post_as_caller(app, signing, name: str, body: bytes, retry: str | None = None):
    headers = {"Authorization": f"Bearer {id_token(signing[0], AUDIENCES[name][1])}",
               "Content-Type": "application/json"}
    if retry is not None:
        headers["X-CloudTasks-TaskRetryCount"] = _header_text(retry)
    return app.post("/", data=body, headers=headers)


@pytest.mark.parametrize("name", ["reconcile", "memory", "agent"])  # ingest reads no body
@settings(_PER_TEST, max_examples=60)
@given(body=ANY_BODY, retry=RETRY_COUNTS)
@example(body=DEEP_BODY, retry=None)
def test_internal_functions_any_body_from_an_authenticated_caller_is_never_5xx(production, signing, name, body, retry):
    response = _post_as_caller(production[0][name], signing, name, body, retry)
    assert response.status_code < 500, response.get_data(as_text=True)


@pytest.mark.parametrize("name", ["reconcile", "memory", "agent"])
@settings(_PER_TEST, max_examples=60)
@given(body=st.one_of(MALFORMED, WITH_SURROGATE))
@example(body=DEEP_BODY)
def test_internal_functions_malformed_body_from_an_authenticated_caller_is_400(production, signing, name, body):
    response = _post_as_caller(production[0][name], signing, name, body)
    assert response.status_code == 400, response.get_data(as_text=True)


@pytest.mark.parametrize("body", [DEEP_BODY, b"[" * 60_000])
@pytest.mark.parametrize("name", ["reconcile", "memory", "agent"])
def test_internal_functions_deep_body_is_400(production, signing, name, body):
    assert _post_as_caller(production[0][name], signing, name, body).status_code == 400


def _surrogate_in(name: str, index: int, field: str) -> tuple[str, bytes]:
    return name, json.dumps({**BODIES[name][index], field: "\ud800"}).encode()


@pytest.mark.parametrize("name, body", [
    _surrogate_in("reconcile", 0, "user_id"), _surrogate_in("reconcile", 0, "tag"),
    _surrogate_in("reconcile", 0, "reply_event_id"),
    _surrogate_in("memory", 0, "user_id"), _surrogate_in("memory", 0, "token"), _surrogate_in("agent", 0, "tag"),
])
def test_internal_functions_lone_surrogate_in_an_id_is_400(production, signing, name, body):
    assert _post_as_caller(production[0][name], signing, name, body).status_code == 400


def _unreachable_proxy() -> dict[str, str]:
    """Proxy variables that send any request not to loopback to a closed loopback port."""
    dead = f"http://127.0.0.1:{free_port()}"
    return {"HTTPS_PROXY": dead, "HTTP_PROXY": dead, "https_proxy": dead, "http_proxy": dead,
            "NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost"}


@pytest.mark.slow(seconds=10)
def test_internal_functions_over_http_any_bearer_and_any_body_is_never_5xx(start_function, base_env, tdx):
    reconcile = start_function("reconcile", {**production_env(base_env, tdx), **_unreachable_proxy()})
    memory = start_function("memory", {**base_env, **_unreachable_proxy()})  # the internal token: a caller

    # Malformed credentials only: a well-formed JWT needs Google's certificates, which no process
    # here can fetch (the in-process tests serve them).
    @settings(_PER_TEST, max_examples=40)
    @given(bearer=BEARERS.map(_header_text).filter(lambda value: not is_well_formed_jwt(value[len("Bearer "):]))
           .map(lambda value: value.encode("utf-8", "surrogatepass")))
    @example(bearer=DEEP_HEADER_BEARER.encode())
    def any_bearer(bearer):
        response = requests.post(reconcile.url, data=b"{}", timeout=30, headers={"Authorization": bearer})
        # 400 or 431: gunicorn refused the header itself (a character or a length it does not take)
        assert response.status_code in (400, 401, 403, 431), response.text

    @settings(_PER_TEST, max_examples=40)
    @given(body=ANY_BODY)
    @example(body=DEEP_BODY)
    def any_body(body):
        response = requests.post(memory.url, data=body, timeout=30,
                                 headers={"Authorization": "Bearer test-internal-token"})
        assert response.status_code < 500, response.text

    any_bearer()
    any_body()
    assert reconcile.log_entries("reconcile call refused")
