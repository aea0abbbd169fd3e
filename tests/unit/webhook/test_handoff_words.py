"""What a resident types about a request in plain words, through signed webhook bodies to the in-process
``WebhookService`` (offline router), read as the resident reads the LINE stand-in's replies: cancelling
after it was registered, asking its status, asking for a person, a second card, the plain text after
留下服務詢問."""
from __future__ import annotations

from datetime import timedelta

import pytest

from tests.conftest import TEST_USER, all_text, postback_event, reply_messages, text_event
from tests.unit.webhook.test_privacy_store import card_postback

NOT_UNDERSTOOD = "看不太懂"
OTHER_USER = "U" + "7" * 32


def say(service, standin, text: str, **kwargs) -> list[dict]:
    return reply_messages(service, standin, text_event(text, **kwargs))


def words(service, standin, text: str, **kwargs) -> str:
    return all_text(say(service, standin, text, **kwargs))


def message_actions(messages: list[dict]) -> dict[str, str]:
    """label → text of every message action (quick replies) in a reply."""
    found: dict[str, str] = {}
    for message in messages:
        for item in (message.get("quickReply") or {}).get("items", []):
            action = item.get("action") or {}
            if action.get("type") == "message":
                found[action["label"]] = action["text"]
    return found


def register(service, standin, text: str = "新需求：門口的路燈壞了") -> str:
    """A request made and confirmed; its number as the receipt shows it."""
    card = say(service, standin, text)
    receipt = all_text(reply_messages(service, standin, postback_event(card_postback(card, "確認送出"))))
    assert "已登記" in receipt
    return receipt.split("單號：")[1][:7]


def text_lines(messages: list[dict]) -> list[str]:
    return [line for message in messages if message.get("type") == "text" for line in message["text"].split("\n")]


# 1. cancelling after the request was registered

@pytest.mark.parametrize("said", ["算了", "不要了", "算了啦", "不用了"])
def test_cancel_words_right_after_the_receipt_say_it_cannot_be_withdrawn_here_and_how(
        webhook_service, line_standin, said):
    number = register(webhook_service, line_standin)
    reply = say(webhook_service, line_standin, said)
    text = all_text(reply)
    assert NOT_UNDERSTOOD not in text and number in text and "沒辦法撤回" in text
    assert len(text_lines(reply)) <= 3
    drafted = message_actions(reply)["請公所取消這筆"]
    assert drafted.startswith("新需求：") and number in drafted
    card = say(webhook_service, line_standin, drafted)  # the button opens a card; nothing is sent before 確認送出
    assert "確認送出" in all_text(card) and number in all_text(card)


@pytest.mark.parametrize("said", ["不要了 取消", "我要撤回服務單", "服務單幫我取消"])
def test_cancelling_a_request_in_a_sentence_is_short_and_names_the_open_request(webhook_service, line_standin, said):
    number = register(webhook_service, line_standin)
    reply = say(webhook_service, line_standin, said)
    text = all_text(reply)
    assert number in text and "沒辦法撤回" in text and len(text_lines(reply)) <= 3
    assert sum(len(line) for line in text_lines(reply)) <= 100
    assert number in message_actions(reply)["請公所取消這筆"]


def test_cancelling_with_no_request_claims_none(webhook_service, line_standin):
    reply = say(webhook_service, line_standin, "不要了 取消", user_id=OTHER_USER)
    assert "單號：" not in all_text(reply) and "請公所取消這筆" not in message_actions(reply)
    assert len(text_lines(reply)) <= 3


def test_cancel_word_long_after_the_request_is_not_read_as_about_it(webhook_service, line_standin, clock):
    register(webhook_service, line_standin)
    clock.at += timedelta(hours=2)
    assert "沒辦法撤回" not in words(webhook_service, line_standin, "算了")


def test_cancel_word_after_a_closed_request_claims_nothing(webhook_service, line_standin):
    assert "沒辦法撤回" not in words(webhook_service, line_standin, "算了", user_id=OTHER_USER)


# 2. asking the status in plain words

@pytest.mark.parametrize("said", ["路燈的事處理好了沒", "路燈的事情怎麼樣了", "我的申請呢", "有人處理了嗎",
                                  "冷氣的事有人處理了嗎", "水溝的問題解決了嗎"])
def test_status_asked_in_plain_words_gets_the_status(webhook_service, line_standin, said):
    number = register(webhook_service, line_standin)
    text = words(webhook_service, line_standin, said)
    assert NOT_UNDERSTOOD not in text and number in text and "等待工作人員受理" in text


@pytest.mark.parametrize("said", ["好了嗎", "辦好了沒", "好了沒？", "處理好了嗎", "有消息了嗎", "進度呢"])
def test_a_bare_progress_question_with_an_open_request_gets_its_status(webhook_service, line_standin, said):
    number = register(webhook_service, line_standin)
    text = words(webhook_service, line_standin, said)
    assert NOT_UNDERSTOOD not in text and number in text


@pytest.mark.parametrize("said", ["好了嗎", "辦好了沒"])
def test_a_bare_progress_question_with_no_request_claims_nothing(webhook_service, line_standin, said):
    text = words(webhook_service, line_standin, said, user_id=OTHER_USER)
    assert "單號" not in text and "服務詢問" not in text.split("\n")[0]


def test_a_status_question_in_a_group_gets_the_one_to_one_redirect(webhook_service, line_standin):
    number = register(webhook_service, line_standin)
    text = words(webhook_service, line_standin, "路燈的事處理好了沒", group_id="C" + "3" * 32)
    assert number not in text and "路燈" not in text and NOT_UNDERSTOOD not in text
    assert number not in words(webhook_service, line_standin, "好了嗎", group_id="C" + "3" * 32)


# 3. asking for a person

@pytest.mark.parametrize("said", ["我要找里長", "我要找人", "可以找真人嗎", "我要跟承辦人講", "可以幫我轉接嗎",
                                  "我想跟公所的人說", "我要找村長"])
def test_asking_for_a_person_gets_the_offer_to_leave_a_written_request(webhook_service, line_standin, said):
    reply = say(webhook_service, line_standin, said)
    text = all_text(reply)
    assert NOT_UNDERSTOOD not in text and "沒辦法幫你轉接電話" in text and "公所工作人員" in text
    assert len(reply) <= 2 and len(text_lines(reply)) <= 3


def test_a_phone_number_asked_by_role_is_still_no_directory(webhook_service, line_standin):
    assert "沒辦法幫你轉接電話" not in words(webhook_service, line_standin, "里長電話幾號")


# 6. a second card while one is open

def test_a_second_card_says_it_replaced_the_first_and_the_first_then_refuses(webhook_service, line_standin):
    first = say(webhook_service, line_standin, "新需求：門口的路燈壞了")
    assert "前一張確認卡" not in all_text(first)
    second = say(webhook_service, line_standin, "新需求：水溝堵住了")
    assert len(second) == 2 and second[0]["text"].split("\n")[0] == "前一張確認卡已換成這一張。"
    assert "水溝堵住了" in all_text(second[1:])
    tapped = all_text(reply_messages(webhook_service, line_standin, postback_event(card_postback(first, "確認送出"))))
    assert "沒有送出" in tapped
    receipt = all_text(reply_messages(webhook_service, line_standin, postback_event(card_postback(second, "確認送出"))))
    assert "已登記" in receipt


def test_a_card_after_an_expired_or_cancelled_one_says_nothing_of_replacing(webhook_service, line_standin, clock):
    card = say(webhook_service, line_standin, "新需求：門口的路燈壞了")
    reply_messages(webhook_service, line_standin, postback_event(card_postback(card, "取消")))
    assert "前一張確認卡" not in words(webhook_service, line_standin, "新需求：水溝堵住了")
    clock.at += timedelta(hours=1)
    assert "前一張確認卡" not in words(webhook_service, line_standin, "新需求：樹倒了")


def test_the_same_words_again_while_open_and_registered_say_both_in_one_message(webhook_service, line_standin):
    register(webhook_service, line_standin, "新需求：門口的路燈壞了")
    say(webhook_service, line_standin, "新需求：門口的路燈壞了")  # a card, not confirmed
    again = say(webhook_service, line_standin, "新需求：門口的路燈壞了")
    assert len(again) == 2 and "前一張確認卡已換成這一張" in again[0]["text"] and "已經送出一樣的內容" in again[0]["text"]


# 5. the plain text right after 留下服務詢問

def card_text(messages: list[dict]) -> str:
    """The card's words (its Flex bubble), as the resident reads them."""
    return all_text([m for m in messages if m.get("type") == "flex"])


@pytest.mark.parametrize("entry", ["留下服務詢問", "我要找里長", "可以找真人嗎"])
@pytest.mark.parametrize("typed", ["路燈壞了", "我家門口的水溝堵住了，下雨就淹水", "想請人幫我看一下補助的申請表"])
def test_the_text_after_the_prompt_becomes_the_card_straight_away(webhook_service, line_standin, entry, typed):
    prompt = say(webhook_service, line_standin, entry)
    assert "直接打字" in all_text(prompt)
    card = say(webhook_service, line_standin, typed)
    assert typed in card_text(card) and "確認送出" in all_text(card) and "取消" in all_text(card)
    assert "把這件事留給公所" not in message_actions(card) and "開頭加上" not in all_text(card)
    receipt = all_text(reply_messages(webhook_service, line_standin, postback_event(card_postback(card, "確認送出"))))
    assert "已登記" in receipt


def test_only_the_next_message_is_read_as_the_request(webhook_service, line_standin):
    say(webhook_service, line_standin, "留下服務詢問")
    say(webhook_service, line_standin, "路燈壞了")
    again = say(webhook_service, line_standin, "水溝也堵住了")
    assert card_text(again) == ""  # the usual answer: no second card unasked


def test_the_prompt_is_only_awaited_for_a_short_while(webhook_service, line_standin, clock):
    say(webhook_service, line_standin, "留下服務詢問")
    clock.at += timedelta(minutes=11)
    assert card_text(say(webhook_service, line_standin, "路燈壞了")) == ""


@pytest.mark.parametrize("other, expect", [("花壇有素食店嗎？", "素食"), ("這週末彰化市有什麼活動？", "活動"),
                                           ("謝謝", "不客氣")])
def test_another_ask_after_the_prompt_is_answered_as_usual(webhook_service, line_standin, other, expect):
    say(webhook_service, line_standin, "留下服務詢問")
    reply = say(webhook_service, line_standin, other)
    assert card_text(reply) == "" or "確認送出" not in card_text(reply)
    assert expect in all_text(reply)
    assert card_text(say(webhook_service, line_standin, "路燈壞了")) == ""  # the prompt was answered


def test_a_menu_word_after_the_prompt_is_the_menu_word(webhook_service, line_standin):
    say(webhook_service, line_standin, "留下服務詢問")
    assert card_text(say(webhook_service, line_standin, "查看原本服務單")) == ""


def test_a_cancel_word_after_the_prompt_leaves_nothing(webhook_service, line_standin):
    say(webhook_service, line_standin, "留下服務詢問")
    text = words(webhook_service, line_standin, "算了")
    assert "沒有留下需求" in text and NOT_UNDERSTOOD not in text
    assert webhook_service.store.query("handoff_drafts", where={"user_id": TEST_USER}) == []


def test_the_prompt_in_a_group_is_the_one_to_one_redirect_and_awaits_nothing(webhook_service, line_standin):
    group = "C" + "5" * 32
    assert "直接打字" not in words(webhook_service, line_standin, "留下服務詢問", group_id=group)
    assert card_text(say(webhook_service, line_standin, "路燈壞了", group_id=group)) == ""


@pytest.mark.parametrize("typed", ["新需求:路燈壞了", "新需求 路燈壞了", "新需求：路燈壞了", "新需求: 路燈壞了"])
def test_half_width_colon_or_a_space_after_新需求_opens_the_card(webhook_service, line_standin, typed):
    card = say(webhook_service, line_standin, typed)
    assert "路燈壞了" in card_text(card) and "新需求" not in card_text(card).replace("確認", "")


@pytest.mark.parametrize("typed", ["路燈壞了", "我們巷口的垃圾車都不來", "隔壁工廠噪音很大"])
def test_a_problem_said_alone_gets_one_short_offer_not_the_prompt_and_a_fifth_line(webhook_service, line_standin,
                                                                                 typed):
    reply = say(webhook_service, line_standin, typed)
    assert len(reply) == 1 and len(text_lines(reply)) == 1 and "直接打字" not in all_text(reply)
    assert message_actions(reply)["把這件事留給公所"] == f"新需求：{typed}"
