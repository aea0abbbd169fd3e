"""The turn engine: route a message, run at most one read-only tool, render with fixed templates
(DESIGN §7). Python validates every proposed argument; the router or model only proposes.

Per turn:
1. snapshot the consented preference with its revision (place tools only: they take a diet);
2. route (the offline router here; the model through shared.agent in functions/agent) → one
   Proposal. The Proposal never carries the stored value: the model does not see it;
3. resolve the effective ``dietary_type`` and its origin (shared.turn.diet_origin);
4. execute the one tool with the effective arguments;
5. read the revision again: if it moved while the tool ran (a save or forget landed), a result
   personalised by the memory is discarded;
6. render with fixed templates, saying where the diet came from, and write the audit record.
"""
from __future__ import annotations

import contextvars
import difflib
import functools
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any

from linebot.v3.messaging import MessageAction, PostbackAction, QuickReply, QuickReplyItem, TextMessage

from shared.areas import TOWNSHIPS, WHOLE_COUNTY, UnknownArea, normalize_area
from shared.clock import TAIPEI
from shared.context import EventContext, Reply
from shared.diets import UNRECORDED_DIETS, diet_label
from shared.events.search import InvalidDateRange, search_local_events
from shared.events.snapshots import load_current_snapshot
from shared.handoff import flow as handoff_flow
from shared.line import limits
from shared.logs import hash_user, log
from shared.memory.flow import offer_card
from shared.memory.store import PreferenceSnapshot, read_preference
from shared.places.search import UnknownDietaryType, areas_with_places, diet_listed, search_local_places
from shared.replies import refusals
from shared.replies.area_picker import QUICK_REPLY_MAX_ITEMS, area_postback, checked_postback
from shared.replies.events import render_events, scope_words
from shared.replies.next_steps import (
    ALL_TOWNSHIPS_DATA,
    asked_first,
    carried_query,
    events_next_steps,
    places_next_steps,
    remember_item,
)
from shared.replies.places import render_places
from shared.store import StoreError
from shared.turn import menu
from shared.turn.audit import record_turn
from shared.turn.datespec import Both, DateSpec, RelativeDay, RelativeMonth, UnreadableDate, Week, encoded
from shared.turn.details import detail_line
from shared.turn.diet_origin import CONSENTED_MEMORY, THIS_TURN, EffectiveDiet, resolve_diet
from shared.turn.follow_up import previous_search
from shared.turn.limits import limits_with_details
from shared.turn.menu import help_reply
from shared.turn.router import Proposal, route, second_ask

#: The vague word that stands for "no township given" when a picker is wanted.
_NO_TOWNSHIP = "附近"


@dataclass(frozen=True)
class TurnTools:
    """The read-only business tools a turn may call (injectable for tests of the mid-turn check).

    Attributes:
        places: ``search_local_places(area, dietary_type, keyword, *, now)``.
        events: ``search_local_events(date, area, keyword, *, now, snapshot_loader, stale_after_seconds)``.
    """

    places: Callable[..., dict[str, Any]] = search_local_places
    events: Callable[..., dict[str, Any]] = search_local_events


DEFAULT_TOOLS = TurnTools()


#: Proposals answered with a fixed reply, no tool (issue 9 items 7, 9, 11, 14).
FIXED_TOOLS: dict[str, Callable[[EventContext, Proposal], Reply]] = {
    "greeting": lambda ctx, proposal: menu.greeting_reply(),
    "thanks": lambda ctx, proposal: menu.thanks_reply(),
    "show_limits": lambda ctx, proposal: limits_with_details(proposal.args.get("kinds") or [], proposal.notes),
    "privacy_info": lambda ctx, proposal: menu.privacy_reply(ctx, forget="forget" in proposal.notes,
                                                             sharing="sharing" in proposal.notes),
    "did_you_mean": lambda ctx, proposal: menu.did_you_mean_reply(proposal.args["name"], proposal.args["text"],
                                                                  choices=proposal.args.get("choices"),
                                                                  typed=proposal.args.get("typed")),
    "handoff_cancel_help": lambda ctx, proposal: menu.cancel_help_reply(ctx),
    "handoff_status": lambda ctx, proposal: handoff_flow.status_entry(ctx),
    "handoff_info": lambda ctx, proposal: handoff_flow.start_entry(ctx),
    "ack": lambda ctx, proposal: menu.not_saved_reply() if "not_saved" in proposal.notes else menu.ack_reply(),
    "ask_search_kind": lambda ctx, proposal: _ask_search_kind(ctx, proposal),
}


def _ask_search_kind(ctx: EventContext, proposal: Proposal) -> Reply:
    """那彰化市呢 → events or shops? The buttons keep the last search's conditions (trial 8 M1)."""
    previous = previous_search(ctx)
    return menu.ask_search_kind_reply(
        proposal.args["area"], no_data="no_data" in proposal.notes,
        diet=previous.dietary_type if previous else None,
        date=previous.date if previous else None, keyword=previous.keyword if previous else None)


def run_text_turn(ctx: EventContext, text: str) -> Reply:
    """One free-text turn with the offline router.

    Args:
        ctx: the verified event; ``ctx.actor`` is set.
        text: the user's message (never logged or stored).
    Returns:
        The rendered reply: a fixed one (FIXED_TOOLS) or a tool's result (run_proposal).
    """
    snapshot = _turn_snapshot_or_none(ctx)
    token = _TURN_SNAPSHOT.set(snapshot)
    try:
        proposal = route(text, [event.title for event in snapshot.events] if snapshot else None)
        return _answer(ctx, proposal)
    finally:
        _TURN_SNAPSHOT.reset(token)


def _answer(ctx: EventContext, proposal: Proposal) -> Reply:
    fixed = FIXED_TOOLS.get(proposal.tool)
    if fixed is None:
        return run_proposal(ctx, proposal)
    reply = fixed(ctx, proposal)
    record_turn(ctx.store, {
        "user_hash": hash_user(ctx.actor.user_id) if ctx.actor else None, "source": proposal.source,
        "tool": proposal.tool, "proposed_args": audit_args(proposal), "effective_args": None, "origin": None,
        "revision": None, "revision_after": None, "result_ids": [], "status": "fixed",
    }, tenant_id=ctx.settings.tenant_id, webhook_event_id=ctx.webhook_event_id, now=ctx.now)
    log("INFO", "turn", tool=proposal.tool, source=proposal.source, status="fixed",
        user=hash_user(ctx.actor.user_id) if ctx.actor else None)
    return reply


def resolve_date(spec: DateSpec | None, ctx: EventContext) -> str | None:
    """A date (shared.turn.dates.read_date, a postback's or the model's) → the events search's
    "YYYY-MM-DD/YYYY-MM-DD" argument.

    "Today" is ``ctx.now``'s Asia/Taipei calendar day (shared.turn.datespec: weeks start on Monday;
    a day, month or holiday without a year is its nearest occurrence, 11/22 on 2026-12-01 is
    2026-11-22, past).

    Args:
        spec: the date, or None (every date).
        ctx: the event; only ``ctx.now`` (aware) is read.
    Returns:
        The range (Asia/Taipei, end exclusive), or None.
    Raises:
        InvalidDateRange: the date is Unreadable or names no real day (12/32, 2/30, 13月);
            run_proposal answers 「我看不懂這個日期」 with choices.
    """
    if spec is None:
        return None
    try:
        start, end = spec.resolve(_today(ctx))
    except UnreadableDate as exc:
        raise InvalidDateRange(str(exc)) from exc
    return f"{start.isoformat()}/{end.isoformat()}"


def _today(ctx: EventContext) -> date:
    """The turn's Asia/Taipei calendar day."""
    return ctx.now.astimezone(TAIPEI).date()


#: The events snapshot of the text turn under way (``run_text_turn``): read once, for the router's
#: event titles and the events search alike, so one turn makes one snapshot read and answers from one
#: version. None outside a text turn (the agent's tools) or when it could not be read.
_TURN_SNAPSHOT: contextvars.ContextVar[Any] = contextvars.ContextVar("turn_events_snapshot", default=None)


def _turn_snapshot_or_none(ctx: EventContext):
    """The current events snapshot (``load_current_snapshot``: one store read; a new version's parts
    parsed once per process), or None when it cannot be read: then the router reads named events with
    its demo titles (trial 7, F1) and the events search loads, and reports, the snapshot itself."""
    try:
        return load_current_snapshot(ctx.store)
    except Exception as exc:  # noqa: BLE001 - titles only sharpen the reading; the turn goes on without them
        log("WARNING", "event titles unavailable", error=exc.__class__.__name__)
        return None


def events_snapshot_args(ctx: EventContext) -> dict[str, Any]:
    """The events search's snapshot arguments for this turn: the store's newest real snapshot (the
    demo one only when none exists; in a text turn, the one ``run_text_turn`` already read) and the
    age after which it is said to be out of date."""
    return {"snapshot_loader": lambda: _TURN_SNAPSHOT.get() or load_current_snapshot(ctx.store),
            "stale_after_seconds": ctx.settings.events_stale_after_seconds}


def takes_diet(proposal: Proposal) -> bool:
    """True for proposals whose tool has a ``dietary_type`` (place searches and their picker)."""
    return proposal.tool == "search_local_places" or (
        proposal.tool == "needs_area" and proposal.args.get("kind") != "events")


def execute(ctx: EventContext, proposal: Proposal, diet: EffectiveDiet | None = None,
            tools: TurnTools = DEFAULT_TOOLS) -> dict[str, Any] | None:
    """Validate and run one proposed read-only tool; None for the help menu.

    Args:
        ctx: the event (``now``).
        proposal: the tool and its proposed arguments.
        diet: the effective diet for place tools (default: the proposed one, as this turn's).
        tools: the tool functions.
    Raises:
        UnknownArea, UnknownDietaryType, InvalidDateRange: a proposed argument is not valid.
    """
    args = proposal.args
    dietary_type = diet.dietary_type if diet is not None else args.get("dietary_type")
    if proposal.tool == "search_local_places":
        return tools.places(args.get("area"), dietary_type, args.get("keyword"), now=ctx.now)
    if proposal.tool == "search_local_events":
        return _events_search(ctx, proposal, tools)
    if proposal.tool == "find_place":  # a shop by name: every diet, so a remembered one never hides it
        return _find_place(ctx, args.get("name"), args.get("area"), tools)
    if proposal.tool == "needs_area":
        if args.get("kind") == "events":
            # the dates and topic read this turn ride on the picker's buttons (過年 彰化有什麼活動)
            return tools.events(resolve_date(args.get("date"), ctx), _NO_TOWNSHIP, args.get("keyword"), now=ctx.now,
                                **events_snapshot_args(ctx))
        return tools.places(_NO_TOWNSHIP, dietary_type, None, now=ctx.now)
    return None


def _find_place(ctx: EventContext, name: str | None, area: str | None, tools: TurnTools) -> dict[str, Any]:
    """A shop by name in its township. With no township said (a model's call: it cannot know where the
    shop is; the router reads it from the catalog) the name is looked up in every township first, and
    when the shops found are all in one township, that township's search is the answer, as the
    router's would be; else the every-township result is (none found, or namesakes in several)."""
    if not area:
        found = tools.places(WHOLE_COUNTY, "any", name, now=ctx.now)
        areas = {place.get("area") for place in found.get("places") or []}
        if found.get("status") != "ok" or len(areas) != 1:
            return found
        area = areas.pop()
    return tools.places(area, "any", name, now=ctx.now)


#: How far back a keyword search with no date looks when nothing coming matches (八卦山健走還有沒有:
#: the one that ended on 11/22 is shown as ended rather than "nothing"). Days.
PAST_LOOKBACK_DAYS = 90


def _events_search(ctx: EventContext, proposal: Proposal, tools: TurnTools) -> dict[str, Any]:
    """The events search of a proposal, with two narrow refinements (trial 4 finding 8 and minor):

    - a title hint (``title:冬季蔬果`` from 冬季蔬果市集要帶什麼) narrows the keyword when some event's
      title or tags hold it; otherwise the plain search runs (a hint never empties a result);
    - a keyword search with no date that finds nothing coming stays ``no_match`` (nothing is listed as
      if it were coming), but looks back PAST_LOOKBACK_DAYS days so the reply can name an event that
      just ended (``ended``: [(title, "YYYY-MM-DD")] in the result).
    A narrowed result's ``carry`` holds the date and keyword the next-step buttons keep (the user's,
    not the hint's).
    """
    args = proposal.args
    date_range = resolve_date(args.get("date"), ctx)
    keyword = args.get("keyword")
    title = next((note.partition(":")[2] for note in proposal.notes if note.startswith("title:")), None)
    search = functools.partial(tools.events, area=args.get("area"), now=ctx.now, **events_snapshot_args(ctx))
    if title:
        narrowed = search(date_range, keyword=f"{keyword or ''} {title}".strip())
        if narrowed.get("status") == "ok":
            return {**narrowed, "carry": {"date": narrowed["query"]["date"], "keyword": keyword}}
    result = _only_the_days_asked(search(date_range, keyword=keyword), args.get("date"), ctx)
    if result.get("status") == "no_match" and date_range is None and keyword:
        today = ctx.now.astimezone(TAIPEI).date()
        past = search(f"{(today - timedelta(days=PAST_LOOKBACK_DAYS)).isoformat()}/{today.isoformat()}",
                      keyword=keyword)
        if past.get("status") == "ok":
            return {**result, "ended": [(event["title"], event["date"]) for event in past["events"]]}
    return result


def _only_the_days_asked(result: dict[str, Any], spec: DateSpec | None, ctx: EventContext) -> dict[str, Any]:
    """Two dates apart (聖誕節跟跨年, 元旦跟春節: Both) are searched as one range covering both; the
    events that run on neither are left out here, and the reply says so (``between_left_out``); the
    result's ``date_spans`` (``start/end`` each) make the reply name the two dates, not the range."""
    if not isinstance(spec, Both) or result.get("status") not in ("ok", "no_match"):
        return result
    spans = spec.spans(_today(ctx))
    if spans[1][0] <= spans[0][1]:
        return result  # touching or overlapping (後天跟大後天): the range is exactly what was asked
    # the buttons' postbacks ask the same two dates again (the boundary encoding: shared.turn.datespec)
    carry = {"date": spec.encode(), "keyword": result["query"].get("keyword")}
    # the reply names the two dates apart (12/2（三）、12/5（六）), never the range between (trial 7, F10)
    asked = {"date_spans": [f"{start.isoformat()}/{end.isoformat()}" for start, end in spans]}
    if result.get("status") == "no_match":
        return {**result, "carry": carry, **asked}
    kept = [event for event in result["events"]
            if any(start.isoformat() <= event["last_day"] and event["date"] < end.isoformat() for start, end in spans)]
    if not kept:
        return {**result, "status": "no_match", "events": [], "total": 0, "between_left_out": True, "carry": carry,
                **asked}
    return {**result, "events": kept, "total": len(kept), "between_left_out": True, "carry": carry, **asked}


def snapshot_preference(ctx: EventContext) -> PreferenceSnapshot | None:
    """The actor's preference, or None when it cannot be read (the turn then runs without it).

    In a group or room (``ctx.shared_chat``) nothing is remembered as far as the turn knows: the
    sender's consented diet is never applied or named where others read it (DESIGN §6).
    """
    if ctx.actor is None or ctx.shared_chat:
        return PreferenceSnapshot()
    try:
        return read_preference(ctx.store, ctx.actor)
    except StoreError as exc:
        log("WARNING", "preference snapshot failed", error=exc.__class__.__name__)
        return None


def _unrecorded_diet(proposal: Proposal) -> str | None:
    """The finer diet word the catalog does not record (五辛素), when the message said one."""
    for note in proposal.notes:
        if note.startswith("unrecorded_diet:"):
            return note.partition(":")[2]
    return None


#: The five pungent plants (五辛) as residents name them; the catalog records none of them.
_PUNGENT_PLANTS = ("五辛", "蔥", "蒜", "韭", "蕎", "興渠")
#: The finer types the catalog does not record (shared.diets.UNRECORDED_DIETS).
_UNRECORDED_TYPES = frozenset(word for word, _ in UNRECORDED_DIETS)


def _unrecorded_words(unrecorded: str) -> list[str]:
    """What the catalog does not record, one phrase per condition said (鍋邊素、不吃蔥蒜 → two)."""
    words = []
    for word in unrecorded.split("、"):
        if word.endswith("素") or word in _UNRECORDED_TYPES:  # a finer type: 鍋邊素, 五辛素, 可以吃蛋
            words.append(f"「{word}」這種細分")
        elif any(plant in word for plant in _PUNGENT_PLANTS):  # 不吃蔥蒜
            words.append(f"餐點有沒有蔥、蒜、韭菜、洋蔥這些五辛（你說的「{word}」）")
        else:  # 不喝牛奶, 不吃辣, 對花生過敏
            words.append(f"餐點是否符合你說的「{word}」")
    return words


def origin_note(diet: EffectiveDiet, snapshot: PreferenceSnapshot | None, unrecorded: str | None = None) -> str | None:
    """Say where a place search's diet came from, or None when there is nothing to say.

    「依你同意記住的偏好：蔬食」 when the memory filled it; 「這次依你說的條件：不限素別」 when the
    user stated it (and, if a different value is remembered, that it was not applied or changed).
    A finer type the catalog does not record (五辛素, 鍋邊素) is named as not recorded, with the
    condition actually searched; it is never called 「你說的條件」.
    Source: DESIGN §6 (the word 偏好), §7; issue 9 item 5.
    """
    if diet.origin == CONSENTED_MEMORY:
        return (f"依你同意記住的偏好：{diet_label(diet.dietary_type)}。\n"
                "（這次想換條件，直接說就好，例如「花壇不限素別」；說「我的偏好」可以查看、更正或忘記。）")
    if diet.origin == THIS_TURN:
        if unrecorded:
            searched = ("不限素別查詢" if diet.dietary_type == "any"
                        else f"先用最接近的「{diet_label(diet.dietary_type)}」查詢"
                        + ("（有任何素食品項的店家）" if diet.dietary_type == "vegetarian" else ""))
            note = f"店家資料沒有記錄{'，也沒有記錄'.join(_unrecorded_words(unrecorded))}，這次{searched}，點餐前請向店家確認。"
        else:
            note = f"這次依你說的條件：{diet_label(diet.dietary_type)}。"
        stored = snapshot.dietary_type if snapshot else None
        if stored and stored != diet.dietary_type:
            note += f"\n你記住的偏好「{diet_label(stored)}」這次沒有套用，也沒有改變。"
        return note
    if snapshot is None:
        return "這次暫時讀不到你記住的偏好，所以先不限素別查詢。"
    return None


@dataclass(frozen=True)
class SecondAsk:
    """Another ask of the same kind as the one searched (a ``second_events`` / ``second_places`` note).

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


def _second_asks(proposal: Proposal, result: dict[str, Any] | None) -> list[SecondAsk]:
    """The other asks of the proposal's kind (shared.turn.router._same_kind_asks), each named and offered
    as a button; an ask whose date cannot be resolved is left out. Source: trial 8 finding F3."""
    asks = []
    for note in proposal.notes:
        read = second_ask(note)
        if read is None:
            continue
        kind, said = read
        area = said.get("area")
        if kind == "events":
            date_range, short_date = None, ""
            if said.get("date"):
                try:
                    start, end = said["date"].resolve(_today_of(result))
                except UnreadableDate:
                    continue
                date_range = f"{start.isoformat()}/{end.isoformat()}"
                last = end - timedelta(days=1)
                short_date = f"{start.month}/{start.day}" + (f"～{last.month}/{last.day}" if last != start else "")
            keyword = said.get("keyword")
            words = scope_words({"area": area, "date": date_range, "keyword": keyword})
            label = limits.fit(short_date + _short_area(area) + (keyword.replace("|", "或").replace(" ", "")
                                                               if keyword else "活動"), limits.ACTION_LABEL)
            data = (f"events:area={area}" if area else ALL_TOWNSHIPS_DATA) + carried_query(date_range, keyword)
            asks.append(SecondAsk(words, checked_postback(label, data, limits.fit(f"查{words}的活動",
                                                                                   limits.DISPLAY_TEXT))))
        else:
            diet = said.get("diet")
            what = f"{diet_label(diet)}店家" if diet else "蔬食店家"
            label = limits.fit(_short_area(area) + what if area else what, limits.ACTION_LABEL)
            action: PostbackAction | MessageAction = (area_postback("places", area, diet=diet, label=label) if area
                                                      else MessageAction(label=label, text=what))
            asks.append(SecondAsk(f"{area}的{what}" if area else what, action))
    return asks


def _first_ask_words(proposal: Proposal, result: dict[str, Any] | None) -> str:
    """The ask the reply answered, in words, beside another ask of its kind (see _second_asks)."""
    query = (result or {}).get("query") or {}
    if proposal.tool == "search_local_events" and query:
        return scope_words(query, (result or {}).get("date_spans")) + "的活動"
    what = f"{diet_label(query.get('dietary_type') or proposal.args.get('dietary_type'))}店家"
    if proposal.tool == "search_local_places" and query.get("area"):
        return f"{query['area']}的{what}"
    return f"{what}（請先選鄉鎮）" if proposal.args.get("kind") != "events" else "活動（請先選鄉鎮）"


def _note_lines(proposal: Proposal, result: dict[str, Any] | None) -> list[str]:
    """What the reply says besides the result: limits asked beside it, townships not searched."""
    lines = menu.limit_lines([note for note in proposal.notes if ":" not in note],
                             beside_events=proposal.tool == "search_local_events")
    seconds = _second_asks(proposal, result)
    if seconds:  # 聖誕節員林有活動嗎？還有12/5到12/7全彰化的市集: which one is answered, and the other's button
        lines.append(f"你問了{'兩三'[len(seconds) - 1]}件事，我一次查一件。這次先查：{_first_ask_words(proposal, result)}。")
        lines += [f"另一件：{ask.words}，請點下方的「{ask.action.label}」。" for ask in seconds]
    for note in proposal.notes:
        kind, _, value = note.partition(":")
        if kind == "other_areas" and value:
            searched = (result or {}).get("query", {}).get("area") or ""
            lines.append(f"你問了不只一個鄉鎮，我一次查一個：先列出{searched}；{value.replace(',', '、')}請點下方的按鈕。")
        elif kind == "unknown_area" and value:
            lines.append(_unknown_area_line(value, proposal, result))
        elif kind == "unrecorded_kind" and value:
            lines.append(f"店家資料沒有記錄店家的類型（你說的「{value}」），這次先列出有素食品項的店家，請先打電話問店家。")
        elif kind == "changhua_as_city":
            lines.append("你說的「彰化」我當作彰化市（想查整個彰化縣，請一次說一個鄉鎮）。")
        elif kind == "other_places" and value:
            lines.append(f"你也問到「{value}」：我一次列一家，請點下方的「{value}」看它的地址和電話。")
        elif kind == "also_places":
            area, _, diet = value.partition("/")
            where = area or "各鄉鎮"
            button = f"「{area}的店家」" if area else "「查蔬食」"
            what = f"{diet_label(diet)}店家" if diet else "蔬食店家"
            having = _shop_areas_without(area)
            if having is not None:  # 員林有沒有純素的店: no shop data there, said now (trial 5 finding 6)
                lines.append(f"你也問了{where}的{what}：這份店家資料目前沒有{area}的店家；"
                             f"有店家資料的鄉鎮是{'、'.join(having)}，可以點下方的按鈕查。")
            else:
                lines.append(f"你也問了{where}的{what}：我一次查一件，先列活動；店家請點下方的{button}。")
        elif kind == "not_saved":  # 我吃奶素 但不要存我的資料喔 彰化市有嗎 (trial 5 finding 10)
            lines.append(_NOT_SAVED_LINE)
        elif kind == "privacy_asked":
            lines.append(_PRIVACY_ASKED_LINE)
        elif kind == "also_events":
            area = value.partition("/")[0]
            button = f"「{area}的活動」" if area else "「查活動」"
            lines.append(f"你也問了{area or '各鄉鎮'}的活動：我一次查一件，先列店家；活動請點下方的{button}。")
    lines += _events_searched_lines(result)
    details = detail_line(proposal.notes, "places" if proposal.tool in ("find_place", "search_local_places")
                          or proposal.args.get("kind") == "places" else "events")
    lines += [details] if details else []  # 要帶水嗎, 可以刷卡嗎: what the data does not record (trial 5)
    lines = _shop_found_lines(proposal, result) + lines
    if "greeted" in proposal.notes:  # 早上好 今天有什麼活動: the greeting answered, then the question
        lines.insert(0, "你好！")
    return lines


#: A no-memory remark beside a search: nothing is kept without the card's consent (not the words
#: 同意記住, which name the card's button). Source: DESIGN §6; trial 5 finding 10.
_NOT_SAVED_LINE = "好的，不會幫你記：只有你在確認卡上自己按下同意，我才會保存一項飲食偏好；沒按就什麼都不存。這次只照你說的查。"
#: A privacy question beside a search (你們會存我的個資嗎 花壇有素食嗎). Source: DESIGN §6; trial 5 finding 10.
#: True to the store: the message's text is dropped once it is answered (shared.inbox.finished).
_PRIVACY_ASKED_LINE = ("飲食偏好只有你在確認卡上自己按下同意才會保存；查詢只留條件和結果編號（30 天）；"
                       "你傳的訊息內容回覆後就刪掉。想看或刪除，請點「我的偏好」。")


def _is_events(proposal: Proposal) -> bool:
    """An events search, or a township picker asked for events (needs_area with kind=events)."""
    return proposal.tool == "search_local_events" or proposal.args.get("kind") == "events"


def _unknown_area_line(typed: str, proposal: Proposal, result: dict[str, Any] | None) -> str:
    """溪胡 → 「我不認得「溪胡」…你是說「溪湖」嗎？」, and when that township is not among the buttons below
    (``area_choices``: the townships with data), that this data has none there, so nobody looks for
    a button that is not there (trial 8 finding 8)."""
    by_short_name = {name[:-1]: name for name in TOWNSHIPS}
    near = difflib.get_close_matches(typed, list(by_short_name), n=1, cutoff=0.5)
    line = f"我不認得「{typed}」這個地名，彰化縣的鄉鎮裡沒有。"
    if not near:
        return line + "請點下方的鄉鎮，或再輸入一次鄉鎮名稱。"
    township = by_short_name[near[0]]
    choices = (result or {}).get("area_choices")
    if isinstance(choices, list) and choices and township not in choices:
        what = "活動" if _is_events(proposal) else "店家"
        return (line + f"你是說「{near[0]}」嗎？這份資料目前沒有{township}的{what}；"
                f"下方是有{what}資料的鄉鎮，也可以再輸入一次鄉鎮名稱。")
    return line + f"你是說「{near[0]}」嗎？請點下方的鄉鎮，或再輸入一次鄉鎮名稱。"


def _shop_areas_without(area: str) -> list[str] | None:
    """The townships with shop data, when ``area`` is a township that has none; else None (the area has
    shops, no area was named, or the catalog cannot be read)."""
    having = areas_with_places() if area else None
    return having if having and area not in having else None


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
    return _diet_check_lines(proposal, name) + [f"「{name}」在店家資料裡有這些：地址、電話和資料來源（見卡片）。"]


def _shop_name(proposal: Proposal, result: dict[str, Any]) -> str:
    """The named shop as the catalog spells it (john手作 → John手作蔬食: a model's call says the name as the
    resident wrote it; the router's is the catalog's already), when one shop was found; else as asked."""
    places = result.get("places") or []
    return places[0]["name"] if len(places) == 1 else proposal.args.get("name") or ""


def _diet_check_lines(proposal: Proposal, name: str) -> list[str]:
    """Per named shop, whether the catalog lists the diet asked about (和米素食跟john手作 哪間有全素)."""
    diet = next((note.partition(":")[2] for note in proposal.notes if note.startswith("diet_check:")), None)
    if not diet:
        return []
    names = [name] + [note.partition(":")[2] for note in proposal.notes
                                           if note.startswith("other_places:")]
    label = diet_label(diet)
    words = {
        "listed": "店家資料列有{label}的品項（不是每道都是{label}）",
        "not_recorded": "店家資料只記錄「蔬食」，沒有記錄更細的素別，有沒有{label}不知道，請先打電話問店家",
        "not_listed": "店家資料沒有列{label}",
    }
    return [f"「{name}」：{words[state].format(label=label)}。" for name, state in diet_listed(names, diet)]


def _diet_said_beside_shop(proposal: Proposal) -> str | None:
    """The diet said beside a shop name (我吃全素 彰化市john那間有嗎), when it is the user's own to remember:
    offered as 「記住：全素」 like a search's diet; never someone else's or after 不用記 (trial 5 minor)."""
    if proposal.tool != "find_place" or {"diet_of_other", "not_saved"} & set(proposal.notes):
        return None
    return next((note.partition(":")[2] for note in proposal.notes if note.startswith("diet_check:")), None)


def _second_ask_items(proposal: Proposal, result: dict[str, Any] | None) -> list[QuickReplyItem]:
    """Buttons for what the message also asked but the reply did not search: another ask of the same
    kind, another named shop, the shop search beside an events question, the events search beside a
    shop question."""
    items = [QuickReplyItem(action=ask.action) for ask in _second_asks(proposal, result)]
    for note in proposal.notes:
        kind, _, value = note.partition(":")
        if kind == "other_places" and value:
            items.append(QuickReplyItem(action=MessageAction(label=value[:20], text=value)))
        elif kind == "also_places":
            area, _, diet = value.partition("/")
            having = _shop_areas_without(area)
            if having is not None:  # no dead-end button: the townships that have shops, with the diet
                items += [QuickReplyItem(action=area_postback("places", township, diet=diet or None,
                                                              label=f"{township}的店家")) for township in having]
                continue
            items.append(QuickReplyItem(action=area_postback("places", area, diet=diet or None, label=f"{area}的店家")
                                        if area else MessageAction(label="查蔬食", text="查蔬食")))
        elif kind == "privacy_asked":
            items.append(QuickReplyItem(action=MessageAction(label="我的偏好", text="我的偏好")))
        elif kind == "also_events":
            area, _, when = value.partition("/")
            if area:
                data = f"events:area={area}" + carried_query(when or None)
                items.append(QuickReplyItem(action=checked_postback(f"{area}的活動", data, f"查{area}的活動")))
            else:
                items.append(QuickReplyItem(action=MessageAction(label="查活動", text="查活動")))
    return items


def _put_first(messages: list[Any], items: list[QuickReplyItem]) -> None:
    """Put ``items`` first in the last text message's quick replies (same labels dropped, ≤ 13)."""
    if not items or not messages or not isinstance(messages[-1], TextMessage):
        return
    last = messages[-1]
    labels = {item.action.label for item in items}
    rest = [item for item in (last.quick_reply.items if last.quick_reply else []) if item.action.label not in labels]
    messages[-1] = TextMessage(text=last.text, quick_reply=QuickReply(items=(items + rest)[:QUICK_REPLY_MAX_ITEMS]))


def _revision_changed_reply() -> Reply:
    return Reply([TextMessage(text="你的飲食偏好剛剛有變更，為了不用舊的條件，這次的結果先不顯示。請再問一次。")])


def audit_args(proposal: Proposal) -> dict[str, Any]:
    """The proposal's arguments as the audit record holds them: a date in its boundary encoding
    (shared.turn.datespec), every other argument as it is."""
    return {name: encoded(value) for name, value in proposal.args.items()}


def _result_ids(result: dict[str, Any] | None) -> list[str]:
    items = (result or {}).get("places") or (result or {}).get("events") or []
    return [item.get("id") for item in items if isinstance(item, dict)]


@dataclass
class TurnStart:
    """What a turn read before routing: the preference snapshot and when the turn began.

    Attributes:
        snapshot: the consented preference with its revision; None when it could not be read
            (or was not needed: the proposal takes no diet).
        started_monotonic: ``time.monotonic()`` at the start (for ``timings_ms``).
        snapshot_ms: how long the snapshot read took, in milliseconds.
    """

    snapshot: PreferenceSnapshot | None
    started_monotonic: float
    snapshot_ms: float


def start_turn(ctx: EventContext, *, read_snapshot: bool) -> TurnStart:
    """Begin a turn: note the time and, when asked, snapshot the preference (DESIGN §7 step 1)."""
    started = time.monotonic()
    snapshot = snapshot_preference(ctx) if read_snapshot else None
    return TurnStart(snapshot, started, round((time.monotonic() - started) * 1000, 1))


@dataclass
class ToolRun:
    """One executed (or refused) read-only tool call of a turn.

    Attributes:
        proposal: the proposed call, as the router or the model proposed it.
        diet: the effective diet (place tools only).
        result: the tool's result dict; None for the help menu and refused calls.
        status: the result's ``status``, or ``help``, ``invalid_argument``, ``memory_card``.
        reply: a reply already chosen while running (a kind answer to a bad argument, a consent
            card), or None to render ``result`` with the fixed templates.
        tool_ms: how long the tool ran, in milliseconds.
    """

    proposal: Proposal
    diet: EffectiveDiet | None
    result: dict[str, Any] | None
    status: str
    reply: Reply | None
    tool_ms: float


def run_tool(ctx: EventContext, proposal: Proposal, snapshot: PreferenceSnapshot | None,
             tools: TurnTools = DEFAULT_TOOLS) -> ToolRun:
    """Resolve the effective diet and run the one read-only tool (DESIGN §7 steps 3–4).

    Never raises for a bad argument: an unknown area, diet or date gets a kind reply
    (``invalid_argument``). A proposal of ``FIXED_TOOLS`` (a greeting, a limit, the request status …)
    gets its fixed reply (status ``fixed``), as in a text turn; ``propose_dietary_memory`` renders the
    consent card, or in a group or room says it is one-to-one only (``one_to_one``). None of them writes.

    Args:
        ctx: the verified event.
        proposal: the proposed call (router, fixed entry, postback or model).
        snapshot: the preference read at the start of the turn (or None).
        tools: the read-only tool functions.
    """
    started = time.monotonic()
    diet = None
    reply = None
    result = None
    try:
        fixed = FIXED_TOOLS.get(proposal.tool)
        if fixed is not None:  # the model's greeting, limit, status …: the text turn's own fixed reply
            reply, status = fixed(ctx, proposal), "fixed"
        elif proposal.tool == "propose_dietary_memory":  # one-to-one only, as the 幫我記住 hook (DESIGN §6)
            reply, status = ((refusals.one_to_one_reply(ctx.settings), "one_to_one") if ctx.shared_chat
                             else (offer_card(ctx, proposal.args.get("dietary_type")), "memory_card"))
        else:
            diet = resolve_diet(proposal.args.get("dietary_type"), snapshot,
                                generic="generic_diet" in proposal.notes) if takes_diet(proposal) else None
            result = execute(ctx, proposal, diet, tools)
            status = "help" if result is None else result.get("status")
    except (UnknownArea, UnknownDietaryType, InvalidDateRange) as exc:
        result, reply, status = None, _invalid_argument_reply(exc, proposal), "invalid_argument"
    return ToolRun(proposal, diet, result, status, reply, round((time.monotonic() - started) * 1000, 1))


def finish_turn(ctx: EventContext, start: TurnStart, run: ToolRun, *,
                audit_extra: dict[str, Any] | None = None) -> Reply:
    """Check the revision again, render with the fixed templates, write the audit record (steps 5–6).

    Args:
        ctx: the verified event.
        start: from start_turn.
        run: from run_tool.
        audit_extra: more fields for the audit record (the model path adds ``model``).
    Returns:
        The reply to send.
    """
    proposal, snapshot, diet, result = run.proposal, start.snapshot, run.diet, run.result
    personal = takes_diet(proposal)
    status, reply = run.status, run.reply
    record: dict[str, Any] = {
        "user_hash": hash_user(ctx.actor.user_id) if ctx.actor else None, "source": proposal.source,
        "tool": proposal.tool, "proposed_args": audit_args(proposal), "effective_args": None,
        "origin": diet.origin if diet is not None else None,
        "revision": snapshot.revision if snapshot else None, "revision_after": None, "result_ids": [],
    }
    if result is not None:
        record.update(effective_args=result.get("query"), result_ids=_result_ids(result))
    if personal and snapshot is not None and result is not None:
        after = snapshot_preference(ctx)
        record["revision_after"] = after.revision if after else None
        if diet is not None and diet.origin == CONSENTED_MEMORY and (after is None or after.revision != snapshot.revision):
            status, reply = "revision_changed", _revision_changed_reply()
            record["result_ids"] = []
            if isinstance(record.get("effective_args"), dict):  # perhaps forgotten meanwhile: keep no diet
                record["effective_args"] = {**record["effective_args"], "dietary_type": None}
    if reply is None:
        reply = _render(proposal, result, diet, snapshot, offer_memory=not ctx.shared_chat)
    record.update(audit_extra or {})
    record.update(status=status, timings_ms={"snapshot": start.snapshot_ms, "tool": run.tool_ms,
                                             "total": round((time.monotonic() - start.started_monotonic) * 1000, 1)})
    _audit(ctx, record)
    return reply


def _audit(ctx: EventContext, record: dict[str, Any]) -> None:
    record_turn(ctx.store, record, tenant_id=ctx.settings.tenant_id, webhook_event_id=ctx.webhook_event_id,
                now=ctx.now)
    log("INFO", "turn", tool=record.get("tool"), source=record.get("source"), status=record.get("status"),
        origin=record.get("origin"), revision=record.get("revision"), reason=record.get("reason"),
        user=record.get("user_hash"))


def run_proposal(ctx: EventContext, proposal: Proposal, *, tools: TurnTools = DEFAULT_TOOLS) -> Reply:
    """Execute a proposal, apply consented memory where the diet is left open, render, audit.

    Args:
        ctx: the verified event.
        proposal: from the offline router, a fixed entry or a postback; holds no stored value.
        tools: the read-only tools (tests inject wrappers).
    Returns:
        The reply; bad arguments get a kind answer, not an error.
    """
    # a diet said beside a shop name is offered to remember only when it is not the one remembered
    start = start_turn(ctx, read_snapshot=takes_diet(proposal) or _diet_said_beside_shop(proposal) is not None)
    return finish_turn(ctx, start, run_tool(ctx, proposal, start.snapshot, tools))


def unanswered_turn(ctx: EventContext, start: TurnStart, *, source: str, reason: str, reply: Reply,
                    audit_extra: dict[str, Any] | None = None) -> Reply:
    """Audit a turn that ran no tool (the model failed or a proposed call was refused) and return ``reply``.

    Args:
        ctx: the verified event.
        start: from start_turn.
        source: ``model``.
        reason: why no tool ran: ``model_timeout``, ``upstream_unavailable``, ``quota``,
            ``bad_tool_call``, ``TOOL_SESSION_MISMATCH``, ``TOOL_CONTEXT_REVISION_MISMATCH``.
        reply: the honest reply chosen by the caller.
        audit_extra: more fields for the audit record.
    Source: issue 10 (failure is honest: the audit names the reason); DESIGN §7.
    """
    snapshot = start.snapshot
    record: dict[str, Any] = {
        "user_hash": hash_user(ctx.actor.user_id) if ctx.actor else None, "source": source, "tool": None,
        "proposed_args": None, "effective_args": None, "origin": None,
        "revision": snapshot.revision if snapshot else None, "revision_after": None, "result_ids": [],
        **(audit_extra or {}),
        "status": "not_answered", "reason": reason,
        "timings_ms": {"snapshot": start.snapshot_ms, "tool": 0.0,
                       "total": round((time.monotonic() - start.started_monotonic) * 1000, 1)},
    }
    _audit(ctx, record)
    return reply


def _date_choices(area: str | None, keyword: str | None = None) -> QuickReply:
    """Date choices for 「我看不懂這個日期」, keeping the township and the topic the user asked about."""
    where = (f"&area={area}" if area else "") + carried_query(keyword=keyword)
    choices: tuple[tuple[str, DateSpec], ...] = (
        ("今天", RelativeDay(0)), ("明天", RelativeDay(1)), ("這週末", Week(0, weekend=True)),
        ("下週末", Week(1, weekend=True)), ("這個月", RelativeMonth(0)), ("下個月", RelativeMonth(1)))
    items = [QuickReplyItem(action=checked_postback(label, f"events:date={spec.encode()}{where}", f"查{label}的活動"))
             for label, spec in choices]
    items.append(QuickReplyItem(action=checked_postback("不限日期", f"events:scope=all{where}", "查所有日期的活動")))
    return QuickReply(items=items)


def _invalid_argument_reply(exc: Exception, proposal: Proposal) -> Reply:
    if isinstance(exc, UnknownArea):
        return help_reply("我找不到這個地區，請說彰化縣的鄉鎮名稱，例如「花壇」或「員林市」。")
    if isinstance(exc, UnknownDietaryType):
        return help_reply("我看不懂這個飲食條件，可以說「蔬食」、「全素」、「蛋奶素」、「奶素」或「不限」。")
    area = proposal.args.get("area")
    try:
        area = normalize_area(area) if area else None
    except UnknownArea:
        area = None
    return menu.unreadable_date_reply(_date_choices(area, proposal.args.get("keyword")))


def _attach(messages: list[Any], quick_reply: QuickReply | None) -> None:
    """Put next-step quick replies on the last text message, unless it already has some."""
    if quick_reply is None or not messages:
        return
    last = messages[-1]
    if isinstance(last, TextMessage) and last.quick_reply is None:
        messages[-1] = TextMessage(text=last.text, quick_reply=quick_reply)


def _offer_on_picker(messages: list[Any], stated: str | None, remembered: str | None) -> None:
    """A statement of one's own diet with no township (我吃全素, 我是素食者: router note ``own_diet``):
    the shop picker for that diet stays the answer, and its last text gains one line and a
    「記住：全素」 button after the townships (the button asks for the consent card; nothing is
    stored here). Nothing is added when ``remember_item`` offers nothing (not savable, already
    remembered, 蔬食 over a finer type) or the last message is not the picker's text.

    Source: DESIGN §6 (a card only on request; nothing stored without consent); trial 8 finding
    (素食 / 我吃素 got a consent card and no way to find food).
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


def _render(proposal: Proposal, result: dict[str, Any] | None, diet: EffectiveDiet | None,
            snapshot: PreferenceSnapshot | None, *, offer_memory: bool = True) -> Reply:
    if result is None:
        return help_reply()
    is_events = _is_events(proposal)
    stated = diet.dietary_type if diet is not None and diet.origin == THIS_TURN else None
    offered = stated or _diet_said_beside_shop(proposal)
    vague = bool(proposal.args.get("vague"))
    vague_words = tuple(proposal.args.get("vague_words") or ())
    status = result.get("status")
    messages = list(render_events(result, vague=vague, vague_words=vague_words) if is_events
                    else render_places(result, stated_diet=stated, vague=vague, vague_words=vague_words,
                                       said=_unrecorded_diet(proposal) if stated else None))
    asked = tuple(area for note in proposal.notes if note.startswith("other_areas:")
                  for area in note.partition(":")[2].split(",") if area)
    unrecorded = _unrecorded_diet(proposal) if stated else None
    if status == "no_match" and asked and messages and isinstance(messages[-1], TextMessage):
        last = messages[-1]
        messages[-1] = TextMessage(text=last.text, quick_reply=asked_first(
            last.quick_reply, result, asked, kind="events" if is_events else "places", diet=stated, said=unrecorded))
    if status == "ok":
        if is_events:
            _attach(messages, events_next_steps(result, asked=asked))
        else:
            remembered = snapshot.dietary_type if snapshot else None
            # someone else's diet (我媽媽吃全素) is searched and kept on the buttons, never offered to remember;
            # a finer diet not recorded (鍋邊素) is kept on the buttons too, and never offered either
            _attach(messages, places_next_steps(result, stated_diet=offered, remembered=remembered, asked=asked,
                                                offer_memory=offer_memory and "diet_of_other" not in proposal.notes
                                                and "not_saved" not in proposal.notes,
                                                said=unrecorded))
    if status == "needs_area" and not is_events and offer_memory and "own_diet" in proposal.notes and \
            not {"diet_of_other", "not_saved"} & set(proposal.notes):
        _offer_on_picker(messages, stated, snapshot.dietary_type if snapshot else None)
    _put_first(messages, _second_ask_items(proposal, result))
    lines = _note_lines(proposal, result)
    if diet is not None and status in ("ok", "no_match"):
        note = origin_note(diet, snapshot, _unrecorded_diet(proposal))
        if note:
            lines.append(note)
    if lines:
        messages.insert(0, TextMessage(text="\n".join(lines)))
    return Reply(messages)
