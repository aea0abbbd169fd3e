"""Places snapshots through the store port on every adapter (SQLite file; Firestore emulator where
installed): a curated list and a TDX file merge into one snapshot that reads back, the newest wins and
old ones are pruned (docs/design.md §5)."""
from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

import pytest

from shared.clock import TAIPEI
from shared.places import snapshots
from shared.places.ingest import ingest_curated, ingest_restaurants
from tests.contract.test_store_contract import ADAPTERS  # firestore_emulator_host: tests/conftest.py
from tests.unit.places.test_places_import import FileRestaurants, _tdx_file, restaurant

TEMPLATE = Path(__file__).resolve().parents[2] / "data" / "places-template.csv"
NOW = datetime(2026, 10, 5, 10, 0, tzinfo=TAIPEI)


@pytest.fixture(params=sorted(ADAPTERS))
def store(request, tmp_path):
    return ADAPTERS[request.param](request, tmp_path)()


def test_places_snapshot_contract_layers_merge_read_back_and_prune(store, tmp_path):
    versions = [ingest_curated(store, TEMPLATE, now=NOW).catalog_version]
    for n in range(snapshots.KEEP_SNAPSHOTS):
        records = [restaurant("C3_1", f"員林蔬食坊{n}", "彰化縣員林市中山路二段1號", cls="素食")]
        result = ingest_restaurants(store, FileRestaurants(_tdx_file(tmp_path, records)), now=NOW + timedelta(minutes=n + 1))
        versions.append(result.catalog_version)
    catalog = snapshots.load_current_catalog(store)
    assert catalog.catalog_version == versions[-1]
    names = [place.name for place in catalog.places]
    assert names[:4] == ["John手作蔬食", "和米素食", "範例蔬食小館", "範例素食便當"]
    assert names[4] == f"員林蔬食坊{snapshots.KEEP_SNAPSHOTS - 1}"
    assert catalog.places[3].coordinates is not None and catalog.places[4].coordinates.source == "tdx_restaurants"
    kept = sorted(doc["catalog_version"] for doc in store.query(snapshots.SNAPSHOTS))
    assert kept == sorted(versions[1:])
