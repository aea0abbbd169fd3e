"""A place's ``coordinates`` field: null, or a position with a named source (shared/places/catalog.py)."""
from __future__ import annotations

import json

import pytest

from shared.places.catalog import DEFAULT_CATALOG_PATH, CatalogInvalid, Coordinates, load_place_catalog


def _catalog_with(tmp_path, coordinates) -> object:
    raw = json.loads(DEFAULT_CATALOG_PATH.read_text(encoding="utf-8"))
    raw["places"][0]["coordinates"] = coordinates
    path = tmp_path / "catalog.json"
    path.write_text(json.dumps(raw, ensure_ascii=False), encoding="utf-8")
    return load_place_catalog(path)


def test_shipped_catalog_has_no_coordinates():
    assert all(place.coordinates is None for place in load_place_catalog().places)


def test_sourced_coordinates_are_read_as_a_typed_position(tmp_path):
    catalog = _catalog_with(tmp_path, {"lat": 24.0795, "lng": 120.5412, "source": "john_address"})
    assert catalog.places[0].coordinates == Coordinates(24.0795, 120.5412, "john_address")
    assert "coordinates" not in catalog.places[0].unknown_fields


@pytest.mark.parametrize("coordinates", [
    {"lat": 24.0795, "lng": 120.5412, "source": "a_map_somewhere"},     # not a source of the catalog
    {"lat": 24.0795, "lng": 120.5412},                                  # no source at all
    {"lat": 24.0795, "lng": 120.5412, "source": ""},
    {"lat": 91, "lng": 120.5412, "source": "john_address"},
    {"lat": 24.0795, "lng": -181, "source": "john_address"},
    {"lat": "24.0795", "lng": 120.5412, "source": "john_address"},
    {"lat": True, "lng": 120.5412, "source": "john_address"},
    {"lat": float("nan"), "lng": 120.5412, "source": "john_address"},
    {"lat": 24.0795, "lng": 120.5412, "source": "john_address", "accuracy_m": 5},
    [24.0795, 120.5412],
    "24.0795,120.5412",
])
def test_coordinates_without_a_known_source_or_in_range_degrees_are_refused(tmp_path, coordinates):
    with pytest.raises(CatalogInvalid):
        _catalog_with(tmp_path, coordinates)
