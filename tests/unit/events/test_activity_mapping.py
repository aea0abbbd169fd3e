"""TDX activity records → LOCAL events: validation and mapping (shared/events/activities.py)."""
from __future__ import annotations

import json
from datetime import date, time
from pathlib import Path

import pytest

from shared.events.activities import SKIP_REASONS, map_record, map_records
from shared.geo import Coordinates
from tests.unit.test_address import READ

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "tdx"


def _record(**fields) -> dict:
    base = {
        "ActivityID": "C2_376000000A_009001", "ActivityName": "彰化市蔬食小農市集",
        "Location": "南瑤宮廣場", "Address": "500彰化縣彰化市南瑤路43號", "Organizer": "彰化市公所",
        "StartTime": "2026-12-05T10:00:00+08:00", "EndTime": "2026-12-05T16:00:00+08:00",
        "City": "彰化縣", "Class1": "產業活動", "Class2": "美食",
        "WebsiteUrl": "https://www.example.org/market", "UpdateTime": "2026-11-28T16:20:00+08:00",
    }
    base.update(fields)
    return {k: v for k, v in base.items() if v is not ...}


def _reason(record) -> str:
    with pytest.raises(ValueError) as caught:
        map_record(record)
    return str(caught.value)


def test_map_record_valid_keeps_source_update_time_and_exclusive_end():
    event, updated = map_record(_record())
    assert event.id == "tdx-C2_376000000A_009001" and event.area == "彰化市"
    assert event.date == date(2026, 12, 5) and event.end_date == date(2026, 12, 6)
    assert event.start_time == time(10, 0) and event.meeting_point == "南瑤宮廣場"
    assert event.source_kind == "tdx" and event.source_updated_at == "2026-11-28T16:20:00+08:00"
    assert updated.isoformat() == "2026-11-28T16:20:00+08:00"
    assert event.organizer == "彰化市公所" and event.url == "https://www.example.org/market"


def test_map_record_classes_and_name_words_become_tags():
    event, _ = map_record(_record())
    assert event.tags[:2] == ("產業活動", "美食")
    assert {"蔬食", "市集", "小農"} <= set(event.tags)
    assert len(event.tags) == len(set(event.tags))


def test_map_record_town_field_wins_over_address():
    event, _ = map_record(_record(Town="花壇", Address="500彰化縣彰化市南瑤路43號"))
    assert event.area == "花壇鄉"


@pytest.mark.parametrize(("address", "township", "code"), READ)
def test_map_record_reads_the_township_from_an_address_as_taiwan_writes_it(address, township, code):
    """Every form of the address table (shared/address.py), as a TDX record without ``Town`` or ``City``."""
    event, _ = map_record(_record(Address=address, City=..., Location="廣場"))
    assert event.area == township


def test_map_record_postal_code_after_the_county_is_kept():
    event, _ = map_record(_record(Address="彰化縣 510員林市中山路一段100號", Town=...))
    assert event.area == "員林市"
    event, _ = map_record(_record(Address="彰化縣510員林市", City="彰化縣"))
    assert event.area == "員林市"


def test_map_record_township_only_in_the_location_name():
    event, _ = map_record(_record(Address=..., Town=..., Location="鹿港鎮天后宮廣場"))
    assert event.area == "鹿港鎮"


@pytest.mark.parametrize("city", ["彰化縣", "彰化县", " 彰化縣 ", "彰化縣\u3000", "台灣彰化縣", "臺灣省 彰化縣"])
def test_map_record_city_in_any_spelling_of_the_county(city):
    assert map_record(_record(City=city))[0].area == "彰化市"


def test_map_record_position_kept_with_its_source_only_when_in_the_county():
    inside = {"PositionLat": 24.0818, "PositionLon": 120.5386, "GeoHash": "wsmc"}
    assert map_record(_record(Position=inside))[0].position == Coordinates(24.0818, 120.5386, "tdx")
    for position in ({"PositionLat": 24.1477, "PositionLon": 120.6736},        # Taichung's city centre
                     {"PositionLat": 0, "PositionLon": 0}, {"PositionLat": "24.08", "PositionLon": 120.5},
                     {"PositionLat": 95, "PositionLon": 120.5}, "24.08,120.53", None):
        event, _ = map_record(_record(Position=position))
        assert event.position is None and event.area == "彰化市"   # the record stays, without a position


def test_map_record_times_in_other_offset_are_read_in_taipei():
    event, _ = map_record(_record(StartTime="2026-12-04T23:30:00+00:00", EndTime="2026-12-05T03:00:00+00:00"))
    assert event.date == date(2026, 12, 5) and event.start_time == time(7, 30)
    assert event.end_date == date(2026, 12, 6)


def test_map_record_midnight_times_are_dates_without_a_time():
    event, _ = map_record(_record(StartTime="2026-12-12T00:00:00+08:00", EndTime="2026-12-13T00:00:00+08:00"))
    assert event.start_time is None and "start_time" in event.missing_fields
    assert event.date == date(2026, 12, 12) and event.last_day == date(2026, 12, 13)


def test_map_record_end_exactly_midday_stays_that_day():
    event, _ = map_record(_record(StartTime="2026-12-05T09:00:00+08:00", EndTime="2026-12-07T12:00:00+08:00"))
    assert (event.date, event.last_day, event.end_date) == (date(2026, 12, 5), date(2026, 12, 7), date(2026, 12, 8))


def test_map_record_without_location_falls_back_to_address_then_unknown():
    event, _ = map_record(_record(Location=None))
    assert event.meeting_point == "500彰化縣彰化市南瑤路43號"
    event, _ = map_record(_record(Location=None, Address=..., Town="花壇鄉"))
    assert event.meeting_point is None and "meeting_point" in event.missing_fields


def test_map_record_non_https_url_dropped():
    assert map_record(_record(WebsiteUrl="http://www.example.org/x"))[0].url is None
    assert map_record(_record(WebsiteUrl="javascript:alert(1)"))[0].url is None


@pytest.mark.parametrize(("fields", "reason"), [
    ({"ActivityID": ""}, "missing_id"),
    ({"ActivityID": ...}, "missing_id"),
    ({"ActivityName": "  "}, "missing_name"),
    ({"City": "臺中市", "Address": "403臺中市西區市民廣場"}, "out_of_county"),
    ({"City": "台中市"}, "out_of_county"),
    ({"City": ..., "Address": "403臺中市西區市民廣場"}, "out_of_county"),
    ({"Address": "彰化縣和美路", "Location": "南瑤宮廣場"}, "no_township"),
    ({"Town": "西區", "Address": ..., "Location": ...}, "no_township"),
    ({"Town": ..., "Address": ..., "Location": ...}, "no_address"),
    ({"Town": " ", "Address": "", "Location": None}, "no_address"),
    ({"City": ..., "Address": "台中市西區市民廣場"}, "out_of_county"),
    ({"City": "臺中市", "Address": "彰化縣 510員林市"}, "out_of_county"),
    ({"StartTime": "下週六早上"}, "bad_start_time"),
    ({"StartTime": "2026-12-05T10:00:00"}, "bad_start_time"),      # no offset: not guessed
    ({"EndTime": ...}, "bad_end_time"),
    ({"EndTime": 20261205}, "bad_end_time"),
    ({"EndTime": "2026-12-04T10:00:00+08:00"}, "end_before_start"),
    ({"UpdateTime": ...}, "bad_update_time"),
])
def test_map_record_invalid_field_skipped_with_reason(fields, reason):
    assert reason in SKIP_REASONS
    assert _reason(_record(**fields)) == reason


@pytest.mark.parametrize("record", [None, "C2_1", 7, ["ActivityID"]])
def test_map_record_not_an_object_skipped(record):
    assert _reason(record) == "not_an_object"


def test_map_records_counts_each_reason_and_skips_duplicates():
    records = [_record(), _record(), _record(ActivityID="x2", City="臺中市"), "junk",
               _record(ActivityID="x3", StartTime="soon")]
    batch = map_records(records)
    assert [event.id for event in batch.events] == ["tdx-C2_376000000A_009001"]
    assert dict(batch.skipped) == {"duplicate_id": 1, "out_of_county": 1, "not_an_object": 1, "bad_start_time": 1}


def test_map_records_mixed_fixture_skips_malformed_and_other_county():
    records = json.loads((FIXTURES / "mixed-validity.json").read_text(encoding="utf-8"))
    batch = map_records(records)
    assert dict(batch.skipped) == {"bad_start_time": 1, "out_of_county": 1}
    assert {event.area for event in batch.events} == {"員林市", "花壇鄉", "社頭鄉"}
    assert batch.newest_update is not None and batch.newest_update.isoformat() == "2026-11-28T16:20:00+08:00"
