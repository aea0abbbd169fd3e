"""The Gemini API stand-in answers the real google-genai client, which finds it through
google-genai's own GOOGLE_GEMINI_BASE_URL (no code passes the URL), from a script."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest
import requests

from tools.gemini_standin import DEFAULT_CASES, NO_SCRIPT_TEXT, GeminiStandin, Step, scripted_calls

# google.genai is imported by the fixtures and tests that use it, not at collection: every xdist
# worker collects every file, and one runs this one.

WEEKEND_CALL = {"name": "search_local_events", "args": {"area": "鹿港鎮", "date_from": "2026-12-05",
                                                         "date_to": "2026-12-06"}}


@pytest.fixture
def standin():
    with GeminiStandin(calls={"這週末鹿港有什麼活動？": Step({"function_call": WEEKEND_CALL})}) as server:
        yield server


@pytest.fixture
def client(standin, monkeypatch):
    monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", standin.url)
    monkeypatch.delenv("GOOGLE_GENAI_USE_VERTEXAI", raising=False)
    from google import genai

    return genai.Client(api_key="test-key")


def test_gemini_standin_reached_through_google_gemini_base_url(standin, client):
    standin.script([{"function_call": {"name": "search_local_places", "args": {"area": "花壇鄉"}}}])
    response = client.models.generate_content(model="gemini-2.5-flash", contents="花壇有素食嗎")
    assert [(c.name, c.args) for c in response.function_calls] == [("search_local_places", {"area": "花壇鄉"})]
    recorded = standin.requests()
    assert len(recorded) == 1 and recorded[0]["model"] == "gemini-2.5-flash"
    assert recorded[0]["body"]["contents"][0]["parts"][0]["text"] == "花壇有素食嗎"
    assert "test-key" not in json.dumps(recorded)


def test_gemini_standin_errors_reach_the_client_as_api_errors(standin, client):
    from google.genai import errors

    standin.script([{"error": 429}, {"error": {"code": 503, "message": "overloaded"}}])
    with pytest.raises(errors.ClientError) as quota:
        client.models.generate_content(model="gemini-2.5-flash", contents="x")
    assert (quota.value.code, quota.value.status) == (429, "RESOURCE_EXHAUSTED")
    with pytest.raises(errors.ServerError) as unavailable:
        client.models.generate_content(model="gemini-2.5-flash", contents="x")
    assert (unavailable.value.code, unavailable.value.status) == (503, "UNAVAILABLE")


def test_gemini_standin_when_steps_match_by_text_before_plain_ones(standin, client):
    standin.script([{"text": "first"}, {"text": "for 鹿港", "when": "鹿港"}])
    assert client.models.generate_content(model="m", contents="鹿港有活動嗎").text == "for 鹿港"
    assert client.models.generate_content(model="m", contents="別的").text == "first"
    assert standin.pending_steps() == 0


def test_gemini_standin_malformed_call_has_no_content(standin, client):
    standin.script([{"finish_reason": "MALFORMED_FUNCTION_CALL"}])
    response = client.models.generate_content(model="m", contents="x")
    assert response.candidates[0].finish_reason == "MALFORMED_FUNCTION_CALL"
    assert response.candidates[0].content is None


def test_gemini_standin_blocked_prompt_has_prompt_feedback_and_no_candidates(standin, client):
    standin.script([{"blocked": "prompt"}])
    response = client.models.generate_content(model="m", contents="x")
    assert not response.candidates and response.prompt_feedback.block_reason == "SAFETY"
    assert any(rating.blocked for rating in response.prompt_feedback.safety_ratings)


def test_gemini_standin_blocked_candidate_stops_for_safety_without_content(standin, client):
    standin.script([{"blocked": "candidate"}])
    [candidate] = client.models.generate_content(model="m", contents="x").candidates
    assert (candidate.finish_reason, candidate.content) == ("SAFETY", None)
    assert any(rating.blocked for rating in candidate.safety_ratings)


def test_gemini_standin_max_tokens_with_and_without_parts(standin, client):
    standin.script([{"finish_reason": "MAX_TOKENS"}, {"finish_reason": "MAX_TOKENS", "parts": "text"}])
    bare = client.models.generate_content(model="m", contents="x").candidates[0]
    cut = client.models.generate_content(model="m", contents="x").candidates[0]
    assert (bare.finish_reason, bare.content) == ("MAX_TOKENS", None)
    assert cut.finish_reason == "MAX_TOKENS" and cut.content.parts[0].text


def test_gemini_standin_empty_candidates(standin, client):
    standin.script([{"candidates": []}])
    response = client.models.generate_content(model="m", contents="x")
    assert not response.candidates and response.prompt_feedback is None


def test_gemini_standin_two_calls_an_unknown_function_and_args_sent_as_given(standin):
    standin.script([{"function_calls": [{"name": "a", "args": {}}, {"name": "b", "args": {"x": 1}}]},
                    {"function_call": {"name": "no_such_tool", "args": {}}},
                    {"function_call": {"name": "search_local_places", "args": "花壇"}}])
    url = standin.url + "/v1beta/models/m:generateContent"
    bodies = [requests.post(url, json={"contents": []}, timeout=5).json() for _ in range(3)]
    parts = [body["candidates"][0]["content"]["parts"] for body in bodies]
    assert [p["functionCall"]["name"] for p in parts[0]] == ["a", "b"]
    assert parts[1][0]["functionCall"]["name"] == "no_such_tool"
    assert parts[2][0]["functionCall"]["args"] == "花壇"  # a string where an object belongs


def test_gemini_standin_429_says_when_to_try_again(standin):
    standin.script([{"error": {"code": 429, "retry_after_seconds": 7}}])
    answer = requests.post(standin.url + "/v1beta/models/m:generateContent", json={"contents": []}, timeout=5)
    assert (answer.status_code, answer.headers["Retry-After"]) == (429, "7")
    [detail] = answer.json()["error"]["details"]
    assert detail == {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "7s"}


def test_gemini_standin_without_script_answers_the_call_given_for_that_text(standin, client):
    response = client.models.generate_content(model="m", contents="這週末鹿港有什麼活動？")
    (only,) = response.function_calls
    assert (only.name, only.args) == (WEEKEND_CALL["name"], WEEKEND_CALL["args"])
    assert standin.requests()[-1]["step"] == {"unscripted": {"function_call": WEEKEND_CALL}}


def test_gemini_standin_without_script_or_call_says_it_has_none(standin, client):
    response = client.models.generate_content(model="m", contents="花壇有素食嗎")
    assert response.function_calls is None and response.text == NO_SCRIPT_TEXT


def test_gemini_standin_reads_the_eval_cases_scripted_calls_by_input():
    calls = scripted_calls(DEFAULT_CASES)
    cases = [case for file in sorted(DEFAULT_CASES.glob("*.json"))
             for case in json.loads(file.read_text(encoding="utf-8"))]
    first = next(case for case in cases if isinstance(case.get("model_call"), dict) and "setup" not in case)
    assert calls[first["input"]].spec == {"function_call": first["model_call"]}


def test_gemini_standin_never_loads_the_offline_router():
    loaded = subprocess.run([sys.executable, "-c", "import sys, tools.gemini_standin as s; "
                             "s.scripted_calls(s.DEFAULT_CASES); print('shared.turn.router' in sys.modules)"],
                            capture_output=True, text=True, check=True, cwd=DEFAULT_CASES.parents[2])
    assert loaded.stdout.strip() == "False"


def test_gemini_standin_control_endpoints_over_http(standin):
    body = json.dumps({"steps": [{"text": "a"}, {"error": 500}]}).encode()
    answer = requests.post(standin.url + "/__script", data=body, timeout=5)
    assert (answer.status_code, answer.json()) == (200, {"queued": 2})
    refused = requests.post(standin.url + "/__script", data=b'{"steps": [{"nothing": 1}]}', timeout=5)
    assert refused.status_code == 400 and standin.pending_steps() == 2
    answer = requests.get(standin.url + "/__requests?since=0", timeout=5)
    assert (answer.status_code, answer.json()) == (200, [])


def test_gemini_standin_loads_nothing_of_local_neither_catalog_nor_snapshots():
    """What a real model does not know, the stand-in does not either: no shared.* module (catalog, events
    snapshot, townships, router) is loaded by answering from scripts and eval cases."""
    loaded = subprocess.run([sys.executable, "-c", "import sys, tools.gemini_standin as s; "
                             "s.scripted_calls(s.DEFAULT_CASES); "
                             "print(sorted(m for m in sys.modules if m == 'shared' or m.startswith('shared.')))"],
                            capture_output=True, text=True, check=True, cwd=DEFAULT_CASES.parents[2])
    assert loaded.stdout.strip() == "[]"


def test_gemini_standin_function_call_part_carries_a_thought_signature_and_usage_counts_thoughts(standin):
    standin.script([{"function_calls": [{"name": "search_local_places", "args": {"area": "花壇鄉"}},
                                        {"name": "show_help", "args": {}}], "thoughts_tokens": 150}])
    answer = requests.post(standin.url + "/v1beta/models/gemini-3.8-flash:generateContent", timeout=5,
                           json={"contents": [{"role": "user", "parts": [{"text": "花壇有素食嗎"}]}]}).json()
    first, second = answer["candidates"][0]["content"]["parts"]
    assert first["thoughtSignature"] and "thoughtSignature" not in second  # Gemini 3: the first call only
    usage = answer["usageMetadata"]
    assert usage["thoughtsTokenCount"] == 150 and usage["promptTokenCount"] >= 1
    assert usage["totalTokenCount"] == usage["promptTokenCount"] + usage["candidatesTokenCount"] + 150


def test_gemini_standin_signatures_reach_the_client_as_bytes_and_can_be_left_out(standin, client):
    import base64

    standin.script([{"function_call": WEEKEND_CALL, "thought_signature": "c2ln+/8="},
                    {"text": "2.5 without thinking", "thought_signature": None}, {"text": "signed text"}])
    signed = client.models.generate_content(model="gemini-3.8-flash", contents="x").candidates[0].content.parts[0]
    assert signed.thought_signature == base64.b64decode("c2ln+/8=")
    unsigned = client.models.generate_content(model="gemini-2.5-flash", contents="x").candidates[0].content.parts[0]
    assert unsigned.thought_signature is None
    text_part = client.models.generate_content(model="gemini-3.8-flash", contents="x").candidates[0].content.parts[-1]
    assert text_part.thought_signature  # a text answer is signed on its last part


def test_gemini_standin_429_says_when_to_retry(standin, client):
    from google.genai import errors

    standin.script([{"error": {"code": 429, "retry_after_seconds": 17}}, {"error": 429}])
    raw = requests.post(standin.url + "/v1beta/models/m:generateContent", json={"contents": []}, timeout=5)
    assert (raw.status_code, raw.headers["Retry-After"]) == (429, "17")
    assert raw.json()["error"]["details"] == [{"@type": "type.googleapis.com/google.rpc.RetryInfo",
                                               "retryDelay": "17s"}]
    with pytest.raises(errors.ClientError) as quota:
        client.models.generate_content(model="m", contents="x")
    assert quota.value.code == 429 and quota.value.response.headers["Retry-After"] == "30"
