"""Events snapshots through the store port on every adapter (SQLite file; Firestore emulator where
installed): ingest, read back, keep the last good snapshot on a failure, prune (docs/design.md §5)."""
from __future__ import annotations

import json
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from shared.clock import TAIPEI
from shared.events import snapshots
from shared.events.file_source import FileActivitySource
from shared.events.ingest import ingest_events
from tests.contract.test_store_contract import ADAPTERS  # firestore_emulator_host: tests/conftest.py

MIXED = Path(__file__).resolve().parents[1] / "fixtures" / "tdx" / "mixed-validity.json"
NOW = datetime(2026, 11, 30, 10, 0, tzinfo=TAIPEI)


@pytest.fixture(params=sorted(ADAPTERS))
def store(request, tmp_path):
    return ADAPTERS[request.param](request, tmp_path)()


def test_events_snapshot_contract_ingest_roundtrips(store):
    result = ingest_events(store, FileActivitySource(MIXED), now=NOW)
    snapshot = snapshots.load_current_snapshot(store)
    assert snapshot.snapshot_version == result.snapshot_version and not snapshot.demo
    by_id = {event.id: event for event in snapshot.events}
    multi = by_id["tdx-C2_376000000A_000204"]
    assert (multi.area, multi.date.isoformat(), multi.last_day.isoformat()) == ("花壇鄉", "2026-12-04", "2026-12-07")
    assert "蔬食" in multi.tags and multi.source_updated_at == "2026-11-28T16:20:00+08:00"
    assert snapshot.checked_at == NOW


def test_events_snapshot_contract_failure_keeps_snapshot_and_prunes_old(store, tmp_path):
    records = json.loads(MIXED.read_text(encoding="utf-8"))
    versions = []
    for n in range(snapshots.KEEP_SNAPSHOTS + 1):
        records[0]["ActivityName"] = f"員林百果山健走 第{n}梯"
        path = tmp_path / f"v{n}.json"
        path.write_text(json.dumps(records, ensure_ascii=False), encoding="utf-8")
        versions.append(ingest_events(store, FileActivitySource(path), now=NOW + timedelta(minutes=n)).snapshot_version)
    missing = FileActivitySource(tmp_path / "missing.json")
    assert ingest_events(store, missing, now=NOW + timedelta(hours=1)).reason == "file_unreadable"
    assert snapshots.load_current_snapshot(store).snapshot_version == versions[-1]
    kept = sorted(doc["snapshot_version"] for doc in store.query(snapshots.SNAPSHOTS))
    assert kept == sorted(versions[1:])
