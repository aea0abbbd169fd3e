"""The staff group's due notices: reminders and follow-up announcements.

One pass (``record_due``), with an injected clock:

1. every request still ``awaiting_acceptance`` for ``LOCAL_STAFF_REMIND_AFTER_SECONDS`` or longer
   (since it was created, or last turned back) gets a ``reminder`` notice — once per request: the
   notice's id is derived from the request, and a transaction writes it only while the request is
   still awaiting and has none;
2. every ``needs_human_followup`` record from reconcile gets a ``followup`` notice, once.

It runs as part of the project's one sweep (``shared.sweep.sweep``: every
``LOCAL_SWEEP_INTERVAL_SECONDS`` in a serving webhook; in production the scheduler's
``handoff_sweep`` call to functions/reconcile), whose staff re-queue query then queues every
pending staff notice for its push. Nothing here pushes or queues: pushes are ``staff_notice``
tasks (``shared.staff.relay``).

Source: docs/design.md §10 (reminder once; follow-ups announced), §11 (the store is the source of truth).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Callable

from shared.clock import from_iso, require_aware
from shared.config import Settings
from shared.handoff import records as handoff_records
from shared.handoff import staff_outbox
from shared.identity import Actor
from shared.logs import log
from shared.store import DocumentStore, StoreError, Transaction


@dataclass
class DueNotices:
    """What one pass recorded: the notice ids of the reminders and follow-ups written."""

    reminders: list[str] = field(default_factory=list)
    followups: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, int]:
        """``{reminders, followups}`` counts."""
        return {"reminders": len(self.reminders), "followups": len(self.followups)}


def _awaiting_since(request: dict) -> datetime | None:
    text = request.get("awaiting_since") or request.get("created_at")
    try:
        return from_iso(text) if text else None
    except ValueError:
        return None


def record_reminder(store: DocumentStore, tenant_id: str, operation_doc_id: str, *, now: datetime) -> bool:
    """Write the request's reminder notice if it is still awaiting and has none (one transaction).

    Returns:
        True when this call wrote it.
    Raises:
        StoreError: nothing written (or, for StoreTimeout, perhaps written: the next sweep sees it).
    """
    ref = staff_outbox.NoticeRef(staff_outbox.notice_id(operation_doc_id, staff_outbox.REMINDER))

    def txn(tx: Transaction) -> bool:
        request = tx.get(handoff_records.REQUESTS, operation_doc_id)
        existing = tx.get(staff_outbox.NOTICES, ref.doc_id)
        if (existing is not None or request is None or request.get("tenant_id") != tenant_id
                or (request.get("human_state") or staff_outbox.AWAITING) != staff_outbox.AWAITING):
            return False
        tx.set(staff_outbox.NOTICES, ref.doc_id, staff_outbox.notice_doc(
            tenant_id=tenant_id, user_id=request["user_id"], operation_doc_id=operation_doc_id,
            purpose=staff_outbox.REMINDER, now=now, request_id=request.get("request_id")))
        return True

    return store.run_transaction(txn)


def record_followup_notice(store: DocumentStore, tenant_id: str, operation_doc_id: str, *, now: datetime) -> bool:
    """Write the staff notice of one ``needs_human_followup`` record if it has none (one transaction).

    Returns:
        True when this call wrote it.
    Raises:
        StoreError: as for ``record_reminder``.
    """
    ref = staff_outbox.NoticeRef(staff_outbox.notice_id(operation_doc_id, staff_outbox.FOLLOWUP))

    def txn(tx: Transaction) -> bool:
        followup = tx.get(handoff_records.FOLLOWUPS, operation_doc_id)
        existing = tx.get(staff_outbox.NOTICES, ref.doc_id)
        if existing is not None or followup is None or followup.get("tenant_id") != tenant_id:
            return False
        tx.set(staff_outbox.NOTICES, ref.doc_id, staff_outbox.notice_doc(
            tenant_id=tenant_id, user_id=followup["user_id"], operation_doc_id=operation_doc_id,
            purpose=staff_outbox.FOLLOWUP, now=now))
        return True

    return store.run_transaction(txn)


def record_due(settings: Settings, store: DocumentStore, *, now: datetime) -> DueNotices:
    """Record the due reminders and follow-up notices (module docstring); both need a staff group configured.

    Args:
        now: aware current time (injected in tests).
    Returns:
        DueNotices.
    Raises:
        StoreUnavailable: the store could not be read (the next slot tries again).
    """
    require_aware(now)
    report = DueNotices()
    tenant = settings.tenant_id
    if settings.staff_group_id:
        threshold = timedelta(seconds=settings.staff_remind_after_seconds)
        awaiting = store.query(handoff_records.REQUESTS, where={"tenant_id": tenant,
                                                                "human_state": staff_outbox.AWAITING})
        old = [request for request in awaiting
               if (since := _awaiting_since(request)) is not None and now - since >= threshold]
        report.reminders = _record_each(old, lambda doc_id: record_reminder(store, tenant, doc_id, now=now),
                                        staff_outbox.REMINDER, "staff reminder not recorded")
        followups = store.query(handoff_records.FOLLOWUPS, where={"tenant_id": tenant,
                                                                  "status": "needs_human_followup"})
        report.followups = _record_each(followups,
                                        lambda doc_id: record_followup_notice(store, tenant, doc_id, now=now),
                                        staff_outbox.FOLLOWUP, "staff follow-up notice not recorded")
    counts = report.as_dict()
    log("INFO", "staff sweep done", reminders=counts["reminders"], followups=counts["followups"])
    return report


def _record_each(docs: list[dict], write: Callable[[str], bool], purpose: str, failure: str) -> list[str]:
    """``write`` the notice of each document's operation → the notice ids written now. A store error
    on one is logged (``failure``) and the rest go on; the next pass tries it again."""
    written = []
    for doc in docs:
        doc_id = _operation_doc_id(doc)
        try:
            if doc_id and write(doc_id):
                written.append(staff_outbox.notice_id(doc_id, purpose))
        except StoreError as exc:
            log("WARNING", failure, error=exc.__class__.__name__)
    return written


def _operation_doc_id(doc: dict) -> str | None:
    """The handoff operation's document id of a request or follow-up document."""
    try:
        operation = handoff_records.Operation(Actor(doc["tenant_id"], doc["user_id"]), doc["idempotency_key"])
    except (KeyError, TypeError):
        log("ERROR", "staff sweep: malformed document skipped")
        return None
    return operation.doc_id
