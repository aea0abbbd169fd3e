"""Cloud Tasks adapter: the real ``tasks_v2.CloudTasksClient`` and gRPC transport, talking to an
in-process fake CloudTasks service on loopback (no network, no credentials)."""
from __future__ import annotations

import json
import socket
from datetime import datetime, timedelta, timezone

import grpc
import pytest

from shared.queue import QueueError, QueueUnavailable, task_name_for
from shared.queue.cloudtasks import CloudTasksQueue
from tests.unit.queue.queue_fakes import FakeCloudTasks

T0 = datetime(2026, 11, 30, 4, 0, tzinfo=timezone.utc)
QUEUE_PATH = "projects/local-prod/locations/asia-east1/queues/handoff-reconcile"
TARGET = "https://asia-east1-local-prod.cloudfunctions.net/reconcile"
SERVICE_ACCOUNT = "tasks-invoker@local-prod.iam.gserviceaccount.com"


@pytest.fixture
def fake():
    with FakeCloudTasks() as service:
        yield service


def make_queue(client, **kwargs) -> CloudTasksQueue:
    options = dict(target_url=TARGET, service_account_email=SERVICE_ACCOUNT, client=client,
                   clock=lambda: T0)
    options.update(kwargs)
    return CloudTasksQueue(QUEUE_PATH, **options)


def test_cloud_tasks_enqueue_builds_http_task_with_oidc_and_deadline(fake):
    name = task_name_for("0f" * 16)
    payload = {"kind": "reconcile", "tenant_id": "t", "user_id": "U" + "1" * 32, "idempotency_key": "0f" * 16}
    result = make_queue(fake.client(), dispatch_deadline_seconds=45).enqueue(name, payload)
    assert (result.name, result.created) == (name, True)

    [request] = fake.requests
    assert request.parent == QUEUE_PATH
    task = request.task
    assert task.name == f"{QUEUE_PATH}/tasks/{name}"
    http = task.http_request
    assert http.url == TARGET
    assert http.http_method.name == "POST"
    assert dict(http.headers) == {"Content-Type": "application/json"}
    assert json.loads(http.body) == payload
    assert http.oidc_token.service_account_email == SERVICE_ACCOUNT
    assert http.oidc_token.audience == TARGET  # explicit, defaulting to the target URL
    assert task.dispatch_deadline == timedelta(seconds=45)
    assert "schedule_time" not in task  # immediate: Cloud Tasks schedules it now


def test_cloud_tasks_explicit_audience_is_sent(fake):
    make_queue(fake.client(), audience="https://reconcile.internal.example/").enqueue("t1", {})
    assert fake.requests[0].task.http_request.oidc_token.audience == "https://reconcile.internal.example/"


def test_cloud_tasks_delay_sets_schedule_time_from_clock(fake):
    make_queue(fake.client()).enqueue("t-delayed", {"a": 1}, delay_seconds=90)
    assert fake.requests[0].task.schedule_time == T0 + timedelta(seconds=90)


def test_cloud_tasks_already_exists_is_not_created(fake):
    queue = make_queue(fake.client())
    assert queue.enqueue("dup", {"v": 1}).created is True
    again = queue.enqueue("dup", {"v": 1})
    assert (again.name, again.created) == ("dup", False)
    assert len(fake.requests) == 2 and len(fake.created) == 1


@pytest.mark.parametrize("code", [grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED,
                                  grpc.StatusCode.INTERNAL])
def test_cloud_tasks_transient_status_raises_queue_unavailable(fake, code):
    from google.api_core import exceptions as gexc

    fake.fail_next(code)
    with pytest.raises(QueueUnavailable) as info:
        make_queue(fake.client()).enqueue("t-transient", {})
    assert info.value.retryable is True
    assert isinstance(info.value.__cause__, gexc.GoogleAPICallError)
    assert fake.created == []


def test_cloud_tasks_permission_denied_is_not_retryable(fake):
    fake.fail_next(grpc.StatusCode.PERMISSION_DENIED)
    with pytest.raises(QueueError) as info:
        make_queue(fake.client()).enqueue("t-denied", {})
    assert not isinstance(info.value, QueueUnavailable)
    assert info.value.retryable is False


def test_cloud_tasks_unreachable_service_raises_queue_unavailable():
    from google.cloud import tasks_v2
    from google.cloud.tasks_v2.services.cloud_tasks.transports import CloudTasksGrpcTransport

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed once the block ends: nothing listens there
    channel = grpc.insecure_channel(f"127.0.0.1:{port}", options=[("grpc.enable_http_proxy", 0)])
    try:
        client = tasks_v2.CloudTasksClient(transport=CloudTasksGrpcTransport(channel=channel))
        with pytest.raises(QueueUnavailable):
            make_queue(client, rpc_timeout_seconds=2.0).enqueue("t-down", {})
    finally:
        channel.close()


def test_cloud_tasks_bad_queue_path_is_refused():
    with pytest.raises(ValueError):
        CloudTasksQueue("handoff-reconcile", target_url=TARGET, service_account_email=SERVICE_ACCOUNT)
