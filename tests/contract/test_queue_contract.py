"""One contract suite for the task queue port, run against every adapter.

- embedded: a real SQLite file and a real loopback HTTP target; "delivered" means POSTed.
- cloudtasks: the real ``tasks_v2.CloudTasksClient`` and gRPC transport against an in-process fake
  CloudTasks service; "delivered" means the CreateTask request Cloud Tasks would deliver.
A scenario an adapter cannot run here skips and says why.
"""
from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

import pytest

from shared.queue import EnqueueResult, InvalidTask, QueueUnavailable, task_name_for
from tests.unit.queue.queue_fakes import FakeCloudTasks, RecordingTarget

T0 = datetime(2026, 11, 30, 4, 0, tzinfo=timezone.utc)
QUEUE_PATH = "projects/local-test/locations/asia-east1/queues/handoff-reconcile"


class EmbeddedHarness:
    name = "embedded"

    def __init__(self, tmp_path):
        from shared.queue.embedded import EmbeddedQueue

        self._target = RecordingTarget().__enter__()
        self._path = tmp_path / "contract.sqlite3"
        self.queue = EmbeddedQueue(str(self._path), queue_name="handoff-reconcile", target_url=self._target.url,
                                   auth_token="contract-token", clock=lambda: T0)

    def delivered(self) -> list[dict]:
        """Payloads received by the target once every due task has run."""
        self.queue.dispatch_due(now=T0 + timedelta(days=1))
        return [r["body"] for r in self._target.requests]

    def complete_all(self) -> None:
        self.queue.dispatch_due(now=T0 + timedelta(days=1))

    def break_backend(self) -> None:
        from shared.queue.embedded import EmbeddedQueue

        self.queue = EmbeddedQueue(str(self._path.parent / "no-such-dir" / "q.sqlite3"),
                                   queue_name="handoff-reconcile", target_url=self._target.url,
                                   auth_token=None)

    def close(self) -> None:
        self._target.__exit__(None, None, None)


class CloudTasksHarness:
    name = "cloudtasks"

    def __init__(self, tmp_path):
        from shared.queue.cloudtasks import CloudTasksQueue

        self._fake = FakeCloudTasks().__enter__()
        self.queue = CloudTasksQueue(QUEUE_PATH, target_url="https://reconcile.example.test/",
                                     service_account_email="tasks@local-test.iam.gserviceaccount.com",
                                     client=self._fake.client(), clock=lambda: T0)

    def delivered(self) -> list[dict]:
        """Payloads of the tasks the fake service accepted (what Cloud Tasks would POST)."""
        return [json.loads(task.http_request.body) for task in self._fake.created]

    def complete_all(self) -> None:
        pytest.skip("the fake cannot run tasks to completion; name retention after a task ends "
                    "is Cloud Tasks' own behaviour, to be checked against the emulator (later issue)")

    def break_backend(self) -> None:
        import grpc

        self._fake.fail_next(grpc.StatusCode.UNAVAILABLE)

    def close(self) -> None:
        self._fake.__exit__(None, None, None)


ADAPTERS = {"embedded": EmbeddedHarness, "cloudtasks": CloudTasksHarness}


@pytest.fixture(params=sorted(ADAPTERS))
def harness(request, tmp_path):
    made = ADAPTERS[request.param](tmp_path)
    yield made
    made.close()


def test_queue_enqueue_new_name_is_created(harness):
    name = task_name_for("key-1")
    assert harness.queue.enqueue(name, {"kind": "reconcile"}) == EnqueueResult(name=name, created=True)
    assert harness.delivered() == [{"kind": "reconcile"}]


def test_queue_same_name_again_is_not_created_and_not_an_error(harness):
    name = task_name_for("key-2")
    harness.queue.enqueue(name, {"v": 1})
    again = harness.queue.enqueue(name, {"v": 2})
    assert again == EnqueueResult(name=name, created=False)
    assert harness.delivered() == [{"v": 1}]


def test_queue_same_name_after_completion_is_not_created(harness):
    name = task_name_for("key-3")
    harness.queue.enqueue(name, {"v": 1})
    harness.complete_all()
    assert harness.queue.enqueue(name, {"v": 1}).created is False
    assert harness.delivered() == [{"v": 1}]


def test_queue_payload_roundtrips_as_json_object(harness):
    payload = {"kind": "reconcile", "tenant_id": "local-dev", "user_id": "U" + "0" * 32,
               "idempotency_key": "a" * 32, "note": "彰化 😀", "n": 3, "ok": True, "none": None,
               "nested": {"list": [1, 2.5, "三"]}}
    harness.queue.enqueue(task_name_for("key-4"), payload)
    assert harness.delivered() == [payload]


def test_queue_delay_does_not_lose_the_task(harness):
    harness.queue.enqueue(task_name_for("key-5"), {"later": True}, delay_seconds=60)
    assert harness.delivered() == [{"later": True}]


@pytest.mark.parametrize("name, payload, delay", [
    ("bad name", {}, 0), ("x" * 501, {}, 0), ("ok", ["list"], 0), ("ok", {"f": float("nan")}, 0),
    ("ok", {}, -1), ("ok", {"big": "x" * 100_000}, 0),
])
def test_queue_invalid_task_is_refused_and_nothing_sent(harness, name, payload, delay):
    with pytest.raises(InvalidTask):
        harness.queue.enqueue(name, payload, delay_seconds=delay)
    assert harness.delivered() == []


def test_queue_backend_unavailable_raises_retryable_queue_unavailable(harness):
    harness.break_backend()
    with pytest.raises(QueueUnavailable) as info:
        harness.queue.enqueue(task_name_for("key-6"), {"v": 1})
    assert info.value.retryable is True


def test_task_name_for_is_deterministic_valid_and_key_specific():
    name = task_name_for("0123456789abcdef0123456789abcdef")
    assert name == task_name_for("0123456789abcdef0123456789abcdef")
    assert name != task_name_for("0123456789abcdef0123456789abcdee")
    prefix, digest = name.split("-", 1)
    assert prefix == "reconcile" and len(digest) == 32 and set(digest) <= set("0123456789abcdef")
    assert "0123456789abcdef" not in name  # the key itself never appears in a task name
    assert task_name_for("k", prefix="memory_turn").startswith("memory_turn-")
    with pytest.raises(InvalidTask):
        task_name_for("k", prefix="has/slash")
    with pytest.raises(InvalidTask):
        task_name_for("")
