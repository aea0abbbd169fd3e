"""The Gemini API stand-in answers the real google-genai client, which finds it through
google-genai's own GOOGLE_GEMINI_BASE_URL (no code passes the URL), from a script."""
from __future__ import annotations

import json
from datetime import datetime, timezone

import pytest
import requests

from tools.gemini_standin import GeminiStandin, router_step

# google.genai is imported by the fixtures and tests that use it, not at collection: every xdist
# worker collects every file, and one runs this one.

NOW = datetime(2026, 11, 30, 4, 0, tzinfo=timezone.utc)  # Monday 12:00 in Asia/Taipei


@pytest.fixture
def standin():
    with GeminiStandin(clock=lambda: NOW) as server:
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


def test_gemini_standin_without_script_answers_with_the_router(standin, client):
    response = client.models.generate_content(model="m", contents="這週末鹿港有什麼活動？")
    (only,) = response.function_calls
    assert (only.name, only.args) == ("search_local_events", {
        "area": "鹿港鎮", "date_from": "2026-12-05", "date_to": "2026-12-06"})
    assert standin.requests()[-1]["step"] == {"router": {"function_call": {
        "name": "search_local_events", "args": {"area": "鹿港鎮", "date_from": "2026-12-05", "date_to": "2026-12-06"}}}}


@pytest.mark.parametrize("text, expected", [
    ("花壇有全素的店嗎", ("search_local_places", {"area": "花壇鄉", "dietary_type": "vegan"})),
    ("附近有素食嗎", ("search_local_places", {"vague_place_words": ["附近"], "dietary_type": "vegetarian"})),
    ("今天天氣如何", ("show_limits", {"kinds": ["weather"]})),
    ("和米素食電話幾號", ("find_place", {"name": "和米素食"})),  # no township: the model does not know it
    ("asdf", ("show_help", {})),
    ("你好", ("small_talk", {"kind": "greeting"})),
    ("我的服務單進度", ("show_request_status", {})),
    ("台中有素食嗎", ("show_limits", {"kinds": ["other_county"]})),
    ("鹿港有素食店嗎？那邊停車方便嗎", ("search_local_places", {
        "limits_asked": ["parking"], "area": "鹿港鎮", "dietary_type": "vegetarian"})),
])
def test_gemini_standin_router_step_maps_proposals_to_the_tool_schema(text, expected):
    spec = router_step(text, NOW).spec["function_call"]
    assert (spec["name"], spec["args"]) == expected


def test_gemini_standin_control_endpoints_over_http(standin):
    body = json.dumps({"steps": [{"text": "a"}, {"error": 500}]}).encode()
    answer = requests.post(standin.url + "/__script", data=body, timeout=5)
    assert (answer.status_code, answer.json()) == (200, {"queued": 2})
    refused = requests.post(standin.url + "/__script", data=b'{"steps": [{"nothing": 1}]}', timeout=5)
    assert refused.status_code == 400 and standin.pending_steps() == 2
    answer = requests.get(standin.url + "/__requests?since=0", timeout=5)
    assert (answer.status_code, answer.json()) == (200, [])
