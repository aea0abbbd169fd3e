"""Webhook-side handoff flow: draft → confirmation card → create exactly once (docs/design.md §4).

Entry points (routed by shared.routing): ``match_text`` (text
``新需求：…`` → a card), ``start_entry`` (留下服務詢問 → how to ask), ``status_entry``
(查看原本服務單), ``handle_postback`` (``handoff:<signed reference>`` from the card's buttons).

Confirm, within the webhook's 2-second budget: the create is one store transaction whose call
has the store deadline (``store_deadline_seconds``). Any store error on it — a timeout after the
write was sent, a slow or locked store, an injected fault — is an unknown outcome: the reply
state is ``pending_verification`` (the user is told it is being checked, nothing more) and a
reconcile task named from a hash of the key is queued. Nothing here imports the model.

Every confirmation answer says what it carries (``Reply.carries``, recorded by the webhook before
it is sent): the receipt of the operation's notice (a first answer or a repeat), or "checking"
about it. The check after "checking", the relay and the re-queue read that record.
"""
from __future__ import annotations

from datetime import datetime

from shared.clock import from_iso, to_iso
from shared.context import EventContext, Reply
from shared.handoff import awaiting, cards, codes, drafts, faults, notify, records, staff_outbox, status, wording
from shared.handoff.outcome import pending_verification
from shared.handoff.reconcile_task import RELAY, UNKNOWN_OUTCOME, ReconcileTask, enqueue
from shared.handoff.requests import (
    ALREADY_CREATED,
    AWAITING_ACCEPTANCE,
    REQUEST_CREATED,
    CreateResult,
    create_request,
)
from shared.logs import hash_user, log
from shared.outbox import AnswerCarries, Carried, notice_ref
from shared.replies import refusals
from shared.replies.menu import HELP_CHOICES, MENU_CHOICES, handoff_info_reply, handoff_prompt_reply, with_menu
from shared.signing import NOT_CONFIGURED
from shared.store import StoreError


def match_text(ctx: EventContext, text: str) -> Reply | None:
    """A ``新需求：…`` message → the confirmation card (or a kind refusal); any other text → None."""
    request_text = drafts.request_text_of(text)
    if request_text is None:
        return None
    awaiting.end(ctx)  # the text came with its 新需求: nothing more is awaited
    return draft_reply(ctx, request_text)


def draft_reply(ctx: EventContext, request_text: str) -> Reply:
    """The confirmation card of ``request_text`` exactly as shown (or a kind refusal: empty, too long,
    the day's cap, a store that could not keep the draft, no signing key)."""
    if not ctx.settings.signing_key:
        log("ERROR", "handoff draft refused: LOCAL_SIGNING_KEY is not configured")
        return Reply([with_menu(wording.card_refused_message(NOT_CONFIGURED), HELP_CHOICES)])
    try:
        result = drafts.create_draft(ctx.store, ctx.actor, request_text, now=ctx.now, settings=ctx.settings,
                                     source_message_id=ctx.message_id)
    except StoreError as exc:
        log("WARNING", "handoff draft not stored", error=exc.__class__.__name__, user=hash_user(ctx.actor.user_id))
        return Reply([with_menu(wording.store_busy_message(), HELP_CHOICES)])
    if result.draft is None:
        log("INFO", "handoff draft refused", status=result.status, user=hash_user(ctx.actor.user_id))
        refused = wording.draft_refused_message(result.status, length=result.length, limit=result.limit)
        choices = (wording.STATUS_ENTRY, *MENU_CHOICES[:2]) if result.status == "daily_cap_reached" else HELP_CHOICES
        return Reply([with_menu(refused, choices)])
    log("INFO", "handoff draft created", user=hash_user(ctx.actor.user_id))
    card = cards.confirmation_card(ctx.settings, result.draft)
    # read before the card: a resident who sends the same words again to ask "did it go through?"
    # would otherwise tap the card's 確認送出 before reaching the note below it; and a resident whose
    # earlier card was replaced learns that only this one counts
    notes = wording.card_notes(ctx.settings, replaced=result.replaced,
                               same_request=_open_request_with_content(ctx, result.draft.content_hash))
    return Reply([card] if notes is None else [notes, card])


#: Requests still in a person's hands: the same text again is most likely the same matter.
_OPEN_HUMAN_STATES = frozenset({AWAITING_ACCEPTANCE, staff_outbox.ACCEPTED})


def _open_request_with_content(ctx: EventContext, content_hash: str) -> dict | None:
    """The actor's latest request when it is still open and has this content hash (the same text sent
    again), else None. A store that cannot be read gives None: the card still goes."""
    try:
        latest = status.latest_request(ctx.store, ctx.actor)
    except StoreError:
        return None
    if latest and latest.get("content_hash") == content_hash and latest.get("human_state") in _OPEN_HUMAN_STATES:
        return latest
    return None


def handle_unsend(ctx: EventContext, message_id: str | None) -> None:
    """An ``unsend`` event: the open draft made from that message is cancelled and its text deleted.

    Returns None: LINE gives an unsend event no reply token, and nothing is said.
    Raises:
        StoreError: retryable ones make the event go to the queue (or LINE redeliver it).
    """
    if not message_id:
        return None
    if drafts.withdraw_draft(ctx.store, ctx.actor, message_id, now=ctx.now):
        log("INFO", "handoff draft withdrawn: its message was unsent", user=hash_user(ctx.actor.user_id))
    return None


def start_entry(ctx: EventContext) -> Reply:
    """留下服務詢問 (and the router's ``handoff_info``: 我要找里長) → how to leave a request for a person.

    One-to-one, the next plain message is then awaited as the request's text (``awaiting``,
    ``shared.turn.request_text``) and the prompt says to just type it; where that mark cannot be kept
    (a group, no signing key, a store error) the prompt shows the 「新需求：」 form."""
    if not ctx.shared_chat and awaiting.start(ctx):
        return handoff_prompt_reply()
    return handoff_info_reply(ctx)


def cancel_help_entry(ctx: EventContext) -> Reply:
    """不要了 取消, 我要撤回服務單 (the router's ``handoff_cancel_help``): a registered request cannot be
    withdrawn here; the resident's latest open request is named, with a button that drafts its cancel as a
    new request (``wording.cancel_registered_message``). In a group or room no number is named (others
    read it); a store that cannot be read gives the words without a number."""
    shown = None
    if not ctx.shared_chat and ctx.actor is not None:
        try:
            shown = open_request_number(ctx)
        except StoreError as exc:
            log("WARNING", "handoff cancel help without a number", error=exc.__class__.__name__)
    return Reply([wording.cancel_registered_message(shown)])


def open_request_number(ctx: EventContext, *, within_seconds: float | None = None) -> str | None:
    """The number of the actor's latest request while it is open (awaiting acceptance or accepted), or None;
    with ``within_seconds``, only when that request was made at most that many seconds before ``ctx.now``.

    Raises:
        StoreError: the store could not be read.
    """
    latest = status.latest_request(ctx.store, ctx.actor)
    if latest is None or latest.get("human_state") not in _OPEN_HUMAN_STATES:
        return None
    if within_seconds is not None and (ctx.now - from_iso(latest["created_at"])).total_seconds() > within_seconds:
        return None
    return wording.number(ctx.settings, latest)


def status_entry(ctx: EventContext, code: codes.DisplayCode | None = None) -> Reply:
    """查看原本服務單 (or a free-text or model ask for the same) → the status of the user's requests;
    with ``code`` (「A7K-3QF 處理到哪了」, read by the router), that request first.

    In a group or room (``ctx.shared_chat``) the one-to-one reply instead: every member would read
    the sender's requests. Every path to a status answer (fixed entry, router, model tool, postback,
    rich menu) comes here.
    """
    if ctx.shared_chat:
        log("INFO", "request status declined in a shared chat")
        return refusals.one_to_one_reply(ctx.settings)
    try:
        return Reply([with_menu(status.status_message(ctx.settings, ctx.store, ctx.actor, code))])
    except StoreError as exc:
        log("WARNING", "handoff status unavailable", error=exc.__class__.__name__)
        return Reply([wording.store_busy_status_message()])


def handle_postback(ctx: EventContext, rest: str) -> Reply:
    """``handoff:<reference>``: 「確認送出」 creates the request once; 「取消」 cancels the draft."""
    try:
        reference = cards.verify_reference(ctx.settings, ctx.actor, rest)
    except cards.CardRefused as exc:
        log("WARNING", "handoff card refused", reason=exc.reason, user=hash_user(ctx.actor.user_id))
        return Reply([with_menu(wording.card_refused_message(exc.reason), HELP_CHOICES)])  # never a dead end
    if reference.op == cards.CANCEL:
        return _cancel(ctx, reference)
    return _confirm(ctx, reference)


def _cancel(ctx: EventContext, reference: cards.Reference) -> Reply:
    try:
        result = drafts.cancel_draft(ctx.store, reference.operation, reference.content_hash, now=ctx.now)
    except StoreError as exc:
        log("WARNING", "handoff cancel not stored", error=exc.__class__.__name__)
        return Reply([with_menu(wording.store_busy_cancel_message(), HELP_CHOICES)])
    shown = wording.number(ctx.settings, result.number_fields()) if result.request_id else None
    return Reply([with_menu(wording.cancel_message(result.status, shown), HELP_CHOICES)])


def _tapped_at(ctx: EventContext) -> datetime:
    """When the resident tapped 確認送出 (UTC, aware): the event's own signed ``timestamp``, never later
    than now, so a confirmation queued or retried past the card's expiry is judged at the tap, as the
    consent cards are (docs/design.md §4); ``ctx.now`` when the event carries no time."""
    return min(ctx.event_time, ctx.now) if ctx.event_time is not None else ctx.now


def _confirm(ctx: EventContext, reference: cards.Reference) -> Reply:
    operation = reference.operation
    owner = notify.reply_owner(ctx.webhook_event_id)
    lease = ctx.settings.event_lease_seconds
    # The confirmation is durable before anything else: if the create's outcome is then unknown,
    # the sweep finds this draft however long reconcile is down, and expiry is judged at this tap.
    # A store that cannot take even this write is met by the create as before (an unknown outcome,
    # whose reconcile task carries the tap's time).
    tapped = _tapped_at(ctx)
    try:
        drafts.mark_confirming(ctx.store, operation, reference.content_hash, now=tapped,
                               event_id=ctx.webhook_event_id)
    except StoreError as exc:
        log("WARNING", "handoff confirmation not recorded before the create", error=exc.__class__.__name__,
            user=hash_user(ctx.actor.user_id))
    try:
        result = faults.webhook_create(ctx.settings, lambda: create_request(
            ctx.store, operation, reference.content_hash, now=ctx.now, tz=ctx.settings.tz, source="webhook",
            notice_owner=owner, lease_seconds=lease, event_id=ctx.webhook_event_id,
            staff_group_id=ctx.settings.staff_group_id, confirmed_at=tapped))
    except StoreError as exc:
        return _pending(ctx, reference, exc)
    _log_answer(ctx, result.status, result)
    if result.status == REQUEST_CREATED:
        # The outbox relay: if this reply never reaches the user, the queue pushes the receipt
        # once the reply's lease has ended (a delivered notice makes that task a no-op).
        enqueue(ctx.queue, ReconcileTask(operation, reference.content_hash, RELAY, tag=ctx.webhook_event_id),
                delay_seconds=lease + 1.0)
        staff_outbox.announce_created(ctx.queue, ctx.settings, operation.doc_id)  # the staff group's card
        return _tell_receipt(ctx, result, owner, "created")
    if result.status == ALREADY_CREATED:
        redelivery = result.creator_event_id is not None and result.creator_event_id == ctx.webhook_event_id
        if result.notice is notify.NoticeClaim.CLAIMED:
            return _tell_receipt(ctx, result, owner, "created" if redelivery else "repeat")
        if redelivery:
            # The same event again (its first attempt died): the receipt was told, or is being told, elsewhere.
            return Reply([])
        return Reply([wording.receipt_message(ctx.settings, result.receipt, variant="repeat")],
                     carries=carried(AnswerCarries.RECEIPT, operation))
    # an expired, superseded or cancelled card: the menu, so the resident can go on, not a dead end
    return Reply([with_menu(wording.refusal_message(result.status), HELP_CHOICES)])


def carried(kind: AnswerCarries, operation: records.Operation) -> Carried:
    """What a confirmation answer carries about the operation's notice (``handoff_operations``)."""
    return Carried(kind, notice_ref(records.OPERATIONS, operation.doc_id))


def _tell_receipt(ctx: EventContext, result: CreateResult, owner: str, variant: str) -> Reply:
    operation = records.Operation(ctx.actor, result.receipt.idempotency_key)

    def delivered() -> None:
        notify.mark_delivered(ctx.store, records.OPERATIONS, operation, owner, now=ctx.now)

    def refused() -> None:  # LINE refused the reply: the user was not told; a push may take over now
        notify.release_claim(ctx.store, records.OPERATIONS, operation, owner, now=ctx.now)

    return Reply([wording.receipt_message(ctx.settings, result.receipt, variant=variant)], after_reply=delivered,
                 on_reply_failed=refused, carries=carried(AnswerCarries.RECEIPT, operation))


def _pending(ctx: EventContext, reference: cards.Reference, exc: StoreError) -> Reply:
    state = pending_verification()
    task = ReconcileTask(reference.operation, reference.content_hash, UNKNOWN_OUTCOME, ctx.webhook_event_id,
                         tapped_at=to_iso(ctx.now))
    queued = enqueue(ctx.queue, task, delay_seconds=ctx.settings.reconcile_delay_seconds)
    log("WARNING", "handoff confirmation answered", reply_state=state["reply_state"],
        claim_completed=state["claim_completed"], next_step=state["next_step"],
        retry_policy=state["retry_policy"], error=exc.__class__.__name__, queued=queued,
        task=task.task_name, user=hash_user(ctx.actor.user_id))
    return Reply([wording.pending_message(will_check=queued)],
                 carries=carried(AnswerCarries.CHECKING, reference.operation))


def _log_answer(ctx: EventContext, status_word: str, result: CreateResult) -> None:
    log("INFO", "handoff confirmation answered", reply_state=status_word,
        request_id=result.receipt.request_id if result.receipt else None,
        notice=result.notice.value, user=hash_user(ctx.actor.user_id))
