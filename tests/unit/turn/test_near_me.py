"""Near me (shared/turn/near_me.py): a shared LINE location answered through signed webhook bodies (in-process
WebhookService, real SQLite file, the LINE stand-in): the nearest shops with sourced coordinates and their
straight-line distance, Taichung's city centre told it is outside the county, the shipped catalog (no
coordinates) naming its townships; 附近… within 30 minutes answered from the kept location; the location kept
as personal data (never logged, listed by the export, deleted by a forget)."""
from __future__ import annotations

import json
import logging
from datetime import datetime, timedelta, timezone

import pytest
from geographiclib.geodesic import Geodesic

from shared.events.file_source import FileActivitySource
from shared.events.ingest import ingest_events
from shared.places import catalog as catalog_module
from shared.places.catalog import DEFAULT_CATALOG_PATH, load_place_catalog
from shared.places.search import areas_with_places
from tests.conftest import FixedClock, all_text, location_event, reply_messages, text_event
from tests.memory_support import webhook_with_memory
from tests.unit.webhook.test_privacy_store import user_data
from tools import reply_budget
from tools.line_messages import postbacks

PINNED = datetime(2026, 11, 30, 2, 0, tzinfo=timezone.utc)  # Monday 10:00 Asia/Taipei
CHANGHUA_STATION = (24.0818, 120.5386)
TAICHUNG_CENTRE = (24.1477, 120.6736)
JOHN = (24.0795, 120.5412)   # a test position for John手作蔬食 (彰化市華山路)
HEMI = (24.0295, 120.5385)   # a test position for the 花壇鄉 shop
FIXTURES = DEFAULT_CATALOG_PATH.parents[1] / "tests" / "fixtures" / "tdx"
pytestmark = pytest.mark.sqlite


@pytest.fixture
def clock():
    return FixedClock(PINNED)


@pytest.fixture
def service(base_env, clock):
    return webhook_with_memory(base_env, clock)


@pytest.fixture
def located_catalog(tmp_path, monkeypatch):
    """The shipped catalog with test positions for both shops, from a test source: LOCAL reads it as its
    catalog (``shared.places.catalog.DEFAULT_CATALOG_PATH``) for the test."""
    raw = json.loads(DEFAULT_CATALOG_PATH.read_text(encoding="utf-8"))
    raw["sources"]["test_positions"] = {"url": "https://example.org/positions", "kind": "government_business_record",
                                        "accessed_on": "2026-09-27", "scope": "test positions of the shops"}
    for place, (lat, lng) in zip(raw["places"], (JOHN, HEMI)):
        place["coordinates"] = {"lat": lat, "lng": lng, "source": "test_positions"}
    path = tmp_path / "located-catalog.json"
    path.write_text(json.dumps(raw, ensure_ascii=False), encoding="utf-8")
    monkeypatch.setattr(catalog_module, "DEFAULT_CATALOG_PATH", path)
    return raw


def _distance_words(a: tuple[float, float], b: tuple[float, float]) -> str:
    """What a card says for the distance, from GeographicLib directly: metres to 10 under 1 km, else km to 0.1."""
    metres = Geodesic.WGS84.Inverse(*a, *b)["s12"]
    return f"直線約 {int(round(metres, -1))} 公尺" if metres < 995 else f"直線約 {metres / 1000:.1f} 公里"


def _cards(messages: list[dict]) -> list[dict]:
    return [bubble for message in messages if message["type"] == "flex" for bubble in reply_budget.bubbles(message)]


def _quick_labels(messages: list[dict]) -> list[str]:
    return [item["action"].get("label") for item in (messages[-1].get("quickReply") or {}).get("items", [])]


def _quick_types(messages: list[dict]) -> list[str]:
    return [item["action"]["type"] for item in (messages[-1].get("quickReply") or {}).get("items", [])]


def test_location_near_a_located_shop_lists_it_first_with_its_straight_line_distance(service, line_standin,
                                                                                     located_catalog):
    messages = reply_messages(service, line_standin, location_event(*CHANGHUA_STATION))
    assert [message["type"] for message in messages] == ["text", "flex"]
    first, second = _cards(messages)
    first_words, second_words = all_text([{"type": "flex", "altText": "", "contents": first}]), all_text(
        [{"type": "flex", "altText": "", "contents": second}])
    assert "John手作蔬食" in first_words and _distance_words(CHANGHUA_STATION, JOHN) in first_words
    assert "公尺" in _distance_words(CHANGHUA_STATION, JOHN)  # a few hundred metres: said in metres
    assert _distance_words(CHANGHUA_STATION, HEMI) in second_words and "公里" in second_words
    assert "營業時間" in first_words
    assert messages[0]["text"].startswith("資料來源：")
    assert reply_budget.problems(messages, names=reply_budget.data_names()) == []


def test_location_listing_says_straight_line_once_and_offers_next_steps(service, line_standin, located_catalog):
    messages = reply_messages(service, line_standin, location_event(*CHANGHUA_STATION))
    words = "".join(message.get("text", "") for message in messages) + json.dumps(
        _cards(messages), ensure_ascii=False)
    assert words.count("直線距離") == 1 and words.count("不是步行路線") == 1
    assert _quick_labels(messages) == ["彰化市", "花壇鄉", "查活動", "選單"]
    assert reply_budget.problems(messages, names=reply_budget.data_names()) == []


def test_near_shops_asked_after_sharing_offers_the_listed_townships(service, line_standin, located_catalog):
    reply_messages(service, line_standin, location_event(*JOHN))
    messages = reply_messages(service, line_standin, text_event("附近有素食嗎"))
    assert all_text(messages).count("不是步行路線") == 1
    assert _quick_labels(messages)[-2:] == ["查活動", "選單"] and "彰化市" in _quick_labels(messages)


def test_location_lists_at_most_five_and_only_within_the_limit(service, line_standin, located_catalog, tmp_path,
                                                              monkeypatch):
    raw = located_catalog
    template = raw["places"][0]
    raw["places"] = [{**template, "id": f"test-{n}", "name": f"測試蔬食{n}",
                      "coordinates": {"lat": CHANGHUA_STATION[0] + n * 0.002, "lng": CHANGHUA_STATION[1],
                                      "source": "test_positions"}} for n in range(7)]
    raw["places"].append({**template, "id": "test-far", "name": "很遠的店", "area": "二林鎮", "address": "彰化縣二林鎮",
                          "coordinates": {"lat": 23.8998, "lng": 120.3748, "source": "test_positions"}})
    path = tmp_path / "seven.json"
    path.write_text(json.dumps(raw, ensure_ascii=False), encoding="utf-8")
    monkeypatch.setattr(catalog_module, "DEFAULT_CATALOG_PATH", path)
    messages = reply_messages(service, line_standin, location_event(*CHANGHUA_STATION))
    names = [all_text([{"type": "flex", "altText": "", "contents": card}]) for card in _cards(messages)]
    assert len(names) == 5 and all(f"測試蔬食{n}" in names[n] for n in range(5))
    assert "很遠的店" not in all_text(messages)


def test_location_in_the_county_far_from_every_located_shop_says_none_is_near(service, line_standin,
                                                                              located_catalog):
    erlin = (23.8998, 120.3748)  # 二林: both test shops are more than 15 km away
    messages = reply_messages(service, line_standin, location_event(*erlin))
    words = all_text(messages)
    assert [message["type"] for message in messages] == ["text"]
    assert "15 公里內" in words and _distance_words(erlin, HEMI) in words  # how far the nearest one is
    assert "John手作蔬食" not in words and _quick_types(messages)[0] == "location"
    assert reply_budget.problems(messages) == []


def test_location_from_taichung_city_centre_says_it_is_outside_the_county(service, line_standin,
                                                                          located_catalog):
    messages = reply_messages(service, line_standin, location_event(*TAICHUNG_CENTRE))
    words = all_text(messages)
    assert [message["type"] for message in messages] == ["text"]
    assert "不在彰化縣" in words and "John手作蔬食" not in words and "公里" not in words
    assert _quick_types(messages)[0] == "location"
    assert reply_budget.problems(messages) == []


def test_location_with_the_shipped_catalog_names_the_townships_that_have_shops(service, line_standin):
    assert all(place.coordinates is None for place in load_place_catalog().places)
    messages = reply_messages(service, line_standin, location_event(*CHANGHUA_STATION))
    words = all_text(messages)
    townships = areas_with_places()
    assert townships and all(township in words for township in townships)
    assert "地圖位置" in words and "公尺" not in words and "公里" not in words  # no distance invented
    assert _quick_labels(messages) == ["分享我的位置", *townships]
    assert [postbacks(messages)[township] for township in townships] == [f"places:area={t}" for t in townships]
    assert reply_budget.problems(messages) == []


def test_location_help_of_the_terminal_chat_and_the_docs_promise_only_what_the_shipped_catalog_answers():
    from tools.chat import HELP

    assert all(place.coordinates is None for place in load_place_catalog().places)
    assert "內建的店家名單沒有位置" in HELP and "列出有店家的鄉鎮" in HELP
    docs = (DEFAULT_CATALOG_PATH.parents[1] / "docs" / "configuration.md").read_text(encoding="utf-8")
    line = next(row for row in docs.splitlines() if row.startswith("| `/location"))
    assert "only when the catalog has sourced positions" in line and "shipped catalog has none" in line


def test_location_address_from_line_names_its_township(service, line_standin):
    messages = reply_messages(service, line_standin, location_event(*CHANGHUA_STATION,
                                                                    address="500台灣彰化縣彰化市中正路一段"))
    assert "你分享的位置在彰化市" in all_text(messages)
    yuanlin = reply_messages(service, line_standin, location_event(23.9597, 120.5745, address="彰化縣 510員林市"))
    assert "你分享的位置在員林市，那裡目前沒有店家資料" in all_text(yuanlin)


@pytest.mark.parametrize("where", [(91.0, 120.5), (24.0, 181.0), (float("nan"), 120.5)])
def test_location_that_is_not_a_position_gets_a_kind_reply(service, line_standin, where):
    messages = reply_messages(service, line_standin, location_event(*where))
    assert "讀不出來" in all_text(messages) and _quick_types(messages) == ["location"]


def test_near_events_after_sharing_a_location_use_the_events_own_positions(service, line_standin):
    ingest_events(service.store, FileActivitySource(FIXTURES / "changhua-activities.json"), now=PINNED)
    reply_messages(service, line_standin, location_event(*CHANGHUA_STATION))
    messages = reply_messages(service, line_standin, text_event("附近有什麼活動"))
    assert [message["type"] for message in messages] == ["text", "flex"]
    cards = _cards(messages)
    assert cards and "彰化藝術館常設展" in all_text([{"type": "flex", "altText": "", "contents": cards[0]}])
    assert _distance_words(CHANGHUA_STATION, (24.08, 120.54)) in all_text(messages)
    assert all_text(messages).count("不是步行路線") == 1 and "資料來源：" in messages[0]["text"]
    assert _quick_labels(messages)[-2:] == ["查蔬食", "選單"] and "彰化市" in _quick_labels(messages)
    assert reply_budget.problems(messages, names=reply_budget.data_names()) == []


def test_near_events_with_a_snapshot_without_positions_says_so(service, line_standin):
    reply_messages(service, line_standin, location_event(*CHANGHUA_STATION))
    messages = reply_messages(service, line_standin, text_event("附近有什麼活動"))
    words = all_text(messages)
    assert "沒有記錄活動的地圖位置" in words and "示範資料" in words and "公里" not in words
    assert _quick_types(messages)[0] == "location"


@pytest.mark.parametrize("text", ["附近有全素的店嗎", "這邊有素食嗎"])
def test_near_shops_asked_after_sharing_a_location(service, line_standin, located_catalog, text):
    reply_messages(service, line_standin, location_event(*CHANGHUA_STATION))
    messages = reply_messages(service, line_standin, text_event(text))
    assert _distance_words(CHANGHUA_STATION, JOHN) in all_text(messages)


def test_near_without_a_shared_location_offers_the_location_button(service, line_standin, clock):
    for text in ("附近有什麼活動", "附近有素食嗎"):
        messages = reply_messages(service, line_standin, text_event(text))
        assert "分享我的位置" in _quick_labels(messages), text
        assert "分享我的位置" in messages[-1]["text"], text
    reply_messages(service, line_standin, location_event(*CHANGHUA_STATION))
    clock.at = PINNED + timedelta(minutes=31)  # the shared location is kept 30 minutes
    messages = reply_messages(service, line_standin, text_event("附近有什麼活動"))
    assert "想查哪個鄉鎮的活動" in all_text(messages) and "分享我的位置" in _quick_labels(messages)


def test_pickers_offer_the_location_button(service, line_standin):
    for entry in ("查蔬食", "查活動"):
        messages = reply_messages(service, line_standin, text_event(entry))
        assert "location" in _quick_types(messages) and len(_quick_types(messages)) <= 13, entry


def test_shared_location_is_never_logged_is_exported_and_forgotten(service, line_standin, base_env, caplog):
    caplog.set_level(logging.INFO, logger="local")
    reply_messages(service, line_standin, location_event(24.08183, 120.53861, address="500彰化縣彰化市中正路"))
    logged = json.dumps([getattr(record, "fields", {}) for record in caplog.records], ensure_ascii=False)
    assert "24.08" not in logged and "120.53" not in logged and "中正路" not in logged
    [kept] = [state for state in user_data(base_env)["conversations"] if "location" in state]
    assert kept["location"] == {"lat": 24.0818, "lng": 120.5386}  # rounded to about 11 m
    assert kept["expire_at"].startswith("2026-11-30T02:30:00")
    reply_messages(service, line_standin, text_event("忘記我的飲食偏好"))
    assert [state for state in user_data(base_env)["conversations"] if "location" in state] == []


def test_location_card_shows_recorded_hours_and_does_not_call_them_missing(service, line_standin, located_catalog,
                                                                           tmp_path, monkeypatch):
    raw = located_catalog
    raw["places"][0].update(hours="週二至週日 11:00–20:00")
    raw["places"][0]["field_sources"]["hours"] = "test_positions"
    path = tmp_path / "with-hours.json"
    path.write_text(json.dumps(raw, ensure_ascii=False), encoding="utf-8")
    monkeypatch.setattr(catalog_module, "DEFAULT_CATALOG_PATH", path)
    messages = reply_messages(service, line_standin, location_event(*CHANGHUA_STATION))
    john, hemi = (all_text([{"type": "flex", "altText": "", "contents": card}]) for card in _cards(messages))
    assert "營業時間：週二至週日 11:00–20:00" in john and "沒有營業時間" not in john
    assert "沒有營業時間" in hemi  # the other shop's hours are not recorded, and it says so
    assert reply_budget.problems(messages, names=reply_budget.data_names()) == []


def test_near_shops_of_a_diet_no_located_shop_lists_say_so_not_that_no_shop_is_located(service, line_standin,
                                                                                       located_catalog, tmp_path,
                                                                                       monkeypatch):
    raw = located_catalog
    raw["places"][0]["coordinates"] = None  # only 和米素食 (蔬食, no finer kind listed) has a position
    path = tmp_path / "hemi-only.json"
    path.write_text(json.dumps(raw, ensure_ascii=False), encoding="utf-8")
    monkeypatch.setattr(catalog_module, "DEFAULT_CATALOG_PATH", path)
    reply_messages(service, line_standin, location_event(*HEMI))
    words = all_text(reply_messages(service, line_standin, text_event("附近有全素的店嗎")))
    assert "還沒有記錄店家的地圖位置" not in words and "沒有列全素的店家" in words
    assert "公里" not in words and "公尺" not in words
    assert "和米素食" in all_text(reply_messages(service, line_standin, text_event("附近有素食嗎")))
