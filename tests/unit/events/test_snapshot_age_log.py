"""The events snapshot's age after an ingest run (shared/events/ingest.py ``log_snapshot_age``): logged
after every run, and ``events snapshot stale`` (an alert, infra/monitoring.tf) once the source has not
confirmed the data for longer than the residents' replies call fresh; on a real SQLite file."""
from __future__ import annotations

import json
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from shared.clock import TAIPEI
from shared.events.file_source import FileActivitySource
from shared.events.ingest import ingest_events, log_snapshot_age
from shared.events.search import search_local_events
from shared.events.snapshots import load_current_snapshot
from shared.events.source import Fetched, SourceUnavailable
from shared.replies.events import render_events
from shared.store.sqlite import SqliteStore

GOOD = Path(__file__).resolve().parents[2] / "fixtures" / "tdx" / "changhua-activities.json"
NOW = datetime(2026, 11, 30, 10, 0, tzinfo=TAIPEI)
TWO_DAYS = 172800.0


class FailingSource:
    kind, name = "tdx", "TDX"

    def fetch(self, *, if_modified_since=None) -> Fetched:
        raise SourceUnavailable("http_500")


@pytest.fixture
def store(tmp_path) -> SqliteStore:
    return SqliteStore(str(tmp_path / "events.sqlite3"), deadline_seconds=2.0)


@pytest.fixture
def lines(caplog):
    from shared.logs import configure

    configure()  # the project's handler first, so that caplog's sees the lines too
    caplog.set_level("INFO", logger="local")
    return lambda: [(r.getMessage(), r.fields) for r in caplog.records]


def _stale_in_reply(store, now) -> bool:
    """The residents' events reply says the data may be out of date."""
    result = search_local_events("2026-12-20", None, None, now=now, stale_after_seconds=TWO_DAYS,
                                 snapshot_loader=lambda: load_current_snapshot(store))
    return "沒更新，請以主辦單位公告為準" in json.dumps([m.to_dict() for m in render_events(result)], ensure_ascii=False)


def test_snapshot_age_is_logged_after_each_run_and_stale_only_past_the_residents_limit(store, lines):
    ingest_events(store, FileActivitySource(GOOD), now=NOW)
    day_later = NOW + timedelta(days=1)
    ingest_events(store, FailingSource(), now=day_later)
    fresh = log_snapshot_age(store, now=day_later, stale_after_seconds=TWO_DAYS)
    assert (fresh["age_seconds"], fresh["stale"]) == (86400.0, False) and not _stale_in_reply(store, day_later)
    assert [m for m, _ in lines()].count("events snapshot stale") == 0
    three_days_later = NOW + timedelta(days=3)
    ingest_events(store, FailingSource(), now=three_days_later)
    stale = log_snapshot_age(store, now=three_days_later, stale_after_seconds=TWO_DAYS)
    assert stale["stale"] and _stale_in_reply(store, three_days_later)  # the alert and the residents agree
    [(_, fields)] = [(m, f) for m, f in lines() if m == "events snapshot stale"]
    assert fields["age_seconds"] == 3 * 86400.0
    ages = [f["age_seconds"] for m, f in lines() if m == "events snapshot age"]
    assert ages == [86400.0, 3 * 86400.0]


def test_snapshot_age_with_only_demo_data_or_an_unreadable_store_never_raises(store, tmp_path, lines):
    assert log_snapshot_age(store, now=NOW, stale_after_seconds=TWO_DAYS)["answers_from"] == "demo"
    broken = SqliteStore(str(tmp_path / "ro.sqlite3"), deadline_seconds=0.5, read_only=True)
    assert log_snapshot_age(broken, now=NOW, stale_after_seconds=TWO_DAYS) is None
    assert "events snapshot age unknown" in [m for m, _ in lines()]
    assert "events snapshot stale" not in [m for m, _ in lines()]
