"""The transactional outbox and its courier: telling a user exactly once, whoever tells them.

This module is the courier: every reply or push to LINE (webhook answers, queued answers, handoff
receipts and follow-ups, staff cards and transitions, memory outcomes) is sent by ``send_reply``,
``send_push`` or ``push_notice`` here, and nowhere else calls the LINE port's ``reply`` or
``push``. Every push LINE accepted is counted for its tenant and Asia/Taipei month
(``shared.push_count``, after the send, never inside a transaction function); a push LINE refused
because the month's messages are used up is counted and logged (``push refused: monthly limit``),
and its caller puts the notice on the staff follow-up list instead of retrying it
(docs/delivery.md#push-quota). A notice is claimed (``claim_notice``), sent, and settled from the LINE outcome table
(``shared.line.port``: ``mark_delivered``, ``settle_reply_unknown``, ``settle_failed``,
``release_claim``) under the delivery rules of docs/design.md §11.

An outbox entry is a handful of flat ``notice_*`` fields on a store document, written in the same
transaction as what it announces (a handoff request, a follow-up, a queued webhook event's answer):

* ``notice_kind``: what is to be told (e.g. "receipt", "needs_human_followup", "event_answer");
* ``notice_state``: "pending" until a reply or push succeeded, then "delivered"; or
  "reply_unknown" when the send that owned it got no answer (it may have reached the user, so
  nobody sends it again: docs/design.md §3, §11). What must reach the resident after an unknown *reply*
  (a receipt, a memory outcome) is pushed once before the notice settles (docs/design.md §11);
* ``notice_owner``: who may tell the user now (``reply:<webhookEventId>``, ``push``, ``queue``);
  ``notice_claim_until``: the owner's lease (ISO UTC). Another party may take over only after the
  lease (or once the owner released it: its send was definitely not delivered);
  ``notice_taken_from``: the owner a claim was taken over from;
  ``notice_push_claimed``: True once a push (``push``) has claimed the entry. From then on only a
  push tells it, always with the one ``notice_retry_key``: that push may already have reached the
  user with its "delivered" unrecorded, and only a repeat with the same key is deduplicated by
  LINE (409), so a reply (another channel, no key) would tell the user twice;
* ``notice_retry_key``: the push's ``X-Line-Retry-Key``.

``Notice.of(doc)`` reads these fields as one typed record (``NoticeState``); a claim answers a
``NoticeClaim``. Stored values stay plain strings.

What an answer *carries* is recorded too, on the webhook inbox document of the event it answers,
before it is sent and in the same write that records it as started (``Carried``:
``answer_carries`` and ``answer_notice``): a reply telling a handoff receipt, a "checking" answer,
or anything else. Whoever later decides whether a notice is still to be told reads that record,
never infers the answer's content from the notice's owner or from why a task was queued. A
document written before this record existed has neither field (``Carried.of`` → None): its
readers decide as they did before.

Claims are plain reads-then-writes inside a store transaction, so they are Firestore-shaped. The
functions take the collection and any reference with a ``doc_id`` (a handoff ``Operation``, a
webhook ``inbox.EventRef``), so every outbox follows the same rules.
"""
from __future__ import annotations

import enum
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Callable, Protocol

from shared.clock import Clock, from_iso, require_aware, to_iso
from shared.line import Delivery, LineGateway, LineSendError, delivery_of, monthly_limit
from shared.logs import log
from shared.push_count import Flow, PushCounter
from shared.store import DocumentStore, StoreError, Transaction

#: Messages per reply or push (Messaging API, "Send reply message" / "Send push message": max 5).
MESSAGES_MAX = 5


class OutboxRef(Protocol):
    """Anything that names one outbox document by id."""

    @property
    def doc_id(self) -> str: ...


class NoticeState(enum.StrEnum):
    """``notice_state``: what became of one notice (stored as the plain value)."""

    PENDING = "pending"              # nobody has told the user yet
    DELIVERED = "delivered"          # a reply or push succeeded
    REPLY_UNKNOWN = "reply_unknown"  # the send that owned it got no answer: perhaps told, never sent again
    #: LINE refused the send for good (a 4xx other than 429), or it was never delivered after every
    #: attempt: definitely not told, and nobody sends it again.
    FAILED = "failed"
    #: Staff notices only (``shared.staff.relay``): LINE refused the push, or the notice is no longer
    #: needed; ended without telling anyone.
    REFUSED = "refused"
    NOT_NEEDED = "not_needed"

    @property
    def settled(self) -> bool:
        """True for every state but PENDING: nobody sends this notice any more."""
        return self is not NoticeState.PENDING


PENDING, DELIVERED, REPLY_UNKNOWN, FAILED = (NoticeState.PENDING, NoticeState.DELIVERED,
                                             NoticeState.REPLY_UNKNOWN, NoticeState.FAILED)
PUSH_OWNER = "push"


def reply_owner(webhook_event_id: str | None) -> str:
    """The owner name of the reply to one webhook event."""
    return f"reply:{webhook_event_id or 'unknown'}"


def reply_event_of(owner: str | None) -> str | None:
    """The webhook event id of a ``reply:<webhookEventId>`` owner; None for any other owner."""
    if not owner or not owner.startswith("reply:"):
        return None
    return owner.split(":", 1)[1]


class NoticeClaim(enum.Enum):
    """Whether the caller may tell the user now (the answer to claiming one notice)."""

    CLAIMED = "claimed"        # yes: send, then ``mark_delivered`` with the same owner
    DELIVERED = "delivered"    # settled: told (or perhaps told, or refused for good): say nothing more
    HELD = "held"              # another owner holds a live lease: say nothing now
    NO_NOTICE = "no_notice"    # the document has no notice (or does not exist)


@dataclass(frozen=True)
class Notice:
    """One outbox entry as read: the flat ``notice_*`` fields of a store document, typed.

    Args:
        kind: ``notice_kind`` ("receipt", "not_created", "needs_human_followup", "event_answer", or a
            staff notice's purpose).
        state: ``notice_state``. A stored value this code does not know reads as FAILED (settled:
            never sent twice).
        owner: ``notice_owner`` (``reply:<webhookEventId>``, ``push``, ``queue[:<attempt>]``) or None.
        claim_until: ``notice_claim_until``, the owner's lease end (aware UTC), or None.
        retry_key: ``notice_retry_key``, the push's ``X-Line-Retry-Key`` (a UUID string) or None.
        taken_from: ``notice_taken_from``, the owner a claim was taken over from, or None.
        push_claimed: ``notice_push_claimed``: a push has claimed it, so only a keyed push tells it.
    """

    kind: str | None
    state: NoticeState
    owner: str | None = None
    claim_until: datetime | None = None
    retry_key: str | None = None
    taken_from: str | None = None
    push_claimed: bool = False

    @classmethod
    def of(cls, doc: dict[str, Any] | None) -> "Notice | None":
        """The notice of a stored document; None when it has none (no ``notice_state``)."""
        if not doc or not doc.get("notice_state"):
            return None
        try:
            state = NoticeState(doc["notice_state"])
        except ValueError:
            state = NoticeState.FAILED
        until = doc.get("notice_claim_until")
        return cls(kind=doc.get("notice_kind"), state=state, owner=doc.get("notice_owner"),
                   claim_until=from_iso(until) if until else None, retry_key=doc.get("notice_retry_key"),
                   taken_from=doc.get("notice_taken_from"), push_claimed=bool(doc.get("notice_push_claimed")))

    def live_claim(self, now: datetime) -> bool:
        """True while an owner holds an unexpired lease (``claim_until`` after ``now``)."""
        return bool(self.owner and self.claim_until and self.claim_until > now)

    def claim_delay_seconds(self, now: datetime) -> float:
        """Seconds until the current lease ends (0 when none is live)."""
        if self.claim_until is None:
            return 0.0
        return max(0.0, (self.claim_until - now) / timedelta(seconds=1))

    def held_by(self, owner: str) -> bool:
        """True while the notice is pending and ``owner`` is its owner."""
        return self.state is NoticeState.PENDING and self.owner == owner


class AnswerCarries(enum.StrEnum):
    """What one event's answer carries (``answer_carries``, stored as the plain value)."""

    RECEIPT = "receipt"    # it tells the receipt notice named by ``answer_notice``
    #: "正在確認是否已登記…": the outcome behind the notice named by ``answer_notice`` is being
    #: checked. It tells nothing of that notice; a follow-up push is owed.
    CHECKING = "checking"
    OTHER = "other"        # it tells no outbox notice


#: What a settling write does to the rest of the document (e.g. ``shared.inbox.finished``: a queued
#: event's raw content is dropped once its answer is settled), applied in the same write.
Finish = Callable[[dict[str, Any]], dict[str, Any]]


def _same(doc: dict[str, Any]) -> dict[str, Any]:
    return doc


def notice_ref(collection: str, doc_id: str) -> str:
    """How an answer names one outbox notice: ``<collection>/<doc_id>``."""
    return f"{collection}/{doc_id}"


@dataclass(frozen=True)
class Carried:
    """What one answer carries, as recorded before it is sent.

    Args:
        kind: RECEIPT, CHECKING or OTHER.
        notice: the notice it tells (RECEIPT) or says is being checked (CHECKING), as
            ``notice_ref(collection, doc_id)``; None for OTHER.
    """

    kind: AnswerCarries = AnswerCarries.OTHER
    notice: str | None = None

    def fields(self) -> dict[str, Any]:
        """The stored fields (plain values): ``answer_carries`` and ``answer_notice``."""
        return {"answer_carries": AnswerCarries(self.kind).value, "answer_notice": self.notice}

    @classmethod
    def of(cls, doc: dict[str, Any] | None) -> "Carried | None":
        """The record of a stored document; None when it holds none (written before answers were
        recorded, or no answer recorded yet) or a kind this code does not know: decide as before."""
        if not doc or not doc.get("answer_carries"):
            return None
        try:
            kind = AnswerCarries(doc["answer_carries"])
        except ValueError:
            return None
        notice = doc.get("answer_notice")
        return cls(kind, notice if isinstance(notice, str) else None)

    def tells(self, collection: str, operation: OutboxRef) -> bool:
        """True when this answer told (or, sent without an answer, may have told) that receipt notice."""
        return self.kind is AnswerCarries.RECEIPT and self.notice == notice_ref(collection, operation.doc_id)

    def checks(self, collection: str, operation: OutboxRef) -> bool:
        """True when this answer said that notice's outcome is being checked (it told nothing of it)."""
        return self.kind is AnswerCarries.CHECKING and self.notice == notice_ref(collection, operation.doc_id)


#: The record of an answer that tells no outbox notice (what the webhook records by default).
CARRIES_OTHER = Carried()


def notice_fields(kind: str, owner: str, *, now: datetime, lease_seconds: float,
                  retry_key: str) -> dict[str, Any]:
    """The notice fields of a new outbox entry, already claimed by ``owner`` (as stored: plain values)."""
    return {"notice_kind": kind, "notice_state": PENDING.value, "notice_owner": owner,
            "notice_claim_until": to_iso(now + timedelta(seconds=lease_seconds)),
            "notice_retry_key": retry_key, "notice_delivered_at": None, "notice_delivered_by": None,
            "notice_push_claimed": owner == PUSH_OWNER}


def try_claim(doc: dict | None, owner: str, *, now: datetime, lease_seconds: float,
              void_owner: str | None = None) -> tuple[NoticeClaim, dict | None]:
    """Decide a claim on one document (pure; call it inside a transaction).

    Args:
        doc: the outbox document as read, or None.
        owner: who wants to tell the user (``reply:<id>`` or ``push``).
        lease_seconds: how long the claim holds, in seconds.
        void_owner: an owner known not to have told the user (the webhook event that answered
            "checking"): its lease is ignored.
    Returns:
        (NoticeClaim, the document to write or None). The same owner may always take its own claim
        back: a redelivered event is the same reply, and pushes share one retry key. Once a push
        has claimed the entry, any other owner gets HELD for good (``notice_push_claimed``): the
        push side (reconcile, its queue retries and the sweep) tells it, with the same retry key.
    """
    require_aware(now)
    notice = Notice.of(doc)
    if doc is None or notice is None:
        return NoticeClaim.NO_NOTICE, None
    if notice.state.settled:
        return NoticeClaim.DELIVERED, None  # told, perhaps told, or refused for good: say nothing more
    if notice.push_claimed and owner != PUSH_OWNER:
        return NoticeClaim.HELD, None  # a push may have told the user already: only a keyed push repeats it
    holder = notice.owner
    if notice.live_claim(now) and holder not in (owner, void_owner):
        return NoticeClaim.HELD, None
    taken_from = holder if holder and holder != owner else notice.taken_from
    return NoticeClaim.CLAIMED, {**doc, "notice_owner": owner, "notice_taken_from": taken_from,
                           "notice_claim_until": to_iso(now + timedelta(seconds=lease_seconds)),
                           "notice_push_claimed": bool(doc.get("notice_push_claimed")) or owner == PUSH_OWNER,
                           "updated_at": to_iso(now)}


def claim_notice(store: DocumentStore, collection: str, operation: OutboxRef, owner: str, *,
                 now: datetime, lease_seconds: float, void_owner: str | None = None) -> NoticeClaim:
    """``try_claim`` in its own transaction.

    Raises:
        StoreUnavailable / StoreTimeout / TransactionConflict: retryable.
    """
    doc_id = operation.doc_id

    def txn(tx: Transaction) -> NoticeClaim:
        decision, updated = try_claim(tx.get(collection, doc_id), owner, now=now,
                                      lease_seconds=lease_seconds, void_owner=void_owner)
        if updated is not None:
            tx.set(collection, doc_id, updated)
        return decision

    return store.run_transaction(txn)


def mark_delivered(store: DocumentStore, collection: str, operation: OutboxRef, owner: str, *,
                   now: datetime, finish: Finish = _same) -> bool:
    """Record that ``owner`` told the user. Idempotent.

    ``finish`` (see ``Finish``) shapes the document written, in the same write.

    Returns:
        True when this call wrote "delivered"; False when it already was, or there is no notice.
    Raises:
        StoreUnavailable / StoreTimeout / TransactionConflict: retryable; the notice stays pending
            (a later push repeats it with the same retry key).
    """
    doc_id = operation.doc_id

    def txn(tx: Transaction) -> bool:
        doc = tx.get(collection, doc_id)
        notice = Notice.of(doc)
        if doc is None or notice is None or notice.state is DELIVERED:
            return False
        tx.set(collection, doc_id, finish({**doc, "notice_state": DELIVERED.value,
                                           "notice_delivered_at": to_iso(now), "notice_delivered_by": owner,
                                           "notice_claim_until": None, "updated_at": to_iso(now)}))
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
        notice = Notice.of(doc)
        if doc is None or notice is None or not notice.held_by(owner):
            return False
        tx.set(collection, doc_id, {**doc, "notice_claim_until": to_iso(now), "updated_at": to_iso(now)})
        return True

    return store.run_transaction(txn)


def settle_reply_unknown(store: DocumentStore, collection: str, operation: OutboxRef, *, owner: str,
                         now: datetime, finish: Finish = _same) -> bool:
    """Record that the notice's reply (by ``owner``) may have reached the user: nobody pushes it.

    ``finish`` (see ``Finish``) shapes the document written, in the same write.

    Returns:
        True when this call wrote "reply_unknown"; False when the notice is no longer pending.
    Raises:
        StoreUnavailable / StoreTimeout / TransactionConflict: retryable.
    """
    doc_id = operation.doc_id

    def txn(tx: Transaction) -> bool:
        doc = tx.get(collection, doc_id)
        notice = Notice.of(doc)
        if doc is None or notice is None or notice.state is not PENDING:
            return False
        tx.set(collection, doc_id, finish({**doc, "notice_state": REPLY_UNKNOWN.value, "notice_claim_until": None,
                                           "notice_unknown_reply": owner, "updated_at": to_iso(now)}))
        return True

    return store.run_transaction(txn)


def settle_failed(store: DocumentStore, collection: str, operation: OutboxRef, *, owner: str, reason: str,
                  now: datetime, finish: Finish = _same) -> bool:
    """Record that the notice was definitely not delivered and will not be sent again.

    Args:
        owner: the owner whose send failed; it must hold the notice.
        reason: a short machine word (``push_refused``, ``not_delivered``).
        finish: shapes the document written, in the same write (see ``Finish``).
    Returns:
        True when this call wrote "failed"; False when the notice is no longer pending or held by another.
    Raises:
        StoreUnavailable / StoreTimeout / TransactionConflict: retryable.
    """
    doc_id = operation.doc_id

    def txn(tx: Transaction) -> bool:
        doc = tx.get(collection, doc_id)
        notice = Notice.of(doc)
        if doc is None or notice is None or not notice.held_by(owner):
            return False
        tx.set(collection, doc_id, finish({**doc, "notice_state": FAILED.value, "notice_claim_until": None,
                                           "notice_failed_reason": reason, "updated_at": to_iso(now)}))
        return True

    return store.run_transaction(txn)


# ---- the courier: every LINE send ----------------------------------------------------------------

@dataclass(frozen=True)
class Sent:
    """What became of one LINE send.

    Args:
        delivery: its row of the LINE outcome table (``shared.line.port``).
        error: the ``LineSendError`` LINE (or the network) gave, or None when delivered.
        duplicate: a push LINE had already accepted under the same retry key (409): delivered.
    """

    delivery: Delivery
    error: LineSendError | None = None
    duplicate: bool = False

    @property
    def status(self) -> int | None:
        """The HTTP status LINE answered, or None (delivered, no answer, or never started)."""
        return getattr(self.error, "status", None)

    @property
    def retryable(self) -> bool:
        """True when another try may help: every failure but REFUSED (a push repeats its retry key)."""
        return self.error is not None and self.error.retryable

    @property
    def monthly_limit(self) -> bool:
        """True when LINE refused a push because the month's messages are used up (final: the
        notice goes on the staff follow-up list, never retried blindly)."""
        return monthly_limit(self.error)


def send_reply(line: LineGateway, reply_token: str, messages: list[Any], *, timeout_seconds: float) -> Sent:
    """Reply with the first ``MESSAGES_MAX`` messages; never raises a LINE failure (it is in ``Sent``).

    A reply has no retry key: a reply of unknown outcome is never repeated (docs/design.md §11).
    """
    try:
        line.reply(reply_token, messages[:MESSAGES_MAX], timeout_seconds=timeout_seconds)
    except LineSendError as exc:
        return Sent(delivery_of(exc), exc)
    return Sent(Delivery.DELIVERED)


def send_push(line: LineGateway, to: str, messages: list[Any], *, retry_key: str,
              timeout_seconds: float, counter: PushCounter, flow: Flow) -> Sent:
    """Push the first ``MESSAGES_MAX`` messages with ``X-Line-Retry-Key: retry_key`` (a UUID string);
    never raises a LINE failure. Repeating it with the same key is safe: LINE answers 409, which is
    ``Sent(DELIVERED, duplicate=True)``.

    Args:
        counter: counts a push LINE accepted (not a 409) under ``flow``, and a push LINE refused for
            the monthly limit (``count_push``); a store error there is logged, never raised.
    """
    sent = _push(line, to, messages, retry_key=retry_key, timeout_seconds=timeout_seconds)
    count_push(sent, counter, flow)
    return sent


def _push(line: LineGateway, to: str, messages: list[Any], *, retry_key: str, timeout_seconds: float) -> Sent:
    """One push through the port, its failure as ``Sent`` (counted by the caller, ``count_push``)."""
    try:
        pushed = line.push(to, messages[:MESSAGES_MAX], retry_key=retry_key, timeout_seconds=timeout_seconds)
    except LineSendError as exc:
        return Sent(delivery_of(exc), exc)
    return Sent(Delivery.DELIVERED, duplicate=pushed.duplicate)


def count_push(sent: Sent, counter: PushCounter, flow: Flow) -> None:
    """Count one push's outcome (``shared.push_count``): accepted (not a 409 repeat), or refused for
    the monthly limit (also logged: ``push refused: monthly limit``); nothing for any other outcome."""
    if sent.monthly_limit:
        log("WARNING", "push refused: monthly limit", flow=Flow(flow).value)
        counter.refused_monthly_limit()
    elif sent.delivery is Delivery.DELIVERED and not sent.duplicate:
        counter.accepted(flow)


def push_notice(line: LineGateway, store: DocumentStore, collection: str, operation: OutboxRef, *, to: str,
                messages: list[Any], retry_key: str, owner: str = PUSH_OWNER, timeout_seconds: float,
                clock: Clock, tenant_id: str, flow: Flow, record: bool = True, finish: Finish = _same) -> Sent:
    """Push one notice held by ``owner`` and, once LINE accepted it, record it delivered by ``owner``.

    Args:
        tenant_id, flow: whose push count, and under which flow (``send_push``).
        record: False when this push holds no claim on the notice (another path settles it).
        finish: shapes the document ``mark_delivered`` writes (see ``Finish``).
    Returns:
        Sent. A failure leaves the notice as it was: the caller settles it from ``Sent.delivery``.
        A delivered push whose record the store did not take is logged and left pending: the next
        push of it carries the same retry key, and LINE answers 409.
    """
    sent = _push(line, to, messages, retry_key=retry_key, timeout_seconds=timeout_seconds)
    if sent.delivery is Delivery.DELIVERED and record:
        record_delivered(store, collection, operation, owner, now=clock(), finish=finish)
    count_push(sent, PushCounter(store, tenant_id, clock), flow)  # after the record: the notice first
    return sent


def record_delivered(store: DocumentStore, collection: str, operation: OutboxRef, owner: str, *,
                     now: datetime, finish: Finish = _same) -> None:
    """``mark_delivered`` after LINE accepted a send; a store that does not take it is logged, not
    raised: the notice stays pending, and its next push carries the same retry key (LINE's 409)."""
    try:
        mark_delivered(store, collection, operation, owner, now=now, finish=finish)
    except StoreError as exc:
        log("WARNING", "delivered but not recorded", collection=collection, error=exc.__class__.__name__)
