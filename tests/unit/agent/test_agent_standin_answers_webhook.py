"""Gemini's answer shapes the stand-in gives (tools/gemini_standin.py), through the signed webhook, the
queued-event worker and the real ADK Runner and google-genai client (LOCAL_READER=model_first): what
the resident reads when the model's answer is signed and counts its thinking, and when the model answers
429 with Retry-After (not retried: the router's reading of the same text)."""
from __future__ import annotations

import pytest

from tests.unit.agent.test_agent_webhook import answers, fresh_event

#: The embedded queue the webhook hands the event to lives in the store's SQLite file (as test_agent_webhook).
pytestmark = pytest.mark.sqlite


def send(pair, line_standin, clock, text: str) -> tuple[str, dict]:
    event = fresh_event(text, clock)
    assert pair.post(event) == 200
    pair.drain()
    [answer] = answers(line_standin, event)
    return answer, pair.audit(event)


def test_agent_standin_signed_answer_with_thinking_tokens_reaches_the_resident(pair, gemini, line_standin, clock):
    since = gemini.last_seq()
    gemini.script([{"function_call": {"name": "search_local_places", "args": {"area": "花壇鄉"}},
                    "thoughts_tokens": 240, "when": "花壇有素食嗎"}])
    answer, audit = send(pair, line_standin, clock, "花壇有素食嗎")
    assert "和米素食" in answer and "這次暫時查不了" not in answer
    assert (audit["source"], audit["status"]) == ("model", "ok")
    [request] = gemini.requests(since)
    assert request["status"] == 200 and request["step"]["thoughts_tokens"] == 240


def test_agent_standin_429_with_retry_after_is_not_waited_for_and_the_router_reads_the_text(
        pair, gemini, line_standin, clock):
    since = gemini.last_seq()
    gemini.script([{"error": {"code": 429, "retry_after_seconds": 45}},
                   {"function_call": {"name": "search_local_places", "args": {"area": "花壇鄉"}}}])
    try:
        answer, audit = send(pair, line_standin, clock, "花壇有素食嗎")
        assert gemini.pending_steps() == 1  # no second request: the quota outlasts the turn
    finally:
        gemini.script([])
    assert "和米素食" in answer and "這次暫時查不了" not in answer  # the router's reading of the same text
    assert (audit["source"], audit["reason"]) == ("offline_router", "quota")
    assert [r["status"] for r in gemini.requests(since)] == [429]
