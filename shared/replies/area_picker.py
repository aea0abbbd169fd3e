"""Township quick replies for place and event searches (fixed entries 查蔬食 / 查活動 and needs_area).

Postback data is ``places:area=<township>`` or ``events:area=<township>``, optionally followed by
``&diet=<type>`` (places), read by the postback handler with ``urllib.parse.parse_qs``.

Source: docs/design.md §5 (needs_area offers the townships that have data); LINE Messaging API limits:
postback data ≤ 300 characters, quick reply ≤ 13 items, action label ≤ 20 characters.
"""

from __future__ import annotations

from typing import Literal
from urllib.parse import urlencode

from linebot.v3.messaging import LocationAction, PostbackAction, QuickReply, QuickReplyItem

from shared.line import limits

SearchKind = Literal["places", "events"]

QUICK_REPLY_MAX_ITEMS = limits.QUICK_REPLY_ITEMS
ACTION_LABEL_MAX_CHARS = limits.ACTION_LABEL  # LINE counts UTF-16 units (shared/line/limits.py)

_DISPLAY_TEXT = {"places": "查{township}的蔬食店家", "events": "查{township}的活動"}

#: The location button's label: LINE opens its map, and the resident's choice comes back as a
#: location message (shared.turn.near_me). Messaging API, "Location action" (quick reply only; LINE
#: for iOS and Android): https://developers.line.biz/en/reference/messaging-api/#location-action
LOCATION_LABEL = "分享我的位置"


def location_item() -> QuickReplyItem:
    """The quick-reply button that asks LINE to share a location (LocationAction)."""
    limits.check(LOCATION_LABEL, limits.ACTION_LABEL, "action label")
    return QuickReplyItem(action=LocationAction(label=LOCATION_LABEL))


def checked_postback(label: str, data: str, display_text: str) -> PostbackAction:
    """Build a PostbackAction after checking LINE's size limits.

    Args:
        label: button text, ≤ 20 UTF-16 units.
        data: postback data, ≤ 300 UTF-16 units.
        display_text: what appears in the chat as the user's message when tapped, ≤ 300 units.
    Returns:
        The PostbackAction.
    Raises:
        LimitExceeded: (a ValueError) data, label or display text longer than LINE allows.
    Source: LINE Messaging API, postback action limits, counted by ``shared.line.limits``.
    """
    limits.check(data, limits.POSTBACK_DATA, "postback data")
    limits.check(label, limits.ACTION_LABEL, "action label")
    limits.check(display_text, limits.DISPLAY_TEXT, "display text")
    return PostbackAction(label=label, data=data, display_text=display_text)


def conditions_query(**conditions: str | None) -> str:
    """``&name=value…`` (URL-encoded) for the conditions that are set, in the order given; "" when none."""
    encoded = urlencode({name: value for name, value in conditions.items() if value})
    return f"&{encoded}" if encoded else ""


def area_postback(
    kind: SearchKind, township: str, *, diet: str | None = None, label: str | None = None,
    said: str | None = None, date: str | None = None, keyword: str | None = None,
) -> PostbackAction:
    """The postback that searches one township, keeping every condition the user gave.

    Args:
        kind: "places" or "events".
        township: a full township name, e.g. "花壇鄉".
        diet: places only: a dietary type to send along (e.g. "any" for an explicit 不限).
        label: button text (≤ 20 characters); default: the township.
        said: places only: the finer diet words the catalog does not record (鍋邊素、不吃蔥蒜), so the
            reply after the tap still names them: a condition the user gave survives the tap.
        date: events only: a canonical range ("YYYY-MM-DD/YYYY-MM-DD") read before the tap.
        keyword: events only: the topic terms read before the tap.
    Returns:
        PostbackAction with data ``<kind>:area=<township>[&diet=<type>][&said=…][&date=…][&keyword=…]``.
    Raises:
        ValueError: unknown kind, or data over LINE's limits.
    Source: docs/design.md §5 (needs_area), shared/turn/pickers.py (postback format).
    """
    if kind not in _DISPLAY_TEXT:
        raise ValueError(f"unknown search kind {kind!r}")
    data = f"{kind}:area={township}" + (f"&diet={diet}" if diet else "") + conditions_query(
        said=said, date=date, keyword=keyword)
    display_text = _DISPLAY_TEXT[kind].format(township=township) + (f"（{label}）" if label else "")
    return checked_postback(label or township, data, display_text)


def area_quick_reply(kind: SearchKind, townships: list[str], *, diet: str | None = None, said: str | None = None,
                     date: str | None = None, keyword: str | None = None,
                     with_location: bool = False) -> QuickReply | None:
    """Quick replies for townships, at most 13 (LINE's limit), in the given order.

    Args:
        kind: "places" or "events".
        townships: full township names.
        diet: places only: a diet the user stated this turn, carried by every button so the
            tap searches with it (and consented memory does not replace it).
        said, date, keyword: the other conditions read before the tap (see area_postback).
        with_location: the location button first (``location_item``), then at most 12 townships.
    Returns:
        A QuickReply, or None when there is nothing to offer.
    Raises:
        ValueError: unknown kind, or data over LINE's limits.
    """
    first = [location_item()] if with_location else []
    items = first + [QuickReplyItem(action=area_postback(kind, township, diet=diet, said=said, date=date,
                                                         keyword=keyword))
                     for township in townships[:QUICK_REPLY_MAX_ITEMS - len(first)]]
    return QuickReply(items=items) if items else None


def vague_area_note(words: tuple[str, ...], kind: SearchKind) -> str:
    """Why a township is needed, naming only the vague words the resident said (no full stop).

    Args:
        words: ``shared.areas.vague_words_in`` of the message, e.g. ("附近",) or ("彰化縣",); () when
            they are not known (a model's proposal): then every reason is given.
        kind: which data the picker is for.
    Returns:
        E.g. 要依「附近」找，可以點「分享我的位置」；有記錄地圖位置的店家，才會依直線距離列出 (places, 附近);
        只說「彰化」分不出是彰化市還是整個彰化縣 (彰化); reasons joined by "；".
    Source: docs/design.md §5 (Areas: 附近 and the bare 彰化 name no township).
    """
    said = words or ("附近", "彰化")
    parts = []
    for word in said:
        if word == "彰化":
            parts.append("只說「彰化」分不出是彰化市還是整個彰化縣")
        elif word == "彰化縣":
            parts.append("「彰化縣」是整個縣，" + ("店家資料要先選一個鄉鎮" if kind == "places"
                                                 else "可以點「全部鄉鎮」"))
        elif kind == "places":
            parts.append(f"要依「{word}」找，可以點「{LOCATION_LABEL}」；有記錄地圖位置的店家，才會依直線距離列出")
        else:
            parts.append(f"要依「{word}」找，可以點「{LOCATION_LABEL}」；有記錄地圖位置的活動，才會依直線距離列出")
    return "；".join(parts)
