"""DateSpec (shared.turn.datespec): the boundary encoding round-trips, any text is read or refused with
UnreadableDate, every date resolves to days or refuses, and a turn carries dates as DateSpecs."""
from __future__ import annotations

from datetime import date, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shared.turn import datespec as ds
from shared.turn.router import route
from tools.eval import DEFAULT_CASES, load_cases

CASES = load_cases(DEFAULT_CASES)
TODAY = date(2026, 12, 1)

_two = st.integers(0, 99)
_relative_day = st.builds(ds.RelativeDay, st.integers(-3, 3))
_relative_month = st.builds(ds.RelativeMonth, st.integers(-1, 1))
_month = st.builds(ds.Month, _two)
_month_day = st.builds(ds.MonthDay, _two, _two, st.none() | st.integers(1000, 9999))
_holiday = st.builds(ds.Holiday, st.sampled_from(["lunar_new_year", "lantern", "mothers_day", "中秋節", "農曆除夕",
                                               "植樹節", "不存在的節日"]))
_one_date = st.one_of(
    _relative_day,
    st.builds(ds.Days, _relative_day, _relative_day),
    st.builds(ds.Week, st.integers(-9, 9), st.booleans()),
    st.builds(ds.Weekday, st.integers(0, 6), st.none() | st.integers(-9, 9)),
    _month_day,
    st.builds(ds.Span, st.dates(), st.dates()),
    _month, _relative_month,
    st.builds(ds.MonthPart, _month | _relative_month, st.sampled_from(["early", "mid", "late"])),
    st.builds(ds.DayOfMonth, _two, st.none() | _relative_month),
    _holiday,
    st.builds(ds.LongWeekend, st.builds(ds.MonthDay, _two, _two) | _holiday),
    st.builds(ds.LunarDate, _two, _two, st.booleans()), st.builds(ds.LunarDay, _two), st.builds(ds.LunarMonth, _two),
    st.builds(ds.NewYearDay, _two),
    st.just(ds.Unreadable()),
)
_any_date = _one_date | st.builds(ds.Both, _one_date, _one_date) | st.builds(ds.Range, _one_date, _one_date)


@settings(max_examples=200, deadline=None)
@given(spec=_any_date)
def test_datespec_encoding_round_trips(spec):
    text = spec.encode()
    assert ds.DateSpec.parse(text) == spec
    assert ds.DateSpec.parse(text).encode() == text


@settings(max_examples=150, deadline=None)
@given(text=st.text(max_size=40) | st.from_regex(r"(md|day|month|both|range|week_offset|holiday|lunar):.{0,20}"))
def test_datespec_parse_reads_the_grammar_or_refuses_with_unreadable_date(text):
    try:
        spec = ds.DateSpec.parse(text)
    except ds.UnreadableDate:
        assert ds.date_arg(text) in (None, ds.Unreadable())  # a postback or model argument: asked again, no crash
        return
    assert ds.DateSpec.parse(spec.encode()) == spec


@settings(max_examples=150, deadline=None)
@given(spec=_any_date, today=st.dates(date(2000, 1, 1), date(2090, 12, 31)))
def test_datespec_resolves_to_calendar_days_or_refuses(spec, today):
    try:
        start, end = spec.resolve(today)
    except ds.UnreadableDate:
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
    assert ds.DateSpec.parse(written) == ds.DateSpec.parse(canonical)
    assert ds.DateSpec.parse(written).encode() == canonical


@pytest.mark.parametrize("written, first, days", [
    ("weekend", date(2026, 12, 5), 2), ("both:tomorrow|saturday", date(2026, 12, 2), 4),
    ("range:next_weekday:0|next_weekday:2", date(2026, 12, 7), 3), ("2026-12-05/2026-12-08", date(2026, 12, 5), 3),
    ("long_weekend:md:01-01", date(2027, 1, 1), 3),
])
def test_datespec_boundary_encoding_resolves_to_the_days_it_names(written, first, days):
    assert ds.DateSpec.parse(written).resolve(TODAY) == (first, first + timedelta(days=days))


#: Values the encoding cannot write: refused when built, so every ds.DateSpec has an encoding.
_UNENCODABLE = {
    "a fourth day away": lambda: ds.RelativeDay(4), "weekday 7": lambda: ds.Weekday(7),
    "month 100": lambda: ds.MonthDay(100, 1), "year 99": lambda: ds.MonthDay(1, 1, 99),
    "no holiday name": lambda: ds.Holiday(""), "a bar in a name": lambda: ds.Holiday("a|b"),
    "two months away": lambda: ds.RelativeMonth(2), "a month part 'end'": lambda: ds.MonthPart(ds.Month(1), "end"),  # type: ignore[arg-type]
    "two dates inside two": lambda: ds.Both(ds.Both(ds.RelativeDay(0), ds.RelativeDay(1)), ds.RelativeDay(2)),
    "a range inside a range": lambda: ds.Range(ds.RelativeDay(0), ds.Range(ds.RelativeDay(1), ds.RelativeDay(2))),
}


@pytest.mark.parametrize("build", _UNENCODABLE.values(), ids=_UNENCODABLE.keys())
def test_datespec_without_an_encoding_is_refused_when_built(build):
    with pytest.raises(ValueError):
        build()


def test_datespec_two_dates_apart_are_named_apart():
    both = ds.Both(ds.RelativeDay(1), ds.Weekday(5))
    assert both.spans(TODAY) == ((date(2026, 12, 2), date(2026, 12, 3)), (date(2026, 12, 5), date(2026, 12, 6)))
    assert both.resolve(TODAY) == (date(2026, 12, 2), date(2026, 12, 6))
    assert ds.Range(ds.Weekday(4), ds.Weekday(0)).spans(TODAY) == ((date(2026, 12, 4), date(2026, 12, 8)),)


@pytest.mark.parametrize("case", [case for case in CASES if not case["input"].startswith("（")],
                         ids=lambda case: case["id"])
def test_router_carries_dates_as_datespecs_never_as_text(case):
    args = route(case["input"]).args
    date_value = args.get("date")
    assert date_value is None or isinstance(date_value, ds.DateSpec)
    for name, value in args.items():
        if isinstance(value, str):
            with pytest.raises(ds.UnreadableDate):  # no argument is a date written in the boundary encoding
                ds.DateSpec.parse(value)
        assert not isinstance(value, ds.DateSpec) or name == "date"


def test_span_ending_on_its_start_is_refused():
    with pytest.raises(ds.UnreadableDate):
        ds.Span(TODAY, TODAY).resolve(TODAY)
    assert ds.Span(TODAY, TODAY + timedelta(days=1)).resolve(date(1999, 1, 1)) == (TODAY, TODAY + timedelta(days=1))
