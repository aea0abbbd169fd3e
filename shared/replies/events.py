"""Render search_local_events results as LINE messages (typed line-bot-sdk v3 models).

While the events snapshot is demo data, every reply — including needs_area, no_match and
unavailable — says 示範 once, in its text line (the cards stay clean), and every alt_text says it too. A real snapshot's replies name
its source and update time instead (and never say 示範), and say the data may be out of date
when it was last confirmed longer ago than ``LOCAL_EVENTS_STALE_AFTER_SECONDS``. Past events are
labelled （已結束）; a multi-day event shows its first and last day; a missing start time or
meeting point reads 「未提供」, with one short note on the card. The snapshot's version stays in the
audit record and the logs; a reply never shows it.

Source: docs/design.md §5 (search_local_events; demo marking), §7 (the budget of an answer).
"""

from __future__ import annotations

from datetime import date, datetime, timedelta
from typing import Any

from linebot.v3.messaging import (
    FlexBox,
    FlexBubble,
    FlexButton,
    FlexCarousel,
    FlexMessage,
    FlexSeparator,
    FlexText,
    Message,
    QuickReply,
    QuickReplyItem,
    TextMessage,
    URIAction,
)

from shared.clock import TAIPEI
from shared.events.search import parse_date_range
from shared.line import limits
from shared.replies.area_picker import (
    QUICK_REPLY_MAX_ITEMS,
    area_postback,
    area_quick_reply,
    checked_postback,
    location_item,
    vague_area_note,
)
from shared.replies.next_steps import all_townships_action, carried_query

CAROUSEL_MAX_BUBBLES = 12
ALT_TEXT_MAX_CHARS = limits.ALT_TEXT  # LINE counts UTF-16 units (shared/line/limits.py)

NOT_PROVIDED = "未提供"
PAST_LABEL = "（已結束）"
#: A card's one note when its time or place is not provided.
MISSING_NOTE = "未提供的時間、地點，請以主辦單位公告為準"
WEEKDAYS = "一二三四五六日"


def _day(value: date) -> str:
    """2026-12-05 → 「2026/12/5（六）」."""
    return f"{value.year}/{value.month}/{value.day}（{WEEKDAYS[value.weekday()]}）"


def _date_words(query_date: str | None) -> str:
    """The searched dates in words; an exclusive end is shown as the last included day.

    Without a date the search lists events that have not ended (shared.events.search), so the
    words say 近期 (a search never claims dates it did not cover, and no 所有日期 a resident trips on).
    """
    if query_date is None:
        return "近期"
    start, end = parse_date_range(query_date)
    last = end - timedelta(days=1)
    return _day(start) if last == start else f"{_day(start)}～{_day(last)}"


def _span(seconds: float | None) -> str:
    """172800 → 「2 天」; 7200 → 「2 小時」; unknown → 「一段時間」."""
    if not seconds:
        return "一段時間"
    if seconds >= 86400:
        return f" {seconds / 86400:g} 天"
    return f" {seconds / 3600:g} 小時"


def month_day(value: str) -> str:
    """ISO 8601 with an offset → 「12/1」 (Asia/Taipei)."""
    local = datetime.fromisoformat(value).astimezone(TAIPEI)
    return f"{local.month}/{local.day}"


def _source_note(source: dict[str, Any] | None) -> str:
    """「資料來源：觀光署活動資料，12/1 更新」 and, when stale, that the data may be out of date."""
    if not source:
        return ""
    lines = [f"資料來源：{source['name']}" + (f"，{month_day(source['updated_at'])} 更新"
                                            if source.get("updated_at") else "，沒寫更新時間")]
    if source.get("stale"):
        lines.append(f"已超過{_span(source.get('stale_after_seconds'))}沒更新，請以主辦單位公告為準")
    return "\n".join(lines)


#: What every message of a demo answer says (docs/design.md §5: demo data is said to be demo).
DEMO_NOTE = "目前是示範資料，不是真的活動。"


def _demo_note(result: dict[str, Any]) -> str:
    return DEMO_NOTE if result["demo"] else _source_note(result.get("source"))


def _event_days(event: dict[str, Any]) -> str:
    first = date.fromisoformat(event["date"])
    last = date.fromisoformat(event.get("last_day") or event["date"])
    return _day(first) if last == first else f"{_day(first)}～{_day(last)}"


def _bubble(event: dict[str, Any], demo: bool) -> FlexBubble:
    title = event["title"] + (PAST_LABEL if event["is_past"] else "")
    contents = [
        FlexText(text=title, wrap=True, weight="bold", size="lg", color="#888888" if event["is_past"] else None),
        FlexText(text=event["area"], size="sm", color="#666666"),
        FlexText(text=f"日期：{_event_days(event)}", size="sm", margin="md", wrap=True),
        FlexText(text=f"時間：{event['start_time'] or NOT_PROVIDED}", size="sm", wrap=True),
        FlexText(text=f"{'集合地點' if demo else '地點'}：{event['meeting_point'] or NOT_PROVIDED}", size="sm",
                 wrap=True),
    ]
    if event.get("organizer"):
        contents.append(FlexText(text=f"主辦：{event['organizer']}", size="sm", wrap=True))
    if event["tags"]:
        contents.append(FlexText(text=" ".join(f"#{tag}" for tag in event["tags"]), size="xs", color="#888888",
                                 margin="md", wrap=True))
    if event["missing_fields"]:
        contents += [FlexSeparator(margin="md"),
                     FlexText(text=MISSING_NOTE, size="xs", color="#666666", wrap=True)]
    footer = None
    if event.get("url"):
        footer = FlexBox(layout="vertical", contents=[
            FlexButton(action=URIAction(label="活動網頁", uri=event["url"]), style="link", height="sm")])
    return FlexBubble(body=FlexBox(layout="vertical", spacing="xs", contents=contents), footer=footer)


def keyword_words(keyword: str) -> str:
    """An events keyword as the reply says it: 「市集|親子」 → 市集」或「親子 (inside the caller's 「」)."""
    return keyword.replace("|", "」或「")


def scope_words(query: dict[str, Any], date_spans: list[str] | None = None) -> str:
    """「彰化市，2026/12/5（六）～2026/12/6（日）」; two dates apart (``date_spans``, the engine's
    ``both:`` reading: 明天或週六) are named apart: 「田尾鄉，2026/12/2（三）、2026/12/5（六）」, never
    the range between them (which was searched only to cover both)."""
    dates = "、".join(_date_words(span) for span in date_spans) if date_spans else _date_words(query["date"])
    area = query["area"] or "彰化縣各鄉鎮"
    parts = [area + dates] if dates == "近期" else [area, dates]  # 「田尾鄉近期」
    if query["keyword"]:
        parts.append(f"關鍵字「{keyword_words(query['keyword'])}」")
    return "，".join(parts)


def _alt_text(result: dict[str, Any], titles: list[str]) -> str:
    prefix = "示範活動" if result["demo"] else "活動"
    text = f"{prefix} {result['total']} 筆：{'、'.join(titles)}（{scope_words(result['query'], result.get('date_spans'))}）"
    return limits.fit(text, limits.ALT_TEXT)


def _render_ok(result: dict[str, Any]) -> list[Message]:
    shown = result["events"][:CAROUSEL_MAX_BUBBLES]
    carousel = FlexMessage(
        alt_text=_alt_text(result, [event["title"] + (PAST_LABEL if event["is_past"] else "") for event in shown]),
        contents=FlexCarousel(contents=[_bubble(event, result["demo"]) for event in shown]),
    )
    lines = [_demo_note(result)]
    if result["total"] > len(shown):
        lines.append(f"共 {result['total']} 筆，先列 {len(shown)} 筆。")
    return [TextMessage(text="\n".join(line for line in lines if line)), carousel]


def _render_needs_area(result: dict[str, Any], vague: bool = False, vague_words: tuple[str, ...] = ()) -> list[Message]:
    choices = result.get("area_choices", [])
    lines = [
        "想查哪個鄉鎮的活動？" + (vague_area_note(vague_words, "events") + "。" if vague else ""),
        f"有活動資料的鄉鎮：{'、'.join(choices) or '（目前沒有）'}。請點下方的鄉鎮或「全部鄉鎮」，或直接輸入鄉鎮名稱。",
        _demo_note(result),
    ]
    text = "\n".join(line for line in lines if line)
    query = result.get("query") or {}
    when, keyword = query.get("date"), query.get("keyword")
    room = QUICK_REPLY_MAX_ITEMS - 2  # 全部鄉鎮 and the location button first
    if when or keyword:  # 過年 彰化有什麼活動: every button keeps the dates and topic read
        extra = carried_query(when, keyword)
        townships = QuickReply(items=[QuickReplyItem(action=checked_postback(
            township, f"events:area={township}{extra}", f"查{township}的活動"))
            for township in choices[:room]]) if choices else None
    else:
        townships = area_quick_reply("events", choices[:room])
    items = [QuickReplyItem(action=all_townships_action(when, keyword)), location_item(),
             *(townships.items if townships else [])]
    return [TextMessage(text=text, quick_reply=QuickReply(items=items))]


def _no_match_offers(result: dict[str, Any], no_data: bool) -> tuple[list[str], list[QuickReplyItem]]:
    """The lines and buttons after a no-match: 不限日期 / 不限條件 in the township searched (when it has
    events), and the other townships with events, keeping the dates and topic asked."""
    query = result["query"]
    lines: list[str] = []
    items: list[QuickReplyItem] = []
    if not no_data and (query["date"] is not None or query["keyword"]) and query["area"]:
        wider = "不限日期" if not query["keyword"] else "不限條件"
        lines.append(f"可以{wider}，查{query['area']}的所有活動。")
        items.append(QuickReplyItem(action=area_postback("events", query["area"], label=wider)))
    others = [township for township in result.get("area_choices", []) if township != query["area"]]
    if no_data:  # no 不限日期 or other days there: they would find nothing either
        lines.append(f"這份資料目前沒有{query['area']}的活動" + (f"，可以改查：{'、'.join(others)}。" if others else "。"))
    elif others:
        change_date = "換個日期，或" if query["date"] is not None else ""
        lines.append(f"可以{change_date}改查其他有活動資料的鄉鎮：{'、'.join(others)}。")
    if others:  # other townships keep the dates and topic asked; 不限條件 above drops them
        carry = result.get("carry") or query  # (two dates apart: the same two again, not the days between)
        other_reply = area_quick_reply("events", others, date=carry["date"], keyword=carry["keyword"])
        items += other_reply.items if other_reply else []
    return lines, items


def _render_no_match(result: dict[str, Any]) -> list[Message]:
    """What was searched and found nothing; a township with no events at all says so, and the other
    townships with events are offered in the same line; the demo note (or the source) last."""
    query = result["query"]
    no_data = bool(query["area"]) and query["area"] not in result.get("area_choices", [])
    lines, items = _no_match_offers(result, no_data)
    lines = [f"活動資料裡沒有找到符合「{scope_words(query, result.get('date_spans'))}」的活動。", *lines,
             _demo_note(result)]
    quick_reply = QuickReply(items=items[:QUICK_REPLY_MAX_ITEMS]) if items else None
    return [TextMessage(text="\n".join(line for line in lines if line), quick_reply=quick_reply)]


def _render_unavailable(result: dict[str, Any]) -> list[Message]:
    lines = ["活動資料正在更新，這次先不列出活動，以免給你過期的資訊。請稍後再查一次。", _demo_note(result)]
    return [TextMessage(text="\n".join(line for line in lines if line))]


_RENDERERS = {
    "ok": _render_ok,
    "needs_area": _render_needs_area,
    "no_match": _render_no_match,
    "unavailable": _render_unavailable,
}


def render_events(result: dict[str, Any], *, vague: bool = False, vague_words: tuple[str, ...] = ()) -> list[Message]:
    """Turn a search_local_events result into at most 2 LINE messages.

    Args:
        result: the dict returned by shared.events.search.search_local_events.
        vague: the user said a vague area (附近, 彰化), not tapped 查活動.
        vague_words: which ones (``shared.areas.vague_words_in``): only those are explained.
    Returns:
        ok → [TextMessage (the demo note, or the one source line), FlexMessage (carousel, ≤ 12 bubbles;
        alt_text starts 示範活動 for demo data; a card missing its time or place says so in one note)];
        needs_area → [TextMessage with 全部鄉鎮, the location button and township quick replies (postback
        ``events:scope=all`` / ``events:area=<township>``); it explains why 附近 / 彰化 cannot be
        searched only when ``vague`` (the user said one; not after a tap on 查活動)];
        no_match → [TextMessage naming the search, suggesting all dates / other townships];
        unavailable → [TextMessage: 活動資料的版本正在核對].
        With demo data the text says 示範 once (the cards do not).
    Raises:
        KeyError: the status is not one of the four above.
        ValueError: a postback would exceed LINE's 300-character data limit.
    Source: docs/design.md §5 (every events reply says 示範, once; past labelled; 未提供), §7.
    """
    if result["status"] == "needs_area":
        return _render_needs_area(result, vague, vague_words)
    return _RENDERERS[result["status"]](result)
