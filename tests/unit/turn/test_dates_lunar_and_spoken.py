"""Lunar dates and spoken day words, each as a kind (shared.turn.dates through the router and engine).

1. a lunar date (農曆 / 舊曆 / 陰曆 + month + day, 初一 / 十五, 臘月, 正月) is converted with ``lunardate``,
   or it is unreadable: never its solar reading;
2. Taiwanese and colloquial day words (今仔日, 明仔載, 後日, 昨昏, 後禮拜, 拜六 …) are read; a word that
   looks like a date and is not read is ``unreadable``, never "all dates";
13. weekdays in Arabic or full-width digits (禮拜6, 週6, 星期6, 周６) and 禮拜天 / 禮拜日 / 星期天 are read;
minor: every weekday spelling works with 這 / 下 / 下下 / 上 / 上上;
and the new words joined to another date are both searched (the pair rule of test_router_joined_asks.py).

Today is Tuesday 2026-12-01 (Asia/Taipei) unless a test says otherwise; the clock is injected.
"""
from __future__ import annotations

import time
from datetime import date, datetime, timedelta, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lunardate import LunarDate as LunarLibraryDate

from shared.config import Settings
from shared.context import EventContext
from shared.identity import Actor
from shared.turn.datespec import DateSpec, LunarDate, NewYearDay, UnreadableDate, date_arg
from shared.turn.engine import resolve_date
from shared.turn.router import date_in, route
from tests.unit.turn.date_support import NOT_READ, asked, span

TODAY = date(2026, 12, 1)
MONDAY = date(2026, 11, 30)
ACTOR = Actor("test-tenant", "U7a1e5b0c2d3f4a5b6c7d8e9f0a1b2c3d")
_NUMERALS = ["", "一", "二", "三", "四", "五", "六", "七", "八", "九", "十"]


def read(text: str) -> DateSpec | None:
    return date_in(text)


def day_of(text: str, today: date = TODAY) -> date:
    days = asked(text, today)
    assert isinstance(days, tuple) and days[1] == days[0] + timedelta(days=1), (text, days)
    return days[0]


def chinese(number: int) -> str:
    """1 → 一, 11 → 十一, 20 → 二十, 25 → 二十五 (the way a lunar month or day is written)."""
    tens, ones = divmod(number, 10)
    return (("" if tens == 1 else _NUMERALS[tens]) + "十" if tens else "") + _NUMERALS[ones]


def lunar_day_word(day: int) -> str:
    return f"初{_NUMERALS[day]}" if day <= 10 else chinese(day)


def ctx_at(now: datetime) -> EventContext:
    settings_ = Settings.from_env({"LOCAL_TENANT_ID": "test-tenant"})
    return EventContext(settings_, None, None, now, ACTOR, "01TRIAL4DATES000000000000", time.monotonic() + 1.8)


# --- 1. lunar dates ----------------------------------------------------------------------------------

@pytest.mark.parametrize("text, day", [
    ("農曆十一月十五 員林有活動嗎", date(2026, 12, 23)),   # the reported example
    ("農曆11月15日鹿港", date(2026, 12, 23)),
    ("農曆11/15", date(2026, 12, 23)),
    ("舊曆十二月初八", date(2027, 1, 15)),
    ("臘月初八鹿港有什麼活動", date(2027, 1, 15)),
    ("十二月初八 花壇", date(2027, 1, 15)),             # X月初N is a lunar day
    ("陰曆正月十五", date(2027, 2, 20)),
    ("正月十五員林", date(2027, 2, 20)),
    ("农历十一月廿三", date(2026, 12, 31)),              # Simplified, 廿 = 20
    ("農曆十月二十", date(2026, 11, 28)),                # nearest: five days ago, shown as past
])
def test_dates_lunar_date_is_converted_by_the_lunar_calendar(text, day):
    assert day_of(text) == day


@pytest.mark.parametrize("text, day", [
    ("農曆初一 鹿港有活動嗎", date(2026, 12, 9)),    # the coming lunar 1st
    ("農曆十五", date(2026, 12, 23)),
    ("舊曆廿三號", date(2026, 12, 1)),               # today is lunar 10/23: today counts
])
def test_dates_lunar_day_without_a_month_is_the_coming_one(text, day):
    assert day_of(text) == day
    assert day_of(text, day + timedelta(days=1)) > day + timedelta(days=27)  # the day after: the next lunar month's


@pytest.mark.parametrize("text", ["尾牙", "冬至有活動嗎", "七夕", "農曆七夕", "重陽節"])
def test_dates_lunar_festivals_local_does_not_compute_stay_unreadable(text):
    assert asked(text, TODAY) == NOT_READ


def test_dates_lunar_month_alone_is_that_whole_lunar_month():
    assert asked("陰曆十二月員林有什麼活動", TODAY) == (date(2027, 1, 8), date(2027, 2, 6))


def test_dates_lunar_leap_month_is_read_only_where_a_year_has_it():
    assert asked("農曆閏六月初一", TODAY) == span(date(2025, 7, 25))  # lunar 2025 had a leap 6th month
    with pytest.raises(UnreadableDate):
        LunarDate(2, 1, leap=True).resolve(TODAY)  # no leap 2nd month in lunar 2025-2027


@pytest.mark.parametrize("text", ["農曆那幾天花壇有活動嗎", "舊曆的日子有活動嗎", "陰曆十三月初一", "農曆七月底"])
def test_dates_lunar_prefix_that_is_not_read_is_unreadable_never_solar(text):
    assert asked(text, TODAY) == NOT_READ


@pytest.mark.parametrize("text, value", [
    ("農曆新年鹿港有活動嗎", (date(2027, 2, 4), date(2027, 2, 11))), ("農曆除夕", (date(2027, 2, 4), date(2027, 2, 6))),
    ("初一十五吃素", None), ("農曆初一十五吃素 花壇", None),           # a diet, not a date
])
def test_dates_lunar_holidays_and_the_diet_keep_their_reading(text, value):
    assert asked(text, TODAY) == value


@settings(max_examples=150, deadline=None)
@given(month=st.integers(1, 12), day=st.integers(1, 30), prefix=st.sampled_from(["農曆", "舊曆", "陰曆"]),
       digits=st.booleans())
def test_dates_any_prefixed_lunar_date_is_that_lunar_day_or_unreadable(month, day, prefix, digits):
    text = f"{prefix}{month}月{day}日" if digits else f"{prefix}{chinese(month)}月{lunar_day_word(day)}"
    days = asked(text, TODAY)
    if days == NOT_READ:  # only a 30th that no nearby lunar year's month has
        this_year = LunarLibraryDate.from_solar_date(TODAY.year, TODAY.month, TODAY.day).year
        assert day == 30
        for year in (this_year - 1, this_year, this_year + 1):
            with pytest.raises(ValueError):
                LunarLibraryDate(year, month, day).to_solar_date()
        return
    assert isinstance(days, tuple) and days[1] == days[0] + timedelta(days=1)
    found = LunarLibraryDate.from_solar_date(days[0].year, days[0].month, days[0].day)
    assert (found.month, found.day, found.is_leap_month) == (month, day, False)


@pytest.mark.parametrize("today", [date(2026, 12, 1), date(2027, 6, 1), date(2028, 12, 31), date(2030, 3, 1)])
def test_dates_lunar_new_years_day_agrees_with_the_holidays_calendar(today):
    # two maintained calendars agree: lunardate's 1/1 is the holidays package's first 春節 day
    assert LunarDate(1, 1).resolve(today) == NewYearDay(1).resolve(today)


def test_router_lunar_date_next_to_a_township_is_an_events_search():
    proposal = route("農曆十一月十五 員林有活動嗎")
    assert (proposal.tool, proposal.args["area"]) == ("search_local_events", "員林市")
    assert proposal.args["date"].resolve(TODAY) == span(date(2026, 12, 23))


# --- 2. Taiwanese and colloquial day words -----------------------------------------------------------

@pytest.mark.parametrize("text, value", [
    ("今仔日彰化市有啥物活動", span(date(2026, 12, 1))), ("今日有啥活動", span(date(2026, 12, 1))), ("今暗鹿港", span(date(2026, 12, 1))),
    ("明仔載鹿港有活動無", span(date(2026, 12, 2))), ("明仔再員林", span(date(2026, 12, 2))), ("明仔暗", span(date(2026, 12, 2))),
    ("後日員林有啥物活動", span(date(2026, 12, 3))), ("落後日花壇", span(date(2026, 12, 4))),
    ("昨昏花壇有啥活動", span(date(2026, 11, 30))), ("昨暝", span(date(2026, 11, 30))), ("前日彰化市", span(date(2026, 11, 29))),
    ("這禮拜花壇", (date(2026, 11, 30), date(2026, 12, 7))), ("後禮拜鹿港有啥物活動", (date(2026, 12, 7), date(2026, 12, 14))),
    ("頂禮拜彰化市", (date(2026, 11, 23), date(2026, 11, 30))),
    ("下禮拜員林", (date(2026, 12, 7), date(2026, 12, 14))), ("禮拜日員林", span(date(2026, 12, 6))),
    ("禮拜天員林", span(date(2026, 12, 6))), ("拜六彰化市有活動無", span(date(2026, 12, 5))),
    ("頂禮拜六", span(date(2026, 11, 28))), ("後禮拜三員林", span(date(2026, 12, 9))),
    ("月尾鹿港", (date(2026, 12, 21), date(2027, 1, 1))),
    ("要去禮拜六的市集", span(date(2026, 12, 5))), ("做禮拜天的活動", span(date(2026, 12, 6))),
    ("12月初一起去鹿港", (date(2026, 12, 1), date(2026, 12, 11))),
    ("假日鹿港有活動嗎", (date(2026, 12, 5), date(2026, 12, 7))), ("元月有活動嗎", (date(2027, 1, 1), date(2027, 2, 1))),
    ("今明兩天彰化市", (date(2026, 12, 1), date(2026, 12, 3))),
    ("這兩天有活動嗎", (date(2026, 12, 1), date(2026, 12, 3))), ("明後天員林", (date(2026, 12, 2), date(2026, 12, 4))),
])
def test_dates_taiwanese_and_colloquial_day_words_are_read(text, value):
    assert asked(text, TODAY) == value


@pytest.mark.parametrize("text", [
    "禮拜堂在哪", "今日頭條", "明日之星", "昨日重現", "做禮拜", "主日禮拜幾點", "最後日期", "報名截止日期",
    "一週3次", "週休2日", "每週5天", "去禮拜堂做禮拜", "星期五餐廳", "山頂", "之後", "日後再說", "拜拜", "國定假日", "一週8小時",
])
def test_dates_words_that_contain_a_day_word_are_not_dates(text):
    assert read(text) is None


@pytest.mark.parametrize("text", ["大大後天花壇有活動嗎", "下下下週三", "上上上個週末", "大大前天", "這幾天鹿港有活動嗎",
                                  "過幾天花壇有活動嗎", "年後有活動嗎", "禮拜8有活動嗎", "下半月員林"])
def test_dates_day_words_not_read_are_unreadable_never_all_dates(text):
    assert asked(text, TODAY) == NOT_READ


@pytest.mark.parametrize("now, expected", [
    (datetime(2026, 12, 1, 15, 59, 59, tzinfo=timezone.utc), "2026-12-01/2026-12-02"),  # 23:59:59 Taipei
    (datetime(2026, 12, 1, 16, 0, 0, tzinfo=timezone.utc), "2026-12-02/2026-12-03"),    # 00:00:00 Taipei
])
def test_resolve_date_taiwanese_today_turns_at_taipei_midnight(now, expected):
    assert resolve_date(read("今仔日彰化市有啥物活動"), ctx_at(now)) == expected


@pytest.mark.parametrize("now, expected", [
    (datetime(2026, 12, 8, 15, 59, 59, tzinfo=timezone.utc), "2026-12-09/2026-12-10"),  # 12/8 23:59:59: tomorrow
    (datetime(2026, 12, 8, 16, 0, 0, tzinfo=timezone.utc), "2026-12-09/2026-12-10"),    # 12/9 00:00: today counts
    (datetime(2026, 12, 9, 16, 0, 0, tzinfo=timezone.utc), "2027-01-08/2027-01-09"),    # 12/10 00:00: the next one
])
def test_resolve_date_coming_lunar_first_turns_at_taipei_midnight(now, expected):
    assert resolve_date(read("農曆初一"), ctx_at(now)) == expected


# --- 13. weekdays in digits, and minor: every weekday spelling with every prefix ---------------------

@pytest.mark.parametrize("text", ["鹿港 禮拜6 下午有什麼", "週６彰化市", "星期6員林", "周6 花壇", "礼拜6"])
def test_dates_weekday_in_digits_is_read(text):
    assert day_of(text) == date(2026, 12, 5)
    assert day_of(text, date(2026, 12, 6)) == date(2026, 12, 12)  # on a Sunday: the coming Saturday


def test_router_weekday_in_digits_next_to_a_township_is_an_events_search():
    proposal = route("鹿港 禮拜6 下午有什麼")
    assert (proposal.tool, proposal.args["area"]) == ("search_local_events", "鹿港鎮")
    assert proposal.args["date"].resolve(TODAY) == span(date(2026, 12, 5))


_WEEKDAY_WORDS = [(word, index) for index, word in enumerate("一二三四五六")] + [("日", 6), ("天", 6)] + \
                 [(str(index + 1), index) for index in range(7)]
_PREFIXES = [("這", 0), ("這個", 0), ("下", 1), ("下個", 1), ("下下", 2), ("下下個", 2), ("上", -1), ("上上", -2)]


@pytest.mark.parametrize("prefix, weeks", _PREFIXES)
@pytest.mark.parametrize("week", ["週", "周", "禮拜", "星期"])
def test_dates_every_weekday_spelling_works_with_every_prefix(prefix, weeks, week):
    for word, weekday in _WEEKDAY_WORDS:
        if word == "天" and week in ("週", "周"):
            continue  # 週天 is not written
        text = f"{prefix}{week}{word}花壇有活動嗎"
        assert day_of(text) == MONDAY + timedelta(days=7 * weeks + weekday), text


@pytest.mark.parametrize("text, start, end", [
    ("下下週末", date(2026, 12, 19), date(2026, 12, 21)), ("下下禮拜", date(2026, 12, 14), date(2026, 12, 21)),
    ("上上週", date(2026, 11, 16), date(2026, 11, 23)),
])
def test_dates_week_after_next_and_before_last_are_read(text, start, end):
    assert asked(text, TODAY) == (start, end)


@pytest.mark.parametrize("value", ["week_offset:x/6", "week_offset:2/7", "week_offset:2/month", "lunar:13-01",
                                   "lunar:xx", "lunar_day:31", "days:today", "days:days:today/tomorrow/today"])
def test_resolve_tampered_postback_dates_are_unreadable(value):
    spec = date_arg(value)  # a postback's date, read at the boundary
    assert spec is not None
    with pytest.raises(UnreadableDate):
        spec.resolve(TODAY)


# --- the new words joined to another date (the pair rule) ------------------------------

@pytest.mark.parametrize("text, start, end", [
    ("禮拜6跟禮拜天 彰化市有活動嗎", date(2026, 12, 5), date(2026, 12, 7)),
    ("今仔日和明仔載員林有活動嗎", date(2026, 12, 1), date(2026, 12, 3)),
    ("下下禮拜六或下下禮拜天鹿港", date(2026, 12, 19), date(2026, 12, 21)),
    ("農曆十一月十五跟聖誕節", date(2026, 12, 23), date(2026, 12, 26)),
    ("落後日跟後日", date(2026, 12, 3), date(2026, 12, 5)),
])
def test_dates_new_words_joined_to_another_date_cover_both(text, start, end):
    assert asked(text, TODAY) == (start, end)
