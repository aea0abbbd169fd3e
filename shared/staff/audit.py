"""Staff members in stored history, and the staff audit record.

* ``staff_audit/{entry_id}``: one entry per staff action (who: a keyed hash of the staff member's
  LINE user id; what; from and to state; when), written in the action's own transaction. Every
  document carries ``tenant_id`` and the resident's ``user_id``, so a user's data export and a
  forget find them; the resident's user id is never shown to staff.

Fields a staff action adds to ``handoff_requests/{operation_id}``: ``staff_revision`` (0 until the
first action; every transition adds 1, and a card carries the revision it was made for),
``staff_history`` (``[{at, action, staff, from, to}]``, staff hashed), ``accepted_by`` (hashed),
``awaiting_since`` (ISO UTC: creation, or the last 轉回待處理), ``updated_at``.

The staff outbox (``staff_notices``) and the request's human states are
``shared.handoff.staff_outbox``. Source: docs/design.md §10 (staff group, one card per request).
"""
from __future__ import annotations

import hashlib
import json

AUDIT = "staff_audit"


def _digest(*parts: str) -> str:
    return hashlib.sha256(json.dumps(list(parts), ensure_ascii=False).encode("utf-8")).hexdigest()


def staff_label(hashed: str | None) -> str:
    """What other staff read about a staff member: 「工作人員 #ab12」 (short, from the hash)."""
    return f"工作人員 #{(hashed or '????')[:4]}"


def audit_id(operation_doc_id: str, revision: int) -> str:
    """The audit entry of the transition that produced ``revision`` (one per revision)."""
    return _digest("staff-audit", operation_doc_id, str(revision))
