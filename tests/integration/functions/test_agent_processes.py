"""A model turn end to end through processes (docs/design.md §8): webhook and agent as
functions-framework processes, the embedded queue in the store's SQLite file, the recording LINE
stand-in, and the Gemini stand-in reached by the real google-genai client through
GOOGLE_GEMINI_BASE_URL. Gemini is never called."""
from __future__ import annotations

import threading
import time

import pytest
import requests

from shared.deferred_events.task import QueuedEventTask
from shared.inbox import answer_retry_key
from tests.conftest import all_text, line_body, text_event
from tests.handoff_support import PUSH, REPLY, USER, env_with, post, store_docs, wait_for
from tests.integration.functions.test_delivery_processes import answers_to, queues_settled
from tools.gemini_standin import GeminiStandin

pytestmark = pytest.mark.slow
LOADING = "/v2/bot/chat/loading/start"


@pytest.fixture
def gemini():
    with GeminiStandin() as standin:
        yield standin


def start_model(start_function, base_env, gemini, **extra):
    """agent and webhook with the model configured against the Gemini stand-in; the model reads every
    free-text message (``LOCAL_READER=model_first``) unless ``extra`` says otherwise."""
    model = {"LOCAL_MODEL": "standin", "GOOGLE_GEMINI_BASE_URL": gemini.url, "LOCAL_READER": "model_first", **extra}
    agent = start_function("agent", env_with(base_env, **model))
    webhook = start_function("webhook", env_with(base_env, AGENT_FUNCTION_URL=agent.url, **model))
    return webhook, agent


def fresh_text(text: str, **kwargs) -> dict:
    event = text_event(text, **kwargs)
    event["timestamp"] = int(time.time() * 1000)
    return event


def audit_of(base_env, event) -> dict:
    [audit] = [doc for doc in store_docs(base_env["LOCAL_STORE_URL"], "turn_audit")
               if doc["webhook_event_id"] == event["webhookEventId"]]
    return audit


def test_agent_process_free_text_acknowledged_then_answered_once_from_a_tool_result(
        start_function, base_env, line_standin, gemini):
    webhook, _ = start_model(start_function, base_env, gemini)
    model_may_answer = threading.Event()
    gemini.on_request = lambda body: model_may_answer.wait(30)  # the model "thinks" until released
    gemini.script([{"function_call": {"name": "search_local_places", "args": {"area": "花壇鄉"}}}])
    event = fresh_text("花壇那邊有什麼好吃的？")
    response = post(webhook.url, line_body(event))
    assert response.status_code == 200 and response.json()["events"] == ["queued"]
    assert answers_to(line_standin, USER, {event["replyToken"]}) == []  # acknowledged before the model answered
    loading = [c for c in line_standin.calls() if c["path"] == LOADING]
    assert [(c["body"]["chatId"], c["status"]) for c in loading] == [(USER, 202)]
    model_may_answer.set()
    wait_for(lambda: answers_to(line_standin, USER, {event["replyToken"]}), 60, "the model turn's answer")
    wait_for(lambda: queues_settled(base_env["LOCAL_STORE_URL"]), 30, "the queue to settle")
    [answer] = answers_to(line_standin, USER, {event["replyToken"]})
    assert "和米素食" in answer
    assert [c["path"] for c in line_standin.calls() if c["path"] in (REPLY, PUSH)] == [REPLY]  # token still fresh
    audit = audit_of(base_env, event)
    assert (audit["source"], audit["tool"], audit["origin"], audit["status"]) == (
        "model", "search_local_places", "none", "ok")
    assert audit["proposed_args"] == {"area": "花壇鄉", "dietary_type": None, "keyword": None}
    assert audit["effective_args"]["dietary_type"] == "any" and audit["result_ids"] == ["vegfest2026-22"]
    assert len(gemini.requests()) == 1


def test_agent_process_body_five_times_and_task_three_times_answer_once(
        start_function, base_env, line_standin, gemini):
    webhook, agent = start_model(start_function, base_env, gemini)
    gemini.script([{"function_call": {"name": "search_local_events", "args": {"area": "彰化市"}}}])
    event = fresh_text("彰化市最近有什麼活動")
    body = line_body(event)
    outcomes = [post(webhook.url, body).json()["events"][0] for _ in range(5)]
    assert outcomes[0] == "queued" and set(outcomes[1:]) <= {"duplicate"}
    wait_for(lambda: answers_to(line_standin, USER, {event["replyToken"]}), 60, "the answer")
    wait_for(lambda: queues_settled(base_env["LOCAL_STORE_URL"]), 30, "the queue to settle")
    task = QueuedEventTask(base_env["LOCAL_TENANT_ID"], event["webhookEventId"])
    for attempt in range(3):  # the queue delivers the same task again (Cloud Tasks: at least once)
        again = requests.post(agent.url, json=task.payload(), timeout=30, headers={
            "Authorization": f"Bearer {base_env['LOCAL_INTERNAL_TOKEN']}", "X-CloudTasks-TaskRetryCount": str(attempt)})
        assert (again.status_code, again.json()["outcome"]) == (200, "already_answered")
    wait_for(lambda: queues_settled(base_env["LOCAL_STORE_URL"]), 30, "the queue to settle")
    answers = answers_to(line_standin, USER, {event["replyToken"]})
    assert len(answers) == 1 and "示範" in answers[0]
    assert len(gemini.requests()) == 1


def test_agent_process_stale_reply_token_pushes_with_retry_key_and_409_is_delivered(
        start_function, base_env, line_standin, gemini):
    webhook, _ = start_model(start_function, base_env, gemini)
    gemini.script([{"function_call": {"name": "show_limits", "args": {"kinds": ["weather"]}}}])
    event = text_event("明天鹿港會下雨嗎")
    event["timestamp"] = int((time.time() - 120) * 1000)  # older than the reply token's freshness window
    key = answer_retry_key(base_env["LOCAL_TENANT_ID"], event["webhookEventId"])
    # LINE already accepted a push with this retry key (an earlier attempt whose answer was lost):
    early = requests.post(line_standin.url + PUSH, timeout=5, json={"to": USER, "messages": [{"type": "text", "text": "x"}]},
                          headers={"Authorization": "Bearer local-test-access-token", "X-Line-Retry-Key": key})
    assert early.status_code == 200
    assert post(webhook.url, line_body(event)).json()["events"] == ["queued"]
    wait_for(lambda: [c for c in line_standin.calls() if c["path"] == PUSH and c["status"] == 409], 60,
             "the worker's push")
    wait_for(lambda: queues_settled(base_env["LOCAL_STORE_URL"]), 30, "the queue to settle")
    pushes = [c for c in line_standin.calls() if c["path"] == PUSH]
    assert [(c["status"], c["headers"]["x-line-retry-key"]) for c in pushes] == [(200, key), (409, key)]
    assert "天氣" in all_text(pushes[1]["body"]["messages"])
    assert [c for c in line_standin.calls() if c["path"] == REPLY] == []
    [inbox_doc] = [d for d in store_docs(base_env["LOCAL_STORE_URL"], "webhook_inbox")
                   if d.get("webhook_event_id") == event["webhookEventId"] or event["webhookEventId"] in str(d.get("event"))]
    assert inbox_doc["notice_state"] == "delivered"


def test_agent_process_quota_gets_the_routers_reading(start_function, base_env, line_standin, gemini):
    webhook, _ = start_model(start_function, base_env, gemini)
    gemini.script([{"error": {"code": 429, "retry_after_seconds": 7}}])
    event = fresh_text("花壇有素食嗎")
    assert post(webhook.url, line_body(event)).json()["events"] == ["queued"]
    wait_for(lambda: answers_to(line_standin, USER, {event["replyToken"]}), 60, "the router's answer")
    [answer] = answers_to(line_standin, USER, {event["replyToken"]})
    assert "和米素食" in answer and "這次暫時查不了" not in answer
    audit = audit_of(base_env, event)
    assert (audit["source"], audit["reason"], audit["status"]) == ("offline_router", "quota", "ok")


def test_agent_process_router_first_answers_a_complete_message_in_the_webhook(
        start_function, base_env, line_standin, gemini):
    webhook, _ = start_model(start_function, base_env, gemini, LOCAL_READER="router_first")
    read = fresh_text("花壇有素食嗎")
    assert post(webhook.url, line_body(read)).json()["events"] == ["done"]
    assert "和米素食" in answers_to(line_standin, USER, {read["replyToken"]})[0]
    assert gemini.requests() == [] and audit_of(base_env, read)["source"] == "offline_router"
    gemini.script([{"function_call": {"name": "search_local_places", "args": {"area": "花壇鄉"}}}])
    unread = fresh_text("笑死 花壇有素食嗎")
    assert post(webhook.url, line_body(unread)).json()["events"] == ["queued"]
    wait_for(lambda: answers_to(line_standin, USER, {unread["replyToken"]}), 60, "the model turn's answer")
    assert audit_of(base_env, unread)["source"] == "model" and len(gemini.requests()) == 1


def test_agent_process_fixed_entry_never_reaches_the_model(start_function, base_env, line_standin, gemini):
    webhook, _ = start_model(start_function, base_env, gemini)
    event = fresh_text("我要預約")
    assert post(webhook.url, line_body(event)).json()["events"] == ["done"]
    assert "查蔬食" in answers_to(line_standin, USER, {event["replyToken"]})[0]
    assert gemini.requests() == [] and [c for c in line_standin.calls() if c["path"] == LOADING] == []
