"""A resident's notice LINE refused because the month's push messages are used up: onto the staff
follow-up list (docs/delivery.md#push-quota).

LINE answers such a push 429 with the message "You have reached your monthly limit." and sends
nothing (https://developers.line.biz/en/docs/messaging-api/handling-http-429-errors/). Repeating it
cannot help until the month (or the plan) changes, so the courier's caller settles the notice and
records ``handoff_followups/<id>`` (status ``needs_human_followup``, reason ``monthly_limit``): the
same list reconcile's unverifiable operations go on, read by ``make requests`` and announced to the
staff group by the sweep (``shared.staff.reminders``) — an announcement that is itself a push, so
while the quota is used up the list and the alert are what staff see.

The record's id is a handoff operation id (``records.Operation``) whose idempotency key is derived
from the refused notice (``<collection>/<doc id>``), so one notice is recorded once, however often
it is refused, and the staff tools read it like every other follow-up.
"""
from __future__ import annotations

import hashlib
import json
from datetime import datetime
from typing import Any, Sequence

from shared.clock import to_iso
from shared.handoff import records
from shared.identity import Actor
from shared.logs import hash_user, log
from shared.push_count import Flow
from shared.store import DocumentStore, RecordAlreadyExists, StoreError

REASON = "monthly_limit"
#: The longest excerpt of the refused notice kept on the record (characters).
TEXT_MAX_CHARS = 500


def followup_key(tenant_id: str, notice: str) -> str:
    """The record's idempotency key: 32 lowercase hex derived from the tenant and the notice."""
    digest = hashlib.sha256(json.dumps(["push-refused", tenant_id, notice], ensure_ascii=False).encode("utf-8"))
    return digest.hexdigest()[:32]


def text_of(messages: Sequence[Any]) -> str | None:
    """What the refused messages said, for staff: each text message's ``text`` or a card's
    ``alt_text``, joined by a new line and cut at ``TEXT_MAX_CHARS``; None when there is none."""
    parts = [text for message in messages
             if isinstance(text := getattr(message, "text", None) or getattr(message, "alt_text", None), str)]
    return "\n".join(parts)[:TEXT_MAX_CHARS] or None


def record(store: DocumentStore, tenant_id: str, user_id: str, *, notice: str, flow: Flow,
           messages: Sequence[Any], now: datetime) -> bool:
    """Create the follow-up record of one refused notice (no read first; a second call finds it).

    Args:
        notice: the refused notice as ``<collection>/<doc id>``.
        flow: the push's ``Flow``.
        messages: the line-bot-sdk messages LINE refused (their words are kept for staff).
    Returns:
        True when the record exists (written now or before); False when the store refused (logged).
    """
    operation = records.Operation(Actor(tenant_id, user_id), followup_key(tenant_id, notice))
    doc = {"tenant_id": tenant_id, "user_id": user_id, "idempotency_key": operation.idempotency_key,
           "status": "needs_human_followup", "reason": REASON, "task_reason": Flow(flow).value,
           "notice": notice, "text": text_of(messages), "created_at": to_iso(now)}
    try:
        store.create(records.FOLLOWUPS, operation.doc_id, doc)
    except RecordAlreadyExists:
        return True
    except StoreError as exc:
        log("ERROR", "needs_human_followup could not be recorded", error=exc.__class__.__name__)
        return False
    log("WARNING", "operation needs human follow-up", reason=REASON, user=hash_user(user_id))
    return True
