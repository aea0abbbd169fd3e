"""The reply state when the outcome of a create is unknown (timeout, DEADLINE_EXCEEDED, UNAVAILABLE).

The caller does not know whether the request was written, so it claims nothing, and the operation
is reconciled in the background by its original idempotency key; any retry reuses that same key.

Source: docs/design.md §4 ("Unknown outcome": the reply state JSON, kept exactly as written).
"""
from __future__ import annotations

PENDING_VERIFICATION = "pending_verification"


def pending_verification() -> dict[str, object]:
    """A fresh copy of the unknown-outcome reply state.

    Returns:
        ``{"reply_state": "pending_verification", "claim_completed": False,
        "next_step": "reconcile_by_idempotency_key", "retry_policy": "reuse_same_idempotency_key"}``
    """
    return {
        "reply_state": PENDING_VERIFICATION,
        "claim_completed": False,
        "next_step": "reconcile_by_idempotency_key",
        "retry_policy": "reuse_same_idempotency_key",
    }
