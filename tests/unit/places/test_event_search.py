"""search_local_events over the demo snapshot (docs/design.md §5 search_local_events)."""

from __future__ import annotations

import json
from datetime import date, datetime, timezone

import pytest

from shared.areas import TOWNSHIPS, UnknownArea
from shared.clock import TAIPEI
from shared.events.search import (
    DEFAULT_SNAPSHOT_PATH,
    Event,
    EventSnapshot,
    EventSnapshotInvalid,
    InvalidDateRange,
    load_event_snapshot,
    parse_date_range,
    search_local_events,
    weekend_range,
)

MONDAY = datetime(2026, 11, 30, 10, 0, tzinfo=TAIPEI)


def _ids(result: dict) -> list[str]:
    return [event["id"] for event in result["events"]]


def _snapshot(*days: date) -> EventSnapshot:
    events = tuple(
        Event(id=f"t-{day.isoformat()}", title="測試活動", area="花壇鄉", date=day, start_time=None,
              meeting_point=None, tags=(), source_kind="demo")
        for day in days
    )
    return EventSnapshot(snapshot_version="test.1", recorded_on=date(2026, 11, 30), demo=True, note="test",
                         events=events)


def test_event_snapshot_file_is_demo_with_enough_events():
    raw = json.loads(DEFAULT_SNAPSHOT_PATH.read_text(encoding="utf-8"))
    snapshot = load_event_snapshot()
    areas = {event.area for event in snapshot.events}
    assert raw["demo"] is True and snapshot.demo and "demo" in raw["note"].lower()
    assert len(snapshot.events) >= 6 and len(areas) >= 3
    assert {"彰化市", "花壇鄉", "鹿港鎮", "員林市"} <= areas <= set(TOWNSHIPS)
    assert all(event.source_kind == "demo" for event in snapshot.events)
    assert sum(event.meeting_point is None for event in snapshot.events) >= 2
    assert any(event.date < date(2026, 11, 30) for event in snapshot.events)
    assert {date(2026, 12, 5), date(2026, 12, 6)} <= {e.date for e in snapshot.events if e.area == "彰化市"}


@pytest.mark.parametrize(("now", "is_past"), [
    (datetime(2026, 11, 29, 23, 59, 59, tzinfo=TAIPEI), False),
    (datetime(2026, 11, 30, 0, 0, 0, tzinfo=TAIPEI), True),
    (datetime(2026, 11, 29, 15, 59, 59, tzinfo=timezone.utc), False),
    (datetime(2026, 11, 29, 16, 0, 0, tzinfo=timezone.utc), True),
])
def test_search_events_day_boundary_in_taipei_labels_past(now, is_past):
    result = search_local_events("2026-11-29", "花壇鄉", None, now=now)
    assert _ids(result) == ["demo-ev-002"]
    assert result["events"][0]["is_past"] is is_past


@pytest.mark.parametrize("now", [
    datetime(2026, 11, 30, 0, 0, 0, tzinfo=TAIPEI),
    datetime(2026, 11, 30, 23, 59, 59, tzinfo=TAIPEI),
])
def test_search_events_yesterday_past_today_not_past(now):
    snapshot = _snapshot(date(2026, 11, 29), date(2026, 11, 30))
    result = search_local_events("2026-11-29/2026-12-01", None, None, now=now, snapshot=snapshot)
    assert {event["date"]: event["is_past"] for event in result["events"]} == {"2026-11-29": True, "2026-11-30": False}
    assert result["today"] == "2026-11-30"


def test_search_events_no_date_lists_only_events_not_ended():
    result = search_local_events(None, None, None, now=MONDAY)
    snapshot = load_event_snapshot()
    not_ended = [event.id for event in snapshot.events if event.date >= MONDAY.date()]
    assert sorted(_ids(result)) == sorted(not_ended) and len(not_ended) < len(snapshot.events)
    assert not any(event["is_past"] for event in result["events"])


@pytest.mark.parametrize(("now", "expected"), [
    (datetime(2026, 11, 30, 0, 0, tzinfo=TAIPEI), "2026-12-05/2026-12-07"),
    (datetime(2026, 12, 4, 23, 59, 59, tzinfo=TAIPEI), "2026-12-05/2026-12-07"),
    (datetime(2026, 12, 5, 9, 0, tzinfo=TAIPEI), "2026-12-05/2026-12-07"),
    (datetime(2026, 12, 6, 23, 59, 59, tzinfo=TAIPEI), "2026-12-05/2026-12-07"),
    (datetime(2026, 12, 6, 16, 0, tzinfo=timezone.utc), "2026-12-12/2026-12-14"),
])
def test_weekend_range_taipei_day_gives_coming_or_current_weekend(now, expected):
    assert weekend_range(now) == expected


def test_weekend_range_naive_now_raises_value_error():
    with pytest.raises(ValueError):
        weekend_range(datetime(2026, 12, 5, 9, 0))


def test_search_events_weekend_in_changhua_city_finds_both_days():
    result = search_local_events(weekend_range(MONDAY), "彰化市", None, now=MONDAY)
    assert result["status"] == "ok" and _ids(result) == ["demo-ev-003", "demo-ev-004"]
    assert result["query"] == {"date": "2026-12-05/2026-12-07", "area": "彰化市", "keyword": None}


def test_search_events_range_end_is_exclusive():
    assert _ids(search_local_events("2026-12-05/2026-12-06", "彰化市", None, now=MONDAY)) == ["demo-ev-003"]


def test_search_events_single_date_is_that_day():
    result = search_local_events("2026-12-06", None, None, now=MONDAY)
    assert _ids(result) == ["demo-ev-004"] and result["query"]["date"] == "2026-12-06"


@pytest.mark.parametrize("value", ["2026-12-06/2026-12-05", "2026-12-05/2026-12-05", "下週", "2026-13-01",
                                   "2026-12-05/"])
def test_parse_date_range_bad_value_raises(value):
    with pytest.raises(InvalidDateRange):
        parse_date_range(value)


@pytest.mark.parametrize("area", ["附近", "這附近", "集合點附近", "彰化"])
def test_search_events_vague_area_needs_area(area):
    result = search_local_events(None, area, None, now=MONDAY)
    assert result["status"] == "needs_area" and result["events"] == [] and result["demo"] is True
    assert result["area_choices"] == ["彰化市", "鹿港鎮", "花壇鄉", "員林市"]


def test_search_events_no_area_searches_every_township():
    areas = {event["area"] for event in search_local_events(None, None, None, now=MONDAY)["events"]}
    assert len(areas) >= 3


def test_search_events_alias_area_uses_full_name():
    result = search_local_events(None, "鹿港", None, now=MONDAY)
    assert result["query"]["area"] == "鹿港鎮" and {e["area"] for e in result["events"]} == {"鹿港鎮"}


def test_search_events_missing_fields_listed_per_event():
    events = {event["id"]: event for event in search_local_events(None, None, None, now=MONDAY)["events"]}
    assert events["demo-ev-004"]["missing_fields"] == ["meeting_point"]
    assert events["demo-ev-005"]["missing_fields"] == ["start_time"]
    assert events["demo-ev-003"]["missing_fields"] == []
    assert events["demo-ev-004"]["meeting_point"] is None


def test_search_events_keyword_matches_tags():
    assert _ids(search_local_events(None, None, "蔬食", now=MONDAY)) == ["demo-ev-003", "demo-ev-007"]


def test_search_events_generic_keyword_dropped():
    assert search_local_events(None, "員林", "活動", now=MONDAY)["query"]["keyword"] is None


def test_search_events_nothing_found_is_no_match_marked_demo():
    result = search_local_events("2026-12-25", "彰化市", None, now=MONDAY)
    assert result["status"] == "no_match" and result["demo"] is True and result["total"] == 0


def test_search_events_version_changed_is_unavailable():
    result = search_local_events(None, "彰化市", None, now=MONDAY, expected_version="events-demo-1999.1")
    assert result["status"] == "unavailable" and result["events"] == [] and result["demo"] is True


def test_search_events_same_version_is_ok():
    version = load_event_snapshot().snapshot_version
    assert search_local_events(None, "彰化市", None, now=MONDAY, expected_version=version)["status"] == "ok"


def test_search_events_naive_now_raises_value_error():
    with pytest.raises(ValueError):
        search_local_events(None, None, None, now=datetime(2026, 11, 30, 10, 0))


def test_search_events_unknown_area_raises():
    with pytest.raises(UnknownArea):
        search_local_events(None, "高雄", None, now=MONDAY)


def test_load_event_snapshot_area_outside_county_raises(tmp_path):
    raw = json.loads(DEFAULT_SNAPSHOT_PATH.read_text(encoding="utf-8"))
    raw["events"][0]["area"] = "台中市"
    path = tmp_path / "events.json"
    path.write_text(json.dumps(raw, ensure_ascii=False), encoding="utf-8")
    with pytest.raises(EventSnapshotInvalid):
        load_event_snapshot(path)
