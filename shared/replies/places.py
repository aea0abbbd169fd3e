"""Render search_local_places results as LINE messages (typed line-bot-sdk v3 models).

Every shop answer names its sources once, in one line with the access day, and each card says in
everyday words what the data does not record (營業時間, 距離, 無障礙) and where the festival window
stands, in at most three short notes. The catalog's version stays in the audit record and the logs.

Source: docs/design.md §5 (replies name what is not recorded), §7 (the budget of an answer).
"""

from __future__ import annotations

import re
import unicodedata
from datetime import date
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
from shared.diets import diet_label
from shared.line import limits
from shared.replies.area_picker import QUICK_REPLY_MAX_ITEMS, area_postback, area_quick_reply, vague_area_note
from shared.replies.events import month_day

CAROUSEL_MAX_BUBBLES = 12
ALT_TEXT_MAX_CHARS = limits.ALT_TEXT  # LINE counts UTF-16 units (shared/line/limits.py)


#: Each source in the words people use (the source line names them once, docs/design.md §7, Wording).
SOURCE_KIND_WORDS = {
    "official_poster": "彰化縣政府蔬食節名單",
    "government_announcement": "縣府公告",
    "government_business_record": "縣府店家資料",
    "merchant_menu_on_platform": "外送平台菜單",
    "operator_list": "店家名單",
    "tdx_restaurant": "交通部觀光署資料",
}

#: Sources whose diet evidence only says 「有蔬食」: which kind is not confirmed (TDX's class or name).
UNCONFIRMED_DIET_KINDS = frozenset({"tdx_restaurant"})

#: A card's facts whose source a card names when the card rests on open data (docs/design.md §5).
FIELD_WORDS = (("address", "地址"), ("phone", "電話"), ("hours", "營業時間"))

#: In the words people use, in the order they ask about them.
UNKNOWN_FIELD_WORDS = {
    "hours": "營業時間",
    "open_now": "營業時間",
    "walking_distance_m": "距離",
    "accessibility": "無障礙",
    "coordinates": "距離",
}


#: The most characters of opening hours a card shows: longer text does not read as one line of hours.
HOURS_MAX_CHARS = 60
#: What a card and an answer say when a source records hours LOCAL cannot show as they are written.
HOURS_ASK = "請向店家確認"
#: Hours that read cleanly (after NFKC): Chinese words, digits and the marks hours are written with.
#: Latin letters (AM, PM, Mon, <p>) and any other sign make the text unreadable to a resident.
_READABLE_HOURS = re.compile(r"[\u4e00-\u9fff0-9:~\-－—–～、，,;；。.()（）【】「」/／|・·‧ ]+")


def readable_hours(hours: Any) -> str | None:
    """Opening hours as a resident can read them, or None.

    Args:
        hours: a place's ``hours`` as its source writes it (TDX's OpenTime is free text: it may hold
            English such as 「Mon-Fri 11:00AM-2:00PM」, markup, or be cut short).
    Returns:
        The text as written (spaces collapsed) when, read in NFKC (full-width digits and marks as
        half-width), it is short, holds a digit and only Chinese words, digits and the marks hours are
        written with; else None (then say HOURS_ASK, never the text).
    Source: docs/design.md §7 (no English, nothing unreadable in a reply).
    """
    if not isinstance(hours, str):
        return None
    text = " ".join(hours.split())
    read = unicodedata.normalize("NFKC", text)
    if len(read) > HOURS_MAX_CHARS or not any(char.isdigit() for char in read):
        return None
    return text if _READABLE_HOURS.fullmatch(read) else None


def hours_words(place: dict[str, Any]) -> str | None:
    """What a card says after 「營業時間：」: the hours when they read cleanly, HOURS_ASK when a source
    records hours that do not, None when no source records any (the card's note says so)."""
    if not place.get("hours"):
        return None
    return readable_hours(place["hours"]) or HOURS_ASK


def day_words(day: date | str) -> str:
    """A day as every reply writes it: 2026-09-27 (a date or its ISO text) → 「2026/9/27」."""
    year, month, number = (day.year, day.month, day.day) if isinstance(day, date) else \
        (int(part) for part in day.split("-"))
    return f"{year}/{month}/{number}"


def source_words(source: dict[str, Any]) -> str:
    """A source in people's words: its own name (an operator's list: 彰化縣蔬食節店家名單), else its kind's."""
    return source.get("name") or SOURCE_KIND_WORDS.get(source["kind"], "其他公開資料")


def _sources_of(places: list[dict[str, Any]]) -> list[dict[str, str]]:
    """Every source the shown cards rest on (their fields' and their diets'), once each, listing first."""
    found: dict[str, dict[str, str]] = {}
    for place in places:
        for source in [*place["field_sources"].values(), *place["dietary_evidence"].values()]:
            found.setdefault(source["id"], source)
    return list(found.values())


def source_line(places: list[dict[str, Any]]) -> str:
    """The one source line of a shop answer: 「資料來源：彰化縣政府蔬食節名單，2026/9/27 查閱」, the listing
    first and 「等」 when the cards rest on more sources (each field's source stays in the catalog and the
    audit record); the earliest access day when they differ. Source: docs/design.md §5, §7."""
    sources = _sources_of(places)
    kinds = list(dict.fromkeys(source_words(source) for source in sources))
    day = min(source["accessed_on"] for source in sources)
    return f"資料來源：{kinds[0]}{'等' if len(kinds) > 1 else ''}，{day_words(day)} 查閱"


def campaign_note(state: str, campaign: dict[str, Any]) -> str:
    """A card's short note on the festival window: 「蔬食節集章 9/30 已結束，不代表仍參加」."""
    if state == "not_started":
        return f"蔬食節集章尚未開始（{month_day(campaign['starts_at'])} 起）"
    if state == "active_by_announcement":
        return f"蔬食節集章活動期間，{month_day(campaign['ends_at'])} 截止"
    return f"蔬食節集章 {month_day(campaign['ends_at'])} 已結束，不代表仍參加"


def _diet_unconfirmed(place: dict[str, Any]) -> bool:
    """The only diet evidence is open data's 素 / 蔬食 (its class or name): the kind is not confirmed."""
    evidence = place["dietary_evidence"]
    return bool(evidence) and all(source["kind"] in UNCONFIRMED_DIET_KINDS for source in evidence.values())


def diet_note(place: dict[str, Any]) -> str:
    """A card's note on its diets: 「有全素、蛋奶素品項，點餐前請向店家確認」."""
    strict = [diet_label(kind) for kind in place["dietary_options"] if kind != "vegetarian"]
    if not place["dietary_options"]:
        return "名單沒有寫素別，點餐前請問店家"
    if _diet_unconfirmed(place):
        return f"{diet_label('vegetarian')}（未確認素別），點餐前請問店家"
    if not strict:
        return f"列為{diet_label('vegetarian')}店家，名單沒細分素別，點餐前請問"
    return f"有{'、'.join(strict)}品項，不是每道都是，點餐前請問店家"


def unknown_note(unknown: list[str]) -> str | None:
    """A card's note on what the data does not record: 「沒有營業時間、無障礙資料，出發前請先打電話」.
    With the hours recorded, whether the shop is open now is not said to be 營業時間 missing."""
    hidden = {"open_now"} if "hours" not in unknown else set()
    fields = list(dict.fromkeys(words for field, words in UNKNOWN_FIELD_WORDS.items()
                                if field in unknown and field not in hidden))
    return f"沒有{'、'.join(fields)}資料，出發前請先打電話" if fields else None


def _text(text: str, **style: Any) -> FlexText:
    return FlexText(text=text, wrap=True, **style)


def fields_line(place: dict[str, Any]) -> str | None:
    """Which source gave which fact, when a card rests on open data (交通部觀光署資料):
    「地址：店家名單；電話：交通部觀光署資料；素別：店家名單」, facts of one source together; None otherwise
    (a card from lists only: the answer's one source line covers it)."""
    fields = [(words, place["field_sources"].get(name)) for name, words in FIELD_WORDS
              if name != "hours" or readable_hours(place.get("hours"))]  # hours not shown cite no source
    evidence = list(place["dietary_evidence"].values())
    fields.append(("素別", evidence[0] if evidence else None))
    shown = [(words, source) for words, source in fields if source is not None]
    if not any(source["kind"] in UNCONFIRMED_DIET_KINDS for _, source in shown):
        return None
    groups: dict[str, list[str]] = {}
    for words, source in shown:
        groups.setdefault(source_words(source), []).append(words)
    return "；".join(f"{'、'.join(facts)}：{name}" for name, facts in groups.items())


def shop_bubble(place: dict[str, Any], under_name: str, notes: list[str]) -> FlexBubble:
    """One shop's card: its name, ``under_name`` (its township, or township and distance), its facts
    (hours only as hours_words says them; on open data, which source gave which), a separator, then
    the notes given (at most three, docs/design.md §7, Wording)."""
    contents = [
        _text(place["name"], weight="bold", size="lg"),
        _text(under_name, size="sm", color="#666666"),
        _text(f"地址：{place['address']}", size="sm", margin="md"),
        _text(f"電話：{place['phone'] or '資料沒有記錄'}", size="sm"),
    ]
    hours = hours_words(place)
    if hours:
        contents.append(_text(f"營業時間：{hours}", size="sm"))
    by_field = fields_line(place)
    if by_field:
        contents.append(_text(by_field, size="xs", color="#666666"))
    contents.append(FlexSeparator(margin="md"))
    contents += [_text(note, size="xs", color="#666666", margin="sm") for note in notes]
    return FlexBubble(body=FlexBox(layout="vertical", spacing="xs", contents=contents))


def _bubble(place: dict[str, Any], notes: list[str]) -> FlexBubble:
    """One shop's card in a search answer: its township under its name, its diets' note first."""
    return shop_bubble(place, place["area"], [diet_note(place), *notes])


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


def _render_ok(result: dict[str, Any]) -> list[Message]:
    shown = result["places"][:CAROUSEL_MAX_BUBBLES]
    campaign = campaign_note(result["campaign_state"], result["campaign"])

    def notes(place: dict[str, Any]) -> list[str]:  # the festival's window only on its own shops' cards
        unknown = unknown_note(place.get("unknown_fields", result["unknown_fields"]))
        return [note for note in (unknown, campaign if place.get("in_campaign") else None) if note]

    carousel = FlexMessage(
        alt_text=_alt_text(result, [place["name"] for place in shown]),
        contents=FlexCarousel(contents=[_bubble(place, notes(place)) for place in shown]),
    )
    lines = [source_line(shown)]
    if result["total"] > len(shown):
        lines.append(f"共 {result['total']} 家，先列 {len(shown)} 家。")
    return [TextMessage(text="\n".join(lines)), carousel]


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
                                                                said=said if stated_diet else None,
                                                                with_location=True))]


def _render_no_match(result: dict[str, Any], stated_diet: str | None = None, said: str | None = None) -> list[Message]:
    query = result["query"]
    others = [township for township in result.get("area_choices", []) if township != query["area"]]
    items: list[QuickReplyItem] = []
    has_places = query["area"] in result.get("area_choices", [])
    # a township with no shops at all says so once; one with shops says what was searched
    lines = [f"店家資料裡沒有找到符合「{_query_words(query)}」的店家。" if has_places
             else f"這份資料目前沒有{query['area']}的店家。"]
    if has_places and query["dietary_type"] != "any":
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
    text = "店家資料正在更新，這次先不列出店家，以免給你過期的資訊。請稍後再查一次。"
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
        ok → [TextMessage (the one source line), FlexMessage (carousel, ≤ 12 bubbles, alt_text naming
        the shops and township; each card's notes: its diets, what is not recorded, the festival window)];
        needs_area → [TextMessage with the location button (the nearest shops with a sourced
        position: shared.turn.near_me) and township quick replies (postback ``places:area=<township>``);
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
