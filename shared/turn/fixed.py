"""Fixed entries and menu postbacks: answered in the webhook call, with no model (DESIGN §3).

Nothing here imports ADK or genai: cold start is part of the product.
"""
from __future__ import annotations

from typing import Callable
from urllib.parse import parse_qs

from shared.handoff import flow as handoff_flow
from shared.memory import flow as memory_flow
from shared.turn.engine import run_proposal
from shared.turn.menu import expired_button_reply, menu_reply
from shared.turn.router import Proposal
from shared.webhook.context import EventContext, Reply


def places_picker(ctx: EventContext) -> Reply:
    """查蔬食 → the townships that have place data."""
    return run_proposal(ctx, Proposal("needs_area", {"kind": "places", "dietary_type": None}))


def events_picker(ctx: EventContext) -> Reply:
    """查活動 → the townships that have event data."""
    return run_proposal(ctx, Proposal("needs_area", {"kind": "events"}))


FIXED_ENTRIES: dict[str, Callable[[EventContext], Reply]] = {
    "我要預約": menu_reply,
    "選單": menu_reply,
    "查蔬食": places_picker,
    "查活動": events_picker,
    "留下服務詢問": handoff_flow.start_entry,
    "查看原本服務單": handoff_flow.status_entry,
    "我的偏好": memory_flow.view_entry,
    "忘記我的飲食偏好": memory_flow.forget_entry,
}

_MENU_POSTBACKS: dict[str, Callable[[EventContext], Reply]] = {
    "main": menu_reply,
    "places": places_picker,
    "events": events_picker,
    "handoff": handoff_flow.start_entry,
    "status": handoff_flow.status_entry,
    "preference": memory_flow.view_entry,
}


def handle_menu_postback(ctx: EventContext, rest: str) -> Reply:
    """``menu:<main|places|events|handoff>``."""
    handler = _MENU_POSTBACKS.get(rest)
    return handler(ctx) if handler else expired_button_reply()


def _query(rest: str) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(rest, keep_blank_values=False).items()}


def handle_places_postback(ctx: EventContext, rest: str) -> Reply:
    """``places:area=<township>[&diet=<type>]`` → a place search."""
    query = _query(rest)
    return run_proposal(ctx, Proposal("search_local_places", {
        "area": query.get("area"), "dietary_type": query.get("diet"), "keyword": None}, source="postback"))


def handle_events_postback(ctx: EventContext, rest: str) -> Reply:
    """``events:area=<township>[&date=<keyword or range>]`` → an events search."""
    query = _query(rest)
    return run_proposal(ctx, Proposal("search_local_events", {
        "area": query.get("area"), "date": query.get("date"), "keyword": None}, source="postback"))
