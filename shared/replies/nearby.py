"""What a resident reads after sharing a location: the nearest shops or events by straight-line
distance, or why none is listed (typed line-bot-sdk v3 models).

Every listing says once, in its lead, that the distance is a straight line, not a walking route (the
cards give the distance as 「直線約…」), and ends with next steps: the townships of what it lists, the
other search (查活動 / 查蔬食) and 選單. A card says what a shop's record
lacks (its opening hours, unless a source records them: then they are shown); a distance is 「直線約 1.2 公里」, or metres under 1 km (「直線約 350 公尺」). When
nothing can be listed, the reply says why once and offers the townships that have data, with the
location button to share another place. The shared location itself is never repeated back.

Source: docs/data.md (Near me), docs/design.md §5 and §7 (the budget of an answer).
"""
from __future__ import annotations

from datetime import date

from linebot.v3.messaging import (
    FlexBox,
    FlexBubble,
    FlexCarousel,
    FlexMessage,
    FlexSeparator,
    FlexText,
    MessageAction,
    QuickReply,
    QuickReplyItem,
    TextMessage,
)

from shared.context import Reply
from shared.diets import diet_label
from shared.events.nearby import NearbyEvents
from shared.events.search import EventSnapshot
from shared.geo import NEAR_LIMIT_M, NearStatus
from shared.line import limits
from shared.places.nearby import NearbyPlaces
from shared.replies.area_picker import QUICK_REPLY_MAX_ITEMS, SearchKind, area_postback, area_quick_reply, location_item
from shared.replies.events import DEMO_NOTE, month_day
from shared.replies.places import diet_note, shop_bubble, source_line, unknown_note

#: A card's notes (at most three, docs/design.md §7); the straight line is said once, in the lead.
EVENT_CHECK = "時間地點請以主辦單位公告為準"
#: Fields a nearby card does not call missing: the straight-line distance is given.
_MEASURED = frozenset({"coordinates", "walking_distance_m"})


def distance_words(metres: float) -> str:
    """350.4 → 「直線約 350 公尺」 (to 10 m, at least 10); 1234 → 「直線約 1.2 公里」 (to 0.1 km)."""
    if metres < 995:
        return f"直線約 {max(10, int(round(metres, -1)))} 公尺"
    return f"直線約 {metres / 1000:.1f} 公里"


def _limit_km() -> str:
    return f"{NEAR_LIMIT_M / 1000:g} 公里"


def _text(text: str, **style) -> FlexText:
    return FlexText(text=text, wrap=True, **style)


def _place_bubble(view: dict, distance: str) -> FlexBubble:
    """One shop's card as the shop answers draw it (shared.replies.places.shop_bubble), with its distance
    under its name, and three notes: its diets, not a route, and what its record lacks (營業時間 when
    unknown; distance is not said to be missing: the straight line is given)."""
    lacking = unknown_note([field for field in view["unknown_fields"] if field not in _MEASURED])
    notes = [note for note in (diet_note(view), lacking) if note]
    return shop_bubble(view, f"{view['area']}・{distance}", notes)


def _picker(kind: SearchKind, choices: tuple[str, ...], diet: str | None = None) -> QuickReply | None:
    """The location button, then the townships (at most 12) as search buttons."""
    return area_quick_reply(kind, list(choices), diet=diet, with_location=True)


def _next_steps(kind: SearchKind, townships: list[str], diet: str | None = None) -> QuickReply:
    """After a nearby listing: each township listed (a search there, in the order listed), the other
    search (查活動 after shops, 查蔬食 after events) and 選單."""
    other = "查活動" if kind == "places" else "查蔬食"
    items = [QuickReplyItem(action=area_postback(kind, township, diet=diet if kind == "places" else None))
             for township in dict.fromkeys(townships)][:QUICK_REPLY_MAX_ITEMS - 2]
    items += [QuickReplyItem(action=MessageAction(label=label, text=label)) for label in (other, "選單")]
    return QuickReply(items=items)


def _with_township_note(lines: list[str], township: str | None, choices: tuple[str, ...], noun: str) -> None:
    """Where the shared location is, when LINE's address for it names a township."""
    if township is None:
        return
    has = "" if township in choices else f"，那裡目前沒有{noun}資料"
    lines.insert(0, f"依 LINE 附上的地址，你分享的位置在{township}{has}。")


def places_reply(result: NearbyPlaces, *, township: str | None = None) -> Reply:
    """The nearest shops, or why none is listed.

    Args:
        result: shared.places.nearby.nearest_places's answer.
        township: the township LINE's address of the location names (shared.address), or None.
    Returns:
        ok → [a short text with the one source line, a carousel: per shop its distance, then at most
        three notes (its diets, not a route, what its record lacks: opening hours when unknown)];
        otherwise one text with the townships that have shops and the location button.
    """
    diet = result.dietary_type if result.dietary_type != "any" else None
    if result.status is NearStatus.OK:
        views = [{**near.view, "field_sources": {**near.view["field_sources"],
                                                 "coordinates": near.position_source.as_dict()}}
                 for near in result.near]
        lead = f"依你分享的位置，列出直線距離最近的 {len(result.near)} 家（不是步行路線）。"
        carousel = FlexMessage(
            alt_text=limits.fit("最近的店家：" + "、".join(
                f"{near.view['name']} {distance_words(near.distance_m)}" for near in result.near), limits.ALT_TEXT),
            contents=FlexCarousel(contents=[_place_bubble(near.view, distance_words(near.distance_m))
                                            for near in result.near]),
            quick_reply=_next_steps("places", [near.view["area"] for near in result.near], diet))
        return Reply([TextMessage(text=f"{source_line(views)}\n{lead}"), carousel])
    if result.status is NearStatus.UNAVAILABLE:
        return Reply([TextMessage(text="店家資料正在更新，這次先不列出店家。請稍後再分享一次位置，或點下方的選項。",
                                  quick_reply=QuickReply(items=[location_item()]))])
    if result.status is NearStatus.NONE_NEAR:
        lines = [f"你分享的位置 {_limit_km()}內，沒有記錄了地圖位置的店家"
                 f"（最近的一家{distance_words(result.nearest_m or 0)}）。"]
    elif diet and result.located_any:
        lines = [f"有記錄地圖位置的店家裡，沒有列{diet_label(diet)}的店家，沒辦法依你的位置列出。"]
    else:
        lines = ["店家資料還沒有記錄店家的地圖位置，沒辦法依你的位置算距離。"]
    _with_township_note(lines, township, result.area_choices, "店家")
    lines.append(f"有店家資料的鄉鎮：{'、'.join(result.area_choices) or '（目前沒有）'}，請點下方的鄉鎮。")
    return Reply([TextMessage(text="\n".join(lines), quick_reply=_picker("places", result.area_choices, diet))])


def outside_county_reply(choices: tuple[str, ...]) -> Reply:
    """The shared location is not in (or at the edge of) Changhua County: say so, offer its townships."""
    text = ("你分享的位置看起來不在彰化縣，我只有彰化縣的店家和活動資料，所以不列出附近的店家。\n"
            f"有店家資料的鄉鎮：{'、'.join(choices) or '（目前沒有）'}，請點下方的鄉鎮，或分享彰化縣內的位置。")
    return Reply([TextMessage(text=text, quick_reply=_picker("places", choices))])


def unreadable_location_reply() -> Reply:
    """LINE sent a location whose latitude or longitude is not a position."""
    return Reply([TextMessage(text="這個位置我讀不出來，請再分享一次，或直接輸入鄉鎮名稱。",
                              quick_reply=QuickReply(items=[location_item()]))])


def _event_days(first: date, last: date) -> str:
    return f"{first.month}/{first.day}" + ("" if last == first else f"～{last.month}/{last.day}")


def _event_bubble(event, distance: str) -> FlexBubble:
    contents = [
        _text(event.title, weight="bold", size="lg"),
        _text(f"{event.area}・{distance}", size="sm", color="#666666"),
        _text(f"日期：{_event_days(event.date, event.last_day)}", size="sm", margin="md"),
        _text(f"地點：{event.meeting_point or '未提供'}", size="sm"),
        FlexSeparator(margin="md"),
        _text(EVENT_CHECK, size="xs", color="#666666", margin="sm"),
    ]
    return FlexBubble(body=FlexBox(layout="vertical", spacing="xs", contents=contents))


def _events_source(snapshot: EventSnapshot) -> str:
    """The events answer's one source line (or the demo note): 「資料來源：觀光署活動資料，11/28 更新」."""
    if snapshot.demo:
        return DEMO_NOTE
    updated = snapshot.source_updated_at
    return f"資料來源：{snapshot.source_name or '活動資料'}" + (f"，{month_day(updated.isoformat())} 更新"
                                                            if updated else "")


def events_reply(result: NearbyEvents, snapshot: EventSnapshot | None) -> Reply:
    """The nearest events that have not ended, or why none is listed.

    Args:
        result: shared.events.nearby.nearest_events's answer (UNAVAILABLE when ``snapshot`` is None).
        snapshot: the events snapshot it read (its source, or demo), or None when it could not be read.
    Returns:
        ok → [the source line and a short lead, a carousel: per event its distance and two notes];
        otherwise one text with the townships that have events and the location button.
    """
    if snapshot is None or result.status is NearStatus.UNAVAILABLE:
        return Reply([TextMessage(text="活動資料正在更新，這次先不列出活動。請稍後再問一次。",
                                  quick_reply=QuickReply(items=[location_item()]))])
    if result.status is NearStatus.OK:
        lead = f"依你分享的位置，列出直線距離最近、還沒結束的 {len(result.near)} 個活動（不是步行路線）。"
        carousel = FlexMessage(
            alt_text=limits.fit(("示範活動" if snapshot.demo else "最近的活動") + "：" + "、".join(
                f"{near.event.title} {distance_words(near.distance_m)}" for near in result.near), limits.ALT_TEXT),
            contents=FlexCarousel(contents=[_event_bubble(near.event, distance_words(near.distance_m))
                                            for near in result.near]),
            quick_reply=_next_steps("events", [near.event.area for near in result.near]))
        return Reply([TextMessage(text=f"{_events_source(snapshot)}\n{lead}"), carousel])
    if result.status is NearStatus.NONE_NEAR:
        first = (f"你分享的位置 {_limit_km()}內，沒有記錄了地圖位置、還沒結束的活動"
                 f"（最近的一個{distance_words(result.nearest_m or 0)}）。")
    else:
        first = "活動資料沒有記錄活動的地圖位置，沒辦法依你的位置找附近的活動。"
    lines = [first, f"有活動資料的鄉鎮：{'、'.join(result.area_choices) or '（目前沒有）'}，請點下方的鄉鎮。"]
    if snapshot.demo:
        lines.append(DEMO_NOTE)
    return Reply([TextMessage(text="\n".join(lines), quick_reply=_picker("events", result.area_choices))])


def outside_county_events_reply(choices: tuple[str, ...], demo: bool) -> Reply:
    """The kept location is not in Changhua County: no nearby events; offer the townships."""
    lines = ["你分享的位置看起來不在彰化縣，我只有彰化縣的活動資料，所以不列出附近的活動。",
             f"有活動資料的鄉鎮：{'、'.join(choices) or '（目前沒有）'}，請點下方的鄉鎮。"]
    if demo:
        lines.append(DEMO_NOTE)
    return Reply([TextMessage(text="\n".join(lines), quick_reply=_picker("events", choices))])
