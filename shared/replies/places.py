"""Render search_local_places results as LINE messages (typed line-bot-sdk v3 models).

Every reply names its sources with their access dates, says in everyday words what the snapshot
does not record (營業時間 / 是否營業, 步行距離, 無障礙) and where the festival window stands.

Source: docs/design.md §5 (replies name what is not recorded).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from linebot.v3.messaging import (
    FlexBox,
    FlexBubble,
    FlexCarousel,
    FlexMessage,
    FlexSeparator,
    FlexText,
    Message,
    QuickReply,
    QuickReplyItem,
    TextMessage,
)

from shared.areas import WHOLE_COUNTY
from shared.clock import TAIPEI
from shared.diets import diet_label
from shared.line import limits
from shared.replies.area_picker import QUICK_REPLY_MAX_ITEMS, area_postback, area_quick_reply, vague_area_note

CAROUSEL_MAX_BUBBLES = 12
ALT_TEXT_MAX_CHARS = limits.ALT_TEXT  # LINE counts UTF-16 units (shared/line/limits.py)


SOURCE_KIND_WORDS = {
    "official_poster": "蔬食節官方店家名單圖",
    "government_announcement": "縣府公告",
    "government_business_record": "縣府公開店家資料",
    "merchant_menu_on_platform": "商家外送平台菜單",
}

FIELD_WORDS = {"name": "店名", "area": "鄉鎮", "address": "地址", "phone": "電話"}

#: In the words people use, in the order they ask about them.
UNKNOWN_FIELD_WORDS = {
    "hours": "營業時間",
    "open_now": "現在是否營業",
    "walking_distance_m": "步行距離",
    "accessibility": "無障礙設施（輪椅進出、無障礙廁所等）",
    "coordinates": "地圖定位",
}


def _source_words(source: dict[str, str]) -> str:
    """「縣府公告，2026-09-27 查閱」."""
    kind = SOURCE_KIND_WORDS.get(source["kind"], "其他公開資料")
    return f"{kind}，{source['accessed_on']} 查閱"


def _taipei_minute(iso: str) -> str:
    """ISO instant → 「2026/9/30 17:00」 on the Asia/Taipei wall clock."""
    local = datetime.fromisoformat(iso).astimezone(TAIPEI)
    return f"{local.year}/{local.month}/{local.day} {local:%H:%M}"


def campaign_words(state: str, campaign: dict[str, Any]) -> str:
    """Say where the festival window stands, with its dates on the Asia/Taipei clock.

    Args:
        state: "not_started" | "active_by_announcement" | "ended".
        campaign: Campaign.as_dict(): name, starts_at, ends_at (exclusive), ...
    Returns:
        One zh-TW sentence, e.g. 「2026 彰化蔬食節數位集章已結束（2026/9/30 17:00 截止）…」.
    Source: docs/design.md §5 (campaign state; places stay searchable after it ends).
    """
    name, start, end = campaign["name"], _taipei_minute(campaign["starts_at"]), _taipei_minute(campaign["ends_at"])
    if state == "not_started":
        return f"{name}尚未開始（{start} 起，{end} 截止）。"
    if state == "active_by_announcement":
        return f"{name}活動期間（依縣府公告，{end} 截止）。"
    return f"{name}已結束（{end} 截止）；店家資料仍可查詢，但不代表店家仍參加活動。"


def _evidence_lines(place: dict[str, Any]) -> list[str]:
    """Dietary evidence in words, one line per source: 「有全素、蛋奶素品項（來源：…）」."""
    by_source: dict[str, list[str]] = {}
    for kind, source in place["dietary_evidence"].items():
        by_source.setdefault(source["id"], []).append(kind)
    lines = []
    for kinds in by_source.values():
        source = place["dietary_evidence"][kinds[0]]
        strict = [diet_label(kind) for kind in kinds if kind != "vegetarian"]
        claim = f"有{'、'.join(strict)}品項" if strict else f"列為{diet_label('vegetarian')}店家"
        lines.append(f"{claim}（來源：{_source_words(source)}）")
    if set(place["dietary_options"]) == {"vegetarian"}:
        lines.append("名單沒有細分全素、蛋奶素或奶素，點餐前請向店家確認。")
    else:
        lines.append("不是每道餐點都符合，點餐前請向店家確認。")
    return lines


def _field_source_lines(place: dict[str, Any]) -> list[str]:
    """「店名、鄉鎮：蔬食節官方店家名單圖，2026-09-27 查閱」, one line per source."""
    by_source: dict[str, list[str]] = {}
    for field, source in place["field_sources"].items():
        by_source.setdefault(source["id"], []).append(FIELD_WORDS.get(field, field))
    sources = {source["id"]: source for source in place["field_sources"].values()}
    return [f"{'、'.join(fields)}：{_source_words(sources[sid])}" for sid, fields in by_source.items()]


def _text(text: str, **style: Any) -> FlexText:
    return FlexText(text=text, wrap=True, **style)


def _bubble(place: dict[str, Any]) -> FlexBubble:
    hours_unknown = "hours" in place["unknown_fields"] or "open_now" in place["unknown_fields"]
    contents = [
        _text(place["name"], weight="bold", size="lg"),
        _text(place["area"], size="sm", color="#666666"),
        _text(f"地址：{place['address']}", size="sm", margin="md"),
        _text(f"電話：{place['phone']}", size="sm"),
    ]
    if hours_unknown:
        contents.append(_text("營業時間：這份資料未記錄，請先打電話問店家", size="sm", color="#B45309"))
    contents.append(FlexSeparator(margin="md"))
    contents += [_text(line, size="sm", margin="sm") for line in _evidence_lines(place)]
    contents.append(_text("資料來源", size="xs", color="#888888", margin="md", weight="bold"))
    contents += [_text(line, size="xs", color="#888888") for line in _field_source_lines(place)]
    return FlexBubble(body=FlexBox(layout="vertical", spacing="xs", contents=contents))


def _query_words(query: dict[str, Any]) -> str:
    """「花壇鄉、全素、關鍵字「麵」」 for the searched conditions."""
    parts = [query["area"] or WHOLE_COUNTY]  # no township in an answered search: every township (全彰化)
    if query["dietary_type"] != "any":
        parts.append(diet_label(query["dietary_type"]))
    if query["keyword"]:
        parts.append(f"關鍵字「{query['keyword']}」")
    return "、".join(parts)


def _alt_text(result: dict[str, Any], names: list[str]) -> str:
    query = result["query"]
    scope = (query["area"] or WHOLE_COUNTY) + ("" if query["dietary_type"] == "any" else f"，{diet_label(query['dietary_type'])}")
    text = f"蔬食店家 {result['total']} 家：{'、'.join(names)}（{scope}）"
    return limits.fit(text, limits.ALT_TEXT)


def _unknown_words(result: dict[str, Any]) -> str:
    fields = [words for field, words in UNKNOWN_FIELD_WORDS.items() if field in result["unknown_fields"]]
    if not fields:
        return ""
    return f"這份店家資料沒有記錄{'、'.join(fields)}；出發前請先打電話問店家，確認有營業、方便進出再過去。"


def _render_ok(result: dict[str, Any]) -> list[Message]:
    shown = result["places"][:CAROUSEL_MAX_BUBBLES]
    carousel = FlexMessage(
        alt_text=_alt_text(result, [place["name"] for place in shown]),
        contents=FlexCarousel(contents=[_bubble(place) for place in shown]),
    )
    lines = [f"店家資料版本 {result['catalog_version']}（{result['recorded_on']} 記錄）。"]
    if result["total"] > len(shown):
        lines.append(f"共 {result['total']} 家，先列出 {len(shown)} 家；加上關鍵字可以縮小範圍。")
    lines.append(_unknown_words(result))
    lines.append(campaign_words(result["campaign_state"], result["campaign"]))
    return [carousel, TextMessage(text="\n".join(line for line in lines if line))]


def _render_needs_area(result: dict[str, Any], stated_diet: str | None = None, vague: bool = False,
                       said: str | None = None, vague_words: tuple[str, ...] = ()) -> list[Message]:
    choices = result.get("area_choices", [])
    # the diet said this turn, in the question too (全素 → 有全素的店家), not 蔬食 for every diet
    what = ("的蔬食店家" if stated_diet in (None, "vegetarian") else "的店家（不限素別）" if stated_diet == "any"
            else f"有{diet_label(stated_diet)}的店家")
    text = (
        f"想找哪個鄉鎮{what}？目前有店家資料的鄉鎮：{'、'.join(choices) or '（目前沒有）'}。"
        "請點下方的鄉鎮，或直接輸入鄉鎮名稱。"
    )
    if vague:
        text += f"\n（{vague_area_note(vague_words, 'places')}。）"
    return [TextMessage(text=text, quick_reply=area_quick_reply("places", choices, diet=stated_diet,
                                                                said=said if stated_diet else None))]


def _render_no_match(result: dict[str, Any], stated_diet: str | None = None, said: str | None = None) -> list[Message]:
    query = result["query"]
    others = [township for township in result.get("area_choices", []) if township != query["area"]]
    lines = [f"這份店家資料（{result['catalog_version']}）裡，沒有找到符合「{_query_words(query)}」的店家。"]
    items: list[QuickReplyItem] = []
    has_places = query["area"] in result.get("area_choices", [])
    if not has_places:
        lines.append(f"這份資料目前沒有{query['area']}的店家。")
    elif query["dietary_type"] != "any":
        # Offer the wider search only where it can find something (no dead-end button).
        lines.append(f"名單只列有來源證明的素別；可以改成不限素別，在{query['area']}再查一次。")
        items.append(QuickReplyItem(action=area_postback("places", query["area"], diet="any", label="不限素別")))
    if others:
        lines.append(f"其他有店家資料的鄉鎮：{'、'.join(others)}。")
        # the other townships keep the diet said (鍋邊素 → 花壇鄉 still names 鍋邊素)
        other_reply = area_quick_reply("places", others, diet=stated_diet, said=said if stated_diet else None)
        items += other_reply.items if other_reply else []
    quick_reply = QuickReply(items=items[:QUICK_REPLY_MAX_ITEMS]) if items else None
    return [TextMessage(text="\n".join(lines), quick_reply=quick_reply)]


def _render_unavailable(result: dict[str, Any]) -> list[Message]:
    text = "店家資料的版本正在核對，這次先不列出店家，以免給你過期的資訊。請稍後再查一次。"
    return [TextMessage(text=text)]


_RENDERERS = {
    "ok": _render_ok,
    "needs_area": _render_needs_area,
    "no_match": _render_no_match,
    "unavailable": _render_unavailable,
}


def render_places(result: dict[str, Any], *, stated_diet: str | None = None, vague: bool = False,
                  said: str | None = None, vague_words: tuple[str, ...] = ()) -> list[Message]:
    """Turn a search_local_places result into at most 2 LINE messages.

    Args:
        result: the dict returned by shared.places.search.search_local_places.
        stated_diet: a diet the user said this turn; needs_area's township buttons carry it
            (``places:area=<township>&diet=<type>``) so the tap keeps it; so do no_match's other townships.
        said: finer diet words the catalog does not record (鍋邊素、不吃蔥蒜), kept on those buttons
            beside the diet (``&said=…``) so the reply after the tap still names them.
        vague: the user said a vague area (附近, 彰化, 彰化縣), not tapped 查蔬食.
        vague_words: which ones (``shared.areas.vague_words_in``): only those are explained.
    Returns:
        ok → [FlexMessage (carousel, ≤ 12 bubbles, alt_text naming the shops and township),
        TextMessage (catalog version, what is not recorded, campaign state)];
        needs_area → [TextMessage with township quick replies (postback ``places:area=<township>``);
        why 附近 / 彰化 cannot be searched is said only when ``vague`` (the user said one)];
        no_match → [TextMessage naming the search, suggesting no diet filter / other townships];
        unavailable → [TextMessage: the data is being checked].
    Raises:
        KeyError: the status is not one of the four above.
        ValueError: a postback would exceed LINE's 300-character data limit.
    Source: docs/design.md §5 (search_local_places result statuses).
    """
    if result["status"] == "needs_area":
        return _render_needs_area(result, stated_diet, vague, said, vague_words)
    if result["status"] == "no_match":
        return _render_no_match(result, stated_diet, said)
    return _RENDERERS[result["status"]](result)
