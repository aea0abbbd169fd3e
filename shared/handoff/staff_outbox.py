"""The staff outbox as a handoff transaction writes it: one notice per (request, purpose), and its task.

A request's staff notices (``staff_notices/{notice_id}``) are written in the same transaction as
what they announce (the create writes ``announce``; a staff transition writes the resident's
notice), with the flat notice fields of ``shared.outbox``. ``audience`` says who is told:
``staff`` (the staff group: ``announce``, ``reminder``, ``followup``) or ``resident``
(``accepted``, ``returned``, ``completed``, ``declined``). ``notice_id`` is derived from the operation
and the notice's key: the purpose, and for a request turned back to waiting the round
(``round_key``: ``accepted`` then ``returned#1``, ``accepted#1``, …), so each step exists at most once
per request: the resident is told each change once. A resident notice names the notice told just
before it about the same request (``after_notice``), so the relay keeps them in order.
The push itself is a ``staff_notice`` task answered by ``shared.staff.relay``.

The request's human states live here too (``human_state`` of ``handoff_requests``): handoff and
staff both read them, and staff moves a request through them.

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
from shared.config import Settings
from shared.handoff.codes import DisplayCode
from shared.handoff.records import RETRY_KEY_NAMESPACE
from shared.logs import log
from shared.outbox import PUSH_OWNER, notice_fields
from shared.queue import QueueError, TaskQueue, task_name_for

NOTICES = "staff_notices"

STAFF, RESIDENT = "staff", "resident"
ANNOUNCE, REMINDER, FOLLOWUP = "announce", "reminder", "followup"
#: A request's ``human_state`` values; ACCEPTED, COMPLETED and DECLINED are also the purposes of
#: the resident's notices about them.
AWAITING = "awaiting_acceptance"
ACCEPTED, COMPLETED, DECLINED = "accepted", "completed", "declined"
#: The purpose of the resident's notice that a taken request waits again (turned back by staff).
RETURNED = "returned"
#: Who hears each notice purpose.
AUDIENCE = {ANNOUNCE: STAFF, REMINDER: STAFF, FOLLOWUP: STAFF,
            ACCEPTED: RESIDENT, RETURNED: RESIDENT, COMPLETED: RESIDENT, DECLINED: RESIDENT}
#: States a request is still open in (the status answer, ``make requests``, reminders).
OPEN_STATES = (AWAITING, ACCEPTED)

NOTICE_TASK = "staff_notice"


def _digest(*parts: str) -> str:
    return hashlib.sha256(json.dumps(list(parts), ensure_ascii=False).encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class NoticeRef:
    """The address of one staff outbox entry (a ``shared.outbox.OutboxRef``).

    Args:
        doc_id: 64 lowercase hex, from ``notice_id``.
    """

    doc_id: str


def notice_id(operation_doc_id: str, purpose: str) -> str:
    """64 lowercase hex: the id of one notice (``purpose`` of ``AUDIENCE``) about one operation."""
    return _digest("staff-notice", operation_doc_id, purpose)


def round_key(purpose: str, round_number: int) -> str:
    """The key of a resident notice in ``notice_id``: ``purpose`` in round 0 (before any turn-back,
    the ids stored before rounds existed), ``purpose#n`` in round n (after the n-th turn-back)."""
    return purpose if round_number <= 0 else f"{purpose}#{round_number}"


def retry_key(tenant_id: str, notice_doc_id: str) -> str:
    """The push's ``X-Line-Retry-Key`` (uuid5): the same from every process, so LINE delivers once."""
    return str(uuid.uuid5(RETRY_KEY_NAMESPACE, f"{tenant_id}/staff-notice/{notice_doc_id}"))


def notice_doc(*, tenant_id: str, user_id: str, operation_doc_id: str, purpose: str, now: datetime,
               request_id: str | None = None, display_code: DisplayCode | None = None,
               key: str | None = None, after_notice: str | None = None) -> dict[str, Any]:
    """A new staff outbox entry, free for the queue's push to claim at once.

    Args:
        tenant_id, user_id: the resident's actor (stored for data rights; never shown to staff).
        operation_doc_id: the handoff operation's document id (request, operation, follow-up).
        purpose: one of ``AUDIENCE``.
        now: aware; ``created_at`` and the (already ended) claim.
        request_id: ``req-YYYYMMDD-…`` when a request exists (the key, never shown).
        display_code: the request's code (``shared.handoff.codes``), what the notice shows.
        key: the notice's key in ``notice_id`` (``round_key``); ``purpose`` when None.
        after_notice: the id of the resident notice about this request just before this one.
    Raises:
        KeyError: unknown purpose.
    """
    doc_id = notice_id(operation_doc_id, key or purpose)
    return {"tenant_id": tenant_id, "user_id": user_id, "operation_doc": operation_doc_id,
            "request_id": request_id, "display_code": display_code.value if display_code else None,
            "after_notice": after_notice, "notice_key": key or purpose, "purpose": purpose, "audience": AUDIENCE[purpose],
            "created_at": to_iso(now), "updated_at": to_iso(now),
            **notice_fields(purpose, PUSH_OWNER, now=now, lease_seconds=0.0,
                            retry_key=retry_key(tenant_id, doc_id))}


def notice_task_name(notice_doc_id: str, tag: str) -> str:
    """``staff-<32 hex>``: one name per (notice, tag); the tag tells re-queues of one notice apart."""
    return task_name_for(f"{notice_doc_id}/{tag}", prefix="staff")


def enqueue_notice(queue: TaskQueue | None, tenant_id: str, notice_doc_id: str, *, tag: str = "first",
                   delay_seconds: float = 0.0) -> bool:
    """Queue the push of one staff notice. A name seen before counts as queued.

    Returns:
        True when the queue holds the task; False when there is no queue or it did not confirm
        (logged; the sweep and the start-up re-queue find the pending notice later).
    """
    if queue is None:
        log("WARNING", "staff notice not queued: no task queue configured")
        return False
    payload = {"v": 1, "kind": NOTICE_TASK, "tenant_id": tenant_id, "notice_id": notice_doc_id}
    try:
        queue.enqueue(notice_task_name(notice_doc_id, tag), payload, delay_seconds=max(0.0, delay_seconds))
    except QueueError as exc:
        log("ERROR", "staff notice not queued", error=exc.__class__.__name__)
        return False
    return True


def announce_created(queue: TaskQueue | None, settings: Settings, operation_doc_id: str) -> bool:
    """After a create committed with its staff notice: queue the push of the staff group's card.

    Returns:
        True when queued; False when there is no staff group, no queue, or the queue did not confirm
        (the notice stays pending; the start-up re-queue and the sweep queue it later).
    """
    if not settings.staff_group_id:
        return False
    return enqueue_notice(queue, settings.tenant_id, notice_id(operation_doc_id, ANNOUNCE))
