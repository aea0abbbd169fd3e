"""The turn engine: route a message, run at most one read-only tool, render with fixed templates
(docs/design.md §7). Python validates every proposed argument; the router or model only proposes.

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
import functools
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, timedelta
from enum import StrEnum
from typing import Any

from shared.areas import WHOLE_COUNTY, UnknownArea
from shared.audit import record_turn
from shared.clock import TAIPEI
from shared.context import EventContext, Reply
from shared.events.search import InvalidDateRange, search_local_events
from shared.events.snapshots import load_current_snapshot
from shared.handoff import flow as handoff_flow
from shared.logs import hash_user, log
from shared.memory.flow import offer_card
from shared.memory.store import PreferenceSnapshot, read_preference
from shared.places.search import UnknownDietaryType, search_local_places
from shared.replies import menu, refusals
from shared.store import StoreError
from shared.text import reading_form
from shared.turn.ask import EventsSearch, Flag, ItemRef, PlacesSearch, PrivacyTopic
from shared.turn.cannot_help import limits_with_details
from shared.turn.conversation import load_conversation
from shared.turn.datespec import Both, DateSpec, UnreadableDate, encoded
from shared.turn.diet_origin import CONSENTED_MEMORY, EffectiveDiet, resolve_diet
from shared.turn.follow_up import remember_search, resolve_follow_up
from shared.turn.item_answer import answer_item
from shared.turn.near_me import kept_location_answer
from shared.turn.reading import judge
from shared.turn.router import Proposal, route
from shared.turn.rules.items import ITEM_TOOL, bare_detail_ref
from shared.turn.wording import (
    PAST_LOOKBACK_DAYS,
    diet_said_beside_shop,
    invalid_argument_reply,
    render,
    revision_changed_reply,
    title_hint,
)

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


#: Proposals answered with a fixed reply, no tool.
FIXED_TOOLS: dict[str, Callable[[EventContext, Proposal], Reply]] = {
    "greeting": lambda ctx, proposal: menu.greeting_reply(),
    "thanks": lambda ctx, proposal: menu.thanks_reply(),
    "show_limits": lambda ctx, proposal: limits_with_details(proposal.args.get("kinds") or [], proposal.notes),
    "privacy_info": lambda ctx, proposal: menu.privacy_reply(
        ctx, forget=proposal.args.get("topic") == PrivacyTopic.FORGET_MY_DIET,
        sharing=proposal.args.get("topic") == PrivacyTopic.WHO_SEES_MY_DATA),
    "did_you_mean": lambda ctx, proposal: menu.did_you_mean_reply(proposal.args["name"], proposal.args["text"],
                                                                  choices=proposal.args.get("choices"),
                                                                  typed=proposal.args.get("typed")),
    "handoff_cancel_help": lambda ctx, proposal: handoff_flow.cancel_help_entry(ctx),
    "handoff_status": lambda ctx, proposal: handoff_flow.status_entry(ctx, code=proposal.args.get("code")),
    "handoff_info": lambda ctx, proposal: handoff_flow.start_entry(ctx),
    "ack": lambda ctx, proposal: menu.not_saved_reply() if Flag.NOT_SAVED in proposal.notes else menu.ack_reply(),
    "ask_search_kind": lambda ctx, proposal: _ask_search_kind(ctx, proposal),
}


def _ask_search_kind(ctx: EventContext, proposal: Proposal) -> Reply:
    """那彰化市呢 → events or shops? The buttons keep the conditions of the last search in this chat's
    conversation state (shared.turn.conversation), when there is one."""
    conversation = load_conversation(ctx)
    last = conversation.last_ask if conversation is not None else None
    events = last if isinstance(last, EventsSearch) else None
    return menu.ask_search_kind_reply(
        proposal.args["area"], no_data=bool(proposal.args.get("no_data")),
        diet=last.diet if isinstance(last, PlacesSearch) and last.diet != "any" else None,
        date=_kept_range(events, ctx), keyword=events.keyword if events else None)


def _kept_range(search: EventsSearch | None, ctx: EventContext) -> str | None:
    """The days of a kept events search as the events search's range argument, or None."""
    try:
        return resolve_date(search.date, ctx) if search is not None else None
    except InvalidDateRange:
        return None


def _about_the_item(ctx: EventContext, text: str, proposal: Proposal) -> Proposal:
    """A bare question (幾點開始, 要錢嗎, 在哪裡) while the conversation state lists items: about the item
    (the one listed, or the one last asked about, else which one?), answered from its record
    (shared.turn.item_answer), never as a shop's hours or price. Without a listed state: ``proposal``."""
    if proposal.tool == ITEM_TOOL:
        return proposal
    ref = bare_detail_ref(reading_form(text))
    if ref is None:
        return proposal
    conversation = load_conversation(ctx)
    if conversation is None or not conversation.items:
        return proposal
    return Proposal(ITEM_TOOL, {"ref": ref}, proposal.source)


def run_text_turn(ctx: EventContext, text: str, *, defer_incomplete: bool = False) -> Reply:
    """One free-text turn with the offline router.

    Args:
        ctx: the verified event; ``ctx.actor`` is set.
        text: the user's message (never logged or stored).
        defer_incomplete: the router-first webhook (``LOCAL_READER=router_first``): a message the router
            does not read completely (shared.turn.reading) is not answered here but handed to the model
            (``Reply(defer=True)``); nothing is recorded for it.
    Returns:
        The rendered reply: a fixed one (FIXED_TOOLS) or a tool's result (run_proposal).
    """
    snapshot = _turn_snapshot_or_none(ctx)
    token = _TURN_SNAPSHOT.set(snapshot)
    try:
        titles = _titles(snapshot)
        proposal = _read(ctx, text, titles)
        if defer_incomplete:
            reading = judge(text, proposal, titles)
            if not reading.complete:
                log("INFO", "turn deferred to the model", why=reading.why_incomplete)
                return Reply(defer=True)
        return _answer(ctx, proposal)
    finally:
        _TURN_SNAPSHOT.reset(token)


def router_first_turn(ctx: EventContext, text: str) -> Reply:
    """The webhook's text turn with ``LOCAL_READER=router_first``: the router's answer when it reads the
    message completely, else ``Reply(defer=True)`` (the model reads it). Source: docs/design.md §8."""
    return run_text_turn(ctx, text, defer_incomplete=True)


def router_proposal(ctx: EventContext, text: str) -> Proposal:
    """The router's proposal for ``text``, read against the current events snapshot's titles, as the
    webhook's own text turn reads it (the model path's fallback when the model gave no usable call)."""
    return _read(ctx, text, _titles(_turn_snapshot_or_none(ctx)))


def _read(ctx: EventContext, text: str, titles: list[str] | None) -> Proposal:
    """The router's reading of ``text`` in this conversation: a bare question about the item listed
    (幾點開始 after a list) is about that item (``_about_the_item``)."""
    return _about_the_item(ctx, text, route(text, titles))


def _titles(snapshot) -> list[str] | None:
    """The events snapshot's titles the router reads named events against; None without a snapshot
    (the router then reads its demo titles)."""
    return [event.title for event in snapshot.events] if snapshot else None


def _answer(ctx: EventContext, proposal: Proposal) -> Reply:
    proposal = resolve_follow_up(ctx, proposal)  # 那下禮拜呢: the last search changed (shared.turn.follow_up)
    fixed = FIXED_TOOLS.get(proposal.tool)
    if fixed is None:
        return run_proposal(ctx, proposal)
    reply = fixed(ctx, proposal)
    record_turn(ctx.store, {
        "user_hash": ctx.user_hash, "source": proposal.source,
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
    its demo titles and the events search loads, and reports, the snapshot itself."""
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


def _events_search(ctx: EventContext, proposal: Proposal, tools: TurnTools) -> dict[str, Any]:
    """The events search of a proposal, with two narrow refinements:

    - a title hint (``TitleHint("冬季蔬果")`` from 冬季蔬果市集要帶什麼) narrows the keyword when some event's
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
    title = title_hint(proposal.notes)
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
    # the reply names the two dates apart (12/2（三）、12/5（六）), never the range between
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
    sender's consented diet is never applied or named where others read it (docs/design.md §6).
    """
    if ctx.actor is None or ctx.shared_chat:
        return PreferenceSnapshot()
    try:
        return read_preference(ctx.store, ctx.actor)
    except StoreError as exc:
        log("WARNING", "preference snapshot failed", error=exc.__class__.__name__)
        return None


def audit_args(proposal: Proposal) -> dict[str, Any]:
    """The proposal's arguments as the audit record holds them: a date in its boundary encoding
    (shared.turn.datespec), a limit or privacy topic (shared.turn.ask) as its plain name, every other
    argument as it is, except the resident's own words (did_you_mean's message spelt right, its
    choices and the misspelt word): the record keeps no user text (shared.audit)."""
    return {name: _plain(value) for name, value in proposal.args.items() if name not in _USER_TEXT_ARGS}


#: Arguments that hold the resident's message (did_you_mean) or a request number they typed
#: (handoff_status's ``code``): never written to the audit record.
_USER_TEXT_ARGS = frozenset({"text", "choices", "typed", "code"})


def _plain(value: Any) -> Any:
    if isinstance(value, ItemRef):  # its position and details; never the word said
        return value.audited()
    if isinstance(value, StrEnum):
        return value.value
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    return encoded(value)


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
    """Begin a turn: note the time and, when asked, snapshot the preference (docs/design.md §7 step 1)."""
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
    """Resolve the effective diet and run the one read-only tool (docs/design.md §7 steps 3–4).

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
    proposal = resolve_follow_up(ctx, proposal)
    diet = None
    reply = None
    result = None
    try:
        fixed = FIXED_TOOLS.get(proposal.tool)
        if fixed is not None:  # the model's greeting, limit, status …: the text turn's own fixed reply
            reply, status = fixed(ctx, proposal), "fixed"
        elif proposal.tool == ITEM_TOOL:  # 第三個在哪裡集合: that item's own record (shared.turn.item_answer)
            answer = answer_item(ctx, proposal.args["ref"], events_snapshot_args(ctx)["snapshot_loader"])
            reply, status, result = answer.reply, answer.status.value, answer.result()
        elif (near := kept_location_answer(ctx, proposal)) is not None:  # 附近… after a shared location
            reply, status, result = near.reply, near.status, near.result
        elif proposal.tool == "propose_dietary_memory":  # one-to-one only, as the 幫我記住 hook (docs/design.md §6)
            reply, status = ((refusals.one_to_one_reply(ctx.settings), "one_to_one") if ctx.shared_chat
                             else (offer_card(ctx, proposal.args.get("dietary_type")), "memory_card"))
        else:
            diet = resolve_diet(proposal.args.get("dietary_type"), snapshot,
                                generic=Flag.GENERIC_DIET in proposal.notes) if takes_diet(proposal) else None
            result = execute(ctx, proposal, diet, tools)
            status = "help" if result is None else result.get("status")
    except (UnknownArea, UnknownDietaryType, InvalidDateRange) as exc:
        result, reply, status = None, invalid_argument_reply(exc, proposal), "invalid_argument"
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
    status, reply = run.status, run.reply
    record: dict[str, Any] = {
        "user_hash": ctx.user_hash, "source": proposal.source,
        "tool": proposal.tool, "proposed_args": audit_args(proposal), "effective_args": None,
        "origin": diet.origin if diet is not None else None,
        "revision": snapshot.revision if snapshot else None, "revision_after": None, "result_ids": [],
    }
    if result is not None:
        record.update(effective_args=result.get("query"), result_ids=_result_ids(result))
    if takes_diet(proposal) and snapshot is not None and result is not None and _revision_moved(ctx, run, snapshot, record):
        status, reply = "revision_changed", revision_changed_reply()
    if reply is None:
        reply = render(proposal, result, diet, snapshot, offer_memory=not ctx.shared_chat)
        remember_search(ctx, proposal, result, diet, status)  # the conversation state: what was listed
    record.update(audit_extra or {})
    record.update(status=status, timings_ms={"snapshot": start.snapshot_ms, "tool": run.tool_ms,
                                             "total": round((time.monotonic() - start.started_monotonic) * 1000, 1)})
    _audit(ctx, record)
    return reply


def _revision_moved(ctx: EventContext, run: ToolRun, snapshot: PreferenceSnapshot, record: dict[str, Any]) -> bool:
    """Read the revision again after a place tool ran, when the consented memory shaped its result
    (docs/design.md §7 step 5); True when that result must not be shown: then ``record`` keeps no result
    ids and no diet. A result the memory did not shape is shown whatever landed meanwhile, so it is not
    read again (``revision_after`` stays None): one store read fewer per search."""
    if run.diet is None or run.diet.origin != CONSENTED_MEMORY:
        return False
    after = snapshot_preference(ctx)
    record["revision_after"] = after.revision if after else None
    if after is not None and after.revision == snapshot.revision:
        return False
    record["result_ids"] = []
    if isinstance(record.get("effective_args"), dict):  # perhaps forgotten meanwhile: keep no diet
        record["effective_args"] = {**record["effective_args"], "dietary_type": None}
    return True


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
    start = start_turn(ctx, read_snapshot=takes_diet(proposal) or diet_said_beside_shop(proposal) is not None)
    return finish_turn(ctx, start, run_tool(ctx, proposal, start.snapshot, tools))


def unanswered_turn(ctx: EventContext, start: TurnStart, *, source: str, reason: str, reply: Reply,
                    audit_extra: dict[str, Any] | None = None) -> Reply:
    """Audit a turn that ran no tool (a proposed call was refused by a context check) and return ``reply``.

    Args:
        ctx: the verified event.
        start: from start_turn.
        source: ``model``.
        reason: why no tool ran: ``TOOL_SESSION_MISMATCH``, ``TOOL_CONTEXT_REVISION_MISMATCH`` (a model
            that failed otherwise gets the router's reading instead: shared.agent.agent.router_fallback).
        reply: the honest reply chosen by the caller.
        audit_extra: more fields for the audit record.
    Source: docs/design.md §7 (failure is honest: the audit names the reason).
    """
    snapshot = start.snapshot
    record: dict[str, Any] = {
        "user_hash": ctx.user_hash, "source": source, "tool": None,
        "proposed_args": None, "effective_args": None, "origin": None,
        "revision": snapshot.revision if snapshot else None, "revision_after": None, "result_ids": [],
        **(audit_extra or {}),
        "status": "not_answered", "reason": reason,
        "timings_ms": {"snapshot": start.snapshot_ms, "tool": 0.0,
                       "total": round((time.monotonic() - start.started_monotonic) * 1000, 1)},
    }
    _audit(ctx, record)
    return reply
