"""A problem for the town hall said inside another question (shared.turn.rules.problems,
shared.turn.problem_offer): the question is answered and a request with the problem's words is offered.
Signed webhook bodies go through the in-process ``WebhookService``; the replies are read from the LINE
stand-in, and the offer's quick reply is sent back as the resident's tap would send it."""
from __future__ import annotations

import pytest

from tests.conftest import all_text, reply_messages, text_event

OFFER = "把這件事留給公所"


def offered(messages: list[dict]) -> list[str]:
    """The texts the offer's quick reply sends (none when it is not offered)."""
    items = (messages[-1].get("quickReply") or {}).get("items") or []
    return [item["action"]["text"] for item in items if item["action"].get("label") == OFFER]


@pytest.mark.parametrize("text, question, answer, problem", [
    ("花壇有素食店嗎 順便問一下 我們巷子的水溝堵住了要找誰", "花壇有素食店嗎", "和米素食", "我們巷子的水溝堵住了"),
    ("鹿港有素食嗎 垃圾沒人收怎麼辦", "鹿港有素食嗎", "鹿港", "垃圾沒人收"),
    ("和米素食在哪裡？另外我家門口的路燈壞了", "和米素食在哪裡？", "和米素食", "我家門口的路燈壞了"),
    ("明天會下雨嗎 順便問 路上有坑洞要找誰", "明天會下雨嗎", "中央氣象署", "路上有坑洞"),
    # Simplified: the words offered are the resident's own, in their script
    ("花壇有素食店嗎 顺便问一下 我们巷子的水沟堵住了要找谁", "花壇有素食店嗎", "和米素食", "我们巷子的水沟堵住了"),
])
def test_problem_offer_answers_the_question_and_offers_the_problem_alone(webhook_service, line_standin,
                                                                         text, question, answer, problem):
    alone = reply_messages(webhook_service, line_standin, text_event(question, user_id="U" + "4" * 32))
    messages = reply_messages(webhook_service, line_standin, text_event(text))
    words = all_text(messages)
    assert answer in words and f"你提到「{problem}」" in words
    assert offered(messages) == [f"新需求：{problem}"]
    assert len(messages) == len(alone)  # the offer adds a line and a button, no message


def test_problem_offer_tapped_opens_the_card_with_the_problem_words(webhook_service, line_standin):
    messages = reply_messages(webhook_service, line_standin,
                              text_event("花壇有素食店嗎 順便問一下 我們巷子的水溝堵住了要找誰"))
    [tap] = offered(messages)
    card = all_text(reply_messages(webhook_service, line_standin, text_event(tap)))
    assert "我們巷子的水溝堵住了" in card and "確認送出" in card
    assert "花壇" not in card and "要找誰" not in card


def test_problem_offer_with_the_problem_alone_gives_the_request_form_and_the_offer(webhook_service, line_standin):
    messages = reply_messages(webhook_service, line_standin, text_event("路燈壞了"))
    assert "新需求：" in all_text(messages) and offered(messages) == ["新需求：路燈壞了"]


def test_problem_offer_keeps_the_words_as_typed(webhook_service, line_standin):
    messages = reply_messages(webhook_service, line_standin, text_event("社區路燈不亮，想請人來看看"))
    assert offered(messages) == ["新需求：社區路燈不亮"]  # not its reading form (社群)


@pytest.mark.parametrize("text", ["我報的路燈壞了 處理了沒", "花壇有素食店嗎", "鹿港有什麼活動 順便問一下 停車方便嗎"])
def test_problem_offer_not_made_without_a_new_problem(webhook_service, line_standin, text):
    messages = reply_messages(webhook_service, line_standin, text_event(text))
    assert offered(messages) == [] and "你提到「" not in all_text(messages)


def test_problem_offer_not_made_in_a_group(webhook_service, line_standin):
    event = text_event("花壇有素食店嗎 順便問一下 路燈壞了", group_id="C" + "3" * 32)
    messages = reply_messages(webhook_service, line_standin, event)
    assert offered(messages) == []


@pytest.mark.parametrize("text", ["路燈壞了 " * 1000, "花壇有素食嗎 " + "水溝堵住了，" * 800])
def test_problem_said_on_a_long_message_is_read_once(text):
    from shared.text import reading_form
    from shared.turn.router import route
    from shared.turn.rules.problems import problem_said

    assert problem_said(text) is None  # more clauses than a resident's message: no offer, no recursion
    assert route(reading_form(text)).tool in ("handoff_info", "search_local_places")


#: The directory text, which a problem for the town hall never gets.
DIRECTORY = "我沒有政府機關、公所、學校或其他單位的電話"


@pytest.mark.parametrize("text, problem", [
    ("我們巷口的垃圾車都不來 已經一個禮拜了 在員林市中正路", "我們巷口的垃圾車都不來"),
    ("垃圾車都沒來", "垃圾車都沒來"),
    ("巷子裡的水溝好臭", "巷子裡的水溝好臭"),
    ("路面有個大洞", "路面有個大洞"),
    ("隔壁工廠噪音很大", "隔壁工廠噪音很大"),
    ("附近有好多流浪狗", "附近有好多流浪狗"),
    ("路燈都不會亮 在花壇鄉中山路", "路燈都不會亮"),
    ("颱風過後樹倒在路上", "颱風過後樹倒在路上"),
    ("水溝蓋不見了", "水溝蓋不見了"),
])
def test_problem_offer_a_problem_in_own_words_gets_the_form_never_the_directory(webhook_service, line_standin,
                                                                                 text, problem):
    messages = reply_messages(webhook_service, line_standin, text_event(text))
    words = all_text(messages)
    assert "新需求：" in words and offered(messages) == [f"新需求：{problem}"]
    assert DIRECTORY not in words and "這句我看不太懂" not in words


def test_problem_after_the_handoff_menu_entry_is_the_card_of_the_whole_text(webhook_service, line_standin):
    reply_messages(webhook_service, line_standin, text_event("留下服務詢問"))
    said = "我們巷口的垃圾車都不來 已經一個禮拜了 在員林市中正路"
    messages = reply_messages(webhook_service, line_standin, text_event(said))
    card = all_text([m for m in messages if m.get("type") == "flex"])
    assert said in card and offered(messages) == [] and DIRECTORY not in all_text(messages)


def test_problem_offer_a_noisy_event_asked_about_is_a_search(webhook_service, line_standin):
    messages = reply_messages(webhook_service, line_standin, text_event("這個活動會很吵嗎"))
    assert offered(messages) == []
