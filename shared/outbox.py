"""The transactional outbox: telling a user exactly once, whoever tells them (DESIGN §4, §8, §11).

An outbox entry is a handful of flat ``notice_*`` fields on a store document, written in the same
transaction as what it announces (a handoff request, a follow-up, a queued webhook event's answer):

* ``notice_kind``: what is to be told (e.g. "receipt", "needs_human_followup", "event_answer");
* ``notice_state``: "pending" until a reply or push succeeded, then "delivered"; or
  "reply_unknown" when the send that owned it got no answer (it may have reached the user, so
  nobody sends it again: DESIGN §3, §11);
* ``notice_owner``: who may tell the user now (``reply:<webhookEventId>``, ``push``, ``queue``);
  ``notice_claim_until``: the owner's lease (ISO UTC). Another party may take over only after the
  lease (or once the owner released it: its send was definitely not delivered);
  ``notice_taken_from``: the owner a claim was taken over from;
  ``notice_push_claimed``: True once a push (``push``) has claimed the entry. From then on only a
  push tells it, always with the one ``notice_retry_key``: that push may already have reached the
  user with its "delivered" unrecorded, and only a repeat with the same key is deduplicated by
  LINE (409), so a reply (another channel, no key) would tell the user twice;
* ``notice_retry_key``: the push's ``X-Line-Retry-Key``.

Claims are plain reads-then-writes inside a store transaction, so they are Firestore-shaped. The
functions take the collection and any reference with a ``doc_id`` (a handoff ``Operation``, a
webhook ``inbox.EventRef``), so every outbox follows the same rules.
"""
from __future__ import annotations

import enum
from datetime import datetime, timedelta
from typing import Any, Protocol

from shared.clock import from_iso, require_aware, to_iso
from shared.store import DocumentStore, Transaction


class OutboxRef(Protocol):
    """Anything that names one outbox document by id."""

    @property
    def doc_id(self) -> str: ...


PENDING, DELIVERED, REPLY_UNKNOWN = "pending", "delivered", "reply_unknown"
#: LINE refused the send for good (a 4xx other than 429), or it was never delivered after every
#: attempt: definitely not told, and nobody sends it again.
FAILED = "failed"
SETTLED_STATES = (DELIVERED, REPLY_UNKNOWN, FAILED)
PUSH_OWNER = "push"


def reply_owner(webhook_event_id: str | None) -> str:
    """The owner name of the reply to one webhook event."""
    return f"reply:{webhook_event_id or 'unknown'}"


class Claim(enum.Enum):
    """Whether the caller may tell the user now."""

    CLAIMED = "claimed"        # yes: send, then ``mark_delivered`` with the same owner
    DELIVERED = "delivered"    # settled: told (or perhaps told, or refused for good): say nothing more
    HELD = "held"              # another owner holds a live lease: say nothing now
    NO_NOTICE = "no_notice"    # the document has no notice (or does not exist)


def notice_fields(kind: str, owner: str, *, now: datetime, lease_seconds: float,
                  retry_key: str) -> dict[str, Any]:
    """The notice fields of a new outbox entry, already claimed by ``owner``."""
    return {"notice_kind": kind, "notice_state": PENDING, "notice_owner": owner,
            "notice_claim_until": to_iso(now + timedelta(seconds=lease_seconds)),
            "notice_retry_key": retry_key, "notice_delivered_at": None, "notice_delivered_by": None,
            "notice_push_claimed": owner == PUSH_OWNER}


def try_claim(doc: dict | None, owner: str, *, now: datetime, lease_seconds: float,
              void_owner: str | None = None) -> tuple[Claim, dict | None]:
    """Decide a claim on one document (pure; call it inside a transaction).

    Args:
        doc: the outbox document as read, or None.
        owner: who wants to tell the user (``reply:<id>`` or ``push``).
        lease_seconds: how long the claim holds, in seconds.
        void_owner: an owner known not to have told the user (the webhook event that answered
            "checking"): its lease is ignored.
    Returns:
        (Claim, the document to write or None). The same owner may always take its own claim
        back: a redelivered event is the same reply, and pushes share one retry key. Once a push
        has claimed the entry, any other owner gets HELD for good (``notice_push_claimed``): the
        push side (reconcile, its queue retries and the sweep) tells it, with the same retry key.
    """
    require_aware(now)
    if not doc or not doc.get("notice_state"):
        return Claim.NO_NOTICE, None
    if doc["notice_state"] in SETTLED_STATES:
        return Claim.DELIVERED, None  # told, perhaps told, or refused for good: say nothing more
    if doc.get("notice_push_claimed") and owner != PUSH_OWNER:
        return Claim.HELD, None  # a push may have told the user already: only a keyed push repeats it
    holder = doc.get("notice_owner")
    until = doc.get("notice_claim_until")
    live = bool(holder and until and from_iso(until) > now)
    if live and holder not in (owner, void_owner):
        return Claim.HELD, None
    taken_from = holder if holder and holder != owner else doc.get("notice_taken_from")
    return Claim.CLAIMED, {**doc, "notice_owner": owner, "notice_taken_from": taken_from,
                           "notice_claim_until": to_iso(now + timedelta(seconds=lease_seconds)),
                           "notice_push_claimed": bool(doc.get("notice_push_claimed")) or owner == PUSH_OWNER,
                           "updated_at": to_iso(now)}


def claim_notice(store: DocumentStore, collection: str, operation: OutboxRef, owner: str, *,
                 now: datetime, lease_seconds: float, void_owner: str | None = None) -> Claim:
    """``try_claim`` in its own transaction.

    Raises:
        StoreUnavailable / StoreTimeout / TransactionConflict: retryable.
    """
    doc_id = operation.doc_id

    def txn(tx: Transaction) -> Claim:
        decision, updated = try_claim(tx.get(collection, doc_id), owner, now=now,
                                      lease_seconds=lease_seconds, void_owner=void_owner)
        if updated is not None:
            tx.set(collection, doc_id, updated)
        return decision

    return store.run_transaction(txn)


def mark_delivered(store: DocumentStore, collection: str, operation: OutboxRef, owner: str, *,
                   now: datetime) -> bool:
    """Record that ``owner`` told the user. Idempotent.

    Returns:
        True when this call wrote "delivered"; False when it already was, or there is no notice.
    Raises:
        StoreUnavailable / StoreTimeout / TransactionConflict: retryable; the notice stays pending
            (a later push repeats it with the same retry key).
    """
    doc_id = operation.doc_id

    def txn(tx: Transaction) -> bool:
        doc = tx.get(collection, doc_id)
        if not doc or not doc.get("notice_state") or doc["notice_state"] == DELIVERED:
            return False
        tx.set(collection, doc_id, {**doc, "notice_state": DELIVERED, "notice_delivered_at": to_iso(now),
                                    "notice_delivered_by": owner, "notice_claim_until": None,
                                    "updated_at": to_iso(now)})
        return True

    return store.run_transaction(txn)


def release_claim(store: DocumentStore, collection: str, operation: OutboxRef, owner: str, *,
                  now: datetime) -> bool:
    """End ``owner``'s lease now (its reply was refused by LINE: the user was not told).

    Returns:
        True when the lease was ended; False when the notice is not pending or held by another.
    Raises:
        StoreUnavailable / StoreTimeout / TransactionConflict: the lease then ends on its own.
    """
    doc_id = operation.doc_id

    def txn(tx: Transaction) -> bool:
        doc = tx.get(collection, doc_id)
        if not doc or doc.get("notice_state") != PENDING or doc.get("notice_owner") != owner:
            return False
        tx.set(collection, doc_id, {**doc, "notice_claim_until": to_iso(now), "updated_at": to_iso(now)})
        return True

    return store.run_transaction(txn)


def settle_reply_unknown(store: DocumentStore, collection: str, operation: OutboxRef, *, owner: str,
                         now: datetime) -> bool:
    """Record that the notice's reply (by ``owner``) may have reached the user: nobody pushes it.

    Returns:
        True when this call wrote "reply_unknown"; False when the notice is no longer pending.
    Raises:
        StoreUnavailable / StoreTimeout / TransactionConflict: retryable.
    """
    doc_id = operation.doc_id

    def txn(tx: Transaction) -> bool:
        doc = tx.get(collection, doc_id)
        if not doc or doc.get("notice_state") != PENDING:
            return False
        tx.set(collection, doc_id, {**doc, "notice_state": REPLY_UNKNOWN, "notice_claim_until": None,
                                    "notice_unknown_reply": owner, "updated_at": to_iso(now)})
        return True

    return store.run_transaction(txn)


def settle_failed(store: DocumentStore, collection: str, operation: OutboxRef, *, owner: str, reason: str,
                  now: datetime) -> bool:
    """Record that the notice was definitely not delivered and will not be sent again.

    Args:
        owner: the owner whose send failed; it must hold the notice.
        reason: a short machine word (``push_refused``, ``not_delivered``).
    Returns:
        True when this call wrote "failed"; False when the notice is no longer pending or held by another.
    Raises:
        StoreUnavailable / StoreTimeout / TransactionConflict: retryable.
    """
    doc_id = operation.doc_id

    def txn(tx: Transaction) -> bool:
        doc = tx.get(collection, doc_id)
        if not doc or doc.get("notice_state") != PENDING or doc.get("notice_owner") != owner:
            return False
        tx.set(collection, doc_id, {**doc, "notice_state": FAILED, "notice_claim_until": None,
                                    "notice_failed_reason": reason, "updated_at": to_iso(now)})
        return True

    return store.run_transaction(txn)
