"""A task carries the trace of the request that created it (shared/trace.py): the embedded queue sends
it on every attempt, whichever thread delivers it and whenever, and its dispatcher's lines about the
task carry it; the Cloud Tasks adapter creates the task with it. Each task gets a span of its own."""
from __future__ import annotations

import json
import sqlite3
from datetime import datetime, timedelta, timezone

from shared import trace
from shared.queue.cloudtasks import CloudTasksQueue
from shared.queue.embedded import EmbeddedQueue
from shared.trace import TraceContext, parse_cloud_trace_context, parse_traceparent
from tests.unit.queue.queue_fakes import FakeCloudTasks, RecordingTarget

T0 = datetime(2026, 11, 30, 4, 0, tzinfo=timezone.utc)
TRACE_FIELD, SPAN_FIELD = "logging.googleapis.com/trace", "logging.googleapis.com/spanId"


def make_queue(path, target_url, **kwargs) -> EmbeddedQueue:
    options = dict(queue_name="queued-events", target_url=target_url, auth_token="t", min_backoff_seconds=1.0,
                   max_backoff_seconds=3.0, max_attempts=5, dispatch_deadline_seconds=5.0, poll_interval_seconds=0.01,
                   clock=lambda: T0)
    options.update(kwargs)
    return EmbeddedQueue(str(path), **options)


def _sent(request: dict) -> TraceContext:
    headers = request["headers"]
    found = parse_traceparent(headers["traceparent"])
    assert parse_cloud_trace_context(headers["X-Cloud-Trace-Context"]) == found  # both headers, one trace
    return found


def test_embedded_task_is_sent_with_its_requests_trace_on_every_attempt_and_logged_with_it(tmp_path, json_lines):
    request = TraceContext.fresh()
    with RecordingTarget([500, 200]) as target:
        queue = make_queue(tmp_path / "q.sqlite3", target.url)
        with trace.active(request):
            queue.enqueue("answer-1", {"kind": "queued_event"})
        queue.enqueue("sweep-1", {"kind": "queued_event"})  # created outside any request
        other = TraceContext.fresh()
        with trace.active(other):  # whatever runs when the dispatcher delivers does not matter
            queue.dispatch_due(now=T0)
            queue.dispatch_due(now=T0 + timedelta(seconds=5))
    by_task: dict[str, list[dict]] = {}
    for delivery in target.requests:
        by_task.setdefault(delivery["headers"]["X-CloudTasks-TaskName"], []).append(delivery)
    first, retry = [_sent(d) for d in by_task["answer-1"]]
    assert first == retry  # every attempt of the task: the headers it was created with
    assert (first.trace_id, first.sampled) == (request.trace_id, request.sampled) and first.span_id != request.span_id
    assert all("traceparent" not in d["headers"] for d in by_task["sweep-1"])  # its target starts a trace
    delivered = [line for line in json_lines() if line["message"] in ("queue task delivered", "queue task will be retried")
                 and line["task"] == "answer-1"]
    assert len(delivered) == 2
    assert {(line[TRACE_FIELD], line[SPAN_FIELD]) for line in delivered} == {(request.trace_id, first.span_id)}
    assert other.trace_id not in json.dumps(json_lines())


def test_embedded_concurrent_deliveries_each_carry_their_own_tasks_trace(tmp_path, json_lines):
    traces = [TraceContext.fresh() for _ in range(6)]
    with RecordingTarget(hold_seconds=0.05) as target:
        queue = make_queue(tmp_path / "q.sqlite3", target.url, max_concurrent_dispatches=3, clock=lambda: datetime.now(timezone.utc))
        for index, context in enumerate(traces):
            with trace.active(context):
                queue.enqueue(f"task-{index}", {"n": index})
        queue.start()
        try:
            assert target.wait_for(6)
        finally:
            queue.stop()
    for delivery in target.requests:
        index = delivery["body"]["n"]
        assert _sent(delivery).trace_id == traces[index].trace_id
    for line in json_lines():
        if line["message"] == "queue task delivered":
            assert line[TRACE_FIELD] == traces[int(line["task"].split("-")[1])].trace_id


def test_embedded_file_made_before_traces_were_kept_still_works(tmp_path):
    path = tmp_path / "old.sqlite3"
    with sqlite3.connect(path) as conn:  # the queue table as it was, with a task already in it
        conn.execute("CREATE TABLE queue_tasks (name TEXT PRIMARY KEY, queue TEXT NOT NULL, payload TEXT NOT NULL,"
                     " state TEXT NOT NULL, attempts INTEGER NOT NULL DEFAULT 0, execution_count INTEGER NOT NULL"
                     " DEFAULT 0, schedule_at REAL NOT NULL, lease_until REAL, lease_owner TEXT, last_status INTEGER,"
                     " created_at TEXT NOT NULL, updated_at TEXT NOT NULL) WITHOUT ROWID")
        conn.execute("INSERT INTO queue_tasks(name, queue, payload, state, schedule_at, created_at, updated_at)"
                     " VALUES ('old', 'queued-events', '{}', 'pending', 0, 'x', 'x')")
    with RecordingTarget() as target:
        queue = make_queue(path, target.url)
        with trace.active(TraceContext.fresh()):
            queue.enqueue("new", {})
        assert queue.dispatch_due(now=T0) == 2
    assert sorted(d["headers"]["X-CloudTasks-TaskName"] for d in target.requests) == ["new", "old"]
    assert ["traceparent" in d["headers"] for d in sorted(target.requests, key=lambda d: d["headers"]["X-CloudTasks-TaskName"])] \
        == [True, False]


def test_cloud_tasks_task_is_created_with_its_requests_trace():
    request = TraceContext.fresh()
    with FakeCloudTasks() as fake:
        queue = CloudTasksQueue("projects/p/locations/l/queues/queued-events", target_url="https://agent.example/",
                                service_account_email="sa@p.iam.gserviceaccount.com", client=fake.client(),
                                clock=lambda: T0)
        with trace.active(request):
            queue.enqueue("answer-1", {"kind": "queued_event"})
            queue.enqueue("answer-2", {"kind": "queued_event"})
        first, second = [dict(r.task.http_request.headers) for r in fake.requests]
    sent = [_sent({"headers": headers}) for headers in (first, second)]
    assert {s.trace_id for s in sent} == {request.trace_id}
    assert len({s.span_id for s in sent} | {request.span_id}) == 3  # a span of its own for each task
    assert first["Content-Type"] == "application/json"
