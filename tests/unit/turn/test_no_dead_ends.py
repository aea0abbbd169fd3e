"""Fixed answers that could end the conversation offer the menu:
the draft card's 取消, the forget confirmation and the daily-cap refusal. The in-process
WebhookService on a real SQLite file, functions/memory's use case in-process, the LINE stand-in."""
from __future__ import annotations

import pytest

from tests.conftest import (
    all_text,
    postback_event,
    reply_messages,
    text_event,
)
from tests.memory_support import USER_A, postbacks, webhook_with_memory


def _service(env, clock):
    return webhook_with_memory(env, clock)


@pytest.fixture
def service(base_env, clock):
    return _service(base_env, clock)


_say = reply_messages  # tests/conftest.py


def _quick_labels(messages: list[dict]) -> list[str]:
    return [item["action"]["label"] for item in (messages[-1].get("quickReply") or {}).get("items", [])]


def test_handoff_card_cancel_reply_offers_menu_quick_replies(service, line_standin):
    card = _say(service, line_standin, text_event("新需求：想問週六走讀能不能推輪椅", user_id=USER_A))
    cancelled = _say(service, line_standin, postback_event(postbacks(card)["取消"], user_id=USER_A))
    assert "已取消" in all_text(cancelled)
    assert {"查活動", "查蔬食", "查看原本服務單"} <= set(_quick_labels(cancelled))


def test_memory_forget_confirmation_offers_menu_quick_replies(service, line_standin):
    card = _say(service, line_standin, text_event("以後都找蔬食，幫我記住", user_id=USER_A))
    _say(service, line_standin, postback_event(postbacks(card)["同意記住"], user_id=USER_A))
    forgotten = _say(service, line_standin, text_event("忘記我的飲食偏好", user_id=USER_A))
    assert "已經忘記" in all_text(forgotten)
    assert {"查活動", "查蔬食"} <= set(_quick_labels(forgotten))


def test_handoff_daily_cap_refusal_offers_status_first(base_env, clock, line_standin):
    service = _service({**base_env, "LOCAL_DAILY_REQUEST_CAP": "1"}, clock)
    card = _say(service, line_standin, text_event("新需求：第一筆", user_id=USER_A))
    _say(service, line_standin, postback_event(postbacks(card)["確認送出"], user_id=USER_A))
    refused = _say(service, line_standin, text_event("新需求：第二筆", user_id=USER_A))
    assert "上限" in all_text(refused)
    assert _quick_labels(refused)[0] == "查看原本服務單" and "查活動" in _quick_labels(refused)
