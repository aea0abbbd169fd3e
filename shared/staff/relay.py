"""Pushing staff-side notices: the queue's relay for the staff outbox, and its start-up re-queue.

Every staff notice (``staff_outbox.NOTICES``) is told by a push from functions/reconcile, run as a named
queue task (``kind: staff_notice``), under the outbox rules of ``shared.handoff.notify``: claim the
notice (``push`` owner, a lease), push with the notice's ``X-Line-Retry-Key`` (uuid5), then mark it
delivered; LINE's 409 (key already accepted) counts as delivered. A push that fails with 429, 5xx
or no answer answers 503 so the queue retries with the same key; a push LINE refuses (other 4xx)
is recorded ``refused`` and logged, never repeated. A process killed between a commit and its
enqueue leaves the notice pending: the start-up re-queue and the periodic sweep queue it again.

The staff group is read from the configuration at push time; a resident notice goes to the user id
stored with it. Source: docs/design.md §10, §11 (delivery rules), §4 (outbox).
"""
from __future__ import annotations

import enum
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from shared import outbox
from shared.clock import Clock, to_iso, utc_now
from shared.config import Settings
from shared.handoff import codes, notify, push_refused, staff_outbox
from shared.handoff import records as handoff_records
from shared.handoff.staff_outbox import (  # noqa: F401  (the staff notice's task)
    NOTICE_TASK,
    announce_created,
    enqueue_notice,
    notice_task_name,
)
from shared.line import LineGateway
from shared.logs import hash_user, log
from shared.push_count import Flow
from shared.queue import TaskQueue
from shared.staff import cards, wording
from shared.store import DocumentStore, StoreError, Transaction

TASK_KINDS = (NOTICE_TASK,)
#: Terminal notice states of the staff outbox besides notify's delivered / reply_unknown.
#: How a staff notice ends without telling anyone.
REFUSED, NOT_NEEDED = notify.NoticeState.REFUSED, notify.NoticeState.NOT_NEEDED
#: A resident notice → the notice of the request's step before it, which must not be told after it.
#: (Notices written before ``after_notice`` existed.)
EARLIER_STEP = {staff_outbox.COMPLETED: staff_outbox.ACCEPTED, staff_outbox.DECLINED: staff_outbox.ACCEPTED}
#: The most earlier notices of one request followed back (a request is turned back a few times at most).
_CHAIN_MAX = 50


class EarlierStep(enum.Enum):
    """What the notices before a resident notice are, once settled (``StaffRelay._earlier_steps_settled``)."""

    HELD = "held"          # one is being pushed now: wait for the queue's retry
    TOLD = "told"          # the one just before was told to the resident
    NOT_TOLD = "not_told"  # none, or the one just before was never told (ended, refused)


class InvalidStaffTask(ValueError):
    """The body is not a staff task (answer 400; retrying cannot help)."""


@dataclass(frozen=True)
class TaskResult:
    """The answer to one delivery: ``outcome`` (a machine word) and the HTTP status for the queue."""

    outcome: str
    http_status: int
    detail: dict[str, Any] = field(default_factory=dict)

    def body(self) -> dict[str, Any]:
        """The JSON body of the HTTP answer (no request text, no user ids)."""
        return {"outcome": self.outcome, **self.detail}


def requeue_tag(doc: dict[str, Any], round_tag: str = "") -> str:
    """The re-queue tag of a pending notice: its current claim and the sweep's round, so work whose
    earlier task ended (even ``failed``) is queued again once per retry window, and two processes
    sweeping the same round dedupe."""
    return f"{doc.get('notice_owner')}|{doc.get('notice_claim_until')}|{round_tag}"


def claim_delay_seconds(doc: dict[str, Any], now: datetime) -> float:
    """Seconds until the notice's current claim ends (0 when none is live)."""
    notice = notify.Notice.of(doc)
    return notice.claim_delay_seconds(now) if notice else 0.0


@dataclass(frozen=True)
class RequeuePass:
    """One re-queue pass: ``queued`` notices handed to the queue, ``missed`` ones it did not confirm
    (a busy or unreachable queue: the notice stays pending for the next pass)."""

    queued: int
    missed: int


def requeue_pass(settings: Settings, store: DocumentStore, queue: TaskQueue | None, *, now: datetime,
                 round_tag: str) -> RequeuePass:
    """Queue a push for every pending staff notice of this tenant (start-up and sweep).

    Args:
        round_tag: the sweep's round (``shared.handoff.requeue.sweep_round``): one task name per
            notice, claim and round, so a pass repeated in the same round queues nothing twice.

    Returns:
        How many notices were handed to the queue and how many were not.
    Raises:
        StoreUnavailable: the store could not be read.
    """
    queued = missed = 0
    for doc in store.query(staff_outbox.NOTICES, where={"tenant_id": settings.tenant_id,
                                                    "notice_state": notify.PENDING.value}):
        doc_id = staff_outbox.notice_id(doc.get("operation_doc") or "", doc.get("notice_key") or doc.get("purpose") or "")
        if enqueue_notice(queue, settings.tenant_id, doc_id, tag=requeue_tag(doc, round_tag),
                          delay_seconds=claim_delay_seconds(doc, now)):
            queued += 1
        else:
            missed += 1
    return RequeuePass(queued, missed)


def requeue_pending(settings: Settings, store: DocumentStore, queue: TaskQueue | None, *, now: datetime,
                    round_tag: str) -> int:
    """``requeue_pass`` for the sweep: how many notices were handed to the queue.

    Raises:
        StoreUnavailable: the store could not be read.
    """
    return requeue_pass(settings, store, queue, now=now, round_tag=round_tag).queued


def parse_notice_task(payload: object, tenant_id: str) -> str:
    """The notice id of a ``staff_notice`` task body.

    Raises:
        InvalidStaffTask: not that shape, or another tenant's.
    """
    if not isinstance(payload, dict) or payload.get("kind") != NOTICE_TASK or payload.get("v") != 1:
        raise InvalidStaffTask("not a staff notice task")
    notice_doc_id = payload.get("notice_id")
    if not (isinstance(notice_doc_id, str) and len(notice_doc_id) == 64
            and all(c in "0123456789abcdef" for c in notice_doc_id)):
        raise InvalidStaffTask("notice_id must be 64 lowercase hex")
    if payload.get("tenant_id") != tenant_id:
        raise InvalidStaffTask("another tenant's task")
    return notice_doc_id


class StaffRelay:
    """Pushes staff-outbox notices. Safe to share across threads.

    Args:
        settings: tenant, staff group, timezone, signing key, lease and LINE timeout.
        store: the read-write store.
        line: the LINE gateway (pushes).
        clock: aware "now".
    """

    def __init__(self, settings: Settings, store: DocumentStore, line: LineGateway, clock: Clock = utc_now):
        self.settings = settings
        self.store = store
        self.line = line
        self.clock = clock

    def deliver(self, notice_doc_id: str, *, last: bool) -> TaskResult:
        """Tell one notice, at most once.

        Args:
            notice_doc_id: ``staff_outbox.notice_id`` of the notice.
            last: this is the queue's last attempt (then a retryable failure is kept pending for
                the sweep instead of answering 503).
        Returns:
            TaskResult: 200 when settled (delivered, refused, not needed, nothing to do); 503 when the
            queue should retry (store or LINE unavailable, another push holds the claim).
        """
        now = self.clock()
        ref = staff_outbox.NoticeRef(notice_doc_id)
        loaded = self._pending_notice(notice_doc_id, last=last)
        if isinstance(loaded, TaskResult):
            return loaded
        doc = loaded
        purpose = doc.get("purpose")
        try:
            to, messages = self._compose(doc)
        except StoreError:
            return TaskResult("store_unavailable", 200 if last else 503, {"purpose": purpose})
        if to is None:
            log("WARNING", "staff notice kept: no LOCAL_STAFF_GROUP_ID configured", purpose=purpose)
            return TaskResult("no_staff_group", 200, {"purpose": purpose})
        if not messages:
            self._settle(ref, NOT_NEEDED, now)
            return TaskResult("not_needed", 200, {"purpose": purpose})
        try:
            not_ours = self._claim_in_order(ref, doc, now, last=last)
        except StoreError:
            return TaskResult("store_unavailable", 200 if last else 503, {"purpose": purpose})
        if not_ours is not None:
            return not_ours
        return self._push(ref, doc, to, messages, last=last, now=now)

    def _pending_notice(self, notice_doc_id: str, *, last: bool) -> dict[str, Any] | TaskResult:
        """The stored notice ``notice_doc_id`` of this tenant when it is still pending, else the
        settled result: 200 ``no_notice`` (absent or another tenant's), 200 ``already_settled``
        (delivered, refused, not needed, or unreadable), ``store_unavailable`` (503, or 200 on the last
        attempt) when the store cannot be read."""
        try:
            doc = self.store.get(staff_outbox.NOTICES, notice_doc_id)
        except StoreError:
            return TaskResult("store_unavailable", 200 if last else 503)
        if doc is None or doc.get("tenant_id") != self.settings.tenant_id:
            return TaskResult("no_notice", 200)
        notice = notify.Notice.of(doc)
        if notice is None or notice.state is not notify.NoticeState.PENDING:
            return TaskResult("already_settled", 200, {"purpose": doc.get("purpose")})
        return doc

    def _claim_in_order(self, ref: staff_outbox.NoticeRef, doc: dict[str, Any], now: datetime, *,
                        last: bool) -> TaskResult | None:
        """Settle the steps told before this notice (``_earlier_steps_settled``), then claim it for the push.

        Returns:
            None when this push holds the claim; else the result: ``earlier_notice_held`` or
            ``notice_held`` (503, or 200 on the last attempt) while another push holds a claim,
            ``not_needed`` (settled here) for a ``returned`` notice whose taking was never told,
            ``already_settled`` when the notice was settled or removed meanwhile.
        Raises:
            StoreError: the store is unavailable (retryable).
        """
        purpose = doc.get("purpose")
        earlier_id = self._earlier_notice_id(doc)
        step = self._earlier_steps_settled(doc, earlier_id, now) if earlier_id else EarlierStep.NOT_TOLD
        if step is EarlierStep.HELD:
            return TaskResult("earlier_notice_held", 200 if last else 503, {"purpose": purpose})
        if purpose == staff_outbox.RETURNED and step is not EarlierStep.TOLD:
            self._settle(ref, NOT_NEEDED, now)  # never told it was taken: nothing to take back
            return TaskResult("not_needed", 200, {"purpose": purpose})
        decision = notify.claim_notice(self.store, staff_outbox.NOTICES, ref, notify.PUSH_OWNER, now=now,
                                       lease_seconds=self.settings.event_lease_seconds)
        if decision is notify.NoticeClaim.DELIVERED or decision is notify.NoticeClaim.NO_NOTICE:
            return TaskResult("already_settled", 200, {"purpose": purpose})
        if decision is notify.NoticeClaim.HELD:
            return TaskResult("notice_held", 200 if last else 503, {"purpose": purpose})
        return None

    def _push(self, ref: staff_outbox.NoticeRef, doc: dict[str, Any], to: str, messages: list, *, last: bool,
              now: datetime) -> TaskResult:
        """Push one claimed notice with its retry key and settle it from the outcome table: 503 for a
        retryable failure (200 on the last attempt: the sweep queues it again); a refusal settles it
        ``refused``, and a resident's notice refused for the monthly limit goes on the staff follow-up
        list (``shared.handoff.push_refused``), never pushed again."""
        purpose = doc.get("purpose")
        resident = doc.get("audience") == staff_outbox.RESIDENT
        flow = Flow.STAFF_RESIDENT if resident else Flow.STAFF_GROUP
        pushed = outbox.push_notice(self.line, self.store, staff_outbox.NOTICES, ref, to=to, messages=messages,
                                    retry_key=doc["notice_retry_key"], clock=self.clock,
                                    timeout_seconds=self.settings.line_timeout_seconds,
                                    tenant_id=self.settings.tenant_id, flow=flow)
        if pushed.error is None:
            log("INFO", "staff notice delivered", purpose=purpose, audience=doc.get("audience"),
                duplicate=pushed.duplicate, user=hash_user(doc.get("user_id")))
            return TaskResult("delivered", 200, {"purpose": purpose, "duplicate": pushed.duplicate})
        # The LINE outcome table: every row but REFUSED may be pushed again with the same retry key.
        log("WARNING", "staff notice push failed", purpose=purpose, error=pushed.error.__class__.__name__,
            status=pushed.status, delivery=pushed.delivery.value, retryable=pushed.retryable,
            monthly_limit=pushed.monthly_limit)
        if pushed.retryable:
            return TaskResult("push_failed", 200 if last else 503, {"purpose": purpose})
        if pushed.monthly_limit and resident:  # a person tells the resident instead
            push_refused.record(self.store, self.settings.tenant_id, to,
                                notice=outbox.notice_ref(staff_outbox.NOTICES, ref.doc_id), flow=flow,
                                messages=messages, now=self.clock())
        self._settle(ref, REFUSED, now)
        return TaskResult("push_refused_monthly_limit" if pushed.monthly_limit else "push_refused", 200,
                          {"purpose": purpose})

    def announce_now(self, operation_doc_id: str) -> TaskResult:
        """Push the staff group's card of a request just created, now (its last try: a failure is
        left pending for the sweep). The hook of ``shared.handoff.reconcile.ReconcileService``."""
        return self.deliver(staff_outbox.notice_id(operation_doc_id, staff_outbox.ANNOUNCE), last=True)

    def _earlier_notice_id(self, doc: dict[str, Any]) -> str | None:
        """The resident notice told just before this one (``after_notice``); for a notice written
        before that field existed, the accepted notice of its request when its step comes after one."""
        if "after_notice" in doc:
            return doc.get("after_notice") or None
        purpose = doc.get("purpose")
        if purpose not in EARLIER_STEP:
            return None
        return staff_outbox.notice_id(doc.get("operation_doc") or "", EARLIER_STEP[str(purpose)])

    def _earlier_steps_settled(self, doc: dict[str, Any], earlier_id: str, now: datetime) -> EarlierStep:
        """Before a resident hears a step of a request, every step before it (``after_notice``, followed
        back) is settled: told before, or, while still pending and unclaimed, ended here as not needed
        (``notice_superseded_by``), in one transaction, since the later message is the news now and an
        older one after it (「已有專人接手」 after 「處理結束」) would mislead. Held while a push holds
        an earlier notice's claim (it is being told now): the later one waits for the queue's retry. A
        notice whose push has been tried (``notice_push_claimed``) may have been shown already; ending
        it keeps the order all the same. Source: docs/design.md §10 (told once, in order, in plain words).

        Returns:
            EarlierStep: held, or whether the notice just before this one had been told.
        Raises:
            StoreUnavailable / StoreTimeout / TransactionConflict: retryable.
        """

        def txn(tx: Transaction) -> EarlierStep:
            chain: list[tuple[str, dict[str, Any]]] = []
            next_id: str | None = earlier_id
            while next_id and len(chain) < _CHAIN_MAX and all(next_id != seen for seen, _ in chain):
                found = tx.get(staff_outbox.NOTICES, next_id)
                if found is None:
                    break
                chain.append((next_id, found))
                next_id = found.get("after_notice")
            pending = [(doc_id, found, notice) for doc_id, found in chain
                       if (notice := notify.Notice.of(found)) is not None and notice.state is notify.NoticeState.PENDING]
            if any(notice.live_claim(now) for _, _, notice in pending):
                return EarlierStep.HELD
            for doc_id, found, _ in pending:
                tx.set(staff_outbox.NOTICES, doc_id, {
                    **found, "notice_state": NOT_NEEDED.value, "notice_claim_until": None,
                    "notice_superseded_by": doc["purpose"], "updated_at": to_iso(now)})
            told = bool(chain) and chain[0][1].get("notice_state") == notify.NoticeState.DELIVERED.value
            return EarlierStep.TOLD if told else EarlierStep.NOT_TOLD

        return self.store.run_transaction(txn)

    def _compose(self, doc: dict[str, Any]) -> tuple[str | None, list]:
        """(push target, messages); no messages when the notice is no longer needed.

        Raises:
            StoreUnavailable: the request (or follow-up) could not be read.
        """
        purpose = doc.get("purpose")
        operation_doc = doc.get("operation_doc") or ""
        if doc.get("audience") == staff_outbox.RESIDENT:
            return doc.get("user_id"), [wording.resident_message(str(purpose), self._shown_number(doc))]
        group = self.settings.staff_group_id
        if purpose == staff_outbox.FOLLOWUP:
            followup = self.store.get(handoff_records.FOLLOWUPS, operation_doc)
            if followup is None:
                return group, []
            draft = self.store.get(handoff_records.DRAFTS, operation_doc) or {}
            return group, [cards.followup_card(self.settings, followup, draft.get("text"))]
        request = self.store.get(handoff_records.REQUESTS, operation_doc)
        if request is None:
            return group, []
        if purpose == staff_outbox.REMINDER:
            if (request.get("human_state") or staff_outbox.AWAITING) != staff_outbox.AWAITING:
                return group, []  # taken (or closed) since the reminder was recorded
            heading = "提醒：這筆服務詢問仍待受理"
        else:
            heading = "新的服務詢問"
        return group, [cards.request_card(self.settings, operation_doc, request, heading=heading)]

    def _shown_number(self, doc: dict[str, Any]) -> str | None:
        """The request's number for a resident notice: its code, or, for a request without one, when it
        was made (one read of the request; None when it is gone).

        Raises:
            StoreUnavailable: the request could not be read.
        """
        if codes.of_request(doc) is not None:
            return wording.shown_number(doc, self.settings.tz)
        request = self.store.get(handoff_records.REQUESTS, doc.get("operation_doc") or "")
        return wording.shown_number(request, self.settings.tz) if request else None

    def _settle(self, ref: staff_outbox.NoticeRef, state: notify.NoticeState, now: datetime) -> None:
        """End a pending notice without telling anyone (refused by LINE, or no longer needed)."""

        def txn(tx: Transaction) -> None:
            doc = tx.get(staff_outbox.NOTICES, ref.doc_id)
            notice = notify.Notice.of(doc)
            if doc and notice and notice.state is notify.NoticeState.PENDING:
                tx.set(staff_outbox.NOTICES, ref.doc_id, {**doc, "notice_state": state.value, "notice_claim_until": None,
                                                     "updated_at": to_iso(now)})

        try:
            self.store.run_transaction(txn)
        except StoreError as exc:
            log("WARNING", "staff notice state not recorded", state=state.value, error=exc.__class__.__name__)
