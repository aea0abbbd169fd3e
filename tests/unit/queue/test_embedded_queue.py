"""Embedded queue on a real SQLite file with a real loopback HTTP target.

Time is driven through ``dispatch_due(now=…)`` and an injected clock, so backoff is checked
without sleeping. The tests across processes are tests/integration/queue/test_embedded_queue_processes.py.
"""
from __future__ import annotations

import json
import logging
import sqlite3
import threading
import time
from collections import Counter
from datetime import datetime, timedelta, timezone

import pytest

from shared.clock import utc_now
from shared.queue import InvalidTask, QueueUnavailable, task_name_for
from shared.queue.embedded import EmbeddedQueue, backoff_seconds, http_post
from tests.unit.queue.queue_fakes import RecordingTarget

TOKEN = "test-internal-token-do-not-log"
T0 = datetime(2026, 11, 30, 4, 0, tzinfo=timezone.utc)
CLOUD_TASKS_HEADERS = ("X-CloudTasks-QueueName", "X-CloudTasks-TaskName", "X-CloudTasks-TaskRetryCount",
                       "X-CloudTasks-TaskExecutionCount", "X-CloudTasks-TaskETA")


class Clock:
    def __init__(self, at: datetime):
        self.at = at

    def __call__(self) -> datetime:
        return self.at


def make_queue(path, target_url, **kwargs) -> EmbeddedQueue:
    options = dict(queue_name="handoff-reconcile", target_url=target_url, auth_token=TOKEN,
                   min_backoff_seconds=1.0, max_backoff_seconds=3.0, max_attempts=5,
                   dispatch_deadline_seconds=5.0, poll_interval_seconds=0.01)
    options.update(kwargs)
    return EmbeddedQueue(str(path), **options)


@pytest.fixture
def db(tmp_path):
    return tmp_path / "local.sqlite3"


def test_backoff_seconds_follows_cloud_tasks_retry_config_example():
    # RetryConfig reference: min 10 s, max 300 s, max_doublings 3 → 10, 20, 40, 80, 160, 240, 300, 300.
    delays = [backoff_seconds(k, min_backoff_seconds=10, max_backoff_seconds=300, max_doublings=3)
              for k in range(8)]
    assert delays == [10, 20, 40, 80, 160, 240, 300, 300]


def test_embedded_dispatch_sends_body_and_cloud_tasks_headers_across_retries(db):
    clock = Clock(T0)
    with RecordingTarget([500, 404, 200]) as target:
        queue = make_queue(db, target.url, clock=clock)
        payload = {"kind": "reconcile", "tenant_id": "t1", "user_id": "U" + "a" * 32, "idempotency_key": "k" * 32}
        name = task_name_for("k" * 32)
        assert queue.enqueue(name, payload).created is True

        etas, now = [], T0
        for _ in range(3):
            etas.append(queue.task(name).schedule_at)
            assert queue.dispatch_due(now=now) == 1
            record = queue.task(name)
            now = record.schedule_at if record.state == "pending" else now

        assert [r["body"] for r in target.requests] == [payload] * 3
        headers = [r["headers"] for r in target.requests]
        for h, eta in zip(headers, etas):
            assert all(k in h for k in CLOUD_TASKS_HEADERS)
            assert h["X-CloudTasks-QueueName"] == "handoff-reconcile"
            assert h["X-CloudTasks-TaskName"] == name
            assert float(h["X-CloudTasks-TaskETA"]) == pytest.approx(eta.timestamp(), abs=1e-5)
            assert h["Authorization"] == f"Bearer {TOKEN}"
            assert h["Content-Type"] == "application/json"
        assert [h["X-CloudTasks-TaskRetryCount"] for h in headers] == ["0", "1", "2"]
        # Execution count: answers received that were not 5xx (the 500 does not count, the 404 does).
        assert [h["X-CloudTasks-TaskExecutionCount"] for h in headers] == ["0", "0", "1"]
        assert [h.get("X-CloudTasks-TaskPreviousResponse") for h in headers] == [None, "500", "404"]
        assert queue.task(name).state == "succeeded"


def test_embedded_5xx_retries_with_growing_capped_backoff_then_never_again(db):
    clock = Clock(T0)
    with RecordingTarget([500, 503, 500, 502, 200]) as target:
        queue = make_queue(db, target.url, clock=clock, max_attempts=10)
        name = task_name_for("backoff")
        queue.enqueue(name, {"n": 1})
        now, observed = T0, []
        for _ in range(4):
            assert queue.dispatch_due(now=now) == 1
            record = queue.task(name)
            assert record.state == "pending"
            delay = (record.schedule_at - now).total_seconds()
            observed.append(delay)
            assert queue.dispatch_due(now=now + timedelta(seconds=delay - 0.01)) == 0
            now = now + timedelta(seconds=delay)
        # min 1 s, then doubling, capped at max 3 s.
        assert observed == pytest.approx([1.0, 2.0, 3.0, 3.0])
        assert queue.dispatch_due(now=now) == 1
        assert queue.task(name).state == "succeeded"
        assert queue.dispatch_due(now=now + timedelta(days=1)) == 0
        assert len(target.requests) == 5


def test_embedded_max_attempts_reached_marks_failed_and_stops(db):
    # No answer at all (connection closed), then 5xx: each is a failed attempt.
    with RecordingTarget([None, 503, 500, 200]) as target:
        queue = make_queue(db, target.url, clock=Clock(T0), max_attempts=3)
        name = task_name_for("doomed")
        queue.enqueue(name, {"n": 1})
        now = T0
        for _ in range(10):
            queue.dispatch_due(now=now)
            now += timedelta(seconds=10)
        record = queue.task(name)
        assert record.state == "failed"
        assert record.attempts == 3
        assert len(target.requests) == 3
        assert [r["headers"]["X-CloudTasks-TaskExecutionCount"] for r in target.requests] == ["0", "0", "0"]


def test_embedded_timeout_counts_as_a_failed_attempt(db):
    with RecordingTarget([200, 200], hold_seconds=0.6) as target:
        queue = make_queue(db, target.url, clock=Clock(T0), dispatch_deadline_seconds=0.2)
        name = task_name_for("slow")
        queue.enqueue(name, {"n": 1})
        assert queue.dispatch_due(now=T0) == 1
        record = queue.task(name)
        assert record.state == "pending" and record.last_status is None
        assert record.schedule_at == T0 + timedelta(seconds=1)


def test_embedded_duplicate_name_pending_or_succeeded_is_not_created_and_delivered_once(db):
    with RecordingTarget() as target:
        queue = make_queue(db, target.url, clock=Clock(T0))
        name = task_name_for("same-operation")
        assert queue.enqueue(name, {"v": "first"}).created is True
        assert queue.enqueue(name, {"v": "second"}).created is False
        assert queue.dispatch_due(now=T0) == 1
        assert queue.task(name).state == "succeeded"
        again = queue.enqueue(name, {"v": "third"})
        assert (again.name, again.created) == (name, False)
        assert queue.dispatch_due(now=T0 + timedelta(days=30)) == 0
        assert [r["body"] for r in target.requests] == [{"v": "first"}]


def test_embedded_failed_task_name_stays_reserved(db):
    with RecordingTarget(default_status=500) as target:
        queue = make_queue(db, target.url, clock=Clock(T0), max_attempts=1)
        name = task_name_for("gone-bad")
        queue.enqueue(name, {})
        queue.dispatch_due(now=T0)
        assert queue.task(name).state == "failed"
        assert queue.enqueue(name, {}).created is False
        assert queue.dispatch_due(now=T0 + timedelta(hours=1)) == 0
        assert len(target.requests) == 1


def test_embedded_delay_seconds_defers_first_delivery(db):
    with RecordingTarget() as target:
        queue = make_queue(db, target.url, clock=Clock(T0))
        queue.enqueue("later", {}, delay_seconds=30)
        assert queue.dispatch_due(now=T0 + timedelta(seconds=29)) == 0
        assert queue.dispatch_due(now=T0 + timedelta(seconds=30)) == 1
        assert target.task_names() == ["later"]


def test_embedded_invalid_task_is_refused_and_nothing_stored(db):
    queue = make_queue(db, "http://127.0.0.1:9/", clock=Clock(T0))
    with pytest.raises(InvalidTask):
        queue.enqueue("has space", {})
    with pytest.raises(InvalidTask):
        queue.enqueue("x" * 501, {})
    with pytest.raises(InvalidTask):
        queue.enqueue("ok-name", ["not", "an", "object"])  # type: ignore[arg-type]
    with pytest.raises(InvalidTask):
        queue.enqueue("ok-name", {}, delay_seconds=-1)
    assert queue.counts() == {"pending": 0, "running": 0, "succeeded": 0, "failed": 0}


def test_embedded_unreachable_file_raises_queue_unavailable(tmp_path):
    queue = make_queue(tmp_path / "missing-dir" / "q.sqlite3", "http://127.0.0.1:9/")
    with pytest.raises(QueueUnavailable) as info:
        queue.enqueue("a", {})
    assert info.value.retryable is True


def test_embedded_two_dispatcher_threads_deliver_each_of_20_tasks_once(db):
    with RecordingTarget(hold_seconds=0.01) as target:
        queues = [make_queue(db, target.url) for _ in range(2)]
        for i in range(20):
            queues[0].enqueue(f"task-{i:02d}", {"i": i})
        for q in queues:
            assert q.start() is True
            assert q.start() is False  # idempotent
        try:
            deadline = time.monotonic() + 20
            while queues[0].counts()["succeeded"] < 20 and time.monotonic() < deadline:
                time.sleep(0.02)
        finally:
            for q in queues:
                q.stop()
        assert queues[0].counts()["succeeded"] == 20
        assert Counter(target.task_names()) == Counter({f"task-{i:02d}": 1 for i in range(20)})


def test_embedded_started_thread_dispatches_a_new_task_promptly(db):
    with RecordingTarget() as target:
        queue = make_queue(db, target.url, poll_interval_seconds=5.0)
        queue.start()
        try:
            queue.enqueue("prompt", {"x": 1})  # wakes the dispatcher; no 5 s poll wait
            assert target.wait_for(1, timeout_s=3.0)
        finally:
            queue.stop()
        assert target.task_names() == ["prompt"]


@pytest.mark.parametrize("slots", [1, 4])
def test_embedded_dispatcher_keeps_up_to_max_concurrent_dispatches_in_flight(db, slots):
    """Deliveries overlap up to the limit and never beyond it; each task is delivered once."""
    lock, in_flight, peak, names = threading.Lock(), [0], [0], []
    full = threading.Barrier(slots, timeout=20)  # passes only once ``slots`` deliveries overlap

    def post(url, body, headers, timeout_seconds):
        with lock:
            in_flight[0] += 1
            peak[0] = max(peak[0], in_flight[0])
            names.append(headers["X-CloudTasks-TaskName"])
        try:
            full.wait()
            return 200
        finally:
            with lock:
                in_flight[0] -= 1

    queue = make_queue(db, "http://127.0.0.1:9/unused", http=post, max_concurrent_dispatches=slots)
    for i in range(3 * slots):
        queue.enqueue(f"burst-{i}", {"i": i})
    queue.start()
    try:
        deadline = time.monotonic() + 30
        while queue.counts()["succeeded"] < 3 * slots and time.monotonic() < deadline:
            time.sleep(0.02)
    finally:
        queue.stop()
    assert queue.counts()["succeeded"] == 3 * slots
    assert peak[0] == slots
    assert sorted(names) == sorted(f"burst-{i}" for i in range(3 * slots))


def test_embedded_max_concurrent_dispatches_below_one_is_refused(db):
    with pytest.raises(ValueError):
        make_queue(db, "http://127.0.0.1:9/unused", max_concurrent_dispatches=0)


def _locking_post(db, release: threading.Event, started: list):
    """An ``http`` seam: the real POST, then another writer takes the file's write lock (as a store
    transaction would) and holds it until ``release`` is set, so the result must wait for it."""
    def post(url, body, headers, timeout_seconds):
        status = http_post(url, body, headers, timeout_seconds)
        taken = threading.Event()

        def hold():
            conn = sqlite3.connect(str(db), isolation_level=None)
            conn.execute("BEGIN IMMEDIATE")
            taken.set()
            release.wait(30)
            conn.execute("ROLLBACK")
            conn.close()

        holder = threading.Thread(target=hold)
        holder.start()
        taken.wait(5)
        started.append(holder)
        return status

    return post


class _ReleaseAfterRetries(logging.Handler):
    """Sets ``release`` when the queue has said ``retries`` times that it will try the result again
    (its WARNING before each pause): the lock is gone after that many tries, whatever the machine's speed."""

    def __init__(self, release: threading.Event, retries: int):
        super().__init__()
        self.unlock, self.retries, self.seen = release, retries, 0  # (Handler.release is its own lock's)

    def emit(self, record):
        if record.getMessage().startswith("queue task result not recorded yet"):
            self.seen += 1
            if self.seen >= self.retries:
                self.unlock.set()


@pytest.mark.parametrize("retries", [1, 2])  # after the first pause, and after a second one twice as long
def test_embedded_result_written_once_a_brief_lock_is_gone_not_after_the_lease(db, retries):
    held: list = []
    release = threading.Event()
    watch = _ReleaseAfterRetries(release, retries)
    logger = logging.getLogger("local")
    logger.addHandler(watch)
    try:
        with RecordingTarget() as target:
            queue = make_queue(db, target.url, lock_timeout_seconds=0.05, lease_margin_seconds=3.0,
                               http=_locking_post(db, release, held))
            name = task_name_for("briefly-locked")
            queue.enqueue(name, {"n": 1})
            assert queue.dispatch_due() == 1  # no QueueUnavailable: the result waited for the lock
            for holder in held:
                holder.join(5)
            record = queue.task(name)
            assert record.state == "succeeded" and record.attempts == 1
            assert len(target.requests) == 1
    finally:
        release.set()
        logger.removeHandler(watch)
    assert watch.seen >= retries


def test_embedded_result_lock_held_past_the_margin_leaves_it_to_the_lease(db):
    held: list = []
    release = threading.Event()  # the lock is held until the queue has given up
    with RecordingTarget() as target:
        queue = make_queue(db, target.url, lock_timeout_seconds=0.05, lease_margin_seconds=0.2,
                           http=_locking_post(db, release, held))
        name = task_name_for("long-locked")
        queue.enqueue(name, {"n": 1})
        try:
            with pytest.raises(QueueUnavailable):
                queue.dispatch_due()
        finally:
            release.set()
        for holder in held:
            holder.join(5)
        record = queue.task(name)
        assert record.state == "running"  # not recorded: the lease decides, as for a dead dispatcher
        plain = make_queue(db, target.url)
        assert plain.dispatch_due(now=record.lease_until + timedelta(seconds=1)) == 1
        assert plain.task(name).state == "succeeded"
        assert len(target.requests) == 2


class _Collect(logging.Handler):
    def __init__(self):
        super().__init__()
        self.lines: list[str] = []

    def emit(self, record):
        self.lines.append(record.getMessage() + json.dumps(getattr(record, "fields", {}), default=str))


def test_embedded_logs_carry_neither_token_nor_payload_text(db):
    collect = _Collect()
    logger = logging.getLogger("local")
    logger.addHandler(collect)
    try:
        with RecordingTarget([500, 200]) as target:
            queue = make_queue(db, target.url, clock=Clock(T0))
            queue.enqueue("logged", {"text": "我想預約復健科-秘密內容"})
            queue.dispatch_due(now=T0)
            queue.dispatch_due(now=T0 + timedelta(seconds=5))
    finally:
        logger.removeHandler(collect)
    joined = "\n".join(collect.lines)
    assert "queue task delivered" in joined
    assert TOKEN not in joined
    assert "秘密內容" not in joined


def test_embedded_dispatch_due_refuses_naive_now(db):
    queue = make_queue(db, "http://127.0.0.1:9/")
    with pytest.raises(ValueError):
        queue.dispatch_due(now=datetime(2026, 1, 1))


def test_embedded_default_clock_schedules_in_real_time(db):
    with RecordingTarget() as target:
        queue = make_queue(db, target.url)
        before = utc_now()
        queue.enqueue("real-time", {})
        assert before <= queue.task("real-time").schedule_at <= utc_now()
        assert queue.dispatch_due() == 1
        assert target.task_names() == ["real-time"]


def test_embedded_stop_then_start_runs_a_fresh_dispatcher(db):
    with RecordingTarget() as target:
        queue = make_queue(db, target.url)
        assert queue.start() is True
        queue.stop()
        queue.enqueue("after-restart", {})
        assert queue.start() is True  # the stopped thread is replaced, not reused
        try:
            assert target.wait_for(1, timeout_s=3.0)
        finally:
            queue.stop()
        assert target.task_names() == ["after-restart"]
