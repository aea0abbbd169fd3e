"""Near me: a shared LINE location, and 附近… asked within 30 minutes of sharing one.

A location message (``message.type == "location"``; Messaging API webhook, "Location message":
https://developers.line.biz/en/reference/messaging-api/#wh-location) is answered here:

1. the latitude and longitude must be two numbers in range, else a kind reply asks again;
2. the point is kept as the chat's shared location for 30 minutes (shared.turn.conversation:
   rounded to about 11 m, never logged, forgotten by a forget, listed by the export);
3. a point outside the county's outline (with its margin: shared.geo.in_county) is told so, with
   the townships that have shops;
4. otherwise the nearest shops with sourced coordinates (shared.places.nearby), or why none is
   listed; when LINE's address for the point names a township (shared.address) the reply says it.

A later 附近有什麼活動 / 附近有素食嗎 (the router's or the model's ``needs_area`` with a near word:
附近, 這裡, 這邊) within those 30 minutes is answered from the kept point by ``kept_location_answer``: the
nearest events that carry the source's own position (shared.events.nearby), or the nearest shops.

A location message's turn record has the tool ``near_me``; a 附近… turn's is the engine's (its
proposal, status and the ids listed). Neither ever holds the point. Source: docs/data.md (Near me), docs/conversation.md (Near me).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from shared.address import AddressReading, read_address
from shared.audit import record_turn
from shared.clock import TAIPEI
from shared.context import EventContext, Reply
from shared.events.nearby import NearbyEvents, nearest_events
from shared.events.snapshots import load_current_snapshot
from shared.geo import NearStatus, Point, checked_point, in_county
from shared.logs import log
from shared.places.nearby import nearest_places
from shared.places.search import UnknownDietaryType, areas_with_places
from shared.replies import nearby
from shared.turn.conversation import load_location, save_location
from shared.turn.proposal import Proposal

#: The tool name of a near-me turn in the turn record.
TOOL = "near_me"
#: The vague words that ask for what is near the resident, as shared.areas.vague_words_in names them
#: (這附近 and 集合點附近 as 附近).
NEAR_WORDS = frozenset({"附近", "這裡", "這邊"})


@dataclass(frozen=True)
class NearAnswer:
    """A near-me turn's reply and what the turn record keeps of it.

    Attributes:
        reply: what the resident reads.
        status: ``outside_county``, ``unreadable_location`` or a shared.geo.NearStatus value.
        result: {"query": {"kind", "dietary_type"}, "places"|"events": [{"id"}]} for the record.
    """

    reply: Reply
    status: str
    result: dict[str, Any]


def _record(ctx: EventContext, answer: NearAnswer, source: str) -> None:
    items = answer.result.get("places") or answer.result.get("events") or []
    record_turn(ctx.store, {
        "user_hash": ctx.user_hash, "source": source, "tool": TOOL, "proposed_args": answer.result["query"],
        "effective_args": answer.result["query"], "origin": None, "revision": None, "revision_after": None,
        "result_ids": [item["id"] for item in items], "status": answer.status,
    }, tenant_id=ctx.settings.tenant_id, webhook_event_id=ctx.webhook_event_id, now=ctx.now)
    log("INFO", "turn", tool=TOOL, source=source, status=answer.status, user=ctx.user_hash)


def _township_of(address: object) -> str | None:
    """The township LINE's address for the point names, or None (no address, or none read)."""
    reading = read_address(address if isinstance(address, str) else None)
    return reading.township if isinstance(reading, AddressReading) else None


def _places_answer(point: Point, dietary_type: str | None, township: str | None = None) -> NearAnswer:
    query = {"kind": "places", "dietary_type": dietary_type}
    if not in_county(point):
        choices = tuple(areas_with_places() or ())
        return NearAnswer(nearby.outside_county_reply(choices), "outside_county", {"query": query})
    result = nearest_places(point, dietary_type=dietary_type)
    listed = [{"id": near.view["id"]} for near in result.near]
    return NearAnswer(nearby.places_reply(result, township=township), result.status.value,
                      {"query": {**query, "dietary_type": result.dietary_type}, "places": listed})


def _events_answer(ctx: EventContext, point: Point) -> NearAnswer:
    query = {"kind": "events"}
    try:
        snapshot = load_current_snapshot(ctx.store)
    except Exception as exc:  # noqa: BLE001 - an unreadable snapshot is said, never a 500
        log("WARNING", "events snapshot unavailable", error=exc.__class__.__name__)
        return NearAnswer(nearby.events_reply(NearbyEvents(NearStatus.UNAVAILABLE), None),
                          NearStatus.UNAVAILABLE.value, {"query": query})
    result = nearest_events(point, snapshot, today=ctx.now.astimezone(TAIPEI).date())
    if not in_county(point):
        return NearAnswer(nearby.outside_county_events_reply(result.area_choices, snapshot.demo), "outside_county",
                          {"query": query})
    listed = [{"id": near.event.id} for near in result.near]
    return NearAnswer(nearby.events_reply(result, snapshot), result.status.value, {"query": query, "events": listed})


def location_reply(ctx: EventContext, latitude: object, longitude: object, address: object = None) -> Reply:
    """Answer a shared location with the nearest shops (module docstring, steps 1–4).

    Args:
        ctx: the verified event; ``ctx.actor`` is set.
        latitude, longitude: the location message's degrees, as LINE sent them (checked here).
        address: the location message's address, or None; read only for its township, never kept.
    Returns:
        The reply; never raises for a bad location.
    """
    point = checked_point(latitude, longitude)
    if point is None:
        answer = NearAnswer(nearby.unreadable_location_reply(), "unreadable_location", {"query": {"kind": "places"}})
    else:
        save_location(ctx, point)
        answer = _places_answer(point, None, _township_of(address))
    _record(ctx, answer, "location_message")
    return answer.reply


def asks_near(proposal: Proposal) -> bool:
    """True for a township picker asked with a near word (附近有什麼活動, 這附近有素食嗎, 這裡有什麼好吃的)."""
    return proposal.tool == "needs_area" and bool(NEAR_WORDS & set(proposal.args.get("vague_words") or ()))


def kept_location_answer(ctx: EventContext, proposal: Proposal) -> NearAnswer | None:
    """附近… with a location shared in this chat in the last 30 minutes: the nearest events or shops
    from it; None when the proposal does not ask for what is near, or no location is kept (then the
    township picker answers, with the location button). The caller writes the turn record.

    Raises:
        UnknownDietaryType: the proposal's diet is not a known type (the caller's kind reply).
    """
    if not asks_near(proposal):
        return None
    kept = load_location(ctx)
    if kept is None:
        return None
    if proposal.args.get("kind") == "events":
        answer = _events_answer(ctx, kept.point)
    else:
        diet = proposal.args.get("dietary_type")
        if diet is not None and not isinstance(diet, str):
            raise UnknownDietaryType(f"unknown dietary_type {diet!r}")
        answer = _places_answer(kept.point, diet)
    return answer
