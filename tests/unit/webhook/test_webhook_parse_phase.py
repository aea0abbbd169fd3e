"""The webhook's parse phase against hostile and newer input (docs/design.md §2, §3): a real
WebhookService on a real SQLite file and the recording LINE stand-in; bodies signed as sent."""
from __future__ import annotations

import json
import time

import pytest

from shared import inbox
from shared.config import WEBHOOK_REQUIRED, Settings
from shared.logs import hash_user
from shared.webhook.service import WebhookService
from shared.wiring import line_gateway, open_store
from tests.conftest import (
    all_text,
    line_body,
    postback_event,
    replies_to,
    sign,
    text_event,
)

USER = "U7a1e5b0c2d3f4a5b6c7d8e9f0a1b2c3d"


def handle(service, body: bytes):
    return service.handle(body.decode("utf-8"), sign(body))


def reply_calls(standin) -> list[dict]:
    return [c for c in standin.calls() if c["path"] == "/v2/bot/message/reply"]


def ascii_body(*events: dict) -> bytes:
    """A body with every non-ASCII character escaped, as a JSON encoder may send it: the only way
    a lone surrogate (``\\ud800``) can travel in valid UTF-8."""
    return json.dumps({"destination": "U0c6f1a2b3c4d5e6f708192a3b4c5d6e7", "events": list(events)},
                      separators=(",", ":")).encode("ascii")


def stored_inbox(service) -> list[dict]:
    return service.store.query(inbox.COLLECTION)


# -- item 3: a body that verifies but does not parse ------------------------------------------------

def test_parse_thousand_levels_of_nesting_is_400_and_nothing_processed(webhook_service, line_standin):
    good = text_event("我要預約")
    nested = "[" * 1000 + "]" * 1000
    body = line_body(good)[:-2] + b',{"type":"message","x":' + nested.encode() + b"}]}"
    result = handle(webhook_service, body)
    assert result.status == 400
    assert reply_calls(line_standin) == []
    assert stored_inbox(webhook_service) == []


def test_parse_moderate_nesting_the_sdk_never_sees_is_400(webhook_service, line_standin):
    event = postback_event("menu:places")
    event["postback"]["params"] = json.loads("[" * 40 + "]" * 40)
    result = handle(webhook_service, line_body(event))
    assert result.status == 400
    assert reply_calls(line_standin) == []


@pytest.mark.parametrize("signature", ["not base64 at all ✓", "A" * 5000, "\x00"])
def test_parse_garbage_signature_is_400(webhook_service, line_standin, signature):
    body = line_body(text_event("我要預約"))
    assert webhook_service.handle(body.decode(), signature).status == 400
    assert reply_calls(line_standin) == []


# -- item 4: ids must be LINE's ----------------------------------------------------------------------

@pytest.mark.parametrize("where, value", [
    ("webhookEventId", "\ud800"), ("userId", "\ud800"), ("webhookEventId", "../../etc"),
    ("userId", "U" + "0" * 31), ("userId", "UABCDEF0123456789ABCDEF0123456789"), ("replyToken", "rt\ud800"),
    ("groupId", "C\ud800"),
])
def test_parse_id_not_in_line_format_is_refused_logged_and_not_stored(webhook_service, line_standin, caplog,
                                                                       where, value):
    bad, good = text_event("我要預約"), text_event("查蔬食")
    if where in ("userId", "groupId"):
        bad["source"] = {"type": "group" if where == "groupId" else "user", "userId": USER, where: value}
    else:
        bad[where] = value
    result = handle(webhook_service, ascii_body(bad, good))
    assert result.status == 200
    assert result.body["events"] == ["refused", "done"]
    assert len(reply_calls(line_standin)) == 1
    assert len(replies_to(line_standin, good["replyToken"])) == 1
    assert len(stored_inbox(webhook_service)) == 1  # the good event's claim, and nothing for the bad one
    assert webhook_service.store.get(inbox.COLLECTION, f"test-tenant:{good['webhookEventId']}") is not None
    [refusal] = [r for r in caplog.records if r.getMessage().startswith("event refused")]
    assert refusal.fields["reason"].startswith("bad_")
    assert value not in json.dumps(refusal.fields)


# -- item 5: newer LINE values -----------------------------------------------------------------------

def test_parse_text_with_future_mention_type_still_gets_its_turn(webhook_service, line_standin):
    event = text_event("@LOCAL 花壇有素食店嗎？")
    event["message"]["mention"] = {"mentionees": [{"index": 0, "length": 6, "type": "futureType"}]}
    assert handle(webhook_service, line_body(event)).status == 200
    [reply] = replies_to(line_standin, event["replyToken"])
    assert "花壇" in all_text(reply["body"]["messages"])


def test_parse_text_with_future_emoji_product_and_unknown_fields_gets_its_turn(webhook_service, line_standin):
    event = text_event("花壇有素食店嗎？")
    event["message"]["emojis"] = [{"index": 0, "length": 1, "productId": 7, "emojiId": None, "kind": "3d"}]
    event["message"]["somethingNew"] = {"a": 1}
    assert handle(webhook_service, line_body(event)).status == 200
    [reply] = replies_to(line_standin, event["replyToken"])
    assert "花壇" in all_text(reply["body"]["messages"])


@pytest.mark.parametrize("message", [
    {"type": "sticker", "id": "500000000000009999", "quoteToken": "qt", "stickerId": "52002734",
     "packageId": "11537", "stickerResourceType": "ZOOM_SOUND"},
    {"type": "hologram", "id": "500000000000009998", "depth": 3},
])
def test_parse_newer_non_text_message_gets_the_short_fixed_reply(webhook_service, line_standin, message):
    event = text_event("x")
    event["message"] = message
    assert handle(webhook_service, line_body(event)).status == 200
    [reply] = replies_to(line_standin, event["replyToken"])
    assert "只看得懂文字" in all_text(reply["body"]["messages"])


def test_parse_unknown_event_kind_is_ignored_without_reply(webhook_service, line_standin, caplog):
    event = text_event("x")
    event["type"] = "teleport"
    del event["message"]
    result = handle(webhook_service, line_body(event))
    assert result.status == 200
    assert result.body["events"] == ["unreadable"]
    assert reply_calls(line_standin) == []
    # the operator can still tell whose event was dropped (the keyed hash, never the id)
    [entry] = [r for r in caplog.records if r.getMessage().startswith("event unreadable")]
    assert entry.fields["user"] == hash_user(event["source"]["userId"]) is not None
    assert event["source"]["userId"] not in json.dumps(entry.fields)


# -- the budget: the 2-second clock starts when the delivery arrives ---------------------------------

def test_parse_budget_already_spent_defers_every_event_without_any_call(base_env, clock, line_standin):
    settings = Settings.from_env(base_env, required=WEBHOOK_REQUIRED)

    def spent() -> float:  # the delivery "arrived" a whole budget ago
        return time.monotonic() - settings.webhook_budget_seconds

    service = WebhookService(settings, open_store(settings), line_gateway(settings), clock=clock, monotonic=spent)
    result = handle(service, line_body(text_event("我要預約"), text_event("查蔬食")))
    assert result.status == 503
    assert result.body["events"] == ["retry", "retry"]
    assert line_standin.calls() == []
    assert stored_inbox(service) == []


def test_parse_refusals_are_logged_without_the_body(webhook_service, line_standin, caplog):
    secret_text = "我的電話是0912345678"
    event = text_event(secret_text)
    event["source"]["userId"] = "U-not-hex"
    handle(webhook_service, line_body(event))
    logged = json.dumps([[r.getMessage(), r.fields] for r in caplog.records], ensure_ascii=False)
    assert "event refused" in logged
    assert secret_text not in logged and "U-not-hex" not in logged
