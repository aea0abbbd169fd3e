"""read_date reads a time word whole, never out of a longer phrase that merely contains it: 一下, 早上,
馬上 … are words of their own (shared.turn.dates.WHOLE_WORDS), 下下個月 is not 下個月. Today is Tuesday
2026-12-01 (Asia/Taipei). The resident-facing replies are tests/integration/functions/test_whole_words_http.py."""
from __future__ import annotations

from datetime import date

import pytest

from shared.turn.ask import Unasked
from shared.turn.router import route
from tests.unit.turn.date_support import NOT_READ, asked, span

TODAY = date(2026, 12, 1)
THIS_WEEKEND, NEXT_WEEKEND = span(date(2026, 12, 5), 2), span(date(2026, 12, 12), 2)


@pytest.mark.parametrize("text, days", [
    ("想確認一下星期六花壇有沒有市集", span(date(2026, 12, 5))),  # this Saturday, not 下星期六
    ("看一下禮拜天有什麼活動", span(date(2026, 12, 6))),
    ("等一下週末有活動嗎", THIS_WEEKEND),
    ("請問一下周日員林有市集嗎", span(date(2026, 12, 6))),
    ("看一下 星期六", span(date(2026, 12, 5))),  # a space between changes nothing
    ("看一下下禮拜有活動嗎", span(date(2026, 12, 7), 7)),  # 一下, then 下禮拜: next week
    ("說一下下下禮拜", span(date(2026, 12, 14), 7)),  # 一下, then 下下禮拜: the week after next
    ("一下下週末", NEXT_WEEKEND),
    ("確認一下下個月初", (date(2027, 1, 1), date(2027, 1, 11))),
    ("查一下上禮拜的活動", span(date(2026, 11, 23), 7)),  # 一下, then 上禮拜: last week, not every date
    ("查一下上個月22號彰化市的活動", span(date(2026, 11, 22))),
    ("馬上週末了 鹿港有什麼活動", THIS_WEEKEND),  # 馬上 is a word: not 上週末
    ("早上禮拜天有活動嗎", span(date(2026, 12, 6))),
    ("晚上週六有活動嗎", span(date(2026, 12, 5))),
    ("線上週末有活動嗎", THIS_WEEKEND),
    ("樓下星期六有市集", span(date(2026, 12, 5))),
])
def test_read_date_filler_and_time_words_keep_their_shang_and_xia(text, days):
    assert asked(text, TODAY) == days


@pytest.mark.parametrize("text", ["問一下個月有什麼活動", "看一下個禮拜六", "下下個月有活動嗎", "上上個月的活動", "下下月"])
def test_read_date_month_or_week_said_without_which_is_unreadable(text):
    assert asked(text, TODAY) == NOT_READ  # asked again with choices, never this one or next


@pytest.mark.parametrize("whole, whole_days, name, name_days", [
    # a 上 / 下 that may end a name stays a prefix: the name is read first, as before
    ("看一下週末有活動嗎", THIS_WEEKEND, "花壇鄉下週末有活動嗎", NEXT_WEEKEND),
    ("馬上週末了", THIS_WEEKEND, "鹿港鎮上週末有活動嗎", span(date(2026, 11, 28), 2)),
    # 一 that ends a weekday or a lunar day is no 一下
    ("看一下週三有活動嗎", span(date(2026, 12, 2)), "禮拜一下週三有活動嗎", (date(2026, 12, 7), date(2026, 12, 10))),
    ("問一下個月", NOT_READ, "農曆初一下個月有活動嗎", span(date(2026, 12, 9))),  # the coming lunar 1st, as before
])
def test_read_date_a_name_or_a_weekday_keeps_its_prefix(whole, whole_days, name, name_days):
    assert (asked(whole, TODAY), asked(name, TODAY)) == (whole_days, name_days)


def test_router_question_words_beside_a_filler_are_no_unasked_detail():
    proposal = route("想確認一下星期六花壇有沒有市集")
    assert (proposal.tool, proposal.args["area"], proposal.args["keyword"]) == ("search_local_events", "花壇鄉", "市集")
    assert proposal.args["date"].resolve(TODAY) == span(date(2026, 12, 5))
    assert not [note for note in proposal.notes if isinstance(note, Unasked)]
