"""Delivery rules through the functions as processes, with the LINE stand-in: expiry judged at
the tap (a reconcile that runs after the draft's TTL still creates), an unsent message never
becomes a request, and an expired forget button answers with a fresh one."""
from __future__ import annotations

import time
from datetime import datetime, timezone

import pytest

from tests.codes_support import shown_of
from tests.conftest import all_text, line_body, postback_event, text_event
from tests.handoff_support import (
    PUSH,
    REQUEST_ID,
    USER,
    accepted,
    card_postbacks,
    env_with,
    new_card,
    post,
    replied_messages,
    reply_text,
    store_docs,
    wait_for,
)
from tests.memory_support import postbacks, tap_event
from tools import line_events

pytestmark = pytest.mark.slow


def test_items_expiry_judged_at_the_tap_reconcile_after_ttl_creates(start_function, base_env, line_standin):
    timing = {"LOCAL_DRAFT_TTL_SECONDS": "3", "LOCAL_RECONCILE_DELAY_SECONDS": "4"}
    reconcile = start_function("reconcile", env_with(base_env, **timing))
    webhook = start_function("webhook", env_with(base_env, RECONCILE_FUNCTION_URL=reconcile.url,
                                                 LOCAL_FAULTS="BEFORE_WRITE", **timing))
    data = new_card(webhook.url, line_standin)["確認送出"]
    event = postback_event(data, user_id=USER)
    assert post(webhook.url, line_body(event)).status_code == 200  # tapped well inside the 3 s
    assert "正在確認是否已登記" in reply_text(line_standin, event["replyToken"])
    store_url = base_env["LOCAL_STORE_URL"]
    [draft] = store_docs(store_url, "handoff_drafts")
    assert draft["confirm_requested_at"] < draft["expires_at"]

    # reconcile first runs 4 s later, after the draft's expiry: the consent was given in time
    [pushed] = wait_for(lambda: [c for c in accepted(line_standin, PUSH) if c["body"]["to"] == USER], 30,
                        "the receipt push")
    [request] = store_docs(store_url, "handoff_requests")
    assert request["created_at"] >= draft["expires_at"]  # created after the TTL …
    assert request["created_by"] == "reconcile"
    assert REQUEST_ID.findall(all_text(pushed["body"]["messages"])) == [shown_of(request)]  # … and told


def test_items_unsent_message_never_becomes_a_request(start_function, base_env, line_standin):
    webhook = start_function("webhook", env_with(base_env))
    message = text_event("新需求：我的電話是0912345678，請回電", user_id=USER)
    assert post(webhook.url, line_body(message)).status_code == 200
    confirm = card_postbacks(line_standin, message["replyToken"])["確認送出"]
    unsend = line_events.unsend_event(message["message"]["id"], user_id=USER, event_id="01UNSENDPROCESS00000000001")
    assert post(webhook.url, line_body(unsend)).status_code == 200
    tap = postback_event(confirm, user_id=USER)
    assert post(webhook.url, line_body(tap)).status_code == 200
    assert "收回" in reply_text(line_standin, tap["replyToken"])
    store_url = base_env["LOCAL_STORE_URL"]
    assert store_docs(store_url, "handoff_requests") == []
    assert "0912345678" not in str(store_docs(store_url, "handoff_drafts"))


def test_items_expired_forget_button_offers_a_fresh_one(start_function, base_env, line_standin):
    short = {"LOCAL_MEMORY_CARD_TTL_SECONDS": "4"}
    memory = start_function("memory", env_with(base_env, **short))
    webhook = start_function("webhook", env_with(base_env, MEMORY_FUNCTION_URL=memory.url, **short))

    def say(event) -> list[dict]:
        assert post(webhook.url, line_body(event)).status_code == 200
        messages = replied_messages(line_standin, event["replyToken"])
        assert messages, "no reply"
        return messages

    def tap(data: str) -> list[dict]:  # tapped now: LINE stamps the event with the tap's time
        return say(tap_event(data, USER, datetime.now(timezone.utc)))

    approve = postbacks(say(text_event("以後都找蔬食，幫我記住", user_id=USER)))["同意記住"]
    assert "已經記住" in all_text(tap(approve))
    view_at = time.monotonic()
    old = postbacks(say(text_event("我的偏好", user_id=USER)))["忘記這個偏好"]
    wait_for(lambda: time.monotonic() - view_at > 4.5, 15, "the forget button to expire")
    answer = tap(old)
    assert "超過有效時間" in all_text(answer)
    fresh = postbacks(answer)["忘記這個偏好"]
    assert fresh != old
    assert "已經忘記" in all_text(tap(fresh))
