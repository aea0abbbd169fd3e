"""The pickers and search postbacks behind the fixed entries (routed by shared.routing), with no
model (docs/design.md §3).

Nothing here imports ADK or genai: cold start is part of the product.
"""
from __future__ import annotations

from urllib.parse import parse_qs

from shared.context import EventContext, Reply
from shared.turn.ask import UnrecordedDiet
from shared.turn.datespec import date_arg
from shared.turn.engine import run_proposal
from shared.turn.proposal import Proposal
from shared.turn.router import read_diet


def places_picker(ctx: EventContext) -> Reply:
    """查蔬食 → the townships that have place data."""
    return run_proposal(ctx, Proposal("needs_area", {"kind": "places", "dietary_type": None}))


def events_picker(ctx: EventContext) -> Reply:
    """查活動 → the townships that have event data."""
    return run_proposal(ctx, Proposal("needs_area", {"kind": "events"}))


def _query(rest: str) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(rest, keep_blank_values=False).items()}


def handle_places_postback(ctx: EventContext, rest: str) -> Reply:
    """``places:area=<township>[&diet=<type>][&said=<words>]`` → a place search.

    ``said`` (the finer diet words the catalog does not record, 鍋邊素、不吃蔥蒜) is kept only when the
    router reads it as such beside a diet (shared.turn.router.read_diet), so a button can never make
    the reply quote other text; the reply then names it as not recorded. ``said`` is the words joined
    by 、, the postback's encoding of ``UnrecordedDiet``.
    """
    query = _query(rest)
    said = query.get("said")
    notes = (UnrecordedDiet(tuple(said.split("、"))),) if said and query.get("diet") and read_diet(f"素食 {said}")[1] == said \
        else ()
    return run_proposal(ctx, Proposal("search_local_places", {
        "area": query.get("area"), "dietary_type": query.get("diet"), "keyword": None}, source="postback",
        notes=notes))


def handle_events_postback(ctx: EventContext, rest: str) -> Reply:
    """``events:area=<township>[&date=<date>][&keyword=<terms>]`` (or ``events:scope=all`` with the
    same optional date and keyword) → an events search. The date is in the boundary encoding
    (shared.turn.datespec); one that is not is answered 「我看不懂這個日期」 with choices."""
    query = _query(rest)
    return run_proposal(ctx, Proposal("search_local_events", {
        "area": query.get("area"), "date": date_arg(query.get("date")), "keyword": query.get("keyword")},
        source="postback"))
