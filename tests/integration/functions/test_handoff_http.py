"""Handoff over real HTTP (docs/design.md §4): webhook and reconcile as functions-framework
processes, signed bodies (``text-new-request.json``), the LINE stand-in, and ``make user-data``."""
from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor

import pytest

from tests.codes_support import grouped
from tests.conftest import case_bytes, line_body, postback_event
from tests.handoff_support import (
    REQUEST_ID,
    USER,
    card_postbacks,
    env_with,
    new_card,
    post,
    reply_text,
    request_rows,
    user_data,
)


@pytest.fixture
def functions(start_function, base_env):
    reconcile = start_function("reconcile", env_with(base_env))
    webhook = start_function("webhook", env_with(base_env, RECONCILE_FUNCTION_URL=reconcile.url))
    return webhook, reconcile


def tap(webhook_url: str, standin, data: str) -> str:
    event = postback_event(data, user_id=USER)
    assert post(webhook_url, line_body(event)).status_code == 200
    return reply_text(standin, event["replyToken"])


@pytest.mark.slow
def test_handoff_http_card_confirm_repeat_concurrent_superseded(functions, line_standin, base_env):
    webhook, _ = functions
    store_url, tenant = base_env["LOCAL_STORE_URL"], base_env["LOCAL_TENANT_ID"]
    case = json.loads(case_bytes("text-new-request.json"))["events"][0]

    # The acceptance body, signed as received: a card showing the exact text.
    assert post(webhook.url, case_bytes("text-new-request.json")).status_code == 200
    buttons = card_postbacks(line_standin, case["replyToken"])
    assert case["message"]["text"].split("：", 1)[1] in reply_text(line_standin, case["replyToken"])
    assert set(buttons) == {"確認送出", "取消"}
    assert len(user_data(store_url, tenant)["handoff_requests"]) == 0

    # Confirm → a receipt with the request's number (its display code, never req-…).
    first = tap(webhook.url, line_standin, buttons["確認送出"])
    [request_id] = REQUEST_ID.findall(first)
    assert "req-" not in first
    assert "等待工作人員受理" in first
    assert [grouped(r["display_code"]) for r in user_data(store_url, tenant)["handoff_requests"]] == [request_id]

    # The same postback again, with a new webhookEventId → the same request id.
    again = tap(webhook.url, line_standin, buttons["確認送出"])
    assert REQUEST_ID.findall(again) == [request_id]
    assert len(user_data(store_url, tenant)["handoff_requests"]) == 1

    # 12 concurrent taps on one new card → one request id.
    data = new_card(webhook.url, line_standin, "新需求：請幫我確認活動集合地點")["確認送出"]
    events = [postback_event(data, user_id=USER) for _ in range(12)]
    with ThreadPoolExecutor(max_workers=12) as pool:
        statuses = list(pool.map(lambda e: post(webhook.url, line_body(e)).status_code, events))
    assert statuses == [200] * 12
    answers = [reply_text(line_standin, e["replyToken"]) for e in events]
    ids = {found for text in answers for found in REQUEST_ID.findall(text)}
    assert len(ids) == 1 and request_id not in ids
    assert all(REQUEST_ID.search(text) or "正在確認是否已登記" in text for text in answers), answers
    assert len(user_data(store_url, tenant)["handoff_requests"]) == 2

    # A superseded card creates nothing; the newer card still works.
    older = new_card(webhook.url, line_standin, "新需求：第一次寫的需求")
    newer = new_card(webhook.url, line_standin, "新需求：改寫後的需求")
    refused = tap(webhook.url, line_standin, older["確認送出"])
    assert "取代" in refused and not REQUEST_ID.search(refused)
    assert len(user_data(store_url, tenant)["handoff_requests"]) == 2
    assert REQUEST_ID.search(tap(webhook.url, line_standin, newer["確認送出"]))
    shown = user_data(store_url, tenant)
    assert len(shown["handoff_requests"]) == 3 == request_rows(store_url)
    assert {d["status"] for d in shown["drafts"]} == {"confirmed", "superseded"}

    # 查看原本服務單 names the latest request in honest words.
    latest = grouped(shown["handoff_requests"][-1]["display_code"])
    event = postback_event("menu:status", user_id=USER)
    assert post(webhook.url, line_body(event)).status_code == 200
    status = reply_text(line_standin, event["replyToken"])
    assert latest in status and "等待工作人員受理" in status
    assert "已安排好" not in status and "處理好了" not in status

    # A tampered card is refused kindly and writes nothing.
    tampered = new_card(webhook.url, line_standin, "新需求：再一筆")["確認送出"]
    assert "無法辨識" in tap(webhook.url, line_standin, tampered[:-4] + "AAAA")
    assert request_rows(store_url) == 3


def test_handoff_http_reconcile_accepts_only_the_queue(function_app, base_env):
    reconcile = function_app("reconcile", env_with(base_env))
    token = base_env["LOCAL_INTERNAL_TOKEN"]

    def call(authorization: str | None, body: object = None, method: str = "POST") -> int:
        headers = {"Authorization": authorization} if authorization else {}
        return reconcile.open("/", method=method, json=body if body is not None else {"v": 1},
                              headers=headers).status_code

    assert call(None) == 401
    assert call("Basic eDp5") == 401
    assert call("Bearer wrong-token") == 403
    assert call(f"Bearer {token}", {"kind": "something"}) == 400
    assert call(f"Bearer {token}", method="GET") == 405
