"""The events nearest a shared location, by straight-line distance, from the source's own positions.

An event is measured only when its record carries a position from the source (TDX's ``Position``,
``Event.position``); an event without one is never placed by its address. Only events that have not
ended (their last day is today or later, Asia/Taipei) are listed. Distances are geodesic
(shared.geo.distance_m), never a route.

Source: docs/data.md (Near me), docs/design.md §5.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import date

from shared.areas import TOWNSHIPS
from shared.events.search import Event, EventSnapshot
from shared.geo import NEAR_LIMIT_M, NEAREST_MAX, NearStatus, Point, distance_m


@dataclass(frozen=True)
class NearEvent:
    """One event and how far it is (straight-line metres)."""

    event: Event
    distance_m: float


@dataclass(frozen=True)
class NearbyEvents:
    """The nearest events to one point.

    Attributes:
        status: shared.geo.NearStatus (UNAVAILABLE is the caller's, when the snapshot cannot be read).
        near: nearest first, at most NEAREST_MAX (only with OK).
        area_choices: townships with events that have not ended (for the buttons when none is listed).
        nearest_m: with NONE_NEAR, how far the nearest located event is (metres); else None.
    """

    status: NearStatus
    near: tuple[NearEvent, ...] = ()
    area_choices: tuple[str, ...] = ()
    nearest_m: float | None = None


def nearest_events(point: Point, snapshot: EventSnapshot, *, today: date, limit: int = NEAREST_MAX,
                   within_m: float = NEAR_LIMIT_M) -> NearbyEvents:
    """The events nearest ``point`` that carry a sourced position and have not ended by ``today``.

    Args:
        point: the shared location (WGS 84 degrees).
        snapshot: the current events snapshot.
        today: the Asia/Taipei calendar day of the turn.
        limit: at most this many.
        within_m: farther events are not listed.
    Returns:
        NearbyEvents (OK, NONE_LOCATED or NONE_NEAR).
    """
    coming = [event for event in snapshot.events if event.last_day >= today]
    present = {event.area for event in coming}
    choices = tuple(township for township in TOWNSHIPS if township in present)
    measured = sorted((distance_m(point, Point(event.position.lat, event.position.lng)), event.date, event.id, event)
                      for event in coming if event.position is not None)
    if not measured:
        return NearbyEvents(NearStatus.NONE_LOCATED, area_choices=choices)
    near = tuple(NearEvent(event, metres) for metres, _, _, event in measured[:limit] if metres <= within_m)
    if not near:
        return NearbyEvents(NearStatus.NONE_NEAR, area_choices=choices, nearest_m=measured[0][0])
    return NearbyEvents(NearStatus.OK, near, choices)
