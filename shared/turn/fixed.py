"""The pickers and search postbacks behind the fixed entries (routed by shared.routing), with no
model (DESIGN §3).

Nothing here imports ADK or genai: cold start is part of the product.
"""
from __future__ import annotations

from urllib.parse import parse_qs

from shared.context import EventContext, Reply
from shared.turn.engine import run_proposal
from shared.turn.router import Proposal


def places_picker(ctx: EventContext) -> Reply:
    """查蔬食 → the townships that have place data."""
    return run_proposal(ctx, Proposal("needs_area", {"kind": "places", "dietary_type": None}))


def events_picker(ctx: EventContext) -> Reply:
    """查活動 → the townships that have event data."""
    return run_proposal(ctx, Proposal("needs_area", {"kind": "events"}))


def _query(rest: str) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(rest, keep_blank_values=False).items()}


def handle_places_postback(ctx: EventContext, rest: str) -> Reply:
    """``places:area=<township>[&diet=<type>]`` → a place search."""
    query = _query(rest)
    return run_proposal(ctx, Proposal("search_local_places", {
        "area": query.get("area"), "dietary_type": query.get("diet"), "keyword": None}, source="postback"))


def handle_events_postback(ctx: EventContext, rest: str) -> Reply:
    """``events:area=<township>[&date=<keyword or range>][&keyword=<terms>]`` (or ``events:scope=all``
    with the same optional date and keyword) → an events search."""
    query = _query(rest)
    return run_proposal(ctx, Proposal("search_local_events", {
        "area": query.get("area"), "date": query.get("date"), "keyword": query.get("keyword")}, source="postback"))
