"""Webhook-side memory flow (entry points wired by shared.webhook.dispatch / shared.turn.fixed).

Placeholder until the memory issue lands: nothing is offered or stored.
"""
from __future__ import annotations

from linebot.v3.messaging import TextMessage

from shared.turn.menu import expired_button_reply
from shared.webhook.context import EventContext, Reply


def _not_yet() -> Reply:
    return Reply([TextMessage(text="記住飲食偏好的功能還在準備中，目前不會保存任何偏好。")])


def match_text(ctx: EventContext, text: str) -> Reply | None:
    """A request to remember or correct a diet (幫我記住 / 以後都… / 改成…) → a consent card; else None."""
    return None


def view_entry(ctx: EventContext) -> Reply:
    """我的偏好 → the stored value and when it was consented, with correct/forget buttons."""
    return _not_yet()


def forget_entry(ctx: EventContext) -> Reply:
    """忘記我的飲食偏好 → remove the value at once (via functions/memory)."""
    return _not_yet()


def handle_postback(ctx: EventContext, rest: str) -> Reply:
    """``mem:<token>`` postbacks (consent card 同意記住 / 先不要, view's forget button)."""
    return expired_button_reply()
