"""The turn engine: route a message, run at most one read-only tool, render with fixed templates
(DESIGN §7). Python validates every proposed argument; the router or model only proposes.

Per turn:
1. snapshot the consented preference with its revision (place tools only: they take a diet);
2. route (offline router here; the model in a later issue) → one Proposal. The Proposal never
   carries the stored value: the model will not see it;
3. resolve the effective ``dietary_type`` and its origin (shared.turn.diet_origin);
4. execute the one tool with the effective arguments;
5. read the revision again: if it moved while the tool ran (a save or forget landed), a result
   personalised by the memory is discarded;
6. render with fixed templates, saying where the diet came from, and write the audit record.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any, Callable

from linebot.v3.messaging import TextMessage

from shared.areas import UnknownArea
from shared.clock import TAIPEI
from shared.context import EventContext, Reply
from shared.events.search import InvalidDateRange, search_local_events, weekend_range
from shared.events.snapshots import load_current_snapshot
from shared.logs import hash_user, log
from shared.memory.diet import diet_label
from shared.memory.store import PreferenceSnapshot, read_preference
from shared.places.search import UnknownDietaryType, search_local_places
from shared.replies.events import render_events
from shared.replies.places import render_places
from shared.store import StoreError
from shared.turn.audit import record_turn
from shared.turn.diet_origin import CONSENTED_MEMORY, THIS_TURN, EffectiveDiet, resolve_diet
from shared.turn.menu import help_reply
from shared.turn.router import Proposal, route

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


def run_text_turn(ctx: EventContext, text: str) -> Reply:
    """One free-text turn with the offline router.

    Args:
        ctx: the verified event; ``ctx.actor`` is set.
        text: the user's message (never logged or stored).
    Returns:
        The rendered reply.
    """
    return run_proposal(ctx, route(text))


def resolve_date(value: str | None, ctx: EventContext) -> str | None:
    """A date keyword of shared.turn.router.date_in → "YYYY-MM-DD/YYYY-MM-DD" (Asia/Taipei, end exclusive).

    "Today" is ``ctx.now``'s Asia/Taipei calendar day; weeks start on Monday.

    - ``today`` / ``tomorrow``: that one day.
    - ``weekend``: weekend_range (the coming Saturday–Sunday; on a Sunday, the weekend in progress).
    - ``next_weekend``: the Saturday–Sunday of next week (that weekend plus 7 days).
    - ``saturday`` / ``sunday``: the coming one; today when today is that day.
    - ``next_saturday`` / ``next_sunday``: that day of next week (Sunday 12/6 → 12/12 / 12/13).
    - ``this_month`` / ``next_month``: the 1st to the 1st of the month after (12/31 → 12/1–1/1).
    - ``md:MM-DD``: this year if that day is today or later, else next year (the first of the two
      that exists, so 2/29 is the next leap day within a year).
    - anything else (``YYYY-MM-DD``, a range from a postback) passes through for the events search.

    Args:
        value: the keyword, or None (every date).
        ctx: the event; only ``ctx.now`` (aware) is read.
    Returns:
        The range, the value unchanged when it is not a keyword, or None.
    Raises:
        InvalidDateRange: ``md:`` is malformed or names no date in either year (2/30, 13/1);
            run_proposal turns it into a kind help reply.
    """
    if value is None:
        return None
    today = ctx.now.astimezone(TAIPEI).date()

    def span(start: date, days: int = 1) -> str:
        return f"{start.isoformat()}/{(start + timedelta(days=days)).isoformat()}"

    week_saturday = today + timedelta(days=5 - today.weekday())  # this Monday-to-Sunday week's Saturday
    month_start = today.replace(day=1)
    following = (month_start + timedelta(days=32)).replace(day=1)
    keywords = {
        "today": lambda: span(today),
        "tomorrow": lambda: span(today + timedelta(days=1)),
        "weekend": lambda: weekend_range(ctx.now),
        "next_weekend": lambda: span(week_saturday + timedelta(days=7), 2),
        "saturday": lambda: span(today + timedelta(days=(5 - today.weekday()) % 7)),
        "sunday": lambda: span(today + timedelta(days=(6 - today.weekday()) % 7)),
        "next_saturday": lambda: span(week_saturday + timedelta(days=7)),
        "next_sunday": lambda: span(week_saturday + timedelta(days=8)),
        "this_month": lambda: f"{month_start.isoformat()}/{following.isoformat()}",
        "next_month": lambda: f"{following.isoformat()}/{(following + timedelta(days=32)).replace(day=1).isoformat()}",
    }
    if value in keywords:
        return keywords[value]()
    if not value.startswith("md:"):
        return value
    month, dash, day = value[3:].partition("-")
    if not (dash and month.isdigit() and day.isdigit()):
        raise InvalidDateRange(f"not a month-day keyword: {value!r}")
    for year in (today.year, today.year + 1):
        try:
            candidate = date(year, int(month), int(day))
        except ValueError:
            continue
        if candidate >= today:
            return span(candidate)
    raise InvalidDateRange(f"no such day this year or next: {value!r}")


def events_snapshot_args(ctx: EventContext) -> dict[str, Any]:
    """The events search's snapshot arguments for this turn: the store's newest real snapshot (the
    demo one only when none exists) and the age after which it is said to be out of date."""
    return {"snapshot_loader": lambda: load_current_snapshot(ctx.store),
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
        return tools.events(resolve_date(args.get("date"), ctx), args.get("area"), args.get("keyword"), now=ctx.now,
                            **events_snapshot_args(ctx))
    if proposal.tool == "needs_area":
        if args.get("kind") == "events":
            return tools.events(None, _NO_TOWNSHIP, None, now=ctx.now, **events_snapshot_args(ctx))
        return tools.places(_NO_TOWNSHIP, dietary_type, None, now=ctx.now)
    return None


def _snapshot(ctx: EventContext) -> PreferenceSnapshot | None:
    """The actor's preference, or None when it cannot be read (the turn then runs without it)."""
    if ctx.actor is None:
        return PreferenceSnapshot()
    try:
        return read_preference(ctx.store, ctx.actor)
    except StoreError as exc:
        log("WARNING", "preference snapshot failed", error=exc.__class__.__name__)
        return None


def origin_note(diet: EffectiveDiet, snapshot: PreferenceSnapshot | None) -> str | None:
    """Say where a place search's diet came from, or None when there is nothing to say.

    「依你同意記住的偏好：蔬食」 when the memory filled it; 「這次依你說的條件：不限素別」 when the
    user stated it (and, if a different value is remembered, that it was not applied or changed).
    Source: DESIGN §6 (the word 偏好), §7.
    """
    if diet.origin == CONSENTED_MEMORY:
        return (f"依你同意記住的偏好：{diet_label(diet.dietary_type)}。\n"
                "（這次想換條件，直接說就好，例如「花壇不限素別」；說「我的偏好」可以查看、更正或忘記。）")
    if diet.origin == THIS_TURN:
        note = f"這次依你說的條件：{diet_label(diet.dietary_type)}。"
        stored = snapshot.dietary_type if snapshot else None
        if stored and stored != diet.dietary_type:
            note += f"\n你記住的偏好「{diet_label(stored)}」這次沒有套用，也沒有改變。"
        return note
    if snapshot is None:
        return "這次暫時讀不到你記住的偏好，所以先不限素別查詢。"
    return None


def _revision_changed_reply() -> Reply:
    return Reply([TextMessage(text="你的飲食偏好剛剛有變更，為了不用舊的條件，這次的結果先不顯示。請再問一次。")])


def _result_ids(result: dict[str, Any] | None) -> list[str]:
    items = (result or {}).get("places") or (result or {}).get("events") or []
    return [item.get("id") for item in items if isinstance(item, dict)]


def run_proposal(ctx: EventContext, proposal: Proposal, *, tools: TurnTools = DEFAULT_TOOLS) -> Reply:
    """Execute a proposal, apply consented memory where the diet is left open, render, audit.

    Args:
        ctx: the verified event.
        proposal: from the offline router, a fixed entry or a postback; holds no stored value.
        tools: the read-only tools (tests inject wrappers).
    Returns:
        The reply; bad arguments get a kind answer, not an error.
    """
    started = time.monotonic()
    personal = takes_diet(proposal)
    snapshot = _snapshot(ctx) if personal else None
    snapshot_ms = round((time.monotonic() - started) * 1000, 1)
    record: dict[str, Any] = {
        "user_hash": hash_user(ctx.actor.user_id) if ctx.actor else None, "source": proposal.source,
        "tool": proposal.tool, "proposed_args": dict(proposal.args), "effective_args": None, "origin": None,
        "revision": snapshot.revision if snapshot else None, "revision_after": None, "result_ids": [],
    }
    diet = None
    tool_started = time.monotonic()
    try:
        diet = resolve_diet(proposal.args.get("dietary_type"), snapshot) if personal else None
        result = execute(ctx, proposal, diet, tools)
    except (UnknownArea, UnknownDietaryType, InvalidDateRange) as exc:
        result, reply = None, _invalid_argument_reply(exc)
        status = "invalid_argument"
    else:
        status = "help" if result is None else result.get("status")
        reply = None
    tool_ms = round((time.monotonic() - tool_started) * 1000, 1)
    if diet is not None:
        record["origin"] = diet.origin
    if result is not None:
        record.update(effective_args=result.get("query"), result_ids=_result_ids(result))
    if personal and snapshot is not None and result is not None:
        after = _snapshot(ctx)
        record["revision_after"] = after.revision if after else None
        if diet.origin == CONSENTED_MEMORY and (after is None or after.revision != snapshot.revision):
            status, reply = "revision_changed", _revision_changed_reply()
            record["result_ids"] = []
    if reply is None:
        reply = _render(proposal, result, diet, snapshot)
    record.update(status=status, timings_ms={"snapshot": snapshot_ms, "tool": tool_ms,
                                             "total": round((time.monotonic() - started) * 1000, 1)})
    record_turn(ctx.store, record, tenant_id=ctx.settings.tenant_id, webhook_event_id=ctx.webhook_event_id,
                now=ctx.now)
    log("INFO", "turn", tool=proposal.tool, source=proposal.source, status=status, origin=record["origin"],
        revision=record["revision"], user=record["user_hash"])
    return reply


def _invalid_argument_reply(exc: Exception) -> Reply:
    if isinstance(exc, UnknownArea):
        return help_reply("我找不到這個地區，請說彰化縣的鄉鎮名稱，例如「花壇」或「員林市」。")
    if isinstance(exc, UnknownDietaryType):
        return help_reply("我看不懂這個飲食條件，可以說「素食」、「全素」、「蛋奶素」、「奶素」或「不限」。")
    return help_reply("我看不懂這個日期，可以說「今天」、「明天」、「這週末」、「下週末」或像「12月12日」這樣的日期。")


def _render(proposal: Proposal, result: dict[str, Any] | None, diet: EffectiveDiet | None,
            snapshot: PreferenceSnapshot | None) -> Reply:
    if result is None:
        return help_reply()
    is_events = proposal.tool == "search_local_events" or proposal.args.get("kind") == "events"
    stated = diet.dietary_type if diet is not None and diet.origin == THIS_TURN else None
    messages = list(render_events(result) if is_events else render_places(result, stated_diet=stated))
    if diet is not None and result.get("status") in ("ok", "no_match"):
        note = origin_note(diet, snapshot)
        if note:
            messages.insert(0, TextMessage(text=note))
    return Reply(messages)
