"""One-to-one things stay one-to-one (a request, its status, a remembered diet), and text that cannot
be stored gets a reason: a real WebhookService on a real SQLite file and the recording LINE stand-in."""
from __future__ import annotations

import json
import re

import pytest

from shared.config import WEBHOOK_REQUIRED, Settings
from shared.webhook.service import WebhookService
from shared.wiring import line_gateway, open_store
from tests.codes_support import SHOWN_CODE
from tests.conftest import (
    all_text,
    line_body,
    postback_event,
    replies_to,
    reply_messages,
    sign,
    text_event,
)

USER = "U7a1e5b0c2d3f4a5b6c7d8e9f0a1b2c3d"
#: Where an event comes from, as ``tests.conftest.text_event`` keywords (the sender is USER).
GROUP = {"group_id": "C0123456789abcdef0123456789abcdef", "user_id": USER}
ROOM = {"room_id": "R0123456789abcdef0123456789abcdef", "user_id": USER}


def handle(service, body: bytes):
    return service.handle(body.decode("utf-8"), sign(body))


def only_reply(standin, event) -> list[dict]:
    [reply] = replies_to(standin, event["replyToken"])
    return reply["body"]["messages"]


def stored(service) -> list[dict]:
    return (service.store.query("handoff_drafts") + service.store.query("handoff_requests")
            + service.store.query("preferences"))


@pytest.mark.parametrize("source", [GROUP, ROOM], ids=["group", "room"])
@pytest.mark.parametrize("text", ["新需求：想預約週六的輪椅接送，電話0912345678", "長輩吃素，以後優先找蔬食，幫我記住",
                                  "我的偏好", "留下服務詢問", "查看原本服務單"])
def test_chat_scope_one_to_one_request_in_shared_chat_is_declined_with_no_card(webhook_service, line_standin,
                                                                             source, text):
    event = text_event(text, **source)
    assert handle(webhook_service, line_body(event)).status == 200
    messages = only_reply(line_standin, event)
    assert [m["type"] for m in messages] == ["text"]  # no Flex card in the group
    words = all_text(messages)
    assert "一對一" in words
    assert "0912345678" not in json.dumps(messages, ensure_ascii=False)  # the member's text is not repeated
    assert stored(webhook_service) == []


def test_chat_scope_search_in_group_is_still_answered(webhook_service, line_standin):
    event = text_event("花壇有素食店嗎？", **GROUP)
    assert handle(webhook_service, line_body(event)).status == 200
    assert "花壇" in all_text(only_reply(line_standin, event))


def test_chat_scope_same_request_one_to_one_gets_the_card(webhook_service, line_standin):
    event = text_event("新需求：想預約週六的輪椅接送")
    assert handle(webhook_service, line_body(event)).status == 200
    assert [m["type"] for m in only_reply(line_standin, event)] == ["flex"]


def test_chat_scope_handoff_postback_in_group_is_declined(webhook_service, line_standin):
    event = postback_event("handoff:v1.ok." + "a" * 32 + "." + "b" * 64 + ".1790000000.sig", **GROUP)
    assert handle(webhook_service, line_body(event)).status == 200
    assert "一對一" in all_text(only_reply(line_standin, event))
    assert stored(webhook_service) == []


def test_chat_scope_basic_id_offers_a_button_to_the_one_to_one_chat(base_env, clock, line_standin):
    settings = Settings.from_env({**base_env, "LINE_BOT_BASIC_ID": "@123abcde"}, required=WEBHOOK_REQUIRED)
    service = WebhookService(settings, open_store(settings), line_gateway(settings), clock=clock)
    event = text_event("新需求：想預約", **GROUP)
    assert handle(service, line_body(event)).status == 200
    [message] = only_reply(line_standin, event)
    [action] = message["template"]["actions"]
    assert action["uri"] == "https://line.me/R/oaMessage/%40123abcde/"
    assert "一對一" in message["altText"]


@pytest.mark.parametrize("text", ["新需求：我需要\ud800協助", "\udfff", "幫我記住我吃素\ud83d"])
def test_chat_scope_unstorable_text_gets_a_reason_to_act_on(webhook_service, line_standin, text):
    event = text_event(text)
    body = json.dumps({"destination": "U0c6f1a2b3c4d5e6f708192a3b4c5d6e7", "events": [event]},
                      separators=(",", ":")).encode("ascii")  # the only way a lone surrogate travels
    assert handle(webhook_service, body).status == 200
    words = all_text(only_reply(line_standin, event))
    assert "字元" in words and "再傳一次" in words
    assert "稍後再試" not in words
    assert stored(webhook_service) == []


def remember_for(service, user_id: str, diet: str) -> None:
    from datetime import datetime, timezone

    from shared.identity import Actor
    from shared.memory.approve import apply_card
    from shared.memory.tokens import issue_card, signing_keys

    now = datetime.now(timezone.utc)
    actor = Actor(service.settings.tenant_id, user_id)
    card, _ = issue_card(signing_keys(service.settings), actor, revision=0, dietary_type=diet, operation="save",
                         now=now, ttl_seconds=300)
    assert apply_card(service.store, actor, card, now).outcome == "memory_saved"


@pytest.mark.parametrize("source", [GROUP, ROOM], ids=["group", "room"])
@pytest.mark.parametrize("text", ["花壇有素食店嗎？", "花壇鄉 蔬食", "花壇有全素的店嗎"])
def test_chat_scope_remembered_diet_is_neither_used_nor_named_in_a_shared_chat(webhook_service, line_standin,
                                                                                source, text):
    remember_for(webhook_service, USER, "ovo_lacto")
    event = text_event(text, **source)
    assert handle(webhook_service, line_body(event)).status == 200
    messages = only_reply(line_standin, event)
    words = all_text(messages) + json.dumps(messages, ensure_ascii=False)
    assert "花壇" in words
    assert "記住" not in words  # nothing about the member's memory (記住的偏好), no offer to remember (記住：…)
    [audit] = [a for a in webhook_service.store.query("turn_audit") if a.get("webhook_event_id") == event["webhookEventId"]]
    assert audit["origin"] != "consented_memory"


def test_chat_scope_remembered_diet_still_applies_one_to_one(webhook_service, line_standin):
    remember_for(webhook_service, USER, "ovo_lacto")
    event = text_event("花壇有素食店嗎？")
    assert handle(webhook_service, line_body(event)).status == 200
    assert "蛋奶素" in all_text(only_reply(line_standin, event)).split("蔬食店家")[0]  # named, one-to-one


def confirmed_request(service, line_standin, text: str) -> str:
    """USER leaves ``text`` as a request one-to-one (card, then 確認送出) → its request id."""
    [card] = reply_messages(service, line_standin, text_event(f"新需求：{text}", user_id=USER))
    confirm = {b["action"]["label"]: b["action"]["data"] for b in card["contents"]["footer"]["contents"]}["確認送出"]
    receipt = all_text(reply_messages(service, line_standin, postback_event(confirm, user_id=USER)))
    [request_id] = re.findall(SHOWN_CODE, receipt)
    return request_id


@pytest.mark.parametrize("source", [GROUP, ROOM], ids=["group", "room"])
@pytest.mark.parametrize("text", ["我的服務單進度", "我的服務單處理了沒", "剛剛那個水溝蓋的處理了沒", "我報的那件有人看了沒",
                                  "我上次留的單處理到哪了"])
def test_chat_scope_request_status_asked_in_shared_chat_shows_no_request(webhook_service, line_standin, source, text):
    request_id = confirmed_request(webhook_service, line_standin, "巷口水溝蓋破了 電話0912345678")
    event = text_event(text, **source)
    messages = reply_messages(webhook_service, line_standin, event)
    shown = json.dumps(messages, ensure_ascii=False)
    assert "一對一" in all_text(messages)
    assert request_id not in shown and "水溝蓋破了" not in shown and "0912345678" not in shown


@pytest.mark.parametrize("text", ["我的服務單進度", "剛剛那個水溝蓋的處理了沒"])
def test_chat_scope_request_status_one_to_one_still_shows_the_request(webhook_service, line_standin, text):
    request_id = confirmed_request(webhook_service, line_standin, "巷口水溝蓋破了")
    words = all_text(reply_messages(webhook_service, line_standin, text_event(text, user_id=USER)))
    assert request_id in words and "水溝蓋破了" in words
