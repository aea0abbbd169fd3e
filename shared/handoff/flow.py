"""Webhook-side handoff flow (entry points wired by shared.webhook.dispatch / shared.turn.fixed).

Placeholder until the handoff issue lands: entries explain how to leave a request; nothing is written.
"""
from __future__ import annotations

from shared.turn.menu import expired_button_reply, handoff_info_reply
from shared.webhook.context import EventContext, Reply

#: Text that starts a draft, e.g. ``新需求：想參加週六的社區走讀``.
DRAFT_PREFIXES = ("新需求：", "新需求:")


def match_text(ctx: EventContext, text: str) -> Reply | None:
    """A free-text message that starts a handoff draft → the confirmation card; else None."""
    return handoff_info_reply(ctx) if text.strip().startswith(DRAFT_PREFIXES) else None


def start_entry(ctx: EventContext) -> Reply:
    """留下服務詢問 → how to leave a request for a person."""
    return handoff_info_reply(ctx)


def status_entry(ctx: EventContext) -> Reply:
    """查看原本服務單 → the status of the user's latest request."""
    return handoff_info_reply(ctx)


def handle_postback(ctx: EventContext, rest: str) -> Reply:
    """``handoff:<…>`` postbacks (confirm / cancel cards)."""
    return expired_button_reply()
