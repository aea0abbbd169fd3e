"""What a resident reads is plain words: no 版本, 快照 or ids, no unclear 「你打的字回覆後就刪掉」, no 「今天起所有
日期」. Through a signed webhook body with the in-process memory client (real SQLite, the LINE stand-in)."""
from __future__ import annotations

import re

import pytest

from tests.conftest import all_text, postback_event, reply_messages, text_event
from tests.memory_support import USER_A, postbacks, webhook_with_memory
from tests.unit.turn.test_turn_multiple_asks_and_follow_ups import pinned  # noqa: F401  (fixture)

#: Words no resident should read: versions, snapshots, record ids, English.
JARGON = re.compile(r"版本|快照|資料版本|revision|snapshot|events-demo|places-|[A-Za-z]{4,}")


@pytest.fixture
def service(base_env, pinned):  # noqa: F811
    return webhook_with_memory(base_env, pinned)


def _say(service, standin, text):
    return reply_messages(service, standin, text_event(text, user_id=USER_A))


def _plain(words: str) -> str:
    return JARGON.sub("", words.replace("LINE", ""))


def test_consent_card_tapped_twice_says_nothing_changed_without_jargon(service, line_standin):
    card = _say(service, line_standin, "以後都找蔬食，幫我記住")
    data = postbacks(card)["同意記住"]
    reply_messages(service, line_standin, postback_event(data, user_id=USER_A))
    again = all_text(reply_messages(service, line_standin, postback_event(data, user_id=USER_A)))
    assert "不會重複保存" in again and "沒有改變" in again
    assert _plain(again) == again.replace("LINE", ""), again


@pytest.mark.parametrize("text", ["以後不用記了，刪掉", "你們會記錄我打的字嗎", "你們會存我的個資嗎 花壇有素食嗎"])
def test_privacy_answers_say_who_deletes_what_and_when(service, line_standin, text):
    words = all_text(_say(service, line_standin, text))
    assert "你打的字" not in words and "我回覆" in words
    assert "其他細節" not in words  # the privacy question is answered, not said as unrecorded
    assert _plain(words) == words.replace("LINE", ""), words


@pytest.mark.parametrize("text, said", [("田尾有什麼好玩的", "田尾鄉近期"), ("彰化市有什麼活動", "彰化市近期"),
                                        ("員林有活動嗎", "員林市近期")])
def test_events_without_a_date_say_recent_not_every_date(service, line_standin, text, said):
    words = all_text(_say(service, line_standin, text))
    assert said in words and "所有日期" not in words and "今天起" not in words
