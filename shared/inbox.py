"""Webhook inbox: deduplicate LINE deliveries by ``webhookEventId`` under a lease.

States of an inbox document (collection ``webhook_inbox``, id ``<tenant>:<webhookEventId>``):
``processing`` (held by one attempt until ``lease_until``), then ``done``. A duplicate of a
``done`` event is acknowledged with nothing repeated; a duplicate while the lease is held gets
503 so LINE redelivers later; an attempt that crashed loses its lease after ``lease_seconds``
and the next delivery takes over (at least once in, exactly once in effect: docs/design.md §3).

Before a reply is sent the attempt records ``reply_attempted``: a takeover never replies
again, because a reply whose outcome is unknown is never blindly retried (docs/design.md §3). The same
write records what the reply carries (``shared.outbox.Carried``: a handoff receipt, a "checking"
answer, or other), and so does the write that hands a rendered answer to the queue or that
records the queued-event worker's answer before it is sent. An event gets at most one answer, so
whoever later asks what it told the resident (``take_over_answer``) reads it, never guesses.

A reply whose answer must reach the resident (a memory outcome: ``shared.context.Reply.follow_up``)
records its follow-up in that same write. Whoever learns that the reply's outcome is unknown — the
attempt itself (LINE answered 5xx or not at all), a redelivery or the sweep taking over an attempt
that died — hands the follow-up to the queue for one push with the event's retry key
(``follow_up_queued``, reason ``reply_unknown``) instead of finishing the event silent.

An event the webhook cannot finish inside LINE's 2-second budget (the budget ran out, the store
was busy, LINE answered the reply with 429 or no connection was made) is handed to the queue
(docs/design.md §11: an event is done only when its reply was sent, its reply's outcome is recorded, or
its work is durably queued): its document becomes ``queued``, holding the raw event (and, when
the answer was already rendered, that answer) and an outbox notice (``shared.outbox``,
``notice_kind`` "event_answer") that the queued-event worker claims, delivers or settles. A
redelivery of a queued event is acknowledged and repeats nothing: the queue answers it once.

What is kept (docs/design.md §9; docs/memory.md, what LOCAL keeps): while an event is ``processing``
or ``queued`` with its answer pending, the document holds the raw event (the message text, the
reply token) and any rendered answer and follow-up, because a takeover, the sweep or the queued-event worker
may still have to answer it. The write that finishes it (``done``, or the queued answer's notice
settled) also drops them (``finished``): what stays is the event's id, kind, LINE user id and
message id, the states and times, and what its answer carried — what deduplication, reconcile
and the outbox read. The document itself expires after ``RETENTION``. A document written before
this rule keeps its text until it is next written, or it expires.
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


class InboxState(enum.StrEnum):
    """An inbox document's ``state`` (stored as the plain value)."""

    PROCESSING = "processing"  # held by one attempt until ``lease_until``
    DONE = "done"              # finished: a redelivery repeats nothing
    QUEUED = "queued"          # handed to the queued-event worker, which answers it once


PROCESSING, DONE, QUEUED = InboxState.PROCESSING, InboxState.DONE, InboxState.QUEUED


class EventOutcome(enum.StrEnum):
    """How a finished (``done``) event ended: the stored ``outcome`` (``mark_done``)."""

    REPLIED = "replied"              # LINE accepted the reply
    NO_REPLY = "no_reply"            # nothing to say, or no reply token
    REPLY_FAILED = "reply_failed"    # LINE refused the reply: definitely not delivered
    REPLY_UNKNOWN = "reply_unknown"  # a reply was started and its outcome is unknown: never repeated
    ABANDONED = "abandoned"          # its attempt died and nothing is left to answer it with (the sweep)
    TOLD_BY_PUSH = "told_by_push"    # an outbox push took its answer over before a reply started
                                     # (``take_over_answer``)


class QueuedReason(enum.StrEnum):
    """Why an event was handed to the queue: the stored ``queued_reason``."""

    BUDGET = "budget"                            # LINE's 2-second budget was running out
    DEFERRED = "deferred"                        # the turn asked for the model (``Reply(defer=True)``)
    STORE_BUSY = "store_busy"                    # the store failed retryably while handling it
    REPLY_NOT_DELIVERED = "reply_not_delivered"  # LINE answered the reply 429
    REPLY_NEVER_STARTED = "reply_never_started"  # no connection to LINE was made for the reply
    REPLY_UNRECORDED = "reply_unrecorded"        # the reply attempt could not be recorded first
    #: The reply's outcome is unknown (LINE 5xx, a timeout, or its attempt died after recording it)
    #: and its answer must still reach the resident: the recorded follow-up is pushed once.
    REPLY_UNKNOWN = "reply_unknown"
    ABANDONED = "abandoned"                      # its attempt died before answering (the sweep)


class QueueResult(enum.StrEnum):
    """What became of one event handed to ``claim_and_queue`` or ``take_over_abandoned``."""

    QUEUED = "queued"        # its document is queued: queue its task
    DUPLICATE = "duplicate"  # finished or queued before: repeat nothing
    DONE = "done"            # an earlier attempt's reply may have landed: finished, never repeated
    RETRY = "retry"          # another attempt holds its lease: LINE should deliver it again


class AnswerVia(enum.StrEnum):
    """How the queued-event worker sends (or sent) an event's answer: the stored ``answer_via``."""

    REPLY = "reply"                              # with the event's reply token
    PUSH = "push"                                # by push with the event's ``X-Line-Retry-Key``
    REPLY_NOT_DELIVERED = "reply_not_delivered"  # a reply was definitely not delivered: push next


#: The outbox owner of a queued event's answer: the queued-event worker.
QUEUE_OWNER = "queue"
ANSWER_KIND = "event_answer"
#: How long an event id is remembered (``expire_at``, Firestore TTL: infra/firestore.tf). Far
#: longer than LINE keeps redelivering a failed webhook, so a late redelivery is still a duplicate.
RETENTION = timedelta(days=7)


class EventClaim(enum.Enum):
    """What the caller may do with one delivered event (the answer to claiming its inbox document)."""

    CLAIMED = "claimed"          # process it now
    DONE = "done"                # finished before: answer 200, repeat nothing
    IN_PROGRESS = "in_progress"  # another attempt holds the lease: answer 503
    QUEUED = "queued"            # handed to the queue before: answer 200, repeat nothing


@dataclass(frozen=True)
class ClaimResult:
    """The claim and, on a takeover, whether the earlier attempt had started its reply."""

    claim: EventClaim
    attempt: int
    reply_attempted: bool = False


#: The raw event's fields kept once the event is finished (``finished``): no message text, no
#: postback data, no reply token.
_KEPT_EVENT_FIELDS = ("type", "mode", "timestamp", "webhookEventId", "source", "deliveryContext")
_KEPT_SOURCE_FIELDS = ("type", "userId", "groupId", "roomId")


def user_of(event: dict | None) -> str | None:
    """The LINE ``userId`` of a raw event's source, or None."""
    source = event.get("source") if isinstance(event, dict) else None
    user_id = source.get("userId") if isinstance(source, dict) else None
    return user_id if isinstance(user_id, str) else None


def finished(doc: dict) -> dict:
    """``doc`` as it is kept once its event is finished: the raw event without its content.

    The event keeps its kind, time, ids and source (``_KEPT_EVENT_FIELDS``) and, for a message, the
    message's ``id`` and ``type``; its text, postback data and reply token are dropped, and so is
    a rendered ``answer`` and ``follow_up`` (only their record, ``answer_carries`` / ``answer_notice`` /
    ``answer_via``, stays). ``content_removed`` is set. Idempotent; a pure function (callers write it inside the
    transaction that finishes the event, so no extra commit).
    """
    event = doc.get("event")
    kept: dict[str, Any] | None = None
    if isinstance(event, dict):
        kept = {name: event[name] for name in _KEPT_EVENT_FIELDS if name in event}
        if isinstance(kept.get("source"), dict):
            kept["source"] = {name: kept["source"][name] for name in _KEPT_SOURCE_FIELDS if name in kept["source"]}
        message = event.get("message")
        if isinstance(message, dict):
            kept["message"] = {name: message[name] for name in ("id", "type") if name in message}
    user_id = doc.get("user_id") or user_of(event)
    dropped = {name: None for name in ("answer", "follow_up") if name in doc}
    return {**doc, "event": kept, "content_removed": True, **dropped, **({"user_id": user_id} if user_id else {})}


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
                claimant: str | None = None, start_reply: bool = False) -> ClaimResult:
    """Claim one webhook event id for this attempt, in one store transaction.

    With ``start_reply`` the same transaction also records that this attempt is about to use the
    reply token (what ``mark_reply_attempted`` records), for a reply computed before the claim with
    no side effects: one commit instead of two, and the same guarantee (a takeover of a claim made
    so never replies again: the reply's outcome is unknown to it, docs/design.md §3).

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
        start_reply: record ``reply_attempted`` with a successful claim (see above).
    Returns:
        ClaimResult with CLAIMED, DONE, QUEUED or IN_PROGRESS. Its ``reply_attempted`` is True only
        when an earlier attempt started a reply (the caller must then not reply): the reply this
        call's own ``start_reply`` records never sets it.
    Raises:
        StoreUnavailable: the store could not be reached (answer 503; LINE redelivers).
    """
    require_aware(now)
    doc_id = _doc_id(tenant_id, webhook_event_id)
    lease_until = to_iso(now + timedelta(seconds=lease_seconds))
    started = ({"reply_attempted": True, "reply_attempted_at": to_iso(now), "reply_attempted_by": claimant}
               if start_reply else {})

    def txn(tx: Transaction) -> ClaimResult:
        doc = tx.get(COLLECTION, doc_id)
        if doc is None:
            tx.create(COLLECTION, doc_id, {"tenant_id": tenant_id, "webhook_event_id": webhook_event_id,
                                           "user_id": user_of(event), "event": event, "claimant": claimant,
                                           "state": PROCESSING.value, "attempt": 1,
                                           "lease_until": lease_until, "received_at": to_iso(now),
                                           "expire_at": expire_at(now + RETENTION), **started})
            return ClaimResult(EventClaim.CLAIMED, 1)
        if doc["state"] == DONE:
            return ClaimResult(EventClaim.DONE, doc["attempt"])
        if doc["state"] == QUEUED:
            return ClaimResult(EventClaim.QUEUED, doc["attempt"])
        if claimant is not None and doc.get("claimant") == claimant and doc["state"] == PROCESSING:
            # An earlier try of this same call committed; a reply it recorded for this call
            # (``start_reply``) is not sent yet: the caller sends only after this returns.
            own = start_reply and doc.get("reply_attempted_by") == claimant
            return ClaimResult(EventClaim.CLAIMED, doc["attempt"], bool(doc.get("reply_attempted")) and not own)
        if from_iso(doc["lease_until"]) > now:
            return ClaimResult(EventClaim.IN_PROGRESS, doc["attempt"])
        attempt = doc["attempt"] + 1
        earlier_reply = bool(doc.get("reply_attempted"))  # then never replied again: nothing more recorded
        tx.set(COLLECTION, doc_id, {**doc, "attempt": attempt, "lease_until": lease_until, "claimant": claimant,
                                    **({} if earlier_reply else started)})
        return ClaimResult(EventClaim.CLAIMED, attempt, earlier_reply)

    return store.run_transaction(txn)


def _update(store: DocumentStore, tenant_id: str, webhook_event_id: str, attempt: int,
            changes: dict, *, finish: bool = False, durable: bool = True) -> bool:
    doc_id = _doc_id(tenant_id, webhook_event_id)

    def txn(tx: Transaction) -> bool:
        doc = tx.get(COLLECTION, doc_id)
        if doc is None or doc["attempt"] != attempt or doc["state"] != PROCESSING:
            return False  # a later attempt owns it now, or it is finished or queued
        updated = {**doc, **changes}
        tx.set(COLLECTION, doc_id, finished(updated) if finish else updated)
        return True

    return store.run_transaction(txn, durable=durable)


def mark_reply_attempted(store: DocumentStore, tenant_id: str, webhook_event_id: str,
                         attempt: int, *, now: datetime, carries: outbox.Carried | None = None,
                         follow_up: list[dict] | None = None) -> bool:
    """Record that this attempt is about to use the reply token, and what the reply carries.

    Args:
        carries: what the reply tells (``answer_carries`` / ``answer_notice``), in this same write
            (no extra commit). None records nothing of it (as a document written before the
            record existed); the webhook always passes one.
        follow_up: the messages (JSON dicts) owed by push if this reply's outcome is unknown
            (``shared.context.Reply.follow_up``), kept as ``follow_up`` in this same write, so
            whoever takes over an attempt that died after this write pushes them
            (``follow_up_queued``); None: an unknown reply is never repeated.
    Returns:
        False when a later attempt took the lease over: the caller must not reply.
    Raises:
        StoreUnavailable: then the caller must not reply either.
    """
    changes: dict[str, Any] = {"reply_attempted": True, "reply_attempted_at": to_iso(now)}
    if carries is not None:
        changes.update(carries.fields())
    if follow_up:
        changes["follow_up"] = follow_up
    return _update(store, tenant_id, webhook_event_id, attempt, changes)


def mark_done(store: DocumentStore, tenant_id: str, webhook_event_id: str, attempt: int, *,
              now: datetime, outcome: EventOutcome, durable: bool = True) -> bool:
    """Finish the event; later deliveries of it are acknowledged and repeat nothing. The same write
    drops the raw event's content (``finished``).

    Args:
        outcome: how it ended (stored as ``outcome``).
        durable: False only for the finish of a reply that carries nothing (no receipt, no notice,
            no step after it) whose start was recorded durably (``claim_event(start_reply=True)``):
            the store may then commit it without an fsync (``DocumentStore.run_transaction``). Should
            a power loss lose it, the document reads as before it: ``processing`` with the reply
            started, which every reader takes for a reply of unknown outcome and never repeats (a
            redelivery after the lease and the sweep both finish it as ``reply_unknown``), and which
            keeps the event's text until then.
    Returns:
        False when a later attempt owns the event.
    """
    return _update(store, tenant_id, webhook_event_id, attempt,
                   {"state": DONE.value, "outcome": EventOutcome(outcome).value, "done_at": to_iso(now)},
                   finish=True, durable=durable)


def queue_event(store: DocumentStore, tenant_id: str, webhook_event_id: str, attempt: int, *,
                event: dict, reason: QueuedReason, now: datetime, answer: list[dict] | None = None,
                reply_attempted: bool = False, carries: outbox.Carried | None = None,
                follow_up: list[dict] | None = None) -> bool:
    """Hand this attempt's event to the queue: the document becomes ``queued`` (one transaction).

    Args:
        event: the raw webhook event (JSON object) the worker handles again if no ``answer`` is given.
        reason: why; kept as ``queued_reason``.
        answer: the answer already rendered (message dicts), for the worker to send as it is.
        reply_attempted: the reply token was used, or LINE asked to be called later (429): the worker
            must push rather than reply.
        carries: what ``answer`` tells (``shared.outbox.Carried``), kept with it; None when there is
            no answer yet (the worker records its own) or nothing is known of it.
        follow_up: what the worker pushes if its reply of ``answer`` has an unknown outcome
            (``shared.context.Reply.follow_up``), kept with it.
    Returns:
        False when a later attempt owns the event (nothing written).
    Raises:
        StoreUnavailable / StoreTimeout / TransactionConflict: not queued as far as the caller knows.
    """
    require_aware(now)
    fields = {"state": QUEUED.value, "event": event, "user_id": user_of(event),
              "queued_reason": QueuedReason(reason).value,
              "queued_at": to_iso(now),
              "answer": answer, "reply_attempted": reply_attempted, "follow_up": follow_up if answer else None,
              **(carries.fields() if carries is not None and answer else _NOT_CARRIED),
              **outbox.notice_fields(ANSWER_KIND, QUEUE_OWNER, now=now, lease_seconds=0.0,
                                     retry_key=answer_retry_key(tenant_id, webhook_event_id))}
    return _update(store, tenant_id, webhook_event_id, attempt, fields)


#: No answer recorded yet: ``shared.outbox.Carried.of`` reads None.
_NOT_CARRIED: dict[str, Any] = {"answer_carries": None, "answer_notice": None}


def claim_and_queue(store: DocumentStore, tenant_id: str, items: list[tuple[str, dict]], *, now: datetime,
                    reason: QueuedReason, lease_seconds: float) -> dict[str, QueueResult]:
    """Claim several events and queue them at once, in one store transaction (one commit).

    For each ``(webhook_event_id, raw_event)``: a new event, or one whose earlier attempt lost its
    lease before starting a reply, becomes ``queued``; a finished or queued one is a duplicate; one
    whose lease is live stays with its holder; one whose earlier attempt started a reply and died
    is never replied twice: queued to push its recorded follow-up (``follow_up_queued``), or else
    finished as ``reply_unknown``.

    Returns:
        webhook_event_id → QueueResult (QUEUED, DUPLICATE, DONE or RETRY).
    Raises:
        StoreUnavailable / StoreTimeout / TransactionConflict: nothing is known to be queued.
    """
    require_aware(now)
    stamp = to_iso(now)

    def txn(tx: Transaction) -> dict[str, QueueResult]:
        docs = {event_id: tx.get(COLLECTION, _doc_id(tenant_id, event_id)) for event_id, _ in items}
        results: dict[str, QueueResult] = {}
        for event_id, raw in items:
            if event_id in results:
                continue  # the same event twice in one body
            doc = docs[event_id]
            queued = {"tenant_id": tenant_id, "webhook_event_id": event_id, "user_id": user_of(raw),
                      "state": QUEUED.value, "event": raw,
                      "queued_reason": QueuedReason(reason).value, "queued_at": stamp, "answer": None, "reply_attempted": False,
                      "received_at": stamp, "lease_until": stamp,
                      **outbox.notice_fields(ANSWER_KIND, QUEUE_OWNER, now=now, lease_seconds=0.0,
                                             retry_key=answer_retry_key(tenant_id, event_id))}
            if doc is None:
                tx.create(COLLECTION, _doc_id(tenant_id, event_id), {**queued, "attempt": 1})
                results[event_id] = QueueResult.QUEUED
            elif doc["state"] in (DONE, QUEUED):
                results[event_id] = QueueResult.DUPLICATE
            elif from_iso(doc["lease_until"]) > now:
                results[event_id] = QueueResult.RETRY
            elif doc.get("reply_attempted"):
                owed = follow_up_queued(doc, tenant_id, event_id, now=now)
                tx.set(COLLECTION, _doc_id(tenant_id, event_id),
                       {**owed, "attempt": doc["attempt"] + 1} if owed is not None else
                       finished({**doc, "attempt": doc["attempt"] + 1, "state": DONE.value,
                                 "outcome": EventOutcome.REPLY_UNKNOWN.value, "done_at": stamp}))
                results[event_id] = QueueResult.QUEUED if owed is not None else QueueResult.DONE
            else:
                tx.set(COLLECTION, _doc_id(tenant_id, event_id),
                       {**doc, **queued, "received_at": doc.get("received_at", stamp), "attempt": doc["attempt"] + 1})
                results[event_id] = QueueResult.QUEUED
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
                                                                             "state": PROCESSING.value})
            if doc.get("webhook_event_id") and from_iso(doc["lease_until"]) <= now]


def take_over_abandoned(store: DocumentStore, tenant_id: str, webhook_event_id: str, *,
                        now: datetime) -> QueueResult | None:
    """Finish one abandoned event (the sweep): no resident depends on LINE's redelivery.

    Returns:
        QUEUED (no reply was started and the raw event is kept: the queue answers it; or a reply
        was started whose follow-up is recorded: the queue pushes it, ``follow_up_queued``; queue
        its task), DONE (a reply was started with no follow-up: its outcome is unknown, so it is
        never repeated; or nothing is left to answer it with), or None (it is no longer abandoned).
    Raises:
        StoreUnavailable / StoreTimeout / TransactionConflict: retryable; the next sweep tries again.
    """
    require_aware(now)
    doc_id = _doc_id(tenant_id, webhook_event_id)
    stamp = to_iso(now)

    def txn(tx: Transaction) -> QueueResult | None:
        doc = tx.get(COLLECTION, doc_id)
        if doc is None or doc.get("state") != PROCESSING or from_iso(doc["lease_until"]) > now:
            return None
        owed = follow_up_queued(doc, tenant_id, webhook_event_id, now=now)
        if owed is not None:
            tx.set(COLLECTION, doc_id, {**owed, "attempt": doc["attempt"] + 1})
            return QueueResult.QUEUED
        if doc.get("reply_attempted") or not isinstance(doc.get("event"), dict):
            outcome = EventOutcome.REPLY_UNKNOWN if doc.get("reply_attempted") else EventOutcome.ABANDONED
            tx.set(COLLECTION, doc_id, finished({**doc, "state": DONE.value, "outcome": outcome.value,
                                                 "done_at": stamp}))
            return QueueResult.DONE
        tx.set(COLLECTION, doc_id, {**doc, "attempt": doc["attempt"] + 1, "state": QUEUED.value,
                                    "queued_reason": QueuedReason.ABANDONED.value, "queued_at": stamp, "answer": None,
                                    **outbox.notice_fields(ANSWER_KIND, QUEUE_OWNER, now=now, lease_seconds=0.0,
                                                           retry_key=answer_retry_key(tenant_id, webhook_event_id))})
        return QueueResult.QUEUED

    return store.run_transaction(txn)


def follow_up_queued(doc: dict, tenant_id: str, webhook_event_id: str, *, now: datetime) -> dict | None:
    """``doc`` handed to the queue to push its recorded follow-up, or None when it has none.

    For an event whose reply was started (``reply_attempted``) and whose outcome is unknown — LINE
    answered 5xx or not at all, or the attempt died after recording it — while its answer must
    still reach the resident (``follow_up``, recorded with the reply: ``shared.context.Reply``).
    The document becomes ``queued`` (reason ``reply_unknown``) with the follow-up as its answer and
    a fresh answer notice; the reply token is never used again, so the worker pushes it with the
    event's ``X-Line-Retry-Key`` (``answer_retry_key``): once, however often it is taken over. What
    the reply carried (``answer_carries``) stays. A pure function: callers write it in their own
    transaction (the attempt number is theirs to set).
    """
    require_aware(now)
    follow_up = doc.get("follow_up")
    if not doc.get("reply_attempted") or not isinstance(follow_up, list) or not follow_up:
        return None
    return {**doc, "state": QUEUED.value, "queued_reason": QueuedReason.REPLY_UNKNOWN.value,
            "queued_at": to_iso(now), "answer": follow_up, "follow_up": None, "reply_attempted": True,
            "lease_until": to_iso(now),
            **outbox.notice_fields(ANSWER_KIND, QUEUE_OWNER, now=now, lease_seconds=0.0,
                                   retry_key=answer_retry_key(tenant_id, webhook_event_id))}


def queue_follow_up(store: DocumentStore, tenant_id: str, webhook_event_id: str, attempt: int, *,
                    now: datetime) -> bool:
    """Hand an event whose earlier attempt started a reply and died to the queue, to push the
    follow-up that attempt recorded (``follow_up_queued``), in one transaction.

    Args:
        attempt: this attempt's number (``ClaimResult.attempt``), which must still own the event.
    Returns:
        True when queued (queue its task); False when no follow-up is recorded, or another attempt
        owns the event (nothing written: finish it as before).
    Raises:
        StoreUnavailable / StoreTimeout / TransactionConflict: nothing is known to be queued.
    """
    doc_id = _doc_id(tenant_id, webhook_event_id)

    def txn(tx: Transaction) -> bool:
        doc = tx.get(COLLECTION, doc_id)
        if doc is None or doc["attempt"] != attempt or doc["state"] != PROCESSING:
            return False
        owed = follow_up_queued(doc, tenant_id, webhook_event_id, now=now)
        if owed is None:
            return False
        tx.set(COLLECTION, doc_id, owed)
        return True

    return store.run_transaction(txn)


def answer_retry_key(tenant_id: str, webhook_event_id: str) -> str:
    """The ``X-Line-Retry-Key`` of a queued event's answer pushed by the worker (uuid5, deterministic)."""
    return str(uuid.uuid5(_RETRY_NAMESPACE, f"{tenant_id}/{webhook_event_id}/event_answer"))


_RETRY_NAMESPACE = uuid.UUID("0b6e1f5c-2d8a-5e4b-9c3f-7a1d2e3f4a5b")


def record_answer(store: DocumentStore, ref: EventRef, *, answer: list[dict], via: AnswerVia, owner: str,
                  now: datetime, carries: outbox.Carried | None = None,
                  follow_up: list[dict] | None = None) -> bool:
    """Record, before sending, what the worker is about to send, how (``AnswerVia``) and what it
    carries (``carries``; None leaves the record as it is, e.g. an answer the webhook rendered), and,
    for a reply, the ``follow_up`` a later attempt pushes should this one die before learning its
    outcome (None leaves it as it is).

    Later attempts send the same ``answer`` with the same retry key, and a reply once attempted is
    never attempted again. Returns False when ``owner`` no longer holds the notice.
    Raises:
        StoreUnavailable / StoreTimeout / TransactionConflict: then nothing may be sent.
    """
    require_aware(now)

    def txn(tx: Transaction) -> bool:
        doc = tx.get(COLLECTION, ref.doc_id)
        notice = outbox.Notice.of(doc)
        if doc is None or notice is None or not notice.held_by(owner):
            return False
        changes: dict[str, Any] = {"answer": answer, "answer_via": AnswerVia(via).value,
                                   "answer_recorded_at": to_iso(now),
                                   **(carries.fields() if carries is not None else {}),
                                   **({"follow_up": follow_up} if follow_up is not None else {})}
        if via is AnswerVia.REPLY:
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
    return store.query(COLLECTION, where={"tenant_id": tenant_id, "state": QUEUED.value,
                                          "notice_state": outbox.PENDING.value})


class ReplyState(enum.StrEnum):
    """What ``reply_state`` knows of one event's answer."""

    NOT_ATTEMPTED = "not_attempted"  # no reply was started (no document, or finished without one)
    REPLIED = "replied"              # LINE accepted it: the reply, or the queued answer's reply or push
    FAILED = "failed"                # LINE refused it: definitely not delivered
    UNKNOWN = "unknown"              # perhaps delivered: never repeated blindly (docs/design.md §3)
    QUEUED = "queued"                # the queued-event worker has yet to settle it: wait


_DONE_REPLY_STATES = {EventOutcome.REPLIED: ReplyState.REPLIED, EventOutcome.REPLY_FAILED: ReplyState.FAILED,
                      EventOutcome.REPLY_UNKNOWN: ReplyState.UNKNOWN}
_QUEUED_REPLY_STATES = {outbox.NoticeState.DELIVERED: ReplyState.REPLIED,
                        outbox.NoticeState.REPLY_UNKNOWN: ReplyState.UNKNOWN,
                        outbox.NoticeState.FAILED: ReplyState.FAILED}


def _reply_state_of(doc: dict | None) -> ReplyState:
    if doc is None:
        return ReplyState.NOT_ATTEMPTED
    if doc.get("state") == DONE:
        return _DONE_REPLY_STATES.get(doc.get("outcome"), ReplyState.NOT_ATTEMPTED)
    if doc.get("state") == QUEUED:
        notice = outbox.Notice.of(doc)
        return _QUEUED_REPLY_STATES.get(notice.state, ReplyState.QUEUED) if notice else ReplyState.QUEUED
    return ReplyState.UNKNOWN if doc.get("reply_attempted") else ReplyState.NOT_ATTEMPTED


def reply_state(store: DocumentStore, tenant_id: str, webhook_event_id: str) -> ReplyState:
    """Whether the answer to one event reached LINE, as far as the inbox knows (one read).

    Returns:
        ReplyState: REPLIED (LINE accepted it: the reply, or the queued answer's reply or push);
        FAILED (LINE refused it: definitely not delivered); UNKNOWN (sent without an answer, or
        started by an attempt that never finished: it may have been delivered, so it must not be
        repeated blindly, docs/design.md §3); QUEUED (the queued-event worker has yet to settle it: wait);
        NOT_ATTEMPTED (no reply was started: no inbox document, or finished without a reply).
    Raises:
        StoreUnavailable: the inbox could not be read.
    """
    return _reply_state_of(store.get(COLLECTION, _doc_id(tenant_id, webhook_event_id)))


@dataclass(frozen=True)
class EventAnswer:
    """What became of one event's answer, and what it carried, as its inbox document records them.

    Args:
        state: the ReplyState (``reply_state``).
        carries: the recorded ``shared.outbox.Carried``; None when nothing is recorded (a document
            written before the record existed, an answer not rendered yet, or no document).
        finished_silent: the event is finished and no answer to it was ever started (it had nothing
            to say, an outbox push took its answer over, or it was abandoned): it told the resident
            nothing at all.
        unanswered_yet: the event is still ``processing`` and its attempt has not started a reply:
            that attempt may still answer it.
        by_push: the answer was last sent by push (``answer_via`` push), with the event's own
            ``X-Line-Retry-Key``: an UNKNOWN state is that push's, retried under that key and never
            repeated under another one.
    """

    state: ReplyState
    carries: outbox.Carried | None = None
    finished_silent: bool = False
    unanswered_yet: bool = False
    by_push: bool = False


def _answer_of(doc: dict | None) -> EventAnswer:
    state = _reply_state_of(doc)
    silent = (doc is not None and doc.get("state") == DONE and not doc.get("reply_attempted")
              and doc.get("outcome") in (EventOutcome.NO_REPLY, EventOutcome.TOLD_BY_PUSH, EventOutcome.ABANDONED))
    unanswered = doc is not None and doc.get("state") == PROCESSING and state is ReplyState.NOT_ATTEMPTED
    by_push = doc is not None and doc.get("answer_via") == AnswerVia.PUSH
    return EventAnswer(state, outbox.Carried.of(doc), silent, unanswered, by_push)


def event_answer(store: DocumentStore, tenant_id: str, webhook_event_id: str) -> EventAnswer:
    """What became of one event's answer and what it carried, as far as the inbox knows (one read,
    nothing fenced: see ``take_over_answer``).

    Raises:
        StoreUnavailable: the inbox could not be read.
    """
    return _answer_of(store.get(COLLECTION, _doc_id(tenant_id, webhook_event_id)))


def take_over_answer(store: DocumentStore, tenant_id: str, webhook_event_id: str, *,
                     now: datetime) -> EventAnswer:
    """``reply_state`` and the recorded content of an event's answer, for a push about to tell what
    this event's answer would have told, or to follow it up (one transaction).

    When the event is still ``processing`` and its attempt has not started a reply, that attempt
    is fenced off in the same transaction: the event is finished (``outcome`` ``told_by_push``), so
    a slow or stale attempt can no longer record a reply or queue its answer (its writes find the
    event finished, docs/design.md §11), and a redelivery is a duplicate. The caller then pushes.

    Returns:
        The EventAnswer as read (state NOT_ATTEMPTED when the event was fenced now).
    Raises:
        StoreUnavailable / StoreTimeout / TransactionConflict: retryable; nothing was written.
    """
    require_aware(now)
    doc_id = _doc_id(tenant_id, webhook_event_id)

    def txn(tx: Transaction) -> EventAnswer:
        doc = tx.get(COLLECTION, doc_id)
        answer = _answer_of(doc)
        if answer.unanswered_yet:
            tx.set(COLLECTION, doc_id, finished({**doc, "state": DONE.value,
                                                 "outcome": EventOutcome.TOLD_BY_PUSH.value, "done_at": to_iso(now)}))
        return answer

    return store.run_transaction(txn)
