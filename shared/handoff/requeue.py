"""The handoff re-queue queries: what the store shows unsettled, as reconcile tasks (docs/design.md §1, §4, §11).

Operations whose notice was never delivered, operations still pending verification, and drafts
whose confirmation is recorded but unsettled (no request, no "not created", no follow-up) are
queued again under deterministic task names; a name the queue has seen is not queued twice. The
names carry the sweep's round (wall-clock time divided by the queue's retry window), so work
whose earlier task ended ``failed`` — its target was down longer than the retry window — is
queued again once per window, however long the outage lasts. ``shared.sweep`` runs them (its
``REQUEUES``): at a serving webhook's start, every ``sweep_interval_seconds``, and when a
scheduler calls functions/reconcile's sweep in production.
"""
from __future__ import annotations

from datetime import datetime

from shared.clock import from_iso
from shared.config import Settings
from shared.handoff import drafts, notify, records
from shared.handoff.reconcile import (
    REQUEUE,
    UNKNOWN_OUTCOME,
    ReconcileTask,
    enqueue,
    requeue_delay_seconds,
)
from shared.handoff.records import Operation
from shared.identity import Actor
from shared.logs import log
from shared.queue import TaskQueue
from shared.store import DocumentStore


def pending_operations(store: DocumentStore, tenant_id: str) -> list[dict]:
    """Operation documents of the tenant with an undelivered notice or still pending verification.

    Raises:
        StoreUnavailable: the store could not be read.
    """
    undelivered = store.query(records.OPERATIONS, where={"tenant_id": tenant_id, "notice_state": notify.PENDING})
    pending = store.query(records.OPERATIONS, where={"tenant_id": tenant_id,
                                                     "state": records.OperationState.PENDING_VERIFICATION.value})
    seen: dict[str, dict] = {}
    for doc in undelivered + pending:
        seen.setdefault(f"{doc.get('user_id')}/{doc.get('idempotency_key')}", doc)
    return list(seen.values())


def sweep_round(settings: Settings, now: datetime) -> str:
    """The sweep's round: one per queue retry window (the same in every process)."""
    window = max(1.0, settings.queue_retry_window_seconds + settings.reconcile_delay_seconds)
    return str(int(now.timestamp() // window))


def unsettled_confirmations(settings: Settings, store: DocumentStore, now: datetime) -> list[ReconcileTask]:
    """Reconcile tasks for drafts whose 「確認送出」 is recorded but whose outcome is still unknown.

    A draft counts once its confirmation is older than one retry window (the webhook's own task
    had its chance) and nothing settled it: no request (the draft would be ``confirmed``), no
    "not created" operation, no ``needs_human_followup``. The task carries the tap's time, so
    expiry is judged by it.

    Raises:
        StoreUnavailable: the store could not be read.
    """
    window = settings.queue_retry_window_seconds + settings.reconcile_delay_seconds
    round_tag = sweep_round(settings, now)
    tasks = []
    for draft in drafts.confirming_drafts(store, settings.tenant_id):
        try:
            operation = Operation(Actor(draft["tenant_id"], draft["user_id"]), draft["idempotency_key"])
            tapped = from_iso(draft["confirm_requested_at"])
        except (KeyError, TypeError, ValueError):
            log("ERROR", "confirming draft is malformed; skipped")
            continue
        if (now - tapped).total_seconds() < window:
            continue
        op_doc = store.get(records.OPERATIONS, operation.doc_id) or {}
        settled = (records.OperationState.CREATED, records.OperationState.NOT_CREATED)
        if op_doc.get("state") in settled or store.get(records.FOLLOWUPS, operation.doc_id):
            continue
        tasks.append(ReconcileTask(operation, draft["content_hash"], UNKNOWN_OUTCOME, draft.get("confirm_event"),
                                   tag=f"sweep|{round_tag}", tapped_at=draft["confirm_requested_at"]))
    return tasks


def requeue_task(operation: Operation, doc: dict, round_tag: str = "") -> ReconcileTask:
    """The re-queue task for one pending operation document.

    Its name is tagged with the state and notice claim it is queued for, so a restart re-queues
    work whose earlier task already ended, while two workers reading the same state dedupe;
    ``round_tag`` (``sweep_round``) lets a later sweep queue it again once per retry window. An
    operation still pending verification keeps the event that was told "checking", so the push
    that follows carries that event's retry key (LINE delivers it once).

    Raises:
        KeyError / TypeError: a malformed document.
    """
    tag = "|".join([*(str(doc.get(name)) for name in ("state", "notice_owner", "notice_claim_until")), round_tag])
    if doc.get("state") == records.OperationState.PENDING_VERIFICATION:
        return ReconcileTask(operation, doc["content_hash"], UNKNOWN_OUTCOME, doc.get("checked_event"), tag=tag)
    return ReconcileTask(operation, doc["content_hash"], REQUEUE, tag=tag)


def requeue_pending(settings: Settings, store: DocumentStore, queue: TaskQueue | None, *,
                    now: datetime) -> int:
    """Queue a reconcile task for every pending operation of this tenant.

    A notice still owned by a reply is queued to run when that reply's lease ends.
    Returns:
        How many operations were handed to the queue (a known name counts).
    Raises:
        StoreUnavailable: the store could not be read.
    """
    count = 0
    round_tag = sweep_round(settings, now)
    for doc in pending_operations(store, settings.tenant_id):
        try:
            operation = Operation(Actor(doc["tenant_id"], doc["user_id"]), doc["idempotency_key"])
            task = requeue_task(operation, doc, round_tag)
        except (KeyError, TypeError):
            log("ERROR", "pending operation is malformed; skipped")
            continue
        if enqueue(queue, task, delay_seconds=requeue_delay_seconds(doc, now)):
            count += 1
    confirmations = 0
    for task in unsettled_confirmations(settings, store, now):
        if enqueue(queue, task):
            confirmations += 1
    log("INFO", "re-queue done", operations=count, confirmations=confirmations)
    return count + confirmations
