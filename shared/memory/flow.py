"""Webhook-side memory flows (routed by shared.routing), no model.

- remember (幫我記住 / 以後都… with a diet) and correct (改成蛋奶素) → a consent card; no write;
  不限 / a negated diet (我不吃素) and reported speech (朋友說他吃素，幫我記住) → a kind reply, no card;
- view (我的偏好) → the value, when it was consented, correct / forget buttons;
- 同意記住 / 先不要 / the view's forget button (``mem:<token>``) → functions/memory, then a fixed reply;
- forget (忘記我的飲食偏好) → a forget token for the current revision, sent to functions/memory at once.

The webhook never writes preferences: functions/memory does (docs/design.md §6). The call to it is made
here, outside any store transaction, within LINE's 2-second budget.
"""
from __future__ import annotations

import time

from shared.areas import match_area
from shared.context import EventContext, Reply
from shared.logs import hash_user, log
from shared.memory import replies
from shared.memory.cards import consent_card, preference_view
from shared.memory.errors import (
    InvalidMemoryCard,
    MemoryCallRejected,
    MemoryNotConfigured,
    MemoryOutcomeUnknown,
    MemoryUnavailable,
)
from shared.memory.phrases import read_memory_request
from shared.memory.port import (
    EXPIRED_MEMORY_CARD,
    INVALID_MEMORY_CARD,
    MEMORY_FORGOTTEN,
    STALE_MEMORY_CARD,
    MemoryResult,
)
from shared.memory.store import read_preference
from shared.memory.tokens import issue_card, signing_keys, verify_card
from shared.replies.menu import expired_button_reply
from shared.signing import SigningKeys
from shared.store import StoreError

#: Time kept for recording the reply attempt and replying after the memory call (seconds).
_REPLY_RESERVE_SECONDS = 0.45


def _keys(ctx: EventContext) -> SigningKeys:
    """Raises MemoryNotConfigured when cards cannot be signed or applied."""
    if ctx.memory is None:
        raise MemoryNotConfigured("MEMORY_FUNCTION_URL is not set")
    return signing_keys(ctx.settings)


def _timeout(ctx: EventContext) -> float:
    left = ctx.deadline_monotonic - time.monotonic() - _REPLY_RESERVE_SECONDS
    return min(ctx.settings.memory_timeout_seconds, left)


def _submit(ctx: EventContext, token: str, operation: str, *,
            tapped: bool = False) -> tuple[MemoryResult | None, Reply | None]:
    """Send a token to functions/memory; on failure, the honest reply instead of a result.

    With ``tapped`` (a card's button) the tap's time goes with it: the verified event's
    ``timestamp`` (``ctx.event_time``), at which functions/memory judges the card's expiry.
    """
    tapped_at = ctx.event_time if tapped else None
    try:
        return ctx.memory.submit(ctx.actor, token, timeout_seconds=_timeout(ctx), tapped_at=tapped_at), None
    except MemoryOutcomeUnknown:
        log("WARNING", "memory call outcome unknown", user=hash_user(ctx.actor.user_id))
        return None, replies.outcome_unknown_reply(operation)
    except MemoryUnavailable as exc:
        log("WARNING", "memory call failed", error=str(exc), user=hash_user(ctx.actor.user_id))
        return None, replies.unavailable_reply(operation)
    except MemoryCallRejected as exc:
        log("ERROR", "memory call rejected", status=exc.status, user=hash_user(ctx.actor.user_id))
        return None, replies.rejected_reply(operation)


def match_text(ctx: EventContext, text: str) -> Reply | None:
    """A request to remember or correct a diet → a consent card (no write); else None.

    Args:
        ctx: the verified event; ``ctx.actor`` is set.
        text: the user's message (never logged).
    Returns:
        A card, or a kind answer without a card (no diet named; 不限 or a negated diet such as
        我不吃素; someone else's habit with 幫我記住; already remembered; feature off), or None when
        the text is not a memory request (negated, reported speech alone, a one-off 今天想吃素, or a
        correction inside a place search such as 「花壇改成蛋奶素」).
    Raises:
        StoreUnavailable: reading the current revision failed; retryable (LINE redelivers).
    """
    request = read_memory_request(text)
    if request is None:
        return None
    if request.kind == "reported":
        return replies.reported_speech_reply(request.dietary_type)  # 朋友說他吃素，幫我記住: no card
    if request.kind == "correct" and match_area(text).kind == "township":
        return None  # 「花壇改成蛋奶素呢」 refines a search; the turn engine answers it
    if request.dietary_type is None and replies.names_health(text):
        return replies.ask_which_diet_reply(health_said=True)  # 幫我記住我有糖尿病: health is never kept
    return offer_card(ctx, request.dietary_type, kind=request.kind, unrecorded=request.unrecorded)


def offer_card(ctx: EventContext, dietary_type: str | None, *, kind: str = "remember",
               unrecorded: str | None = None) -> Reply:
    """A consent card to remember ``dietary_type``; writes nothing (docs/design.md §6 "Propose").

    Shared by the fixed phrase above and the model's ``propose_dietary_memory`` tool.

    Args:
        ctx: the verified event; ``ctx.actor`` is set.
        dietary_type: a savable diet (vegetarian, vegan, ovo_lacto, lacto); ``any`` and None
            get a kind answer without a card.
        kind: ``remember`` or ``correct``; logged.
        unrecorded: a finer diet word the catalog does not record (五辛素), said before the card.
    Returns:
        The Flex consent card, or a kind answer (不限 is not stored; already remembered; feature off).
    Raises:
        StoreUnavailable: reading the current revision failed; retryable.
    """
    if dietary_type is None:
        return replies.ask_which_diet_reply()
    if dietary_type == "any":
        return replies.any_not_stored_reply()
    try:
        keys = _keys(ctx)
    except MemoryNotConfigured:
        return replies.not_configured_reply()
    snapshot = read_preference(ctx.store, ctx.actor)
    if snapshot.dietary_type == dietary_type:
        return replies.same_value_reply(dietary_type)
    ttl = ctx.settings.memory_card_ttl_seconds
    save, save_token = issue_card(keys, ctx.actor, revision=snapshot.revision, dietary_type=dietary_type,
                                  operation="save", now=ctx.now, ttl_seconds=ttl)
    _, decline_token = issue_card(keys, ctx.actor, revision=snapshot.revision, dietary_type=None,
                                  operation="decline", now=ctx.now, ttl_seconds=ttl, nonce=save.nonce)
    log("INFO", "memory card offered", kind=kind, revision=snapshot.revision,
        user=hash_user(ctx.actor.user_id))
    card = consent_card(save, save_token, decline_token, current=snapshot.dietary_type, tz=ctx.settings.tz)
    if unrecorded:  # 我吃五辛素 幫我記住: the finer word is not what the card keeps
        return Reply([replies.unrecorded_message(unrecorded, dietary_type), card])
    return Reply([card])


def view_entry(ctx: EventContext) -> Reply:
    """我的偏好 → the stored value and when it was consented, with correct / forget buttons.

    Raises:
        StoreUnavailable: retryable.
    """
    if ctx.actor is None:
        return expired_button_reply()
    snapshot = read_preference(ctx.store, ctx.actor)
    forget = forget_token = None
    if snapshot.dietary_type:
        try:
            forget, forget_token = issue_card(_keys(ctx), ctx.actor, revision=snapshot.revision, dietary_type=None,
                                              operation="forget", now=ctx.now,
                                              ttl_seconds=ctx.settings.memory_card_ttl_seconds)
        except MemoryNotConfigured:
            pass  # no button; the text entry still explains how to forget
    return Reply(preference_view(snapshot, forget, forget_token, tz=ctx.settings.tz))


def forget_entry(ctx: EventContext) -> Reply:
    """忘記我的飲食偏好 → removed at once through functions/memory (revision + 1, no diet kept).

    Also cancels every card still waiting for 同意 (they carry the old revision). One retry when
    the revision moved between the read and the call.

    Raises:
        StoreUnavailable: reading the revision failed; retryable.
    """
    if ctx.actor is None:
        return expired_button_reply()
    try:
        keys = _keys(ctx)
    except MemoryNotConfigured:
        return replies.not_configured_reply()
    for _ in range(2):
        snapshot = read_preference(ctx.store, ctx.actor)
        _, token = issue_card(keys, ctx.actor, revision=snapshot.revision, dietary_type=None, operation="forget",
                              now=ctx.now, ttl_seconds=ctx.settings.memory_card_ttl_seconds)
        result, failure = _submit(ctx, token, "forget")
        if failure is not None:
            return failure
        if result.outcome != STALE_MEMORY_CARD:
            break
    if result.outcome == MEMORY_FORGOTTEN and snapshot.dietary_type is None:
        return replies.nothing_to_forget_reply()
    return replies.outcome_reply(result)


def handle_postback(ctx: EventContext, rest: str) -> Reply:
    """``mem:<token>`` (同意記住 / 先不要 / 忘記這個偏好) → functions/memory → a fixed reply.

    Args:
        ctx: the verified event; the actor is the account that tapped.
        rest: the token (the data after ``mem:``). It is verified here, to refuse a foreign or
            altered card without a call and to word failures by its operation, and again by
            functions/memory, the authority.
    """
    if ctx.actor is None or not rest:
        return expired_button_reply()
    try:
        card = verify_card(_keys(ctx), ctx.actor, rest)  # also checked by functions/memory
    except MemoryNotConfigured:
        return replies.not_configured_reply()
    except InvalidMemoryCard as exc:
        log("WARNING", "memory card refused", reason=str(exc), user=hash_user(ctx.actor.user_id))
        return replies.outcome_reply(MemoryResult(INVALID_MEMORY_CARD, 0))
    result, failure = _submit(ctx, rest, card.operation, tapped=True)
    if failure is not None:
        return failure
    if result.outcome == EXPIRED_MEMORY_CARD and card.operation == "forget":
        # An expired 「忘記」 button is not a dead end: say so, and offer a fresh one at once.
        return _with_fresh_forget_button(ctx, replies.outcome_reply(result))
    return replies.outcome_reply(result)


def _with_fresh_forget_button(ctx: EventContext, answer: Reply) -> Reply:
    """``answer`` followed by the preference view, whose 「忘記這個偏好」 is a new token for the
    current revision (or, when nothing is remembered any more, the view that says so)."""
    try:
        view = view_entry(ctx)
    except StoreError as exc:  # the text still says how to forget by typing
        log("WARNING", "fresh forget button not offered", error=exc.__class__.__name__)
        return answer
    follow_up = [*answer.follow_up, *view.messages][:5] if answer.follow_up else None
    return Reply([*answer.messages, *view.messages][:5], follow_up=follow_up)
