"""Webhook inbox: deduplicate LINE deliveries by ``webhookEventId`` under a lease.

States of an inbox document (collection ``webhook_inbox``, id ``<tenant>:<webhookEventId>``):
``processing`` (held by one attempt until ``lease_until``), then ``done``. A duplicate of a
``done`` event is acknowledged with nothing repeated; a duplicate while the lease is held gets
503 so LINE redelivers later; an attempt that crashed loses its lease after ``lease_seconds``
and the next delivery takes over (at least once in, exactly once in effect: DESIGN §3).

Before a reply is sent the attempt records ``reply_attempted``: a takeover never replies
again, because a reply whose outcome is unknown is never blindly retried (DESIGN §3).

An event the webhook cannot finish inside LINE's 2-second budget (the budget ran out, the store
was busy, LINE answered the reply with 429 or no connection was made) is handed to the queue
(DESIGN §11: an event is done only when its reply was sent, its reply's outcome is recorded, or
its work is durably queued): its document becomes ``queued``, holding the raw event (and, when
the answer was already rendered, that answer) and an outbox notice (``shared.outbox``,
``notice_kind`` "event_answer") that the queued-event worker claims, delivers or settles. A
redelivery of a queued event is acknowledged and repeats nothing: the queue answers it once.
"""
from __future__ import annotations

import enum
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from shared import outbox
from shared.clock import from_iso, require_aware, to_iso
from shared.store import DocumentStore, Transaction, expire_at

COLLECTION = "webhook_inbox"
PROCESSING, DONE, QUEUED = "processing", "done", "queued"
#: The outbox owner of a queued event's answer: the queued-event worker.
QUEUE_OWNER = "queue"
ANSWER_KIND = "event_answer"
#: How long an event id is remembered (``expire_at``, Firestore TTL: infra/firestore.tf). Far
#: longer than LINE keeps redelivering a failed webhook, so a late redelivery is still a duplicate.
RETENTION = timedelta(days=7)


class Claim(enum.Enum):
    """What the caller may do with one delivered event."""

    CLAIMED = "claimed"          # process it now
    DONE = "done"                # finished before: answer 200, repeat nothing
    IN_PROGRESS = "in_progress"  # another attempt holds the lease: answer 503
    QUEUED = "queued"            # handed to the queue before: answer 200, repeat nothing


@dataclass(frozen=True)
class ClaimResult:
    """The claim and, on a takeover, whether the earlier attempt had started its reply."""

    claim: Claim
    attempt: int
    reply_attempted: bool = False


def _doc_id(tenant_id: str, webhook_event_id: str) -> str:
    return f"{tenant_id}:{webhook_event_id}"


@dataclass(frozen=True)
class EventRef:
    """One event's inbox document, as an outbox reference (``shared.outbox.OutboxRef``)."""

    tenant_id: str
    webhook_event_id: str

    @property
    def doc_id(self) -> str:
        """``<tenant>:<webhookEventId>``."""
        return _doc_id(self.tenant_id, self.webhook_event_id)


def claim_event(store: DocumentStore, tenant_id: str, webhook_event_id: str, *,
                now: datetime, lease_seconds: float, event: dict | None = None,
                claimant: str | None = None) -> ClaimResult:
    """Claim one webhook event id for this attempt, in one store transaction.

    Args:
        tenant_id: the channel's tenant.
        webhook_event_id: LINE's ``webhookEventId`` (26-char ULID).
        now: aware current time.
        lease_seconds: how long this attempt owns the event before a redelivery may take over.
        event: the raw event, kept so that the sweep can queue it if this attempt dies before
            answering and LINE does not redeliver (``take_over_abandoned``).
        claimant: an id of this attempt (random per delivery): when an earlier try of this same call
            committed but its answer was lost (a locked or slow store), trying again finds the
            claim its own rather than another attempt's live lease.
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
                                           "event": event, "claimant": claimant,
                                           "state": "processing", "attempt": 1,
                                           "lease_until": lease_until, "received_at": to_iso(now),
                                           "expire_at": expire_at(now + RETENTION)})
            return ClaimResult(Claim.CLAIMED, 1)
        if doc["state"] == DONE:
            return ClaimResult(Claim.DONE, doc["attempt"])
        if doc["state"] == QUEUED:
            return ClaimResult(Claim.QUEUED, doc["attempt"])
        if claimant is not None and doc.get("claimant") == claimant and doc["state"] == PROCESSING:
            return ClaimResult(Claim.CLAIMED, doc["attempt"], bool(doc.get("reply_attempted")))
        if from_iso(doc["lease_until"]) > now:
            return ClaimResult(Claim.IN_PROGRESS, doc["attempt"])
        attempt = doc["attempt"] + 1
        tx.set(COLLECTION, doc_id, {**doc, "attempt": attempt, "lease_until": lease_until, "claimant": claimant})
        return ClaimResult(Claim.CLAIMED, attempt, bool(doc.get("reply_attempted")))

    return store.run_transaction(txn)


def _update(store: DocumentStore, tenant_id: str, webhook_event_id: str, attempt: int,
            changes: dict) -> bool:
    doc_id = _doc_id(tenant_id, webhook_event_id)

    def txn(tx: Transaction) -> bool:
        doc = tx.get(COLLECTION, doc_id)
        if doc is None or doc["attempt"] != attempt or doc["state"] != PROCESSING:
            return False  # a later attempt owns it now, or it is finished or queued
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


def queue_event(store: DocumentStore, tenant_id: str, webhook_event_id: str, attempt: int, *,
                event: dict, reason: str, now: datetime, answer: list[dict] | None = None,
                reply_attempted: bool = False) -> bool:
    """Hand this attempt's event to the queue: the document becomes ``queued`` (one transaction).

    Args:
        event: the raw webhook event (JSON object) the worker handles again if no ``answer`` is given.
        reason: why (``budget``, ``store_busy``, ``reply_not_delivered``, ``reply_never_started``,
            ``reply_unrecorded``); kept as ``queued_reason``.
        answer: the answer already rendered (message dicts), for the worker to send as it is.
        reply_attempted: the reply token was used, or LINE asked to be called later (429): the worker
            must push rather than reply.
    Returns:
        False when a later attempt owns the event (nothing written).
    Raises:
        StoreUnavailable / StoreTimeout / TransactionConflict: not queued as far as the caller knows.
    """
    require_aware(now)
    fields = {"state": QUEUED, "event": event, "queued_reason": reason, "queued_at": to_iso(now),
              "answer": answer, "reply_attempted": reply_attempted,
              **outbox.notice_fields(ANSWER_KIND, QUEUE_OWNER, now=now, lease_seconds=0.0,
                                     retry_key=answer_retry_key(tenant_id, webhook_event_id))}
    return _update(store, tenant_id, webhook_event_id, attempt, fields)


def claim_and_queue(store: DocumentStore, tenant_id: str, items: list[tuple[str, dict]], *, now: datetime,
                    reason: str, lease_seconds: float) -> dict[str, str]:
    """Claim several events and queue them at once, in one store transaction (one commit).

    For each ``(webhook_event_id, raw_event)``: a new event, or one whose earlier attempt lost its
    lease before starting a reply, becomes ``queued``; a finished or queued one is a duplicate; one
    whose lease is live stays with its holder; one whose earlier attempt started a reply and died
    is finished as ``reply_unknown`` (never replied twice).

    Returns:
        webhook_event_id → "queued", "duplicate", "done" or "retry".
    Raises:
        StoreUnavailable / StoreTimeout / TransactionConflict: nothing is known to be queued.
    """
    require_aware(now)
    stamp = to_iso(now)

    def txn(tx: Transaction) -> dict[str, str]:
        docs = {event_id: tx.get(COLLECTION, _doc_id(tenant_id, event_id)) for event_id, _ in items}
        results: dict[str, str] = {}
        for event_id, raw in items:
            if event_id in results:
                continue  # the same event twice in one body
            doc = docs[event_id]
            queued = {"tenant_id": tenant_id, "webhook_event_id": event_id, "state": QUEUED, "event": raw,
                      "queued_reason": reason, "queued_at": stamp, "answer": None, "reply_attempted": False,
                      "received_at": stamp, "lease_until": stamp,
                      **outbox.notice_fields(ANSWER_KIND, QUEUE_OWNER, now=now, lease_seconds=0.0,
                                             retry_key=answer_retry_key(tenant_id, event_id))}
            if doc is None:
                tx.create(COLLECTION, _doc_id(tenant_id, event_id), {**queued, "attempt": 1})
                results[event_id] = "queued"
            elif doc["state"] in (DONE, QUEUED):
                results[event_id] = "duplicate"
            elif from_iso(doc["lease_until"]) > now:
                results[event_id] = "retry"
            elif doc.get("reply_attempted"):
                tx.set(COLLECTION, _doc_id(tenant_id, event_id),
                       {**doc, "attempt": doc["attempt"] + 1, "state": DONE, "outcome": "reply_unknown",
                        "done_at": stamp})
                results[event_id] = "done"
            else:
                tx.set(COLLECTION, _doc_id(tenant_id, event_id),
                       {**doc, **queued, "received_at": doc.get("received_at", stamp), "attempt": doc["attempt"] + 1})
                results[event_id] = "queued"
        return results

    return store.run_transaction(txn)


def abandoned_events(store: DocumentStore, tenant_id: str, now: datetime) -> list[str]:
    """Event ids still ``processing`` whose lease has ended: their attempt died or could not record
    its end, and no redelivery took them over.

    Raises:
        StoreUnavailable: the store could not be read.
    """
    require_aware(now)
    return [doc["webhook_event_id"] for doc in store.query(COLLECTION, where={"tenant_id": tenant_id,
                                                                             "state": PROCESSING})
            if doc.get("webhook_event_id") and from_iso(doc["lease_until"]) <= now]


def take_over_abandoned(store: DocumentStore, tenant_id: str, webhook_event_id: str, *, now: datetime) -> str | None:
    """Finish one abandoned event (the sweep): no resident depends on LINE's redelivery.

    Returns:
        "queued" (no reply was started and the raw event is kept: the queue answers it; queue its
        task), "done" (a reply was started: its outcome is unknown, so it is never repeated; or
        nothing is left to answer it with), or None (it is no longer abandoned).
    Raises:
        StoreUnavailable / StoreTimeout / TransactionConflict: retryable; the next sweep tries again.
    """
    require_aware(now)
    doc_id = _doc_id(tenant_id, webhook_event_id)
    stamp = to_iso(now)

    def txn(tx: Transaction) -> str | None:
        doc = tx.get(COLLECTION, doc_id)
        if doc is None or doc.get("state") != PROCESSING or from_iso(doc["lease_until"]) > now:
            return None
        if doc.get("reply_attempted") or not isinstance(doc.get("event"), dict):
            outcome = "reply_unknown" if doc.get("reply_attempted") else "abandoned"
            tx.set(COLLECTION, doc_id, {**doc, "state": DONE, "outcome": outcome, "done_at": stamp})
            return "done"
        tx.set(COLLECTION, doc_id, {**doc, "attempt": doc["attempt"] + 1, "state": QUEUED,
                                    "queued_reason": "abandoned", "queued_at": stamp, "answer": None,
                                    **outbox.notice_fields(ANSWER_KIND, QUEUE_OWNER, now=now, lease_seconds=0.0,
                                                           retry_key=answer_retry_key(tenant_id, webhook_event_id))})
        return "queued"

    return store.run_transaction(txn)


def answer_retry_key(tenant_id: str, webhook_event_id: str) -> str:
    """The ``X-Line-Retry-Key`` of a queued event's answer pushed by the worker (uuid5, deterministic)."""
    return str(uuid.uuid5(_RETRY_NAMESPACE, f"{tenant_id}/{webhook_event_id}/event_answer"))


_RETRY_NAMESPACE = uuid.UUID("0b6e1f5c-2d8a-5e4b-9c3f-7a1d2e3f4a5b")


def record_answer(store: DocumentStore, ref: EventRef, *, answer: list[dict], via: str, owner: str,
                  now: datetime) -> bool:
    """Record, before sending, what the worker is about to send and how (``reply`` or ``push``).

    Later attempts send the same ``answer`` with the same retry key, and a reply once attempted is
    never attempted again. Returns False when ``owner`` no longer holds the notice.
    Raises:
        StoreUnavailable / StoreTimeout / TransactionConflict: then nothing may be sent.
    """
    require_aware(now)

    def txn(tx: Transaction) -> bool:
        doc = tx.get(COLLECTION, ref.doc_id)
        if doc is None or doc.get("notice_state") != outbox.PENDING or doc.get("notice_owner") != owner:
            return False
        changes: dict[str, Any] = {"answer": answer, "answer_via": via, "answer_recorded_at": to_iso(now)}
        if via == "reply":
            changes["reply_attempted"] = True
            changes["reply_attempted_at"] = to_iso(now)
        tx.set(COLLECTION, ref.doc_id, {**doc, **changes})
        return True

    return store.run_transaction(txn)


def queued_events(store: DocumentStore, tenant_id: str) -> list[dict]:
    """Queued events of the tenant whose answer is still pending (for the start-up re-queue).

    Raises:
        StoreUnavailable: the store could not be read.
    """
    return store.query(COLLECTION, where={"tenant_id": tenant_id, "state": QUEUED,
                                          "notice_state": outbox.PENDING})


#: ``reply_state`` answers.
NOT_ATTEMPTED, REPLIED, REPLY_FAILED, REPLY_UNKNOWN = "not_attempted", "replied", "failed", "unknown"
#: The event is queued and its answer not yet settled: the queued-event worker will tell the user.
REPLY_QUEUED = "queued"
_DONE_REPLY_STATES = {"replied": REPLIED, "reply_failed": REPLY_FAILED, "reply_unknown": REPLY_UNKNOWN}
_QUEUED_REPLY_STATES = {outbox.DELIVERED: REPLIED, outbox.REPLY_UNKNOWN: REPLY_UNKNOWN,
                        outbox.FAILED: REPLY_FAILED}


def _reply_state_of(doc: dict | None) -> str:
    if doc is None:
        return NOT_ATTEMPTED
    if doc.get("state") == DONE:
        return _DONE_REPLY_STATES.get(doc.get("outcome"), NOT_ATTEMPTED)
    if doc.get("state") == QUEUED:
        return _QUEUED_REPLY_STATES.get(doc.get("notice_state"), REPLY_QUEUED)
    return REPLY_UNKNOWN if doc.get("reply_attempted") else NOT_ATTEMPTED


def reply_state(store: DocumentStore, tenant_id: str, webhook_event_id: str) -> str:
    """Whether the answer to one event reached LINE, as far as the inbox knows (one read).

    Returns:
        ``replied`` (LINE accepted it: the reply, or the queued answer's reply or push); ``failed``
        (LINE refused it: definitely not delivered); ``unknown`` (sent without an answer, or started
        by an attempt that never finished: it may have been delivered, so it must not be repeated
        blindly, DESIGN §3); ``queued`` (the queued-event worker has yet to settle it: wait);
        ``not_attempted`` (no reply was started: no inbox document, or finished without a reply).
    Raises:
        StoreUnavailable: the inbox could not be read.
    """
    return _reply_state_of(store.get(COLLECTION, _doc_id(tenant_id, webhook_event_id)))


#: ``outcome`` of an event whose answer an outbox push took over (``take_over_reply``).
TOLD_BY_PUSH = "told_by_push"


def take_over_reply(store: DocumentStore, tenant_id: str, webhook_event_id: str, *, now: datetime) -> str:
    """``reply_state`` for a push about to tell what this event's reply would have told (one transaction).

    When the event is still ``processing`` and its attempt has not started a reply, that attempt
    is fenced off in the same transaction: the event is finished (``outcome`` ``told_by_push``), so
    a slow or stale attempt can no longer record a reply or queue its answer (its writes find the
    event finished, DESIGN §11), and a redelivery is a duplicate. The caller then pushes.

    Returns:
        The ``reply_state`` word as read (``not_attempted`` when the event was fenced now).
    Raises:
        StoreUnavailable / StoreTimeout / TransactionConflict: retryable; nothing was written.
    """
    require_aware(now)
    doc_id = _doc_id(tenant_id, webhook_event_id)

    def txn(tx: Transaction) -> str:
        doc = tx.get(COLLECTION, doc_id)
        state = _reply_state_of(doc)
        if doc is not None and doc.get("state") == PROCESSING and state == NOT_ATTEMPTED:
            tx.set(COLLECTION, doc_id, {**doc, "state": DONE, "outcome": TOLD_BY_PUSH, "done_at": to_iso(now)})
        return state

    return store.run_transaction(txn)
