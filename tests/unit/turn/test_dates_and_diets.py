"""The date reader (holidays from the Taiwan calendar, Chinese numerals, nearest day) and the one
diet-label table."""
from __future__ import annotations

from datetime import date

import holidays
import pytest

from shared.diets import DIET_LABELS, diet_label
from shared.memory.cards import remember_phrase
from shared.replies.places import render_places
from shared.text import reading_form
from shared.turn import dates
from shared.turn.dates import read_date
from shared.turn.datespec import (
    DayOfMonth,
    Holiday,
    Month,
    MonthDay,
    Range,
    Unreadable,
    UnreadableDate,
    Week,
    date_arg,
)
from shared.turn.router import read_diet
from tests.unit.turn.date_support import NOT_READ, asked, span

TODAY = date(2026, 12, 1)


def test_dates_lunar_new_year_comes_from_the_holidays_calendar_block():
    start, end = read_date("過年").resolve(TODAY)
    calendar = holidays.country_holidays("TW", years=2027, language="zh_TW")
    assert calendar.get(start) and "除夕" in calendar.get(start)
    assert all(calendar.get(day) for day in (start, end.fromordinal(end.toordinal() - 1)))
    assert start.year == 2027 and (end - start).days >= 5


@pytest.mark.parametrize("text, expected", [
    ("十二月五號", date(2026, 12, 5)), ("二零二六年十二月十二日", date(2026, 12, 12)), ("一月九號", date(2027, 1, 9)),
    ("十一月二十二日", date(2026, 11, 22)), ("民國115年12月19日", date(2026, 12, 19)),
])
def test_dates_chinese_numerals_and_roc_years_are_read(text, expected):
    assert asked(text, TODAY) == span(expected)


@pytest.mark.parametrize("text", ["下下下週三", "12/1/3", "上上個月3號", "上上上個週末"])
def test_dates_a_named_date_that_is_not_read_is_unreadable_never_none(text):
    assert asked(text, TODAY) == NOT_READ
    with pytest.raises(UnreadableDate):
        Unreadable().resolve(TODAY)


@pytest.mark.parametrize("text", ["04-7284398", "兩碗帶走", "3個月", "8:30集合", "拜拜"])
def test_dates_phone_numbers_counts_and_times_are_not_dates(text):
    assert read_date(reading_form(text)) is None


@pytest.mark.parametrize("spec, expected", [
    (MonthDay(11, 22), (date(2026, 11, 22), date(2026, 11, 23))),   # 9 days ago beats 356 days ahead
    (Month(11), (date(2026, 11, 1), date(2026, 12, 1))),
    (Month(1), (date(2027, 1, 1), date(2027, 2, 1))),
    (DayOfMonth(5), (date(2026, 12, 5), date(2026, 12, 6))),
    (Week(-1), (date(2026, 11, 23), date(2026, 11, 30))),
    (Range(MonthDay(12, 30), MonthDay(1, 2)), (date(2026, 12, 30), date(2027, 1, 3))),  # across the year end
])
def test_dates_values_resolve_to_the_nearest_range(spec, expected):
    assert spec.resolve(TODAY) == expected


@pytest.mark.parametrize("spec", [MonthDay(12, 32), MonthDay(2, 30), Month(13), Holiday("不存在的節日"),
                                  date_arg("weekday:x")])
def test_dates_impossible_values_raise_unreadable_date(spec):
    with pytest.raises(UnreadableDate):
        spec.resolve(TODAY)


@pytest.mark.parametrize("text, expected", [
    ("VEGAN", ("vegan", None)), ("vegan的店", ("vegan", None)), ("奶蛋素", ("ovo_lacto", None)),
    ("不吃蛋的素", ("lacto", None)), ("五辛素", ("vegetarian", "五辛素")), ("鍋邊素", ("vegetarian", "鍋邊素")),
    ("吃素食", ("vegetarian", None)), ("vegans only", (None, None)),
])
def test_diets_words_residents_use_map_to_one_type(text, expected):
    assert read_diet(text) == expected


def test_diets_one_label_table_is_used_by_place_replies_and_memory_cards():
    assert diet_label("vegetarian") == DIET_LABELS["vegetarian"] == "蔬食"
    assert DIET_LABELS["vegetarian"] in remember_phrase("vegetarian")
    result = {"status": "no_match", "query": {"area": "花壇鄉", "dietary_type": "vegetarian", "keyword": None},
              "catalog_version": "v1", "area_choices": ["花壇鄉"], "places": [], "total": 0}
    [message] = render_places(result)
    assert "花壇鄉、蔬食" in message.text and "素食」" not in message.text


def test_dates_every_taiwan_calendar_name_ends_with_a_listed_character():
    """The calendar is skipped for a text with none of CALENDAR_NAME_ENDS: sound only while every
    name of the vocabulary the reader matches (from the holidays package) ends with one."""
    names = dates._calendar_names()
    assert len(names) > 10 and all(name.endswith(dates.CALENDAR_NAME_ENDS) for name in names), names
    assert asked("植樹節有活動嗎", TODAY) == span(date(2027, 3, 12))
    assert isinstance(asked("農曆除夕", TODAY), tuple) and isinstance(asked("中秋", TODAY), tuple)
