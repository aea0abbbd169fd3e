"""A follow-up or a correction merged with the conversation state, and the state saved after a search.

``merge_follow_up(conversation, follow_up)`` → the ``Ask`` to run: the last search with the conditions
the follow-up names changed and the others kept (docs/design.md §7, Conversation). Either reader's
``FollowUp`` merges the same way. The kind of the last search decides, unless the follow-up names or
implies one:

- a township alone (那溪湖呢) keeps the kind and every other condition;
- a date or a topic is an events condition: after a shop search (員林的全素店家 → 那明天呢) the events of
  that township on that day are searched (shops have no dates; the township is kept);
- a diet or 店家 is a shop condition: after an events search (→ 那全素的呢) that township's shops with
  that diet (a date or topic does not apply to shops and is dropped);
- a bare weekday (換成週日) after one week's days keeps that week (這禮拜六 → 這禮拜日).

Without a state (none, expired, another chat) the message is answered as read alone: the router's
``alone`` reading for a follow-up, the conditions said for a correction (never a refusal).

``remember_search`` saves the state after every answered search (ok or no match) and township picker:
the search as it ran (its township and days from the result's query, none for a picker; the diet
only when said in this turn, never one the consented memory filled) and the items in the order the
reply shows them (at most ``CAROUSEL_MAX_BUBBLES``; none for a picker). Any other turn leaves the
state as it was: a greeting does not wipe it.
"""
from __future__ import annotations

from datetime import date, timedelta
from typing import Any

from shared.context import EventContext
from shared.turn.ask import (
    Ask,
    AskSearchKind,
    Changed,
    EventsSearch,
    FollowUp,
    NeedsArea,
    Note,
    PlacesSearch,
)
from shared.turn.conversation import Conversation, ItemKind, ListedItem, load_conversation, save_conversation
from shared.turn.datespec import DateSpec, Span, UnreadableDate, Weekday
from shared.turn.diet_origin import THIS_TURN, EffectiveDiet
from shared.turn.proposal import Proposal
from shared.turn.rules.follow_ups import FOLLOW_UP_TOOL

__all__ = ["CAROUSEL_MAX_BUBBLES", "FOLLOW_UP_TOOL", "alone_ask", "merge_follow_up", "proposal_of",
           "remember_search", "resolve_follow_up"]

#: How many items a results carousel shows (shared.replies.events / places: LINE's 12 bubbles).
CAROUSEL_MAX_BUBBLES = 12
#: The searches whose answer the state keeps, with the kind of item each lists.
_LISTING = {"search_local_events": ItemKind.EVENT, "search_local_places": ItemKind.PLACE,
            "find_place": ItemKind.PLACE}


def alone_ask(follow_up: FollowUp) -> Ask:
    """The follow-up's conditions as an ask of their own (no state to follow): a township alone asks
    events or shops; a date or topic is an events search (every township when none is said); a diet
    is a shop search, or the township picker without a township."""
    if follow_up.kind is None:
        return AskSearchKind(follow_up.area) if follow_up.area else NeedsArea(PlacesSearch())
    if follow_up.kind == "events":
        return EventsSearch(follow_up.area, follow_up.date, follow_up.keyword)
    search = PlacesSearch(follow_up.area, follow_up.diet)
    return search if follow_up.area else NeedsArea(search)


def _same_week(kept: DateSpec | None, new: DateSpec | None) -> DateSpec | None:
    """A bare weekday (換成週日) in the week of the days kept, when they lie in one Monday-to-Sunday week."""
    if not (isinstance(new, Weekday) and new.weeks is None and isinstance(kept, Span)):
        return new
    monday = kept.start - timedelta(days=kept.start.weekday())
    if kept.end - timedelta(days=1) >= monday + timedelta(days=7):
        return new
    day = monday + timedelta(days=new.day)
    return Span(day, day + timedelta(days=1))


def merge_follow_up(conversation: Conversation | None, follow_up: FollowUp) -> Ask:
    """The ask a follow-up makes of the last search (module docstring); ``alone_ask`` without one.

    Args:
        conversation: the state loaded for this (chat, sender), or None.
        follow_up: what the message changed (from the router or the model).
    Returns:
        An EventsSearch or PlacesSearch with every kept condition; with no last search,
        ``alone_ask(follow_up)``.
    """
    last = conversation.last_ask if conversation is not None else None
    if last is None:
        return alone_ask(follow_up)
    kind = follow_up.kind or ("events" if isinstance(last, EventsSearch) else "places")
    area = follow_up.area or last.area
    if kind == "events":
        kept = last if isinstance(last, EventsSearch) else EventsSearch(last.area)
        date = _same_week(kept.date, follow_up.date) if follow_up.date else kept.date
        return EventsSearch(area, date, follow_up.keyword or kept.keyword)
    kept_diet = last.diet if isinstance(last, PlacesSearch) else None
    return PlacesSearch(area, follow_up.diet or kept_diet)


def proposal_of(ask: Ask, *, source: str = "offline_router", notes: tuple[Note, ...] = ()) -> Proposal:
    """A merged or alone ask as the turn engine's proposal (a search, the picker, or events-or-shops?).

    Raises:
        ValueError: an ask ``merge_follow_up`` never returns.
    """
    if isinstance(ask, EventsSearch):
        return Proposal("search_local_events", {"area": ask.area, "date": ask.date, "keyword": ask.keyword},
                        source, notes)
    if isinstance(ask, PlacesSearch) and ask.area:
        return Proposal("search_local_places", {"area": ask.area, "dietary_type": ask.diet, "keyword": None},
                        source, notes)
    if isinstance(ask, (PlacesSearch, NeedsArea)):
        diet = ask.diet if isinstance(ask, PlacesSearch) else getattr(ask.search, "diet", None)
        return Proposal("needs_area", {"kind": "places", "dietary_type": diet, "vague": False}, source, notes)
    if isinstance(ask, AskSearchKind):
        return Proposal("ask_search_kind", {"area": ask.area}, source, notes)
    raise ValueError(f"not an ask a follow-up makes: {type(ask).__name__}")


def resolve_follow_up(ctx: EventContext, proposal: Proposal) -> Proposal:
    """A follow-up proposal (``FOLLOW_UP_TOOL``) → the proposal to run; any other proposal as it is.

    With a last search in this (chat, sender)'s state: that search changed, with a ``Changed`` note (the
    reply's first line says what changed). Without: a follow-up gets the router's ``alone`` reading (the
    message read alone, as if no conversation came before), a correction its own conditions.
    """
    if proposal.tool != FOLLOW_UP_TOOL:
        return proposal
    follow_up: FollowUp = proposal.args["follow_up"]
    conversation = load_conversation(ctx)
    if conversation is None or conversation.last_ask is None:
        alone = proposal.args.get("alone")
        if isinstance(alone, Proposal) and not follow_up.correction:
            return alone
        return proposal_of(alone_ask(follow_up), source=proposal.source)
    merged = merge_follow_up(conversation, follow_up)
    assert isinstance(merged, (EventsSearch, PlacesSearch))  # a last search is always merged into one
    return proposal_of(merged, source=proposal.source, notes=(Changed(follow_up, merged), *proposal.notes))


def _date_of(result: dict[str, Any]) -> DateSpec | None:
    """The days an events search ran on: the two dates of a ``both:`` reading as asked (``carry``),
    else the searched range as whole days (``Span``); None for every date."""
    carried = (result.get("carry") or {}).get("date")
    searched = (result.get("query") or {}).get("date")
    try:
        if carried:
            return DateSpec.parse(carried)
        if not searched:
            return None
        first, _, end = searched.partition("/")
        start = date.fromisoformat(first)
        return Span(start, date.fromisoformat(end) if end else start + timedelta(days=1))
    except (UnreadableDate, ValueError):
        return None


def _search_ran(proposal: Proposal, result: dict[str, Any], kind: ItemKind,
                diet: EffectiveDiet | None) -> EventsSearch | PlacesSearch:
    # the township picker searched no township (its query holds the vague word, 附近)
    area = None if proposal.tool == "needs_area" else (result.get("query") or {}).get("area") or proposal.args.get("area")
    if kind is ItemKind.EVENT:
        return EventsSearch(area, _date_of(result), proposal.args.get("keyword"))
    said = diet.dietary_type if diet is not None and diet.origin == THIS_TURN else None
    if proposal.tool == "find_place":
        said = None  # a shop by name searches every diet
    return PlacesSearch(area, said)


def _kind_listed(proposal: Proposal) -> ItemKind | None:
    if proposal.tool == "needs_area":
        return ItemKind.EVENT if proposal.args.get("kind") == "events" else ItemKind.PLACE
    return _LISTING.get(proposal.tool)


def remember_search(ctx: EventContext, proposal: Proposal, result: dict[str, Any] | None,
                    diet: EffectiveDiet | None, status: str) -> None:
    """Save the state after an answered search or a township picker (module docstring); nothing for
    any other turn."""
    kind = _kind_listed(proposal)
    if kind is None or result is None or status not in ("ok", "no_match", "needs_area"):
        return
    listed = result.get("events" if kind is ItemKind.EVENT else "places") or []
    items = tuple(ListedItem(kind, item["id"]) for item in listed[:CAROUSEL_MAX_BUBBLES]
                  if isinstance(item, dict) and isinstance(item.get("id"), str))
    save_conversation(ctx, Conversation(_search_ran(proposal, result, kind, diet), items, ctx.now))
