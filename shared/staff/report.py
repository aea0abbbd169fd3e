"""The open requests, as operators read them (``make requests``): by state, then oldest first.

Rows (one JSON object each; no LINE user ids, staff as hashed labels):

* a request ``awaiting_acceptance`` or ``accepted``: ``{kind: "request", human_state, request_id,
  display_code (``A7K-3QF``, what the resident and the card show; null for a request made before codes), created_at (ISO UTC), created_local (YYYY/MM/DD HH:MM, Asia/Taipei), age_seconds (since created),
  waiting_seconds (since it last became awaiting), accepted_by (「工作人員 #ab12」 or null),
  announced (the staff card's notice state or null), reminded (bool), text}``;
* a ``needs_human_followup`` record: ``{kind: "followup", human_state: "needs_human_followup",
  reference (first 8 hex of the operation key), reason, created_at, created_local, age_seconds}``.

Order: needs_human_followup, awaiting_acceptance, accepted; within a state, oldest first.
Source: docs/design.md §9 (operator commands), §10.
"""
from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from shared.clock import from_iso, require_aware, wall_clock_text
from shared.config import Settings
from shared.handoff import codes, staff_outbox
from shared.handoff import records as handoff_records
from shared.identity import Actor
from shared.staff import audit
from shared.store import DocumentStore

FOLLOWUP_STATE = "needs_human_followup"
STATE_ORDER = (FOLLOWUP_STATE, staff_outbox.AWAITING, staff_outbox.ACCEPTED)


def _seconds_since(iso_text: str | None, now: datetime) -> int | None:
    if not iso_text:
        return None
    try:
        return max(0, int((now - from_iso(iso_text)) / timedelta(seconds=1)))
    except ValueError:
        return None


def open_rows(settings: Settings, store: DocumentStore, *, now: datetime) -> list[dict[str, Any]]:
    """Every open request and follow-up of the tenant, ordered (module docstring).

    Raises:
        StoreUnavailable: the store could not be read.
    """
    require_aware(now)
    tenant = settings.tenant_id
    rows: list[dict[str, Any]] = []
    for followup in store.query(handoff_records.FOLLOWUPS, where={"tenant_id": tenant, "status": FOLLOWUP_STATE}):
        rows.append({"kind": "followup", "human_state": FOLLOWUP_STATE,
                     "reference": str(followup.get("idempotency_key") or "")[:8], "reason": followup.get("reason"),
                     "created_at": followup.get("created_at"),
                     "created_local": wall_clock_text(followup.get("created_at"), settings.tz),
                     "age_seconds": _seconds_since(followup.get("created_at"), now)})
    for state in (staff_outbox.AWAITING, staff_outbox.ACCEPTED):
        for request in store.query(handoff_records.REQUESTS, where={"tenant_id": tenant, "human_state": state}):
            try:
                doc_id = handoff_records.Operation(Actor(request["tenant_id"], request["user_id"]),
                                                   request["idempotency_key"]).doc_id
            except KeyError:
                continue
            announce = store.get(staff_outbox.NOTICES, staff_outbox.notice_id(doc_id, staff_outbox.ANNOUNCE))
            reminder = store.get(staff_outbox.NOTICES, staff_outbox.notice_id(doc_id, staff_outbox.REMINDER))
            rows.append({
                "kind": "request", "human_state": state, "request_id": request.get("request_id"),
                "display_code": code.grouped if (code := codes.of_request(request)) else None,
                "created_at": request.get("created_at"),
                "created_local": wall_clock_text(request.get("created_at"), settings.tz),
                "age_seconds": _seconds_since(request.get("created_at"), now),
                "waiting_seconds": _seconds_since(request.get("awaiting_since") or request.get("created_at"), now),
                "accepted_by": audit.staff_label(request["accepted_by"]) if request.get("accepted_by") else None,
                "announced": (announce or {}).get("notice_state"), "reminded": reminder is not None,
                "text": request.get("text")})
    rows.sort(key=lambda row: (STATE_ORDER.index(row["human_state"]), -(row.get("age_seconds") or 0)))
    return rows
