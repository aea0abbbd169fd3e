"""The process's model client (shared/agent/client.py) and the request it sends: one google-genai client
and one HTTP session per process, reused by every turn and closed at exit; one call to one of the turn's
tools (function calling mode ANY); the thinking setting of the model's family; retries inside the turn's
budget; thought signatures sent back unchanged if a run ever makes a second request (docs/design.md §8).
Through the real ADK Runner and google-genai client to the Gemini stand-in on loopback."""
from __future__ import annotations

import base64
import dataclasses
import re
import uuid

import pytest

from shared.turn.engine import start_turn
from tests.conftest import all_text
from tests.unit.agent.agent_support import call, ctx_for, model_settings, model_turn
from tools.gemini_standin import GeminiStandin

# shared.agent.* (google.adk, google.genai) is imported by the tests that use it, not at collection.

VEGETARIAN_IN_HUATAN = call("search_local_places", area="花壇鄉")


def last_body(standin) -> dict:
    return standin.requests(standin.last_seq() - 1)[0]["body"]


def snake(fields: dict) -> dict:
    """JSON field names as proto3 reads them: lowerCamelCase and the original snake_case are one field
    (google-genai sends thinkingConfig's fields in snake_case)."""
    return {re.sub(r"(?<!^)(?=[A-Z])", "_", key).lower(): value for key, value in fields.items()}


def signature_bytes(value: str) -> bytes:
    """A thoughtSignature's bytes: proto3 JSON reads standard and URL-safe base64 alike (google-genai sends
    URL-safe), https://protobuf.dev/programming-guides/json/ ("bytes")."""
    return base64.b64decode(value.replace("-", "+").replace("_", "/"))


# -- the request ----------------------------------------------------------------------------------------

def test_agent_client_request_asks_for_exactly_one_call_to_the_turns_tools(standin, settings, store):
    messages, _ = model_turn(standin, settings, store, "花壇有素食嗎", VEGETARIAN_IN_HUATAN)
    assert "和米素食" in all_text(messages)
    body = last_body(standin)
    from shared.agent.tools import TOOL_NAMES

    config = body["toolConfig"]["functionCallingConfig"]
    assert config["mode"] == "ANY" and config["allowedFunctionNames"] == list(TOOL_NAMES)
    declared = [d["name"] for tool in body["tools"] for d in tool.get("functionDeclarations", [])]
    assert sorted(declared) == sorted(TOOL_NAMES)


def test_agent_client_request_carries_the_thinking_level_of_a_gemini_3_model(standin, settings, store):
    model_turn(standin, settings, store, "花壇有素食嗎", VEGETARIAN_IN_HUATAN)
    recorded = standin.requests(standin.last_seq() - 1)[0]
    assert recorded["model"] == "gemini-3.8-flash"
    assert snake(recorded["body"]["generationConfig"]["thinkingConfig"]) == {"thinking_level": "LOW"}


def test_agent_client_request_carries_the_thinking_budget_of_a_gemini_2_5_model(standin, store):
    from shared.config import Settings

    older = Settings.from_env({"LOCAL_TENANT_ID": "test-tenant", "LOCAL_MODEL": "standin",
                               "GOOGLE_GEMINI_BASE_URL": standin.url, "LOCAL_MODEL_TIMEOUT_SECONDS": "30",
                               "LOCAL_MODEL_ID": "gemini-2.5-flash", "LOCAL_MODEL_THINKING_BUDGET": "0"})
    messages, _ = model_turn(standin, older, store, "花壇有素食嗎", VEGETARIAN_IN_HUATAN)
    recorded = standin.requests(standin.last_seq() - 1)[0]
    assert recorded["model"] == "gemini-2.5-flash"
    assert snake(recorded["body"]["generationConfig"]["thinkingConfig"]) == {"thinking_budget": 0}
    assert "和米素食" in all_text(messages)


# -- one client, one session -----------------------------------------------------------------------------

def test_agent_client_forty_turns_use_one_client_and_a_bounded_number_of_connections(store):
    """asyncio.run per turn built a client and an aiohttp session per turn (connections grew 1 → 13 over
    40 turns); every turn now runs on the process's one model loop over one client."""
    from shared.agent import client as model_client

    with GeminiStandin() as own:
        settings = model_settings(own.url)
        built = model_client.clients_built()
        for turn in range(40):
            messages, audit = model_turn(own, settings, store, "花壇有素食嗎", VEGETARIAN_IN_HUATAN)
            assert "和米素食" in all_text(messages) and audit["status"] == "ok", turn
        opened, still_open = own.connections()
        assert len(own.requests()) == 40
        assert opened <= 2 and still_open <= 2
        assert model_client.clients_built() == built + 1


def test_agent_client_close_clients_closes_the_session_and_the_next_turn_builds_it_again(store):
    from shared.agent import client as model_client

    with GeminiStandin() as own:
        settings = model_settings(own.url)
        model_turn(own, settings, store, "花壇有素食嗎", VEGETARIAN_IN_HUATAN)
        genai_client = model_client.shared_model(settings).api_client
        sessions = list(genai_client._api_client._aiohttp_sessions.values())
        assert sessions and not any(session.closed for session in sessions)
        built = model_client.clients_built()
        model_client.close_clients()
        assert all(session.closed for session in sessions)
        messages, _ = model_turn(own, settings, store, "花壇有素食嗎", VEGETARIAN_IN_HUATAN)
        assert "和米素食" in all_text(messages)
        assert model_client.clients_built() == built + 1
        assert model_client.shared_model(settings).api_client is not genai_client


# -- retries inside the budget ---------------------------------------------------------------------------

@pytest.mark.parametrize("budget, attempts, attempt_timeout", [
    (12.0, 2, 5.75), (30.0, 2, 14.75), (6.5, 2, 3.0), (6.4, 1, 6.4), (2.5, 1, 2.5), (0.3, 1, 0.3),
])
def test_agent_client_retry_plan_fits_inside_the_turns_budget(budget, attempts, attempt_timeout):
    from shared.agent.client import RETRY_STATUS_CODES, retry_plan

    plan = retry_plan(budget)
    assert (plan.attempts, plan.attempt_timeout_seconds) == (attempts, attempt_timeout)
    assert plan.worst_case_seconds <= budget
    options = plan.http_retry_options()
    assert options.attempts == attempts
    if attempts > 1:
        assert options.max_delay == plan.max_delay_seconds and 429 not in options.http_status_codes
        assert tuple(options.http_status_codes) == RETRY_STATUS_CODES
        assert options.initial_delay + options.jitter <= options.max_delay  # every wait is capped by max_delay


def test_agent_client_settings_give_the_client_the_plans_timeout_and_retries(standin):
    from shared.agent.client import client_kwargs, retry_plan

    http = client_kwargs(model_settings(standin.url))["http_options"]  # LOCAL_MODEL_TIMEOUT_SECONDS=30
    assert http["timeout"] == retry_plan(30.0).timeout_ms == 14750
    assert http["retry_options"] == retry_plan(30.0).http_retry_options()
    with pytest.raises(ValueError):
        retry_plan(0)


def test_agent_client_a_503_is_retried_once_and_the_resident_reads_the_answer(standin, settings, store):
    since = standin.last_seq()
    standin.script([{"error": 503}, VEGETARIAN_IN_HUATAN])
    from shared.agent.agent import run_model_text_turn

    reply = run_model_text_turn(ctx_for(settings, store), "花壇有素食嗎")
    assert "和米素食" in all_text([m.to_dict() for m in reply.messages])
    assert [r["status"] for r in standin.requests(since)] == [503, 200]


def test_agent_client_a_429_is_not_retried(standin, settings, store):
    since = standin.last_seq()
    standin.script([{"error": {"code": 429, "retry_after_seconds": 40}}, VEGETARIAN_IN_HUATAN])
    from shared.agent.agent import run_model_text_turn

    try:
        ctx = ctx_for(settings, store)
        reply = run_model_text_turn(ctx, "花壇有素食嗎")
        assert standin.pending_steps() == 1  # the scripted answer was never asked for
    finally:
        standin.script([])
    assert [r["status"] for r in standin.requests(since)] == [429]
    words = all_text([m.to_dict() for m in reply.messages])
    assert "和米素食" in words and "這次暫時查不了" not in words  # the router's reading, not the scripted call


# -- thought signatures -------------------------------------------------------------------------------------

def test_agent_client_a_turn_makes_one_request_even_when_its_call_is_refused(standin, settings, store):
    """max_llm_calls=1 and skip_summarization: a refused call is not sent back for another try, so no
    request of a turn ever needs the previous answer's thought signature."""
    since = standin.last_seq()
    model_turn(standin, settings, store, "花壇有素食嗎", call("search_local_places", area="台中市"))
    [request] = standin.requests(since)
    assert len(request["body"]["contents"]) == 1 and request["body"]["contents"][0]["role"] == "user"


def test_agent_client_second_request_of_a_run_sends_the_thought_signature_back_unchanged(standin, settings, store):
    """If a run makes a second request (a tool whose result goes back to the model), the model's answer
    goes back in it with its thoughtSignature byte for byte (https://ai.google.dev/gemini-api/docs/thought-signatures),
    through ADK's session events and google-genai."""
    import asyncio

    from google.adk.agents import LlmAgent

    from shared.agent.agent import generate_config, run_agent
    from shared.agent.client import run_on_model_loop, shared_model
    from shared.agent.tools import TurnBinding

    def opening_hours(name: str) -> dict:
        """The opening hours of a shop (a test tool whose result goes back to the model)."""
        return {"name": name, "hours": "unknown"}

    signature = "c2lnbmVkLWJ5LXRoZS1tb2RlbA+/+/8="  # standard base64, with the + and / that url-safe lacks
    since = standin.last_seq()
    standin.script([{**call("opening_hours", name="和米素食"), "thought_signature": signature},
                    {"text": "不知道", "thought_signature": None}])
    ctx = ctx_for(settings, store)
    binding = TurnBinding(ctx, start_turn(ctx, read_snapshot=True), session_user="u-test",
                          session_id=f"turn-{uuid.uuid4().hex}")
    agent = LlmAgent(name="signature_test", model=shared_model(settings), instruction="test",
                     tools=[opening_hours], generate_content_config=generate_config(settings, ["opening_hours"]))
    outcome = run_on_model_loop(run_agent(agent, binding, "和米素食幾點開", timeout_seconds=20, max_llm_calls=2),
                                timeout_seconds=25)
    assert outcome.exception is None and not isinstance(outcome.exception, asyncio.TimeoutError)
    first, second = standin.requests(since)
    sent_back = [part for content in second["body"]["contents"] if content["role"] == "model"
                 for part in content["parts"] if "functionCall" in part]
    assert [signature_bytes(part["thoughtSignature"]) for part in sent_back] == [base64.b64decode(signature)]
    answered = first["status"], first["step"]["function_call"]["name"]
    assert answered == (200, "opening_hours")


def test_agent_client_model_is_shared_across_turns_of_one_configuration(standin, settings):
    from shared.agent.client import shared_model

    assert shared_model(settings) is shared_model(dataclasses.replace(settings))
    other = dataclasses.replace(settings, model_timeout_seconds=29.0)
    assert shared_model(other).api_client is not shared_model(settings).api_client


# -- tools off the model loop ----------------------------------------------------------------------------

def test_agent_client_a_tool_waiting_on_the_store_does_not_hold_another_turn(standin, settings, store):
    """Every turn runs on the one model loop; a tool's body runs on ADK's tool threads, so a turn whose
    search waits (a slow store read) leaves the loop free for another turn to finish meanwhile."""
    import threading
    from concurrent.futures import ThreadPoolExecutor

    from shared.agent.agent import run_model_text_turn
    from shared.turn.engine import DEFAULT_TOOLS, TurnTools

    started, other_done, seen = threading.Event(), threading.Event(), {}

    def slow_places(*args, **kwargs):
        started.set()
        seen["other_turn_finished_meanwhile"] = other_done.wait(timeout=10)
        seen["thread"] = threading.current_thread().name
        return DEFAULT_TOOLS.places(*args, **kwargs)

    standin.script([{**VEGETARIAN_IN_HUATAN, "when": "花壇有素食嗎"},
                    {**call("search_local_places", area="彰化市"), "when": "彰化市有素食嗎"}])
    with ThreadPoolExecutor(max_workers=1) as pool:
        slow = pool.submit(run_model_text_turn, ctx_for(settings, store), "花壇有素食嗎",
                           tools=TurnTools(places=slow_places))
        assert started.wait(timeout=10)
        other = run_model_text_turn(ctx_for(settings, store), "彰化市有素食嗎")
        other_done.set()
        first = slow.result(timeout=30)
    assert "John手作蔬食" in all_text([m.to_dict() for m in other.messages])
    assert "和米素食" in all_text([m.to_dict() for m in first.messages])
    assert seen["other_turn_finished_meanwhile"] and seen["thread"] != "local-model-loop"
