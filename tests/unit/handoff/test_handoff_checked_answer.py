"""What an answer carried is recorded before it is sent, and every path that decides whether the
resident still needs to be told reads it (docs/design.md §4, §11; the flapping-lock double receipt).

The run that found it (tests/integration/functions/test_flapping_lock.py): a confirmation's first attempt
committed the request but lost its answer, queued the check after "checking" and could record
nothing more (503); LINE's redelivery of the same tap replied the receipt, and the write that it
was delivered was lost. The check then took that event's reply for the "checking" answer and
pushed the receipt again. These tests replay such runs with a deterministic fault seam
(``LossyStore``: a transaction whose writes match a rule is lost, or commits with its answer lost)
and a fixed clock, through the webhook, the queued-event worker and reconcile.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Callable

import pytest

from shared import inbox
from shared.deferred_events.task import QueuedEventTask
from shared.deferred_events.worker import QueuedEventWorker
from shared.handoff import cards, drafts, notify, records, requeue
from shared.handoff.reconcile import RELAY, UNKNOWN_OUTCOME, ReconcileService, ReconcileTask
from shared.handoff.requests import create_request
from shared.identity import Actor
from shared.queue.embedded import EmbeddedQueue
from shared.store import StoreTimeout
from shared.store.sqlite import SqliteStore, path_from_url
from shared.webhook.service import WebhookService
from shared.wiring import line_gateway
from tests.codes_support import shown_of
from tests.conftest import all_text, line_body, postback_event, sign

REPLY, PUSH = "/v2/bot/message/reply", "/v2/bot/message/push"
Write = tuple[str, str, dict]  # (collection, doc id, data) of one buffered create or set


@dataclass
class _Rule:
    match: Callable[[Write], bool]
    committed: bool
    times: int


class _SpyTransaction:
    """A transaction that records its writes, passing everything through."""

    def __init__(self, tx: Any, writes: list[Write]):
        self._tx, self._writes = tx, writes

    def get(self, collection: str, doc_id: str):
        return self._tx.get(collection, doc_id)

    def get_all(self, refs):
        return self._tx.get_all(refs)

    def create(self, collection: str, doc_id: str, data: dict) -> None:
        self._writes.append((collection, doc_id, data))
        self._tx.create(collection, doc_id, data)

    def set(self, collection: str, doc_id: str, data: dict) -> None:
        self._writes.append((collection, doc_id, data))
        self._tx.set(collection, doc_id, data)

    def delete(self, collection: str, doc_id: str) -> None:
        self._tx.delete(collection, doc_id)


class LossyStore:
    """The test seam: a real store whose transactions are lost when one of their writes matches a
    rule (``lose``): rolled back with StoreTimeout (``committed=False``: a lock held past the
    deadline), or committed and answered with StoreTimeout (``committed=True``: the answer lost).
    Everything else goes to the real store."""

    def __init__(self, inner: SqliteStore):
        self._inner = inner
        self._rules: list[_Rule] = []
        self._lock = threading.Lock()

    def lose(self, match: Callable[[Write], bool], *, committed: bool = False, times: int = 1) -> None:
        self._rules.append(_Rule(match, committed, times))

    def __getattr__(self, name: str):
        return getattr(self._inner, name)

    def _take(self, writes: list[Write]) -> _Rule | None:
        with self._lock:
            for rule in self._rules:
                if rule.times > 0 and any(rule.match(w) for w in writes):
                    rule.times -= 1
                    return rule
        return None

    def run_transaction(self, fn, **kwargs):
        taken: list[_Rule] = []

        def spied(tx):
            writes: list[Write] = []
            result = fn(_SpyTransaction(tx, writes))
            rule = self._take(writes)
            if rule is not None and not rule.committed:
                raise StoreTimeout("lost: the lock was held past the deadline")
            if rule is not None:
                taken.append(rule)
            return result

        result = self._inner.run_transaction(spied, **kwargs)
        if taken:
            raise StoreTimeout("committed, but the answer was lost")
        return result


def notice_delivered(write: Write) -> bool:
    return write[0] == records.OPERATIONS and write[2].get("notice_state") == notify.DELIVERED


def event_finished(write: Write) -> bool:
    return write[0] == inbox.COLLECTION and write[2].get("state") == inbox.DONE


def reply_started(write: Write) -> bool:
    return write[0] == inbox.COLLECTION and write[2].get("state") == inbox.PROCESSING \
        and bool(write[2].get("reply_attempted"))


def told(line_standin, request_id: str, statuses=(200,)) -> list[dict]:
    """Replies and pushes carrying the request id that LINE accepted (or, with 500 in
    ``statuses``, processed with the answer lost: perhaps shown)."""
    return [c for c in line_standin.calls() if c["path"] in (REPLY, PUSH) and c["status"] in statuses
            and request_id in all_text(c["body"].get("messages") or [])]


@dataclass
class Tap:
    """One confirmation card, its operation, and a webhook event tapping it."""

    draft: Any
    data: str
    user_id: str

    @property
    def operation(self) -> records.Operation:
        return self.draft.operation

    def event(self, event_id: str) -> dict:
        return postback_event(self.data, user_id=self.user_id, event_id=event_id)

    def check(self, event_id: str) -> ReconcileTask:
        """The check after "checking" that the tap ``event_id`` queued."""
        return ReconcileTask(self.operation, self.draft.content_hash, UNKNOWN_OUTCOME, event_id)

    def request_id(self, store) -> str:
        return shown_of(store.get(records.REQUESTS, self.operation.doc_id))

    def op_doc(self, store) -> dict:
        return store.get(records.OPERATIONS, self.operation.doc_id)


def card(settings, store, clock, user_id: str) -> Tap:
    draft = drafts.create_draft(store, Actor(settings.tenant_id, user_id), "社區路燈不亮，想請人來看看",
                                now=clock(), settings=settings).draft
    data = "handoff:" + cards.sign_reference(settings, cards.CONFIRM, draft.operation, draft.content_hash,
                                             draft.expires_at)
    return Tap(draft, data, user_id)


def first_attempt_lost(settings, store, clock, tap: Tap, event_id: str, *, committed: bool) -> None:
    """The tap's first attempt under the flapping lock: it claimed the event, its create's answer was
    lost (``committed``: the request was written), so it queued the check after "checking"; then it
    could record neither its reply nor its hand-over to the queue and answered 503. The clock ends
    past its lease, when LINE's redelivery may take the event over."""
    raw = tap.event(event_id)
    inbox.claim_event(store, settings.tenant_id, event_id, now=clock(), lease_seconds=settings.event_lease_seconds,
                      event=raw, claimant="first-attempt")
    drafts.mark_confirming(store, tap.operation, tap.draft.content_hash, now=clock(), event_id=event_id)
    if committed:
        create_request(store, tap.operation, tap.draft.content_hash, now=clock(), tz=settings.tz, source="webhook",
                       notice_owner=notify.reply_owner(event_id), lease_seconds=settings.event_lease_seconds,
                       event_id=event_id)
    clock.at += timedelta(seconds=settings.event_lease_seconds + 1)


def deliver(service: WebhookService, raw: dict) -> dict:
    body = line_body(raw)
    result = service.handle(body.decode(), sign(body, service.settings.line_channel_secret))
    assert result.status == 200, result.body
    return result.body


def webhook(settings, store, clock, **kwargs) -> WebhookService:
    return WebhookService(settings, store, line_gateway(settings), clock=clock, **kwargs)


def reconcile(settings, clock) -> ReconcileService:
    path = path_from_url(settings.store_url)
    return ReconcileService(settings, SqliteStore(path, deadline_seconds=2.0),
                            SqliteStore(path, deadline_seconds=2.0, read_only=True), line_gateway(settings),
                            clock=clock)


def inbox_doc(store, settings, event_id: str) -> dict:
    return store.get(inbox.COLLECTION, f"{settings.tenant_id}:{event_id}")


# ---- the run that found it: the redelivered tap's reply carried the receipt ---------------------------

def redelivered_receipt_reply(settings, store, clock, line_standin, fault: str) -> tuple[Tap, str]:
    """The tap's first attempt lost (``first_attempt_lost``); LINE's redelivery replied the receipt,
    and ``fault`` lost what recorded it: "delivered" (``delivered_write_lost``), "delivered" and the
    event's end (``delivered_and_done_lost``: the reply reads as started, outcome unknown), or LINE's
    answer (``reply_outcome_unknown``: a 500 after LINE showed it). Returns the tap and its event id."""
    tap = card(settings, store, clock, "U" + "d" * 32)
    event_id = "01G1" + "0" * 22
    first_attempt_lost(settings, store, clock, tap, event_id, committed=True)
    lossy = LossyStore(store)
    if fault == "reply_outcome_unknown":
        line_standin.fail_next(REPLY, 500, after_processing=True)  # LINE showed it; its answer was lost
    else:
        lossy.lose(notice_delivered)
        if fault == "delivered_and_done_lost":
            lossy.lose(event_finished)
    deliver(webhook(settings, lossy, clock), tap.event(event_id))
    return tap, event_id


@pytest.mark.parametrize("first", ["check", "requeue_then_check"])
def test_check_after_a_redelivered_receipt_reply_pushes_nothing(settings, store, clock, line_standin, first):
    """The redelivery replied the receipt and the write that it was delivered was lost: the check
    (and a re-queue before it) reads that the reply carried the receipt and pushes nothing. A later
    redelivery repeats nothing either: the resident reads the receipt once."""
    tap, event_id = redelivered_receipt_reply(settings, store, clock, line_standin, "delivered_write_lost")
    request_id = tap.request_id(store)
    shown = (200, 500)
    assert len(told(line_standin, request_id, shown)) == 1  # the redelivery's reply carried the receipt
    assert tap.op_doc(store)["notice_state"] == notify.PENDING  # ... and "delivered" is not on record
    assert inbox_doc(store, settings, event_id)["answer_carries"] == "receipt"

    if first == "requeue_then_check":
        clock.at += timedelta(seconds=settings.event_lease_seconds + 1)
        requeued = reconcile(settings, clock).run(requeue.requeue_task(tap.operation, tap.op_doc(store), "r1"),
                                                  retry_count=0)
        assert requeued.http_status == 200 and requeued.detail["notice"] == "delivered_by_reply"
    result = reconcile(settings, clock).run(tap.check(event_id), retry_count=0)
    assert result.http_status == 200, result
    assert result.detail["notice"] in ("delivered_by_reply", "told_by_checked_answer")
    again = reconcile(settings, clock).run(tap.check(event_id), retry_count=1)  # a duplicate delivery
    assert again.http_status == 200
    clock.at += timedelta(seconds=settings.event_lease_seconds + 1)  # LINE redelivers once the lease is over
    deliver(webhook(settings, store, clock), {**tap.event(event_id), "deliveryContext": {"isRedelivery": True}})
    assert len(told(line_standin, request_id, shown)) == 1
    assert tap.op_doc(store)["notice_state"] == notify.DELIVERED
    assert requeue.pending_operations(store, settings.tenant_id) == []  # nothing left for a sweep to push


@pytest.mark.parametrize("fault", ["delivered_and_done_lost", "reply_outcome_unknown"])
@pytest.mark.parametrize("first", ["check", "requeue_then_check"])
def test_check_after_a_redelivered_receipt_reply_of_unknown_outcome_pushes_it_once_restated(
        settings, store, clock, line_standin, fault, first):
    """The redelivery's reply carried the receipt and its outcome is unknown (LINE answered 500, or
    the event reads as still replying): LINE may have shown it, or not, and the resident must know
    it. Whoever comes first (the check, or a re-queue before it) pushes it once, with the receipt's
    retry key, in words that restate it; every later delivery and LINE's redelivery add nothing."""
    tap, event_id = redelivered_receipt_reply(settings, store, clock, line_standin, fault)
    request_id = tap.request_id(store)
    shown = (200, 500)
    assert len(told(line_standin, request_id, shown)) == 1  # the reply (perhaps shown)
    if first == "requeue_then_check":
        clock.at += timedelta(seconds=settings.event_lease_seconds + 1)
        requeued = reconcile(settings, clock).run(requeue.requeue_task(tap.operation, tap.op_doc(store), "r1"),
                                                  retry_count=0)
        assert (requeued.http_status, requeued.detail["notice"]) == (200, "pushed")
    result = reconcile(settings, clock).run(tap.check(event_id), retry_count=0)
    assert result.http_status == 200, result
    reconcile(settings, clock).run(tap.check(event_id), retry_count=1)  # a duplicate delivery
    clock.at += timedelta(seconds=settings.event_lease_seconds + 1)
    deliver(webhook(settings, store, clock), {**tap.event(event_id), "deliveryContext": {"isRedelivery": True}})
    [push] = [c for c in told(line_standin, request_id, shown) if c["path"] == PUSH]
    assert push["status"] == 200 and push["headers"]["x-line-retry-key"] == tap.operation.retry_key("receipt")
    assert "再說一次" in all_text(push["body"]["messages"])  # worded for a second reading
    assert len(told(line_standin, request_id, shown)) == 2  # the reply of unknown outcome, then one push
    assert tap.op_doc(store)["notice_state"] == notify.DELIVERED
    assert requeue.pending_operations(store, settings.tenant_id) == []


def test_check_waits_for_a_queued_receipt_answer_then_pushes_nothing(settings, store, clock, line_standin, tmp_path):
    """The redelivery rendered the receipt but could not record its reply, so it handed that answer
    to the queue. The check waits for the queued answer, then reads that it carried the receipt."""
    tap = card(settings, store, clock, "U" + "e" * 32)
    event_id = "01G2" + "0" * 22
    queued_receipt(settings, store, clock, tap, event_id, tmp_path, checked=True)
    request_id = tap.request_id(store)
    assert told(line_standin, request_id) == []

    waiting = reconcile(settings, clock).run(tap.check(event_id), retry_count=0)
    assert (waiting.http_status, waiting.outcome) == (503, "answer_pending")
    answered = QueuedEventWorker(settings, store, line_gateway(settings), clock=clock).run(
        QueuedEventTask(settings.tenant_id, event_id), retry_count=0)
    assert answered.http_status == 200
    assert len(told(line_standin, request_id)) == 1  # the queued answer told the receipt
    result = reconcile(settings, clock).run(tap.check(event_id), retry_count=1)
    assert (result.http_status, result.detail["notice"]) == (200, "delivered_by_reply")
    assert len(told(line_standin, request_id)) == 1
    assert tap.op_doc(store)["notice_delivered_by"] == notify.reply_owner(event_id)


# ---- a "checking" answer still gets its result, once ------------------------------------------------

def test_check_after_a_checking_reply_whose_end_was_lost_pushes_the_receipt_once(make_settings, store, clock,
                                                                                 line_standin):
    """The tap's create committed but its answer was lost, so the reply said "checking" (recorded
    before it was sent, in the write that started it); the event's end was then lost. The check
    pushes the receipt once, under the receipt's key."""
    settings = make_settings(LOCAL_FAULTS="AFTER_COMMIT")
    tap = card(settings, store, clock, "U" + "f" * 32)
    event_id = "01G3" + "0" * 22
    lossy = LossyStore(store)
    lossy.lose(event_finished)
    deliver(webhook(settings, lossy, clock), tap.event(event_id))
    doc = inbox_doc(store, settings, event_id)
    assert (doc["state"], doc["reply_attempted"]) == ("processing", True)  # only the started write landed
    assert (doc["answer_carries"], doc["answer_notice"]) == (
        "checking", f"{records.OPERATIONS}/{tap.operation.doc_id}")
    request_id = tap.request_id(store)
    assert told(line_standin, request_id) == []
    result = reconcile(settings, clock).run(tap.check(event_id), retry_count=0)
    assert (result.http_status, result.detail["notice"]) == (200, "pushed")
    again = reconcile(settings, clock).run(tap.check(event_id), retry_count=1)
    assert again.detail["notice"] == "already_delivered"
    [push] = told(line_standin, request_id)
    assert push["path"] == PUSH and push["headers"]["x-line-retry-key"] == tap.operation.retry_key("receipt")


def test_requeue_after_a_checking_reply_pushes_the_receipt_as_its_follow_up(make_settings, store, clock,
                                                                            line_standin):
    """The tap's create committed but its answer was lost and no check could be queued: its reply
    said "checking" and the notice stayed owned by that reply. The sweep's re-queue must not take
    that reply for the receipt: it pushes the receipt, recorded as the follow-up of "checking", so
    a check that runs after all says nothing more."""
    settings = make_settings(LOCAL_FAULTS="AFTER_COMMIT")
    tap = card(settings, store, clock, "U" + "1" * 32)
    event_id = "01G4" + "0" * 22
    deliver(webhook(settings, store, clock), tap.event(event_id))  # no reconcile queue: nothing checks it
    request_id = tap.request_id(store)
    assert told(line_standin, request_id) == []
    assert inbox_doc(store, settings, event_id)["outcome"] == inbox.EventOutcome.REPLIED
    clock.at += timedelta(seconds=settings.event_lease_seconds + 1)
    requeued = reconcile(settings, clock).run(requeue.requeue_task(tap.operation, tap.op_doc(store), "r1"),
                                              retry_count=0)
    assert (requeued.http_status, requeued.detail["notice"]) == (200, "pushed")
    assert tap.op_doc(store)["notice_delivered_by"] == f"checked:{event_id}"
    check = reconcile(settings, clock).run(tap.check(event_id), retry_count=0)
    assert check.detail["notice"] == "already_delivered"
    [push] = told(line_standin, request_id)
    assert push["headers"]["x-line-retry-key"] == tap.operation.retry_key("receipt")


# ---- another tap of the same card --------------------------------------------------------------------

@pytest.mark.parametrize("second_answer", ["repeat_receipt", "checking"])
def test_check_after_another_taps_answer_follows_what_it_carried(make_settings, store, clock, line_standin,
                                                                 second_answer):
    """The first tap created the request and its reply told the receipt. A second tap's first
    attempt lost its create's answer (it queued a check) and died; its redelivery then answered
    either the repeat receipt (the request was found) — the check pushes nothing — or "checking"
    again — the check pushes the result once, under that tap's own key."""
    settings = make_settings()
    tap = card(settings, store, clock, "U" + "2" * 32)
    first_event, second_event = "01G5" + "0" * 22, "01G6" + "0" * 22
    deliver(webhook(settings, store, clock), tap.event(first_event))
    request_id = tap.request_id(store)
    assert len(told(line_standin, request_id)) == 1 and tap.op_doc(store)["notice_state"] == notify.DELIVERED
    first_attempt_lost(settings, store, clock, tap, second_event, committed=False)
    redelivery_settings = settings if second_answer == "repeat_receipt" else make_settings(LOCAL_FAULTS="BEFORE_WRITE")
    deliver(webhook(redelivery_settings, store, clock), tap.event(second_event))
    assert inbox_doc(store, settings, second_event)["answer_carries"] == (
        "receipt" if second_answer == "repeat_receipt" else "checking")
    for attempt in range(2):
        result = reconcile(settings, clock).run(tap.check(second_event), retry_count=attempt)
        assert result.http_status == 200
    told_now = told(line_standin, request_id)
    if second_answer == "repeat_receipt":
        assert [c["path"] for c in told_now] == [REPLY, REPLY]  # one answer per tap, no push
    else:
        assert [c["path"] for c in told_now] == [REPLY, PUSH]
        assert told_now[1]["headers"]["x-line-retry-key"] == tap.operation.retry_key(f"checked:{second_event}")


# ---- a tap whose answer a push took over -----------------------------------------------------------------

def test_check_after_a_push_took_the_taps_answer_over_pushes_nothing_more(settings, store, clock, line_standin):
    """The tap's create committed but its attempt stalled before replying: the re-queue pushed the
    receipt and fenced that attempt (it can no longer reply "checking"). The check queued by that
    attempt finds the tap said nothing, so no "checking" is owed a follow-up."""
    tap = card(settings, store, clock, "U" + "3" * 32)
    event_id = "01G7" + "0" * 22
    first_attempt_lost(settings, store, clock, tap, event_id, committed=True)
    requeued = reconcile(settings, clock).run(requeue.requeue_task(tap.operation, tap.op_doc(store), "r1"),
                                              retry_count=0)
    assert (requeued.http_status, requeued.detail["notice"]) == (200, "pushed")
    assert inbox_doc(store, settings, event_id)["outcome"] == inbox.EventOutcome.TOLD_BY_PUSH
    result = reconcile(settings, clock).run(tap.check(event_id), retry_count=0)
    assert (result.http_status, result.detail["notice"]) == (200, "already_delivered")
    assert len(told(line_standin, tap.request_id(store))) == 1


# ---- a last attempt never pushes beside an answer it could not read -----------------------------------
#
# The flapping-lock run (tests/integration/functions/test_flapping_lock.py) that told a receipt twice: the tap's
# reply left the rendered receipt to the queue (its budget ran short, or its start could not be
# recorded); the queued-event worker pushed it under the event's own retry key and the write that it
# was delivered was lost, so the inbox still showed it queued. The relay's (or the check's) last
# attempt then met a lost claim transaction (or still found that answer queued) and pushed the
# receipt anyway, under the receipt's key: LINE deduplicates a key, not a message, so the resident
# read it twice. A last attempt now pushes only after its claim answered and it read what the
# event's answer carried; otherwise it pushes nothing and the sweep's re-queue settles the notice.

def push_claim(write: Write) -> bool:
    """The push side's claim on a receipt notice (``notify.claim_notice`` with owner ``push``)."""
    return write[0] == records.OPERATIONS and write[2].get("notice_owner") == notify.PUSH_OWNER \
        and write[2].get("notice_state") == notify.PENDING


def answer_delivered(write: Write) -> bool:
    """The queued-event worker's record that the event's answer was delivered."""
    return write[0] == inbox.COLLECTION and write[2].get("notice_state") == notify.DELIVERED


def reconcile_on(settings, store, clock) -> ReconcileService:
    path = path_from_url(settings.store_url)
    return ReconcileService(settings, store, SqliteStore(path, deadline_seconds=2.0, read_only=True),
                            line_gateway(settings), clock=clock)


def queued_receipt(settings, store, clock, tap: Tap, event_id: str, tmp_path, *, checked: bool) -> None:
    """The tap's answer is the receipt, handed to the queue with its start unrecorded (``checked``:
    after a first attempt that lost its create's answer and queued the check; else the first
    attempt itself created the request and queued the relay)."""
    if checked:
        first_attempt_lost(settings, store, clock, tap, event_id, committed=True)
    lossy = LossyStore(store)
    lossy.lose(reply_started)
    events = EmbeddedQueue(str(tmp_path / "events.sqlite3"), queue_name="queued-events",
                           target_url="http://127.0.0.1:9/", auth_token="t")
    assert deliver(webhook(settings, lossy, clock, event_queue=events), tap.event(event_id))["events"] == ["queued"]
    doc = inbox_doc(store, settings, event_id)
    assert (doc["state"], doc["answer_carries"]) == ("queued", "receipt")


def answer_worker(settings, store, clock) -> QueuedEventWorker:
    return QueuedEventWorker(settings, store, line_gateway(settings), clock=clock)


def run_requeue(settings, store, clock, tap: Tap, tag: str):
    """The sweep's re-queue of the operation's pending notice, one delivery."""
    return reconcile(settings, clock).run(requeue.requeue_task(tap.operation, tap.op_doc(store), tag), retry_count=0)


@pytest.mark.parametrize("path", ["relay", "requeue", "check"])
def test_last_attempt_whose_claim_is_lost_pushes_nothing_beside_the_queued_answer(settings, store, clock,
                                                                                  line_standin, tmp_path, path):
    """The worker told the receipt (its "delivered" lost); the relay's, re-queue's or check's last
    attempt could not claim the notice. Before the fix it pushed anyway (a second receipt under the
    receipt's key); now it pushes nothing, and the next re-queue finds the answer told."""
    tap = card(settings, store, clock, "U" + "4" * 32)
    event_id = "01G8" + "0" * 22
    queued_receipt(settings, store, clock, tap, event_id, tmp_path, checked=path == "check")
    lossy = LossyStore(store)
    lossy.lose(answer_delivered)
    assert answer_worker(settings, lossy, clock).run(QueuedEventTask(settings.tenant_id, event_id),
                                                     retry_count=0).http_status == 200
    request_id = tap.request_id(store)
    assert len(told(line_standin, request_id)) == 1  # the queued answer told the receipt
    assert inbox_doc(store, settings, event_id)["notice_state"] == notify.PENDING  # ... unrecorded

    clock.at += timedelta(seconds=settings.event_lease_seconds + 1)
    task = {"relay": ReconcileTask(tap.operation, tap.draft.content_hash, RELAY, tag=event_id),
            "requeue": requeue.requeue_task(tap.operation, tap.op_doc(store), "r1"),
            "check": tap.check(event_id)}[path]
    lossy = LossyStore(store)
    lossy.lose(push_claim)
    last = reconcile_on(settings, lossy, clock).run(task, retry_count=settings.queue_max_attempts - 1)
    assert len(told(line_standin, request_id)) == 1  # the old code pushed a second receipt here
    assert (last.http_status, last.detail.get("notice")) == (200, "not_pushed")

    # The sweep: the queued answer is delivered again (LINE's 409 for its key), then the re-queue.
    assert answer_worker(settings, store, clock).run(QueuedEventTask(settings.tenant_id, event_id),
                                                     retry_count=1).http_status == 200
    settled = run_requeue(settings, store, clock, tap, "r2")
    assert settled.detail["notice"] in ("delivered_by_reply", "reply_unknown")
    assert len(told(line_standin, request_id)) == 1
    assert requeue.pending_operations(store, settings.tenant_id) == []


def test_check_last_attempt_with_the_receipt_answer_still_queued_pushes_nothing(settings, store, clock, line_standin,
                                                                               tmp_path):
    """The original failure: the check waited for the tap's queued receipt answer through all but its
    last attempt, which pushed the receipt anyway; the worker then told it again. Now the last
    attempt pushes nothing; the worker tells it, and the re-queue records that answer as the telling."""
    tap = card(settings, store, clock, "U" + "5" * 32)
    event_id = "01G9" + "0" * 22
    queued_receipt(settings, store, clock, tap, event_id, tmp_path, checked=True)
    for attempt in range(settings.queue_max_attempts - 1):
        waiting = reconcile(settings, clock).run(tap.check(event_id), retry_count=attempt)
        assert (waiting.http_status, waiting.outcome) == (503, "answer_pending")
    last = reconcile(settings, clock).run(tap.check(event_id), retry_count=settings.queue_max_attempts - 1)
    assert answer_worker(settings, store, clock).run(QueuedEventTask(settings.tenant_id, event_id),
                                                     retry_count=0).http_status == 200
    request_id = tap.request_id(store)
    assert len(told(line_standin, request_id)) == 1  # the old code: the check's push, then the worker's
    assert (last.http_status, last.detail.get("notice")) == (200, "not_pushed")
    settled = run_requeue(settings, store, clock, tap, "r1")
    assert (settled.http_status, settled.detail["notice"]) == (200, "delivered_by_reply")
    assert len(told(line_standin, request_id)) == 1
    assert store.get(records.FOLLOWUPS, tap.operation.doc_id) is None  # the sweep covered it: no person needed


def test_check_last_attempt_before_the_queued_event_is_handled_leaves_the_receipt_to_the_sweep(
        settings, store, clock, line_standin):
    """The redelivered tap was queued before it was handled (no answer yet). The check's last attempt
    pushes nothing but keeps its claim, so the worker's handler says nothing of the receipt; the
    sweep's re-queue then pushes it once: never silent, never twice."""
    tap = card(settings, store, clock, "U" + "6" * 32)
    event_id = "01GA" + "0" * 22
    first_attempt_lost(settings, store, clock, tap, event_id, committed=True)
    queued = inbox.claim_and_queue(store, settings.tenant_id, [(event_id, tap.event(event_id))], now=clock(),
                                   reason=inbox.QueuedReason.BUDGET, lease_seconds=settings.event_lease_seconds)
    assert queued == {event_id: inbox.QueueResult.QUEUED}
    last = reconcile(settings, clock).run(tap.check(event_id), retry_count=settings.queue_max_attempts - 1)
    assert (last.http_status, last.detail.get("notice")) == (200, "not_pushed")
    answered = answer_worker(settings, store, clock).run(QueuedEventTask(settings.tenant_id, event_id), retry_count=0)
    assert answered.outcome == "no_answer"  # the push side holds the notice: the handler said nothing of it
    request_id = tap.request_id(store)
    assert told(line_standin, request_id) == []

    clock.at += timedelta(seconds=settings.event_lease_seconds + 1)
    settled = run_requeue(settings, store, clock, tap, "r1")
    assert (settled.http_status, settled.detail["notice"]) == (200, "pushed")
    [push] = told(line_standin, request_id)
    assert push["path"] == PUSH and push["headers"]["x-line-retry-key"] == tap.operation.retry_key("receipt")
    assert requeue.pending_operations(store, settings.tenant_id) == []
