"""The budget of an answer (docs/design.md §7, Wording) as a resident reads it through the signed webhook: a shop
answer, an events answer, the privacy and forget notices with 「詳細說明」, and the bot's display name
(``LOCAL_DISPLAY_NAME``). Each test reads the LINE stand-in's recorded reply."""
from __future__ import annotations

from tests.conftest import TEST_TIMESTAMP_MS, TEST_USER, all_text, postback_event, reply_messages, text_event
from tools import line_events, reply_budget


def _postback(messages: list[dict], label: str) -> str:
    found = [item["action"]["data"] for message in messages for item in (message.get("quickReply") or {}).get("items", [])
             if item["action"].get("label") == label and item["action"]["type"] == "postback"]
    assert found, f"no {label} button"
    return found[0]


def test_webhook_shop_answer_is_one_short_text_then_the_card_with_its_source_once(webhook_service, line_standin):
    messages = reply_messages(webhook_service, line_standin, text_event("彰化市有素食店嗎？"))
    assert [message["type"] for message in messages] == ["text", "flex"]
    assert "資料來源：彰化縣政府蔬食節名單" in messages[0]["text"] and "2026/9/27 查閱" in messages[0]["text"]
    assert reply_budget.problems(messages, names=reply_budget.data_names()) == []
    assert "places-" not in all_text(messages) and "版本" not in all_text(messages)
    assert messages[-1].get("quickReply")  # the next steps ride on the last message, the card


def test_webhook_events_answer_says_demo_once_without_its_version(webhook_service, line_standin):
    messages = reply_messages(webhook_service, line_standin, text_event("這週末彰化市有什麼活動？"))
    assert [message["type"] for message in messages] == ["text", "flex"]
    assert "示範資料" in messages[0]["text"] and "events-demo" not in all_text(messages)
    assert "快照" not in all_text(messages)
    assert reply_budget.problems(messages, names=reply_budget.data_names()) == []


def _demo_said(messages: list[dict]) -> tuple[int, int]:
    """How often 示範 is read (text lines, card contents; the notification preview alt_text aside)."""
    import json

    texts = sum(message["text"].count("示範") for message in messages if message["type"] == "text")
    cards = sum(json.dumps(message["contents"], ensure_ascii=False).count("示範")
                for message in messages if message["type"] == "flex")
    return texts, cards


def test_webhook_events_answers_say_demo_once_in_the_text_and_cards_stay_clean(webhook_service, line_standin):
    for ask in ("這週末彰化市有什麼活動？", "員林有什麼活動", "花壇這個月有活動嗎"):
        assert _demo_said(reply_messages(webhook_service, line_standin, text_event(ask))) == (1, 0), ask


def test_webhook_events_follow_up_to_a_township_with_none_is_short_and_says_demo_once(webhook_service, line_standin):
    reply_messages(webhook_service, line_standin, text_event("彰化市這週末有什麼活動"))
    for ask in ("那溪湖呢", "那田尾呢"):
        messages = reply_messages(webhook_service, line_standin, text_event(ask))
        assert _demo_said(messages) == (1, 0), ask
        assert len(messages[0]["text"].split("\n")) <= 4, ask
        assert reply_budget.problems(messages, names=reply_budget.data_names()) == []


def test_webhook_privacy_answer_is_five_lines_and_details_button_gives_the_rest(webhook_service, line_standin):
    short = reply_messages(webhook_service, line_standin, text_event("我的資料"))
    [message] = short
    assert len(message["text"].split("\n")) <= 5
    assert "彰化在地小幫手" in message["text"] and "LOCAL" not in message["text"] and "帳號代碼" not in message["text"]
    more = reply_messages(webhook_service, line_standin, postback_event(_postback(short, "詳細說明")))
    words = all_text(more)
    assert "7 天" in words and "30 天" in words and "大頭貼" in words and "LOCAL" not in words


def test_webhook_forget_in_words_names_the_one_button_in_five_lines(webhook_service, line_standin):
    [message] = reply_messages(webhook_service, line_standin, text_event("以後不用記了，刪掉"))
    assert len(message["text"].split("\n")) <= 5 and "忘記我的飲食偏好" in message["text"]
    labels = [item["action"]["label"] for item in message["quickReply"]["items"]]
    assert "忘記我的飲食偏好" in labels and "詳細說明" in labels


def test_webhook_display_name_is_the_configured_one(base_env, clock, line_standin):
    from shared.config import WEBHOOK_REQUIRED, Settings
    from shared.webhook.service import WebhookService
    from shared.wiring import line_gateway, open_store

    settings = Settings.from_env({**base_env, "LOCAL_DISPLAY_NAME": "員林好鄰居"}, required=WEBHOOK_REQUIRED)
    service = WebhookService(settings, open_store(settings), line_gateway(settings), clock=clock)
    welcome = reply_messages(service, line_standin, line_events.follow_event(user_id=TEST_USER,
                                                                           timestamp_ms=TEST_TIMESTAMP_MS))
    assert "歡迎加入員林好鄰居" in all_text(welcome) and "LOCAL" not in all_text(welcome)
    assert "員林好鄰居" in all_text(reply_messages(service, line_standin, text_event("你們會記錄我打的字嗎")))
