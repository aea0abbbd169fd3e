"""Rendering place and event results as typed LINE messages (docs/design.md §5 replies)."""

from __future__ import annotations

import copy
import json
from datetime import date, datetime

import pytest
from linebot.v3.messaging import FlexMessage, LocationAction, PostbackAction, TextMessage

from shared.areas import TOWNSHIPS
from shared.clock import TAIPEI
from shared.diets import diet_label
from shared.events.search import Event, EventSnapshot, search_local_events, weekend_range
from shared.places.catalog import DEFAULT_CATALOG_PATH, load_place_catalog
from shared.places.search import search_local_places
from shared.replies.area_picker import area_quick_reply, checked_postback
from shared.replies.events import render_events
from shared.replies.places import render_places
from shared.signing import POSTBACK_DATA_MAX_CHARS
from tools import reply_budget

DURING = datetime(2026, 9, 30, 16, 59, 59, tzinfo=TAIPEI)
ENDED = datetime(2026, 9, 30, 17, 0, 0, tzinfo=TAIPEI)
BEFORE = datetime(2026, 7, 31, 23, 59, 59, tzinfo=TAIPEI)
MONDAY = datetime(2026, 11, 30, 10, 0, tzinfo=TAIPEI)


def _strings(node, keys=("text", "altText")) -> list[str]:
    """Every text / altText string inside a serialised message."""
    if isinstance(node, dict):
        return [s for key, value in node.items()
                for s in ([value] if key in keys and isinstance(value, str) else _strings(value, keys))]
    if isinstance(node, list):
        return [s for item in node for s in _strings(item, keys)]
    return []


def _all_text(messages) -> str:
    return "\n".join(s for message in messages for s in _strings(message.to_dict()))


def _postback_data(messages) -> list[str]:
    return [s for message in messages for s in _strings(message.to_dict(), keys=("data",))]


def _quick_actions(message: TextMessage) -> list[PostbackAction]:
    return [item.action for item in message.quick_reply.items] if message.quick_reply else []


def _bubbles(message: FlexMessage) -> list:
    return message.contents.contents


def _places_catalog_with(tmp_path, count: int):
    raw = json.loads(DEFAULT_CATALOG_PATH.read_text(encoding="utf-8"))
    template = raw["places"][1]
    raw["places"] = [{**copy.deepcopy(template), "id": f"t-{n:02d}", "name": f"測試店{n:02d}"} for n in range(count)]
    path = tmp_path / "many.json"
    path.write_text(json.dumps(raw, ensure_ascii=False), encoding="utf-8")
    return load_place_catalog(path)


# --- places -----------------------------------------------------------------------------------

def test_render_places_ok_is_a_source_line_then_the_carousel():
    messages = render_places(search_local_places("花壇", None, None, now=DURING))
    assert [type(m) for m in messages] == [TextMessage, FlexMessage]
    assert "和米素食" in messages[1].alt_text and "花壇鄉" in messages[1].alt_text
    assert len(_bubbles(messages[1])) == 1


def test_render_places_ok_names_its_sources_once_with_the_access_day_and_no_version():
    (text, carousel) = render_places(search_local_places("彰化市", "vegan", None, now=DURING))
    bubble = "\n".join(_strings(carousel.to_dict()))
    assert "John手作蔬食" in bubble and "04-7284398" in bubble and "彰化市華山路78號" in bubble
    assert "全素" in bubble and "來源" not in bubble  # the source is said once, before the card
    assert text.text.startswith("資料來源：彰化縣政府蔬食節名單") and "2026/9/27 查閱" in text.text
    assert "等" in text.text  # the address and menu rest on other sources too
    assert "places-" not in _all_text([text, carousel]) and "版本" not in _all_text([text, carousel])


def test_render_places_vegetarian_only_says_no_finer_type():
    (_, carousel) = render_places(search_local_places("花壇鄉", None, None, now=DURING))
    bubble = "\n".join(_strings(carousel.to_dict()))
    assert "全素品項" not in bubble and "蛋奶素品項" not in bubble
    assert "沒細分" in bubble


def test_render_places_ok_card_names_unknowns_in_everyday_words_in_three_notes_at_most():
    (_, carousel) = render_places(search_local_places("花壇鄉", None, None, now=DURING))
    bubble = carousel.to_dict()["contents"]["contents"][0]
    notes = reply_budget.card_notes(bubble)
    assert len(notes) <= 3 and any("營業時間" in note and "無障礙" in note and "打電話" in note for note in notes)
    assert "open_now" not in str(notes) and "walking_distance_m" not in str(notes)


@pytest.mark.parametrize(("now", "expected", "absent"), [
    (DURING, "活動期間", "已結束"),
    (ENDED, "已結束", "活動期間"),
    (BEFORE, "尚未開始", "已結束"),
])
def test_render_places_campaign_state_in_words(now, expected, absent):
    (_, carousel) = render_places(search_local_places("花壇鄉", None, None, now=now))
    words = _all_text([carousel])
    assert expected in words and absent not in words
    assert "9/30" in words or "8/1 起" in words  # the day the window ends, or starts


def test_render_places_many_places_caps_carousel_at_12(tmp_path):
    catalog = _places_catalog_with(tmp_path, 15)
    result = search_local_places("花壇鄉", None, None, now=DURING, catalog=catalog)
    (text, carousel) = render_places(result)
    assert result["total"] == 15 and len(_bubbles(carousel)) == 12
    assert "15" in text.text
    assert len(carousel.alt_text) <= 400


@pytest.mark.parametrize("area", [None, "附近", "彰化"])
def test_render_places_needs_area_offers_townships_with_data(area):
    (message,) = render_places(search_local_places(area, None, None, now=DURING))
    location, *actions = _quick_actions(message)
    assert isinstance(location, LocationAction)  # the nearest shops with a sourced position (near me)
    assert [action.data for action in actions] == ["places:area=彰化市", "places:area=花壇鄉"]
    assert all(isinstance(action, PostbackAction) and action.display_text for action in actions)
    assert "鄉鎮" in message.text


def test_render_places_no_match_names_search_and_suggests_alternatives():
    (message,) = render_places(search_local_places("花壇鄉", "vegan", None, now=DURING))
    assert "花壇鄉" in message.text and "全素" in message.text and "不限素別" in message.text
    assert "彰化市" in message.text
    data = [action.data for action in _quick_actions(message)]
    assert "places:area=花壇鄉&diet=any" in data and "places:area=彰化市" in data


def test_render_places_unavailable_says_checking():
    result = search_local_places("花壇鄉", None, None, now=DURING, expected_version="old")
    (message,) = render_places(result)
    assert "正在更新" in message.text and message.quick_reply is None


# --- events -----------------------------------------------------------------------------------

def _event_results() -> dict[str, dict]:
    return {
        "ok": search_local_events(None, None, None, now=MONDAY),
        "needs_area": search_local_events(None, "附近", None, now=MONDAY),
        "no_match": search_local_events("2026-12-25", "彰化市", None, now=MONDAY),
        "unavailable": search_local_events(None, None, None, now=MONDAY, expected_version="old"),
    }


@pytest.mark.parametrize("status", ["ok", "needs_area", "no_match", "unavailable"])
def test_render_events_every_status_says_demo_once_in_its_text_and_no_card_repeats_it(status):
    result = _event_results()[status]
    assert result["status"] == status
    messages = render_events(result)
    assert messages
    texts = [message.text for message in messages if not isinstance(message, FlexMessage)]
    assert "".join(texts).count("示範") == 1
    for message in messages:
        if isinstance(message, FlexMessage):
            assert "示範" in message.alt_text  # the notification preview, read alone
            assert not any("示範" in "".join(_strings(bubble.to_dict())) for bubble in _bubbles(message))


def test_render_events_past_event_labelled_ended():
    result = search_local_events("2026-11-29/2026-12-06", None, None, now=MONDAY)
    (text, carousel) = render_events(result)
    bubbles = {bubble_text[0]: bubble_text for bubble_text in (_strings(b.to_dict()) for b in _bubbles(carousel))}
    assert "茉莉花田散步導覽（已結束）" in bubbles
    assert "週末蔬食小農市集" in bubbles
    assert "示範" in text.text


def test_render_events_upcoming_event_not_labelled_ended():
    (text, carousel) = render_events(search_local_events(weekend_range(MONDAY), "彰化市", None, now=MONDAY))
    assert "已結束" not in _all_text([carousel, text])


def test_render_events_missing_time_and_meeting_point_say_not_provided():
    (_, carousel) = render_events(search_local_events("2026-12-06/2026-12-13", None, None, now=MONDAY))
    texts = [_strings(b.to_dict()) for b in _bubbles(carousel)]
    by_title = {t[0]: "\n".join(t) for t in texts}
    assert "集合地點：未提供" in by_title["親子繪本共讀午後"] and "主辦單位公告" in by_title["親子繪本共讀午後"]
    assert "時間：未提供" in by_title["老街巷弄文化散步"]
    assert "未提供" not in by_title.get("週末蔬食小農市集", "")
    assert "快照" not in "".join(by_title.values())


def test_render_events_alt_text_names_events_and_scope():
    (_, carousel) = render_events(search_local_events(weekend_range(MONDAY), "彰化市", None, now=MONDAY))
    assert carousel.alt_text.startswith("示範活動 2 筆")
    assert "週末蔬食小農市集" in carousel.alt_text and "彰化市" in carousel.alt_text


def test_render_events_many_events_caps_carousel_at_12():
    events = tuple(
        Event(id=f"t-{n}", title=f"活動{n}", area="員林市", date=date(2026, 12, 1 + n), start_time=None,
              meeting_point=None, tags=(), source_kind="demo")
        for n in range(20)
    )
    snapshot = EventSnapshot("t.1", date(2026, 11, 30), True, "test", events)
    (text, carousel) = render_events(search_local_events(None, None, None, now=MONDAY, snapshot=snapshot))
    assert len(_bubbles(carousel)) == 12 and "20" in text.text and "示範" in carousel.alt_text


def test_render_events_needs_area_quick_replies_are_event_postbacks():
    (message,) = render_events(_event_results()["needs_area"])
    every, location, *townships = _quick_actions(message)
    assert isinstance(location, LocationAction)  # the nearest events with a sourced position (near me)
    assert [a.data for a in [every, *townships]] == ["events:scope=all"] + [
        f"events:area={t}" for t in ("彰化市", "鹿港鎮", "花壇鄉", "員林市")]


# --- area picker and limits ---------------------------------------------------------------------

@pytest.mark.parametrize("kind", ["places", "events"])
def test_area_quick_reply_all_townships_keeps_line_limits(kind):
    actions = [item.action for item in area_quick_reply(kind, list(TOWNSHIPS)).items]
    assert len(actions) == 13
    assert all(action.data == f"{kind}:area={action.label}" for action in actions)
    assert all(len(action.data) <= POSTBACK_DATA_MAX_CHARS for action in actions)


def test_area_quick_reply_unknown_kind_raises():
    with pytest.raises(ValueError):
        area_quick_reply("memory", ["花壇鄉"])


def test_checked_postback_data_over_300_raises():
    checked_postback("ok", "x" * 300, "ok")
    with pytest.raises(ValueError):
        checked_postback("too long", "x" * 301, "too long")


def test_render_every_reply_postback_data_within_limit():
    messages = [
        *render_places(search_local_places("附近", None, None, now=DURING)),
        *render_places(search_local_places("花壇鄉", "lacto", None, now=DURING)),
        *[m for result in _event_results().values() for m in render_events(result)],
    ]
    data = _postback_data(messages)
    assert data and all(len(item) <= POSTBACK_DATA_MAX_CHARS for item in data)


def test_render_places_no_match_in_township_without_data_offers_no_dead_end():
    from datetime import datetime, timezone

    from shared.places.search import search_local_places
    from shared.replies.places import render_places

    now = datetime(2026, 11, 30, 4, tzinfo=timezone.utc)
    result = search_local_places("員林", "vegetarian", None, now=now)
    assert result["status"] == "no_match" and "員林市" not in result["area_choices"]
    [message] = render_places(result)
    labels = [item.action.label for item in (message.quick_reply.items if message.quick_reply else [])]
    assert "不限素別" not in labels
    assert set(labels) <= set(result["area_choices"]) and labels
    assert "員林市" in message.text


def test_render_places_vegetarian_only_shop_named_with_the_one_diet_label():
    """A shop listed only as vegetarian reads 「列為蔬食店家」: the label table's word, as every reply says it."""
    words = _all_text(render_places(search_local_places("花壇", None, None, now=DURING)))
    assert f"列為{diet_label('vegetarian')}店家" in words and "列為素食店家" not in words
