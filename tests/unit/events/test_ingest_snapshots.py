"""Ingestion into versioned snapshots and the searches that read them (docs/design.md §5), on a real SQLite file."""
from __future__ import annotations

import io
import json
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from shared.clock import TAIPEI
from shared.events import snapshots
from shared.events.file_source import FileActivitySource
from shared.events.ingest import ingest_events
from shared.events.search import EventSnapshotMissing, search_local_events
from shared.events.source import Fetched, SourceUnavailable
from shared.replies.events import render_events
from shared.store import StoreUnavailable
from shared.store.sqlite import SqliteStore
from tools import events as events_tool

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "tdx"
MIXED = FIXTURES / "mixed-validity.json"
GOOD = FIXTURES / "changhua-activities.json"
POSTAL_AFTER_COUNTY = FIXTURES / "postal-code-after-county.json"
NOW = datetime(2026, 11, 30, 10, 0, tzinfo=TAIPEI)  # Monday


@pytest.fixture
def store(tmp_path) -> SqliteStore:
    return SqliteStore(str(tmp_path / "events.sqlite3"), deadline_seconds=2.0)


class FailingSource:
    kind, name = "tdx", "TDX"

    def __init__(self, reason: str = "http_500"):
        self.reason = reason
        self.calls = 0

    def fetch(self, *, if_modified_since=None) -> Fetched:
        self.calls += 1
        raise SourceUnavailable(self.reason)


class NotModifiedSource:
    kind, name = "tdx", "TDX"

    def __init__(self):
        self.seen: list[str | None] = []

    def fetch(self, *, if_modified_since=None) -> Fetched:
        self.seen.append(if_modified_since)
        return Fetched(records=None, last_modified=if_modified_since, origin="https://tdx.invalid/x")


def _ids(result: dict) -> list[str]:
    return [event["id"] for event in result["events"]]


def _search(store, date, area=None, keyword=None, now=NOW, **kwargs):
    return search_local_events(date, area, keyword, now=now,
                               snapshot_loader=lambda: snapshots.load_current_snapshot(store), **kwargs)


def _text(messages) -> str:
    return json.dumps([m.to_dict() for m in messages], ensure_ascii=False)


def test_ingest_file_writes_versioned_snapshot_with_counts(store):
    result = ingest_events(store, FileActivitySource(MIXED), now=NOW)
    assert result.outcome == "snapshot_written" and result.ok
    assert result.counts == {"received": 5, "kept": 3, "skipped": {"bad_start_time": 1, "out_of_county": 1}}
    state = snapshots.read_state(store)
    assert state["snapshot_version"] == result.snapshot_version
    assert state["last_attempt"]["outcome"] == "snapshot_written"
    snapshot = snapshots.load_current_snapshot(store)
    assert not snapshot.demo and len(snapshot.events) == 3
    assert all(event.source_kind == "tdx" and event.source_updated_at for event in snapshot.events)
    assert snapshot.source_updated_at.isoformat() == "2026-11-28T16:20:00+08:00"


def test_ingest_same_content_again_keeps_version_and_confirms(store):
    first = ingest_events(store, FileActivitySource(MIXED), now=NOW)
    later = NOW + timedelta(hours=6)
    second = ingest_events(store, FileActivitySource(MIXED), now=later)
    assert second.outcome == "unchanged" and second.snapshot_version == first.snapshot_version
    assert snapshots.load_current_snapshot(store).checked_at == later


def test_ingest_new_content_new_version_and_old_ones_pruned(store, tmp_path):
    versions = []
    for n in range(5):
        path = tmp_path / f"v{n}.json"
        records = json.loads(GOOD.read_text(encoding="utf-8"))
        records[0]["ActivityName"] += f" 第{n}期"
        path.write_text(json.dumps(records, ensure_ascii=False), encoding="utf-8")
        versions.append(ingest_events(store, FileActivitySource(path), now=NOW + timedelta(minutes=n)).snapshot_version)
    assert len(set(versions)) == 5
    kept = {doc["snapshot_version"] for doc in store.query(snapshots.SNAPSHOTS)}
    assert kept == set(versions[-snapshots.KEEP_SNAPSHOTS:])
    assert {doc["snapshot_version"] for doc in store.query(snapshots.PARTS)} == kept


def test_ingest_fetch_failure_keeps_last_good_snapshot_and_records_reason(store):
    good = ingest_events(store, FileActivitySource(MIXED), now=NOW)
    failed = ingest_events(store, FailingSource("http_500"), now=NOW + timedelta(days=1))
    assert failed.outcome == "fetch_failed" and not failed.ok and failed.reason == "http_500"
    assert failed.snapshot_version == good.snapshot_version
    state = snapshots.read_state(store)
    assert state["snapshot_version"] == good.snapshot_version
    assert state["last_attempt"] == {"at": "2026-12-01T02:00:00+00:00", "outcome": "fetch_failed", "reason": "http_500"}
    assert state["checked_at"] == "2026-11-30T02:00:00+00:00"  # a failure confirms nothing
    assert len(snapshots.load_current_snapshot(store).events) == 3


def test_ingest_fetch_failure_before_any_snapshot_leaves_demo(store):
    ingest_events(store, FailingSource("timeout"), now=NOW)
    assert snapshots.load_current_snapshot(store).demo is True
    assert snapshots.read_state(store)["last_attempt"]["reason"] == "timeout"


def test_ingest_no_valid_record_rejected_keeps_snapshot(store, tmp_path):
    good = ingest_events(store, FileActivitySource(MIXED), now=NOW)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps([{"ActivityID": "x"}, "junk"]), encoding="utf-8")
    result = ingest_events(store, FileActivitySource(bad), now=NOW)
    assert result.outcome == "rejected" and result.reason == "no_valid_records"
    assert result.counts == {"received": 2, "kept": 0, "skipped": {"missing_name": 1, "not_an_object": 1}}
    assert snapshots.read_state(store)["snapshot_version"] == good.snapshot_version


def test_ingest_addresses_with_the_postal_code_after_the_county_are_kept(store):
    result = ingest_events(store, FileActivitySource(POSTAL_AFTER_COUNTY), now=NOW)
    assert result.outcome == "snapshot_written"
    assert result.counts == {"received": 3, "kept": 3, "skipped": {}}
    events = snapshots.load_current_snapshot(store).events
    assert [event.area for event in events] == ["員林市", "員林市", "鹿港鎮"]
    assert [event.position is not None for event in events] == [True, False, False]
    assert _ids(_search(store, "2026-12-05/2026-12-06", area="員林")) == [
        "tdx-C2_376000000A_000301", "tdx-C2_376000000A_000302"]


@pytest.mark.parametrize(("content", "reason"), [("{not json", "not_json"), ('{"value": []}', "not_a_list")])
def test_ingest_file_not_in_api_format_fails_and_records_why(store, tmp_path, content, reason):
    path = tmp_path / "odd.json"
    path.write_text(content, encoding="utf-8")
    result = ingest_events(store, FileActivitySource(path), now=NOW)
    assert (result.outcome, result.reason) == ("fetch_failed", reason)


def test_ingest_not_modified_sends_last_modified_and_confirms(store):
    ingest_events(store, FileActivitySource(MIXED), now=NOW)
    state = snapshots.read_state(store)
    store.set(snapshots.STATE, snapshots.CURRENT, {**state, "last_modified": "Mon, 30 Nov 2026 01:00:00 GMT"})
    source = NotModifiedSource()
    later = NOW + timedelta(days=3)
    result = ingest_events(store, source, now=later)
    assert result.outcome == "not_modified" and source.seen == ["Mon, 30 Nov 2026 01:00:00 GMT"]
    assert snapshots.load_current_snapshot(store).checked_at == later


def test_search_real_snapshot_ended_yesterday_only_when_past_date_asked(store):
    ingest_events(store, FileActivitySource(MIXED), now=NOW)
    upcoming = _search(store, None)
    assert "tdx-C2_376000000A_000201" not in _ids(upcoming) and upcoming["total"] == 2
    this_week = _search(store, "2026-11-30/2026-12-07")
    assert "tdx-C2_376000000A_000201" not in _ids(this_week)
    yesterday = _search(store, "2026-11-29")
    assert _ids(yesterday) == ["tdx-C2_376000000A_000201"] and yesterday["events"][0]["is_past"] is True
    (_, carousel) = render_events(yesterday)
    assert "（已結束）" in _text([carousel])


@pytest.mark.parametrize("day", ["2026-12-04", "2026-12-05", "2026-12-06", "2026-12-07"])
def test_search_real_snapshot_multi_day_event_matches_every_day(store, day):
    ingest_events(store, FileActivitySource(MIXED), now=NOW)
    assert "tdx-C2_376000000A_000204" in _ids(_search(store, day, "花壇"))


@pytest.mark.parametrize("day", ["2026-12-03", "2026-12-08"])
def test_search_real_snapshot_multi_day_event_not_outside_its_days(store, day):
    ingest_events(store, FileActivitySource(MIXED), now=NOW)
    assert _search(store, day, "花壇")["status"] == "no_match"


def test_search_real_snapshot_weekend_range_overlapping_event(store):
    ingest_events(store, FileActivitySource(MIXED), now=NOW)
    result = _search(store, "2026-12-05/2026-12-07", "花壇鄉", "蔬食")
    assert _ids(result) == ["tdx-C2_376000000A_000204"]
    assert result["events"][0]["date"] == "2026-12-04" and result["events"][0]["last_day"] == "2026-12-07"


def test_search_real_snapshot_reply_names_source_and_update_time_without_demo(store):
    ingest_events(store, FileActivitySource(MIXED), now=NOW)
    result = _search(store, "2026-12-05", "花壇鄉")
    assert result["demo"] is False and result["source"]["stale"] is False
    text = _text(render_events(result))
    assert "示範" not in text
    assert "資料來源：交通部觀光署活動資料，11/28 更新" in text and "TDX" not in text
    assert "2026/12/4（五）～2026/12/7（一）" in text


def test_search_real_snapshot_unknown_place_and_time_said_not_provided(store):
    ingest_events(store, FileActivitySource(MIXED), now=NOW)
    result = _search(store, "2026-12-20", "社頭")
    assert result["events"][0]["missing_fields"] == ["start_time", "meeting_point"]
    text = _text(render_events(result))
    assert "時間：未提供" in text and "地點：未提供" in text and "快照" not in text


@pytest.mark.parametrize(("age", "stale"), [(timedelta(days=2), False), (timedelta(days=2, seconds=1), True)])
def test_search_real_snapshot_older_than_two_days_says_out_of_date(store, age, stale):
    ingest_events(store, FileActivitySource(MIXED), now=NOW)
    result = _search(store, "2026-12-20", now=NOW + age)
    assert result["source"]["stale"] is stale
    assert ("沒更新，請以主辦單位公告為準" in _text(render_events(result))) is stale


def test_search_without_real_snapshot_falls_back_to_demo_labelled(store):
    result = _search(store, None, "彰化市")
    assert result["demo"] is True and result["source"] is None
    assert all("示範" in _text([message]) for message in render_events(result))


def test_search_store_unreadable_is_unavailable_not_demo():
    class Down:
        def get(self, collection, doc_id):
            raise StoreUnavailable("down")

    with pytest.raises(EventSnapshotMissing):
        snapshots.load_current_snapshot(Down())
    result = search_local_events(None, "彰化市", None, now=NOW,
                                 snapshot_loader=lambda: snapshots.load_current_snapshot(Down()))
    assert result["status"] == "unavailable"


def test_search_version_changed_mid_turn_still_unavailable(store):
    first = ingest_events(store, FileActivitySource(MIXED), now=NOW).snapshot_version
    ingest_events(store, FileActivitySource(GOOD), now=NOW + timedelta(minutes=1))
    result = _search(store, None, expected_version=first)
    assert result["status"] == "unavailable" and result["events"] == []


def test_events_tool_ingest_then_status_prints_one_json_each(store, tmp_path):
    env = {"LOCAL_STORE_URL": f"sqlite:///{store.path}"}
    out = io.StringIO()
    assert events_tool.main(["ingest", "--file", str(MIXED)], environ=env, out=out, clock=lambda: NOW) == 0
    out = io.StringIO()
    assert events_tool.main(["status"], environ=env, out=out, clock=lambda: NOW + timedelta(days=3)) == 0
    status = json.loads(out.getvalue())
    assert status["answers_from"] == "real" and status["source"]["kind"] == "tdx"
    assert status["counts"] == {"received": 5, "kept": 3, "skipped": {"bad_start_time": 1, "out_of_county": 1}}
    assert status["age_seconds"] == 3 * 86400 and status["stale"] is True
    assert status["fetched_at"] == "2026-11-30T02:00:00+00:00"


@pytest.mark.parametrize("name", ["never-made.sqlite3", "sub/dir/never-made.sqlite3"])
def test_events_tool_status_without_a_store_file_creates_none(tmp_path, name):
    path = tmp_path / name
    out = io.StringIO()
    assert events_tool.main(["status"], environ={"LOCAL_STORE_URL": f"sqlite:///{path}"}, out=out,
                            clock=lambda: NOW) == 0
    assert json.loads(out.getvalue())["answers_from"] == "demo"
    assert not path.exists() and not list(tmp_path.rglob("*.sqlite3*"))


def test_events_tool_live_without_credentials_is_a_configuration_error(store):
    out = io.StringIO()
    assert events_tool.main(["ingest"], environ={"LOCAL_STORE_URL": f"sqlite:///{store.path}"}, out=out) == 2
    assert json.loads(out.getvalue())["error"] == "configuration"


def test_search_real_snapshot_every_status_names_source_never_demo(store):
    first = ingest_events(store, FileActivitySource(MIXED), now=NOW).snapshot_version
    ingest_events(store, FileActivitySource(GOOD), now=NOW + timedelta(minutes=1))
    results = {
        "ok": _search(store, None),
        "needs_area": _search(store, None, "附近"),
        "no_match": _search(store, "2026-12-25", "鹿港鎮"),
        "unavailable": _search(store, None, expected_version=first),
    }
    for status, result in results.items():
        assert result["status"] == status and result["demo"] is False
        text = _text(render_events(result))
        assert "示範" not in text, status


def test_search_store_unreadable_reply_claims_no_demo():
    class Down:
        def get(self, collection, doc_id):
            raise StoreUnavailable("down")

    result = search_local_events(None, None, None, now=NOW, snapshot_loader=lambda: snapshots.load_current_snapshot(Down()))
    text = _text(render_events(result))
    assert "正在更新" in text and "示範" not in text


def test_ingest_store_failure_at_commit_writes_nothing_and_keeps_snapshot(tmp_path):
    path = str(tmp_path / "events.sqlite3")
    good = ingest_events(SqliteStore(path, deadline_seconds=2.0), FileActivitySource(MIXED), now=NOW)

    def fail(attempt: int) -> None:
        raise StoreUnavailable("lost the file mid-commit")

    failing = SqliteStore(path, deadline_seconds=2.0, before_commit=fail)
    with pytest.raises(StoreUnavailable):
        ingest_events(failing, FileActivitySource(GOOD), now=NOW + timedelta(hours=1))
    store = SqliteStore(path, deadline_seconds=2.0)
    assert snapshots.read_state(store)["snapshot_version"] == good.snapshot_version
    assert {doc["snapshot_version"] for doc in store.query(snapshots.SNAPSHOTS)} == {good.snapshot_version}
    assert {doc["snapshot_version"] for doc in store.query(snapshots.PARTS)} == {good.snapshot_version}


def test_ingest_two_runs_racing_leave_one_whole_snapshot(tmp_path):
    import threading

    path = str(tmp_path / "events.sqlite3")
    results = {}

    def run(name: str, source_path: Path, minute: int) -> None:
        store = SqliteStore(path, deadline_seconds=5.0)
        results[name] = ingest_events(store, FileActivitySource(source_path), now=NOW + timedelta(minutes=minute))

    threads = [threading.Thread(target=run, args=("mixed", MIXED, 0)),
               threading.Thread(target=run, args=("good", GOOD, 1))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert {result.outcome for result in results.values()} == {"snapshot_written"}
    store = SqliteStore(path, deadline_seconds=2.0)
    current = snapshots.load_current_snapshot(store)
    assert current.snapshot_version in {result.snapshot_version for result in results.values()}
    assert len(current.events) == 3
