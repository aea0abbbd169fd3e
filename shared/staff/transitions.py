"""A staff action on a request: one store transaction on the request's state (docs/design.md §10).

| op | from | to | the resident is told |
|---|---|---|---|
| take (我來處理) | awaiting_acceptance | accepted | 「已有專人接手你的服務詢問」 |
| decline (無法處理) | awaiting_acceptance | declined | declined, with the menu |
| done (已完成) | accepted | completed | completed |
| back (轉回待處理) | accepted | awaiting_acceptance | that it waits for a person again |

The transaction reads the request and the resident notice it may write, then either writes
nothing or writes together: the request (state, ``staff_revision`` + 1, history, ``staff_round`` and
``last_resident_notice``), one audit entry and the resident's notice (the staff outbox). A notice's
id is its request, purpose and round (``staff_outbox.round_key``: the number of turn-backs before it),
so each change is told once: a request taken, turned back and taken again tells 接手, 等待, 接手
again, each once, in that order (the notice names the one before it, ``after_notice``). A card made
for another revision, or for a state the request is no longer in, is ``stale``: nothing changes, and
the answer carries the current request so the tapper can be told who holds it. The same member's
repeated tap of the card that just applied is ``already_applied``. No LINE or queue call happens
inside (it may re-run).

Source: docs/design.md §10, §4 (transactional outbox).
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from shared.clock import require_aware, to_iso
from shared.handoff import codes, staff_outbox
from shared.handoff import records as handoff_records
from shared.staff import audit
from shared.staff.access import StaffMember
from shared.staff.cards import BACK, DECLINE, DONE, TAKE, StaffReference
from shared.store import DocumentStore, Transaction

APPLIED, ALREADY_APPLIED, STALE, NOT_FOUND = "applied", "already_applied", "stale", "not_found"

#: op → (required state, new state, resident notice purpose).
TRANSITIONS: dict[str, tuple[str, str, str]] = {
    TAKE: (staff_outbox.AWAITING, staff_outbox.ACCEPTED, staff_outbox.ACCEPTED),
    DECLINE: (staff_outbox.AWAITING, staff_outbox.DECLINED, staff_outbox.DECLINED),
    DONE: (staff_outbox.ACCEPTED, staff_outbox.COMPLETED, staff_outbox.COMPLETED),
    BACK: (staff_outbox.ACCEPTED, staff_outbox.AWAITING, staff_outbox.RETURNED),
}


def notice_key(op: str, request: dict[str, Any]) -> str:
    """The key (``staff_outbox.round_key``) of the resident notice ``op`` writes on ``request`` as it is
    before the op. A turn-back starts the next round; 完成 and 無法處理 end the request, so they are
    told once whatever the round."""
    purpose = TRANSITIONS[op][2]
    round_number = int(request.get("staff_round") or 0)
    if op == BACK:
        return staff_outbox.round_key(purpose, round_number + 1)
    if op == TAKE:
        return staff_outbox.round_key(purpose, round_number)
    return purpose


def _earlier_notice(op: str, request: dict[str, Any], doc_id: str) -> str | None:
    """The resident notice told just before the one ``op`` writes: the request's last one; for a
    request that has none recorded, its accepted notice of round 0 (the only earlier step then)."""
    last = request.get("last_resident_notice")
    if last:
        return str(last)
    if op in (DONE, BACK) or int(request.get("staff_revision") or 0) > 0:
        return staff_outbox.notice_id(doc_id, staff_outbox.ACCEPTED)
    return None


@dataclass(frozen=True)
class TransitionResult:
    """The outcome of one staff tap.

    Args:
        status: applied | already_applied | stale | not_found.
        request: the request document after the transaction (current state when nothing changed).
        notice: the resident notice written now (queue its push), else None.
    """

    status: str
    request: dict[str, Any] | None = None
    notice: staff_outbox.NoticeRef | None = None


def apply(store: DocumentStore, tenant_id: str, reference: StaffReference, staff: StaffMember, *,
          now: datetime) -> TransitionResult:
    """Apply one verified staff button to its request, at most once.

    Args:
        tenant_id: the configured tenant; a request of another tenant is ``not_found``.
        reference: the verified button (op, request document id, revision the card showed).
        staff: the verified staff member (only the hash is stored).
        now: aware; recorded in history, audit and the notice.
    Returns:
        TransitionResult (see the module table).
    Raises:
        StoreTimeout: outcome unknown (tapping again is safe: it is then stale or already applied).
        StoreUnavailable / TransactionConflict: nothing written; retryable.
    """
    require_aware(now)
    doc_id = reference.operation_doc_id
    required, target, purpose = TRANSITIONS[reference.op]

    def txn(tx: Transaction) -> TransitionResult:
        request = tx.get(handoff_records.REQUESTS, doc_id)
        if request is None or request.get("tenant_id") != tenant_id:
            return TransitionResult(NOT_FOUND)
        key = notice_key(reference.op, request)
        notice_ref = staff_outbox.NoticeRef(staff_outbox.notice_id(doc_id, key))
        existing = tx.get(staff_outbox.NOTICES, notice_ref.doc_id)
        revision = int(request.get("staff_revision") or 0)
        state = request.get("human_state") or staff_outbox.AWAITING
        if revision != reference.revision or state != required:
            history = request.get("staff_history") or []
            last = history[-1] if history else {}
            if (last.get("action") == reference.op and last.get("staff") == staff.hashed
                    and last.get("revision") == reference.revision + 1):
                return TransitionResult(ALREADY_APPLIED, request)
            return TransitionResult(STALE, request)

        at = to_iso(now)
        new_revision = revision + 1
        entry = {"at": at, "action": reference.op, "staff": staff.hashed, "from": state, "to": target,
                 "revision": new_revision}
        updated = {**request, "human_state": target, "staff_revision": new_revision,
                   "staff_history": [*(request.get("staff_history") or []), entry], "updated_at": at}
        if reference.op == TAKE:
            updated.update(accepted_by=staff.hashed, accepted_at=at)
        elif reference.op == BACK:
            updated.update(accepted_by=None, awaiting_since=at, staff_round=int(request.get("staff_round") or 0) + 1)
        else:
            updated.update(closed_by=staff.hashed, closed_at=at)
        written = None
        if existing is None:
            tx.set(staff_outbox.NOTICES, notice_ref.doc_id, staff_outbox.notice_doc(
                tenant_id=request["tenant_id"], user_id=request["user_id"], operation_doc_id=doc_id,
                purpose=purpose, now=now, request_id=request.get("request_id"),
                display_code=codes.of_request(request), key=key,
                after_notice=_earlier_notice(reference.op, request, doc_id)))
            written = notice_ref
            updated["last_resident_notice"] = notice_ref.doc_id
        tx.set(handoff_records.REQUESTS, doc_id, updated)
        tx.set(audit.AUDIT, audit.audit_id(doc_id, new_revision), {
            "tenant_id": request["tenant_id"], "user_id": request["user_id"], "request_id": request.get("request_id"),
            "operation_doc": doc_id, "action": reference.op, "staff": staff.hashed, "from": state, "to": target,
            "revision": new_revision, "at": at, "created_at": at})
        return TransitionResult(APPLIED, updated, written)

    return store.run_transaction(txn)
