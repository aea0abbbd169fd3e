"""Items by position or reference (shared.turn.item_answer), through a signed webhook body: a search
lists items, then 第三個在哪裡集合 / 第2家電話幾號 / 最後一個要錢嗎 / 剛剛那家在哪 / 那個市集 are answered
from that item's own record, or say plainly that it does not record the detail; a position beyond the
list says how many were listed; with no list (none, or 30 minutes later) the reference says so briefly.

Data: an events snapshot written to the test's store (three events in 員林 on Saturday 12/5, listed
in start-time order) and a places catalog with three shops in 員林 (the repository's has none there).
Clock: 2026-12-01 10:00 Asia/Taipei, a Tuesday.
"""
from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shared.audit import COLLECTION as AUDIT
from shared.events.snapshots import NewSnapshot, write_snapshot
from shared.places import catalog as places_catalog
from shared.turn.ask import ItemRef
from shared.turn.conversation import ItemKind, ListedItem
from shared.turn.item_answer import Picked, resolve
from tests.conftest import FixedClock, all_text, reply_messages, text_event
from tests.memory_support import webhook_with_memory

PINNED = datetime(2026, 12, 1, 2, 0, tzinfo=timezone.utc)  # 2026-12-01 10:00 Asia/Taipei

#: 員林 on Saturday 12/5, as the search lists them (by start time): a market with a meeting point,
#: a walk with no start time, a talk with no meeting point (the third).
EVENTS = [
    {"id": "t-ev-2", "title": "員林百果山健走", "area": "員林市", "date": "2026-12-05", "end_date": None,
     "start_time": None, "meeting_point": "百果山登山口", "tags": ["健走", "戶外"], "source_kind": "tdx",
     "source_updated_at": None, "organizer": None, "url": None},
    {"id": "t-ev-1", "title": "員林假日小農市集", "area": "員林市", "date": "2026-12-05", "end_date": None,
     "start_time": "09:00", "meeting_point": "員林公園東側廣場", "tags": ["市集", "小農"], "source_kind": "tdx",
     "source_updated_at": None, "organizer": "員林市公所", "url": "https://example.org/market"},
    {"id": "t-ev-3", "title": "員林社區講座", "area": "員林市", "date": "2026-12-05", "end_date": None,
     "start_time": "14:00", "meeting_point": None, "tags": ["講座"], "source_kind": "tdx",
     "source_updated_at": None, "organizer": None, "url": None},
]

_SOURCE = {"url": "https://example.org/list", "kind": "government_business_record", "accessed_on": "2026-09-27",
           "scope": "name, address and phone"}
_NULLS = {"open_now": None, "hours": None, "coordinates": None, "walking_distance_m": None, "accessibility": None}


def _shop(number: int, name: str, address: str, phone: str) -> dict:
    fields = {"name": "list", "area": "list", "address": "list", "phone": "list"}
    return {"id": f"t-shop-{number}", "list_no": number, "name": name, "area": "員林市", "address": address,
            "phone": phone, "field_sources": fields, "dietary_options": ["vegetarian"],
            "dietary_evidence": {"vegetarian": "list"}, "dietary_scope": "listed as vegetarian", **_NULLS}


SHOPS = [_shop(1, "員林蔬香坊", "員林市中山路一段1號", "04-8000001"),
         _shop(2, "員林禪味素食", "員林市光明街2號", "04-8000002"),
         _shop(3, "員林綠園素食", "員林市三民街3號", "04-8000003")]


@pytest.fixture
def pinned():
    return FixedClock(PINNED)


@pytest.fixture
def service(base_env, pinned, tmp_path, monkeypatch):
    catalog = {"catalog_version": "test-places-1", "recorded_on": "2026-09-27", "selection": "test",
               "sources": {"list": _SOURCE},
               "campaign": {"name": "測試活動", "starts_at": "2026-08-01T00:00:00+08:00",
                            "ends_at": "2026-09-30T17:00:00+08:00", "end_is_exclusive": True,
                            "carnival_date": "2026-10-03", "source": "list"},
               "places": SHOPS}
    path = tmp_path / "places.json"
    path.write_text(json.dumps(catalog, ensure_ascii=False), encoding="utf-8")
    monkeypatch.setattr(places_catalog, "DEFAULT_CATALOG_PATH", path)
    webhook = webhook_with_memory(base_env, pinned)
    write_snapshot(webhook.store, NewSnapshot(EVENTS, "tdx", "交通部觀光署活動資料", "test", None,
                                              {"received": 3, "kept": 3, "skipped": {}}, None), now=PINNED)
    return webhook


def _say(service, line_standin, text: str, **who) -> str:
    return all_text(reply_messages(service, line_standin, text_event(text, **who)))


def _after(service, line_standin, first: str, then: str, **who) -> str:
    _say(service, line_standin, first, **who)
    return _say(service, line_standin, then, **who)


EVENTS_ASK = "員林這禮拜六有什麼活動"
SHOPS_ASK = "員林有素食嗎"


# -- events listed: answered from the event's own record -------------------------------------------

def test_third_event_where_to_meet_says_its_record_does_not_hold_it(service, line_standin):
    words = _after(service, line_standin, EVENTS_ASK, "第三個在哪裡集合")
    assert "第 3 個：「員林社區講座」" in words
    assert "活動資料沒有記錄地點，只知道在員林市" in words
    assert "資料來源：交通部觀光署活動資料" in words and "內容可能已經過時" not in words
    assert "看不太懂" not in words


def test_first_event_what_time_says_its_start_time_is_not_recorded(service, line_standin):
    words = _after(service, line_standin, EVENTS_ASK, "第一個幾點")
    assert "第 1 個：「員林百果山健走」" in words
    assert "2026/12/5（六）；開始時間活動資料沒有記錄" in words


def test_second_event_what_time_and_where_from_its_record(service, line_standin):
    words = _after(service, line_standin, EVENTS_ASK, "第二場幾點開始 在哪裡")
    assert "「員林假日小農市集」" in words
    assert "09:00 開始" in words and "地點：員林公園東側廣場" in words


def test_last_event_price_is_said_not_recorded(service, line_standin):
    words = _after(service, line_standin, EVENTS_ASK, "最後一個要錢嗎")
    assert "第 3 個：「員林社區講座」" in words
    assert "活動資料沒有記錄要不要錢" in words


def test_event_phone_is_said_not_recorded_with_the_organiser(service, line_standin):
    words = _after(service, line_standin, EVENTS_ASK, "第2個電話幾號")
    assert "活動資料沒有記錄聯絡電話；主辦是員林市公所" in words
    assert "彰化縣政府" not in words  # not the office directory


def test_market_named_by_a_title_word(service, line_standin):
    words = _after(service, line_standin, EVENTS_ASK, "那個市集")
    assert "第 2 個：「員林假日小農市集」" in words
    assert "地點：員林公園東側廣場" in words and "09:00 開始" in words


def test_word_naming_no_listed_item_asks_which(service, line_standin):
    messages = (_say(service, line_standin, EVENTS_ASK),
                reply_messages(service, line_standin, text_event("那個親子活動在哪")))[1]
    assert "剛剛列的 3 個活動裡，沒有看到「親子」" in all_text(messages)
    buttons = [(item["action"]["label"], item["action"]["text"]) for item in messages[-1]["quickReply"]["items"]]
    assert buttons[0] == ("1. 員林百果山健走", "第1個在哪") and len(buttons) == 3


def test_event_beyond_the_list_says_how_many_were_listed(service, line_standin):
    words = _after(service, line_standin, EVENTS_ASK, "第5個在哪")
    assert "剛剛列了 3 個活動，沒有第 5 個" in words


# -- shops listed ----------------------------------------------------------------------------------

def test_second_shop_phone_from_the_catalog(service, line_standin):
    words = _after(service, line_standin, SHOPS_ASK, "第2家電話幾號")
    assert "第 2 家：「員林禪味素食」" in words and "電話：04-8000002" in words
    assert "資料來源：縣府店家資料，2026/9/27 查閱" in words
    assert "沒有資料可以回答" not in words and "電話簿" not in words


def test_that_shop_after_the_second_is_the_second(service, line_standin):
    _say(service, line_standin, SHOPS_ASK)
    _say(service, line_standin, "第2家電話幾號")
    words = _say(service, line_standin, "剛剛那家在哪")
    assert "第 2 家：「員林禪味素食」" in words and "地址：員林市光明街2號" in words


def test_that_shop_among_several_asks_which(service, line_standin):
    words = _after(service, line_standin, SHOPS_ASK, "剛剛那家在哪")
    assert "剛剛列了 3 家店家，你問的是哪一家" in words
    assert "看不太懂" not in words


def test_fifth_shop_beyond_the_list(service, line_standin):
    messages = (_say(service, line_standin, SHOPS_ASK),
                reply_messages(service, line_standin, text_event("第5家")))[1]
    assert "剛剛列了 3 家，沒有第 5 家" in all_text(messages)
    buttons = [(item["action"]["label"], item["action"]["text"]) for item in messages[-1]["quickReply"]["items"]]
    assert buttons == [("1. 員林蔬香坊", "第1家"), ("2. 員林禪味素食", "第2家"), ("3. 員林綠園素食", "第3家")]


def test_shop_price_is_said_not_recorded_with_its_phone(service, line_standin):
    words = _after(service, line_standin, SHOPS_ASK, "第一家要錢嗎")
    assert "店家資料沒有記錄價錢，請先打電話問店家（04-8000001）" in words


@pytest.mark.parametrize("then", ["第三家的地址", "第3間在哪裡", "請問第三家地址", "最後一家在哪"])
def test_third_shop_address_variants(service, line_standin, then):
    assert "地址：員林市三民街3號" in _after(service, line_standin, SHOPS_ASK, then)


# -- no list ---------------------------------------------------------------------------------------

def test_reference_with_no_list_says_so_and_offers_the_menu(service, line_standin):
    event = text_event("那家店叫什麼")
    messages = reply_messages(service, line_standin, event)
    words = all_text(messages)
    assert "沒有剛剛列出的清單" in words and "看不太懂" not in words
    assert {item["action"]["label"] for item in messages[-1]["quickReply"]["items"]} >= {"查活動", "查蔬食"}
    record = service.store.get(AUDIT, f"test-tenant:{event['webhookEventId']}")
    assert (record["tool"], record["status"]) == ("item_detail", "no_list")


def test_reference_30_minutes_later_is_not_resolved(service, line_standin, pinned):
    _say(service, line_standin, EVENTS_ASK)
    pinned.at = PINNED + timedelta(minutes=31)
    words = _say(service, line_standin, "第三個在哪裡集合")
    assert "沒有剛剛列出的清單" in words and "員林社區講座" not in words


def test_reference_in_another_chat_does_not_see_the_list(service, line_standin):
    _say(service, line_standin, EVENTS_ASK)
    words = _say(service, line_standin, "第一個幾點", group_id="C" + "1" * 32)
    assert "沒有剛剛列出的清單" in words


def test_audit_of_an_item_turn_keeps_no_words(service, line_standin):
    _say(service, line_standin, EVENTS_ASK)
    event = text_event("那個市集在哪")
    reply_messages(service, line_standin, event)
    record = service.store.get(AUDIT, f"test-tenant:{event['webhookEventId']}")
    assert record["proposed_args"] == {"ref": {"position": None, "named": True, "details": ["where"]}}
    assert record["result_ids"] == ["t-ev-1"] and "市集" not in json.dumps(record, ensure_ascii=False, default=str)


def test_reference_after_a_search_that_listed_nothing_says_nothing_was_listed(service, line_standin):
    words = _after(service, line_standin, "員林這禮拜天有什麼活動", "第一個幾點")
    assert "剛剛的查詢沒有列出任何一筆" in words and "看不太懂" not in words


def test_item_no_longer_in_the_snapshot_asks_again(service, line_standin, pinned):
    _say(service, line_standin, EVENTS_ASK)
    pinned.at = PINNED + timedelta(minutes=5)
    write_snapshot(service.store, NewSnapshot(EVENTS[:2], "tdx", "交通部觀光署活動資料", "test", None,
                                              {"received": 2, "kept": 2, "skipped": {}}, None), now=pinned.at)
    words = _say(service, line_standin, "第三個在哪裡集合")
    assert "這一筆已經不在目前的資料裡" in words and "員林社區講座" not in words


def test_answered_item_keeps_the_list_30_minutes_from_that_turn(service, line_standin, pinned):
    _say(service, line_standin, SHOPS_ASK)
    pinned.at = PINNED + timedelta(minutes=20)
    assert "電話：04-8000002" in _say(service, line_standin, "第2家電話幾號")
    pinned.at = PINNED + timedelta(minutes=40)  # 40 after the list, 20 after the last turn about it
    words = _say(service, line_standin, "剛剛那家在哪")
    assert "地址：員林市光明街2號" in words


# -- resolve: the pick among the listed items, without a store -------------------------------------

@settings(max_examples=200, deadline=None)
@given(st.integers(min_value=1, max_value=12), st.integers(min_value=-15, max_value=15).filter(bool))
def test_resolve_position_picks_that_item_or_none_beyond_the_list(count, position):
    items = tuple(ListedItem(ItemKind.EVENT, f"e{index}") for index in range(1, count + 1))
    picked = resolve(ItemRef(position), items)
    if abs(position) > count:
        assert picked is None
    else:
        assert isinstance(picked, Picked)
        expected = position if position > 0 else count + position + 1
        assert (picked.position, picked.item.id) == (expected, f"e{expected}")


def test_resolve_pointer_and_word():
    items = tuple(ListedItem(ItemKind.PLACE, f"p{index}") for index in (1, 2, 3))
    named = ("和米素食 花壇鄉", "綠園 員林市", "禪味 員林市")
    assert resolve(ItemRef(), items[:1]) == Picked(items[0], 1)
    assert resolve(ItemRef(), items) == (1, 2, 3)
    assert resolve(ItemRef(), items, focus="p3") == Picked(items[2], 3)
    assert resolve(ItemRef(name_word="和米"), items, named) == Picked(items[0], 1)
    assert resolve(ItemRef(name_word="員林"), items, named) == (2, 3)
    assert resolve(ItemRef(name_word="鹿港"), items, named) == (1, 2, 3)


def test_item_of_a_snapshot_not_confirmed_for_long_says_it_may_be_out_of_date(service, line_standin, pinned):
    pinned.at = PINNED + timedelta(days=3)  # the snapshot was last confirmed 3 days before (limit: 2 days)
    _say(service, line_standin, "員林12/5有什麼活動")
    words = _say(service, line_standin, "第二個在哪")
    assert "地點：員林公園東側廣場" in words and "內容可能已經過時" in words


def test_word_naming_every_listed_item_asks_which_without_saying_none(service, line_standin):
    words = _after(service, line_standin, SHOPS_ASK, "那家員林的在哪")
    assert "剛剛列了 3 家店家，你問的是哪一家" in words and "沒有看到" not in words


# -- a bare question after an item turn: about that item -------------------------------------------

_SHOP_WORDS = ("營業時間", "菜單", "店家", "看不太懂")


def test_bare_when_after_an_item_turn_is_that_items_start_time(service, line_standin):
    _say(service, line_standin, EVENTS_ASK)
    _say(service, line_standin, "第二個在哪裡")
    words = _say(service, line_standin, "幾點開始")
    assert "「員林假日小農市集」" in words and "09:00 開始" in words
    assert not any(word in words for word in _SHOP_WORDS)


@pytest.mark.parametrize("then, said", [("要錢嗎", "活動資料沒有記錄要不要錢"), ("在哪裡", "地點：員林公園東側廣場")])
def test_bare_price_or_place_after_an_item_turn_is_that_items(service, line_standin, then, said):
    _say(service, line_standin, EVENTS_ASK)
    _say(service, line_standin, "第二個幾點")
    words = _say(service, line_standin, then)
    assert "「員林假日小農市集」" in words and said in words
    assert not any(word in words for word in _SHOP_WORDS)


@pytest.mark.parametrize("then", ["幾點開始", "要錢嗎"])
def test_bare_event_question_after_an_events_list_never_gets_shop_wording(service, line_standin, then):
    words = _after(service, line_standin, EVENTS_ASK, then)
    assert not any(word in words for word in _SHOP_WORDS)
    assert "員林假日小農市集" in words  # which one? with the listed events


def test_bare_question_without_a_list_keeps_the_routers_reading(service, line_standin):
    words = _say(service, line_standin, "要錢嗎")
    assert "員林假日小農市集" not in words and "第 " not in words


def test_item_turn_reads_the_events_snapshot_once(service, line_standin, monkeypatch):
    from shared.events import snapshots
    from shared.turn import engine, item_answer

    _say(service, line_standin, EVENTS_ASK)
    reads = []

    def counted(store):
        reads.append(store)
        return snapshots.load_current_snapshot(store)

    monkeypatch.setattr(engine, "load_current_snapshot", counted)
    monkeypatch.setattr(item_answer, "load_current_snapshot", counted)
    words = _say(service, line_standin, "第三個在哪裡集合")
    assert "第 3 個：「員林社區講座」" in words
    assert len(reads) == 1  # the text turn's own read, used again for the item's record


# -- a shop pointed at (那家, 這家, 那間) with a question of its own ------------------------------------

@pytest.mark.parametrize("then, said", [("那家有賣便當嗎", "你問的「有賣便當」"), ("這家可以內用嗎", "你問的「可以內用」"),
                                        ("那間有沒有賣便當", "你問的「有沒有賣便當」"),
                                        ("剛剛那家有賣便當嗎", "你問的「有賣便當」")])
def test_shop_pointed_at_with_a_question_no_record_holds_says_so_once(service, line_standin, then, said):
    _after(service, line_standin, SHOPS_ASK, "第2家電話")
    words = _say(service, line_standin, then)
    assert "第 2 家：「員林禪味素食」" in words
    assert words.count("沒有記錄") == 1 and f"店家資料沒有記錄{said}" in words and "04-8000002" in words
    assert "哪個鄉鎮" not in words and "其他細節" not in words


def test_shop_pointed_at_diet_question_says_the_diets_its_record_lists(service, line_standin):
    _after(service, line_standin, SHOPS_ASK, "第3家在哪")
    words = _say(service, line_standin, "這家有全素嗎")
    assert "「員林綠園素食」" in words and "店家資料列的素別：蔬食" in words


def test_shop_pointed_at_among_several_asks_which_with_the_question_on_each_button(service, line_standin):
    _say(service, line_standin, SHOPS_ASK)
    messages = reply_messages(service, line_standin, text_event("那家有賣便當嗎"))
    assert "你問的是哪一家" in all_text(messages)
    texts = [item["action"]["text"] for item in messages[-1]["quickReply"]["items"]]
    assert texts[:2] == ["第1家有賣便當嗎", "第2家有賣便當嗎"]


@pytest.mark.parametrize("then", ["那家有什麼活動", "那家在花壇有嗎", "那家明天有開嗎"])
def test_shop_pointer_with_another_condition_is_not_an_item_question(service, line_standin, then):
    _after(service, line_standin, SHOPS_ASK, "第2家電話")
    assert "你問的「" not in _say(service, line_standin, then)


def test_shop_answer_writes_its_source_day_as_every_reply_does(service, line_standin):
    words = _after(service, line_standin, SHOPS_ASK, "第2家電話幾號")
    assert "2026/9/27 查閱" in words and "2026-09-27" not in words
