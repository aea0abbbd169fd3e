"""Reconcile one handoff operation by its original idempotency key (functions/reconcile).

A task names one operation (tenant, user, key, content hash). Each delivery:

1. looks the request up through the **read-only** store (SQLite ``mode=ro``; Firestore: a plain read);
2. ``found`` → checks actor and content hash → settled; the receipt is pushed unless the user was
   told already (the outbox notice);
3. ``not_found`` (the lookup answered) → exactly one create with the **same** key, after the create
   transaction re-checks the consent (draft open, current, not expired); if the consent is no
   longer valid, the operation settles as not created and the user is asked to send it again;
4. ``lookup_unavailable`` → stays pending and answers 503 so the queue retries with backoff; on
   the last attempt (``X-CloudTasks-TaskRetryCount`` + 1 = ``queue_max_attempts``) the operation is
   recorded as ``needs_human_followup`` and the user is told honestly.

A duplicate delivery changes nothing: a settled operation is found again and its notice is already
delivered (or its push is repeated with the same ``X-Line-Retry-Key``, which LINE answers with 409).
Budget per operation: at most two write attempts — the webhook's, then at most one by reconcile,
guarded by ``reconcile_write_attempted`` on the operation document.

Source: DESIGN §4 (Reconcile); seed 001 (lookup → not_found → one resend with the same key;
lookup blocked → stay pending); Cloud Tasks docs (any non-2xx is retried; X-CloudTasks-* headers).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from shared import inbox
from shared.clock import Clock, from_iso, to_iso, utc_now
from shared.config import Settings
from shared.handoff import drafts, faults, notify, records, wording
from shared.handoff.records import Operation
from shared.handoff.requests import (
    ALREADY_CREATED,
    CONSENT_REFUSALS,
    REQUEST_CREATED,
    UNCONFIRMED_OPERATION,
    create_request,
    receipt_of,
)
from shared.identity import Actor
from shared.line import LineGateway, LineSendError
from shared.logs import hash_user, log
from shared.queue import QueueError, TaskQueue, task_name_for
from shared.staff import records as staff_records
from shared.staff.relay import StaffRelay
from shared.store import DocumentStore, RecordAlreadyExists, StoreError, Transaction

TASK_KIND = "handoff_reconcile"
#: Why a task exists: the webhook's create had an unknown outcome; the webhook relays the outbox in
#: case its reply fails; a worker found an undelivered notice at start-up.
UNKNOWN_OUTCOME, RELAY, REQUEUE = "unknown_outcome", "relay", "requeue"
REASONS = (UNKNOWN_OUTCOME, RELAY, REQUEUE)
#: The not-created reason when the user cancelled the draft while its create was being checked.
CANCELLED_BY_USER = "cancelled_by_user"


def _receipt_variant(task: "ReconcileTask") -> str:
    """The user heard "checking" only when the webhook's create had an unknown outcome."""
    return "after_check" if task.reason == UNKNOWN_OUTCOME else "created"


def _receipt_purpose(task: "ReconcileTask") -> tuple[str, bool]:
    """(retry-key purpose, answer even if the receipt was told before).

    A "checking" answer is followed up by its own push — keyed by that event, so every retry of it
    is deduplicated by LINE — even when the receipt reached the user earlier by another path (an
    earlier tap): the user who was told "checking" hears the result. Otherwise the operation's one
    receipt notice is pushed only while undelivered.
    """
    if task.reason == UNKNOWN_OUTCOME:
        return f"checked:{task.reply_event_id or 'unknown'}", True
    return "receipt", False


class InvalidReconcileTask(ValueError):
    """The task body is not a handoff reconcile task (answer 400; retrying cannot help)."""


@dataclass(frozen=True)
class ReconcileTask:
    """One queued reconcile: which operation, what content, and why.

    ``reply_event_id``: the webhook event that answered "checking" instead of the receipt; its
    claim on the notice is void (the user did not hear the receipt from it).
    ``tag``: what else tells this task apart from others of the same operation and reason: for a
    relay, the webhook event that created the request (and owns its notice); for a start-up
    re-queue, the notice claim it is queued for (``<state>|<notice_owner>|<notice_claim_until>``).
    """

    operation: Operation
    content_hash: str
    reason: str
    reply_event_id: str | None = None
    tag: str | None = None
    #: When the user tapped 「確認送出」 (ISO UTC), for an unknown outcome: expiry is judged at it.
    tapped_at: str | None = None

    @property
    def task_name(self) -> str:
        """``reconcile-<32 hex of SHA-256(key/reason/event/tag)>``: one name per purpose.

        Task names are reserved for good once used (Cloud Tasks; the embedded queue likewise), so a
        check after "checking", a relay and a re-queue of the same operation need distinct names,
        or a later one is silently dropped. Each is still the same from every process and restart,
        so two workers queueing the same work dedupe. Source: DESIGN §4 (name from a hash of the key).
        """
        parts = (self.operation.idempotency_key, self.reason, self.reply_event_id or "-", self.tag or "-")
        return task_name_for("/".join(parts))

    def payload(self) -> dict[str, Any]:
        """The JSON body of the task (no request text, no tokens)."""
        return {"v": 1, "kind": TASK_KIND, "tenant_id": self.operation.actor.tenant_id,
                "user_id": self.operation.actor.user_id, "idempotency_key": self.operation.idempotency_key,
                "content_hash": self.content_hash, "reason": self.reason, "reply_event_id": self.reply_event_id,
                "tag": self.tag, "tapped_at": self.tapped_at}

    @classmethod
    def from_payload(cls, payload: object) -> "ReconcileTask":
        """Parse a task body.

        Raises:
            InvalidReconcileTask: not an object of this shape.
        """
        if not isinstance(payload, dict) or payload.get("kind") != TASK_KIND or payload.get("v") != 1:
            raise InvalidReconcileTask("not a handoff reconcile task")
        tenant, user, key = payload.get("tenant_id"), payload.get("user_id"), payload.get("idempotency_key")
        digest, reason, event = payload.get("content_hash"), payload.get("reason"), payload.get("reply_event_id")
        if not (isinstance(tenant, str) and tenant and isinstance(user, str) and user):
            raise InvalidReconcileTask("tenant_id and user_id are required")
        if not records.is_idempotency_key(key):
            raise InvalidReconcileTask("idempotency_key must be 32 lowercase hex")
        if not (isinstance(digest, str) and len(digest) == 64 and all(c in "0123456789abcdef" for c in digest)):
            raise InvalidReconcileTask("content_hash must be 64 lowercase hex")
        tag = payload.get("tag")
        if reason not in REASONS or not (event is None or isinstance(event, str)):
            raise InvalidReconcileTask("unknown reason or bad reply_event_id")
        if not (tag is None or isinstance(tag, str)):
            raise InvalidReconcileTask("bad tag")
        tapped_at = payload.get("tapped_at")
        if tapped_at is not None:
            try:
                from_iso(tapped_at)
            except (TypeError, ValueError) as exc:
                raise InvalidReconcileTask("tapped_at must be an ISO time with an offset") from exc
        return cls(Operation(Actor(tenant, user), key), digest, reason, event, tag, tapped_at)


def enqueue(queue: TaskQueue | None, task: ReconcileTask, *, delay_seconds: float = 0.0) -> bool:
    """Queue the task under its deterministic name; a name seen before counts as queued.

    Returns:
        True when the queue holds the task; False when there is no queue or it did not confirm
        (logged; the start-up re-queue and the user's own re-tap remain).
    """
    if queue is None:
        log("WARNING", "reconcile not queued: no task queue configured", reason=task.reason)
        return False
    try:
        queue.enqueue(task.task_name, task.payload(), delay_seconds=max(0.0, delay_seconds))
    except QueueError as exc:
        log("ERROR", "reconcile not queued", reason=task.reason, error=exc.__class__.__name__,
            task=task.task_name)
        return False
    return True


@dataclass(frozen=True)
class ReconcileResult:
    """The answer to one delivery: ``outcome`` (machine word), HTTP status for the queue, details."""

    outcome: str
    http_status: int
    request_id: str | None = None
    detail: dict[str, Any] = field(default_factory=dict)

    def body(self) -> dict[str, Any]:
        """The JSON body of the HTTP answer."""
        return {"outcome": self.outcome, "request_id": self.request_id, **self.detail}


class ReconcileService:
    """Settles handoff operations. Safe to share across threads.

    Args:
        settings: tenant, timezone, ``queue_max_attempts``, ``event_lease_seconds``, LINE timeout, faults.
        store: the read-write store (creates, outbox claims, follow-ups).
        lookup_store: the read-only store for the lookup (``open_store(read_only=True)``).
        line: the LINE gateway (pushes).
        clock: aware "now".
    """

    def __init__(self, settings: Settings, store: DocumentStore, lookup_store: DocumentStore,
                 line: LineGateway, clock: Clock = utc_now):
        self.settings = settings
        self.store = store
        self.lookup_store = lookup_store
        self.line = line
        self.clock = clock

    # ---- entry ------------------------------------------------------------------------------

    def run(self, task: ReconcileTask, *, retry_count: int) -> ReconcileResult:
        """Reconcile one delivery of ``task``.

        Args:
            retry_count: ``X-CloudTasks-TaskRetryCount`` (0 on the first attempt).
        Returns:
            ReconcileResult: 200 when settled (or refused for good), 503 when the queue should retry.
        """
        now = self.clock()
        last = retry_count + 1 >= self.settings.queue_max_attempts
        if task.operation.actor.tenant_id != self.settings.tenant_id:
            result = ReconcileResult("wrong_actor", 200)
        else:
            try:
                request, op_doc = faults.reconcile_lookup(self.settings, lambda: self._lookup(task.operation))
            except StoreError as exc:
                log("WARNING", "reconcile lookup unavailable", error=exc.__class__.__name__)
                result = self._unsettled(task, "lookup_unavailable", last, now)
            else:
                if request is not None:
                    result = self._found(task, request, last, now)
                else:
                    result = self._not_found(task, op_doc, last, now)
        log("INFO" if result.http_status < 500 else "WARNING", "reconcile answered", outcome=result.outcome,
            status=result.http_status, task_reason=task.reason, task=task.task_name, retry_count=retry_count,
            last_attempt=last, user=hash_user(task.operation.actor.user_id), **result.detail)
        return result

    def _lookup(self, operation: Operation) -> tuple[dict | None, dict | None]:
        doc_id = operation.doc_id
        return (self.lookup_store.get(records.REQUESTS, doc_id),
                self.lookup_store.get(records.OPERATIONS, doc_id))

    @property
    def _lease_seconds(self) -> float:
        return self.settings.event_lease_seconds

    # ---- found ------------------------------------------------------------------------------

    def _found(self, task: ReconcileTask, request: dict, last: bool, now: datetime) -> ReconcileResult:
        operation = task.operation
        if request.get("tenant_id") != operation.actor.tenant_id or request.get("user_id") != operation.actor.user_id:
            return ReconcileResult("wrong_actor", 200)
        if request.get("content_hash") != task.content_hash:
            log("ERROR", "reconcile found a request with other content under the same key")
            return ReconcileResult("idempotency_conflict", 200)
        receipt = receipt_of(request, ALREADY_CREATED)
        message = wording.receipt_message(self.settings, receipt, variant=_receipt_variant(task))
        purpose, answer_anyway = _receipt_purpose(task)
        return self._deliver(task, records.OPERATIONS, purpose, [message], "found", receipt.request_id, last, now,
                             answer_anyway=answer_anyway)

    # ---- not found ---------------------------------------------------------------------------

    def _not_found(self, task: ReconcileTask, op_doc: dict | None, last: bool, now: datetime) -> ReconcileResult:
        if (op_doc or {}).get("state") == records.OperationState.NOT_CREATED:
            message = wording.not_created_message(op_doc.get("reason", ""))
            return self._deliver(task, records.OPERATIONS, "not_created", [message], "not_created", None, last, now)
        if task.reason != UNKNOWN_OUTCOME:
            # Relays and re-queues follow a request that existed; without it there is nothing to tell
            # and no consent to act on (the draft is already confirmed): leave it to a person.
            log("ERROR", "reconcile: the request behind an outbox notice is missing")
            return ReconcileResult("not_found", 200)
        try:
            allowed = self._take_write_budget(task, now)
        except StoreError:
            return self._unsettled(task, "store_unavailable", last, now)
        if not allowed:
            return self._unsettled(task, "write_budget_spent", last, now)
        void = notify.reply_owner(task.reply_event_id) if task.reply_event_id else None
        try:
            created = create_request(self.store, task.operation, task.content_hash, now=now, tz=self.settings.tz,
                                     source="reconcile", notice_owner=notify.PUSH_OWNER,
                                     lease_seconds=self._lease_seconds, void_owner=void,
                                     staff_group_id=self.settings.staff_group_id,
                                     confirmed_at=from_iso(task.tapped_at) if task.tapped_at else None)
        except StoreError as exc:
            log("WARNING", "reconcile create outcome unknown", error=exc.__class__.__name__)
            return self._unsettled(task, "create_unknown", last, now)
        if created.status == REQUEST_CREATED and self.settings.staff_group_id:  # the staff card, now
            StaffRelay(self.settings, self.store, self.line, self.clock).deliver(
                staff_records.notice_id(task.operation.doc_id, staff_records.ANNOUNCE), last=True)
        if created.status in (REQUEST_CREATED, ALREADY_CREATED):
            receipt = created.receipt
            message = wording.receipt_message(self.settings, receipt, variant=_receipt_variant(task))
            outcome = "created" if created.status == REQUEST_CREATED else "found"
            purpose, answer_anyway = _receipt_purpose(task)
            return self._tell(task, records.OPERATIONS, purpose, [message], outcome, receipt.request_id,
                              created.notice, last, now, answer_anyway=answer_anyway)
        if created.status in CONSENT_REFUSALS:
            reason: str = created.status
            if reason == UNCONFIRMED_OPERATION and self._cancelled_by_user(task):
                reason = CANCELLED_BY_USER  # 取消 tapped while "checking": say so, not "resubmit"
            return self._settle_not_created(task, reason, last, now)
        log("ERROR", "reconcile create refused", status=created.status)
        return ReconcileResult(created.status, 200)

    def _cancelled_by_user(self, task: ReconcileTask) -> bool:
        """Whether the operation's draft was cancelled by the user (「取消」); False if unreadable."""
        try:
            draft = self.store.get(records.DRAFTS, task.operation.doc_id)
        except StoreError:
            return False
        return (draft or {}).get("status") == drafts.CANCELLED

    def _take_write_budget(self, task: ReconcileTask, now: datetime) -> bool:
        """Claim reconcile's single write attempt for this operation (True at most once)."""
        operation = task.operation

        def txn(tx: Transaction) -> bool:
            doc = tx.get(records.OPERATIONS, operation.doc_id)
            if doc and doc.get("reconcile_write_attempted"):
                return False
            base = doc or {"tenant_id": operation.actor.tenant_id, "user_id": operation.actor.user_id,
                           "idempotency_key": operation.idempotency_key, "content_hash": task.content_hash,
                           "state": records.OperationState.PENDING_VERIFICATION.value,
                           "checked_event": task.reply_event_id,
                           "created_at": to_iso(now)}
            tx.set(records.OPERATIONS, operation.doc_id, {**base, "reconcile_write_attempted": True,
                                                          "updated_at": to_iso(now)})
            return True

        return self.store.run_transaction(txn)

    def _settle_not_created(self, task: ReconcileTask, reason: str, last: bool, now: datetime) -> ReconcileResult:
        """Record "not created" with its notice (one transaction), then tell the user to resubmit."""
        operation = task.operation

        def txn(tx: Transaction) -> notify.NoticeClaim:
            doc = tx.get(records.OPERATIONS, operation.doc_id)
            if doc and doc.get("state") == records.OperationState.NOT_CREATED:
                decision, updated = notify.try_claim(doc, notify.PUSH_OWNER, now=now,
                                                     lease_seconds=self._lease_seconds)
                if updated is not None:
                    tx.set(records.OPERATIONS, operation.doc_id, updated)
                return decision
            tx.set(records.OPERATIONS, operation.doc_id, {
                **(doc or {"tenant_id": operation.actor.tenant_id, "user_id": operation.actor.user_id,
                           "idempotency_key": operation.idempotency_key, "content_hash": task.content_hash,
                           "created_at": to_iso(now)}),
                "state": records.OperationState.NOT_CREATED.value, "reason": reason, "updated_at": to_iso(now),
                **notify.notice_fields("not_created", notify.PUSH_OWNER, now=now,
                                       lease_seconds=self._lease_seconds,
                                       retry_key=operation.retry_key("not_created")),
            })
            return notify.NoticeClaim.CLAIMED

        try:
            decision = self.store.run_transaction(txn)
        except StoreError:
            return self._unsettled(task, "store_unavailable", last, now)
        return self._tell(task, records.OPERATIONS, "not_created", [wording.not_created_message(reason)],
                          "not_created", None, decision, last, now, detail={"reason": reason})

    # ---- telling the user ----------------------------------------------------------------------

    def _deliver(self, task: ReconcileTask, collection: str, purpose: str, messages: list, outcome: str,
                 request_id: str | None, last: bool, now: datetime, *, answer_anyway: bool = False) -> ReconcileResult:
        """Claim the notice for the push, then tell the user (unless already told or held)."""
        void = notify.reply_owner(task.reply_event_id) if task.reply_event_id else None
        try:
            decision = notify.claim_notice(self.store, collection, task.operation, notify.PUSH_OWNER, now=now,
                                           lease_seconds=self._lease_seconds, void_owner=void)
        except StoreError:
            if not last:
                return ReconcileResult("store_unavailable", 503, request_id)
            decision = notify.NoticeClaim.NO_NOTICE  # last attempt: push anyway; the retry key dedups pushes
        return self._tell(task, collection, purpose, messages, outcome, request_id, decision, last, now,
                          answer_anyway=answer_anyway)

    def _tell(self, task: ReconcileTask, collection: str, purpose: str, messages: list, outcome: str,
              request_id: str | None, decision: notify.NoticeClaim, last: bool, now: datetime,
              detail: dict | None = None, *, answer_anyway: bool = False) -> ReconcileResult:
        """Push unless the notice was delivered (or, with ``answer_anyway``, push with the purpose's
        retry key regardless: LINE turns a repeat into 409), or a live reply holds it (503)."""
        detail = dict(detail or {})
        if decision is notify.NoticeClaim.DELIVERED and not answer_anyway:
            return ReconcileResult(outcome, 200, request_id, {**detail, "notice": "already_delivered"})
        if decision is notify.NoticeClaim.HELD:
            # A reply to the user is in flight (its lease is live): let it finish, look again later.
            if last:
                log("WARNING", "reconcile left the notice to a live reply on its last attempt")
                return ReconcileResult(outcome, 200, request_id, {**detail, "notice": "left_to_reply"})
            return ReconcileResult("notice_held", 503, request_id, detail)
        if decision is notify.NoticeClaim.CLAIMED and not answer_anyway:
            settled = self._after_earlier_reply(task, collection, outcome, request_id, last, now, detail)
            if settled is not None:
                return settled
        try:
            pushed = notify.push_notice(self.line, task.operation, messages, purpose=purpose,
                                        timeout_seconds=self.settings.line_timeout_seconds)
        except LineSendError as exc:
            # Every row but REFUSED may be tried again: the push carries its retry key (DESIGN §11).
            retryable = exc.retryable
            log("WARNING", "reconcile push failed", error=exc.__class__.__name__,
                status=getattr(exc, "status", None), delivery=exc.delivery.value, retryable=retryable)
            if retryable and not last:
                return ReconcileResult("push_failed", 503, request_id, detail)
            self._record_followup(task, "push_failed", now, with_notice=False)
            return ReconcileResult("push_failed", 200, request_id, {**detail, "notice": "followup_recorded"})
        if decision is notify.NoticeClaim.CLAIMED:
            try:
                notify.mark_delivered(self.store, collection, task.operation, notify.PUSH_OWNER, now=self.clock())
            except StoreError as exc:  # the next delivery pushes again with the same key → 409
                log("WARNING", "push delivered but not recorded", error=exc.__class__.__name__)
        return ReconcileResult(outcome, 200, request_id,
                               {**detail, "notice": "push_duplicate" if pushed.duplicate else "pushed"})

    def _after_earlier_reply(self, task: ReconcileTask, collection: str, outcome: str, request_id: str | None,
                             last: bool, now: datetime, detail: dict) -> ReconcileResult | None:
        """Before pushing a notice taken over from a reply, ask the inbox what became of that reply.

        Returns:
            None to push (no earlier reply, or it was refused by LINE, or never started: an attempt
            still running that has not started its reply is fenced off first, ``inbox.take_over_reply``);
            otherwise the answer without a push: replied → "delivered"; sent without an answer (or
            started by an attempt that died) → "reply_unknown", never repeated blindly (DESIGN §3).
        """
        operation = task.operation
        void = notify.reply_owner(task.reply_event_id) if task.reply_event_id else None
        try:
            notice = notify.Notice.of(self.store.get(collection, operation.doc_id))
            holder = (notice.taken_from if notice else None) or ""
            reply_event = notify.reply_event_of(holder)
            if reply_event is None or holder == void:
                return None
            state = inbox.take_over_reply(self.store, self.settings.tenant_id, reply_event, now=self.clock())
        except StoreError as exc:
            log("WARNING", "reconcile could not read the earlier reply", error=exc.__class__.__name__)
            if not last:
                return ReconcileResult("store_unavailable", 503, request_id, detail)
            self._record_followup(task, "notice_unverified:inbox_unavailable", now, with_notice=False)
            return ReconcileResult(outcome, 200, request_id, {**detail, "notice": "not_pushed"})
        if state is inbox.ReplyState.QUEUED:
            # That event went to the queue, whose worker tells the user (by reply or push): wait for it.
            if not last:
                return ReconcileResult("notice_held", 503, request_id, detail)
            log("WARNING", "reconcile left the notice to a queued answer on its last attempt")
            return ReconcileResult(outcome, 200, request_id, {**detail, "notice": "left_to_queued_answer"})
        try:
            if state is inbox.ReplyState.REPLIED:
                notify.mark_delivered(self.store, collection, operation, holder, now=self.clock())
                return ReconcileResult(outcome, 200, request_id, {**detail, "notice": "delivered_by_reply"})
            if state is inbox.ReplyState.UNKNOWN:
                notify.settle_reply_unknown(self.store, collection, operation, owner=holder, now=self.clock())
                log("WARNING", "receipt reply outcome unknown: not pushed again",
                    user=hash_user(operation.actor.user_id))
                return ReconcileResult(outcome, 200, request_id, {**detail, "notice": "reply_unknown"})
        except StoreError as exc:  # the next delivery reads the inbox again and decides the same
            log("WARNING", "earlier reply's outcome not recorded", error=exc.__class__.__name__)
            return ReconcileResult("store_unavailable", 503 if not last else 200, request_id, detail)
        return None

    # ---- unknown after every attempt -----------------------------------------------------------

    def _unsettled(self, task: ReconcileTask, reason: str, last: bool, now: datetime) -> ReconcileResult:
        """Still unknown: 503 so the queue retries; on the last attempt, needs_human_followup."""
        if not last:
            return ReconcileResult(reason, 503)
        if task.reason != UNKNOWN_OUTCOME:
            # The request was known to exist when this task was queued; only its notice is unverified.
            self._record_followup(task, f"notice_unverified:{reason}", now, with_notice=False)
            return ReconcileResult("needs_human_followup", 200, None, {"reason": reason, "notice": "not_pushed"})
        recorded = self._record_followup(task, reason, now, with_notice=True)
        try:
            pushed = notify.push_notice(self.line, task.operation, [wording.followup_message(recorded=recorded)],
                                        purpose="needs_human_followup",
                                        timeout_seconds=self.settings.line_timeout_seconds)
        except LineSendError as exc:
            log("ERROR", "follow-up push failed", error=exc.__class__.__name__, delivery=exc.delivery.value)
            return ReconcileResult("needs_human_followup", 200, None, {"reason": reason, "notice": "push_failed"})
        if recorded:
            try:
                notify.mark_delivered(self.store, records.FOLLOWUPS, task.operation, notify.PUSH_OWNER,
                                      now=self.clock())
            except StoreError:
                pass
        return ReconcileResult("needs_human_followup", 200, None,
                               {"reason": reason, "notice": "push_duplicate" if pushed.duplicate else "pushed"})

    def _record_followup(self, task: ReconcileTask, reason: str, now: datetime, *, with_notice: bool) -> bool:
        """Create ``handoff_followups/{operation_id}`` without reading anything first.

        Returns:
            True when the record exists (written now or before); False when the store refused.
        """
        operation = task.operation
        doc = {"tenant_id": operation.actor.tenant_id, "user_id": operation.actor.user_id,
               "idempotency_key": operation.idempotency_key, "content_hash": task.content_hash,
               "status": "needs_human_followup", "reason": reason, "task_reason": task.reason,
               "created_at": to_iso(now)}
        if with_notice:
            doc.update(notify.notice_fields("needs_human_followup", notify.PUSH_OWNER, now=now,
                                            lease_seconds=self._lease_seconds,
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


def requeue_delay_seconds(op_doc: dict, now: datetime) -> float:
    """Seconds until a reply's claim on the notice ends (0 when none is live)."""
    until = op_doc.get("notice_claim_until")
    if not until or op_doc.get("notice_owner") == notify.PUSH_OWNER:
        return 0.0
    return max(0.0, (from_iso(until) - now) / timedelta(seconds=1))

