"""DateSpec (shared.turn.datespec): the boundary encoding round-trips, any text is read or refused with
UnreadableDate, every date resolves to days or refuses, and a turn carries dates as DateSpecs."""
from __future__ import annotations

import json
from datetime import date, timedelta
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shared.turn.datespec import (
    Both,
    DateSpec,
    DayOfMonth,
    Days,
    Holiday,
    LongWeekend,
    LunarDate,
    LunarDay,
    LunarMonth,
    Month,
    MonthDay,
    MonthPart,
    NewYearDay,
    Range,
    RelativeDay,
    RelativeMonth,
    Span,
    Unreadable,
    UnreadableDate,
    Week,
    Weekday,
    date_arg,
)
from shared.turn.router import route

CASES = json.loads((Path(__file__).resolve().parents[2] / "eval" / "cases.json").read_text(encoding="utf-8"))
TODAY = date(2026, 12, 1)

_two = st.integers(0, 99)
_relative_day = st.builds(RelativeDay, st.integers(-3, 3))
_relative_month = st.builds(RelativeMonth, st.integers(-1, 1))
_month = st.builds(Month, _two)
_month_day = st.builds(MonthDay, _two, _two, st.none() | st.integers(1000, 9999))
_holiday = st.builds(Holiday, st.sampled_from(["lunar_new_year", "lantern", "mothers_day", "中秋節", "農曆除夕",
                                               "植樹節", "不存在的節日"]))
_one_date = st.one_of(
    _relative_day,
    st.builds(Days, _relative_day, _relative_day),
    st.builds(Week, st.integers(-9, 9), st.booleans()),
    st.builds(Weekday, st.integers(0, 6), st.none() | st.integers(-9, 9)),
    _month_day,
    st.builds(Span, st.dates(), st.dates()),
    _month, _relative_month,
    st.builds(MonthPart, _month | _relative_month, st.sampled_from(["early", "mid", "late"])),
    st.builds(DayOfMonth, _two, st.none() | _relative_month),
    _holiday,
    st.builds(LongWeekend, st.builds(MonthDay, _two, _two) | _holiday),
    st.builds(LunarDate, _two, _two, st.booleans()), st.builds(LunarDay, _two), st.builds(LunarMonth, _two),
    st.builds(NewYearDay, _two),
    st.just(Unreadable()),
)
_any_date = _one_date | st.builds(Both, _one_date, _one_date) | st.builds(Range, _one_date, _one_date)


@settings(max_examples=200, deadline=None)
@given(spec=_any_date)
def test_datespec_encoding_round_trips(spec):
    text = spec.encode()
    assert DateSpec.parse(text) == spec
    assert DateSpec.parse(text).encode() == text


@settings(max_examples=150, deadline=None)
@given(text=st.text(max_size=40) | st.from_regex(r"(md|day|month|both|range|week_offset|holiday|lunar):.{0,20}"))
def test_datespec_parse_reads_the_grammar_or_refuses_with_unreadable_date(text):
    try:
        spec = DateSpec.parse(text)
    except UnreadableDate:
        assert date_arg(text) in (None, Unreadable())  # a postback or model argument: asked again, no crash
        return
    assert DateSpec.parse(spec.encode()) == spec


@settings(max_examples=150, deadline=None)
@given(spec=_any_date, today=st.dates(date(2000, 1, 1), date(2090, 12, 31)))
def test_datespec_resolves_to_calendar_days_or_refuses(spec, today):
    try:
        start, end = spec.resolve(today)
    except UnreadableDate:
        return
    assert start < end
    for first, last in spec.spans(today):
        assert start <= first < last <= end


#: Earlier replies' postbacks and audit records hold these forms; each reads as the canonical one.
@pytest.mark.parametrize("written, canonical", [
    ("weekday:5", "saturday"), ("weekday:6", "sunday"), ("next_weekday:5", "next_saturday"),
    ("week_offset:1/6", "next_sunday"), ("week_offset:0/week", "this_week"), ("week_offset:-1/weekend", "last_weekend"),
    ("mdrange:12-05/12-07", "range:md:12-05|md:12-07"), ("md:1-9", "md:01-09"), (" weekend ", "weekend"),
])
def test_datespec_parse_reads_the_other_forms_as_the_canonical_one(written, canonical):
    assert DateSpec.parse(written) == DateSpec.parse(canonical)
    assert DateSpec.parse(written).encode() == canonical


@pytest.mark.parametrize("written, days", [
    ("weekend", (date(2026, 12, 5), date(2026, 12, 7))),
    ("both:tomorrow|saturday", (date(2026, 12, 2), date(2026, 12, 6))),
    ("range:next_weekday:0|next_weekday:2", (date(2026, 12, 7), date(2026, 12, 10))),
    ("2026-12-05/2026-12-08", (date(2026, 12, 5), date(2026, 12, 8))),
    ("long_weekend:md:01-01", (date(2027, 1, 1), date(2027, 1, 4))),
])
def test_datespec_boundary_encoding_resolves_to_the_days_it_names(written, days):
    assert DateSpec.parse(written).resolve(TODAY) == days


#: Values the encoding cannot write: refused when built, so every DateSpec has an encoding.
_UNENCODABLE = {
    "a fourth day away": lambda: RelativeDay(4), "weekday 7": lambda: Weekday(7),
    "month 100": lambda: MonthDay(100, 1), "year 99": lambda: MonthDay(1, 1, 99),
    "no holiday name": lambda: Holiday(""), "a bar in a name": lambda: Holiday("a|b"),
    "two months away": lambda: RelativeMonth(2), "a month part 'end'": lambda: MonthPart(Month(1), "end"),  # type: ignore[arg-type]
    "two dates inside two": lambda: Both(Both(RelativeDay(0), RelativeDay(1)), RelativeDay(2)),
    "a range inside a range": lambda: Range(RelativeDay(0), Range(RelativeDay(1), RelativeDay(2))),
}


@pytest.mark.parametrize("build", _UNENCODABLE.values(), ids=_UNENCODABLE.keys())
def test_datespec_without_an_encoding_is_refused_when_built(build):
    with pytest.raises(ValueError):
        build()


def test_datespec_two_dates_apart_are_named_apart():
    both = Both(RelativeDay(1), Weekday(5))
    assert both.spans(TODAY) == ((date(2026, 12, 2), date(2026, 12, 3)), (date(2026, 12, 5), date(2026, 12, 6)))
    assert both.resolve(TODAY) == (date(2026, 12, 2), date(2026, 12, 6))
    assert Range(Weekday(4), Weekday(0)).spans(TODAY) == ((date(2026, 12, 4), date(2026, 12, 8)),)


@pytest.mark.parametrize("case", [case for case in CASES if case["expect"].get("handled_by", "router") == "router"],
                         ids=lambda case: case["id"])
def test_router_carries_dates_as_datespecs_never_as_text(case):
    args = route(case["input"]).args
    date_value = args.get("date")
    assert date_value is None or isinstance(date_value, DateSpec)
    for name, value in args.items():
        if isinstance(value, str):
            with pytest.raises(UnreadableDate):  # no argument is a date written in the boundary encoding
                DateSpec.parse(value)
        assert not isinstance(value, DateSpec) or name == "date"


def test_span_ending_on_its_start_is_refused():
    with pytest.raises(UnreadableDate):
        Span(TODAY, TODAY).resolve(TODAY)
    assert Span(TODAY, TODAY + timedelta(days=1)).resolve(date(1999, 1, 1)) == (TODAY, TODAY + timedelta(days=1))
