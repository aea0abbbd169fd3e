"""The webhook's HTTP client of functions/memory (error mapping, budget) and the function's caller
authentication. A scripted loopback HTTP server plays functions/memory; google-auth is faked only
at its own seam (google.oauth2.id_token)."""
from __future__ import annotations

import pytest

from shared import trace
from shared.caller_auth import Forbidden, Unauthenticated
from shared.config import Settings
from shared.identity import Actor
from shared.memory.auth import InternalTokenCredentials, caller_credentials, verify_caller
from shared.memory.client import HttpMemoryClient
from shared.memory.errors import MemoryCallRejected, MemoryOutcomeUnknown, MemoryUnavailable
from shared.trace import TraceContext, parse_traceparent
from tests.memory_support import ScriptedMemoryFunction

ALICE = Actor("test-tenant", "U7a1e5b0c2d3f4a5b6c7d8e9f0a1b2c3d")


@pytest.fixture
def scripted():
    servers = []

    def make(*answers):
        server = ScriptedMemoryFunction(*answers)
        servers.append(server)
        return HttpMemoryClient(server.url, InternalTokenCredentials("secret")), server

    yield make
    for server in servers:
        server.close()


def test_client_sends_actor_token_and_bearer_and_reads_outcome(scripted):
    client, server = scripted((200, {"outcome": "memory_saved", "revision": 1, "dietary_type": "vegan",
                                     "operation": "save"}, 0))
    result = client.submit(ALICE, "tok.en", timeout_seconds=1.0)
    assert (result.outcome, result.revision, result.dietary_type) == ("memory_saved", 1, "vegan")
    assert server.requests == [{"auth": "Bearer secret", "body": {"tenant_id": "test-tenant",
                                                                  "user_id": ALICE.user_id, "token": "tok.en"}}]


def test_client_call_carries_the_webhook_requests_trace_with_a_span_of_its_own(scripted):
    client, server = scripted(*[(200, {"outcome": "memory_saved", "revision": 1}, 0)] * 2)
    request = TraceContext.fresh()
    with trace.active(request):
        client.submit(ALICE, "tok.en", timeout_seconds=1.0)
    client.submit(ALICE, "tok.en", timeout_seconds=1.0)  # outside any request: functions/memory starts one
    sent, none = server.traceparents
    assert parse_traceparent(sent).trace_id == request.trace_id and parse_traceparent(sent).span_id != request.span_id
    assert none is None


@pytest.mark.parametrize("status, body, error", [
    (503, {"error": "unavailable"}, MemoryUnavailable),
    (503, {"error": "outcome_unknown"}, MemoryOutcomeUnknown),
    (500, {}, MemoryOutcomeUnknown),
    (401, {"error": "unauthorized"}, MemoryCallRejected),
    (400, {"error": "bad body"}, MemoryCallRejected),
    (200, {"outcome": "made_up", "revision": 1}, MemoryCallRejected),
])
def test_client_maps_answers_to_errors(scripted, status, body, error):
    client, _ = scripted((status, body, 0))
    with pytest.raises(error):
        client.submit(ALICE, "t.k", timeout_seconds=1.0)


def test_client_read_timeout_is_outcome_unknown(scripted):
    client, _ = scripted((200, {"outcome": "memory_saved", "revision": 1}, 0.5))
    with pytest.raises(MemoryOutcomeUnknown):
        client.submit(ALICE, "t.k", timeout_seconds=0.1)


def test_client_no_budget_left_makes_no_call(scripted):
    client, server = scripted()
    with pytest.raises(MemoryUnavailable):
        client.submit(ALICE, "t.k", timeout_seconds=0.0)
    assert server.requests == []


def test_auth_internal_token_accepts_only_the_exact_bearer():
    settings = Settings.from_env({"LOCAL_INTERNAL_TOKEN": "right"})
    verify_caller(settings, "Bearer right")
    with pytest.raises(Unauthenticated):
        verify_caller(settings, None)
    with pytest.raises(Unauthenticated):
        verify_caller(settings, "Bearer ")
    with pytest.raises(Forbidden):
        verify_caller(settings, "Bearer wrong")


#: JWT-shaped bearers (header {"alg":"RS256","kid":"k"}): a non-JWT never reaches the verifier.
GOOD_ID_TOKEN = "eyJhbGciOiJSUzI1NiIsImtpZCI6ImsifQ.eyJzdWIiOiIxIn0.c2ln"
FORGED_ID_TOKEN = "eyJhbGciOiJSUzI1NiIsImtpZCI6ImsifQ.eyJzdWIiOiIyIn0.c2ln"


def test_auth_production_verifies_google_id_token_for_the_function_audience(monkeypatch):
    from google.oauth2 import id_token

    seen = {}

    def fake_verify(token, request, audience=None, **kwargs):
        seen.update(token=token, audience=audience)
        if token != GOOD_ID_TOKEN:
            raise ValueError("bad signature")
        return {"aud": audience, "email": "webhook@project.iam.gserviceaccount.com"}

    monkeypatch.setattr(id_token, "verify_oauth2_token", fake_verify)
    settings = Settings.from_env({"MEMORY_FUNCTION_URL": "https://memory-xyz.a.run.app/"})
    verify_caller(settings, f"Bearer {GOOD_ID_TOKEN}")
    assert seen["audience"] == "https://memory-xyz.a.run.app/"
    with pytest.raises(Forbidden):
        verify_caller(settings, f"Bearer {FORGED_ID_TOKEN}")


def test_auth_production_caller_fetches_id_token_for_the_audience_once(monkeypatch):
    from google.oauth2 import id_token

    fetched = []
    monkeypatch.setattr(id_token, "fetch_id_token", lambda request, audience: fetched.append(audience) or "idt")
    credentials = caller_credentials(Settings.from_env({"MEMORY_FUNCTION_URL": "https://memory-xyz.a.run.app/"}))
    assert credentials.authorization() == "Bearer idt"
    assert credentials.authorization() == "Bearer idt"
    assert fetched == ["https://memory-xyz.a.run.app/"]
