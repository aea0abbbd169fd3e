"""One audit record per turn in the store, collection ``turn_audit`` (docs/design.md §7).

Fields: ``tenant_id``, ``user_hash`` (shared.logs.hash_user, never the raw id), ``webhook_event_id``,
``source``, ``tool``, ``proposed_args`` (as the router or model proposed them; a date in the encoding
of shared.turn.datespec, ``DateSpec.parse`` reads it back), ``effective_args``
(what the tool ran with), ``origin`` of the diet, ``revision`` (snapshot at the start) and
``revision_after``, ``result_ids``, ``status``, ``timings_ms``, ``at`` (UTC ISO) and ``expire_at`` (a Timestamp)
(for a Firestore TTL policy). No user text is stored.

A forget scrubs the remembered diet from that account's records (``scrub_remembered_diet``): a
record whose diet came from the consented memory keeps its id, hash, tool, origin, status, counts
and times, and loses the dietary value and the result ids it shaped (docs/design.md §6: after a forget no
dietary content is kept).

Writing is best-effort: a failed write is logged and the turn still answers. It is a plain write,
never part of a transaction that has side effects.
"""
from __future__ import annotations

import uuid
from datetime import datetime, timedelta
from typing import Any

from shared.clock import to_iso
from shared.logs import log
from shared.store import DocumentStore, StoreError, expire_at

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
    doc = {**record, "tenant_id": tenant_id, "webhook_event_id": webhook_event_id, "audit_id": doc_id,
           "at": to_iso(now), "expire_at": expire_at(now + RETENTION)}
    try:
        store.set(COLLECTION, doc_id, doc)
    except StoreError as exc:
        log("WARNING", "turn audit not written", error=exc.__class__.__name__)
        return None
    return doc_id


#: ``origin`` of a diet taken from the consented memory (shared.turn.diet_origin.CONSENTED_MEMORY).
_FROM_MEMORY = "consented_memory"


def scrub_remembered_diet(store: DocumentStore, *, tenant_id: str, user_hash: str, now: datetime) -> int:
    """Remove the remembered diet from every turn record of one account (after a forget).

    Each record whose ``origin`` is the consented memory keeps everything but the dietary content:
    ``effective_args.dietary_type`` and ``proposed_args.dietary_type`` become None, ``result_ids``
    (places chosen by that diet) become ``result_count``, and ``diet_scrubbed_at`` is set.
    Idempotent.

    Args:
        user_hash: ``shared.logs.hash_user`` of the account's user id (as stored).
        now: aware instant of the forget.
    Returns:
        How many records were scrubbed by this call.
    Raises:
        StoreUnavailable / StoreTimeout: some records may still hold the diet; call again.
    """
    scrubbed = 0
    for doc in store.query(COLLECTION, where={"tenant_id": tenant_id, "user_hash": user_hash, "origin": _FROM_MEMORY}):
        if doc.get("diet_scrubbed_at"):
            continue
        clean = {**doc, "diet_scrubbed_at": to_iso(now), "result_count": len(doc.get("result_ids") or []),
                 "result_ids": []}
        for args in ("effective_args", "proposed_args"):
            if isinstance(doc.get(args), dict) and "dietary_type" in doc[args]:
                clean[args] = {**doc[args], "dietary_type": None}
        doc_id = doc.get("audit_id") or (audit_id(tenant_id, doc["webhook_event_id"])
                                         if doc.get("webhook_event_id") else None)
        if doc_id is None:
            log("ERROR", "turn audit record without an id: not scrubbed")
            continue
        store.set(COLLECTION, doc_id, clean)
        scrubbed += 1
    return scrubbed
