"""The embedded queue across processes (multiprocessing ``spawn`` on one shared SQLite file): two
dispatchers deliver each task once, a dead dispatcher's task is delivered after its lease, and a task
enqueued in one process is dispatched by another. The in-process behaviour is tests/unit/queue/."""
from __future__ import annotations

import multiprocessing
import time
from collections import Counter
from datetime import timedelta

import pytest

from shared.queue import task_name_for
from tests.unit.queue.queue_fakes import RecordingTarget
from tests.unit.queue.test_embedded_queue import make_queue

pytestmark = pytest.mark.slow


@pytest.fixture
def db(tmp_path):
    return tmp_path / "local.sqlite3"


def _dispatch_until_idle(path: str, target_url: str, start_event, results) -> None:
    queue = make_queue(path, target_url)
    start_event.wait(30)
    delivered, deadline = 0, time.monotonic() + 30
    while time.monotonic() < deadline:
        delivered += queue.dispatch_due()
        counts = queue.counts()
        if counts["pending"] == 0 and counts["running"] == 0:
            break
        time.sleep(0.005)
    results.put(delivered)


def test_embedded_two_processes_deliver_each_of_20_tasks_once(db):
    with RecordingTarget(hold_seconds=0.02) as target:
        queue = make_queue(db, target.url)
        for i in range(20):
            queue.enqueue(f"proc-task-{i:02d}", {"i": i})
        ctx = multiprocessing.get_context("spawn")
        go, results = ctx.Event(), ctx.Queue()
        procs = [ctx.Process(target=_dispatch_until_idle, args=(str(db), target.url, go, results))
                 for _ in range(2)]
        for p in procs:
            p.start()
        go.set()
        for p in procs:
            p.join(60)
        assert [p.exitcode for p in procs] == [0, 0]
        counts = [results.get(timeout=5) for _ in procs]
        assert sum(counts) == 20, counts
        assert Counter(target.task_names()) == Counter({f"proc-task-{i:02d}": 1 for i in range(20)})
        assert queue.counts()["succeeded"] == 20


def _dispatch_once(path: str, target_url: str) -> None:
    make_queue(path, target_url).dispatch_due()


def test_embedded_task_left_running_by_dead_dispatcher_is_delivered_after_lease_expiry(db):
    with RecordingTarget() as target:
        queue = make_queue(db, target.url)
        name = task_name_for("orphaned")
        queue.enqueue(name, {"n": 1})
        target.release.clear()  # hold the first delivery open: the dispatcher is mid-flight
        ctx = multiprocessing.get_context("spawn")
        proc = ctx.Process(target=_dispatch_once, args=(str(db), target.url))
        proc.start()
        assert target.wait_for(1, timeout_s=30)
        proc.kill()  # SIGKILL: lease held, nothing recorded
        proc.join(10)
        target.release.set()

        record = queue.task(name)
        assert record.state == "running"
        assert queue.dispatch_due() == 0  # lease still held
        after_lease = record.lease_until + timedelta(seconds=1)
        assert queue.dispatch_due(now=after_lease) == 1
        assert queue.task(name).state == "succeeded"
        assert [r["headers"]["X-CloudTasks-TaskRetryCount"] for r in target.requests] == ["0", "1"]


def _enqueue_in_process(path: str, target_url: str) -> None:
    make_queue(path, target_url).enqueue("durable-task", {"made_in": "another process"})


def test_embedded_task_enqueued_in_one_process_is_dispatched_by_another(db):
    with RecordingTarget() as target:
        ctx = multiprocessing.get_context("spawn")
        writer = ctx.Process(target=_enqueue_in_process, args=(str(db), target.url))
        writer.start()
        writer.join(30)
        assert writer.exitcode == 0
        assert target.requests == []
        dispatcher = ctx.Process(target=_dispatch_once, args=(str(db), target.url))
        dispatcher.start()
        dispatcher.join(30)
        assert dispatcher.exitcode == 0
        assert [r["body"] for r in target.requests] == [{"made_in": "another process"}]
