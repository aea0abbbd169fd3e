"""Every route from a verified LINE event to its handler, in one place (docs/design.md §3).

Read top to bottom, in the order an event meets them:

0. ``shared.staff.flow.owns``: every event from the staff group (``LOCAL_STAFF_GROUP_ID``) and
   every ``staff:`` postback, wherever tapped, goes to the staff side and nowhere else (docs/design.md §10).
1. ``EVENT_HANDLERS``: the event's kind (message, postback, follow); other kinds get no reply.
   A message goes by its content's kind (``MESSAGE_HANDLERS``): text (2 below), a shared location
   (the nearest shops: shared.turn.near_me), anything else the short fixed answer.
2. A text message: ``FIXED_ENTRIES`` (the exact menu words), then ``TEXT_HOOKS`` (新需求：…,
   幫我記住…), then the turn engine (offline router, or the model when configured).
3. A postback: data is ``<prefix>:<rest>``, at most ``POSTBACK_DATA_MAX_CHARS``;
   ``POSTBACK_HANDLERS`` picks the handler by prefix, and ``menu:<name>`` picks from ``MENU_POSTBACKS``.

Before 2 and 3: text that cannot be stored (a lone surrogate) gets a reason the resident can act
on, and in a group or room what is one-to-one (``ONE_TO_ONE_*``: a handoff request, a dietary
memory) is declined there with an offer of the one-to-one chat, so no card or text of theirs is
shown to the group.

This module sits above the domains (turn, handoff, memory) and below the webhook use case: the
domains never import it, and nothing here imports ADK or genai (cold start is part of the product).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from linebot.v3.messaging import TextMessage
from linebot.v3.webhooks import (
    FollowEvent,
    LocationMessageContent,
    MessageEvent,
    PostbackEvent,
    TextMessageContent,
    UnsendEvent,
)

from shared.context import EventContext, Reply
from shared.handoff import cancel_words, status_words
from shared.handoff import flow as handoff_flow
from shared.handoff.drafts import request_text_of
from shared.line import limits
from shared.logs import log
from shared.memory import diet_dropped
from shared.memory import flow as memory_flow
from shared.memory.phrases import read_memory_request
from shared.places.snapshots import scope_for_store
from shared.replies import menu, refusals
from shared.signing import POSTBACK_DATA_MAX_CHARS
from shared.staff import flow as staff_flow
from shared.text import reading_form
from shared.turn import near_me, pickers, request_text
from shared.turn.crisis import is_crisis, is_distress
from shared.turn.engine import run_text_turn
from shared.turn.problem_offer import problem_alone_reply, with_problem_offer
from shared.turn.router import is_emergency, is_fraud, route
from shared.turn.rules.problems import problem_said

Entry = Callable[[EventContext], Reply]
TextHook = Callable[[EventContext, str], "Reply | None"]
PostbackHandler = Callable[[EventContext, str], Reply]

#: Exact texts (after trimming spaces), answered with no model: the rich menu and quick replies.
FIXED_ENTRIES: dict[str, Entry] = {
    "我要預約": menu.booking_menu_reply,
    "選單": menu.menu_reply,
    "查蔬食": pickers.places_picker,
    "查活動": pickers.events_picker,
    "留下服務詢問": handoff_flow.start_entry,
    "查看原本服務單": handoff_flow.status_entry,
    "我的偏好": memory_flow.view_entry,
    "忘記我的飲食偏好": memory_flow.forget_entry,
}

#: Free-text hooks tried in order after the fixed entries and before the turn engine; each
#: returns a Reply when the text is theirs (新需求：…, 幫我記住…, 算了 while a card is open, 好了嗎 with a
#: request to ask about, the
#: plain text right after 留下服務詢問), else None.
TEXT_HOOKS: tuple[TextHook, ...] = (
    cancel_words.match_text,
    handoff_flow.match_text,
    status_words.match_text,
    memory_flow.match_text,
    diet_dropped.match_text,
    request_text.match_text,
)

#: ``menu:<name>`` postbacks (rich menu areas and buttons).
MENU_POSTBACKS: dict[str, Entry] = {
    "main": menu.menu_reply,
    "places": pickers.places_picker,
    "events": pickers.events_picker,
    "handoff": handoff_flow.start_entry,
    "status": handoff_flow.status_entry,
    "preference": memory_flow.view_entry,
    "privacy_more": menu.privacy_more_reply,
}


def handle_menu_postback(ctx: EventContext, rest: str) -> Reply:
    """``menu:<name>`` → the entry in ``MENU_POSTBACKS``; an unknown name → the expired-button reply."""
    handler = MENU_POSTBACKS.get(rest)
    return handler(ctx) if handler else menu.expired_button_reply()


#: Postback data is ``<prefix>:<rest>``; each domain registers its prefix here.
POSTBACK_HANDLERS: dict[str, PostbackHandler] = {
    "menu": handle_menu_postback,
    "places": pickers.handle_places_postback,
    "events": pickers.handle_events_postback,
    "handoff": handoff_flow.handle_postback,
    "mem": memory_flow.handle_postback,
}


#: One-to-one only (docs/design.md §4, §6: a group never sees one account's requests or memory):
#: exact entries, text matchers (a result other than None means the text is theirs) and postback
#: data prefixes declined in a group or room.
ONE_TO_ONE_ENTRIES = frozenset({"留下服務詢問", "查看原本服務單", "我的偏好", "忘記我的飲食偏好"})
ONE_TO_ONE_TEXT: tuple[Callable[[str], object], ...] = (request_text_of, read_memory_request,
                                                        diet_dropped.diet_dropped)
ONE_TO_ONE_POSTBACKS = ("handoff:", "mem:", "menu:handoff", "menu:status", "menu:preference")
#: Messages per reply (Messaging API, "Send reply message": max 5).
REPLY_MAX_MESSAGES = 5
#: LINE source types of a shared chat (Messaging API, webhook event source).
SHARED_CHATS = frozenset({"group", "room"})


def is_one_to_one_text(text: str) -> bool:
    """True when ``text`` asks for something that belongs in a one-to-one chat."""
    return text.strip() in ONE_TO_ONE_ENTRIES or any(match(text) is not None for match in ONE_TO_ONE_TEXT)


def _resident_word(text: str) -> bool:
    """True for a word that is a resident's entry (a menu word, 新需求：…, 幫我記住…): recognized in the
    staff group, where it gets the group's help instead of silence."""
    return text.strip() in FIXED_ENTRIES or is_one_to_one_text(text)


def _in_shared_chat(event) -> bool:
    return getattr(getattr(event, "source", None), "type", None) in SHARED_CHATS


def _chat_id(event) -> str | None:
    """The group or room id of a shared chat's event (line-bot-sdk ``GroupSource.group_id``,
    ``RoomSource.room_id``), None one-to-one."""
    if not _in_shared_chat(event):
        return None
    source = getattr(event, "source", None)
    return getattr(source, "group_id", None) or getattr(source, "room_id", None)


def route_text(ctx: EventContext, text: str) -> Reply:
    """A text message from a known user → fixed entry, else a text hook, else the turn engine.

    Words of suicidal intent or self-harm (shared.turn.crisis) are answered by the offline router's
    crisis reply (1925, 119, 110) whatever answers the rest: never deferred to the model, and put
    first beside a hook's reply (新需求：我阿公說他不想活了 still gets its confirmation card). An
    emergency (跌倒了起不來: shared.turn.router.is_emergency), distress (心情不好: the gentle line with
    1925) and a likely scam (shared.turn.router.is_fraud: the 165 warning, which wins over any other
    reading but the crisis reply) are the router's too, never the model's; beside a hook's reply the scam
    warning comes first as well (新需求：有人叫我去ATM轉帳 still gets its confirmation card).
    A problem for the town hall said in the message (…順便問一下 水溝堵住了要找誰) is offered as a request
    beside the answer (shared.turn.problem_offer), on either reader's path, one-to-one only; said alone
    (路燈壞了: the offline router's ``handoff_info``), the offer is the whole answer.
    """
    entry = FIXED_ENTRIES.get(text.strip())
    if entry is not None:
        return entry(ctx)
    form = reading_form(text)
    crisis, fraud = is_crisis(form), is_fraud(form)
    for hook in TEXT_HOOKS:
        reply = hook(ctx, text)
        if reply is not None:
            return with_crisis_first(reply, crisis=crisis, fraud=fraud)
    # the router's rules 0 and 1, first on every path
    urgent = crisis or fraud or is_distress(form) or is_emergency(form)
    if urgent:
        return run_text_turn(ctx, text)
    problem = None if ctx.shared_chat else problem_said(text)  # 新需求 is one-to-one; the words as typed
    if problem and route(text).tool == "handoff_info":  # said alone: the offer is the whole answer
        return problem_alone_reply(problem)
    reply = (ctx.text_turn or run_text_turn)(ctx, text)
    return with_problem_offer(reply, problem) if problem else reply


def with_crisis_first(reply: Reply, *, crisis: bool = True, fraud: bool = False) -> Reply:
    """``reply`` with the crisis text and then the scam warning first, as one text (at most 5 messages,
    LINE's limit per reply); ``reply`` itself when neither is said."""
    lines = [menu.LIMIT_WORDS[kind] for kind, said in (("crisis", crisis), ("fraud", fraud)) if said]
    if not lines:
        return reply
    return replace(reply, messages=[TextMessage(text="\n".join(lines)), *reply.messages][:REPLY_MAX_MESSAGES])


def route_postback(ctx: EventContext, data: str) -> Reply:
    """Postback data from a known user → the handler for its prefix; too long or unknown → expired."""
    if limits.units(data) > POSTBACK_DATA_MAX_CHARS:
        log("WARNING", "postback rejected", reason="too_long", length=limits.units(data))
        return menu.expired_button_reply()
    prefix, _, rest = data.partition(":")
    handler = POSTBACK_HANDLERS.get(prefix)
    if handler is None:
        log("WARNING", "postback rejected", reason="unknown_prefix")
        return menu.expired_button_reply()
    return handler(ctx, rest)


def _text_message(ctx: EventContext, event: MessageEvent) -> Reply:
    text = event.message.text or ""
    if not refusals.is_storable(text):
        log("WARNING", "text refused", reason="unstorable_characters")
        return refusals.unstorable_text_reply()
    if _in_shared_chat(event) and is_one_to_one_text(text):
        log("INFO", "one-to-one request declined in a shared chat", chat=event.source.type)
        return refusals.one_to_one_reply(ctx.settings)
    return route_text(replace(ctx, message_id=event.message.id, shared_chat=_in_shared_chat(event),
                              chat_id=_chat_id(event)), text)


def _location_message(ctx: EventContext, event: MessageEvent) -> Reply:
    """A shared location → the nearest shops, kept 30 minutes for 附近… (shared.turn.near_me). Its
    degrees and address are never logged."""
    message = event.message
    return near_me.location_reply(replace(ctx, message_id=message.id, shared_chat=_in_shared_chat(event),
                                          chat_id=_chat_id(event)),
                                  message.latitude, message.longitude, message.address)


#: A message's content kind (line-bot-sdk v3 webhook models) → its handler; other kinds (stickers,
#: images, audio …) get the short fixed answer with the menu.
MESSAGE_HANDLERS: dict[type, Callable[[EventContext, MessageEvent], Reply]] = {
    TextMessageContent: _text_message,
    LocationMessageContent: _location_message,
}


def _handle_message(ctx: EventContext, event: MessageEvent) -> Reply:
    if ctx.actor is None:
        return menu.no_user_reply()
    handler = MESSAGE_HANDLERS.get(type(event.message))
    return handler(ctx, event) if handler else menu.non_text_reply()


def _handle_postback(ctx: EventContext, event: PostbackEvent) -> Reply:
    if ctx.actor is None:
        return menu.no_user_reply()
    data = event.postback.data or ""
    if not refusals.is_storable(data):
        return menu.expired_button_reply()
    if _in_shared_chat(event) and data.startswith(ONE_TO_ONE_POSTBACKS):
        return refusals.one_to_one_reply(ctx.settings)
    return route_postback(replace(ctx, shared_chat=_in_shared_chat(event), chat_id=_chat_id(event)), data)


def _handle_follow(ctx: EventContext, event: FollowEvent) -> Reply:
    return menu.welcome_reply(ctx)


def _handle_unsend(ctx: EventContext, event: UnsendEvent) -> Reply | None:
    if ctx.actor is None:
        return None
    handoff_flow.handle_unsend(ctx, event.unsend.message_id)
    return None


#: Event kind → handler (line-bot-sdk v3 webhook models). Kinds not listed get no reply.
EVENT_HANDLERS: dict[type, Callable[[EventContext, object], Reply | None]] = {
    MessageEvent: _handle_message,
    PostbackEvent: _handle_postback,
    FollowEvent: _handle_follow,
    UnsendEvent: _handle_unsend,  # no reply (LINE gives no reply token); withdraws an open draft
}


def needs_claim(event) -> bool:
    """True for events that may reply or write (``EVENT_HANDLERS``); unfollow and unknown kinds need neither."""
    return isinstance(event, tuple(EVENT_HANDLERS))


def failure_reply() -> Reply:
    """The honest answer when handling an event failed for a reason of ours."""
    return Reply([TextMessage(text=menu.FAILED_TEXT)])


#: Fixed entries whose reply writes nothing and sends nothing (no store, no queue, no LINE call):
#: the webhook may compute it before claiming the event, then claim the event and record the
#: reply as started in one store transaction (``side_effect_free_reply``).
SIDE_EFFECT_FREE_ENTRIES = frozenset({"我要預約", "選單"})


def side_effect_free_reply(ctx: EventContext, event) -> Reply | None:
    """``dispatch_event``'s reply when routing ``event`` is known to have no side effects, else None.

    Only a one-to-one or group text message of a known user whose text is a
    ``SIDE_EFFECT_FREE_ENTRIES`` word, outside the staff group, qualifies: its route is the fixed
    entry's, which only builds messages. The reply is ``dispatch_event``'s own, so it is the same.
    """
    if not (isinstance(event, MessageEvent) and isinstance(event.message, TextMessageContent)
            and ctx.actor is not None and (event.message.text or "").strip() in SIDE_EFFECT_FREE_ENTRIES):
        return None
    if staff_flow.owns(ctx.settings, event):
        return None
    return dispatch_event(ctx, event)


def dispatch_event(ctx: EventContext, event) -> Reply | None:
    """Handle one verified event (a line-bot-sdk v3 ``Event``).

    Returns:
        The reply, or None when nothing is to be said (an event kind with no handler).
    Raises:
        StoreError: from a handler; retryable ones make LINE redeliver the event.
    """
    with scope_for_store(ctx.store):  # the newest places snapshot answers this event (read on first use)
        if staff_flow.owns(ctx.settings, event):  # the staff group, and staff buttons wherever tapped
            return staff_flow.handle_event(ctx, event, resident_word=_resident_word)
        handler = EVENT_HANDLERS.get(type(event))
        return handler(ctx, event) if handler else None
