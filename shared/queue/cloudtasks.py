"""Cloud Tasks adapter of the task queue (production), on google-cloud-tasks 2.26 (``tasks_v2``).

Each enqueue creates one HTTP task named ``<queue_path>/tasks/<name>``: a POST of the JSON payload
to the target with an OIDC token for ``service_account_email`` and an explicit audience, a
``dispatch_deadline``, a ``schedule_time`` when delayed, and the current request's trace with a
span of its own (``shared.trace.outgoing_headers``: ``traceparent`` and ``X-Cloud-Trace-Context``,
sent on every attempt; Cloud Tasks passes on the headers a task is created with, but for the few it
replaces). Cloud Tasks deduplicates named tasks:
``AlreadyExists`` means the name was used recently, which the port treats as success. The retry
policy (min/max backoff, max doublings, max attempts) is the queue's RetryConfig, declared in infra/.

``google.cloud.tasks_v2`` is imported only when the first client is built, so no other process
(and no webhook cold start) pays for it.

Source: Cloud Tasks docs, "Create HTTP target tasks" (OIDC token, audience, task names);
google-cloud-tasks ``CloudTasksClient.create_task`` reference; docs/design.md §1, §4.
"""
from __future__ import annotations

import threading
from datetime import timedelta
from typing import Any
from urllib.parse import urlsplit

from shared import trace
from shared.clock import Clock, utc_now
from shared.logs import log
from shared.queue.port import (
    EnqueueResult,
    QueueError,
    QueueUnavailable,
    encode_payload,
    validate_delay,
    validate_task_name,
)


class CloudTasksQueue:
    """``TaskQueue`` on Google Cloud Tasks.

    Args:
        queue_path: ``projects/<project>/locations/<location>/queues/<queue>`` (``LOCAL_TASKS_QUEUE_PATH``).
        target_url: the handler, e.g. functions/reconcile's HTTPS URL (``RECONCILE_FUNCTION_URL``).
        service_account_email: identity of the OIDC token (``LOCAL_TASKS_SERVICE_ACCOUNT``).
        audience: the OIDC token's audience; defaults to ``target_url`` without its query and
            fragment (the function's URL, which Cloud Run and functions/reconcile check).
        dispatch_deadline_seconds: how long Cloud Tasks waits for the handler (HTTP tasks: 15 s–30 min).
        client: an injected ``tasks_v2.CloudTasksClient``; built lazily from the environment's
            credentials when None.
        rpc_timeout_seconds: deadline of the CreateTask call itself, in seconds.
        clock: aware-UTC clock for ``schedule_time``.
        emulator_host: ``HOST:PORT`` of a Cloud Tasks emulator (``LOCAL_TASKS_EMULATOR_HOST``,
            tests and local runs): an insecure loopback channel, no credentials.
    """

    def __init__(self, queue_path: str, *, target_url: str, service_account_email: str,
                 audience: str | None = None, dispatch_deadline_seconds: float = 30.0,
                 client: Any = None, rpc_timeout_seconds: float = 10.0, clock: Clock = utc_now,
                 emulator_host: str | None = None):
        if not queue_path or queue_path.count("/") != 5 or not queue_path.startswith("projects/"):
            raise ValueError("queue_path must be projects/<p>/locations/<l>/queues/<q>")
        self.queue_path = queue_path
        self.target_url = target_url
        self.service_account_email = service_account_email
        self.audience = audience or urlsplit(target_url)._replace(query="", fragment="").geturl()
        self.emulator_host = emulator_host
        self.dispatch_deadline_seconds = float(dispatch_deadline_seconds)
        self.rpc_timeout_seconds = float(rpc_timeout_seconds)
        self._clock = clock
        self._client = client
        self._client_lock = threading.Lock()

    @property
    def queue_name(self) -> str:
        """The queue id (last path segment), as Cloud Tasks sends it in ``X-CloudTasks-QueueName``."""
        return self.queue_path.rsplit("/", 1)[-1]

    def _tasks_client(self) -> Any:
        if self._client is None:
            with self._client_lock:
                if self._client is None:
                    from google.cloud import tasks_v2

                    if self.emulator_host:
                        import grpc
                        from google.cloud.tasks_v2.services.cloud_tasks.transports import CloudTasksGrpcTransport

                        channel = grpc.insecure_channel(self.emulator_host)
                        self._client = tasks_v2.CloudTasksClient(transport=CloudTasksGrpcTransport(channel=channel))
                    else:
                        self._client = tasks_v2.CloudTasksClient()
        return self._client

    def enqueue(self, name: str, payload: dict[str, Any], *, delay_seconds: float = 0.0) -> EnqueueResult:
        """Create the named HTTP task. See ``TaskQueue.enqueue``.

        Raises:
            InvalidTask: bad name, payload or delay; nothing sent.
            QueueUnavailable: UNAVAILABLE, DEADLINE_EXCEEDED, INTERNAL or no answer; the task
                may exist; retry with the same name.
            QueueError: any other refusal (e.g. PERMISSION_DENIED, NOT_FOUND queue); not retryable.
        """
        from google.api_core import exceptions as gexc
        from google.cloud import tasks_v2
        from google.protobuf import duration_pb2, timestamp_pb2

        validate_task_name(name)
        body = encode_payload(payload)
        delay = validate_delay(delay_seconds)

        task = tasks_v2.Task(
            name=f"{self.queue_path}/tasks/{name}",
            http_request=tasks_v2.HttpRequest(
                url=self.target_url,
                http_method=tasks_v2.HttpMethod.POST,
                headers={"Content-Type": "application/json", **trace.outgoing_headers()},
                body=body,
                oidc_token=tasks_v2.OidcToken(service_account_email=self.service_account_email,
                                              audience=self.audience),
            ),
            dispatch_deadline=duration_pb2.Duration(seconds=int(self.dispatch_deadline_seconds),
                                                    nanos=int(self.dispatch_deadline_seconds % 1 * 1e9)),
        )
        if delay > 0:
            schedule = timestamp_pb2.Timestamp()
            schedule.FromDatetime(self._clock() + timedelta(seconds=delay))
            task.schedule_time = schedule
        try:
            self._tasks_client().create_task(parent=self.queue_path, task=task,
                                             timeout=self.rpc_timeout_seconds)
        except gexc.AlreadyExists:
            log("INFO", "queue task already known", queue=self.queue_name, task=name, created=False)
            return EnqueueResult(name=name, created=False)
        except (gexc.ServiceUnavailable, gexc.DeadlineExceeded, gexc.InternalServerError,
                gexc.RetryError) as exc:
            log("WARNING", "cloud tasks did not confirm the task", queue=self.queue_name, task=name,
                error=exc.__class__.__name__)
            raise QueueUnavailable(f"Cloud Tasks did not confirm {name}: {exc.__class__.__name__}") from exc
        except gexc.GoogleAPICallError as exc:
            log("ERROR", "cloud tasks refused the task", queue=self.queue_name, task=name,
                error=exc.__class__.__name__)
            raise QueueError(f"Cloud Tasks refused {name}: {exc.__class__.__name__}") from exc
        log("INFO", "queue task enqueued", queue=self.queue_name, task=name, created=True, delay_seconds=delay)
        return EnqueueResult(name=name, created=True)
