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

Three parts, one per module: the task and one delivery of it (``reconcile_task``: ``ReconcileTask``,
``Attempt``, ``ReconcileResult``); lookup and settle (here: ``ReconcileService``); telling the user
(``reconcile_notify.ReconcileNotifier``).

Source: docs/design.md §4 (Reconcile: lookup → not_found → one resend with the same key; lookup
blocked → stay pending); Cloud Tasks docs (any non-2xx is retried; X-CloudTasks-* headers).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Callable

from shared.clock import Clock, from_iso, to_iso, utc_now
from shared.config import Settings
from shared.handoff import drafts, faults, notify, records, wording
from shared.handoff.reconcile_notify import ReconcileNotifier, Tell
from shared.handoff.reconcile_task import (  # noqa: F401  (the task's names, for the callers of reconcile)
    CANCELLED_BY_USER,
    REASONS,
    RELAY,
    REQUEUE,
    TASK_KIND,
    UNKNOWN_OUTCOME,
    Attempt,
    InvalidReconcileTask,
    ReconcileResult,
    ReconcileTask,
    enqueue,
)
from shared.handoff.records import Operation
from shared.handoff.requests import (
    ALREADY_CREATED,
    CONSENT_REFUSALS,
    REQUEST_CREATED,
    UNCONFIRMED_OPERATION,
    create_request,
    receipt_of,
)
from shared.line import LineGateway
from shared.logs import hash_user, log
from shared.store import DocumentStore, StoreError, Transaction


def _receipt_variant(task: ReconcileTask) -> str:
    """The user heard "checking" only when the webhook's create had an unknown outcome."""
    return "after_check" if task.reason == UNKNOWN_OUTCOME else "created"


def _receipt_tell(task: ReconcileTask, receipt, outcome: str, settings: Settings) -> Tell:
    """The receipt to tell (the operation's one receipt notice, pushed under its "receipt" key).

    A "checking" answer is followed up even when the receipt reached the user earlier by another
    path (an earlier tap): the user who was told "checking" hears the result (``Tell.checked_event``).
    After a reply of unknown outcome that carried it, the receipt is pushed in restating words.
    """
    variant = _receipt_variant(task)
    checked = (task.reply_event_id or "unknown") if task.reason == UNKNOWN_OUTCOME else None
    return Tell(records.OPERATIONS, "receipt", lambda: [wording.receipt_message(settings, receipt, variant=variant)],
                outcome, receipt.request_id, checked_event=checked,
                restate=lambda: [wording.receipt_message(settings, receipt, variant="restated")])


class ReconcileService:
    """Looks up and settles handoff operations; ``notifier`` tells the user. Safe to share across threads.

    Args:
        settings: tenant, timezone, ``queue_max_attempts``, ``event_lease_seconds``, LINE timeout, faults.
        store: the read-write store (creates, outbox claims, follow-ups).
        lookup_store: the read-only store for the lookup (``open_store(read_only=True)``).
        line: the LINE gateway (pushes).
        clock: aware "now".
        announce: tells the staff group, now, of a request this service created (called with the
            operation's document id; ``shared.staff.relay.StaffRelay.announce_now``). None: the
            queued ``staff_notice`` task alone tells it.
    """

    def __init__(self, settings: Settings, store: DocumentStore, lookup_store: DocumentStore,
                 line: LineGateway, clock: Clock = utc_now, *, announce: Callable[[str], object] | None = None):
        self.settings = settings
        self.announce = announce
        self.store = store
        self.lookup_store = lookup_store
        self.line = line
        self.clock = clock
        self.notifier = ReconcileNotifier(settings, store, line, clock)

    # ---- entry ------------------------------------------------------------------------------

    def run(self, task: ReconcileTask, *, retry_count: int) -> ReconcileResult:
        """Reconcile one delivery of ``task``.

        Args:
            retry_count: ``X-CloudTasks-TaskRetryCount`` (0 on the first attempt).
        Returns:
            ReconcileResult: 200 when settled (or refused for good), 503 when the queue should retry.
        """
        attempt = Attempt(task, self.clock(), retry_count + 1 >= self.settings.queue_max_attempts)
        if task.operation.actor.tenant_id != self.settings.tenant_id:
            result = ReconcileResult("wrong_actor", 200)
        else:
            try:
                request, op_doc = faults.reconcile_lookup(self.settings, lambda: self._lookup(task.operation))
            except StoreError as exc:
                log("WARNING", "reconcile lookup unavailable", error=exc.__class__.__name__)
                result = self._unsettled(attempt, "lookup_unavailable")
            else:
                if request is not None:
                    result = self._found(attempt, request, op_doc)
                else:
                    result = self._not_found(attempt, op_doc)
        log("INFO" if result.http_status < 500 else "WARNING", "reconcile answered", outcome=result.outcome,
            status=result.http_status, task_reason=task.reason, task=task.task_name, retry_count=retry_count,
            last_attempt=attempt.last, user=hash_user(task.operation.actor.user_id), **result.detail)
        return result

    # ---- lookup -----------------------------------------------------------------------------

    def _lookup(self, operation: Operation) -> tuple[dict | None, dict | None]:
        """(the request, the operation document) by key, through the read-only store, in one read."""
        doc_id = operation.doc_id
        request, op_doc = self.lookup_store.get_all([(records.REQUESTS, doc_id), (records.OPERATIONS, doc_id)])
        return request, op_doc

    # ---- settle: found ----------------------------------------------------------------------

    def _found(self, attempt: Attempt, request: dict, op_doc: dict | None) -> ReconcileResult:
        task, operation = attempt.task, attempt.operation
        if request.get("tenant_id") != operation.actor.tenant_id or request.get("user_id") != operation.actor.user_id:
            return ReconcileResult("wrong_actor", 200)
        if request.get("content_hash") != task.content_hash:
            log("ERROR", "reconcile found a request with other content under the same key")
            return ReconcileResult("idempotency_conflict", 200)
        receipt = receipt_of(request, ALREADY_CREATED)
        return self.notifier.deliver(attempt, _receipt_tell(task, receipt, "found", self.settings), op_doc)

    # ---- settle: not found --------------------------------------------------------------------

    def _not_found(self, attempt: Attempt, op_doc: dict | None) -> ReconcileResult:
        task = attempt.task
        if (op_doc or {}).get("state") == records.OperationState.NOT_CREATED:
            settled_reason = (op_doc or {}).get("reason", "")
            return self.notifier.deliver(attempt, Tell(records.OPERATIONS, "not_created",
                                                       lambda: [wording.not_created_message(settled_reason)],
                                                       "not_created"), op_doc)
        if task.reason != UNKNOWN_OUTCOME:
            # Relays and re-queues follow a request that existed; without it there is nothing to tell
            # and no consent to act on (the draft is already confirmed): leave it to a person.
            log("ERROR", "reconcile: the request behind an outbox notice is missing")
            return ReconcileResult("not_found", 200)
        try:
            allowed = self._take_write_budget(attempt)
        except StoreError:
            return self._unsettled(attempt, "store_unavailable")
        if not allowed:
            return self._unsettled(attempt, "write_budget_spent")
        try:
            created = create_request(self.store, task.operation, task.content_hash, now=attempt.now,
                                     tz=self.settings.tz, source="reconcile", notice_owner=notify.PUSH_OWNER,
                                     lease_seconds=self.settings.event_lease_seconds, void_owner=attempt.void_owner,
                                     staff_group_id=self.settings.staff_group_id,
                                     confirmed_at=from_iso(task.tapped_at) if task.tapped_at else None)
        except StoreError as exc:
            log("WARNING", "reconcile create outcome unknown", error=exc.__class__.__name__)
            return self._unsettled(attempt, "create_unknown")
        if created.status == REQUEST_CREATED and self.settings.staff_group_id and self.announce is not None:
            self.announce(task.operation.doc_id)  # the staff card, now
        if created.status in (REQUEST_CREATED, ALREADY_CREATED):
            outcome = "created" if created.status == REQUEST_CREATED else "found"
            return self.notifier.tell(attempt, _receipt_tell(task, created.receipt, outcome, self.settings),
                                      created.notice)
        if created.status in CONSENT_REFUSALS:
            reason: str = created.status
            if reason == UNCONFIRMED_OPERATION and self._cancelled_by_user(task):
                reason = CANCELLED_BY_USER  # 取消 tapped while "checking": say so, not "resubmit"
            return self._settle_not_created(attempt, reason)
        log("ERROR", "reconcile create refused", status=created.status)
        return ReconcileResult(created.status, 200)

    def _cancelled_by_user(self, task: ReconcileTask) -> bool:
        """Whether the operation's draft was cancelled by the user (「取消」); False if unreadable."""
        try:
            draft = self.store.get(records.DRAFTS, task.operation.doc_id)
        except StoreError:
            return False
        return (draft or {}).get("status") == drafts.CANCELLED

    def _take_write_budget(self, attempt: Attempt) -> bool:
        """Claim reconcile's single write attempt for this operation (True at most once)."""
        task, operation, now = attempt.task, attempt.operation, attempt.now

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

    def _settle_not_created(self, attempt: Attempt, reason: str) -> ReconcileResult:
        """Record "not created" with its notice (one transaction), then tell the user to resubmit."""
        task, operation, now = attempt.task, attempt.operation, attempt.now
        lease = self.settings.event_lease_seconds

        def txn(tx: Transaction) -> notify.NoticeClaim:
            doc = tx.get(records.OPERATIONS, operation.doc_id)
            if doc and doc.get("state") == records.OperationState.NOT_CREATED:
                decision, updated = notify.try_claim(doc, notify.PUSH_OWNER, now=now, lease_seconds=lease)
                if updated is not None:
                    tx.set(records.OPERATIONS, operation.doc_id, updated)
                return decision
            tx.set(records.OPERATIONS, operation.doc_id, {
                **(doc or {"tenant_id": operation.actor.tenant_id, "user_id": operation.actor.user_id,
                           "idempotency_key": operation.idempotency_key, "content_hash": task.content_hash,
                           "created_at": to_iso(now)}),
                "state": records.OperationState.NOT_CREATED.value, "reason": reason, "updated_at": to_iso(now),
                **notify.notice_fields("not_created", notify.PUSH_OWNER, now=now, lease_seconds=lease,
                                       retry_key=operation.retry_key("not_created")),
            })
            return notify.NoticeClaim.CLAIMED

        try:
            decision = self.store.run_transaction(txn)
        except StoreError:
            return self._unsettled(attempt, "store_unavailable")
        return self.notifier.tell(attempt, Tell(records.OPERATIONS, "not_created",
                                                lambda: [wording.not_created_message(reason)], "not_created",
                                                detail={"reason": reason}), decision)

    # ---- settle: unknown after every attempt ----------------------------------------------------

    def _unsettled(self, attempt: Attempt, reason: str) -> ReconcileResult:
        """Still unknown: 503 so the queue retries; on the last attempt, needs_human_followup."""
        if not attempt.last:
            return ReconcileResult(reason, 503)
        if attempt.task.reason != UNKNOWN_OUTCOME:
            # The request was known to exist when this task was queued; only its notice is unverified.
            self.notifier.record_followup(attempt, f"notice_unverified:{reason}", with_notice=False)
            return ReconcileResult("needs_human_followup", 200, None, {"reason": reason, "notice": "not_pushed"})
        return self.notifier.tell_followup(attempt, reason)


def requeue_delay_seconds(op_doc: dict, now: datetime) -> float:
    """Seconds until a reply's claim on the notice ends (0 when none is live)."""
    until = op_doc.get("notice_claim_until")
    if not until or op_doc.get("notice_owner") == notify.PUSH_OWNER:
        return 0.0
    return max(0.0, (from_iso(until) - now) / timedelta(seconds=1))
