"""End to end on the production adapters, on this machine: webhook, memory and reconcile as
functions-framework processes on Google's Firestore emulator, the Cloud Tasks adapter against the
Cloud Tasks emulator (which dispatches to reconcile), and the LINE stand-in.

Cloud Tasks mints an OIDC token for each dispatch; the emulator does not, so a loopback relay stands
in for that one step: it adds ``Authorization: Bearer <LOCAL_INTERNAL_TOKEN>`` and forwards to
reconcile, recording the ``X-CloudTasks-*`` headers the emulator sent. The OIDC fields the adapter
put on the task are read back from the emulator (``ListTasks``) in
``test_cloudtasks_emulator_task_carries_name_url_headers_audience_and_schedule``.
"""
from __future__ import annotations

import json
import threading
import uuid
from datetime import datetime, timedelta, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
import requests

from shared.handoff.records import Operation
from shared.identity import Actor
from shared.trace import TraceContext, parse_traceparent
from tests.codes_support import shown_of
from tests.conftest import TEST_SECRET, TEST_TOKEN, all_text, case_bytes, line_body, postback_event, sign, text_event
from tests.contract import tasks_emulator
from tests.handoff_support import PUSH, REPLY, REQUEST_ID, USER, accepted, wait_for
from tests.memory_support import postbacks
from tools.function_process import FunctionProcess

pytestmark = pytest.mark.slow

TENANT = "e2e-tenant"
INTERNAL = "e2e-internal-token"
TASKS_SA = "local-tasks@e2e.iam.gserviceaccount.com"
#: Headers the relay passes on as Cloud Tasks does (shared/trace.py).
TRACE_HEADERS = ("traceparent", "x-cloud-trace-context")


class OidcRelay:
    """Stands in for Cloud Tasks' OIDC step: forwards each dispatch to ``target`` with a bearer
    token and records what the emulator sent and what reconcile answered."""

    def __init__(self, target: str, port: int = 0):
        self.target = target
        self.calls: list[dict] = []
        relay = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                seen = {k.lower(): v for k, v in self.headers.items()}
                answer = requests.post(relay.target, data=body, timeout=30, headers={
                    "Content-Type": "application/json", "Authorization": f"Bearer {INTERNAL}",
                    **{k: v for k, v in self.headers.items()
                       if k.lower().startswith("x-cloudtasks-") or k.lower() in TRACE_HEADERS}})
                relay.calls.append({"path": self.path, "headers": seen, "body": json.loads(body or b"null"),
                                    "status": answer.status_code})
                self.send_response(answer.status_code)
                self.send_header("Content-Length", str(len(answer.content)))
                self.end_headers()
                self.wfile.write(answer.content)

            def log_message(self, *args):
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/reconcile"

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()


@pytest.fixture
def tasks_emulator_host(tmp_path):
    python = tasks_emulator.ensure_venv()
    if python is None:
        pytest.skip(tasks_emulator.NOT_INSTALLED)
    emulator = tasks_emulator.TasksEmulator(python, QUEUE, tmp_path / "tasks-emulator.log", max_retries=4)
    host = emulator.start()
    yield host
    emulator.stop()


QUEUE = "projects/e2e/locations/local/queues/handoff-reconcile"


@pytest.fixture
def stack(request, tmp_path, firestore_emulator_host, tasks_emulator_host, line_standin):
    """memory and reconcile, then the webhook, all on one fresh Firestore project. The webhook's
    store deadline comes from ``@pytest.mark.webhook_deadline(seconds)`` (default 1.2 s)."""
    marker = request.node.get_closest_marker("webhook_deadline")
    webhook_deadline = str(marker.args[0]) if marker else "1.2"  # under LINE's 2 s budget
    project = f"e2e-{uuid.uuid4().hex[:10]}"
    started: list[FunctionProcess] = []
    relays: list[OidcRelay] = []
    common = {"LOCAL_STORE_URL": f"firestore://{project}", "FIRESTORE_EMULATOR_HOST": firestore_emulator_host,
              "LOCAL_TENANT_ID": TENANT, "LOCAL_INTERNAL_TOKEN": INTERNAL, "LINE_API_BASE_URL": line_standin.url,
              "LINE_CHANNEL_ACCESS_TOKEN": TEST_TOKEN, "LOCAL_SIGNING_KEY": "e2e-signing-key",
              "LOCAL_STORE_DEADLINE_SECONDS": "3.0", "LOCAL_RECONCILE_DELAY_SECONDS": "1"}

    def start(name: str, **extra: str) -> FunctionProcess:
        import os

        env = {k: v for k, v in os.environ.items() if not k.startswith(("LINE_", "LOCAL_", "FIRESTORE_"))}
        env.update(common, **extra)
        proc = FunctionProcess(name, env, tmp_path / f"{name}.log", start_timeout_seconds=60, preloaded=True)
        started.append(proc)
        return proc

    memory = start("memory")
    queue_env = {"LOCAL_TASKS_QUEUE_PATH": QUEUE, "LOCAL_TASKS_EMULATOR_HOST": tasks_emulator_host,
                 "LOCAL_TASKS_SERVICE_ACCOUNT": TASKS_SA}
    relay_port = _free_port()
    relay_url = f"http://127.0.0.1:{relay_port}/reconcile"
    reconcile = start("reconcile", RECONCILE_FUNCTION_URL=relay_url, **queue_env)
    relay = OidcRelay(reconcile.url, port=relay_port)
    relays.append(relay)
    webhook = start("webhook", LINE_CHANNEL_SECRET=TEST_SECRET, MEMORY_FUNCTION_URL=memory.url,
                    RECONCILE_FUNCTION_URL=relay.url, **queue_env,
                    LOCAL_STORE_DEADLINE_SECONDS=webhook_deadline, LOCAL_MEMORY_TIMEOUT_SECONDS="1.5")
    _warm_up(webhook.url, memory.url)
    from shared.store.firestore import FirestoreStore

    os_env = {"FIRESTORE_EMULATOR_HOST": firestore_emulator_host}
    yield {"webhook": webhook, "memory": memory, "reconcile": reconcile, "relay": relay, "project": project,
           "emulator_env": os_env, "store": lambda: FirestoreStore(project, deadline_seconds=5.0)}
    for proc in started:
        proc.stop()
    for r in relays:
        r.stop()


def _free_port() -> int:
    from tools.function_process import free_port

    return free_port()


def _warm_up(webhook_url: str, memory_url: str) -> None:
    """Open each function's Firestore channel before the scenario (a cold gRPC connect on a loaded
    machine can outlast one store deadline; LINE would redeliver, the scenario must not depend on it):
    an unfollow event and an unreadable consent card, each until answered 200."""
    unfollow = case_bytes("unfollow.json")
    card = {"tenant_id": TENANT, "user_id": "U" + "f" * 32, "token": "warm.up"}
    wait_for(lambda: _post(webhook_url, unfollow).status_code == 200, 60, "the webhook's first store call")
    wait_for(lambda: requests.post(memory_url, json=card, timeout=30,
                                   headers={"Authorization": f"Bearer {INTERNAL}"}).status_code == 200,
             60, "memory's first store call")


def _post(url: str, body: bytes, **headers: str) -> requests.Response:
    return requests.post(url, data=body, timeout=30, headers={"Content-Type": "application/json",
                                                              "X-Line-Signature": sign(body), **headers})


def _deliver(url: str, body: bytes) -> requests.Response:
    """Post as LINE does: the same bytes again after a 503 (redelivery), a few times."""
    for _ in range(5):
        answer = _post(url, body)
        if answer.status_code != 503:
            return answer
    return answer


def _reply(standin, token: str) -> dict:
    [call] = standin.wait_for(lambda c: c["path"] == REPLY and c["body"].get("replyToken") == token, timeout_s=20)
    return call["body"]


@pytest.mark.slow(seconds=10)
def test_e2e_memory_approve_then_forget_on_firestore(stack, line_standin, monkeypatch):
    monkeypatch.setenv("FIRESTORE_EMULATOR_HOST", stack["emulator_env"]["FIRESTORE_EMULATOR_HOST"])
    webhook = stack["webhook"].url
    remember = case_bytes("text-remember-vegetarian.json")
    assert _deliver(webhook, remember).status_code == 200
    card = _reply(line_standin, json.loads(remember)["events"][0]["replyToken"])
    approve = postbacks(card["messages"])["同意記住"]

    tap = postback_event(approve)
    assert _deliver(webhook, line_body(tap)).status_code == 200
    _reply(line_standin, tap["replyToken"])
    store = stack["store"]()
    saved = store.get("preferences", f"{TENANT}:{USER}")
    assert saved["dietary_type"] == "vegetarian" and saved["revision"] == 1

    forget = text_event("忘記我的飲食偏好")
    assert _deliver(webhook, line_body(forget)).status_code == 200
    _reply(line_standin, forget["replyToken"])
    after = store.get("preferences", f"{TENANT}:{USER}")
    assert after["revision"] == 2 and "dietary_type" not in {k for k, v in after.items() if v}
    # The same approval tapped again after the forget changes nothing.
    again = postback_event(approve)
    assert _deliver(webhook, line_body(again)).status_code == 200
    _reply(line_standin, again["replyToken"])
    assert store.get("preferences", f"{TENANT}:{USER}")["revision"] == 2
    # Every inbox document carries its TTL instant as a Timestamp.
    inbox = store.query("webhook_inbox", {"tenant_id": TENANT})
    ids = {json.loads(remember)["events"][0]["webhookEventId"], tap["webhookEventId"], forget["webhookEventId"],
           again["webhookEventId"]}
    assert ids <= {doc["webhook_event_id"] for doc in inbox}
    assert all(isinstance(doc["expire_at"], datetime) and doc["expire_at"] > datetime.now(timezone.utc)
               for doc in inbox)


@pytest.mark.webhook_deadline(0.6)  # below the emulator's 2 s lock stall, inside LINE's 2 s budget
def test_e2e_unknown_create_outcome_settled_by_reconcile_via_cloud_tasks(stack, line_standin, monkeypatch):
    monkeypatch.setenv("FIRESTORE_EMULATOR_HOST", stack["emulator_env"]["FIRESTORE_EMULATOR_HOST"])
    webhook, relay, store = stack["webhook"].url, stack["relay"], stack["store"]()
    ask = text_event("新需求：想參加週六的社區走讀，需要輪椅協助")
    assert _deliver(webhook, line_body(ask)).status_code == 200
    confirm_data = postbacks(_reply(line_standin, ask["replyToken"])["messages"])["確認送出"]
    operation = Operation(Actor(TENANT, USER), confirm_data.split(".")[2])

    # The emulator's own behaviour makes the outcome unknown: a transaction that holds the request
    # document keeps the webhook's create waiting past its store deadline (the emulator stalls a
    # conflicting write for up to 2 s), so the webhook cannot know whether it was written.
    holding, release = threading.Event(), threading.Event()

    def hold(tx):
        tx.get("handoff_requests", operation.doc_id)
        holding.set()
        release.wait(30)

    holder = threading.Thread(target=lambda: store.run_transaction(hold), daemon=True)
    holder.start()
    assert holding.wait(20)
    tap = postback_event(confirm_data)
    line_trace = TraceContext.fresh()  # the trace LINE's delivery comes with (Cloud Run's front end)
    answered = []
    poster = threading.Thread(target=lambda: answered.append(_post(webhook, line_body(tap),
                                                                   traceparent=line_trace.traceparent())),
                              daemon=True)
    poster.start()
    try:  # hold until the webhook has given up on the create, then let go
        wait_for(lambda: [e for e in stack["webhook"].log_entries("handoff confirmation answered")
                          if e.get("error") == "StoreTimeout"], 30, "the create's unknown outcome")
    finally:
        release.set()
        holder.join(30)
    poster.join(30)
    assert answered and answered[0].status_code == 200
    first = all_text(_reply(line_standin, tap["replyToken"])["messages"])
    assert "正在確認是否已登記" in first and not REQUEST_ID.search(first)

    # Cloud Tasks (the emulator) dispatches the reconcile task; reconcile settles the operation and
    # pushes the one receipt.
    [push] = wait_for(lambda: [c for c in accepted(line_standin, PUSH) if c["body"]["to"] == USER], 60,
                      "the receipt push")
    requests_stored = store.query("handoff_requests", {"tenant_id": TENANT})
    assert len(requests_stored) == 1
    assert REQUEST_ID.findall(all_text(push["body"]["messages"])) == [shown_of(requests_stored[0])]
    [logged] = [e for e in stack["webhook"].log_entries("handoff confirmation answered") if e.get("queued")]
    # The relay records a dispatch once reconcile has answered it (after the push).
    [check] = wait_for(lambda: [c for c in relay.calls if c["status"] // 100 == 2
                                and c["headers"]["x-cloudtasks-taskname"] == logged["task"]], 30,
                       "the recorded dispatch")
    assert check["body"]["idempotency_key"] == operation.idempotency_key
    # (The emulator sends the queue's full path here; Cloud Tasks sends its short name.)
    assert check["headers"]["x-cloudtasks-queuename"].endswith("handoff-reconcile")
    # The task was created with the tap's trace, the emulator dispatched it with it, and reconcile's
    # lines carry it, named under the Firestore store's project (no GOOGLE_CLOUD_PROJECT here).
    trace_name = f"projects/{stack['project']}/traces/{line_trace.trace_id}"
    assert logged["logging.googleapis.com/trace"] == trace_name
    sent = parse_traceparent(check["headers"]["traceparent"])
    assert sent.trace_id == line_trace.trace_id and sent.span_id != line_trace.span_id
    reconciled = [e for e in stack["reconcile"].log_entries("reconcile answered")
                  if e.get("logging.googleapis.com/trace") == trace_name]
    assert reconciled and {e["logging.googleapis.com/spanId"] for e in reconciled} == {sent.span_id}
    # Nothing more is told after it settles (the reply said "checking", the push gave the receipt).
    assert [c for c in accepted(line_standin, REPLY) if c["body"]["replyToken"] == tap["replyToken"]]
    assert len([c for c in accepted(line_standin, PUSH) if c["body"]["to"] == USER]) == 1


def test_cloudtasks_emulator_task_carries_name_url_headers_audience_and_schedule(tasks_emulator_host):
    from google.cloud import tasks_v2

    from shared.queue.cloudtasks import CloudTasksQueue

    at = datetime(2030, 1, 2, 3, 4, 5, tzinfo=timezone.utc)
    queue = CloudTasksQueue(QUEUE, target_url="http://127.0.0.1:9/reconcile?via=relay",
                            service_account_email=TASKS_SA, emulator_host=tasks_emulator_host, clock=lambda: at)
    result = queue.enqueue("reconcile-abc123", {"v": 1, "kind": "probe"}, delay_seconds=90)
    assert result.created
    [task] = queue._tasks_client().list_tasks(parent=QUEUE)
    assert task.name == f"{QUEUE}/tasks/reconcile-abc123"
    request = task.http_request
    assert (request.url, request.http_method) == ("http://127.0.0.1:9/reconcile?via=relay", tasks_v2.HttpMethod.POST)
    assert request.headers["Content-Type"] == "application/json"
    assert json.loads(request.body) == {"v": 1, "kind": "probe"}
    assert request.oidc_token.service_account_email == TASKS_SA
    assert request.oidc_token.audience == "http://127.0.0.1:9/reconcile"  # the URL without its query
    assert task.schedule_time == at + timedelta(seconds=90)
    assert task.dispatch_deadline.total_seconds() == queue.dispatch_deadline_seconds
