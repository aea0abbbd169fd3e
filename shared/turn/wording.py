"""What a turn's reply says, in fixed Traditional Chinese templates: the result, and beside it every
note of the reading (shared.turn.ask). The turn engine (shared.turn.engine) runs the ask and calls
``render``; it words nothing itself.

Replies name what the data does not record, in people's words (docs/design.md §5); where a place
search's diet came from is said every time (§6, §7). Buttons carry their conditions as postback data
(shared.replies.area_picker), the one string encoding of a second ask.
"""
from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any

from linebot.v3.messaging import MessageAction, PostbackAction, QuickReply, QuickReplyItem, TextMessage, URIAction

from shared.areas import TOWNSHIPS, UnknownArea, normalize_area
from shared.context import Reply
from shared.diets import UNRECORDED_DIETS, diet_label
from shared.events.search import Event, EventSnapshot
from shared.line import limits
from shared.memory.store import PreferenceSnapshot
from shared.places.catalog import Place, PlaceCatalog
from shared.places.search import UnknownDietaryType, areas_with_places, diet_listed
from shared.replies import menu
from shared.replies.area_picker import QUICK_REPLY_MAX_ITEMS, area_postback, checked_postback
from shared.replies.events import render_events, scope_words
from shared.replies.menu import help_reply
from shared.replies.next_steps import (
    ALL_TOWNSHIPS_DATA,
    asked_first,
    carried_query,
    events_next_steps,
    places_next_steps,
    remember_item,
)
from shared.replies.places import (
    HOURS_ASK,
    UNCONFIRMED_DIET_KINDS,
    day_words,
    readable_hours,
    render_places,
    source_words,
)
from shared.turn import ask
from shared.turn.conversation import ItemKind
from shared.turn.datespec import DateSpec, RelativeDay, RelativeMonth, UnreadableDate, Week, Weekday
from shared.turn.diet_origin import CONSENTED_MEMORY, THIS_TURN, EffectiveDiet
from shared.turn.proposal import Proposal

#: How far back a keyword search with no date looks when nothing coming matches (八卦山健走還有沒有:
#: the one that ended on 11/22 is shown as ended rather than "nothing"). Days.
PAST_LOOKBACK_DAYS = 90


# -- reading the notes ------------------------------------------------------------------------------

def is_events(proposal: Proposal) -> bool:
    """An events search, or a township picker asked for events (needs_area with kind=events)."""
    return proposal.tool == "search_local_events" or proposal.args.get("kind") == "events"


def unrecorded_said(notes: tuple[ask.Note, ...]) -> str | None:
    """The finer diet conditions the catalog does not record, as said (五辛素、不吃蔥蒜), or None.
    Joined by 、: the form a button's ``said`` postback parameter carries (shared.turn.pickers)."""
    found = ask.notes_of(notes, ask.UnrecordedDiet)
    return "、".join(found[0].words) if found else None


def title_hint(notes: tuple[ask.Note, ...]) -> str | None:
    """The title words of an events search (冬季蔬果), or None."""
    found = ask.notes_of(notes, ask.TitleHint)
    return found[0].words if found else None


def other_areas(notes: tuple[ask.Note, ...]) -> tuple[str, ...]:
    """The townships asked about but not searched, in the order said."""
    return tuple(area for note in ask.notes_of(notes, ask.OtherAreas) for area in note.areas)


def _same_kind(proposal: Proposal, second: ask.SecondAsk) -> bool:
    return isinstance(second.ask, ask.EventsSearch) == is_events(proposal)


def _not_to_remember(proposal: Proposal) -> bool:
    """Someone else's diet (我媽媽吃全素), or the resident said not to remember (不用記)."""
    return ask.Flag.DIET_OF_OTHER in proposal.notes or ask.Flag.NOT_SAVED in proposal.notes


def diet_said_beside_shop(proposal: Proposal) -> str | None:
    """The diet said beside a shop name (我吃全素 彰化市john那間有嗎), when it is the user's own to remember:
    offered as 「記住：全素」 like a search's diet; never someone else's or after 不用記."""
    if proposal.tool != "find_place" or _not_to_remember(proposal):
        return None
    checks = ask.notes_of(proposal.notes, ask.DietCheck)
    return checks[0].diet if checks else None


# -- the diet's origin ------------------------------------------------------------------------------

#: The five pungent plants (五辛) as residents name them; the catalog records none of them.
_PUNGENT_PLANTS = ("五辛", "蔥", "蒜", "韭", "蕎", "興渠")
#: The finer types the catalog does not record (shared.diets.UNRECORDED_DIETS).
_UNRECORDED_TYPES = frozenset(word for word, _ in UNRECORDED_DIETS)


def _unrecorded_words(unrecorded: str) -> list[str]:
    """What the catalog does not record, one phrase per condition said (鍋邊素、不吃蔥蒜 → two)."""
    words = []
    for word in unrecorded.split("、"):
        if any(plant in word for plant in _PUNGENT_PLANTS) and not word.endswith("素"):  # 不吃蔥蒜
            words.append(f"「{word}」")
        else:  # a finer type (鍋邊素, 五辛素, 可以吃蛋), or 不喝牛奶, 不吃辣, 對花生過敏
            words.append(f"「{word}」")
    return words


def origin_note(diet: EffectiveDiet, snapshot: PreferenceSnapshot | None, unrecorded: str | None = None) -> str | None:
    """Say where a place search's diet came from, or None when there is nothing to say.

    「依你同意記住的偏好：蔬食」 when the memory filled it; 「依你說的條件：不限素別」 when the
    user stated it (and, if a different value is remembered, that it was not applied or changed).
    A finer type the catalog does not record (五辛素, 鍋邊素) is named as not recorded, with the
    condition actually searched; it is never called 「你說的條件」.
    Source: docs/design.md §6 (the word 偏好), §7.
    """
    if diet.origin == CONSENTED_MEMORY:
        return f"依你同意記住的偏好：{diet_label(diet.dietary_type)}；想換，直接說。"
    if diet.origin == THIS_TURN:
        if unrecorded:
            searched = "不限素別查" if diet.dietary_type == "any" else f"先查「{diet_label(diet.dietary_type)}」"
            note = f"沒有{'、'.join(_unrecorded_words(unrecorded))}的資料，這次{searched}，點餐前請問店家。"
        else:
            note = f"依你說的條件：{diet_label(diet.dietary_type)}。"
        stored = snapshot.dietary_type if snapshot else None
        if stored and stored != diet.dietary_type:
            note += f"\n你記住的偏好「{diet_label(stored)}」這次沒有套用，也沒改。"
        return note
    if snapshot is None:
        return "這次暫時讀不到你記住的偏好，所以先不限素別查詢。"
    return None


# -- details the data does not record ---------------------------------------------------------------

#: What each named detail is, in people's words (docs/design.md §5: name what the snapshot does not record).
DETAIL_WORDS: dict[ask.DetailKind, str] = {
    ask.DetailKind.BRING: "要帶什麼東西",
    ask.DetailKind.PAYMENT: "付款方式",
    ask.DetailKind.PETS: "能不能帶寵物",
    ask.DetailKind.AGE: "適合的年齡",
    ask.DetailKind.SEATING: "座位",
    ask.DetailKind.ACCESS: "無障礙設施",
    ask.DetailKind.TOILET: "廁所、哺乳室",
    ask.DetailKind.SUITABILITY: "適不適合{who}",
    ask.DetailKind.END_TIME: "結束時間",
}


def _detail_words(note: ask.NotRecorded | ask.Unasked) -> str | None:
    if isinstance(note, ask.Unasked):
        return f"你問的「{note.words}」" if note.words else "你問的其他細節"
    words = DETAIL_WORDS.get(note.kind)
    return words.format(who=note.who or "長輩或小孩") if words else None


def detail_line(notes: tuple[ask.Note, ...], subject: str) -> str | None:
    """One sentence for every detail asked that the data does not record, and whom to ask.

    Args:
        notes: a reading's notes (only ``ask.NotRecorded`` and ``ask.Unasked`` are read).
        subject: ``events``, ``places`` or ``any`` (whose data, and whom to ask: the organiser,
            the shop, or either).
    Returns:
        The sentence (Traditional Chinese), or None when no note is a detail.
    Source: docs/design.md §5 (replies name what is not recorded, in people's words).
    """
    data = {"events": "活動資料", "places": "店家資料"}.get(subject, "資料")
    who = {"events": "主辦單位", "places": "店家"}.get(subject, "店家或主辦單位")
    said = (_detail_words(note) for note in notes if isinstance(note, (ask.NotRecorded, ask.Unasked)))
    items = list(dict.fromkeys(words for words in said if words))
    kinds = {note.kind for note in ask.notes_of(notes, ask.NotRecorded)}
    crowd, organiser = ask.DetailKind.CROWD in kinds, ask.DetailKind.ORGANISER in kinds
    if not items and not crowd and not organiser:
        return None
    line = f"{data}沒有記錄{'、'.join(items)}，請先問{who}。" if items else ""
    if organiser:
        line += f"{data}{'也' if items else ''}沒有記錄主辦單位是誰，請看活動的官方公告。"
    if crowd:
        line += f"我{'也' if items else ''}沒辦法知道當天人多不多、擠不擠，{data}沒有這類紀錄。"
    return line


# -- another ask in the same message ----------------------------------------------------------------

@dataclass(frozen=True)
class SecondAskButton:
    """Another ask of the same kind as the one searched, as the reply names and offers it.

    Attributes:
        words: its conditions as the reply names them (「彰化縣各鄉鎮，2026/12/5（六）～2026/12/7（一），
            關鍵字「市集」」; 「鹿港鎮的蛋奶素店家」).
        action: the button that searches it, with those conditions (label ≤ 20 UTF-16 units).
    """

    words: str
    action: PostbackAction | MessageAction


def _today_of(result: dict[str, Any] | None) -> date:
    """The turn's Asia/Taipei day, as the events search read it (its result's ``today``)."""
    today = (result or {}).get("today")
    if not today:
        raise UnreadableDate("no day to read the date against")
    return date.fromisoformat(today)


def _short_area(area: str | None) -> str:
    """員林市 → 員林, 二林鎮 → 二林 (not 鄉鎮 words of two characters); None → 全彰化."""
    return "全彰化" if not area else (area[:-1] if len(area) > 2 else area)


def _events_button(search: ask.EventsSearch, result: dict[str, Any] | None) -> SecondAskButton | None:
    date_range, short_date = None, ""
    if search.date is not None:
        try:
            start, end = search.date.resolve(_today_of(result))
        except UnreadableDate:
            return None
        date_range = f"{start.isoformat()}/{end.isoformat()}"
        last = end - timedelta(days=1)
        short_date = f"{start.month}/{start.day}" + (f"～{last.month}/{last.day}" if last != start else "")
    keyword = search.keyword
    words = scope_words({"area": search.area, "date": date_range, "keyword": keyword})
    label = limits.fit(short_date + _short_area(search.area) + (keyword.replace("|", "或").replace(" ", "")
                                                           if keyword else "活動"), limits.ACTION_LABEL)
    data = (f"events:area={search.area}" if search.area else ALL_TOWNSHIPS_DATA) + carried_query(date_range, keyword)
    return SecondAskButton(words, checked_postback(label, data, limits.fit(f"查{words}的活動", limits.DISPLAY_TEXT)))


def _places_button(search: ask.PlacesSearch) -> SecondAskButton:
    what = f"{diet_label(search.diet)}店家" if search.diet else "蔬食店家"
    label = limits.fit(_short_area(search.area) + what if search.area else what, limits.ACTION_LABEL)
    action: PostbackAction | MessageAction = (area_postback("places", search.area, diet=search.diet, label=label) if search.area
                                              else MessageAction(label=label, text=what))
    return SecondAskButton(f"{search.area}的{what}" if search.area else what, action)


def second_asks(proposal: Proposal, result: dict[str, Any] | None) -> list[SecondAskButton]:
    """The other asks of the proposal's kind, each named and offered as a button; an ask whose date
    cannot be resolved is left out."""
    buttons = []
    for note in ask.notes_of(proposal.notes, ask.SecondAsk):
        if not _same_kind(proposal, note):
            continue
        button = _events_button(note.ask, result) if isinstance(note.ask, ask.EventsSearch) else _places_button(note.ask)
        if button is not None:
            buttons.append(button)
    return buttons


def _first_ask_words(proposal: Proposal, result: dict[str, Any] | None) -> str:
    """The ask the reply answered, in words, beside another ask of its kind (see second_asks)."""
    query = (result or {}).get("query") or {}
    if proposal.tool == "search_local_events" and query:
        return scope_words(query, (result or {}).get("date_spans")) + "的活動"
    what = f"{diet_label(query.get('dietary_type') or proposal.args.get('dietary_type'))}店家"
    if proposal.tool == "search_local_places" and query.get("area"):
        return f"{query['area']}的{what}"
    return f"{what}（請先選鄉鎮）" if proposal.args.get("kind") != "events" else "活動（請先選鄉鎮）"


def _shop_areas_without(area: str | None) -> list[str] | None:
    """The townships with shop data, when ``area`` is a township that has none; else None (the area has
    shops, no area was named, or the catalog cannot be read)."""
    having = areas_with_places() if area else None
    return having if having and area not in having else None


def _other_kind_line(search: ask.EventsSearch | ask.PlacesSearch) -> str:
    """An ask of the other kind than the one answered (shops beside events, events beside a shop)."""
    if isinstance(search, ask.EventsSearch):
        button = f"「{search.area}的活動」" if search.area else "「查活動」"
        return f"先列店家；活動請點下方{button}。"
    where = search.area or "各鄉鎮"
    what = f"{diet_label(search.diet)}店家" if search.diet else "蔬食店家"
    having = _shop_areas_without(search.area)
    if having is not None:  # 員林有沒有純素的店: no shop data there, said now
        return f"{search.area}沒有店家資料；有的是{'、'.join(having)}，請點下方按鈕。"
    button = f"「{search.area}的店家」" if search.area else "「查蔬食」"
    return f"先列活動；{where}的{what}請點下方{button}。"


def _other_kind_items(search: ask.EventsSearch | ask.PlacesSearch) -> list[QuickReplyItem]:
    if isinstance(search, ask.EventsSearch):
        if not search.area:
            return [QuickReplyItem(action=MessageAction(label="查活動", text="查活動"))]
        data = f"events:area={search.area}" + carried_query(search.date.encode() if search.date is not None else None)
        return [QuickReplyItem(action=checked_postback(f"{search.area}的活動", data, f"查{search.area}的活動"))]
    having = _shop_areas_without(search.area)
    if having is not None:  # no dead-end button: the townships that have shops, with the diet
        return [QuickReplyItem(action=area_postback("places", township, diet=search.diet, label=f"{township}的店家"))
                for township in having]
    if not search.area:
        return [QuickReplyItem(action=MessageAction(label="查蔬食", text="查蔬食"))]
    return [QuickReplyItem(action=area_postback("places", search.area, diet=search.diet, label=f"{search.area}的店家"))]


def second_ask_items(proposal: Proposal, result: dict[str, Any] | None) -> list[QuickReplyItem]:
    """Buttons for what the message also asked but the reply did not search: another ask of the same
    kind, another named shop, the shop search beside an events question, the events search beside a
    shop question, and 我的偏好 beside a privacy question."""
    items = [QuickReplyItem(action=button.action) for button in second_asks(proposal, result)]
    for note in proposal.notes:
        if isinstance(note, ask.OtherPlace):
            items.append(QuickReplyItem(action=MessageAction(label=note.name[:20], text=note.name)))
        elif isinstance(note, ask.SecondAsk) and not _same_kind(proposal, note):
            items += _other_kind_items(note.ask)
        elif note == ask.Flag.PRIVACY_ASKED:
            items.append(QuickReplyItem(action=MessageAction(label="我的偏好", text="我的偏好")))
    return items


# -- the lines said beside the result ---------------------------------------------------------------

#: A no-memory remark beside a search: nothing is kept without the card's consent (not the words
#: 同意記住, which name the card's button). Source: docs/design.md §6.
_NOT_SAVED_LINE = "好的，不會幫你記；你按同意我才保存。"
#: A privacy question beside a search (你們會存我的個資嗎 花壇有素食嗎). Source: docs/design.md §6.
#: True to the store: the message's text is dropped once it is answered (shared.inbox.finished).
_PRIVACY_ASKED_LINE = "偏好要你按同意才保存；你傳的訊息，我回覆後就刪掉。"


def _unknown_area_line(typed: str, proposal: Proposal, result: dict[str, Any] | None) -> str:
    """溪胡 → 「我不認得「溪胡」…你是說「溪湖」嗎？」, and when that township is not among the buttons below
    (``area_choices``: the townships with data), that this data has none there, so nobody looks for
    a button that is not there."""
    by_short_name = {name[:-1]: name for name in TOWNSHIPS}
    near = difflib.get_close_matches(typed, list(by_short_name), n=1, cutoff=0.5)
    line = f"我不認得「{typed}」這個地名，彰化縣的鄉鎮裡沒有。"
    if not near:
        return line + "請點下方的鄉鎮，或再輸入一次鄉鎮名稱。"
    township = by_short_name[near[0]]
    choices = (result or {}).get("area_choices")
    picker = (result or {}).get("status") == "needs_area"  # the picker below says which townships, once
    what = "活動" if is_events(proposal) else "店家"
    if isinstance(choices, list) and choices and township not in choices:
        if picker:
            return line + f"你是說「{near[0]}」嗎？這份資料目前沒有{township}的{what}。"
        return (line + f"你是說「{near[0]}」嗎？這份資料目前沒有{township}的{what}；"
                f"下方是有{what}資料的鄉鎮，也可以再輸入一次鄉鎮名稱。")
    return line + f"你是說「{near[0]}」嗎？" + ("" if picker else "請點下方的鄉鎮，或再輸入一次鄉鎮名稱。")


# -- a follow-up answered: what changed, what was kept (docs/design.md §7, Conversation) --------------

#: Dates as residents say them, for the changed condition; any other date is named by its days.
_SAID_DATES: dict[DateSpec, str] = {RelativeDay(0): "今天", RelativeDay(1): "明天", RelativeDay(2): "後天",
                                    Week(0): "這禮拜", Week(1): "下禮拜", Week(0, True): "這週末",
                                    Week(1, True): "下週末"}
_WEEKDAYS = "一二三四五六日"


def _days_words(spec: DateSpec, result: dict[str, Any] | None) -> str:
    """下禮拜, 週日, 下週六; else the days themselves (12/5（六）, 12/7（一）～12/13（日）)."""
    if spec in _SAID_DATES:
        return _SAID_DATES[spec]
    if isinstance(spec, Weekday) and spec.weeks in (None, 0, 1):
        return {None: "週", 0: "這週", 1: "下週"}[spec.weeks] + _WEEKDAYS[spec.day]
    try:
        start, end = spec.resolve(_today_of(result))
    except UnreadableDate:
        return "你說的日期"
    last = end - timedelta(days=1)
    def day(value: date) -> str:
        return f"{value.month}/{value.day}（{_WEEKDAYS[value.weekday()]}）"
    return day(start) if last == start else f"{day(start)}～{day(last)}"


def _condition_words(search: ask.EventsSearch | ask.PlacesSearch, follow_up: ask.FollowUp,
                     result: dict[str, Any] | None) -> tuple[list[str], list[str], str]:
    """(changed, kept, topic): the conditions of ``search`` in words, split by whether the follow-up set
    them; a kept events topic is said before 活動 (鹿港鎮的「市集」活動)."""
    changed: list[str] = []
    kept: list[str] = []
    topic = ""
    if search.area:
        (changed if follow_up.area else kept).append(search.area)
    if isinstance(search, ask.EventsSearch):
        if search.date is not None:
            (changed if follow_up.date else kept).append(_days_words(follow_up.date or search.date, result))
        if search.keyword:
            words = f"「{search.keyword.replace('|', '或')}」"
            if follow_up.keyword:
                changed.append(words)
            else:
                topic = words
    elif search.diet and search.diet != "any":
        (changed if follow_up.diet else kept).append(diet_label(search.diet))
    return changed, kept, topic


def changed_line(note: ask.Changed, result: dict[str, Any] | None) -> str:
    """「改查下禮拜，員林市的活動：」: the one line a follow-up's answer opens with, what changed first, then
    what was kept (a correction: 「好的，改查鹿港鎮，12/5（六）的活動：」)."""
    changed, kept, topic = _condition_words(note.search, note.follow_up, result)
    kind = topic + ("活動" if isinstance(note.search, ask.EventsSearch) else "店家")
    if not changed:  # only the kind changed (我是要問素食): the township kept
        changed, kept = kept, []
    head = "好的，改查" if note.follow_up.correction else "改查"
    if not changed:
        return f"{head}{kind}："
    return f"{head}{'、'.join(changed)}，{'、'.join(kept)}的{kind}：" if kept else f"{head}{'、'.join(changed)}的{kind}："


def _note_line(note: ask.Note, proposal: Proposal, result: dict[str, Any] | None) -> str | None:
    """The line one note says beside the result, or None (said elsewhere, or by the buttons)."""
    if isinstance(note, ask.OtherAreas) and note.areas:
        searched = (result or {}).get("query", {}).get("area") or ""
        return f"先列{searched}；{'、'.join(note.areas)}請點下方按鈕。"
    if isinstance(note, ask.UnknownTownship):
        return _unknown_area_line(note.typed, proposal, result)
    if isinstance(note, ask.UnrecordedKind):
        return f"沒有「{note.word}」分類，先列有素食的店。"
    if isinstance(note, ask.OtherPlace):
        return f"「{note.name}」請點按鈕。"
    if isinstance(note, ask.SecondAsk) and not _same_kind(proposal, note):
        return _other_kind_line(note.ask)
    return {ask.Flag.CHANGHUA_AS_CITY: "「彰化」我當作彰化市。",
            ask.Flag.NOT_SAVED: _NOT_SAVED_LINE, ask.Flag.PRIVACY_ASKED: _PRIVACY_ASKED_LINE}.get(note) \
        if isinstance(note, ask.Flag) else None


def note_lines(proposal: Proposal, result: dict[str, Any] | None) -> list[str]:
    """What the reply says besides the result: limits asked beside it, the other asks, townships not
    searched, details not recorded, the shop found by name, the greeting said first."""
    lines = menu.limit_lines(_hours_on_cards(ask.notes_of(proposal.notes, ask.Limit), result),
                             beside_events=proposal.tool == "search_local_events")
    seconds = second_asks(proposal, result)
    if seconds:  # 聖誕節員林有活動嗎？還有12/5到12/7全彰化的市集: which one is answered, and the other's button
        lines.append(f"你問了{'兩三'[len(seconds) - 1]}件事，先查第一件；" +
                     "、".join(f"「{button.action.label}」" for button in seconds) + "請點下方按鈕。")
    lines += [line for note in proposal.notes if (line := _note_line(note, proposal, result))]
    lines += _events_searched_lines(result)
    places = proposal.tool in ("find_place", "search_local_places") or proposal.args.get("kind") == "places"
    details = detail_line(proposal.notes, "places" if places else "events")
    # 要帶水嗎, 可以刷卡嗎: what the data does not record; no shop found, no shop to ask (員林…可以刷卡嗎)
    lines += [details] if details and not (places and (result or {}).get("status") == "no_match") else []
    lines = _shop_found_lines(proposal, result) + lines
    lines = [changed_line(note, result) for note in ask.notes_of(proposal.notes, ask.Changed)] + lines
    if ask.Flag.GREETED in proposal.notes:  # 早上好 今天有什麼活動: the greeting answered, then the question
        lines.insert(0, "你好！")
    return lines


def _hours_on_cards(kinds: list[ask.Limit], result: dict[str, Any] | None) -> list[str]:
    """The limits to say, with 「沒有營業時間資料」 (和米有開嗎) said as 「卡片上的營業時間是資料寫的」 when a
    shop card of the result shows hours (shared.replies.places.readable_hours): never 「沒有」 beside them."""
    shown = any(readable_hours(place.get("hours")) for place in (result or {}).get("places") or []
                if isinstance(place, dict))
    return ["hours_on_card" if kind is ask.Limit.HOURS and shown else str(kind) for kind in kinds]


def _events_searched_lines(result: dict[str, Any] | None) -> list[str]:
    """What an events search left out: the days between two dates asked apart, and events that just ended."""
    lines = []
    if (result or {}).get("between_left_out"):
        lines.append("你問的是兩段日期：只列這兩段日期的活動，中間日子的活動沒有列出。")
    ended = (result or {}).get("ended") or []
    if ended:  # 八卦山健走還有沒有: none coming, and the one that ended is named as ended
        names = "、".join(f"{title}（{day.replace('-', '/')}，已結束）" for title, day in ended[:3])
        lines.append(f"最近 {PAST_LOOKBACK_DAYS} 天內有符合、但已經結束的活動：{names}。")
    return lines


def _shop_found_lines(proposal: Proposal, result: dict[str, Any] | None) -> list[str]:
    """A shop found by name: first, per named shop, whether it lists the diet asked; then what its card holds."""
    if proposal.tool != "find_place" or not result or result.get("status") != "ok":
        return []
    name = _shop_name(proposal, result)
    return _diet_check_lines(proposal, name)


def _shop_name(proposal: Proposal, result: dict[str, Any]) -> str:
    """The named shop as the catalog spells it (john手作 → John手作蔬食: a model's call says the name as the
    resident wrote it; the router's is the catalog's already), when one shop was found; else as asked."""
    places = result.get("places") or []
    return places[0]["name"] if len(places) == 1 else proposal.args.get("name") or ""


#: Whether the catalog lists a diet at a shop (shared.places.search.diet_listed's states).
_LISTED_WORDS = {
    "listed": "有{label}品項（不是每道）",
    "not_recorded": "只記錄「蔬食」，有沒有{label}請先問店家",
    "not_listed": "沒有列{label}",
}


def _diet_check_lines(proposal: Proposal, name: str) -> list[str]:
    """Per named shop, whether the catalog lists the diet asked about (和米素食跟john手作 哪間有全素)."""
    checks = ask.notes_of(proposal.notes, ask.DietCheck)
    if not checks:
        return []
    names = [name] + [note.name for note in ask.notes_of(proposal.notes, ask.OtherPlace)]
    label = diet_label(checks[0].diet)
    return [f"{shop}{_LISTED_WORDS[state].format(label=label)}。"
            for shop, state in diet_listed(names, checks[0].diet)]


# -- the reply --------------------------------------------------------------------------------------

def revision_changed_reply() -> Reply:
    """The remembered diet changed while the turn ran (a save or forget landed): nothing it could have
    shaped is listed, whether the search ran (the engine's check after it) or not (the model path's
    check before it). Source: docs/design.md §7 step 5, §8."""
    return Reply([TextMessage(text="你的飲食偏好剛剛有變更，為了不用舊的條件，這次先不列出結果。請再問一次。")])


def date_choices(area: str | None, keyword: str | None = None) -> QuickReply:
    """Date choices for 「我看不懂這個日期」, keeping the township and the topic the user asked about."""
    where = (f"&area={area}" if area else "") + carried_query(keyword=keyword)
    choices: tuple[tuple[str, DateSpec], ...] = (
        ("今天", RelativeDay(0)), ("明天", RelativeDay(1)), ("這週末", Week(0, weekend=True)),
        ("下週末", Week(1, weekend=True)), ("這個月", RelativeMonth(0)), ("下個月", RelativeMonth(1)))
    items = [QuickReplyItem(action=checked_postback(label, f"events:date={spec.encode()}{where}", f"查{label}的活動"))
             for label, spec in choices]
    items.append(QuickReplyItem(action=checked_postback("不限日期", f"events:scope=all{where}", "查所有日期的活動")))
    return QuickReply(items=items)


def invalid_argument_reply(exc: Exception, proposal: Proposal) -> Reply:
    """A kind answer to an argument that is not valid: an unknown township, diet or date."""
    if isinstance(exc, UnknownArea):
        return help_reply("我找不到這個地區，請說彰化縣的鄉鎮名稱，例如「花壇」或「員林市」。")
    if isinstance(exc, UnknownDietaryType):
        return help_reply("我看不懂這個飲食條件，可以說「蔬食」、「全素」、「蛋奶素」、「奶素」或「不限」。")
    area = proposal.args.get("area")
    try:
        area = normalize_area(area) if area else None
    except UnknownArea:
        area = None
    return menu.unreadable_date_reply(date_choices(area, proposal.args.get("keyword")))


def _with_quick_reply(message: Any, quick_reply: QuickReply) -> Any:
    """``message`` (a text or a card) carrying ``quick_reply``: LINE shows the buttons of the last message."""
    return message.copy(update={"quick_reply": quick_reply})


def _attach(messages: list[Any], quick_reply: QuickReply | None) -> None:
    """Put next-step quick replies on the last message (a text or the card), unless it already has some."""
    if quick_reply is None or not messages:
        return
    if messages[-1].quick_reply is None:
        messages[-1] = _with_quick_reply(messages[-1], quick_reply)


def _offer_on_picker(messages: list[Any], stated: str | None, remembered: str | None) -> None:
    """A statement of one's own diet with no township (我吃全素, 我是素食者: ``ask.Flag.OWN_DIET``): the shop
    picker for that diet stays the answer, and its last text gains one line and a 「記住：全素」 button
    after the townships (the button asks for the consent card; nothing is stored here). Nothing is
    added when ``remember_item`` offers nothing (not savable, already remembered, 蔬食 over a finer
    type) or the last message is not the picker's text.

    Source: docs/design.md §6 (a card only on request; nothing stored without consent).
    """
    item = remember_item(stated, remembered)
    if item is None or stated is None or not messages or not isinstance(messages[-1], TextMessage):
        return
    last = messages[-1]
    label = diet_label(stated)
    townships = list(last.quick_reply.items) if last.quick_reply else []
    text = (f"{last.text}\n想讓我記住「{label}」，之後查店家沒說素別時就用嗎？"
            f"可以點「記住：{label}」，會先給你看確認卡；不點就什麼都不保存。")
    messages[-1] = TextMessage(text=text, quick_reply=QuickReply(
        items=townships[:QUICK_REPLY_MAX_ITEMS - 1] + [item]))


def _put_first(messages: list[Any], items: list[QuickReplyItem]) -> None:
    """Put ``items`` first in the last message's quick replies (same labels dropped, ≤ 13)."""
    if not items or not messages:
        return
    last = messages[-1]
    labels = {item.action.label for item in items}
    rest = [item for item in (last.quick_reply.items if last.quick_reply else []) if item.action.label not in labels]
    messages[-1] = _with_quick_reply(last, QuickReply(items=(items + rest)[:QUICK_REPLY_MAX_ITEMS]))


def _result_messages(proposal: Proposal, result: dict[str, Any], stated: str | None) -> list[Any]:
    vague = bool(proposal.args.get("vague"))
    vague_words = tuple(proposal.args.get("vague_words") or ())
    if is_events(proposal):
        return list(render_events(result, vague=vague, vague_words=vague_words))
    return list(render_places(result, stated_diet=stated, vague=vague, vague_words=vague_words,
                              said=unrecorded_said(proposal.notes) if stated else None))


def _asked_first(messages: list[Any], result: dict[str, Any], asked: tuple[str, ...], **conditions: Any) -> None:
    """No match: the townships asked but not searched go first among the last text's buttons."""
    if messages:
        last = messages[-1]
        messages[-1] = _with_quick_reply(last, asked_first(last.quick_reply, result, asked, **conditions))


def _next_steps(messages: list[Any], proposal: Proposal, result: dict[str, Any], stated: str | None,
                snapshot: PreferenceSnapshot | None, offer_memory: bool) -> None:
    """The buttons under the result: townships asked first, next steps, the 記住 offer."""
    status = result.get("status")
    asked = other_areas(proposal.notes)
    unrecorded = unrecorded_said(proposal.notes) if stated else None
    events = is_events(proposal)
    remembered = snapshot.dietary_type if snapshot else None
    # someone else's diet (我媽媽吃全素) is searched and kept on the buttons, never offered to remember;
    # a finer diet not recorded (鍋邊素) is kept on the buttons too, and never offered either
    may_offer = offer_memory and not _not_to_remember(proposal)
    if status == "no_match" and asked:
        _asked_first(messages, result, asked, kind="events" if events else "places", diet=stated, said=unrecorded)
    if status == "ok":
        _attach(messages, events_next_steps(result, asked=asked) if events else places_next_steps(
            result, stated_diet=stated or diet_said_beside_shop(proposal), remembered=remembered, asked=asked,
            offer_memory=may_offer, said=unrecorded))
    if status == "needs_area" and not events and may_offer and ask.Flag.OWN_DIET in proposal.notes:
        _offer_on_picker(messages, stated, remembered)


def render(proposal: Proposal, result: dict[str, Any] | None, diet: EffectiveDiet | None,
           snapshot: PreferenceSnapshot | None, *, offer_memory: bool = True) -> Reply:
    """The reply to a tool's result, with every note of the reading said and offered.

    Args:
        proposal: the reading (its tool, arguments and notes).
        result: the tool's result dict; None for the help menu.
        diet: the effective diet of a place search (None for other tools).
        snapshot: the preference read at the turn's start (None: it could not be read).
        offer_memory: False in a group or room: nothing is offered to remember there.
    """
    if result is None:
        return help_reply()
    stated = diet.dietary_type if diet is not None and diet.origin == THIS_TURN else None
    messages = _result_messages(proposal, result, stated)
    _next_steps(messages, proposal, result, stated, snapshot, offer_memory)
    _put_first(messages, second_ask_items(proposal, result))
    lines = note_lines(proposal, result)
    if diet is not None and result.get("status") in ("ok", "no_match"):
        note = origin_note(diet, snapshot, unrecorded_said(proposal.notes))
        if note:
            lines.append(note)
    if result.get("status") == "needs_area" and any(isinstance(note, ask.UnknownTownship) for note in proposal.notes):
        _without_picker_question(messages)
    _lead_with(messages, lines)
    return Reply(messages)


#: The picker's own question (想找哪個鄉鎮的蔬食店家？, 想查哪個鄉鎮的活動？): asked already when a township
#: typed was not known (「你是說「花壇」嗎？」), so it is not asked twice.
_PICKER_QUESTION = re.compile(r"^想(?:找|查)哪個鄉鎮[^？\n]*？\n?")


def _without_picker_question(messages: list[Any]) -> None:
    """The picker's text without its question: one question, one set of buttons."""
    if messages and isinstance(messages[0], TextMessage):
        messages[0] = messages[0].copy(update={"text": _PICKER_QUESTION.sub("", messages[0].text)})


def _lead_with(messages: list[Any], lines: list[str]) -> None:
    """The reading's lines go first in the answer's text (one text, then at most one card)."""
    if not lines:
        return
    if messages and isinstance(messages[0], TextMessage):
        messages[0] = messages[0].copy(update={"text": "\n".join([*lines, messages[0].text])})
    else:
        messages.insert(0, TextMessage(text="\n".join(lines)))


# -- one listed item (第三個在哪裡集合, 第2家電話幾號: shared.turn.item_answer) ------------------------

#: How each kind of item is counted in a reply: 第 3 個 (活動), 第 2 家 (店家).
_ITEM_COUNTER = {ItemKind.EVENT: "個", ItemKind.PLACE: "家"}
#: The kind of item in words: 剛剛列了 3 個活動 / 3 家店家.
_ITEM_NOUN = {ItemKind.EVENT: "活動", ItemKind.PLACE: "店家"}
#: A detail asked, as a button repeats it (第2家電話, 第3個在哪).
_DETAIL_ASKED = {ask.ItemDetail.WHERE: "在哪", ask.ItemDetail.WHEN: "幾點", ask.ItemDetail.END_TIME: "幾點結束",
                 ask.ItemDetail.PHONE: "電話", ask.ItemDetail.PRICE: "要錢嗎", ask.ItemDetail.REGISTRATION: "要報名嗎",
                 ask.ItemDetail.DIET: "素別", ask.ItemDetail.OTHER: ""}
#: The details offered next under an answer, per kind (the ones not asked, in this order).
_ITEM_NEXT = {ItemKind.EVENT: (ask.ItemDetail.WHEN, ask.ItemDetail.WHERE),
              ItemKind.PLACE: (ask.ItemDetail.WHERE, ask.ItemDetail.PHONE)}


def _item_buttons(kind: ItemKind, offers: list[tuple[int, str]], details: tuple[ask.ItemDetail, ...],
                  other: str | None = None) -> QuickReply:
    """A button per (position, title) that asks the same details of that item again (「第2家電話」,
    「第2家有賣便當嗎」 with ``other``, the resident's words for a detail no record holds); the label names
    the item when its title is known."""
    asked = "".join(f"{other}嗎" if detail is ask.ItemDetail.OTHER and other else _DETAIL_ASKED[detail]
                    for detail in details[:2])
    items = []
    for at, title in offers[:QUICK_REPLY_MAX_ITEMS]:
        text = f"第{at}{_ITEM_COUNTER[kind]}{asked}"
        label = limits.fit(f"{at}. {title}" if title else text, limits.ACTION_LABEL)
        items.append(QuickReplyItem(action=MessageAction(label=label, text=text)))
    return QuickReply(items=items)


def item_no_list_reply(*, searched: bool = False) -> Reply:
    """A reference with no list to read it against, said briefly with the menu: none shown yet, or the
    last one is over 30 minutes old (docs/design.md §7: the state lasts 30 minutes); ``searched``: the
    last search found nothing, so nothing was listed."""
    if searched:
        return Reply([menu.with_menu(TextMessage(text="剛剛的查詢沒有列出任何一筆，所以沒有可以對照的。請換個條件再查，或點下方的選項。"))])
    return Reply([menu.with_menu(TextMessage(
        text="我這邊沒有剛剛列出的清單可以對照（可能已經超過 30 分鐘）。請再查一次，或點下方的選項。"))])


def item_gone_reply() -> Reply:
    """The item listed is no longer in the data (the snapshot or catalog changed since): ask again."""
    return Reply([menu.with_menu(TextMessage(text="這一筆已經不在目前的資料裡（資料剛更新過），請再查一次。"))])


def item_beyond_reply(kind: ItemKind, count: int, ref: ask.ItemRef, offers: list[tuple[int, str]]) -> Reply:
    """A position beyond the list: 「剛剛列了 2 家，沒有第 3 家。」, with a button per item listed
    (``offers``: (position, title or name) each)."""
    counter = _ITEM_COUNTER[kind]
    asked = ref.position if ref.position and ref.position > 0 else None
    line = f"剛剛列了 {count} {counter}{_ITEM_NOUN[kind] if kind is ItemKind.EVENT else ''}"
    line += f"，沒有第 {asked} {counter}。" if asked else "，沒有那麼多。"
    return Reply([TextMessage(text=line + "想看哪一" + counter + "，請點下方的按鈕。",
                              quick_reply=_item_buttons(kind, offers, ref.details, ref.asked))])


def item_which_reply(kind: ItemKind, count: int, ref: ask.ItemRef, offers: list[tuple[int, str]],
                     *, unmatched: bool = False) -> Reply:
    """Which item is meant: a pointer to several (剛剛那家 among 3), a word naming several, or (``unmatched``)
    a word naming none of the listed items; a button per item offered (``offers``: (position, title))."""
    counter, noun = _ITEM_COUNTER[kind], _ITEM_NOUN[kind]
    if unmatched and ref.name_word:
        line = f"剛剛列的 {count} {counter}{noun}裡，沒有看到「{ref.name_word}」。你是說哪一{counter}？"
    else:
        line = f"剛剛列了 {count} {counter}{noun}，你問的是哪一{counter}？"
    return Reply([TextMessage(text=line + "請點下方的按鈕，或說「第2" + counter + "」。",
                              quick_reply=_item_buttons(kind, offers, ref.details, ref.asked))])


def _event_source_line(snapshot: EventSnapshot, stale: bool) -> str:
    """The one source line of an event answer: 示範 while the data is demo; a real source by name, and
    that it may be out of date when it was last confirmed too long ago (docs/design.md §5)."""
    if snapshot.demo:
        return "（目前的活動是示範資料，不是真的活動。）"
    line = f"資料來源：{snapshot.source_name or '活動資料'}。"
    return line + ("這份活動資料有一段時間沒有更新，內容可能已經過時，請以主辦單位公告為準。" if stale else "")


def _event_day_words(event: Event) -> str:
    """The event's day or days, with 已結束 after a past one: 「2026/12/19（六）」."""
    first = f"{event.date.year}/{event.date.month}/{event.date.day}（{'一二三四五六日'[event.date.weekday()]}）"
    last = event.last_day
    if last == event.date:
        return first
    return f"{first}～{last.year}/{last.month}/{last.day}（{'一二三四五六日'[last.weekday()]}）"


def _event_detail(event: Event, demo: bool, detail: ask.ItemDetail, other: str | None = None) -> str:
    """What the event's record says about one detail, or that it does not record it (``other``: the
    resident's words for a detail no record holds)."""
    place = "集合地點" if demo else "地點"
    ask_them = "請看主辦單位公告" + ("（活動網頁在下方）" if event.url else "") + "。"
    if detail is ask.ItemDetail.WHERE:
        return (f"{place}：{event.meeting_point}（{event.area}）。" if event.meeting_point
                else f"活動資料沒有記錄{place}，只知道在{event.area}；{ask_them}")
    if detail is ask.ItemDetail.WHEN:
        start = f"，{event.start_time:%H:%M} 開始" if event.start_time else "；開始時間活動資料沒有記錄"
        return f"日期：{_event_day_words(event)}{start}。"
    if detail is ask.ItemDetail.END_TIME:
        return f"活動資料只有開始時間，沒有記錄結束時間或要多久；{ask_them}"
    what = {ask.ItemDetail.PHONE: "聯絡電話", ask.ItemDetail.PRICE: "要不要錢、費用多少",
            ask.ItemDetail.REGISTRATION: "要不要報名、怎麼報名", ask.ItemDetail.DIET: "有沒有素食",
            ask.ItemDetail.OTHER: f"你問的「{other}」" if other else "你問的這件事"}[detail]
    organiser = f"主辦是{event.organizer}，" if event.organizer else ""
    return f"活動資料沒有記錄{what}；{organiser}{ask_them}"


def event_item_reply(event: Event, snapshot: EventSnapshot, position: int, details: tuple[ask.ItemDetail, ...],
                     today: date, *, stale: bool = False, other: str | None = None) -> Reply:
    """One listed event, answered from its snapshot record: what each detail asked is, or that the
    record does not hold it; all it holds when no detail was asked; the source once.

    Args:
        event: the event's record in the current snapshot.
        snapshot: that snapshot (demo or real: the source line).
        position: its 1-based place in the list shown.
        details: what was asked, in order; () for the item itself.
        today: the turn's Asia/Taipei day (an event that ended before it says 已結束).
        stale: the real snapshot was last confirmed longer ago than the configured age: said so.
        other: the resident's words for a detail no record holds (``ItemDetail.OTHER``), or None.
    Source: docs/design.md §5 (name what the snapshot does not record; 示範 on demo data).
    """
    past = "（已結束）" if event.last_day < today else ""
    lines = [f"第 {position} 個：「{event.title}」{past}（{event.area}）"]
    asked = details or (ask.ItemDetail.WHEN, ask.ItemDetail.WHERE)
    lines += [_event_detail(event, snapshot.demo, detail, other) for detail in asked]
    lines.append(_event_source_line(snapshot, stale))
    buttons = [QuickReplyItem(action=MessageAction(label=limits.fit(f"第{position}個{_DETAIL_ASKED[detail]}",
                                                                    limits.ACTION_LABEL),
                                                   text=f"第{position}個{_DETAIL_ASKED[detail]}"))
               for detail in _ITEM_NEXT[ItemKind.EVENT] if detail not in asked]
    if event.url:
        buttons.insert(0, QuickReplyItem(action=URIAction(label="活動網頁", uri=event.url)))
    return Reply([TextMessage(text="\n".join(lines), quick_reply=QuickReply(items=buttons) if buttons else None)])


def _place_source_line(place: Place, catalog: PlaceCatalog, field: str) -> str:
    """The one source line of a shop answer: where the field answered comes from, and when it was read."""
    source = catalog.sources.get(place.field_sources.get(field) or place.field_sources.get("name", ""))
    if source is None:
        return ""
    return f"資料來源：{source_words(source.as_dict())}，{day_words(source.accessed_on)} 查閱。"


def _place_detail(place: Place, catalog: PlaceCatalog, detail: ask.ItemDetail, other: str | None = None) -> str:
    """What the shop's catalog entry says about one detail, or that it does not record it (``other``: the
    resident's words for a detail no record holds)."""
    call = f"請先打電話問店家（{place.phone}）。" if place.phone else "請先問店家。"
    if detail is ask.ItemDetail.DIET:
        return _place_diets_line(place, catalog)
    if detail is ask.ItemDetail.OTHER:
        return f"店家資料沒有記錄你問的「{other}」，{call}" if other else f"店家資料沒有記錄你問的這件事，{call}"
    if detail is ask.ItemDetail.WHERE:
        return f"地址：{place.address}。"
    if detail is ask.ItemDetail.PHONE:
        return f"電話：{place.phone}。" if place.phone else "店家資料沒有記錄電話。"
    recorded = place.unknown.get("hours")
    hours = readable_hours(recorded)
    if detail in (ask.ItemDetail.WHEN, ask.ItemDetail.END_TIME) and hours:
        return f"營業時間：{hours}（資料寫的，不代表今天有開），{call}"
    if detail in (ask.ItemDetail.WHEN, ask.ItemDetail.END_TIME) and recorded:
        return f"營業時間{HOURS_ASK}" + (f"（電話 {place.phone}）。" if place.phone else "。")
    what = {ask.ItemDetail.WHEN: "營業時間", ask.ItemDetail.END_TIME: "營業時間", ask.ItemDetail.PRICE: "價錢",
            ask.ItemDetail.REGISTRATION: "要不要訂位或預約"}[detail]
    return f"店家資料沒有記錄{what}，{call}"


def _place_diets_line(place: Place, catalog: PlaceCatalog) -> str:
    """「店家資料列的素別：蔬食。」, with 「（未確認素別）」 when only open data's 素 in a class or name says so."""
    kinds = "、".join(diet_label(kind) for kind in place.dietary_options)
    if not kinds:
        return "店家資料沒有寫素別。"
    unconfirmed = all(catalog.sources[sid].kind in UNCONFIRMED_DIET_KINDS
                      for sid in place.dietary_evidence.values() if sid in catalog.sources)
    return f"店家資料列的素別：{kinds}（未確認素別）。" if unconfirmed else f"店家資料列的素別：{kinds}。"


def place_item_reply(place: Place, catalog: PlaceCatalog, position: int, details: tuple[ask.ItemDetail, ...],
                     other: str | None = None) -> Reply:
    """One listed shop, answered from its catalog entry: each detail asked, or that it is not recorded;
    the address, the phone and the diets listed when no detail was asked; the source once.

    Args:
        place: the shop's catalog entry.
        catalog: the catalog (its sources).
        position: its 1-based place in the list shown.
        details: what was asked, in order; () for the shop itself.
        other: the resident's words for a detail no record holds (``ItemDetail.OTHER``), or None.
    Source: docs/design.md §5 (every field names its source; name what is not recorded).
    """
    lines = [f"第 {position} 家：「{place.name}」（{place.area}）"]
    asked = details or (ask.ItemDetail.WHERE, ask.ItemDetail.PHONE)
    lines += [_place_detail(place, catalog, detail, other) for detail in asked]
    if not details:
        lines.append(_place_diets_line(place, catalog))
    field = ("phone" if ask.ItemDetail.PHONE in asked and place.phone else "hours"
             if {ask.ItemDetail.WHEN, ask.ItemDetail.END_TIME} & set(asked)
             and readable_hours(place.unknown.get("hours")) else "address")
    lines.append(_place_source_line(place, catalog, field))
    buttons = [QuickReplyItem(action=MessageAction(label=f"第{position}家{_DETAIL_ASKED[detail]}",
                                                   text=f"第{position}家{_DETAIL_ASKED[detail]}"))
               for detail in _ITEM_NEXT[ItemKind.PLACE] if detail not in asked]
    return Reply([TextMessage(text="\n".join(line for line in lines if line),
                              quick_reply=QuickReply(items=buttons) if buttons else None)])
