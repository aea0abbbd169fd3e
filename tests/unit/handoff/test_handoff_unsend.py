"""An unsent message never becomes a request (docs/design.md §4, LINE's unsend event): the in-process
WebhookService on a real SQLite file and the LINE stand-in, through signed webhook bodies."""
from __future__ import annotations

from shared.handoff import drafts, records
from tests import conftest
from tests.conftest import all_text, line_body, postback_event, replies_to, sign, text_event

USER = "U7a1e5b0c2d3f4a5b6c7d8e9f0a1b2c3d"
TEXT = "新需求：我的電話是0912345678，想參加週六的社區走讀"


def post(service, *events) -> int:
    body = line_body(*events)
    return service.handle(body.decode(), sign(body)).status


def unsend_event(message_id: str, user_id: str = USER, event_id: str = "01UNSEND000000000000000001") -> dict:
    return conftest.unsend_event(message_id, user_id=user_id, event_id=event_id)


def card_data(standin, event) -> dict[str, str]:
    [reply] = replies_to(standin, event["replyToken"])
    card = reply["body"]["messages"][0]
    return {b["action"]["label"]: b["action"]["data"] for b in card["contents"]["footer"]["contents"]}


def test_unsend_withdraws_open_draft_deletes_text_and_card_says_withdrawn(webhook_service, line_standin):
    message = text_event(TEXT, user_id=USER)
    assert post(webhook_service, message) == 200
    confirm = card_data(line_standin, message)["確認送出"]
    calls = len(line_standin.calls())

    assert post(webhook_service, unsend_event(message["message"]["id"])) == 200
    assert len(line_standin.calls()) == calls  # nothing is said to an unsend
    [draft] = webhook_service.store.query(records.DRAFTS)
    assert draft["status"] == drafts.WITHDRAWN and draft["text"] is None
    assert "0912345678" not in str(webhook_service.store.query(records.DRAFTS))

    tap = postback_event(confirm, user_id=USER)
    assert post(webhook_service, tap) == 200
    [reply] = replies_to(line_standin, tap["replyToken"])
    assert "收回" in all_text(reply["body"]["messages"])
    assert webhook_service.store.query(records.REQUESTS) == []


def test_unsend_of_another_message_changes_nothing(webhook_service, line_standin):
    message = text_event(TEXT, user_id=USER)
    assert post(webhook_service, message) == 200
    assert post(webhook_service, unsend_event("999999999999999999")) == 200
    [draft] = webhook_service.store.query(records.DRAFTS)
    assert draft["status"] == drafts.OPEN and draft["text"] == TEXT.split("：", 1)[1]


def test_unsend_after_the_request_was_created_keeps_the_request(webhook_service, line_standin):
    message = text_event(TEXT, user_id=USER)
    assert post(webhook_service, message) == 200
    tap = postback_event(card_data(line_standin, message)["確認送出"], user_id=USER)
    assert post(webhook_service, tap) == 200
    assert post(webhook_service, unsend_event(message["message"]["id"])) == 200
    [request] = webhook_service.store.query(records.REQUESTS)
    assert request["status"] == "created"  # confirmed before the unsend: a person has it
    [draft] = webhook_service.store.query(records.DRAFTS)
    assert draft["status"] == drafts.CONFIRMED


def test_unsend_redelivered_is_acknowledged_once(webhook_service, line_standin):
    message = text_event(TEXT, user_id=USER)
    assert post(webhook_service, message) == 200
    event = unsend_event(message["message"]["id"], event_id="01UNSEND000000000000000002")
    assert post(webhook_service, event) == 200
    assert post(webhook_service, event) == 200
    [draft] = webhook_service.store.query(records.DRAFTS)
    assert draft["status"] == drafts.WITHDRAWN
