"""Places snapshots from an operator's list and TDX's restaurants, on a real SQLite file (docs/design.md §5,
docs/data.md): the template ingests, bad rows are skipped and counted, a TDX file in the API's own shape merges
with a curated row field by field, strict diets stay strict, the newest snapshot answers, the shipped
catalog is the fallback, and imported shops are found by name."""
from __future__ import annotations

import csv
import io
import json
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from shared.clock import TAIPEI
from shared.places import snapshots
from shared.places.catalog import DEFAULT_CATALOG_PATH, load_place_catalog
from shared.places.curated import COLUMNS, read_curated
from shared.places.ingest import RestaurantsFetched, ingest_curated, ingest_restaurants
from shared.places.search import place_close_to, places_named_in, search_local_places
from shared.replies.places import render_places
from shared.store.sqlite import SqliteStore
from shared.text import reading_form
from tools import places as places_tool
from tools import reply_budget

REPO = Path(__file__).resolve().parents[3]
TEMPLATE = REPO / "data" / "places-template.csv"
NOW = datetime(2026, 10, 5, 10, 0, tzinfo=TAIPEI)
LIST = {"list_name": "員林鎮公所調查", "list_url": "https://www.yuanlin.gov.tw/veg-survey", "accessed_on": "2026-10-01"}


@pytest.fixture
def store(tmp_path) -> SqliteStore:
    return SqliteStore(str(tmp_path / "places.sqlite3"), deadline_seconds=2.0)


def _csv(tmp_path, rows: list[dict], name: str = "list.csv", columns=COLUMNS) -> Path:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(columns))
    writer.writeheader()
    writer.writerows([{**LIST, **row} for row in rows])
    path = tmp_path / name
    path.write_text(out.getvalue(), encoding="utf-8")
    return path


def restaurant(rid: str, name: str, address: str, *, cls: str = "異國料理", phone: str = "886-4-8360000",
               city: str = "彰化縣", lat: float = 23.958, lng: float = 120.574) -> dict:
    """One record in the shape TDX's ``/v2/Tourism/Restaurant/{City}`` answers (RestaurantTourismInfo)."""
    return {"RestaurantID": rid, "RestaurantName": name, "Description": "店家簡述", "Address": address,
            "ZipCode": "510", "Phone": phone, "OpenTime": "11:00-20:00", "WebsiteUrl": "",
            "Picture": {}, "Position": {"PositionLon": lng, "PositionLat": lat, "GeoHash": "wsj"},
            "Class": cls, "City": city, "SrcUpdateTime": "2026-09-01T01:00:00+08:00",
            "UpdateTime": "2026-09-02T02:00:00+08:00"}


def _tdx_file(tmp_path, records: list) -> Path:
    path = tmp_path / "restaurants.json"
    path.write_text(json.dumps(records, ensure_ascii=False), encoding="utf-8")
    return path


class FileRestaurants:
    def __init__(self, path: Path):
        self.path = path
        self.seen: list[str | None] = []

    def fetch(self, *, if_modified_since=None) -> RestaurantsFetched:
        self.seen.append(if_modified_since)
        return RestaurantsFetched(json.loads(self.path.read_text(encoding="utf-8")), "Thu, 01 Oct 2026 00:00:00 GMT",
                                  f"file:{self.path.name}")


def _search(store, area, diet="vegetarian", keyword=None):
    with snapshots.scope_for_store(store):
        return search_local_places(area, diet, keyword, now=NOW)


def _names(result) -> list[str]:
    return [place["name"] for place in result["places"]]


def _json(messages) -> list[dict]:
    return [message.to_dict() for message in messages]


def _card_lines(messages) -> list[list[str]]:
    flex = _json(messages)[1]
    return [[item["text"] for item in bubble["body"]["contents"] if item.get("type") == "text"]
            for bubble in reply_budget.bubbles(flex)]


# -- the template and the curated list ----------------------------------------------------------------------

def test_places_import_template_ingests_and_yuanlin_answers_from_it_with_its_list_named(store):
    result = ingest_curated(store, TEMPLATE, now=NOW)
    assert result.outcome == "snapshot_written" and result.counts["skipped"] == {}
    answer = _search(store, "員林")
    assert answer["status"] == "ok" and set(_names(answer)) == {"範例蔬食小館", "範例素食便當"}
    messages = render_places(answer)
    assert _json(messages)[0]["text"].startswith("資料來源：範例店家名單，2026/9/27 查閱")
    names = frozenset(word.lower() for name in _names(answer) for word in name.split())
    assert reply_budget.problems(_json(messages), names=names) == []


def _warnings(caplog) -> dict[str, list[str]]:
    """The import's WARNING logs (stderr): message → the shops it names."""
    return {record.getMessage(): getattr(record, "fields", {}).get("shops", []) for record in caplog.records
            if record.levelname == "WARNING"}


def test_places_import_template_keeps_the_real_shipped_shops_and_warns_of_its_example_rows(store, caplog):
    caplog.set_level("INFO", logger="local")
    shipped = {(place.name, place.area) for place in load_place_catalog().places}
    result = ingest_curated(store, TEMPLATE, now=NOW)
    assert result.as_dict()["no_longer_listed"] == 0 and result.as_dict()["example_rows"] == 2
    assert _names(_search(store, "彰化市")) == ["John手作蔬食"] and _names(_search(store, "花壇鄉")) == ["和米素食"]
    now = {(place.name, place.area) for place in snapshots.load_current_catalog(store).places}
    assert shipped <= now  # loading the template unchanged loses no real shop
    [examples] = [shops for message, shops in _warnings(caplog).items() if "example" in message]
    assert sorted(examples) == ["範例素食便當", "範例蔬食小館"]


def test_places_import_says_how_many_shops_it_no_longer_lists_and_names_them_on_stderr(store, tmp_path, caplog):
    caplog.set_level("INFO", logger="local")
    only = _csv(tmp_path, [{"name": "員林好蔬食", "address": "彰化縣員林市好路1號", "diet": "蔬食"}])
    out = io.StringIO()
    code = places_tool.main(["ingest", "--file", str(only)], environ={"LOCAL_STORE_URL": f"sqlite:///{store.path}"},
                            out=out)
    printed = json.loads(out.getvalue())
    assert code == 0 and printed["outcome"] == "snapshot_written"
    assert printed["no_longer_listed"] == 2 and printed["example_rows"] == 0
    [gone] = [shops for message, shops in _warnings(caplog).items() if "no longer listed" in message]
    assert sorted(gone) == ["John手作蔬食（彰化市）", "和米素食（花壇鄉）"]
    again = ingest_curated(store, only, now=NOW + timedelta(hours=1))  # the same list: nothing more is lost
    assert again.outcome == "unchanged" and again.no_longer_listed == 0


def test_places_import_curated_rows_keep_per_field_sources_diets_as_stated_and_coordinates(store, tmp_path):
    path = _csv(tmp_path, [
        {"name": "員林蔬食坊", "address": "510彰化縣員林市中山路二段1號", "diet": "全素、奶素", "phone": "04-8320000",
         "lat": "23.958", "lng": "120.574"},
        {"name": "田中素食", "address": "田中鎮中正路5號", "diet": ""},
    ])
    layer = read_curated(path)
    first, second = layer.places
    source_id = first["field_sources"]["name"]
    assert layer.sources[source_id]["name"] == "員林鎮公所調查" and layer.sources[source_id]["accessed_on"] == "2026-10-01"
    assert first["area"] == "員林市" and first["dietary_evidence"] == {"vegan": source_id, "lacto": source_id}
    assert first["coordinates"] == {"lat": 23.958, "lng": 120.574, "source": source_id}
    assert second["area"] == "田中鎮" and second["dietary_evidence"] == {} and second["phone"] is None
    assert second["coordinates"] is None and second["hours"] is None and "phone" not in second["field_sources"]
    ingest_curated(store, path, now=NOW)
    assert _names(_search(store, "田中")) == []  # no diet stated: never listed as vegetarian
    assert _names(_search(store, "田中", diet="any")) == ["田中素食"]


def test_places_import_bad_rows_are_skipped_and_counted_by_reason_never_guessed(store, tmp_path):
    good = {"name": "好店", "address": "彰化縣員林市好路1號", "diet": "蔬食"}
    rows = [
        good,
        {"name": "", "address": "彰化縣員林市路1號"},
        {"name": "沒地址"},
        {"name": "無名單", "address": "彰化縣員林市路2號", "list_name": ""},
        {"name": "壞日期", "address": "彰化縣員林市路3號", "accessed_on": "10/1"},
        {"name": "台北店", "address": "台北市中正區路1號"},
        {"name": "無鄉", "address": "中山路10號"},
        {"name": "不合", "address": "彰化縣員林市路4號", "township": "鹿港"},
        {"name": "怪鄉", "address": "中山路1號", "township": "台北"},
        {"name": "壞電話", "address": "彰化縣員林市路5號", "phone": "打給我"},
        {"name": "怪素", "address": "彰化縣員林市路6號", "diet": "大概素"},
        {"name": "半座標", "address": "彰化縣員林市路7號", "lat": "23.9"},
        {"name": "遠座標", "address": "彰化縣員林市路8號", "lat": "25.03", "lng": "121.56"},
        {"name": "怪節", "address": "彰化縣員林市路9號", "festival": "也許"},
        {**good, "address": "510 彰化縣 員林市好路1號"},
    ]
    result = ingest_curated(store, _csv(tmp_path, rows), now=NOW)
    assert result.outcome == "snapshot_written" and result.counts["kept"] == 1
    assert result.counts["skipped"] == {
        "missing_name": 1, "missing_address": 1, "missing_source": 1, "bad_source": 1, "out_of_county": 1,
        "no_township": 1,
        "township_mismatch": 1, "bad_township": 1, "bad_phone": 1, "bad_diet": 1, "bad_coordinates": 2,
        "bad_festival": 1, "duplicate": 1}
    assert result.skipped_rows[0] == {"row": 2, "reason": "missing_name"}
    assert _names(_search(store, "員林", diet="any")) == ["好店"]


def test_places_import_a_file_not_of_the_schema_is_refused_whole_and_the_last_snapshot_stays(store, tmp_path):
    ingest_curated(store, TEMPLATE, now=NOW)
    before = snapshots.read_state(store)["catalog_version"]
    typo = _csv(tmp_path, [{"name": "好店", "address": "彰化縣員林市好路1號"}], columns=(*COLUMNS, "adress"))
    refused = ingest_curated(store, typo, now=NOW + timedelta(hours=1))
    assert (refused.outcome, refused.reason) == ("rejected", "unknown_columns")
    all_bad = ingest_curated(store, _csv(tmp_path, [{"name": "", "address": ""}], name="bad.csv"), now=NOW)
    assert (all_bad.outcome, all_bad.reason, all_bad.counts["skipped"]) == ("rejected", "no_valid_rows", {"missing_name": 1})
    state = snapshots.read_state(store)
    assert state["catalog_version"] == before and state["last_attempt"]["reason"] == "no_valid_rows"


def test_places_import_json_list_reads_as_the_csv_does(tmp_path):
    path = tmp_path / "list.json"
    path.write_text(json.dumps([{**LIST, "name": "和美蔬食", "address": "彰化縣和美鎮路1號", "diet": "vegan",
                                 "lat": 24.11, "lng": 120.5}, "not a row", {**LIST, "name": "x", "color": "red"}],
                               ensure_ascii=False), encoding="utf-8")
    layer = read_curated(path)
    assert [p["name"] for p in layer.places] == ["和美蔬食"] and layer.places[0]["dietary_options"] == ["vegan"]
    assert layer.skipped == {"not_an_object": 1, "unknown_column": 1}


# -- TDX restaurants, the merge, strict diets ------------------------------------------------------------------

def test_places_import_tdx_file_keeps_only_vegetarian_restaurants_of_the_county(store, tmp_path):
    records = [
        restaurant("C3_1", "員林蔬食坊", "彰化縣510員林市中山路二段1號", cls="素食"),
        restaurant("C3_2", "阿明牛肉麵", "彰化縣員林市中正路2號", cls="中式美食"),
        restaurant("C3_3", "綠蔬食堂", "彰化縣鹿港鎮中山路3號", cls="其他", phone="04-7770000", lat=0, lng=0),
        restaurant("C3_4", "台中素食", "臺中市西區路1號", cls="素食", city="臺中市"),
        restaurant("C3_1", "員林蔬食坊", "彰化縣員林市中山路二段1號", cls="素食"),
        "not an object",
    ]
    out = io.StringIO()
    code = places_tool.main(["ingest", "--tdx-file", str(_tdx_file(tmp_path, records))],
                            environ={"LOCAL_STORE_URL": f"sqlite:///{tmp_path / 'tool.sqlite3'}"}, out=out)
    printed = json.loads(out.getvalue())
    assert code == 0 and printed["outcome"] == "snapshot_written" and printed["layer"] == "tdx"
    assert printed["counts"] == {"received": 6, "kept": 2, "skipped": {
        "not_vegetarian": 1, "out_of_county": 1, "duplicate_id": 1, "not_an_object": 1}}
    ingest_restaurants(store, FileRestaurants(_tdx_file(tmp_path, records)), now=NOW)
    [yuanlin] = _search(store, "員林")["places"]
    assert yuanlin["phone"] == "04-8360000" and yuanlin["coordinates"]["source"] == "tdx_restaurants"
    assert _search(store, "鹿港")["places"][0]["coordinates"] is None  # a (0, 0) position is no position


def test_places_import_strict_diets_stay_strict_for_tdx_unless_a_curated_list_says_so(store, tmp_path):
    records = [restaurant("C3_1", "員林蔬食坊", "彰化縣員林市中山路二段1號", cls="素食"),
               restaurant("C3_9", "素心小館", "彰化縣員林市光明街9號")]
    ingest_restaurants(store, FileRestaurants(_tdx_file(tmp_path, records)), now=NOW)
    assert set(_names(_search(store, "員林"))) == {"員林蔬食坊", "素心小館"}
    for strict in ("vegan", "ovo_lacto", "lacto"):
        assert _search(store, "員林", diet=strict)["status"] == "no_match", strict
    ingest_curated(store, _csv(tmp_path, [{"name": "員林蔬食坊", "address": "員林市中山路二段1號", "diet": "全素"}]),
                   now=NOW + timedelta(minutes=1))
    assert _names(_search(store, "員林", diet="vegan")) == ["員林蔬食坊"]
    assert _search(store, "員林", diet="ovo_lacto")["status"] == "no_match"


def test_places_import_tdx_and_curated_merge_field_by_field_and_the_card_says_which_gave_which(store, tmp_path):
    tdx = [restaurant("C3_1", "員林蔬食坊", "彰化縣510員林市中山路二段1號", cls="素食")]
    ingest_restaurants(store, FileRestaurants(_tdx_file(tmp_path, tdx)), now=NOW)
    alone = render_places(_search(store, "員林"))
    [lines] = _card_lines(alone)
    assert "地址、電話、營業時間、素別：交通部觀光署資料" in lines and "營業時間：11:00-20:00" in lines
    assert "蔬食（未確認素別），點餐前請問店家" in lines and "沒有距離、無障礙資料，出發前請先打電話" in lines
    assert "員林鎮公所調查" not in "".join(lines)

    curated = _csv(tmp_path, [{"name": "員林 蔬食坊", "address": "彰化縣 員林市中山路二段1號", "diet": "蛋奶素"}])
    ingest_curated(store, curated, now=NOW + timedelta(minutes=1))
    answer = _search(store, "員林")
    [place] = answer["places"]
    assert place["name"] == "員林 蔬食坊" and place["field_sources"]["address"]["name"] == "員林鎮公所調查"
    assert place["field_sources"]["phone"]["name"] == "交通部觀光署資料" and place["phone"] == "04-8360000"
    assert place["coordinates"]["source"] == "tdx_restaurants" and place["dietary_options"] == ["ovo_lacto"]
    messages = render_places(answer)
    [lines] = _card_lines(messages)
    assert "地址、素別：員林鎮公所調查；電話、營業時間：交通部觀光署資料" in lines
    assert not any("未確認" in line for line in lines)
    assert reply_budget.problems(_json(messages), names=frozenset()) == []
    assert len(snapshots.load_current_catalog(store).places) == 1  # one shop, not two


def test_places_import_tdx_live_through_the_client_sends_if_modified_since(store, tmp_path):
    from shared import wiring
    from shared.config import Settings
    from tools.tdx_standin import CLIENT_ID, CLIENT_SECRET, TdxStandin

    records = [restaurant("C3_1", "員林蔬食坊", "彰化縣員林市中山路二段1號", cls="素食")]
    with TdxStandin(restaurants=records) as tdx:
        settings = Settings.from_env({"LOCAL_STORE_URL": "memory://", "TDX_CLIENT_ID": CLIENT_ID,
                                      "TDX_CLIENT_SECRET": CLIENT_SECRET, "TDX_API_BASE_URL": tdx.api_base_url,
                                      "TDX_TOKEN_URL": tdx.token_url, "LOCAL_TDX_BACKOFF_SECONDS": "0.01"})
        source = wiring.restaurant_source(settings)
        first = ingest_restaurants(store, source, now=NOW)
        again = ingest_restaurants(store, source, now=NOW + timedelta(hours=1))
        tdx.fail_next("restaurant", 503, times=5)
        failed = ingest_restaurants(store, source, now=NOW + timedelta(hours=2))
        calls = tdx.calls("restaurant")
    assert first.outcome == "snapshot_written" and again.outcome == "not_modified"
    assert calls[1]["if_modified_since"] is True and len(tdx.calls("token")) == 1
    assert (failed.outcome, failed.reason) == ("fetch_failed", "http_503")
    assert snapshots.read_state(store)["catalog_version"] == first.catalog_version


# -- which catalog answers ---------------------------------------------------------------------------------

def test_places_import_the_shipped_catalog_answers_while_the_store_has_none(store):
    shipped = load_place_catalog(DEFAULT_CATALOG_PATH)
    assert snapshots.load_current_catalog(store) is shipped
    assert _names(_search(store, "花壇")) == ["和米素食"]
    assert snapshots.status(store, now=NOW)["answers_from"] == "shipped"


def test_places_import_a_newer_snapshot_wins_and_one_event_answers_from_one_version(store, tmp_path):
    ingest_curated(store, _csv(tmp_path, [{"name": "舊店", "address": "彰化縣員林市路1號", "diet": "蔬食"}], "a.csv"),
                   now=NOW)
    with snapshots.scope_for_store(store):
        assert _names(search_local_places("員林", "any", None, now=NOW)) == ["舊店"]
        ingest_curated(store, _csv(tmp_path, [{"name": "新店", "address": "彰化縣員林市路2號", "diet": "蔬食"}], "b.csv"),
                       now=NOW + timedelta(minutes=5))
        assert _names(search_local_places("員林", "any", None, now=NOW)) == ["舊店"]  # the event's version
    assert _names(_search(store, "員林", diet="any")) == ["新店"]
    assert _names(_search(store, "花壇")) == []  # the shipped catalog is only the fallback
    status = snapshots.status(store, now=NOW + timedelta(minutes=10))
    assert status["answers_from"] == "snapshot" and status["layers"]["curated"]["origin"] == "file:b.csv"


def test_places_import_an_unreadable_store_answers_unavailable_not_the_shipped_catalog(store, tmp_path):
    from shared.store import StoreUnavailable

    class Down:
        def get(self, *args, **kwargs):
            raise StoreUnavailable("down")

    with snapshots.scope_for_store(Down()):  # type: ignore[arg-type]
        assert search_local_places("花壇", "any", None, now=NOW)["status"] == "unavailable"
        assert places_named_in("和米素食") == []


def test_places_import_imported_shops_are_found_by_name_alias_and_typo(store, tmp_path):
    ingest_curated(store, _csv(tmp_path, [{"name": "Green手作蔬食", "address": "彰化縣員林市路1號", "diet": "蔬食"},
                                          {"name": "慈心素食館", "address": "彰化縣溪湖鎮路2號", "diet": "蔬食"}]), now=NOW)
    with snapshots.scope_for_store(store):
        assert [view["name"] for view in places_named_in("green在哪裡")] == ["Green手作蔬食"]
        assert [view["name"] for view in places_named_in("慈心幾點開")] == ["慈心素食館"]
        assert place_close_to("滋心素食館有全素嗎")["name"] == "慈心素食館"
        assert places_named_in("和米素食") == []  # the shipped catalog's shops are not mixed in


def test_places_import_a_tdx_shop_asked_about_by_itself_says_its_diet_is_not_confirmed(store, tmp_path):
    from shared.turn.ask import ItemDetail
    from shared.turn.wording import place_item_reply

    ingest_restaurants(store, FileRestaurants(_tdx_file(tmp_path, [
        restaurant("C3_1", "員林蔬食坊", "彰化縣員林市中山路二段1號", cls="素食")])), now=NOW)
    catalog = snapshots.load_current_catalog(store)
    [message] = place_item_reply(catalog.places[0], catalog, 1, ()).messages
    assert "店家資料列的素別：蔬食（未確認素別）。" in message.text
    assert "資料來源：交通部觀光署資料，2026/10/5 查閱。" in message.text
    [hours] = place_item_reply(catalog.places[0], catalog, 1, (ItemDetail.WHEN,)).messages
    assert "營業時間：11:00-20:00（資料寫的，不代表今天有開）" in hours.text and "交通部觀光署資料" in hours.text


def test_places_import_status_of_a_store_never_written_says_the_shipped_catalog_answers(tmp_path):
    out = io.StringIO()
    code = places_tool.main(["status"], environ={"LOCAL_STORE_URL": f"sqlite:///{tmp_path / 'none.sqlite3'}"}, out=out)
    assert code == 0 and json.loads(out.getvalue())["answers_from"] == "shipped"
    assert not (tmp_path / "none.sqlite3").exists()


def test_places_import_a_recorded_fact_without_its_source_is_no_catalog():
    from shared.places.catalog import CatalogInvalid, catalog_from_dict

    raw = json.loads(DEFAULT_CATALOG_PATH.read_text(encoding="utf-8"))
    raw["places"][1]["hours"] = "11:00-20:00"
    with pytest.raises(CatalogInvalid, match="hours is recorded without a source"):
        catalog_from_dict(raw, "test")
    raw["places"][1]["field_sources"]["hours"] = "festival_list"
    assert catalog_from_dict(raw, "test").places[1].unknown["hours"] == "11:00-20:00"


@pytest.mark.parametrize("written", ["Mon-Fri 11:00AM-2:00PM", "<p>10:30-14:00</p>", "週一至週五 11:00AM-8:00PM",
                                     "請電洽", "11:00-14:00、17:00-20:00、" * 4])
def test_places_import_tdx_hours_a_resident_cannot_read_are_never_shown_and_the_shop_is_asked(store, tmp_path,
                                                                                             written):
    from shared.geo import Point
    from shared.places.nearby import nearest_places
    from shared.replies.nearby import places_reply
    from shared.turn.ask import ItemDetail
    from shared.turn.wording import place_item_reply

    record = restaurant("C3_1", "員林蔬食坊", "彰化縣員林市中山路二段1號", cls="素食")
    ingest_restaurants(store, FileRestaurants(_tdx_file(tmp_path, [{**record, "OpenTime": written}])), now=NOW)
    with snapshots.scope_for_store(store):
        near = places_reply(nearest_places(Point(23.959, 120.574))).messages
    for messages in (render_places(_search(store, "員林")), near):
        [lines] = _card_lines(messages)
        assert "營業時間：請向店家確認" in lines and not any(written.strip()[:8] in line for line in lines)
        assert "電話、素別：交通部觀光署資料" in "".join(lines)  # the hours not shown cite no source
        assert reply_budget.problems(_json(messages), names=frozenset()) == []
    catalog = snapshots.load_current_catalog(store)
    [answer] = place_item_reply(catalog.places[0], catalog, 1, (ItemDetail.WHEN,)).messages
    assert "營業時間請向店家確認（電話 04-8360000）" in answer.text and written.strip()[:8] not in answer.text


@pytest.mark.parametrize("written", ["11:00～14:00；17:00～20:00（週一公休）",
                                     "週一至週五 11:00~14:00、17:00~20:30；週六、週日 10:30~20:30【週二公休】"])
def test_places_import_tdx_hours_written_in_chinese_and_digits_are_shown_as_written(store, tmp_path, written):
    record = restaurant("C3_1", "員林蔬食坊", "彰化縣員林市中山路二段1號", cls="素食")
    ingest_restaurants(store, FileRestaurants(_tdx_file(tmp_path, [{**record, "OpenTime": written}])), now=NOW)
    [lines] = _card_lines(render_places(_search(store, "員林")))
    assert f"營業時間：{written}" in lines


def test_places_import_a_shop_named_after_its_township_never_takes_over_the_township_question(store, tmp_path):
    from shared.turn.router import route

    ingest_restaurants(store, FileRestaurants(_tdx_file(tmp_path, [
        restaurant("C3_1", "田尾蔬食坊", "彰化縣田尾鄉民生路1號", cls="中式美食"),
        restaurant("C3_2", "公路花園素食", "彰化縣田尾鄉中山路2號", cls="素食"),
        restaurant("C3_3", "彰化素食館", "彰化縣彰化市中山路3號", cls="素食")])), now=NOW)
    with snapshots.scope_for_store(store):
        for asked, township in (("田尾有吃素的地方嗎", "田尾鄉"), ("彰化市有素食嗎", "彰化市")):
            assert places_named_in(asked) == [], asked
            proposal = route(asked)
            assert proposal.tool == "search_local_places" and proposal.args["area"] == township, asked
        assert [view["name"] for view in places_named_in("田尾蔬食坊在哪")] == ["田尾蔬食坊"]
    assert set(_names(_search(store, "田尾"))) == {"田尾蔬食坊", "公路花園素食"}


def test_places_import_a_township_question_is_not_asked_back_as_a_shop_named_after_the_township(store, tmp_path):
    from shared.turn.router import route

    ingest_restaurants(store, FileRestaurants(_tdx_file(tmp_path, [
        restaurant("C3_1", "員林素食館", "彰化縣員林市中山路1號", cls="素食"),
        restaurant("C3_2", "鹿港素食", "彰化縣鹿港鎮中山路2號", cls="素食"),
        restaurant("C3_3", "慈心素食館", "彰化縣溪湖鎮路2號", cls="素食")])), now=NOW)
    with snapshots.scope_for_store(store):
        for asked, township in (("員林有素食嗎", "員林市"), ("鹿港有素食嗎", "鹿港鎮"), ("員林有全素嗎", "員林市")):
            proposal = route(asked)
            assert proposal.tool == "search_local_places" and proposal.args["area"] == township, asked
        assert route("滋心素食館有全素嗎").tool == "did_you_mean"  # a shop's own name misspelt is still asked
        assert route("員林素食館在哪").args["name"] == "員林素食館"


def test_places_import_tdx_restaurant_whose_address_names_no_township_is_read_from_its_zip_code(store, tmp_path):
    no_town = {**restaurant("C3_1", "無名素食", "彰化縣中山路1號", cls="素食"), "ZipCode": "505"}
    neither = {**restaurant("C3_2", "何處素食", "彰化縣中山路2號", cls="素食"), "ZipCode": ""}
    layer = ingest_restaurants(store, FileRestaurants(_tdx_file(tmp_path, [no_town, neither])), now=NOW)
    assert layer.counts == {"received": 2, "kept": 1, "skipped": {"no_township": 1}}
    assert _names(_search(store, "鹿港")) == ["無名素食"]


@pytest.mark.parametrize("city", ["臺灣彰化縣", "台灣省彰化縣", "彰化縣"])
def test_places_import_tdx_city_is_read_as_the_events_read_it(store, tmp_path, city):
    record = restaurant("C3_1", "員林蔬食坊", "彰化縣員林市中山路二段1號", cls="素食", city=city)
    layer = ingest_restaurants(store, FileRestaurants(_tdx_file(tmp_path, [record])), now=NOW)
    assert layer.counts == {"received": 1, "kept": 1, "skipped": {}}, city


def test_places_import_tdx_name_where_su_is_not_vegetarian_is_not_claimed_as_vegetarian(store, tmp_path):
    records = [restaurant("C3_1", "元素咖啡", "彰化縣員林市中山路1號"), restaurant("C3_2", "素描早午餐", "彰化縣員林市中山路2號"),
               restaurant("C3_3", "樸素小館", "彰化縣員林市中山路3號"), restaurant("C3_4", "素心小館", "彰化縣員林市中山路4號"),
               restaurant("C3_5", "元素蔬食", "彰化縣員林市中山路5號")]
    layer = ingest_restaurants(store, FileRestaurants(_tdx_file(tmp_path, records)), now=NOW)
    assert layer.counts["skipped"] == {"not_vegetarian": 3}
    assert set(_names(_search(store, "員林"))) == {"素心小館", "元素蔬食"}


def test_places_import_a_shop_whose_name_is_only_generic_words_never_answers_for_every_township(store, tmp_path):
    from shared.turn.router import route

    ingest_restaurants(store, FileRestaurants(_tdx_file(tmp_path, [
        restaurant("C3_1", "蔬食", "彰化縣鹿港鎮中山路1號", cls="素食"),
        restaurant("C3_2", "素食館", "彰化縣員林市中山路2號", cls="素食"),
        restaurant("C3_3", "素食小吃", "彰化縣花壇鄉中山路3號", cls="素食")])), now=NOW)
    with snapshots.scope_for_store(store):
        for asked, township in (("花壇有蔬食嗎", "花壇鄉"), ("員林有素食館嗎", "員林市"), ("鹿港有素食小吃嗎", "鹿港鎮")):
            assert places_named_in(asked) == [], asked
            proposal = route(asked)
            assert proposal.tool == "search_local_places" and proposal.args["area"] == township, asked
    assert _names(_search(store, "鹿港")) == ["蔬食"]  # still listed in its township


def test_places_import_a_name_written_in_full_width_letters_is_found_as_residents_type_it(store, tmp_path):
    ingest_restaurants(store, FileRestaurants(_tdx_file(tmp_path, [
        restaurant("C3_1", "ＧＲＥＥＮ蔬食", "彰化縣鹿港鎮中山路1號", cls="素食")])), now=NOW)
    with snapshots.scope_for_store(store):
        for asked in ("green在哪", "Green蔬食的電話", "ＧＲＥＥＮ蔬食在哪"):
            assert [view["name"] for view in places_named_in(reading_form(asked))] == ["ＧＲＥＥＮ蔬食"], asked


def test_places_import_a_csv_the_csv_module_cannot_read_is_refused_with_its_reason(store, tmp_path):
    ingest_curated(store, TEMPLATE, now=NOW)
    before = snapshots.read_state(store)["catalog_version"]
    huge = _csv(tmp_path, [{"name": "好店", "address": "彰化縣員林市好路1號" + "樓" * 140_000}], name="huge.csv")
    out = io.StringIO()
    code = places_tool.main(["ingest", "--file", str(huge)], environ={"LOCAL_STORE_URL": f"sqlite:///{store.path}"},
                            out=out)
    printed = json.loads(out.getvalue())
    assert code == 1 and (printed["outcome"], printed["reason"]) == ("rejected", "not_csv")
    assert snapshots.read_state(store)["catalog_version"] == before


def test_places_import_a_chain_named_without_a_township_lists_every_shop_of_that_name(base_env, line_standin,
                                                                                     tmp_path):
    from tests.conftest import FixedClock, all_text, reply_messages, text_event
    from tests.memory_support import webhook_with_memory

    service = webhook_with_memory(base_env, FixedClock(NOW))
    ingest_restaurants(service.store, FileRestaurants(_tdx_file(tmp_path, [
        restaurant("C3_1", "寬心園精緻蔬食", "彰化縣員林市中山路1號", cls="素食"),
        restaurant("C3_2", "寬心園精緻蔬食", "彰化縣彰化市中正路2號", cls="素食")])), now=NOW)
    every = all_text(reply_messages(service, line_standin, text_event("寬心園精緻蔬食在哪")))
    assert "彰化縣員林市中山路1號" in every and "彰化縣彰化市中正路2號" in every
    assert "請點按鈕" not in every  # the same name is not offered again as another shop
    one = all_text(reply_messages(service, line_standin, text_event("彰化市的寬心園精緻蔬食在哪")))
    assert "彰化縣彰化市中正路2號" in one and "彰化縣員林市中山路1號" not in one
    parking = all_text(reply_messages(service, line_standin, text_event("寬心園精緻蔬食好停車嗎")))
    assert "彰化縣員林市中山路1號" in parking and "彰化縣彰化市中正路2號" in parking and "停車" in parking


def test_places_import_a_shop_named_in_full_is_not_mistaken_for_one_sharing_its_short_name(store, tmp_path):
    ingest_restaurants(store, FileRestaurants(_tdx_file(tmp_path, [
        restaurant("C3_1", "慈心蔬食坊", "彰化縣員林市中山路1號", cls="素食"),
        restaurant("C3_2", "慈心素食", "彰化縣田尾鄉民生路2號", cls="素食")])), now=NOW)
    with snapshots.scope_for_store(store):
        assert [view["name"] for view in places_named_in("慈心素食在哪")] == ["慈心素食"]
        assert [view["name"] for view in places_named_in("慈心蔬食坊在哪")] == ["慈心蔬食坊"]
        assert [view["name"] for view in places_named_in("慈心素食跟慈心蔬食坊哪間近")] == ["慈心素食", "慈心蔬食坊"]
        assert {view["name"] for view in places_named_in("慈心在哪")} == {"慈心素食", "慈心蔬食坊"}  # truly both
