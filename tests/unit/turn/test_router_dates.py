"""Date phrases: the router reads them as clock-free keywords, the engine resolves them to
Asia/Taipei ranges (end exclusive) with the turn's clock.

Today in these tests is Monday 2026-11-30 12:00 Asia/Taipei unless a case says otherwise.
"""
from __future__ import annotations

import json
import time
from datetime import date, datetime, timedelta, timezone

import pytest

from shared.audit import COLLECTION as AUDIT
from shared.config import Settings
from shared.context import EventContext
from shared.events.search import DEFAULT_SNAPSHOT_PATH, InvalidDateRange, parse_date_range
from shared.identity import Actor
from shared.store.memory import MemoryStore
from shared.turn.datespec import DateSpec, RelativeDay, RelativeMonth, UnreadableDate, Week, Weekday, date_arg
from shared.turn.engine import resolve_date, run_text_turn
from shared.turn.router import date_in, route
from tests.conftest import all_text, line_body, replies_to, sign, text_event

TAIPEI_NOON_MONDAY = datetime(2026, 11, 30, 4, 0, tzinfo=timezone.utc)  # 2026-11-30 12:00 Asia/Taipei
SATURDAY_LAST_SECOND = datetime(2026, 12, 5, 15, 59, 59, tzinfo=timezone.utc)  # Sat 12/5 23:59:59 Taipei
SUNDAY_FIRST_SECOND = datetime(2026, 12, 5, 16, 0, 0, tzinfo=timezone.utc)  # Sun 12/6 00:00:00 Taipei
ACTOR = Actor("test-tenant", "U7a1e5b0c2d3f4a5b6c7d8e9f0a1b2c3d")
_EVENT_IDS = iter(range(10**6))


def ctx_at(now: datetime, store=None) -> EventContext:
    settings = Settings.from_env({"LOCAL_TENANT_ID": "test-tenant"})
    return EventContext(settings, store, None, now, ACTOR, f"01DATE{next(_EVENT_IDS):020d}", time.monotonic() + 1.8)


def days(start: date, count: int = 1) -> str:
    return f"{start.isoformat()}/{(start + timedelta(days=count)).isoformat()}"


def range_for(text: str, now: datetime = TAIPEI_NOON_MONDAY) -> str | None:
    return resolve_date(date_in(text), ctx_at(now))


def demo_events() -> list[dict]:
    return json.loads(DEFAULT_SNAPSHOT_PATH.read_text(encoding="utf-8"))["events"]


# --- the reported phrases, at Monday 2026-11-30 12:00 Asia/Taipei -----------------------------

@pytest.mark.parametrize("text, area, expected", [
    ("下週末員林有活動嗎", "員林市", days(date(2026, 12, 12), 2)),
    ("下週末有什麼活動", None, days(date(2026, 12, 12), 2)),
    ("下禮拜六有什麼活動", None, days(date(2026, 12, 12))),
    ("12月12日有什麼活動", None, days(date(2026, 12, 12))),
    ("12/12有活動嗎", None, days(date(2026, 12, 12))),
    ("12月12號有活動嗎", None, days(date(2026, 12, 12))),
    ("這個月有什麼活動", None, "2026-11-01/2026-12-01"),
    ("週六鹿港有活動嗎", "鹿港鎮", days(date(2026, 12, 5))),
    ("週日有活動嗎", None, days(date(2026, 12, 6))),
    ("星期日有什麼活動", None, days(date(2026, 12, 6))),
    ("禮拜天有活動嗎", None, days(date(2026, 12, 6))),
    ("禮拜日的市集", None, days(date(2026, 12, 6))),
])
def test_router_dates_reported_phrases_search_the_asked_days(text, area, expected):
    proposal = route(text)
    assert proposal.tool == "search_local_events"
    assert proposal.args["area"] == area
    assert resolve_date(proposal.args["date"], ctx_at(TAIPEI_NOON_MONDAY)) == expected


def test_router_dates_written_date_alone_searches_events_that_day():
    proposal = route("12月12號")
    assert proposal.tool == "search_local_events" and proposal.args["area"] is None
    assert resolve_date(proposal.args["date"], ctx_at(TAIPEI_NOON_MONDAY)) == days(date(2026, 12, 12))


@pytest.mark.parametrize("text, expected", [
    ("下個月有什麼活動", "2026-12-01/2027-01-01"),
    ("下星期天有活動嗎", days(date(2026, 12, 13))),
    ("下週日有活動嗎", days(date(2026, 12, 13))),
    ("下個週末有活動嗎", days(date(2026, 12, 12), 2)),
    ("週六日有什麼活動", days(date(2026, 12, 5), 2)),
    ("１２／１２有活動嗎", days(date(2026, 12, 12))),  # full-width digits from a phone keyboard
    ("民國115年12月12日有活動嗎", days(date(2026, 12, 12))),
    ("2027/1/9有活動嗎", days(date(2027, 1, 9))),
])
def test_router_dates_other_supported_phrases_resolve(text, expected):
    result = range_for(text)
    assert parse_date_range(result) == parse_date_range(expected)


@pytest.mark.parametrize("text, expected", [
    ("今天有什麼活動", days(date(2026, 11, 30))),
    ("今日活動", days(date(2026, 11, 30))),
    ("明天有活動嗎", days(date(2026, 12, 1))),
    ("這週末彰化市有什麼活動？", days(date(2026, 12, 5), 2)),
    ("週末有什麼活動", days(date(2026, 12, 5), 2)),
    ("周末有活動嗎", days(date(2026, 12, 5), 2)),
])
def test_router_dates_existing_phrases_keep_their_ranges(text, expected):
    assert range_for(text) == expected


# --- precedence: the most specific phrase wins -------------------------------------------------

@pytest.mark.parametrize("text, expected", [
    ("下週末有活動嗎", days(date(2026, 12, 12), 2)),
    ("週末有活動嗎", days(date(2026, 12, 5), 2)),
    ("下禮拜六有活動嗎", days(date(2026, 12, 12))),
    ("禮拜六有活動嗎", days(date(2026, 12, 5))),
    ("這個月12月12日有活動嗎", days(date(2026, 12, 12))),
    ("這週末的週六有活動嗎", days(date(2026, 12, 5))),
    ("下週末的週日有活動嗎", days(date(2026, 12, 13))),
    ("這個月週末有活動嗎", days(date(2026, 12, 5), 2)),
    ("這個月有活動嗎", "2026-11-01/2026-12-01"),
])
def test_date_in_most_specific_phrase_wins(text, expected):
    assert range_for(text) == expected


@pytest.mark.parametrize("text", ["12月3場活動", "有什麼活動", "拜拜，有活動嗎", "一星期有幾場活動"])
def test_date_in_counts_and_non_dates_are_not_misread(text):
    assert date_in(text) is None


@pytest.mark.parametrize("text, expected", [
    ("上週末有什麼活動", days(date(2026, 11, 28), 2)), ("上禮拜六有活動嗎", days(date(2026, 11, 28))),
    ("12月有什麼活動", "2026-12-01/2027-01-01"), ("下禮拜有活動嗎", days(date(2026, 12, 7), 7)),
    ("下下週末有活動嗎", days(date(2026, 12, 19), 2)),
])
def test_date_in_week_and_month_phrases_are_read(text, expected):
    assert range_for(text) == expected


@pytest.mark.parametrize("text", [
    "下週末員林有活動嗎", "下禮拜六有什麼活動", "12月12日有什麼活動", "12/12有活動嗎", "這個月有什麼活動",
    "週六鹿港有活動嗎", "禮拜天有活動嗎", "今天", "明天", "週末", "下個月", "2026年12月12日",
])
def test_date_in_dates_resolve_to_calendar_days(text):
    spec = date_in(text)
    assert isinstance(spec, DateSpec)
    start, end = spec.resolve(date(2026, 11, 30))
    assert date(2026, 11, 1) <= start < end <= date(2027, 1, 1)


def test_date_in_text_without_a_date_reads_none():
    assert date_in("沒有日期的活動") is None


#: The dates that need no written day, each as the engine resolves it.
_RELATIVE_DATES = ([RelativeDay(offset) for offset in range(-3, 4)]
                   + [Week(weeks, weekend) for weeks in (-1, 0, 1) for weekend in (False, True)]
                   + [Weekday(day, weeks) for day in (5, 6) for weeks in (None, 1)]
                   + [RelativeMonth(months) for months in (-1, 0, 1)])


@pytest.mark.parametrize("spec", _RELATIVE_DATES, ids=[spec.encode() for spec in _RELATIVE_DATES])
def test_resolve_date_every_relative_date_gives_a_valid_range(spec):
    start, end = parse_date_range(resolve_date(spec, ctx_at(TAIPEI_NOON_MONDAY)))
    assert start >= date(2026, 10, 1) and end > start  # 上個月 from 11/30 starts 10/1


# --- clock boundaries (Asia/Taipei) ------------------------------------------------------------

@pytest.mark.parametrize("now, text, expected", [
    (SATURDAY_LAST_SECOND, "週末有活動嗎", days(date(2026, 12, 5), 2)),
    (SATURDAY_LAST_SECOND, "下週末有活動嗎", days(date(2026, 12, 12), 2)),
    (SATURDAY_LAST_SECOND, "週六有活動嗎", days(date(2026, 12, 5))),  # today is Saturday
    (SATURDAY_LAST_SECOND, "週日有活動嗎", days(date(2026, 12, 6))),
    (SATURDAY_LAST_SECOND, "下禮拜六有活動嗎", days(date(2026, 12, 12))),
    (SUNDAY_FIRST_SECOND, "週末有活動嗎", days(date(2026, 12, 5), 2)),  # the weekend in progress
    (SUNDAY_FIRST_SECOND, "下週末有活動嗎", days(date(2026, 12, 12), 2)),
    (SUNDAY_FIRST_SECOND, "週六有活動嗎", days(date(2026, 12, 12))),  # the coming Saturday
    (SUNDAY_FIRST_SECOND, "禮拜天有活動嗎", days(date(2026, 12, 6))),  # today is Sunday
    (SUNDAY_FIRST_SECOND, "下禮拜天有活動嗎", days(date(2026, 12, 13))),
    (SUNDAY_FIRST_SECOND, "今天有活動嗎", days(date(2026, 12, 6))),
])
def test_resolve_date_weekend_boundaries_use_taipei_calendar(now, text, expected):
    assert range_for(text, now) == expected


@pytest.mark.parametrize("now, text, expected", [
    (datetime(2026, 12, 31, 4, 0, tzinfo=timezone.utc), "12月31日有活動嗎", "2026-12-31/2027-01-01"),
    (datetime(2026, 12, 31, 4, 0, tzinfo=timezone.utc), "這個月有活動嗎", "2026-12-01/2027-01-01"),
    (datetime(2026, 12, 31, 4, 0, tzinfo=timezone.utc), "下個月有活動嗎", "2027-01-01/2027-02-01"),
    (datetime(2026, 12, 31, 4, 0, tzinfo=timezone.utc), "明天有活動嗎", "2027-01-01/2027-01-02"),
    # 2026-12-31 16:00 UTC is already 2027-01-01 in Asia/Taipei.
    (datetime(2026, 12, 31, 16, 0, tzinfo=timezone.utc), "這個月有活動嗎", "2027-01-01/2027-02-01"),
    # A month-day without a year is the nearest one: yesterday stays in the past.
    (datetime(2026, 12, 31, 16, 0, tzinfo=timezone.utc), "12月31日有活動嗎", "2026-12-31/2027-01-01"),
])
def test_resolve_date_year_end_rolls_over(now, text, expected):
    assert range_for(text, now) == expected


@pytest.mark.parametrize("now, text, expected", [
    (TAIPEI_NOON_MONDAY, "11月30日有活動嗎", days(date(2026, 11, 30))),  # today: this year
    (TAIPEI_NOON_MONDAY, "11月29日有活動嗎", days(date(2026, 11, 29))),  # yesterday: past, not next year
    (TAIPEI_NOON_MONDAY, "1/9有活動嗎", days(date(2027, 1, 9))),
    (TAIPEI_NOON_MONDAY, "6/1有活動嗎", days(date(2026, 6, 1))),  # 182 days back, 183 ahead
    (TAIPEI_NOON_MONDAY, "5/31有活動嗎", days(date(2027, 5, 31))),  # 183 days back, 182 ahead
    (datetime(2027, 3, 1, 4, 0, tzinfo=timezone.utc), "2/29有活動嗎", days(date(2028, 2, 29))),
])
def test_resolve_date_month_day_without_year_is_the_nearest_one(now, text, expected):
    assert range_for(text, now) == expected


@pytest.mark.parametrize("value", ["md:02-30", "md:13-01", "md:00-10", "md:xx", "md:12"])
def test_resolve_date_impossible_month_day_raises_invalid_date_range(value):
    with pytest.raises(InvalidDateRange):  # a postback's date: read at the boundary, refused by the engine
        resolve_date(date_arg(value), ctx_at(TAIPEI_NOON_MONDAY))


def test_engine_impossible_date_gets_a_kind_reply_not_a_crash():
    store = MemoryStore()
    ctx = ctx_at(TAIPEI_NOON_MONDAY, store)
    reply = run_text_turn(ctx, "2月30日有什麼活動")
    words = all_text([message.to_dict() for message in reply.messages])
    audit = store.get(AUDIT, f"test-tenant:{ctx.webhook_event_id}")
    assert audit["status"] == "invalid_argument" and audit["proposed_args"]["date"]
    with pytest.raises(UnreadableDate):  # the record's date names no day: read as written (2/30), never dropped
        DateSpec.parse(audit["proposed_args"]["date"]).resolve(TAIPEI_NOON_MONDAY.date())
    assert "日期" in words
    assert not any(event["title"] in words for event in demo_events())


# --- end to end through the webhook --------------------------------------------------------------

def _titles(area: str | None, start: date, end: date) -> set[str]:
    return {event["title"] for event in demo_events()
            if (area is None or event["area"] == area) and start <= date.fromisoformat(event["date"]) < end}


def _reply_words(webhook_service, line_standin, text: str) -> str:
    event = text_event(text)
    body = line_body(event)
    assert webhook_service.handle(body.decode(), sign(body)).status == 200
    [reply] = replies_to(line_standin, event["replyToken"])
    return all_text(reply["body"]["messages"])


def test_webhook_next_weekend_in_lukang_replies_with_the_12_12_event(webhook_service, line_standin):
    expected = _titles("鹿港鎮", date(2026, 12, 12), date(2026, 12, 14))
    assert expected  # the demo data has a 鹿港 event on the weekend of 2026-12-12
    words = _reply_words(webhook_service, line_standin, "下週末鹿港有活動嗎")
    assert all(title in words for title in expected)


def test_webhook_next_weekend_leaves_out_this_weekend(webhook_service, line_standin):
    next_weekend = _titles(None, date(2026, 12, 12), date(2026, 12, 14))
    this_weekend = _titles(None, date(2026, 12, 5), date(2026, 12, 7))
    assert next_weekend and this_weekend
    words = _reply_words(webhook_service, line_standin, "下週末有什麼活動")
    assert all(title in words for title in next_weekend)
    assert not any(title in words for title in this_weekend)
