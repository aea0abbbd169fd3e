"""Telling the user what reconcile settled: the push side of the handoff outbox (docs/design.md §4, §11).

``ReconcileNotifier.deliver`` claims the operation's notice for the push (``notify.PUSH_OWNER``) and
tells the user once; ``tell`` does it with a claim already decided (a create transaction decides
its own). Before pushing a notice taken over from a reply, the inbox is asked what became of that
reply and what it carried (``inbox.take_over_answer``): replied with this notice → delivered, no
push; unknown (LINE answered 5xx or not at all, or its attempt died after starting it) → pushed once
with the notice's retry key, in words that restate the state (``Tell.restate``), so that reading it
after the reply did land is harmless: a receipt must reach the resident; a reply that carried
something else ("checking") → pushed; still running without a reply → fenced off, then pushed. An
answer the queued-event worker sent by push under the event's own retry key whose outcome stayed
unknown is never pushed again under another key. The check after "checking" reads the checked
event's answer the same way: if it carried the receipt after all (a redelivery of the tap), that
answer was the result and nothing is pushed. Every push carries the operation's retry key
for its purpose, so a repeat is LINE's 409 (delivered). On the last attempt a push that still
fails leaves a ``needs_human_followup`` record instead (``record_followup``). A push is made only
after its claim transaction answered and what the event's answer carried was read: a last attempt
that could do neither, or whose checked answer is still to come, pushes nothing (``unverified``;
another retry key than the answer's would not deduplicate it) and leaves a pending notice to the sweep.

No method runs inside a store transaction function (a LINE call there could repeat on a re-run).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from shared import inbox, outbox
from shared.clock import Clock, to_iso
from shared.config import Settings
from shared.handoff import notify, push_refused, records, wording
from shared.handoff.reconcile_task import Attempt, ReconcileResult
from shared.line import LineGateway
from shared.logs import hash_user, log
from shared.push_count import Flow
from shared.store import DocumentStore, RecordAlreadyExists, StoreError


@dataclass(frozen=True)
class Tell:
    """One thing to tell the user, and how the answer to the queue reads.

    Attributes:
        collection: where the notice lives (``records.OPERATIONS`` or ``records.FOLLOWUPS``).
        purpose: the notice's own retry-key purpose (``receipt``, ``not_created``): every push that
            tells this notice for the first time carries it, so any repeat is LINE's 409.
        render: builds the line-bot-sdk message models to push; called only when a push is made
            (most deliveries find the notice already told, and then nothing is built).
        outcome: the machine word of the answer (``found``, ``created``, ``not_created``).
        request_id: the request's public id, when there is one.
        detail: more fields for the answer and the log.
        checked_event: the webhook event answered "checking" that this telling follows up. Its user
            hears the result even when the receipt reached them by another path first (an earlier
            tap): then the push is keyed ``checked:<event>`` instead, so it too is sent once.
        restate: builds the messages pushed after a reply of unknown outcome that carried this
            notice: they restate the state (read twice, they are harmless); None: ``render``.
    """

    collection: str
    purpose: str
    render: Callable[[], list[Any]]
    outcome: str
    request_id: str | None = None
    detail: dict[str, Any] = field(default_factory=dict)
    checked_event: str | None = None
    restate: Callable[[], list[Any]] | None = None

    def messages(self, *, restated: bool) -> list[Any]:
        """What to push: ``restate``'s words after a reply of unknown outcome, else ``render``'s."""
        return (self.restate if restated and self.restate is not None else self.render)()

    @property
    def checked_owner(self) -> str | None:
        """``notice_delivered_by`` when this follow-up told the notice first (``checked:<event>``)."""
        return f"checked:{self.checked_event}" if self.checked_event is not None else None

    def settled(self, notice: str) -> ReconcileResult:
        """200: this delivery is finished; ``notice`` says what became of the telling."""
        return ReconcileResult(self.outcome, 200, self.request_id, {**self.detail, "notice": notice})

    def again(self, outcome: str) -> ReconcileResult:
        """503: the queue delivers the task again later."""
        return ReconcileResult(outcome, 503, self.request_id, dict(self.detail))


class ReconcileNotifier:
    """Pushes what reconcile settled, once. Safe to share across threads.

    Args:
        settings: ``event_lease_seconds`` (the push's claim), ``line_timeout_seconds``, tenant.
        store: the read-write store (notice claims, follow-ups, the inbox).
        line: the LINE gateway.
        clock: aware "now" (for the records written after a push).
    """

    def __init__(self, settings: Settings, store: DocumentStore, line: LineGateway, clock: Clock):
        self.settings = settings
        self.store = store
        self.line = line
        self.clock = clock

    def deliver(self, attempt: Attempt, tell: Tell, seen: dict | None = None) -> ReconcileResult:
        """Claim the notice for the push, then tell the user (unless already told or held).

        Args:
            seen: the notice's document as the lookup read it (``tell.collection``), or None. A
                notice it shows settled (delivered, reply_unknown, failed) is DELIVERED without a
                claim transaction: a settled notice never becomes pending again (``shared.outbox``),
                so the claim could only answer the same.
        """
        seen_notice = notify.Notice.of(seen)
        if seen_notice is not None and seen_notice.state.settled:
            return self.tell(attempt, tell, notify.NoticeClaim.DELIVERED)
        try:
            decision = notify.claim_notice(self.store, tell.collection, attempt.operation, notify.PUSH_OWNER,
                                           now=attempt.now, lease_seconds=self.settings.event_lease_seconds,
                                           void_owner=attempt.void_owner)
        except StoreError as exc:
            if not attempt.last:
                return ReconcileResult("store_unavailable", 503, tell.request_id)
            # No claim, so no reading of what the event's answer carried: another path (a reply, or a
            # queued answer under the event's own retry key) may have told the receipt already, and
            # the notice's retry key does not deduplicate that. Push nothing; the sweep re-queues a
            # notice still pending.
            return self.unverified(attempt, tell, "claim_unavailable", exc, followup=tell.checked_event is not None)
        return self.tell(attempt, tell, decision)

    def unverified(self, attempt: Attempt, tell: Tell, why: str, exc: BaseException | None = None, *,
                   followup: bool) -> ReconcileResult:
        """The last attempt could not learn whether another path told (or is telling) this notice.

        Nothing is pushed: a push is made only after this delivery claimed the notice and read what
        the event's answer carried (a blind push could be the resident's second receipt, under
        another retry key than the answer's). A notice left pending is re-queued by the sweep
        (``shared.sweep``), which reads it all again. With ``followup`` (a "checking" answer whose
        result no sweep may follow up: the notice may be settled already) a ``needs_human_followup``
        record is left for a person.

        Returns:
            200 with ``notice`` "not_pushed".
        """
        log("WARNING", "reconcile pushed nothing on its last attempt: who told the notice is unverified",
            reason=why, error=exc.__class__.__name__ if exc is not None else None,
            user=hash_user(attempt.operation.actor.user_id))
        if followup:
            self.record_followup(attempt, f"notice_unverified:{why}", with_notice=False)
        return tell.settled("not_pushed")

    def tell(self, attempt: Attempt, tell: Tell, decision: notify.NoticeClaim) -> ReconcileResult:
        """Push unless the notice was delivered, or a live reply holds it (503).

        The first telling of a notice always carries the notice's own key (``tell.purpose``), whoever
        pushes it (the check after "checking", a relay, a re-queue), so a push whose "delivered" was
        lost is repeated as LINE's 409, never as a second message. A follow-up of "checking" whose
        notice another path told first pushes once more under ``checked:<event>``, but only when that
        event's answer was "checking" (or is not recorded): the check first reads what the event's
        answer carried (``_checked_answer``), and an answer that carried this receipt and was
        delivered is the result itself, never followed by another push. A reply of unknown outcome
        that carried it is followed by one push with the notice's own key, in restating words.
        """
        restated = False  # this push follows a reply of unknown outcome that carried the notice
        if tell.checked_event is not None and decision is not notify.NoticeClaim.HELD:
            settled, restated = self._checked_answer(attempt, tell, decision)
            if settled is not None:
                return settled
        if decision is notify.NoticeClaim.DELIVERED:
            settled = self._delivered_before(attempt, tell)
            if settled is not None:
                return settled
        if decision is notify.NoticeClaim.HELD:
            return self._left_to_holder(attempt, tell)
        delivered_by = tell.checked_owner or notify.PUSH_OWNER
        if decision is notify.NoticeClaim.CLAIMED and tell.checked_event is None:
            settled, follows, restated = self._after_earlier_reply(attempt, tell)
            if settled is not None:
                return settled
            delivered_by = follows or delivered_by
        return self._push(attempt, tell, decision, purpose=self._push_purpose(tell, decision),
                          delivered_by=delivered_by, restated=restated)

    def _delivered_before(self, attempt: Attempt, tell: Tell) -> ReconcileResult | None:
        """A notice the claim found delivered: settled ``already_delivered`` unless this is the check
        after "checking" and another path told it (``notice_delivered_by`` is not this follow-up's
        ``checked:<event>``); then None: the follow-up pushes once under its own key.

        Returns:
            The result, or None to push. When the notice cannot be read: 503 ``store_unavailable``,
            or on the last attempt ``unverified`` (perhaps this very follow-up told it first, under
            the notice's own key: never a blind second push).
        """
        if tell.checked_event is None:
            return tell.settled("already_delivered")
        try:
            told_by = (self.store.get(tell.collection, attempt.operation.doc_id) or {}).get("notice_delivered_by")
        except StoreError as exc:
            if not attempt.last:
                return tell.again("store_unavailable")
            return self.unverified(attempt, tell, "notice_unreadable", exc, followup=True)
        if told_by == tell.checked_owner:
            return tell.settled("already_delivered")  # this follow-up told it: a repeated delivery of the task
        return None

    @staticmethod
    def _left_to_holder(attempt: Attempt, tell: Tell) -> ReconcileResult:
        """A reply (or a push) holds the notice: let it finish and look again later (503
        ``notice_held``); on the last attempt settled ``left_to_reply`` (logged)."""
        if attempt.last:
            log("WARNING", "reconcile left the notice to a live reply on its last attempt")
            return tell.settled("left_to_reply")
        return tell.again("notice_held")

    @staticmethod
    def _push_purpose(tell: Tell, decision: notify.NoticeClaim) -> str:
        """The retry key's purpose of the push: the notice's own (``tell.purpose``), except for the
        check after "checking" of a notice another path told (or that is gone: not known who told
        what), which pushes under the follow-up's own key (``tell.checked_owner``)."""
        told_elsewhere = decision in (notify.NoticeClaim.DELIVERED, notify.NoticeClaim.NO_NOTICE)
        if told_elsewhere and tell.checked_event is not None:
            return tell.checked_owner or tell.purpose
        return tell.purpose

    def _push(self, attempt: Attempt, tell: Tell, decision: notify.NoticeClaim, *, purpose: str,
              delivered_by: str, restated: bool) -> ReconcileResult:
        """Push the notice under ``purpose``'s retry key (``tell.messages``) and, when this delivery
        claimed it, record it delivered by ``delivered_by``. A retryable failure answers 503 (the
        same key next time); the last attempt's failure leaves a ``needs_human_followup`` record."""
        operation = attempt.operation
        pushed = outbox.push_notice(self.line, self.store, tell.collection, operation, to=operation.actor.user_id,
                                    messages=tell.messages(restated=restated), retry_key=operation.retry_key(purpose),
                                    owner=delivered_by, record=decision is notify.NoticeClaim.CLAIMED,
                                    clock=self.clock, timeout_seconds=self.settings.line_timeout_seconds,
                                    tenant_id=self.settings.tenant_id, flow=Flow.HANDOFF_NOTICE)
        if pushed.error is not None:
            # Every row but REFUSED may be tried again: the push carries its retry key (docs/design.md §11).
            # LINE's monthly limit is REFUSED: never retried, a person follows up (docs/delivery.md#push-quota).
            log("WARNING", "reconcile push failed", error=pushed.error.__class__.__name__, status=pushed.status,
                delivery=pushed.delivery.value, retryable=pushed.retryable, monthly_limit=pushed.monthly_limit)
            if pushed.retryable and not attempt.last:
                return tell.again("push_failed")
            reason = push_refused.REASON if pushed.monthly_limit else "push_failed"
            self.record_followup(attempt, reason, with_notice=False)
            if not pushed.retryable and decision is notify.NoticeClaim.CLAIMED:
                self._settle_refused(attempt, tell, push_refused.REASON if pushed.monthly_limit else "push_refused")
            return ReconcileResult("push_failed", 200, tell.request_id, {**tell.detail, "notice": "followup_recorded"})
        return tell.settled("push_duplicate" if pushed.duplicate else "pushed")

    def _settle_refused(self, attempt: Attempt, tell: Tell, reason: str) -> None:
        """A push LINE refused for good (a 4xx, or the monthly limit), of a notice this delivery claimed
        (``notify.PUSH_OWNER``): settled ``failed``, so that no sweep re-queues it and pushes it again; a
        person follows up (``record_followup``). A store error is logged: the notice then stays pending
        and a later window meets the same refusal."""
        try:
            outbox.settle_failed(self.store, tell.collection, attempt.operation, owner=notify.PUSH_OWNER,
                                 reason=reason, now=self.clock())
        except StoreError as exc:
            log("WARNING", "refused notice not settled", error=exc.__class__.__name__)

    def _checked_answer(self, attempt: Attempt, tell: Tell,
                        decision: notify.NoticeClaim) -> tuple[ReconcileResult | None, bool]:
        """The check after "checking": read what that event's answer carried before pushing anything.

        The event named by the task (``tell.checked_event``) is *presumed* to have answered
        "checking"; its inbox record says what it did answer (one plain read). With the notice
        claimed, an attempt of it that has not started its reply is then fenced off
        (``inbox.take_over_answer``, a transaction only in that case), so it cannot tell the
        receipt after this push.

        Returns:
            (None, restated) to go on and push: the answer was "checking" or is not recorded
            (restated False); or it carried this receipt with an unknown reply outcome and the
            notice was claimed here (restated True: the receipt must reach the resident, so it is
            pushed once, in restating words, with the notice's own key). Otherwise (the answer,
            False) without a push:
            - that answer is still to come (queued, or its attempt still running): 503, look again;
              on the last attempt nothing is pushed (``unverified``): that answer may carry the
              receipt, under the event's own retry key; the same when the inbox cannot be read;
            - it carried this receipt and LINE accepted it: "delivered_by_reply" (the notice is
              marked delivered by that reply when it was claimed here); or it was pushed by the
              queued-event worker under the event's own key with an unknown outcome, or the notice
              was not claimed here: "reply_unknown" / "told_by_checked_answer" (never repeated
              under another key, docs/design.md §11);
            - the notice was told by another path and this event's answer said no "checking"
              (it said nothing, was refused, or carried something else): no follow-up is owed.
        """
        event = attempt.task.reply_event_id
        if event is None:
            return None, False  # no event to read: as before
        try:
            answer, fenced = self._read_checked_answer(event, decision)
        except StoreError as exc:
            log("WARNING", "reconcile could not read the checked answer", error=exc.__class__.__name__)
            if not attempt.last:
                return tell.again("store_unavailable"), False
            return self.unverified(attempt, tell, "inbox_unavailable", exc,
                                   followup=decision is not notify.NoticeClaim.CLAIMED), False
        if answer.state is inbox.ReplyState.QUEUED or (answer.unanswered_yet and not fenced):
            if not attempt.last:
                return tell.again("answer_pending"), False  # read what it carried once it is sent
            # Still to come, and it may carry the receipt: never pushed beside it. A notice claimed
            # here stays pending (push-claimed: that answer, if not yet made, says nothing of it) and
            # the sweep's re-queue reads the answer once it is settled.
            return self.unverified(attempt, tell, "answer_pending",
                                   followup=decision is not notify.NoticeClaim.CLAIMED), False
        return self._after_checked_answer(attempt, tell, decision, answer)

    def _read_checked_answer(self, event: str, decision: notify.NoticeClaim) -> tuple[inbox.EventAnswer, bool]:
        """The checked event's answer as its inbox record says (one plain read); with the notice claimed
        here and that answer not started, read again in ``inbox.take_over_answer``'s transaction,
        which fences the attempt off.

        Returns:
            (answer, fenced): fenced is True when the answer was still unanswered when read in that
            transaction (its attempt can no longer reply).
        Raises:
            StoreError: the inbox cannot be read.
        """
        tenant = self.settings.tenant_id
        answer = inbox.event_answer(self.store, tenant, event)
        if answer.unanswered_yet and decision is notify.NoticeClaim.CLAIMED:
            answer = inbox.take_over_answer(self.store, tenant, event, now=self.clock())
            return answer, answer.unanswered_yet  # still unanswered when read again: fenced now
        return answer, False

    def _after_checked_answer(self, attempt: Attempt, tell: Tell, decision: notify.NoticeClaim,
                              answer: inbox.EventAnswer) -> tuple[ReconcileResult | None, bool]:
        """What a settled checked answer leaves to do (``_checked_answer``'s Returns, once that answer
        is no longer to come): (None, restated) to push, or (the result, False) without a push."""
        operation = attempt.operation
        carries = answer.carries
        told = carries is not None and carries.tells(tell.collection, operation)
        if told and answer.state in (inbox.ReplyState.REPLIED, inbox.ReplyState.UNKNOWN):
            if (answer.state is inbox.ReplyState.UNKNOWN and decision is notify.NoticeClaim.CLAIMED
                    and not answer.by_push):
                log("WARNING", "checked answer carried the receipt, outcome unknown: pushed once, restated",
                    user=hash_user(operation.actor.user_id))
                return None, True
            return self._told_by_checked_answer(attempt, tell, decision, answer), False
        said_checking = carries.checks(tell.collection, operation) if carries is not None else None
        silent = answer.finished_silent or answer.state is inbox.ReplyState.FAILED
        if decision is notify.NoticeClaim.DELIVERED and (silent or said_checking is False):
            return tell.settled("already_delivered"), False  # told by another path; no "checking" to follow up
        return None, False

    def _told_by_checked_answer(self, attempt: Attempt, tell: Tell, decision: notify.NoticeClaim,
                                answer: inbox.EventAnswer) -> ReconcileResult:
        """The checked event's answer carried this receipt: LINE accepted it (→ delivered by that
        reply), or its outcome is one nobody repeats (a keyed push of the queued-event worker, or a
        notice not claimed here). Nothing is pushed."""
        operation = attempt.operation
        owner = notify.reply_owner(attempt.task.reply_event_id)
        log("INFO", "checked answer carried the receipt: not pushed", reply_state=answer.state.value,
            user=hash_user(operation.actor.user_id))
        if decision is not notify.NoticeClaim.CLAIMED:
            return tell.settled("told_by_checked_answer")
        try:
            if answer.state is inbox.ReplyState.REPLIED:
                notify.mark_delivered(self.store, tell.collection, operation, owner, now=self.clock())
                return tell.settled("delivered_by_reply")
            notify.settle_reply_unknown(self.store, tell.collection, operation, owner=owner, now=self.clock())
            return tell.settled("reply_unknown")
        except StoreError as exc:  # the next delivery reads the same record and decides the same
            log("WARNING", "checked answer's telling not recorded", error=exc.__class__.__name__)
            return ReconcileResult("store_unavailable", 503 if not attempt.last else 200, tell.request_id,
                                   dict(tell.detail))


    def _after_earlier_reply(self, attempt: Attempt,
                             tell: Tell) -> tuple[ReconcileResult | None, str | None, bool]:
        """Before pushing a notice taken over from a reply, ask the inbox what became of that reply.

        Returns:
            (None, owner, restated) to push, ``owner`` being who the push is recorded as
            (``notice_delivered_by``; None: the push): no earlier reply, or it was refused by LINE, or
            never started (an attempt still running that has not started its reply is fenced off
            first, ``inbox.take_over_answer``), or its recorded content did not tell this notice (a
            "checking" answer: the push is then that answer's follow-up, recorded as
            ``checked:<event>``, so the check owes nothing more). ``restated`` is True when that reply
            told this notice (or is not recorded: the reply that owned it) and its outcome is unknown
            (sent without an answer, or started by an attempt that died): the notice must reach the
            resident, so it is pushed once, in restating words (``Tell.restate``), with its own key.
            Otherwise (the answer, None, False) without a push: replied with this notice → "delivered";
            pushed by the queued-event worker under the event's own key with an unknown outcome →
            "reply_unknown" (never repeated under another key, docs/design.md §11).
        """
        operation = attempt.operation
        try:
            notice = notify.Notice.of(self.store.get(tell.collection, operation.doc_id))
            holder = (notice.taken_from if notice else None) or ""
            reply_event = notify.reply_event_of(holder)
            if reply_event is None or holder == attempt.void_owner:
                return None, None, False
            answer = inbox.take_over_answer(self.store, self.settings.tenant_id, reply_event, now=self.clock())
        except StoreError as exc:
            log("WARNING", "reconcile could not read the earlier reply", error=exc.__class__.__name__)
            if not attempt.last:
                return tell.again("store_unavailable"), None, False
            self.record_followup(attempt, "notice_unverified:inbox_unavailable", with_notice=False)
            return tell.settled("not_pushed"), None, False
        state = answer.state
        if state is inbox.ReplyState.QUEUED:
            # That event went to the queue, whose worker tells the user (by reply or push): wait for it.
            if not attempt.last:
                return tell.again("notice_held"), None, False
            log("WARNING", "reconcile left the notice to a queued answer on its last attempt")
            return tell.settled("left_to_queued_answer"), None, False
        if answer.carries is not None and not answer.carries.tells(tell.collection, operation):
            # Its reply told something else (e.g. "checking"): the notice is still to be told.
            follows = f"checked:{reply_event}" if answer.carries.checks(tell.collection, operation) else None
            return None, follows, False
        if state is inbox.ReplyState.UNKNOWN and not answer.by_push:
            # A reply may or may not have shown it, and the resident must know it: told once more by
            # push, with the notice's retry key (a repeat of this push is LINE's 409), restated.
            log("WARNING", "receipt reply outcome unknown: pushed once, restated", user=hash_user(operation.actor.user_id))
            return None, None, True
        return self._told_by_earlier_reply(attempt, tell, state, holder), None, False

    def _told_by_earlier_reply(self, attempt: Attempt, tell: Tell, state: inbox.ReplyState,
                               holder: str) -> ReconcileResult | None:
        """The earlier reply (owner ``holder``) carried this notice: record how, nothing pushed.

        Returns:
            ``delivered_by_reply`` (LINE accepted it: marked delivered by ``holder``);
            ``reply_unknown`` (pushed by the queued-event worker under the event's own key, outcome
            unknown: never repeated under another key); 503 ``store_unavailable`` (200 on the last
            attempt) when that cannot be recorded; None for any other state (then pushed).
        """
        operation = attempt.operation
        try:
            if state is inbox.ReplyState.REPLIED:
                notify.mark_delivered(self.store, tell.collection, operation, holder, now=self.clock())
                return tell.settled("delivered_by_reply")
            if state is inbox.ReplyState.UNKNOWN:
                notify.settle_reply_unknown(self.store, tell.collection, operation, owner=holder, now=self.clock())
                log("WARNING", "receipt pushed with the event's key, outcome unknown: not pushed again",
                    user=hash_user(operation.actor.user_id))
                return tell.settled("reply_unknown")
        except StoreError as exc:  # the next delivery reads the inbox again and decides the same
            log("WARNING", "earlier reply's outcome not recorded", error=exc.__class__.__name__)
            return ReconcileResult("store_unavailable", 503 if not attempt.last else 200, tell.request_id,
                                   dict(tell.detail))
        return None

    def tell_followup(self, attempt: Attempt, reason: str) -> ReconcileResult:
        """The last attempt of an unknown outcome: record ``needs_human_followup`` and tell the user so."""
        recorded = self.record_followup(attempt, reason, with_notice=True)
        operation = attempt.operation
        pushed = outbox.push_notice(self.line, self.store, records.FOLLOWUPS, operation, to=operation.actor.user_id,
                                    messages=[wording.followup_message(recorded=recorded)],
                                    retry_key=operation.retry_key("needs_human_followup"), record=recorded,
                                    clock=self.clock, timeout_seconds=self.settings.line_timeout_seconds,
                                    tenant_id=self.settings.tenant_id, flow=Flow.HANDOFF_FOLLOWUP)
        if pushed.error is not None:
            log("ERROR", "follow-up push failed", error=pushed.error.__class__.__name__, delivery=pushed.delivery.value)
            return ReconcileResult("needs_human_followup", 200, None, {"reason": reason, "notice": "push_failed"})
        return ReconcileResult("needs_human_followup", 200, None,
                               {"reason": reason, "notice": "push_duplicate" if pushed.duplicate else "pushed"})

    def record_followup(self, attempt: Attempt, reason: str, *, with_notice: bool) -> bool:
        """Create ``handoff_followups/{operation_id}`` without reading anything first.

        Returns:
            True when the record exists (written now or before); False when the store refused.
        """
        task, operation, now = attempt.task, attempt.operation, attempt.now
        doc = {"tenant_id": operation.actor.tenant_id, "user_id": operation.actor.user_id,
               "idempotency_key": operation.idempotency_key, "content_hash": task.content_hash,
               "status": "needs_human_followup", "reason": reason, "task_reason": task.reason,
               "created_at": to_iso(now)}
        if with_notice:
            doc.update(notify.notice_fields("needs_human_followup", notify.PUSH_OWNER, now=now,
                                            lease_seconds=self.settings.event_lease_seconds,
                                            retry_key=operation.retry_key("needs_human_followup")))
        try:
            self.store.create(records.FOLLOWUPS, operation.doc_id, doc)
        except RecordAlreadyExists:
            return True
        except StoreError as exc:
            log("ERROR", "needs_human_followup could not be recorded", error=exc.__class__.__name__)
            return False
        log("WARNING", "operation needs human follow-up", reason=reason, user=hash_user(operation.actor.user_id))
        return True
