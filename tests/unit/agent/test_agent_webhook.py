"""Free text through the signed webhook with the model configured (LOCAL_MODEL=standin): the webhook
queues it in the real embedded queue (the store's SQLite file), the queued-event worker answers it
with the model's turn (shared.wiring.model_handler: the real ADK Runner and google-genai client) over
HTTP to the scripted Gemini stand-in, and the recording LINE stand-in receives the answer. Crisis and
emergency words are answered by the webhook itself, before any model. With ``LOCAL_READER=router_first``
(the default) the webhook answers inline what the router reads completely and queues only the rest;
when the model fails in any way, the resident reads the router's reading of the same text. Gemini is
never called."""
from __future__ import annotations

import json
import re

import pytest

from shared.audit import COLLECTION as AUDIT
from shared.config import WEBHOOK_REQUIRED, Settings
from shared.deferred_events.task import QueuedEventTask
from shared.deferred_events.worker import QueuedEventWorker
from shared.queue.embedded import EmbeddedQueue
from shared.store.sqlite import path_from_url
from shared.webhook.service import WebhookService
from shared.wiring import line_gateway, model_handler, open_store
from tests.codes_support import SHOWN_CODE
from tests.conftest import all_text, line_body, postback_event, reply_messages, sign, text_event
from tests.unit.agent.agent_support import short_retry_waits
from tests.unit.agent.conftest import open_pair

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


@pytest.fixture(scope="module", autouse=True)
def _short_retry_waits():
    """The model's 5xx cases here are about what the failed retry leads to (agent_support.short_retry_waits)."""
    with short_retry_waits():
        yield


@pytest.fixture
def router_pair(base_env, clock, gemini):
    """The router answers what it reads completely; the model reads the rest (the default, router_first)."""
    p = open_pair(base_env, clock, gemini, "router_first")
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
    ("我想找真人幫忙", {"name": "ask_for_person", "args": {}}, "handoff_info", "轉給公所工作人員"),
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


@pytest.mark.parametrize("reader", ["pair", "router_pair"], ids=["model_first", "router_first"])
def test_agent_webhook_crisis_emergency_distress_and_scams_are_answered_by_the_router_before_any_model(
        request, reader, gemini, line_standin, clock):
    pair = request.getfixturevalue(reader)
    since = gemini.requests()[-1]["seq"] if gemini.requests() else 0
    for text, said in (("我阿公跌倒了起不來", "請立刻打 119"), ("剛剛有人昏倒了", "請立刻打 119"), ("我不想活了", "1925"),
                       ("心情不好", "1925 安心專線"), ("有人說我的包裹有毒品", "165 反詐騙專線"),
                       ("網路上有人說投資保證賺錢", "165 反詐騙專線")):
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


# -- reader order (LOCAL_READER) ------------------------------------------------------------------------

def inbox_state(pair, event: dict) -> str:
    return pair.store.get("webhook_inbox", f"test-tenant:{event['webhookEventId']}")["state"]


def model_seq(gemini) -> int:
    return gemini.last_seq()


@pytest.mark.parametrize("text, said", [
    ("花壇有素食嗎", "和米素食"),
    ("這週末員林有什麼活動", "員林"),
    ("你好", "你好！我可以幫你"),
    ("台中有素食嗎", "我只有彰化縣各鄉鎮的資料"),
    ("有人打電話說我中獎要先匯錢", "165"),
    ("那下禮拜呢", "2026/12/7（一）～2026/12/13（日）"),  # no conversation: read alone, still inline
], ids=["places", "events", "greeting", "another-county", "scam", "follow-up"])
def test_agent_webhook_router_first_answers_a_complete_message_inline(
        router_pair, gemini, line_standin, clock, text, said):
    since = model_seq(gemini)
    event = fresh_event(text, clock)
    assert router_pair.post(event) == 200
    assert inbox_state(router_pair, event) == "done"  # answered by the webhook itself
    assert router_pair.queue.counts()["pending"] == 0  # no task queued
    [answer] = answers(line_standin, event)
    assert said in answer and "這次暫時查不了" not in answer
    assert router_pair.audit(event)["source"] == "offline_router"
    assert gemini.requests(since) == []  # the model never saw it


@pytest.mark.parametrize("text", ["嗯嗯那個", "笑死 花壇有素食嗎", "花潭有素食嗎", "和米素食有外帶嗎"],
                         ids=["nothing-read", "unread-words", "unknown-place", "question-left"])
def test_agent_webhook_router_first_queues_what_the_router_does_not_read_completely(
        router_pair, gemini, line_standin, clock, text):
    since = model_seq(gemini)
    gemini.script([{"function_call": {"name": "search_local_places", "args": {"area": "花壇鄉"}}, "when": text}])
    event = fresh_event(text, clock)
    assert router_pair.post(event) == 200
    assert inbox_state(router_pair, event) == "queued"
    assert answers(line_standin, event) == []  # nothing said before the model reads it
    router_pair.drain()
    [answer] = answers(line_standin, event)
    assert "和米素食" in answer
    assert router_pair.audit(event)["source"] == "model"
    assert [r["step"]["function_call"]["name"] for r in gemini.requests(since)] == ["search_local_places"]


def test_agent_webhook_model_first_queues_even_a_message_the_router_reads(pair, gemini, line_standin, clock):
    since = model_seq(gemini)
    gemini.script([{"function_call": {"name": "search_local_places", "args": {"area": "花壇鄉"}}}])
    event = fresh_event("花壇有素食嗎", clock)
    assert pair.post(event) == 200
    assert inbox_state(pair, event) == "queued"
    pair.drain()
    [answer] = answers(line_standin, event)
    assert "和米素食" in answer and pair.audit(event)["source"] == "model"
    assert len(gemini.requests(since)) == 1


def test_agent_webhook_reader_order_is_a_start_up_setting(base_env):
    from shared.config import ConfigError, ReaderOrder

    assert Settings.from_env(base_env).reader is ReaderOrder.ROUTER_FIRST
    assert Settings.from_env({**base_env, "LOCAL_READER": "MODEL_FIRST"}).reader is ReaderOrder.MODEL_FIRST
    with pytest.raises(ConfigError, match="LOCAL_READER must be one of router_first, model_first"):
        Settings.from_env({**base_env, "LOCAL_READER": "gemini_first"})


# -- a model failure: the router's reading reaches the resident ------------------------------------------

FAILURES = [
    ({"error": {"code": 429, "retry_after_seconds": 7}}, "quota"),
    ({"error": 500}, "upstream_unavailable"),
    ({"error": 503}, "upstream_unavailable"),
    ({"blocked": "prompt"}, "safety_blocked"),
    ({"blocked": "candidate"}, "safety_blocked"),
    ({"candidates": []}, "empty_answer"),
    ({"finish_reason": "MAX_TOKENS"}, "max_tokens"),
    ({"finish_reason": "MAX_TOKENS", "parts": "text"}, "max_tokens"),
    ({"finish_reason": "MALFORMED_FUNCTION_CALL"}, "bad_tool_call"),
    ({"function_call": {"name": "delete_all_requests", "args": {}}}, "unknown_tool"),
    ({"function_call": {"name": "search_local_places", "args": "花壇"}}, "bad_tool_call"),
    ({"function_call": {"name": "search_local_places", "args": {"area": "台中市"}}}, "bad_tool_call"),
    ({"text": "花壇有一家很棒的素食店喔"}, "no_tool_call"),
    ({"raw_body": "<html>bad gateway</html>"}, "upstream_unavailable"),
]
FAILURE_IDS = ["429-retry-after", "500", "503", "prompt-blocked", "candidate-blocked", "empty-candidates",
               "max-tokens", "max-tokens-with-text", "malformed-call", "unknown-function", "args-not-an-object",
               "args-outside-schema", "text-only", "not-json"]


@pytest.mark.parametrize("step, reason", FAILURES, ids=FAILURE_IDS)
def test_agent_webhook_model_failure_gets_the_routers_reading(pair, gemini, line_standin, clock, step, reason):
    # google-genai retries a 5xx once (shared.agent.client.retry_plan): here the retry fails too
    gemini.script([step, step] if isinstance(step.get("error"), int) and step["error"] >= 500 else [step])
    event = fresh_event("花壇有素食嗎", clock)
    assert pair.post(event) == 200 and inbox_state(pair, event) == "queued"
    pair.drain()
    [answer] = answers(line_standin, event)
    assert "和米素食" in answer and "這次暫時查不了" not in answer
    assert "很棒的素食店" not in answer  # the model's prose is never sent
    audit = pair.audit(event)
    assert (audit["source"], audit["reason"], audit["tool"]) == ("offline_router", reason, "search_local_places")
    assert audit["model"]["backend"] == "standin"
    assert gemini.pending_steps() == 0


def test_agent_webhook_model_timeout_gets_the_routers_reading(base_env, clock, gemini, line_standin):
    gemini.script([])
    env = {**base_env, "LOCAL_MODEL": "standin", "GOOGLE_GEMINI_BASE_URL": gemini.url,
           "LOCAL_MODEL_TIMEOUT_SECONDS": "0.3", "LOCAL_READER": "model_first"}
    slow = ModelPair(env, clock)
    try:
        gemini.script([{"function_call": {"name": "search_local_places", "args": {"area": "花壇鄉"}},
                        "delay_seconds": 2}])
        event = fresh_event("花壇有素食嗎", clock)
        assert slow.post(event) == 200
        slow.drain()
        [answer] = answers(line_standin, event)
        assert "和米素食" in answer and "這次暫時查不了" not in answer
        assert (slow.audit(event)["source"], slow.audit(event)["reason"]) == ("offline_router", "model_timeout")
    finally:
        slow.queue.close()


def test_agent_webhook_two_calls_in_one_answer_get_the_first_calls_answer(pair, gemini, line_standin, clock):
    gemini.script([{"function_calls": [{"name": "search_local_places", "args": {"area": "花壇鄉"}},
                                       {"name": "search_local_events", "args": {"area": "花壇鄉"}}]}])
    event = fresh_event("花壇有素食嗎", clock)
    assert pair.post(event) == 200
    pair.drain()
    [answer] = answers(line_standin, event)
    assert "和米素食" in answer and "這次暫時查不了" not in answer
    audit = pair.audit(event)
    assert (audit["source"], audit["tool"]) == ("model", "search_local_places")
    assert [r["code"] for r in audit["model"]["refusals"]] == ["SECOND_TOOL_CALL"]


def test_agent_webhook_router_first_model_failure_on_an_unread_message_gets_the_routers_reading(
        router_pair, gemini, line_standin, clock):
    gemini.script([{"error": 503}, {"error": 503}])  # the client's one retry fails too
    event = fresh_event("笑死 花壇有素食嗎", clock)
    assert router_pair.post(event) == 200 and inbox_state(router_pair, event) == "queued"
    router_pair.drain()
    [answer] = answers(line_standin, event)
    assert "和米素食" in answer and "這次暫時查不了" not in answer
    assert (router_pair.audit(event)["source"], router_pair.audit(event)["reason"]) == (
        "offline_router", "upstream_unavailable")


def test_agent_webhook_model_failure_on_a_message_nobody_reads_gets_the_menu(
        router_pair, gemini, line_standin, clock):
    gemini.script([{"blocked": "prompt"}])
    event = fresh_event("嗯嗯那個", clock)
    assert router_pair.post(event) == 200
    router_pair.drain()
    [answer] = answers(line_standin, event)
    assert "這次暫時查不了" not in answer and "查活動" in answer and "查蔬食" in answer
    assert router_pair.audit(event)["reason"] == "safety_blocked"
