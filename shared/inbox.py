"""Webhook inbox: deduplicate LINE deliveries by ``webhookEventId`` under a lease.

States of an inbox document (collection ``webhook_inbox``, id ``<tenant>:<webhookEventId>``):
``processing`` (held by one attempt until ``lease_until``), then ``done``. A duplicate of a
``done`` event is acknowledged with nothing repeated; a duplicate while the lease is held gets
503 so LINE redelivers later; an attempt that crashed loses its lease after ``lease_seconds``
and the next delivery takes over (at least once in, exactly once in effect: DESIGN §3).

Before a reply is sent the attempt records ``reply_attempted``: a takeover never replies
again, because a reply whose outcome is unknown is never blindly retried (DESIGN §3).
"""
from __future__ import annotations

import enum
from dataclasses import dataclass
from datetime import datetime, timedelta

from shared.clock import from_iso, require_aware, to_iso
from shared.store import DocumentStore, Transaction

COLLECTION = "webhook_inbox"


class Claim(enum.Enum):
    """What the caller may do with one delivered event."""

    CLAIMED = "claimed"          # process it now
    DONE = "done"                # finished before: answer 200, repeat nothing
    IN_PROGRESS = "in_progress"  # another attempt holds the lease: answer 503


@dataclass(frozen=True)
class ClaimResult:
    """The claim and, on a takeover, whether the earlier attempt had started its reply."""

    claim: Claim
    attempt: int
    reply_attempted: bool = False


def _doc_id(tenant_id: str, webhook_event_id: str) -> str:
    return f"{tenant_id}:{webhook_event_id}"


def claim_event(store: DocumentStore, tenant_id: str, webhook_event_id: str, *,
                now: datetime, lease_seconds: float) -> ClaimResult:
    """Claim one webhook event id for this attempt, in one store transaction.

    Args:
        tenant_id: the channel's tenant.
        webhook_event_id: LINE's ``webhookEventId`` (26-char ULID).
        now: aware current time.
        lease_seconds: how long this attempt owns the event before a redelivery may take over.
    Returns:
        ClaimResult with CLAIMED, DONE or IN_PROGRESS.
    Raises:
        StoreUnavailable: the store could not be reached (answer 503; LINE redelivers).
    """
    require_aware(now)
    doc_id = _doc_id(tenant_id, webhook_event_id)
    lease_until = to_iso(now + timedelta(seconds=lease_seconds))

    def txn(tx: Transaction) -> ClaimResult:
        doc = tx.get(COLLECTION, doc_id)
        if doc is None:
            tx.create(COLLECTION, doc_id, {"tenant_id": tenant_id, "webhook_event_id": webhook_event_id,
                                           "state": "processing", "attempt": 1,
                                           "lease_until": lease_until, "received_at": to_iso(now)})
            return ClaimResult(Claim.CLAIMED, 1)
        if doc["state"] == "done":
            return ClaimResult(Claim.DONE, doc["attempt"])
        if from_iso(doc["lease_until"]) > now:
            return ClaimResult(Claim.IN_PROGRESS, doc["attempt"])
        attempt = doc["attempt"] + 1
        tx.set(COLLECTION, doc_id, {**doc, "attempt": attempt, "lease_until": lease_until})
        return ClaimResult(Claim.CLAIMED, attempt, bool(doc.get("reply_attempted")))

    return store.run_transaction(txn)


def _update(store: DocumentStore, tenant_id: str, webhook_event_id: str, attempt: int,
            changes: dict) -> bool:
    doc_id = _doc_id(tenant_id, webhook_event_id)

    def txn(tx: Transaction) -> bool:
        doc = tx.get(COLLECTION, doc_id)
        if doc is None or doc["attempt"] != attempt or doc["state"] == "done":
            return False  # a later attempt owns it now
        tx.set(COLLECTION, doc_id, {**doc, **changes})
        return True

    return store.run_transaction(txn)


def mark_reply_attempted(store: DocumentStore, tenant_id: str, webhook_event_id: str,
                         attempt: int, *, now: datetime) -> bool:
    """Record that this attempt is about to use the reply token.

    Returns:
        False when a later attempt took the lease over: the caller must not reply.
    Raises:
        StoreUnavailable: then the caller must not reply either.
    """
    return _update(store, tenant_id, webhook_event_id, attempt,
                   {"reply_attempted": True, "reply_attempted_at": to_iso(now)})


def mark_done(store: DocumentStore, tenant_id: str, webhook_event_id: str, attempt: int, *,
              now: datetime, outcome: str) -> bool:
    """Finish the event; later deliveries of it are acknowledged and repeat nothing.

    Args:
        outcome: a short machine word (``replied``, ``no_reply``, ``reply_failed``, ``failed``).
    Returns:
        False when a later attempt owns the event.
    """
    return _update(store, tenant_id, webhook_event_id, attempt,
                   {"state": "done", "outcome": outcome, "done_at": to_iso(now)})


#: ``reply_state`` answers.
NOT_ATTEMPTED, REPLIED, REPLY_FAILED, REPLY_UNKNOWN = "not_attempted", "replied", "failed", "unknown"
_DONE_REPLY_STATES = {"replied": REPLIED, "reply_failed": REPLY_FAILED, "reply_unknown": REPLY_UNKNOWN}


def reply_state(store: DocumentStore, tenant_id: str, webhook_event_id: str) -> str:
    """Whether the reply to one event reached LINE, as far as the inbox knows (one read).

    Returns:
        ``replied`` (LINE accepted it); ``failed`` (LINE refused it: definitely not delivered);
        ``unknown`` (sent without an answer, or started by an attempt that never finished: it may
        have been delivered, so it must not be repeated blindly, DESIGN §3); ``not_attempted`` (no
        reply was started: no inbox document, or finished without a reply).
    Raises:
        StoreUnavailable: the inbox could not be read.
    """
    doc = store.get(COLLECTION, _doc_id(tenant_id, webhook_event_id))
    if doc is None:
        return NOT_ATTEMPTED
    if doc.get("state") == "done":
        return _DONE_REPLY_STATES.get(doc.get("outcome"), NOT_ATTEMPTED)
    return REPLY_UNKNOWN if doc.get("reply_attempted") else NOT_ATTEMPTED
