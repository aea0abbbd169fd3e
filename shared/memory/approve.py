"""Apply one verified card token in ONE store transaction: the approve table of docs/design.md §6.

The transaction function only reads and writes documents: the store may run it more than once
(Firestore retries on contention), so there is no LINE, HTTP, model or queue call inside it.

| check, in order                                   | result                         |
|---------------------------------------------------|--------------------------------|
| ``last_nonce == n`` and ``revision == r + 1``     | already_applied (idempotent)   |
| ``revision != r``                                 | stale_memory_card              |
| a decline token (先不要)                           | memory_declined                |
| the tap at or after ``e`` (``judged_at``)         | expired_memory_card            |
| the card was declined (``memory_cards``)          | declined_memory_card           |
| otherwise: write ``revision + 1``, ``last_nonce`` | memory_saved / memory_forgotten|

A card is judged at its tap: the webhook event's ``timestamp`` (``tapped_at``), passed by the webhook,
never later than the call, so a tap made in time still counts when a queued event is answered
minutes later; the end is exclusive (``signing.is_expired``). Without a tap time, at the call.

A decline token (先不要) of a current card records the card's nonce as cancelled and leaves the
preference and its revision untouched. A decline of a card that is no longer current (approved
and then forgotten or corrected) is stale like any other: nothing is written, and the user is
not told that a card was cancelled which had in fact been approved.
"""
from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

from shared.clock import require_aware, to_iso
from shared.identity import Actor
from shared.memory.port import (
    ALREADY_APPLIED,
    DECLINED_MEMORY_CARD,
    EXPIRED_MEMORY_CARD,
    MEMORY_DECLINED,
    MEMORY_FORGOTTEN,
    MEMORY_SAVED,
    STALE_MEMORY_CARD,
    MemoryResult,
)
from shared.memory.store import MEMORY_CARDS, PREFERENCES, card_id, preference_id
from shared.memory.tokens import CardPayload
from shared.signing import is_expired
from shared.store import DocumentStore, expire_at

#: How long a cancelled-card record is kept after the card's own expiry (Firestore TTL field).
DECLINED_CARD_RETENTION = timedelta(days=1)


def judged_at(now: datetime, tapped_at: datetime | None) -> datetime:
    """The instant a card's expiry is judged at: the tap (``tapped_at``), or ``now`` when there is
    none or it is later than ``now`` (a tap cannot come after the call it caused).

    Raises:
        ValueError: ``now`` or ``tapped_at`` is naive.
    """
    require_aware(now)
    if tapped_at is None:
        return now
    return min(require_aware(tapped_at, "tapped_at"), now)


def decide(row: dict | None, cancelled: dict | None, card: CardPayload, actor: Actor,
           now: datetime, tapped_at: datetime | None = None) -> tuple[MemoryResult, list[tuple[str, str, dict]]]:
    """The approve table as a pure function of what the transaction read.

    Args:
        row: the ``preferences`` document, or None (revision 0).
        cancelled: the ``memory_cards`` document of this nonce, or None.
        card: a verified payload.
        actor: the account (doc ids).
        now: aware instant of the call (recorded in what is written).
        tapped_at: aware instant of the tap, or None; the expiry is judged at ``judged_at``.
    Returns:
        (result, writes) where each write is (collection, doc_id, data) to ``set``.
    """
    row = row or {}
    revision = int(row.get("revision", 0))
    current = row.get("dietary_type")
    op = card.operation

    def result(outcome: str, rev: int = revision, diet: str | None = current) -> MemoryResult:
        return MemoryResult(outcome, rev, diet, op)

    if row.get("last_nonce") == card.nonce and revision == card.revision + 1:
        return result(ALREADY_APPLIED), []
    if revision != card.revision:
        return result(STALE_MEMORY_CARD), []
    if op == "decline":
        if cancelled:
            return result(MEMORY_DECLINED), []
        expires = datetime.fromtimestamp(card.expires_epoch_seconds, timezone.utc)
        record = {"tenant_id": actor.tenant_id, "user_id": actor.user_id, "nonce": card.nonce,
                  "status": "declined", "declined_at": to_iso(now),
                  "expire_at": expire_at(max(expires, now) + DECLINED_CARD_RETENTION)}
        return result(MEMORY_DECLINED), [(MEMORY_CARDS, card_id(actor, card.nonce), record)]
    if is_expired(card.expires_epoch_seconds, judged_at(now, tapped_at)):
        return result(EXPIRED_MEMORY_CARD), []
    if cancelled:
        return result(DECLINED_MEMORY_CARD), []
    new: dict[str, Any] = {"tenant_id": actor.tenant_id, "user_id": actor.user_id, "revision": revision + 1,
           "last_nonce": card.nonce, "updated_at": to_iso(now)}
    if op == "save":
        new.update(dietary_type=card.dietary_type, consented_at=to_iso(now))
        outcome = MEMORY_SAVED
    else:
        outcome = MEMORY_FORGOTTEN  # no dietary_type, no consented_at: no dietary content kept
    return result(outcome, revision + 1, new.get("dietary_type")), [(PREFERENCES, preference_id(actor), new)]


def apply_card(store: DocumentStore, actor: Actor, card: CardPayload, now: datetime, *,
               tapped_at: datetime | None = None) -> MemoryResult:
    """Apply a verified token for its actor, exactly once.

    Args:
        store: the document store (functions/memory's).
        actor: (tenant_id, user_id) the token was verified for.
        card: the verified payload (shared.memory.tokens.verify_card).
        now: aware instant of the call, recorded in what is written.
        tapped_at: aware instant of the tap (the webhook event's ``timestamp``), or None; the
            card's expiry (end exclusive) is judged at it, never later than ``now`` (``judged_at``).
    Returns:
        MemoryResult: memory_saved, memory_forgotten, memory_declined, already_applied,
        stale_memory_card, expired_memory_card or declined_memory_card.
    Raises:
        StoreUnavailable / TransactionConflict: nothing written; retryable.
        StoreTimeout: outcome unknown; applying the same token again is safe (idempotent).
    Source: docs/design.md §6 (approve table); Firestore docs, "Transactions and batched writes"
        (a transaction function may run more than once).
    """
    require_aware(now)

    def transaction(tx) -> MemoryResult:
        row, cancelled = tx.get_all([(PREFERENCES, preference_id(actor)), (MEMORY_CARDS, card_id(actor, card.nonce))])
        result, writes = decide(row, cancelled, card, actor, now, tapped_at)
        for collection, doc_id, data in writes:
            tx.set(collection, doc_id, data)
        return result

    return store.run_transaction(transaction)
