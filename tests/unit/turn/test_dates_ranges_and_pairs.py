"""Date ranges, dotted dates, dates side by side and dates beside a limit, each as a kind (shared.turn.dates
through the router and engine).

3. in a range (到 / 至 / ~ / -), a week prefix on the first end carries to a bare weekday on the second
   (下個禮拜一到禮拜三 is 12/7–12/9); a range whose end is before its start is unreadable, never re-ordered;
4. a dotted month.day (12.5, 1.9, 12．5) is a date; a price, distance, rating or clock time is not;
5. two dates side by side with no joiner (禮拜六禮拜日, 週六 週日, 12/5 12/6) are both read, and the other
   township's button keeps both;
9. a date said in the same message as a limit (weather, parking, transport) applies to the events search.

Today is Tuesday 2026-12-01 (Asia/Taipei) unless a test says otherwise; the clock is injected.
"""
from __future__ import annotations

import time
from dataclasses import replace
from datetime import date, datetime, timedelta, timezone

import pytest

from shared.config import WEBHOOK_REQUIRED, Settings
from shared.context import EventContext
from shared.identity import Actor
from shared.turn.ask import OtherAreas
from shared.turn.datespec import Both, DateSpec, Range, UnreadableDate, date_arg
from shared.turn.engine import resolve_date
from shared.turn.router import date_in, route
from shared.webhook.service import WebhookService
from shared.wiring import line_gateway, open_store
from tests.conftest import FixedClock, all_text, postback_event, reply_messages, text_event
from tests.memory_support import DirectMemoryClient, postbacks
from tests.unit.turn.date_support import NOT_READ, asked

TODAY = date(2026, 12, 1)
ACTOR = Actor("test-tenant", "U7a1e5b0c2d3f4a5b6c7d8e9f0a1b2c3d")


#: A Sunday: a bare weekday (週六) is the coming one, a week's (這禮拜六) may be past.
SUNDAY = date(2026, 12, 6)


def read(text: str) -> DateSpec | None:
    return date_in(text)


def span(text: str, today: date = TODAY) -> tuple[date, date] | str | None:
    return asked(text, today)


def day(first: date) -> tuple[date, date]:
    return first, first + timedelta(days=1)


def ctx_at(now: datetime) -> EventContext:
    settings_ = Settings.from_env({"LOCAL_TENANT_ID": "test-tenant"})
    return EventContext(settings_, None, None, now, ACTOR, "01TRIAL5DATES000000000000", time.monotonic() + 1.8)


# --- 3. a week prefix carries across a range; the end is never before the start ------------------------

@pytest.mark.parametrize("text, start, last", [
    ("下個禮拜一到禮拜三 彰化市有活動嗎", date(2026, 12, 7), date(2026, 12, 9)),   # the reported example
    ("下週三到週五鹿港有活動嗎", date(2026, 12, 9), date(2026, 12, 11)),          # the reported second one
    ("下週三到五 鹿港", date(2026, 12, 9), date(2026, 12, 11)),                    # a weekday alone after 到
    ("下禮拜二至禮拜四 員林", date(2026, 12, 8), date(2026, 12, 10)),
    ("下週一~週六 花壇", date(2026, 12, 7), date(2026, 12, 12)),
    ("下週四-週日 彰化市", date(2026, 12, 10), date(2026, 12, 13)),
    ("下下週一到週三", date(2026, 12, 14), date(2026, 12, 16)),
    ("上週一到週三 鹿港", date(2026, 11, 23), date(2026, 11, 25)),
    ("這禮拜五至禮拜天 彰化市", date(2026, 12, 4), date(2026, 12, 6)),
    ("週五到週一 鹿港", date(2026, 12, 4), date(2026, 12, 7)),                     # bare: the Monday after
    ("12/28到1/3 活動", date(2026, 12, 28), date(2027, 1, 3)),                     # across the new year
    ("12月28號到3號 鹿港", date(2026, 12, 28), date(2027, 1, 3)),                  # a bare day after the start
    ("下週一 到 週三 員林", date(2026, 12, 7), date(2026, 12, 9)),                 # spaces around 到
    ("明天到後天 花壇", date(2026, 12, 2), date(2026, 12, 3)),
])
def test_dates_range_carries_the_week_of_its_first_end(text, start, last):
    assert span(text) == (start, last + timedelta(days=1))


@pytest.mark.parametrize("text", ["下週五到週三 鹿港有活動嗎", "下禮拜天到禮拜一", "下下週四~週二", "12/7到12/5 彰化市",
                                  "這週六到上週日", "後天到明天 鹿港"])
def test_dates_range_ending_before_its_start_is_unreadable(text):
    assert isinstance(read(text), Range)  # read as the range it is, never dropped
    assert span(text) == NOT_READ


@pytest.mark.parametrize("text, start, end", [
    ("下週六跟週日 員林", date(2026, 12, 12), date(2026, 12, 14)),    # 跟: both days of next week
    ("下禮拜一或禮拜三 花壇", date(2026, 12, 7), date(2026, 12, 10)),
])
def test_dates_pair_carries_the_week_prefix_to_a_bare_weekday(text, start, end):
    assert span(text) == (start, end)


@pytest.mark.parametrize("text, first", [("週三到一家素食店吃飯", date(2026, 12, 2)), ("下週三到六點 鹿港", date(2026, 12, 9)),
                                         ("禮拜一到五個人", date(2026, 12, 7))])
def test_dates_range_a_number_after_to_is_no_weekday(text, first):
    assert not isinstance(read(text), (Range, Both))
    assert span(text) == day(first)


@pytest.mark.parametrize("value", ["range:", "range:next_weekday:0", "range:next_weekday:0|xx", "range:xx|weekday:2",
                                   "range:md:12-07|md:12-05"])
def test_resolve_tampered_range_postback_dates_are_unreadable(value):
    spec = date_arg(value)  # a postback's date, read at the boundary
    assert spec is not None
    with pytest.raises(UnreadableDate):
        spec.resolve(TODAY)


@pytest.mark.parametrize("now, expected", [
    (datetime(2026, 12, 6, 15, 59, 59, tzinfo=timezone.utc), "2026-12-07/2026-12-10"),  # Sun 23:59:59 Taipei
    (datetime(2026, 12, 6, 16, 0, 0, tzinfo=timezone.utc), "2026-12-14/2026-12-17"),    # Mon 00:00:00 Taipei
])
def test_resolve_date_next_week_range_turns_at_taipei_midnight(now, expected):
    assert resolve_date(read("下個禮拜一到禮拜三 彰化市有活動嗎"), ctx_at(now)) == expected


@pytest.mark.parametrize("now, expected", [
    (datetime(2026, 12, 4, 15, 59, 59, tzinfo=timezone.utc), "2026-12-04/2026-12-08"),  # Fri 23:59:59: this Friday
    (datetime(2026, 12, 4, 16, 0, 0, tzinfo=timezone.utc), "2026-12-11/2026-12-15"),    # Sat 00:00: the next Friday
])
def test_resolve_date_bare_weekday_range_turns_at_taipei_midnight(now, expected):
    assert resolve_date(read("週五到週一 鹿港"), ctx_at(now)) == expected


def test_router_next_week_range_searches_next_weeks_days():
    proposal = route("下個禮拜一到禮拜三 彰化市有活動嗎")
    assert (proposal.tool, proposal.args["area"]) == ("search_local_events", "彰化市")
    assert proposal.args["date"].resolve(TODAY) == (date(2026, 12, 7), date(2026, 12, 10))


# --- 4. a dotted month.day is a date; a number is not ---------------------------------------------------

@pytest.mark.parametrize("text, day", [
    ("12.5 彰化市有什麼", date(2026, 12, 5)),      # the reported example
    ("12.5號 彰化市有什麼活動", date(2026, 12, 5)),
    ("1.9 花壇有活動嗎", date(2027, 1, 9)),
    ("12．6 彰化市親子", date(2026, 12, 6)),       # full width
    ("鹿港 12.12 有什麼活動", date(2026, 12, 12)),
    ("11.22 彰化市", date(2026, 11, 22)),          # the nearest: past
])
def test_dates_dotted_month_day_is_a_date(text, day):
    assert span(text) == (day, day + timedelta(days=1))


@pytest.mark.parametrize("text", ["彰化市素食 100.5元以內", "1.5公里內 彰化市素食", "彰化市 吃素 評分4.5以上", "早上9.30 彰化市素食",
                                  "4.5顆星的素食 鹿港", "花壇 2.5倍", "版本1.2", "15.5 彰化市", "0.5 鹿港", "3.1415",
                                  "12.5元 員林", "彰化市素食 1.5km", "員林 吃素 9.30開門嗎"])
def test_dates_decimal_in_a_number_context_is_no_date(text):
    assert read(text) is None


@pytest.mark.parametrize("text", ["12.5 彰化市有什麼", "1.9 花壇", "鹿港 12．12"])
def test_router_dotted_date_beside_a_township_is_an_events_search(text):
    assert route(text).tool == "search_local_events"


@pytest.mark.parametrize("text", ["彰化市素食 100.5元以內", "1.5公里內 彰化市素食"])
def test_router_price_or_distance_beside_a_township_stays_a_shop_search(text):
    proposal = route(text)
    assert proposal.tool == "search_local_places" and "date" not in proposal.args


# --- 5. dates side by side with no joiner ---------------------------------------------------------------

@pytest.mark.parametrize("text, start, last", [
    ("禮拜六禮拜日 花壇員林 有啥活動", date(2026, 12, 5), date(2026, 12, 6)),   # the reported example
    ("週六週日鹿港", date(2026, 12, 5), date(2026, 12, 6)),
    ("星期六 星期天 彰化市", date(2026, 12, 5), date(2026, 12, 6)),
    ("12/5 12/6 員林活動", date(2026, 12, 5), date(2026, 12, 6)),
    ("下週六週日 員林", date(2026, 12, 12), date(2026, 12, 13)),                 # 下 carries
    ("週五週六週日 彰化市", date(2026, 12, 4), date(2026, 12, 6)),               # a run: first to last
    ("明天後天 鹿港活動", date(2026, 12, 2), date(2026, 12, 3)),
])
def test_dates_side_by_side_are_both_read(text, start, last):
    assert span(text) == (start, last + timedelta(days=1))


@pytest.mark.parametrize("text, days, on_sunday", [
    ("這週末週六 彰化市", day(date(2026, 12, 5)), day(date(2026, 12, 12))),  # a weekend and a day: the day, as before
    ("週六下午 彰化市", day(date(2026, 12, 5)), day(date(2026, 12, 12))),
    ("12/5 下午2點 彰化市", day(date(2026, 12, 5)), day(date(2026, 12, 5))),
    ("禮拜六日 員林", (date(2026, 12, 5), date(2026, 12, 7)), (date(2026, 12, 5), date(2026, 12, 7))),
])
def test_dates_one_date_with_other_words_is_not_a_pair(text, days, on_sunday):
    assert not isinstance(read(text), Both)
    assert (span(text), span(text, SUNDAY)) == (days, on_sunday)


def test_router_side_by_side_days_keep_the_other_township():
    proposal = route("禮拜六禮拜日 花壇員林 有啥活動")
    assert proposal.args["date"].spans(TODAY) == (day(date(2026, 12, 5)), day(date(2026, 12, 6)))
    assert asked("禮拜六禮拜日 花壇員林 有啥活動", SUNDAY, apart=True) == (day(date(2026, 12, 6)), day(date(2026, 12, 12)))
    assert OtherAreas(("員林市",)) in proposal.notes


@pytest.fixture
def pinned_service(base_env):
    clock = FixedClock(datetime(2026, 12, 1, 2, 0, tzinfo=timezone.utc))  # 10:00 Taipei, as the eval cases
    settings = replace(Settings.from_env(base_env, required=WEBHOOK_REQUIRED), webhook_budget_seconds=60.0)
    memory = DirectMemoryClient(settings, open_store(settings), clock)
    return WebhookService(settings, open_store(settings), line_gateway(settings), clock=clock, memory=memory)


def test_webhook_side_by_side_days_other_township_button_keeps_both_days(pinned_service, line_standin):
    messages = reply_messages(pinned_service, line_standin, text_event("禮拜六禮拜日 花壇員林 有啥活動"))
    assert "花壇鄉，2026/12/5（六）～2026/12/6（日）" in all_text(messages)
    buttons = postbacks(messages)
    yuanlin = next(data for label, data in buttons.items() if "員林市" in label)
    assert "date=2026-12-05/2026-12-07" in yuanlin
    again = reply_messages(pinned_service, line_standin, postback_event(yuanlin))
    assert "員林市，2026/12/5（六）～2026/12/6（日）" in all_text(again)


# --- 9. a date said with a limit applies to the events ----------------------------------------------------

@pytest.mark.parametrize("text, limit, area, first, on_sunday", [
    ("這禮拜六會不會下雨 員林的活動還有辦嗎", "weather", "員林市", date(2026, 12, 5), date(2026, 12, 5)),  # the reported
    ("明天會下雨嗎 鹿港有活動嗎", "weather", "鹿港鎮", date(2026, 12, 2), date(2026, 12, 7)),
    ("12/12去鹿港好停車嗎 有活動嗎", "parking", "鹿港鎮", date(2026, 12, 12), date(2026, 12, 12)),
    ("下下週六怎麼搭車去員林 有活動嗎", "transport", "員林市", date(2026, 12, 19), date(2026, 12, 19)),
    ("週六彰化市有接駁車嗎 有什麼活動", "shuttle", "彰化市", date(2026, 12, 5), date(2026, 12, 12)),
])
def test_router_date_said_with_a_limit_applies_to_the_events(text, limit, area, first, on_sunday):
    proposal = route(text)
    assert proposal.tool == "search_local_events" and limit in proposal.notes, proposal
    assert proposal.args["area"] == area
    assert (proposal.args["date"].resolve(TODAY), proposal.args["date"].resolve(SUNDAY)) == (day(first), day(on_sunday))


@pytest.mark.parametrize("text", ["員林有什麼活動 會下雨嗎", "鹿港有活動嗎 停車方便嗎"])
def test_router_limit_without_a_date_keeps_every_date(text):
    assert route(text).args["date"] is None


def test_router_date_in_the_search_clause_wins_over_the_limits():
    proposal = route("明天會下雨嗎 鹿港週六有活動嗎")
    assert proposal.args["date"].resolve(TODAY) == day(date(2026, 12, 5))


@pytest.mark.parametrize("now, expected", [
    (datetime(2026, 12, 1, 15, 59, 59, tzinfo=timezone.utc), "2026-12-02/2026-12-03"),  # 23:59:59 Taipei
    (datetime(2026, 12, 1, 16, 0, 0, tzinfo=timezone.utc), "2026-12-03/2026-12-04"),    # 00:00:00 Taipei
])
def test_resolve_date_weather_clause_tomorrow_turns_at_taipei_midnight(now, expected):
    assert resolve_date(route("明天會下雨嗎 鹿港有活動嗎").args["date"], ctx_at(now)) == expected
