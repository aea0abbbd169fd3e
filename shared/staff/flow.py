"""Webhook side of the staff group: which events are staff events, and the staff buttons.

``owns(settings, event)`` is checked before any resident routing: every event from the staff group,
and every postback whose data starts with ``staff:`` wherever it comes from, is handled here and
nowhere else (a staff member's text in the group never becomes a resident's turn or request). A
card button's label typed there as the whole text (「我來處理」) gets one line: the card's button does
it, typing changes nothing. A recognized word (a resident's entry, or 說明 / help) gets the group's
help; other text, staff talking among themselves, gets no answer.

A staff button is acted on only when, in order: the event comes from ``LOCAL_STAFF_GROUP_ID``, its
user is allowed (``LOCAL_STAFF_USER_IDS``), and the card's signature holds for this group. Anything
else changes nothing and gets a kind refusal. An applied action answers the tapper with the
request's new card (「已完成」/「轉回待處理」 after 「我來處理」) and queues the resident's notice,
which the transaction already wrote; a stale card (an older revision) says it is not the latest and
nothing changed, then who holds the request, with the current card.

Source: docs/design.md §10, §2 (identity from the verified source only).
"""
from __future__ import annotations

import functools
from collections.abc import Callable

from linebot.v3.webhooks import MessageEvent, PostbackEvent, TextMessageContent

from shared.config import Settings
from shared.context import EventContext, Reply
from shared.handoff import staff_outbox
from shared.logs import hash_user, log
from shared.staff import access, cards, relay, transitions, wording
from shared.store import StoreError
from shared.text import reading_form


def owns(settings: Settings, event: object) -> bool:
    """True for events the staff side handles: any event from the staff group, any ``staff:`` postback."""
    if access.in_staff_group(settings, getattr(event, "source", None)):
        return True
    if isinstance(event, PostbackEvent):
        data = getattr(event.postback, "data", None) or ""
        return data.startswith(cards.POSTBACK_PREFIX + ":")
    return False


#: Words staff may type to ask what LOCAL does in the group (compared whole, in reading form).
STAFF_HELP_WORDS = frozenset({"說明", "使用說明", "幫助", "求助", "指令", "功能", "怎麼用", "help", "menu", "?", "？"})


@functools.cache
def button_words() -> dict[str, str]:
    """A card button's label typed as the whole text (in reading form) → the label: answered with one
    line pointing to the button (``wording.button_word_message``), since typing it changes nothing.
    Built on first use, not at import: ``reading_form`` loads OpenCC's tables (about 40 MiB), which
    the webhook's cold start must not pay for an event that reads no text."""
    return {reading_form(label).strip(): label for label in cards.LABELS.values()}


def handle_event(ctx: EventContext, event: object, *,
                 resident_word: Callable[[str], bool] = lambda text: False) -> Reply | None:
    """One staff-side event: postbacks are staff buttons; a text message whose whole text is a card
    button's label (「我來處理」) gets one line pointing to the button (``wording.button_word_message``),
    one whose whole text is a recognized word gets the group's help (``wording.group_help_message``);
    any other message, and
    other kinds, get no answer: the staff group is a place for people to talk.

    Args:
        ctx: the verified event.
        event: a line-bot-sdk v3 webhook event that ``owns`` accepted.
        resident_word: True for a resident's word (a menu entry, 新需求：…, 幫我記住…; given by
            shared.routing, which knows them), answered with the help and where that is done.
    Source: docs/design.md §10 (a resident's word in the staff group gets help, not silence).
    """
    if isinstance(event, PostbackEvent):
        return handle_postback(ctx, event.source, event.postback.data or "")
    message = getattr(event, "message", None)
    if not isinstance(event, MessageEvent) or not isinstance(message, TextMessageContent):
        return None
    text = message.text or ""
    said = reading_form(text).strip()
    label = button_words().get(said)
    if label is not None:
        log("INFO", "staff group button word", user=hash_user(access.source_fields(event.source)[2]))
        return Reply([wording.button_word_message(label)])
    resident = resident_word(text)
    if not resident and said not in STAFF_HELP_WORDS:
        return None  # staff talking among themselves
    log("INFO", "staff group help", resident_word=resident, user=hash_user(access.source_fields(event.source)[2]))
    return Reply([wording.group_help_message(resident_word=resident)])


def handle_postback(ctx: EventContext, source: object, data: str) -> Reply:
    """A staff button: check the source, the member and the card, then apply it once."""
    _, group_id, user_id = access.source_fields(source)
    try:
        staff = access.staff_member(ctx.settings, source)
    except access.NotStaff as exc:
        log("WARNING", "staff action refused", reason=exc.reason, user=hash_user(user_id),
            group=hash_user(group_id))
        return Reply([wording.refused_message(exc.reason)])
    prefix, _, rest = data.partition(":")
    try:
        if prefix != cards.POSTBACK_PREFIX:
            raise cards.CardRefused("malformed")
        reference = cards.verify(ctx.settings, rest)
    except cards.CardRefused as exc:
        log("WARNING", "staff action refused", reason=exc.reason, staff=staff.hashed)
        return Reply([wording.refused_message(exc.reason)])
    try:
        result = transitions.apply(ctx.store, ctx.settings.tenant_id, reference, staff, now=ctx.now)
    except StoreError as exc:
        log("WARNING", "staff action not recorded", error=exc.__class__.__name__, op=reference.op, staff=staff.hashed)
        return Reply([wording.busy_message()])
    log("INFO", "staff action answered", status=result.status, op=reference.op, staff=staff.hashed,
        request_id=(result.request or {}).get("request_id"))
    if result.status == transitions.NOT_FOUND or result.request is None:
        return Reply([wording.refused_message("not_found")])
    if result.notice is not None:
        relay.enqueue_notice(ctx.queue, ctx.settings.tenant_id, result.notice.doc_id)
    card = _card(ctx.settings, reference.operation_doc_id, result.request)
    if result.status == transitions.APPLIED:
        first = wording.applied_message(reference.op, staff, result.request, notified=result.notice is not None,
                                        tz=ctx.settings.tz)
    elif result.status == transitions.ALREADY_APPLIED:
        first = wording.already_applied_message(staff, result.request, ctx.settings.tz)
    else:
        first = wording.stale_message(staff, result.request, ctx.settings.tz)
    return Reply([first] + ([card] if card is not None else []))


def _card(settings: Settings, operation_doc_id: str, request: dict):
    """The request's current card, when its state still offers buttons."""
    if (request.get("human_state") or staff_outbox.AWAITING) not in cards.BUTTONS:
        return None
    return cards.request_card(settings, operation_doc_id, request, heading="服務詢問（最新狀態）")

