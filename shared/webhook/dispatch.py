"""Route one verified event to its handler, through tables keyed by event kind, message kind
and postback data prefix (DESIGN §3). Fixed entries and postbacks never import the model."""
from __future__ import annotations

from typing import Callable

from linebot.v3.messaging import TextMessage
from linebot.v3.webhooks import (
    FollowEvent,
    MessageEvent,
    PostbackEvent,
    TextMessageContent,
)

from shared.handoff import flow as handoff_flow
from shared.logs import log
from shared.memory import flow as memory_flow
from shared.turn import fixed, menu
from shared.turn.engine import run_text_turn
from shared.webhook.context import EventContext, Reply

#: LINE's limit on postback data (Messaging API reference, postback action).
POSTBACK_DATA_MAX_CHARS = 300

PostbackHandler = Callable[[EventContext, str], Reply]

#: Postback data is ``<prefix>:<rest>``; each domain registers its prefix here.
POSTBACK_HANDLERS: dict[str, PostbackHandler] = {
    "menu": fixed.handle_menu_postback,
    "places": fixed.handle_places_postback,
    "events": fixed.handle_events_postback,
    "handoff": handoff_flow.handle_postback,
    "mem": memory_flow.handle_postback,
}

#: Free-text hooks tried in order after the fixed entries and before the turn engine; each
#: returns a Reply when the text is theirs (新需求：…, 幫我記住…), else None.
TEXT_HOOKS: tuple[Callable[[EventContext, str], Reply | None], ...] = (
    handoff_flow.match_text,
    memory_flow.match_text,
)


def needs_claim(event) -> bool:
    """True for events that may reply or write; unfollow and unknown kinds need neither."""
    return isinstance(event, (MessageEvent, PostbackEvent, FollowEvent))


def failure_reply() -> Reply:
    """The honest answer when handling an event failed for a reason of ours."""
    return Reply([TextMessage(text="抱歉，這次沒有處理成功，請稍後再試一次。")])


def dispatch_event(ctx: EventContext, event) -> Reply | None:
    """Handle one event. Returns the reply, or None when nothing is to be said.

    Raises:
        StoreError: from a handler; retryable ones make LINE redeliver the event.
    """
    handler = _EVENT_HANDLERS.get(type(event))
    return handler(ctx, event) if handler else None


def _handle_message(ctx: EventContext, event: MessageEvent) -> Reply:
    if ctx.actor is None:
        return menu.no_user_reply()
    if isinstance(event.message, TextMessageContent):
        text = event.message.text or ""
        entry = fixed.FIXED_ENTRIES.get(text.strip())
        if entry is not None:
            return entry(ctx)
        for hook in TEXT_HOOKS:
            reply = hook(ctx, text)
            if reply is not None:
                return reply
        return run_text_turn(ctx, text)
    return menu.non_text_reply()


def _handle_postback(ctx: EventContext, event: PostbackEvent) -> Reply:
    if ctx.actor is None:
        return menu.no_user_reply()
    data = event.postback.data or ""
    if len(data) > POSTBACK_DATA_MAX_CHARS:
        log("WARNING", "postback rejected", reason="too_long", length=len(data))
        return menu.expired_button_reply()
    prefix, _, rest = data.partition(":")
    handler = POSTBACK_HANDLERS.get(prefix)
    if handler is None:
        log("WARNING", "postback rejected", reason="unknown_prefix")
        return menu.expired_button_reply()
    return handler(ctx, rest)


def _handle_follow(ctx: EventContext, event: FollowEvent) -> Reply:
    return menu.welcome_reply()


_EVENT_HANDLERS: dict[type, Callable[[EventContext, object], Reply | None]] = {
    MessageEvent: _handle_message,
    PostbackEvent: _handle_postback,
    FollowEvent: _handle_follow,
}
