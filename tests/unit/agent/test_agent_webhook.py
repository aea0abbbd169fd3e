"""Free text through the signed webhook with the model configured (LOCAL_MODEL=standin): the webhook
queues it in the real embedded queue (the store's SQLite file), the queued-event worker answers it
with the model's turn (shared.wiring.model_handler: the real ADK Runner and google-genai client) over
HTTP to the scripted Gemini stand-in, and the recording LINE stand-in receives the answer. Crisis and
emergency words are answered by the webhook itself, before any model. Gemini is never called."""
from __future__ import annotations

import json
import re

import pytest

from shared.audit import COLLECTION as AUDIT
from shared.config import WEBHOOK_REQUIRED, Settings
from shared.queue.embedded import EmbeddedQueue
from shared.queued_event.task import QueuedEventTask
from shared.queued_event.worker import QueuedEventWorker
from shared.store.sqlite import path_from_url
from shared.webhook.service import WebhookService
from shared.wiring import line_gateway, model_handler, open_store
from tests.codes_support import SHOWN_CODE
from tests.conftest import all_text, line_body, postback_event, reply_messages, sign, text_event
from tools.gemini_standin import GeminiStandin

REPLY, PUSH = "/v2/bot/message/reply", "/v2/bot/message/push"
NO_DATA = "這個我沒有資料可以回答"


class ModelPair:
    """The webhook and the queued-event worker with the model, sharing one store, queue and LINE stand-in."""

    def __init__(self, env: dict, clock):
        self.settings = Settings.from_env(env, required=WEBHOOK_REQUIRED)
        self.store = open_store(self.settings)
        self.worker = QueuedEventWorker(self.settings, self.store, line_gateway(self.settings),
                                        handler=model_handler(), clock=clock)
        self.queue = EmbeddedQueue(path_from_url(self.settings.store_url), queue_name="queued-events",
                                   target_url="http://agent.invalid/", auth_token=None, min_backoff_seconds=0.0,
                                   max_backoff_seconds=0.0, max_attempts=self.settings.queue_max_attempts,
                                   http=self._deliver)
        self.webhook = WebhookService(self.settings, self.store, line_gateway(self.settings), clock=clock,
                                      event_queue=self.queue)

    def _deliver(self, url, body, headers, timeout_seconds) -> int:
        task = QueuedEventTask.from_payload(json.loads(body))
        return self.worker.run(task, retry_count=int(headers["X-CloudTasks-TaskRetryCount"])).http_status

    def post(self, event: dict) -> int:
        body = line_body(event)
        return self.webhook.handle(body.decode(), sign(body)).status

    def drain(self) -> None:
        while self.queue.dispatch_due(limit=1000):
            pass

    def audit(self, event: dict) -> dict | None:
        return self.store.get(AUDIT, f"test-tenant:{event['webhookEventId']}")


@pytest.fixture(scope="module")
def gemini():
    with GeminiStandin() as standin:
        yield standin


@pytest.fixture
def pair(base_env, clock, gemini):
    gemini.script([])
    env = {**base_env, "LOCAL_MODEL": "standin", "GOOGLE_GEMINI_BASE_URL": gemini.url,
           "LOCAL_MODEL_TIMEOUT_SECONDS": "30"}
    p = ModelPair(env, clock)
    yield p
    p.queue.close()


def fresh_event(text: str, clock) -> dict:
    event = text_event(text)
    event["timestamp"] = int(clock().timestamp() * 1000)
    return event


def answers(line_standin, event: dict) -> list[str]:
    """Texts sent for ``event``: accepted replies with its token, and accepted pushes."""
    return [all_text(call["body"]["messages"]) for call in line_standin.calls() if call["status"] == 200 and (
        (call["path"] == REPLY and call["body"].get("replyToken") == event["replyToken"]) or call["path"] == PUSH)]


@pytest.mark.parametrize("text, step, tool, said", [
    ("你好", {"name": "small_talk", "args": {"kind": "greeting"}}, "greeting", "你好！我可以幫你"),
    ("我想找真人幫忙", {"name": "ask_for_person", "args": {}}, "handoff_info", "開頭加上「新需求：」"),
    ("我上次留的單處理到哪了", {"name": "show_request_status", "args": {}}, "handoff_status",
     "目前查不到你登記的服務詢問"),
    ("台中有素食嗎", {"name": "show_limits", "args": {"kinds": ["other_county"]}}, "show_limits",
     "我只有彰化縣各鄉鎮的資料"),
], ids=["greeting", "a-person", "request-status", "another-county"])
def test_agent_webhook_free_text_read_by_the_model_gets_the_routers_answer(
        pair, gemini, line_standin, clock, text, step, tool, said):
    gemini.script([{"function_call": step, "when": text}])
    event = fresh_event(text, clock)
    assert pair.post(event) == 200
    assert pair.store.get("webhook_inbox", f"test-tenant:{event['webhookEventId']}")["state"] == "queued"
    pair.drain()
    [answer] = answers(line_standin, event)
    assert said in answer and NO_DATA not in answer and "這次暫時查不了" not in answer
    audit = pair.audit(event)
    assert (audit["source"], audit["tool"], audit["status"]) == ("model", tool, "fixed")
    assert gemini.pending_steps() == 0


def test_agent_webhook_crisis_and_emergency_are_answered_by_the_router_before_any_model(
        pair, gemini, line_standin, clock):
    since = gemini.requests()[-1]["seq"] if gemini.requests() else 0
    for text, said in (("我阿公跌倒了起不來", "請立刻打 119"), ("剛剛有人昏倒了", "請立刻打 119"), ("我不想活了", "1925")):
        event = fresh_event(text, clock)
        assert pair.post(event) == 200
        assert pair.store.get("webhook_inbox", f"test-tenant:{event['webhookEventId']}")["state"] == "done", text
        pair.drain()
        [answer] = answers(line_standin, event)
        assert said in answer
        assert (pair.audit(event)["source"], pair.audit(event)["tool"]) == ("offline_router", "show_limits")
    assert gemini.requests(since) == []  # the model never saw any of them


GROUP_ID = "C0123456789abcdef0123456789abcdef"


def confirmed_request(pair, line_standin, text: str) -> str:
    """The sender leaves ``text`` as a request one-to-one (card, then 確認送出) → its request id."""
    [card] = reply_messages(pair.webhook, line_standin, text_event(f"新需求：{text}"))
    confirm = {b["action"]["label"]: b["action"]["data"] for b in card["contents"]["footer"]["contents"]}["確認送出"]
    [request_id] = re.findall(SHOWN_CODE,
                              all_text(reply_messages(pair.webhook, line_standin, postback_event(confirm))))
    return request_id


@pytest.mark.parametrize("where", [{"group_id": GROUP_ID}, {"room_id": "R" + GROUP_ID[1:]}], ids=["group", "room"])
@pytest.mark.parametrize("text", ["我的服務單進度", "我上次留的單處理到哪了"])
def test_agent_webhook_request_status_by_the_model_in_a_shared_chat_shows_no_request(
        pair, gemini, line_standin, clock, where, text):
    request_id = confirmed_request(pair, line_standin, "巷口水溝蓋破了")
    gemini.script([{"function_call": {"name": "show_request_status", "args": {}}, "when": text}])
    event = text_event(text, **where)
    event["timestamp"] = int(clock().timestamp() * 1000)
    assert pair.post(event) == 200
    pair.drain()
    [answer] = answers(line_standin, event)
    assert "一對一" in answer and request_id not in answer and "水溝蓋" not in answer
    assert (pair.audit(event)["source"], pair.audit(event)["tool"]) == ("model", "handoff_status")
    assert gemini.pending_steps() == 0
