"""Quick replies offered after a result: the next useful steps.

After places: the events of the same township, other townships with places (keeping a diet said
this turn), and — only when a savable diet was said this turn and is not already remembered — a
button that asks for the consent card. After events: other townships with events, every township,
and the vegetarian search. At most 13 items (LINE's limit); labels ≤ 20 characters.

Source: LINE Messaging API quick reply (≤ 13 items); docs/design.md §6 (a card only on a request, so
the button sends the request text, it never stores anything).
"""
from __future__ import annotations

from typing import Any

from linebot.v3.messaging import (
    MessageAction,
    PostbackAction,
    QuickReply,
    QuickReplyItem,
)

from shared.diets import SAVABLE_DIETS, diet_label
from shared.replies.area_picker import (
    QUICK_REPLY_MAX_ITEMS,
    area_postback,
    checked_postback,
    conditions_query,
)

#: Postback data of 全部鄉鎮: an events search with no township.
ALL_TOWNSHIPS_DATA = "events:scope=all"


def carried_query(date: str | None = None, keyword: str | None = None) -> str:
    """``&date=…&keyword=…`` for an events postback: the dates and topic read this turn, kept on a tap."""
    return conditions_query(date=date, keyword=keyword)


def all_townships_action(date: str | None = None, keyword: str | None = None) -> PostbackAction:
    """The 全部鄉鎮 button of the events picker and of event results.

    Args:
        date: a canonical range read this turn ("YYYY-MM-DD/YYYY-MM-DD"), kept on the tap; None: all dates.
        keyword: topic terms read this turn, kept on the tap.
    Raises:
        ValueError: the data would exceed LINE's 300-character postback limit.
    """
    return checked_postback("全部鄉鎮", ALL_TOWNSHIPS_DATA + carried_query(date, keyword), "查全部鄉鎮的活動")


def remember_phrase(dietary_type: str) -> str:
    """The text the remember button sends: a request the memory flow answers with a consent card."""
    return f"以後都找{diet_label(dietary_type)}，幫我記住"


def remember_item(stated_diet: str | None, remembered: str | None) -> QuickReplyItem | None:
    """The 「記住：全素」 button (it sends ``remember_phrase``, answered by a consent card), or None.

    Args:
        stated_diet: the diet said this turn (canonical), or None.
        remembered: the consented diet, or None.
    Returns:
        None when the diet is not savable, is already the remembered one, or is the broad 蔬食 over a
        remembered finer type (changing that is 「我的偏好」's job).
    """
    broader = stated_diet == "vegetarian" and remembered in SAVABLE_DIETS  # 蔬食 would overwrite a finer 全素
    if stated_diet is None or stated_diet not in SAVABLE_DIETS or stated_diet == remembered or broader:
        return None
    return QuickReplyItem(action=MessageAction(label=f"記住：{diet_label(stated_diet)}",
                                               text=remember_phrase(stated_diet)))


def _other_areas(result: dict[str, Any], area: str | None, asked: list[str] | tuple[str, ...] = ()) -> list[str]:
    """Townships to offer: those asked about but not searched first, then the others with data."""
    others = [township for township in result.get("area_choices", []) if township != area]
    return [t for t in asked if t != area] + [t for t in others if t not in asked]


def places_next_steps(result: dict[str, Any], *, stated_diet: str | None, remembered: str | None,
                      event_areas: list[str] | None = None, asked: tuple[str, ...] = (),
                      offer_memory: bool = True, said: str | None = None) -> QuickReply | None:
    """Next steps after a place result.

    Args:
        result: search_local_places's result (``ok``).
        stated_diet: the diet said this turn (canonical), or None.
        remembered: the consented diet, or None.
        event_areas: townships that have events (a 查活動 button only where it can find some).
        asked: townships the message named but the search did not cover (offered first).
        offer_memory: False when the diet said is not the user's own to remember (我媽媽吃全素) or
            names a finer type the catalog does not keep: no 記住 button. The
            broad 蔬食 is never offered over a remembered finer type: changing
            that is 「我的偏好」's job.
        said: the finer diet words the catalog does not record (鍋邊素、不吃蔥蒜): kept on the township
            buttons so the next reply still names them; never offered to remember.
    Returns:
        A QuickReply, or None when there is nothing to offer.
    """
    area = result["query"]["area"]
    items: list[QuickReplyItem] = []
    remember = remember_item(stated_diet, remembered) if offer_memory and not said else None
    if remember is not None:
        items.append(remember)
    if area and (event_areas is None or area in event_areas):
        items.append(QuickReplyItem(action=area_postback("events", area, label=f"{area}的活動")))
    keep = stated_diet if stated_diet else None
    items += [QuickReplyItem(action=area_postback("places", township, diet=keep, said=said if keep else None))
              for township in _other_areas(result, area, asked)]
    items.append(QuickReplyItem(action=MessageAction(label="選單", text="選單")))
    return QuickReply(items=items[:QUICK_REPLY_MAX_ITEMS])


def events_next_steps(result: dict[str, Any], *, asked: tuple[str, ...] = ()) -> QuickReply | None:
    """Next steps after an event result: other townships, every township, the vegetarian search.

    Every township button keeps the dates and topic of the search (這個月 親子 → 鹿港鎮 is 鹿港's 親子
    events this month): a condition the user gave survives the tap.
    """
    area = result["query"]["area"]
    items: list[QuickReplyItem] = []
    carry = result.get("carry") or result["query"]  # a title hint or a look-back is not the user's condition
    when, keyword = carry.get("date"), carry.get("keyword")
    if area is not None:
        items.append(QuickReplyItem(action=all_townships_action(when, keyword)))
    for township in _other_areas(result, area, asked):
        if township in asked and when:  # 花壇跟員林週末: 員林 on the same dates
            items.append(QuickReplyItem(action=checked_postback(
                township, f"events:area={township}&date={when}{carried_query(keyword=keyword)}", f"查{township}同一段日期的活動")))
        else:
            items.append(QuickReplyItem(action=area_postback("events", township, date=when, keyword=keyword)))
    items.append(QuickReplyItem(action=MessageAction(label="查蔬食", text="查蔬食")))
    items.append(QuickReplyItem(action=MessageAction(label="選單", text="選單")))
    return QuickReply(items=items[:QUICK_REPLY_MAX_ITEMS])


def asked_first(quick_reply: QuickReply | None, result: dict[str, Any], asked: tuple[str, ...], *,
                kind: str, diet: str | None = None, said: str | None = None) -> QuickReply | None:
    """Put the townships the message named but the search did not cover first (no_match replies).

    Args:
        quick_reply: the reply's own quick replies, or None.
        result: the search result (its query's date is kept for events).
        asked: townships named but not searched.
        kind: ``events`` or ``places``.
        diet: places: a diet said this turn, kept on the buttons.
        said: places: finer diet words not recorded, kept beside the diet.
    Returns:
        The quick replies with the asked townships first (others deduplicated), ≤ 13 items.
    """
    if not asked:
        return quick_reply
    when = result["query"].get("date") if kind == "events" else None
    keyword = result["query"].get("keyword") if kind == "events" else None
    first = []
    for township in asked:
        if when:
            action = checked_postback(township, f"events:area={township}&date={when}{carried_query(keyword=keyword)}",
                                      f"查{township}同一段日期的活動")
        else:
            action = area_postback(kind, township, diet=diet, said=said if diet else None,  # type: ignore[arg-type]
                                   keyword=keyword)
        first.append(QuickReplyItem(action=action))
    rest = [item for item in (quick_reply.items if quick_reply else [])
            if getattr(item.action, "label", None) not in asked]
    return QuickReply(items=(first + rest)[:QUICK_REPLY_MAX_ITEMS])
