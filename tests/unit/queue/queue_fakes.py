"""Test doubles at the queue's third-party seams, on loopback only.

- ``RecordingTarget``: a tiny HTTP server standing in for functions/reconcile; records every
  POST (headers, JSON body) and answers scripted statuses, optionally holding a request open.
- ``FakeCloudTasks``: an in-process gRPC server that implements CloudTasks.CreateTask, so the real
  ``tasks_v2.CloudTasksClient`` and its gRPC transport run unchanged against it (no credentials).
"""
from __future__ import annotations

import json
import threading
import time
from concurrent import futures
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        pass  # a client that hung up (a killed dispatcher, a timeout) is part of the scenario


class RecordingTarget:
    """HTTP target on 127.0.0.1 that records deliveries and answers scripted statuses.

    Args:
        statuses: answers in order (then ``default_status``); ``None`` in the script closes the
            connection without an answer.
        hold_seconds: per-request delay before answering (makes dispatchers overlap).
    """

    def __init__(self, statuses: list[int | None] | None = None, *, default_status: int = 200,
                 hold_seconds: float = 0.0):
        self._script = list(statuses or [])
        self._default = default_status
        self.hold_seconds = hold_seconds
        self.release = threading.Event()
        self.release.set()
        self._lock = threading.Lock()
        self.requests: list[dict] = []
        self.arrived = threading.Condition(self._lock)
        target = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802 - http.server's naming
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length)
                with target.arrived:
                    target.requests.append({"path": self.path, "headers": dict(self.headers.items()),
                                            "body": json.loads(body.decode("utf-8"))})
                    status = target._script.pop(0) if target._script else target._default
                    target.arrived.notify_all()
                if target.hold_seconds:
                    time.sleep(target.hold_seconds)
                target.release.wait(30)
                if status is None:
                    self.close_connection = True
                    return
                payload = b"{}"
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *args):
                pass

        self._server = _QuietServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/"
        # stop() waits for the serving thread's next poll: 5 ms, as for the stand-ins (tools/standin_server.py)
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.005},
                                        daemon=True)

    def __enter__(self) -> "RecordingTarget":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.release.set()
        self._server.shutdown()
        self._server.server_close()

    def task_names(self) -> list[str]:
        """``X-CloudTasks-TaskName`` of every recorded delivery, in arrival order."""
        with self._lock:
            return [r["headers"].get("X-CloudTasks-TaskName") for r in self.requests]

    def wait_for(self, count: int, timeout_s: float = 10.0) -> bool:
        """Wait until at least ``count`` deliveries arrived; False on timeout."""
        with self.arrived:
            return self.arrived.wait_for(lambda: len(self.requests) >= count, timeout_s)


class FakeCloudTasks:
    """In-process CloudTasks gRPC service: CreateTask records the request and deduplicates names.

    ``fail_next(code)`` makes the next CreateTask answer with that ``grpc.StatusCode``.
    """

    def __init__(self):
        import grpc
        from google.cloud.tasks_v2.types import cloudtasks
        from google.cloud.tasks_v2.types import task as task_types

        self._grpc = grpc
        self.requests: list = []  # every CreateTaskRequest received
        self.created: list = []  # the tasks accepted (what Cloud Tasks would deliver)
        self._names: set[str] = set()
        self._failures: list = []
        self._lock = threading.Lock()

        def create_task(request, context):
            with self._lock:
                self.requests.append(request)
                if self._failures:
                    context.abort(self._failures.pop(0), "scripted failure")
                if request.task.name in self._names:
                    context.abort(grpc.StatusCode.ALREADY_EXISTS, "Requested entity already exists")
                self._names.add(request.task.name)
                self.created.append(request.task)
            return task_types.Task(name=request.task.name, http_request=request.task.http_request)

        handler = grpc.method_handlers_generic_handler("google.cloud.tasks.v2.CloudTasks", {
            "CreateTask": grpc.unary_unary_rpc_method_handler(
                create_task, request_deserializer=cloudtasks.CreateTaskRequest.deserialize,
                response_serializer=task_types.Task.serialize),
        })
        self._server = grpc.server(futures.ThreadPoolExecutor(max_workers=4), handlers=[handler])
        self.port = self._server.add_insecure_port("127.0.0.1:0")
        self._channels: list = []

    def __enter__(self) -> "FakeCloudTasks":
        self._server.start()
        return self

    def __exit__(self, *exc) -> None:
        for channel in self._channels:
            channel.close()
        self._server.stop(grace=None)

    def fail_next(self, code) -> None:
        with self._lock:
            self._failures.append(code)

    def client(self):
        """A real ``tasks_v2.CloudTasksClient`` whose gRPC transport talks to this fake."""
        from google.cloud import tasks_v2
        from google.cloud.tasks_v2.services.cloud_tasks.transports import CloudTasksGrpcTransport

        channel = self._grpc.insecure_channel(f"127.0.0.1:{self.port}",
                                              options=[("grpc.enable_http_proxy", 0)])
        self._channels.append(channel)
        return tasks_v2.CloudTasksClient(transport=CloudTasksGrpcTransport(channel=channel))
