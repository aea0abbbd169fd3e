"""Words that work like the buttons, over real HTTP: one functions-framework webhook process, signed
bodies, the LINE stand-in (shared.handoff.cancel_words, shared.turn.problem_offer)."""
from __future__ import annotations

import pytest

from tests.conftest import line_body, postback_event, text_event
from tests.handoff_support import USER, env_with, new_card, post, replied_messages, reply_text, request_rows


def say(webhook_url: str, standin, text: str) -> list[dict]:
    event = text_event(text, user_id=USER)
    assert post(webhook_url, line_body(event)).status_code == 200
    return replied_messages(standin, event["replyToken"])


@pytest.mark.slow
def test_words_like_buttons_http_cancel_in_words_then_the_card_refuses_and_a_problem_is_offered(
        start_function, base_env, line_standin):
    webhook = start_function("webhook", env_with(base_env))
    buttons = new_card(webhook.url, line_standin, "新需求：門口的路燈壞了")
    cancelled = say(webhook.url, line_standin, "算了")
    assert "剛才那張確認卡已經取消" in cancelled[0]["text"]
    event = postback_event(buttons["確認送出"], user_id=USER)
    assert post(webhook.url, line_body(event)).status_code == 200
    assert "沒有送出" in reply_text(line_standin, event["replyToken"])
    assert request_rows(base_env["LOCAL_STORE_URL"]) == 0

    messages = say(webhook.url, line_standin, "花壇有素食店嗎 順便問一下 我們巷子的水溝堵住了要找誰")
    offers = [item["action"]["text"] for item in messages[-1]["quickReply"]["items"]
              if item["action"]["label"] == "把這件事留給公所"]
    assert offers == ["新需求：我們巷子的水溝堵住了"]
    assert any("和米素食" in str(message) for message in messages)
