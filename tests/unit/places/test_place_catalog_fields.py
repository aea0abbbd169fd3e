"""A place's ``coordinates`` field (null, or a position with a named source) and its address read as Taiwan
writes it (shared/places/catalog.py, shared/address.py)."""
from __future__ import annotations

import json

import pytest

from shared.address import AddressSkip
from shared.places.catalog import DEFAULT_CATALOG_PATH, CatalogInvalid, Coordinates, load_place_catalog
from tests.unit.test_address import READ, SKIPPED


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


def _catalog_with_address(tmp_path, address: str, area: str):
    raw = json.loads(DEFAULT_CATALOG_PATH.read_text(encoding="utf-8"))
    raw["places"][0].update(address=address, area=area)
    path = tmp_path / f"catalog-{area}.json"  # one file per content: loading is cached per path
    path.write_text(json.dumps(raw, ensure_ascii=False), encoding="utf-8")
    return load_place_catalog(path)


@pytest.mark.parametrize(("address", "township", "code"), READ)
def test_place_address_in_every_form_agrees_with_its_township(tmp_path, address, township, code):
    """Every form of the address table (shared/address.py) as a place's address: it loads when its
    area is the township the address names, and is refused when the area says another one."""
    assert _catalog_with_address(tmp_path, address, township).places[0].area == township
    other = "二林鎮" if township != "二林鎮" else "大城鄉"
    with pytest.raises(CatalogInvalid, match="address is in"):
        _catalog_with_address(tmp_path, address, other)


@pytest.mark.parametrize(("address", "reason"), [(text, reason) for text, reason in SKIPPED if text])
def test_place_address_that_names_no_township_keeps_its_sourced_area_unless_another_county(tmp_path, address,
                                                                                            reason):
    if reason is AddressSkip.OTHER_COUNTY:
        with pytest.raises(CatalogInvalid, match="another county"):
            _catalog_with_address(tmp_path, address, "彰化市")
    else:
        assert _catalog_with_address(tmp_path, address, "彰化市").places[0].area == "彰化市"
