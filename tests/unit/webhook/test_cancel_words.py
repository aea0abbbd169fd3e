"""Cancelling the open confirmation card in words (shared.handoff.cancel_words), through signed webhook
bodies to the in-process ``WebhookService``, read as the resident reads the LINE stand-in's replies."""
from __future__ import annotations

from datetime import timedelta

import pytest

from shared.handoff import drafts, records
from shared.handoff.cancel_words import says_cancel
from tests.conftest import TEST_USER, all_text, postback_event, reply_messages, text_event
from tests.unit.webhook.test_privacy_store import card_postback

CANCELLED = "剛才那張確認卡已經取消，這筆需求沒有送出"


def words_for(service, standin, text: str, user_id: str = TEST_USER) -> str:
    return all_text(reply_messages(service, standin, text_event(text, user_id=user_id)))


def open_card(service, standin, text: str = "新需求：門口的路燈壞了 私密字串戊") -> list[dict]:
    return reply_messages(service, standin, text_event(text))


@pytest.mark.parametrize("said", ["算了", "不用了", "取消", "不要了", "那算了吧", "不用了，謝謝", "取消！"])
def test_cancel_words_cancel_the_open_card_and_its_confirm_then_refuses(webhook_service, line_standin, said):
    card = open_card(webhook_service, line_standin)
    assert CANCELLED in words_for(webhook_service, line_standin, said)
    [draft] = webhook_service.store.query(records.DRAFTS, where={"user_id": TEST_USER})
    assert draft["status"] == "cancelled" and draft["text"] is None  # as the button's cancel leaves it
    tapped = all_text(reply_messages(webhook_service, line_standin, postback_event(card_postback(card, "確認送出"))))
    assert "沒有送出" in tapped and "已登記" not in tapped
    status = words_for(webhook_service, line_standin, "查看原本服務單")
    assert "路燈" not in status


def test_cancel_words_with_no_card_get_the_reply_of_before(webhook_service, line_standin):
    before = words_for(webhook_service, line_standin, "算了", user_id="U" + "1" * 32)
    words = words_for(webhook_service, line_standin, "算了")
    assert words == before and CANCELLED not in words


def test_cancel_words_after_the_card_was_cancelled_by_its_button_change_nothing(webhook_service, line_standin):
    card = open_card(webhook_service, line_standin)
    reply_messages(webhook_service, line_standin, postback_event(card_postback(card, "取消")))
    words = words_for(webhook_service, line_standin, "取消")
    assert CANCELLED not in words


def test_cancel_words_leave_an_expired_card_alone(webhook_service, line_standin, clock):
    open_card(webhook_service, line_standin)
    clock.at += timedelta(hours=1)  # past the draft's 600 s
    assert CANCELLED not in words_for(webhook_service, line_standin, "算了")


def test_cancel_words_leave_a_confirmed_request_alone(webhook_service, line_standin):
    card = open_card(webhook_service, line_standin)
    confirmed = all_text(reply_messages(webhook_service, line_standin, postback_event(card_postback(card, "確認送出"))))
    assert "已登記" in confirmed or "登記" in confirmed
    assert CANCELLED not in words_for(webhook_service, line_standin, "算了")
    assert "路燈" in words_for(webhook_service, line_standin, "查看原本服務單")


@pytest.mark.parametrize("text, said", [("算了", True), ("算了啦", True), ("不要了", True), ("取消", True),
                                        ("算了 花壇有素食嗎", False), ("我要取消服務單", False), ("不要香菜", False)])
def test_says_cancel_reads_only_the_whole_message(text, said):
    assert says_cancel(text) is said


def test_cancel_words_racing_a_confirm_show_the_request_number_never_its_internal_id(
        webhook_service, line_standin, monkeypatch):
    open_card(webhook_service, line_standin)

    def confirmed_meanwhile(*_args, **_kwargs):
        return drafts.CancelResult("already_confirmed", request_id="req-20261202-0a1b2c",
                                   display_code="A7K3QF", confirmed_at="2026-12-02T02:15:00+00:00")

    monkeypatch.setattr(drafts, "cancel_draft", confirmed_meanwhile)
    words = words_for(webhook_service, line_standin, "算了")
    assert "A7K-3QF" in words and "req-" not in words
