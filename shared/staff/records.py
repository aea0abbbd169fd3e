"""Where staff-side data lives: the staff outbox, the audit record, and the request's staff fields.

Collections (every document carries ``tenant_id`` and the resident's ``user_id``, so a user's data
export and a forget find them; the resident's user id is never shown to staff):

* ``staff_notices/{notice_id}``: one outbox entry per (request, purpose), with the flat notice
  fields of ``shared.handoff.notify`` (``notice_state`` pending → delivered, ``notice_owner``,
  ``notice_claim_until``, ``notice_retry_key``). ``audience`` says who is told: ``staff`` (the
  staff group: ``announce``, ``reminder``, ``followup``) or ``resident`` (``accepted``,
  ``completed``, ``declined``). ``notice_id`` is derived from the operation and the purpose, so
  each purpose exists at most once per request: the resident is told each outcome once.
* ``staff_audit/{entry_id}``: one entry per staff action (who: a keyed hash of the staff member's
  LINE user id; what; from and to state; when), written in the action's own transaction.

Fields a staff action adds to ``handoff_requests/{operation_id}``: ``staff_revision`` (0 until the
first action; every transition adds 1, and a card carries the revision it was made for),
``staff_history`` (``[{at, action, staff, from, to}]``, staff hashed), ``accepted_by`` (hashed),
``awaiting_since`` (ISO UTC: creation, or the last 轉回待處理), ``updated_at``.

Source: docs/design.md §10 (staff group, one card per request, resident told once), §4 (outbox).
"""
from __future__ import annotations

import hashlib
import json
import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from shared.clock import to_iso
from shared.handoff import notify
from shared.handoff.records import RETRY_KEY_NAMESPACE

NOTICES = "staff_notices"
AUDIT = "staff_audit"

STAFF, RESIDENT = "staff", "resident"
ANNOUNCE, REMINDER, FOLLOWUP = "announce", "reminder", "followup"
ACCEPTED, COMPLETED, DECLINED = "accepted", "completed", "declined"
AWAITING = "awaiting_acceptance"
#: Who hears each notice purpose.
AUDIENCE = {ANNOUNCE: STAFF, REMINDER: STAFF, FOLLOWUP: STAFF,
            ACCEPTED: RESIDENT, COMPLETED: RESIDENT, DECLINED: RESIDENT}
#: States a request is still open in (``make requests``, reminders).
OPEN_STATES = (AWAITING, ACCEPTED)


def _digest(*parts: str) -> str:
    return hashlib.sha256(json.dumps(list(parts), ensure_ascii=False).encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class NoticeRef:
    """The address of one staff outbox entry (a ``notify.NoticeAddress``).

    Args:
        doc_id: 64 lowercase hex, from ``notice_id``.
    """

    doc_id: str


def notice_id(operation_doc_id: str, purpose: str) -> str:
    """64 lowercase hex: the id of one notice (``purpose`` of ``AUDIENCE``) about one operation."""
    return _digest("staff-notice", operation_doc_id, purpose)


def retry_key(tenant_id: str, notice_doc_id: str) -> str:
    """The push's ``X-Line-Retry-Key`` (uuid5): the same from every process, so LINE delivers once."""
    return str(uuid.uuid5(RETRY_KEY_NAMESPACE, f"{tenant_id}/staff-notice/{notice_doc_id}"))


def notice_doc(*, tenant_id: str, user_id: str, operation_doc_id: str, purpose: str, now: datetime,
               request_id: str | None = None) -> dict[str, Any]:
    """A new staff outbox entry, free for the queue's push to claim at once.

    Args:
        tenant_id, user_id: the resident's actor (stored for data rights; never shown to staff).
        operation_doc_id: the handoff operation's document id (request, operation, follow-up).
        purpose: one of ``AUDIENCE``.
        now: aware; ``created_at`` and the (already ended) claim.
        request_id: ``req-YYYYMMDD-…`` when a request exists.
    Raises:
        KeyError: unknown purpose.
    """
    doc_id = notice_id(operation_doc_id, purpose)
    return {"tenant_id": tenant_id, "user_id": user_id, "operation_doc": operation_doc_id,
            "request_id": request_id, "purpose": purpose, "audience": AUDIENCE[purpose],
            "created_at": to_iso(now), "updated_at": to_iso(now),
            **notify.notice_fields(purpose, notify.PUSH_OWNER, now=now, lease_seconds=0.0,
                                   retry_key=retry_key(tenant_id, doc_id))}


def staff_label(hashed: str | None) -> str:
    """What other staff read about a staff member: 「工作人員 #ab12」 (short, from the hash)."""
    return f"工作人員 #{(hashed or '????')[:4]}"


def audit_id(operation_doc_id: str, revision: int) -> str:
    """The audit entry of the transition that produced ``revision`` (one per revision)."""
    return _digest("staff-audit", operation_doc_id, str(revision))
