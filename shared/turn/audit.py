"""One audit record per turn in the store, collection ``turn_audit`` (DESIGN §7).

Fields: ``tenant_id``, ``user_hash`` (shared.logs.hash_user, never the raw id), ``webhook_event_id``,
``source``, ``tool``, ``proposed_args`` (as the router or model proposed them), ``effective_args``
(what the tool ran with), ``origin`` of the diet, ``revision`` (snapshot at the start) and
``revision_after``, ``result_ids``, ``status``, ``timings_ms``, ``at`` (UTC ISO) and ``expire_at``
(for a Firestore TTL policy). No user text is stored.

Writing is best-effort: a failed write is logged and the turn still answers. It is a plain write,
never part of a transaction that has side effects.
"""
from __future__ import annotations

import uuid
from datetime import datetime, timedelta
from typing import Any

from shared.clock import to_iso
from shared.logs import log
from shared.store import DocumentStore, StoreError

COLLECTION = "turn_audit"
#: How long a turn record is kept (Firestore TTL on ``expire_at``).
RETENTION = timedelta(days=30)


def audit_id(tenant_id: str, webhook_event_id: str | None) -> str:
    """``<tenant_id>:<webhookEventId>``, or a random id for events without one."""
    return f"{tenant_id}:{webhook_event_id or 'nid-' + uuid.uuid4().hex}"


def record_turn(store: DocumentStore, record: dict[str, Any], *, tenant_id: str,
                webhook_event_id: str | None, now: datetime) -> str | None:
    """Write one turn record; never raises a store error.

    Args:
        store: the document store.
        record: the fields listed in the module docstring except tenant/event/at/expire_at.
        tenant_id: the configured tenant.
        webhook_event_id: the event's id (the record's id), or None.
        now: aware instant of the turn.
    Returns:
        The record id, or None when the write failed (logged as a warning).
    """
    doc_id = audit_id(tenant_id, webhook_event_id)
    doc = {**record, "tenant_id": tenant_id, "webhook_event_id": webhook_event_id,
           "at": to_iso(now), "expire_at": to_iso(now + RETENTION)}
    try:
        store.set(COLLECTION, doc_id, doc)
    except StoreError as exc:
        log("WARNING", "turn audit not written", error=exc.__class__.__name__)
        return None
    return doc_id
