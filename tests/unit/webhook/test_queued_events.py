"""Queued events in-process: the webhook hands what it cannot finish in time to the real embedded
queue (in the store's SQLite file), whose deliveries reach the real queued-event worker; LINE is
the recording stand-in with its fault hooks (docs/design.md §11: done = replied, outcome recorded, or queued)."""
from __future__ import annotations

import json
import time
from datetime import timedelta

import pytest

from shared import inbox
from shared.config import WEBHOOK_REQUIRED, Settings
from shared.deferred_events.task import QueuedEventTask, requeue_queued
from shared.deferred_events.worker import QueuedEventWorker
from shared.queue.embedded import EmbeddedQueue
from shared.store.sqlite import path_from_url
from shared.webhook.service import WebhookService
from shared.wiring import line_gateway, open_store
from tests.conftest import all_text, line_body, sign, text_event

REPLY, PUSH = "/v2/bot/message/reply", "/v2/bot/message/push"


class Pair:
    """A webhook service and a queued-event worker sharing one store, queue and LINE stand-in."""

    def __init__(self, env: dict, clock, standin, *, budget_left: float | None = None):
        self.settings = Settings.from_env(env, required=WEBHOOK_REQUIRED)
        self.standin = standin
        self.store = open_store(self.settings)
        self.worker = QueuedEventWorker(self.settings, self.store, line_gateway(self.settings), clock=clock)
        self.queue = EmbeddedQueue(path_from_url(self.settings.store_url), queue_name="queued-events",
                                   target_url="http://agent.invalid/", auth_token=None,
                                   min_backoff_seconds=0.0, max_backoff_seconds=0.0,
                                   max_attempts=self.settings.queue_max_attempts, http=self._deliver)
        # The service's monotonic clock says when a delivery's budget starts; one that reads earlier
        # by the part already spent leaves ``budget_left`` seconds of it (WebhookService's ``monotonic``).
        budget = self.settings.webhook_budget_seconds
        spent = (lambda: time.monotonic() - (budget - budget_left)) if budget_left is not None else time.monotonic
        self.webhook = WebhookService(self.settings, self.store, line_gateway(self.settings), clock=clock,
                                      event_queue=self.queue, monotonic=spent)
        self.statuses: list[int] = []

    def _deliver(self, url, body, headers, timeout_seconds) -> int:
        task = QueuedEventTask.from_payload(json.loads(body))
        result = self.worker.run(task, retry_count=int(headers["X-CloudTasks-TaskRetryCount"]))
        self.statuses.append(result.http_status)
        return result.http_status

    def post(self, *events: dict) -> int:
        body = line_body(*events)
        return self.webhook.handle(body.decode(), sign(body)).status

    def drain(self) -> None:
        while self.queue.dispatch_due(limit=1000):
            pass

    def told(self, user_id: str) -> list[str]:
        """Texts the user received: accepted replies to their events and accepted pushes to them."""
        texts = []
        for call in self.standin.calls():
            if call["status"] not in (200,):
                continue
            body = call["body"] or {}
            if call["path"] == PUSH and body.get("to") == user_id:
                texts.append(all_text(body["messages"]))
            if call["path"] == REPLY and body.get("replyToken", "").startswith(f"rt-{user_id}"):
                texts.append(all_text(body["messages"]))
        return texts


def fresh_event(text: str, user_id: str, clock) -> dict:
    event = text_event(text, user_id=user_id, reply_token=f"rt-{user_id}-{time.monotonic_ns()}")
    event["timestamp"] = int(clock().timestamp() * 1000)
    return event


def age_tokens(pair: Pair, clock) -> None:
    """Move the clock past the reply tokens' freshness: the worker may only push now."""
    clock.at += timedelta(seconds=pair.settings.reply_token_fresh_seconds + 1)


def answers_at_once(standin) -> None:
    """LINE answers without latency from here on: the latency was there to spend the webhook's budget
    (monotonic, real time); the worker that drains the queue has no budget it could spend."""
    standin.set_latency(REPLY, 0)
    standin.set_latency(PUSH, 0)


def user(n: int) -> str:
    return f"U{n:032x}"


@pytest.fixture
def pair(base_env, clock, line_standin):
    env = {**base_env, "LOCAL_QUEUE_MAX_ATTEMPTS": "4"}
    p = Pair(env, clock, line_standin)
    yield p
    p.queue.close()


#: What is left of the webhook's budget when a batch arrives, in the tests whose LINE latency spends it:
#: what the webhook keeps for queueing the rest and answering (1.25 s of the 1.8) and 0.3 s for inline
#: replies, so the budget runs out after a few replies of 0.1 s instead of half a second of them.
BUDGET_LEFT_SECONDS = 1.55


@pytest.fixture
def spent_pair(base_env, clock, line_standin):
    """A ``pair`` whose deliveries arrive with ``BUDGET_LEFT_SECONDS`` of the budget left."""
    p = Pair({**base_env, "LOCAL_QUEUE_MAX_ATTEMPTS": "4"}, clock, line_standin, budget_left=BUDGET_LEFT_SECONDS)
    yield p
    p.queue.close()


def inbox_doc(pair: Pair, event: dict) -> dict:
    return pair.store.get(inbox.COLLECTION, f"test-tenant:{event['webhookEventId']}")


def test_queued_budget_spent_rest_of_batch_queued_each_user_told_once(spent_pair, line_standin, clock):
    pair = spent_pair
    line_standin.set_latency(REPLY, 0.1)
    line_standin.set_latency(PUSH, 0.02)
    events = [fresh_event("我要預約", user(i), clock) for i in range(30)]
    assert pair.post(*events) == 200  # nothing left to LINE's redelivery
    states = [inbox_doc(pair, e)["state"] for e in events]
    assert "queued" in states and "done" in states
    answers_at_once(line_standin)
    pair.drain()
    for i in range(30):
        assert len(pair.told(user(i))) == 1, f"user {i} was told {len(pair.told(user(i)))} times"


def test_queued_reply_429_is_replied_later_while_the_token_is_fresh(pair, line_standin, clock):
    """LINE does not process a request it answers 429, so the token is unused: the worker replies
    with it (free) rather than push (counted against the month's quota)."""
    event = fresh_event("我要預約", user(11), clock)
    line_standin.fail_next(REPLY, 429)
    assert pair.post(event) == 200
    assert inbox_doc(pair, event)["queued_reason"] == "reply_not_delivered"
    pair.drain()
    [refused, replied] = [c for c in line_standin.calls() if c["path"] == REPLY]
    assert (refused["status"], replied["status"]) == (429, 200)
    assert replied["body"] == refused["body"]  # the same answer, with the same token
    assert [c for c in line_standin.calls() if c["path"] == PUSH] == []
    assert len(pair.told(user(11))) == 1


def test_queued_reply_429_is_pushed_later_once(pair, line_standin, clock):
    event = fresh_event("我要預約", user(1), clock)
    line_standin.fail_next(REPLY, 429)
    assert pair.post(event) == 200
    doc = inbox_doc(pair, event)
    assert doc["state"] == "queued" and doc["queued_reason"] == "reply_not_delivered"
    assert pair.post(event) == 200  # a redelivery repeats nothing
    age_tokens(pair, clock)
    pair.drain()
    [told] = pair.told(user(1))
    [push] = [c for c in line_standin.calls() if c["path"] == PUSH and c["status"] == 200]
    assert push["headers"]["x-line-retry-key"] == inbox.answer_retry_key("test-tenant", event["webhookEventId"])
    [refused] = [c for c in line_standin.calls() if c["path"] == REPLY and c["status"] == 429]
    assert push["body"]["messages"] == refused["body"]["messages"]  # the same answer, now pushed
    assert told == all_text(refused["body"]["messages"])
    assert inbox.reply_state(pair.store, "test-tenant", event["webhookEventId"]) is inbox.ReplyState.REPLIED


def test_queued_reply_connection_refused_is_pushed_once(pair, line_standin, clock):
    event = fresh_event("我要預約", user(2), clock)
    line_standin.refuse_connections()
    try:
        assert pair.post(event) == 200
    finally:
        line_standin.accept_connections()
    assert inbox_doc(pair, event)["queued_reason"] == "reply_never_started"
    age_tokens(pair, clock)
    pair.drain()
    assert len(pair.told(user(2))) == 1
    assert [c["path"] for c in line_standin.calls() if c["status"] == 200] == [PUSH]


def test_queued_reply_5xx_after_processing_is_told_once_and_never_repeated(pair, line_standin, clock):
    event = fresh_event("我要預約", user(3), clock)
    line_standin.fail_next(REPLY, 500, after_processing=True)
    assert pair.post(event) == 200
    doc = inbox_doc(pair, event)
    assert doc["state"] == "done" and doc["outcome"] == "reply_unknown"
    pair.drain()
    assert pair.post(event) == 200
    assert [c for c in line_standin.calls() if c["path"] == PUSH] == []
    # LINE processed it: the one reply (answered 500) is all the user saw
    assert len([c for c in line_standin.calls() if c["path"] == REPLY]) == 1


def test_queued_worker_push_5xx_after_processing_repeats_same_key_once(pair, line_standin, clock):
    event = fresh_event("我要預約", user(4), clock)
    line_standin.fail_next(REPLY, 429)
    assert pair.post(event) == 200
    age_tokens(pair, clock)
    line_standin.fail_next(PUSH, 500, after_processing=True)
    pair.drain()
    assert pair.statuses == [503, 200]
    pushes = [c for c in line_standin.calls() if c["path"] == PUSH]
    assert [c["status"] for c in pushes] == [500, 409]  # the repeat was deduplicated by LINE
    assert len({c["headers"]["x-line-retry-key"] for c in pushes}) == 1


def test_queued_fresh_token_is_used_by_the_worker(spent_pair, line_standin, clock):
    pair = spent_pair
    line_standin.set_latency(REPLY, 0.1)
    events = [fresh_event("我要預約", user(100 + i), clock) for i in range(20)]
    assert pair.post(*events) == 200
    queued = [e for e in events if inbox_doc(pair, e)["state"] == "queued"]
    assert queued
    answers_at_once(line_standin)
    pair.drain()
    for e in queued:  # within the token's freshness the worker replies rather than pushes
        assert len([c for c in line_standin.calls() if c["path"] == REPLY and c["status"] == 200
                    and c["body"]["replyToken"] == e["replyToken"]]) == 1
    assert [c for c in line_standin.calls() if c["path"] == PUSH] == []


def test_queued_stale_token_is_pushed(spent_pair, line_standin, clock):
    pair = spent_pair
    line_standin.set_latency(REPLY, 0.1)
    events = [fresh_event("我要預約", user(200 + i), clock) for i in range(20)]
    assert pair.post(*events) == 200
    clock.at = clock.at.replace(minute=clock.at.minute + 2)  # the tokens are two minutes old now
    pair.drain()
    for i in range(20):
        assert len(pair.told(user(200 + i))) == 1
    assert [c for c in line_standin.calls() if c["path"] == PUSH]


def test_queued_worker_reply_unknown_is_never_repeated(spent_pair, line_standin, clock):
    pair = spent_pair
    line_standin.set_latency(REPLY, 0.1)
    events = [fresh_event("我要預約", user(300 + i), clock) for i in range(20)]
    assert pair.post(*events) == 200
    line_standin.set_latency(REPLY, 0)
    line_standin.fail_next(REPLY, 502, after_processing=True, times=100)
    pair.drain()
    assert set(pair.statuses) == {200}
    assert [c for c in line_standin.calls() if c["path"] == PUSH] == []
    queued = [e for e in events if inbox_doc(pair, e)["state"] == "queued"]
    assert queued and all(inbox_doc(pair, e)["notice_state"] == "reply_unknown" for e in queued)


def test_queued_push_429_every_attempt_settles_failed_and_requeue_skips_it(pair, line_standin, clock):
    event = fresh_event("我要預約", user(5), clock)
    line_standin.fail_next(REPLY, 429)
    assert pair.post(event) == 200
    age_tokens(pair, clock)
    line_standin.fail_next(PUSH, 429, times=4)  # every attempt of the first task is rate-limited
    pair.drain()
    assert pair.told(user(5)) == []
    assert inbox_doc(pair, event)["notice_state"] == "failed"
    # a failed answer is settled: a re-queue at start-up finds nothing to do
    assert requeue_queued(pair.store, "test-tenant", pair.queue) == 0


def test_queued_requeue_picks_up_an_unconfirmed_enqueue(pair, line_standin, clock):
    event = fresh_event("我要預約", user(6), clock)
    line_standin.fail_next(REPLY, 429)
    assert pair.post(event) == 200
    # the task's row is lost (as if the queue never confirmed it): the store still knows
    import sqlite3

    with sqlite3.connect(path_from_url(pair.settings.store_url)) as conn:
        conn.execute("DELETE FROM queue_tasks")
    assert requeue_queued(pair.store, "test-tenant", pair.queue) == 1
    pair.drain()
    assert len(pair.told(user(6))) == 1


def test_queued_two_deliveries_at_once_answer_once(pair, line_standin, clock):
    import threading

    event = fresh_event("我要預約", user(7), clock)
    line_standin.fail_next(REPLY, 429)
    assert pair.post(event) == 200
    age_tokens(pair, clock)
    line_standin.set_latency(PUSH, 0.3)  # the first push is in flight while the second delivery runs
    task = QueuedEventTask("test-tenant", event["webhookEventId"])
    copy = QueuedEventTask("test-tenant", event["webhookEventId"], tag="requeue|x")
    barrier = threading.Barrier(2)
    results = []

    def run(t):
        barrier.wait()
        results.append(pair.worker.run(t, retry_count=0))

    threads = [threading.Thread(target=run, args=(t,)) for t in (task, copy)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(r.http_status for r in results) in ([200, 200], [200, 503])
    assert len(pair.told(user(7))) == 1
    assert len([c for c in line_standin.calls() if c["path"] == PUSH]) == 1


def test_queued_deferred_reply_is_answered_by_the_worker_handler(base_env, clock, line_standin):
    from linebot.v3.messaging import TextMessage

    from shared.context import Reply as ReplyModel
    from shared.routing import dispatch_event

    seen = []

    def model_turn(ctx, event):  # stands in for the model turn plugged into the worker
        seen.append((ctx.actor.user_id, event.message.text))
        return ReplyModel([TextMessage(text="來自工作者的回答")])

    def deferring(ctx, event):  # the webhook's routing, deferring free text to the worker
        text = getattr(getattr(event, "message", None), "text", None)
        return ReplyModel(defer=True) if text == "隨便問問" else dispatch_event(ctx, event)

    p = Pair({**base_env, "LOCAL_QUEUE_MAX_ATTEMPTS": "4"}, clock, line_standin)
    p.worker.handler = model_turn
    p.webhook.dispatch = deferring
    try:
        event = fresh_event("隨便問問", user(8), clock)
        assert p.post(event) == 200
        assert inbox_doc(p, event)["queued_reason"] == "deferred"
        # nothing sent by the webhook but LINE's loading animation (1:1 chat, best effort)
        assert [c["path"] for c in line_standin.calls()] == ["/v2/bot/chat/loading/start"]
        p.drain()
        assert seen == [(user(8), "隨便問問")]
        assert p.told(user(8)) == ["來自工作者的回答"]
    finally:
        p.queue.close()


def test_inbox_claim_retried_by_the_same_attempt_is_its_own_claim(pair, clock):
    first = inbox.claim_event(pair.store, "test-tenant", "01CLAIMANT0000000000000001", now=clock(),
                              lease_seconds=30, claimant="a1")
    again = inbox.claim_event(pair.store, "test-tenant", "01CLAIMANT0000000000000001", now=clock(),
                              lease_seconds=30, claimant="a1")  # its first answer was lost: try again
    other = inbox.claim_event(pair.store, "test-tenant", "01CLAIMANT0000000000000001", now=clock(),
                              lease_seconds=30, claimant="b2")  # a redelivery meanwhile
    assert (first.claim, again.claim, other.claim) == (inbox.EventClaim.CLAIMED, inbox.EventClaim.CLAIMED,
                                                        inbox.EventClaim.IN_PROGRESS)
    assert first.attempt == again.attempt == 1


def test_queued_event_with_nothing_to_say_reads_as_not_told(pair, line_standin, clock):
    from shared.context import Reply as ReplyModel

    event = fresh_event("我要預約", user(9), clock)
    line_standin.fail_next(REPLY, 429)
    assert pair.post(event) == 200
    # the recorded answer is dropped, as when the handler (e.g. a confirmation whose receipt another
    # party owns) has nothing to say: the worker sends nothing
    doc = inbox_doc(pair, event)
    pair.store.set(inbox.COLLECTION, f"test-tenant:{event['webhookEventId']}", {**doc, "answer": None})
    pair.worker.handler = lambda ctx, ev: ReplyModel([])
    pair.drain()
    assert pair.told(user(9)) == []
    # a receipt relay asking the inbox learns that this event told nothing, so it pushes
    assert inbox.reply_state(pair.store, "test-tenant", event["webhookEventId"]) is inbox.ReplyState.FAILED


def test_queued_reply_429_with_the_store_busy_at_first_is_queued_on_a_second_try(pair, line_standin, clock,
                                                                               monkeypatch):
    """The reply is refused with 429 (definitely not delivered) and the first queue write finds the
    store busy: the webhook tries the write again within its budget, so the answer is pushed later
    once, never dropped as ``reply_failed`` (seen in the flapping-lock run: the resident heard nothing)."""
    from shared.store import StoreUnavailable

    real, calls = inbox.queue_event, []

    def busy_once(*args, **kwargs):
        calls.append(1)
        if len(calls) == 1:
            raise StoreUnavailable("locked")
        return real(*args, **kwargs)

    monkeypatch.setattr(inbox, "queue_event", busy_once)
    event = fresh_event("我要預約", user(9), clock)
    line_standin.fail_next(REPLY, 429)
    assert pair.post(event) == 200
    assert len(calls) == 2
    doc = inbox_doc(pair, event)
    assert doc["state"] == "queued" and doc["queued_reason"] == "reply_not_delivered"
    pair.drain()
    assert len(pair.told(user(9))) == 1
