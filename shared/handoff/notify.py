"""Telling the user, exactly once: the notification outbox of a handoff operation.

The operation document (``handoff_operations/{operation_id}``, and ``handoff_followups/…`` for
follow-up notices) carries the notice in flat fields, written in the same transaction as what it
announces:

* ``notice_kind``: "receipt", "not_created" or "needs_human_followup";
* ``notice_state``: "pending" until a reply or push succeeded, then "delivered"; or
  "reply_unknown" when the reply that owned it was sent without an answer (it may have reached
  the user, so nobody pushes it again: DESIGN §3; the user can still ask 查看原本服務單);
* ``notice_owner``: who may tell the user now: ``reply:<webhookEventId>`` (the webhook answering
  that event with its reply token) or ``push`` (functions/reconcile); ``notice_claim_until``: the
  owner's lease (ISO UTC). Another party may take over only after the lease (or once the owner
  released it: its reply was refused by LINE); ``notice_taken_from``: the owner a claim was taken
  over from, so a push can first ask the inbox what became of that reply;
* ``notice_retry_key``: the push's ``X-Line-Retry-Key`` (uuid5 of the operation and kind). The push
  that follows a "checking" answer is keyed by that event instead (``checked:<webhookEventId>``), so
  it is sent even when another tap already told the receipt, and still only once.

Crash windows (DESIGN §4, transactional outbox):

* killed after the commit and before the reply: the notice stays pending and owned by that
  event's reply until its lease ends; then either LINE's redelivery of *that* event (same owner)
  or the queue's push claims it — whichever claims first tells the user; the other sees the
  claim or "delivered" and says nothing;
* a push retried after a lost answer carries the same retry key: LINE answers 409 and the user
  sees it once; the 409 counts as delivered;
* a process that dies after LINE accepted a *reply* and before "delivered" was written, or a
  reply sent without an answer: the push reads that event's inbox document first
  (``shared.inbox.reply_state``): replied → "delivered", no push; unknown →
  "reply_unknown", no push; refused or never started → push.

Claims are plain reads-then-writes inside a store transaction, so they are Firestore-shaped.
"""
from __future__ import annotations

import enum
from datetime import datetime, timedelta
from typing import Any, Protocol, Sequence

from shared.clock import from_iso, require_aware, to_iso
from shared.handoff.records import Operation
from shared.line import LineGateway, PushResult
from shared.store import DocumentStore, Transaction

PENDING, DELIVERED, REPLY_UNKNOWN = "pending", "delivered", "reply_unknown"
PUSH_OWNER = "push"


class NoticeAddress(Protocol):
    """Where one outbox entry lives: its document id in the collection given with it.

    A handoff ``Operation`` is one (its draft, request and notices share one id); the staff
    notices of ``shared.staff`` are others (one request, several notices: DESIGN §10).
    """

    @property
    def doc_id(self) -> str:
        """The outbox document's id."""


def reply_owner(webhook_event_id: str | None) -> str:
    """The owner name of the reply to one webhook event."""
    return f"reply:{webhook_event_id or 'unknown'}"


class Claim(enum.Enum):
    """Whether the caller may tell the user now."""

    CLAIMED = "claimed"        # yes: send, then ``mark_delivered`` with the same owner
    DELIVERED = "delivered"    # the user has been told already: say nothing more
    HELD = "held"              # another owner holds a live lease: say nothing now
    NO_NOTICE = "no_notice"    # the document has no notice (or does not exist)


def notice_fields(kind: str, owner: str, *, now: datetime, lease_seconds: float,
                  retry_key: str) -> dict[str, Any]:
    """The notice fields of a new outbox entry, already claimed by ``owner``."""
    return {"notice_kind": kind, "notice_state": PENDING, "notice_owner": owner,
            "notice_claim_until": to_iso(now + timedelta(seconds=lease_seconds)),
            "notice_retry_key": retry_key, "notice_delivered_at": None, "notice_delivered_by": None}


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
        back: a redelivered event is the same reply, and pushes share one retry key.
    """
    require_aware(now)
    if not doc or not doc.get("notice_state"):
        return Claim.NO_NOTICE, None
    if doc["notice_state"] in (DELIVERED, REPLY_UNKNOWN):
        return Claim.DELIVERED, None  # told, or perhaps told: say nothing more
    holder = doc.get("notice_owner")
    until = doc.get("notice_claim_until")
    live = bool(holder and until and from_iso(until) > now)
    if live and holder not in (owner, void_owner):
        return Claim.HELD, None
    taken_from = holder if holder and holder != owner else doc.get("notice_taken_from")
    return Claim.CLAIMED, {**doc, "notice_owner": owner, "notice_taken_from": taken_from,
                           "notice_claim_until": to_iso(now + timedelta(seconds=lease_seconds)),
                           "updated_at": to_iso(now)}


def claim_notice(store: DocumentStore, collection: str, operation: NoticeAddress, owner: str, *,
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


def mark_delivered(store: DocumentStore, collection: str, operation: NoticeAddress, owner: str, *,
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


def release_claim(store: DocumentStore, collection: str, operation: NoticeAddress, owner: str, *,
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


def settle_reply_unknown(store: DocumentStore, collection: str, operation: NoticeAddress, *, owner: str,
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


def push_notice(line: LineGateway, operation: Operation, messages: Sequence[Any], *, purpose: str,
                timeout_seconds: float) -> PushResult:
    """Push to the operation's user with its deterministic retry key.

    Returns:
        PushResult; ``duplicate`` True when LINE had already accepted that key (409): delivered.
    Raises:
        LineApiError: rejected (retryable for 429/5xx); LineOutcomeUnknown: no answer. Retrying with
            the same key is safe.
    """
    return line.push(operation.actor.user_id, list(messages), retry_key=operation.retry_key(purpose),
                     timeout_seconds=timeout_seconds)
