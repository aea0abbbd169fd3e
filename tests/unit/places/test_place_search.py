"""search_local_places and the place catalog (docs/design.md §5)."""

from __future__ import annotations

import copy
import json
from datetime import datetime, timezone

import pytest

from shared.areas import UnknownArea
from shared.clock import TAIPEI
from shared.places.catalog import (
    DEFAULT_CATALOG_PATH,
    UNKNOWABLE_FIELDS,
    CatalogInvalid,
    CatalogMissing,
    load_place_catalog,
)
from shared.places.search import DIETARY_TYPES, UnknownDietaryType, search_local_places

JOHN = "vegfest2026-01"
HEMI = "vegfest2026-22"
STRICT_TYPES = ("vegan", "ovo_lacto", "lacto")
DURING = datetime(2026, 9, 1, 12, 0, tzinfo=TAIPEI)
AFTER = datetime(2026, 11, 30, 12, 0, tzinfo=TAIPEI)


def _ids(result: dict) -> set[str]:
    return {place["id"] for place in result["places"]}


def _raw_catalog() -> dict:
    return json.loads(DEFAULT_CATALOG_PATH.read_text(encoding="utf-8"))


def _write(tmp_path, raw: dict):
    path = tmp_path / "catalog.json"
    path.write_text(json.dumps(raw, ensure_ascii=False), encoding="utf-8")
    return path


@pytest.mark.parametrize(("now", "state"), [
    (datetime(2026, 7, 31, 23, 59, 59, tzinfo=TAIPEI), "not_started"),
    (datetime(2026, 8, 1, 0, 0, 0, tzinfo=TAIPEI), "active_by_announcement"),
    (datetime(2026, 9, 30, 16, 59, 59, tzinfo=TAIPEI), "active_by_announcement"),
    (datetime(2026, 9, 30, 17, 0, 0, tzinfo=TAIPEI), "ended"),
    (datetime(2026, 9, 30, 8, 59, 59, tzinfo=timezone.utc), "active_by_announcement"),
    (datetime(2026, 9, 30, 9, 0, 0, tzinfo=timezone.utc), "ended"),
])
def test_search_places_campaign_boundary_gives_state(now, state):
    assert search_local_places("花壇鄉", None, None, now=now)["campaign_state"] == state


def test_search_places_naive_now_raises_value_error():
    with pytest.raises(ValueError):
        search_local_places("花壇鄉", None, None, now=datetime(2026, 9, 30, 17, 0))


def test_search_places_after_campaign_end_still_finds_places():
    result = search_local_places("花壇", "vegetarian", None, now=AFTER)
    assert result["campaign_state"] == "ended"
    assert (result["status"], _ids(result), result["total"]) == ("ok", {HEMI}, 1)


@pytest.mark.parametrize("dietary_type", STRICT_TYPES)
@pytest.mark.parametrize("area", ["花壇鄉", "花壇", "彰化市"])
def test_search_places_hemi_strict_type_never_matches(area, dietary_type):
    result = search_local_places(area, dietary_type, None, now=DURING)
    assert HEMI not in _ids(result)


def test_search_places_hemi_strict_type_in_huatan_is_no_match():
    result = search_local_places("花壇鄉", "ovo_lacto", None, now=DURING)
    assert result["status"] == "no_match" and result["places"] == [] and result["total"] == 0
    assert result["query"] == {"area": "花壇鄉", "dietary_type": "ovo_lacto", "keyword": None}


@pytest.mark.parametrize("dietary_type", ["vegetarian", "any", None])
def test_search_places_hemi_vegetarian_or_any_matches(dietary_type):
    result = search_local_places("花壇", dietary_type, None, now=DURING)
    assert result["status"] == "ok" and _ids(result) == {HEMI}


@pytest.mark.parametrize("dietary_type", ["vegan", "vegetarian", "ovo_lacto", "lacto", "any"])
def test_search_places_john_matches_types_with_evidence(dietary_type):
    assert _ids(search_local_places("彰化市", dietary_type, None, now=DURING)) == {JOHN}


@pytest.mark.parametrize("dietary_type", [*DIETARY_TYPES, None])
@pytest.mark.parametrize("keyword", [None, "John", "華山路"])
def test_search_places_huatan_never_returns_john(dietary_type, keyword):
    assert JOHN not in _ids(search_local_places("花壇", dietary_type, keyword, now=DURING))


def test_search_places_name_with_su_without_evidence_is_not_vegetarian(tmp_path):
    raw = _raw_catalog()
    shop = copy.deepcopy(raw["places"][1])
    shop.update(id="test-su", name="素素小館", dietary_options=[], dietary_evidence={})
    raw["places"].append(shop)
    catalog = load_place_catalog(_write(tmp_path, raw))
    assert "test-su" not in _ids(search_local_places("花壇鄉", "vegetarian", None, now=DURING, catalog=catalog))
    assert "test-su" in _ids(search_local_places("花壇鄉", "any", None, now=DURING, catalog=catalog))


def test_search_places_unknown_fields_are_null_and_listed():
    result = search_local_places("彰化市", None, None, now=DURING)
    assert result["unknown_fields"] == list(UNKNOWABLE_FIELDS)
    (place,) = result["places"]
    assert all(place[field] is None for field in UNKNOWABLE_FIELDS)
    assert place["unknown_fields"] == list(UNKNOWABLE_FIELDS)


def test_search_places_sources_resolved_for_fields_and_evidence():
    (place,) = search_local_places("彰化市", "vegan", None, now=DURING)["places"]
    address = place["field_sources"]["address"]
    assert (address["kind"], address["accessed_on"]) == ("government_business_record", "2026-09-27")
    assert address["url"].startswith("https://")
    assert place["field_sources"]["name"]["kind"] == "official_poster"
    assert place["dietary_evidence"]["vegan"]["kind"] == "merchant_menu_on_platform"
    assert place["dietary_evidence"]["vegetarian"]["kind"] == "official_poster"


@pytest.mark.parametrize("area", [None, "附近", "這附近", "集合點附近", "彰化", "彰化縣", " "])
def test_search_places_missing_or_vague_area_needs_area(area):
    result = search_local_places(area, "vegan", None, now=DURING)
    assert result["status"] == "needs_area" and result["places"] == []
    assert result["area_choices"] == ["彰化市", "花壇鄉"]
    assert result["query"]["area"] is None


def test_search_places_unknown_dietary_type_raises():
    with pytest.raises(UnknownDietaryType):
        search_local_places("花壇鄉", "pescatarian", None, now=DURING)
    assert issubclass(UnknownDietaryType, ValueError)


def test_search_places_unknown_area_raises():
    with pytest.raises(UnknownArea):
        search_local_places("台北市", None, None, now=DURING)


@pytest.mark.parametrize("keyword", ["店", "餐廳", "吃", "素食", " "])
def test_search_places_generic_keyword_is_dropped(keyword):
    result = search_local_places("花壇", None, keyword, now=DURING)
    assert result["query"]["keyword"] is None and _ids(result) == {HEMI}


def test_search_places_keyword_without_match_is_no_match_with_choices():
    result = search_local_places("彰化市", None, "拉麵", now=DURING)
    assert result["status"] == "no_match" and result["area_choices"] == ["彰化市", "花壇鄉"]


def test_search_places_keyword_matches_name_case_insensitively():
    assert _ids(search_local_places("彰化市", None, "john", now=DURING)) == {JOHN}


def test_search_places_version_changed_is_unavailable():
    result = search_local_places("花壇鄉", None, None, now=DURING, expected_version="places-1999-01-01.1")
    assert result["status"] == "unavailable" and result["places"] == [] and result["catalog_version"] is None


def test_search_places_same_version_is_ok():
    version = load_place_catalog().catalog_version
    assert search_local_places("花壇鄉", None, None, now=DURING, expected_version=version)["status"] == "ok"


def test_load_place_catalog_same_path_is_cached():
    assert load_place_catalog() is load_place_catalog(DEFAULT_CATALOG_PATH)


def test_load_place_catalog_missing_file_raises_catalog_missing(tmp_path):
    with pytest.raises(CatalogMissing):
        load_place_catalog(tmp_path / "absent.json")


@pytest.mark.parametrize("break_it", [
    lambda raw: raw["places"][0]["field_sources"].update(phone="nowhere"),
    lambda raw: raw["places"][0].update(area="台北市"),
    lambda raw: raw["places"][0].pop("hours"),
    lambda raw: raw["places"][1].update(dietary_options=["vegetarian", "vegan"]),
    lambda raw: raw["places"][1].update(dietary_evidence={"vegetarian": "festival_list", "fish": "festival_list"},
                                        dietary_options=["vegetarian", "fish"]),
    lambda raw: raw["campaign"].update(ends_at="2026-09-30T17:00:00"),
    lambda raw: raw["campaign"].update(end_is_exclusive=False),
    lambda raw: raw["places"][1].update(id=raw["places"][0]["id"]),
])
def test_load_place_catalog_contract_broken_raises_catalog_invalid(tmp_path, break_it):
    raw = _raw_catalog()
    break_it(raw)
    with pytest.raises(CatalogInvalid):
        load_place_catalog(_write(tmp_path, raw))


def test_place_catalog_file_keeps_unknown_fields_as_null():
    for place in _raw_catalog()["places"]:
        assert {field: place[field] for field in UNKNOWABLE_FIELDS} == dict.fromkeys(UNKNOWABLE_FIELDS)
        assert set(place["dietary_options"]) == set(place["dietary_evidence"])
