"""``make bench``'s round-trip table: Firestore RPCs per operation, counted on the emulator.

A round trip to Firestore costs the same few milliseconds on any machine, so the number of them an
operation makes is a performance figure that does not depend on this machine's load. It is counted
by a gRPC client interceptor on the real google-cloud-firestore client (``CountingClient``: every
RPC the library sends, BeginTransaction, Commit, Rollback and the reads included) while the real use
case runs on ``FirestoreStore`` against Google's Firestore emulator, with the LINE stand-in for LINE.
The minimum each operation needs is argued in docs/benchmarks.md.
"""
from __future__ import annotations

import collections
import dataclasses
import threading
import time
from typing import Any, Callable

import grpc
from google.cloud import firestore

SECRET, TOKEN, TENANT = "bench-channel-secret", "bench-access-token", "bench"
RESIDENT = "U" + "2" * 32


class _Counter(grpc.UnaryUnaryClientInterceptor, grpc.UnaryStreamClientInterceptor,
               grpc.StreamUnaryClientInterceptor, grpc.StreamStreamClientInterceptor):
    """Counts each RPC by its method's short name (``Commit``, ``BatchGetDocuments`` …)."""

    def __init__(self) -> None:
        self.calls: collections.Counter[str] = collections.Counter()
        self._lock = threading.Lock()

    def _count(self, details: Any) -> None:
        with self._lock:
            self.calls[str(details.method).rsplit("/", 1)[-1]] += 1

    def intercept_unary_unary(self, continuation, client_call_details, request):
        self._count(client_call_details)
        return continuation(client_call_details, request)

    def intercept_unary_stream(self, continuation, client_call_details, request):
        self._count(client_call_details)
        return continuation(client_call_details, request)

    def intercept_stream_unary(self, continuation, client_call_details, request_iterator):
        self._count(client_call_details)
        return continuation(client_call_details, request_iterator)

    def intercept_stream_stream(self, continuation, client_call_details, request_iterator):
        self._count(client_call_details)
        return continuation(client_call_details, request_iterator)

    def take(self) -> collections.Counter[str]:
        """The calls counted since the last ``take``, and start again from zero."""
        with self._lock:
            calls, self.calls = self.calls, collections.Counter()
        return calls


class CountingClient(firestore.Client):
    """``google.cloud.firestore.Client`` whose emulator channel runs through ``counter``.

    The library builds the emulator's insecure channel in ``_emulator_channel`` and hands it to the
    GAPIC transport; wrapping it with ``grpc.intercept_channel`` sees every RPC the store sends.
    """

    def __init__(self, *args: Any, counter: _Counter, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._counter = counter

    def _emulator_channel(self, transport):  # the library's seam (google-cloud-firestore 2.x)
        return grpc.intercept_channel(super()._emulator_channel(transport), self._counter)


def _settings(project: str, standin_url: str):
    from shared.config import WEBHOOK_REQUIRED, Settings

    settings = Settings.from_env({"LINE_CHANNEL_SECRET": SECRET, "LINE_CHANNEL_ACCESS_TOKEN": TOKEN,
                                  "LINE_API_BASE_URL": standin_url, "LOCAL_STORE_URL": f"firestore://{project}",
                                  "LOCAL_SIGNING_KEY": "bench-signing-key", "LOCAL_TENANT_ID": TENANT,
                                  "LOCAL_MODEL": "offline", "LOCAL_STORE_DEADLINE_SECONDS": "5"},
                                 required=WEBHOOK_REQUIRED)
    # counts, not times: a slow emulator must not send an event to the queue instead
    return dataclasses.replace(settings, webhook_budget_seconds=30.0, line_timeout_seconds=5.0)


def _post(service, event: dict) -> None:
    from tools.line_events import sign, webhook_body

    body = webhook_body([event], "U" + "0" * 32)
    result = service.handle(body.decode("utf-8"), sign(body, SECRET))
    if result.status != 200:
        raise SystemExit(f"bench: the webhook answered {result.status} on the emulator")


def _row(operation: str, calls: collections.Counter[str], minimum: int, why: str) -> dict:
    return {"operation": operation, "rpcs": sum(calls.values()), "by_method": dict(sorted(calls.items())),
            "minimum": minimum, "minimum_why": why}


def measure(tmp_path: Any, say: Callable[[str], None]) -> list[dict]:
    """Count the RPCs of each operation once (after one warm-up of the same kind, so a first use's
    set-up is not counted). FIRESTORE_EMULATOR_HOST must be set. Returns the table's rows."""
    from shared.queue.embedded import EmbeddedQueue
    from shared.store.firestore import FirestoreStore
    from shared.webhook.service import WebhookService
    from shared.wiring import line_gateway
    from tools.line_standin import LineStandin

    counter = _Counter()
    project = f"bench-rpc-{time.monotonic_ns()}"
    client = CountingClient(project=project, counter=counter)
    started = time.perf_counter()
    with LineStandin(access_token=TOKEN) as line_standin:
        settings = _settings(project, line_standin.url)
        store = FirestoreStore(project, deadline_seconds=5.0, client=client)
        queue = EmbeddedQueue(str(tmp_path / "rpc-queue.sqlite3"), queue_name="handoff-reconcile",
                              target_url="http://unused.invalid/", auth_token=None)
        try:
            line = line_gateway(settings)
            service = WebhookService(settings, store, line, queue=queue)
            rows = [_webhook_answer(service, counter), _handoff_confirm(service, line_standin, counter),
                    _settled_reconcile(settings, store, client, line, counter),
                    _memory_approval(settings, store, counter)]
        finally:
            queue.close()
    say(f"Firestore round trips: {len(rows)} operations counted in {time.perf_counter() - started:.1f} s")
    return rows


def _webhook_answer(service, counter: _Counter) -> dict:
    from tools.line_events import text_event

    _post(service, text_event("花壇有素食店嗎？", user_id="U" + "3" * 32))  # warm-up: another user
    counter.take()
    _post(service, text_event("花壇有素食店嗎？", user_id=RESIDENT))
    return _row("webhook text answer (花壇有素食店嗎？, replied)", counter.take(), 12,
                "3 transactions (claim, reply started, finish) × Begin + read + Commit, the events pointer "
                "and the preference reads, the conversation state and the audit in one batched Commit")


def _handoff_confirm(service, line_standin, counter: _Counter) -> dict:
    from tools.line_events import postback_event, text_event
    from tools.line_messages import postbacks

    event = text_event("新需求：想參加週六的社區走讀，需要輪椅協助", user_id=RESIDENT)
    _post(service, event)
    [card] = line_standin.calls(0, lambda c: c["path"] == "/v2/bot/message/reply"
                                and c["body"]["replyToken"] == event["replyToken"])
    tap = postback_event(postbacks(card["body"]["messages"])["確認送出"], user_id=RESIDENT)
    counter.take()
    _post(service, tap)
    return _row("handoff confirm (確認送出, request created, receipt replied)", counter.take(), 15,
                "5 transactions × 3: claim, confirmation recorded, create (one read of its 5 documents), "
                "reply started, then the receipt's delivered mark and the finish in one")


def created_and_told(store, settings, draft, now):
    """A request created from ``draft`` whose receipt the reply delivered (as the webhook leaves it), and
    the relay task that would reconcile it: nothing left to do but read. Returns a ``ReconcileTask``."""
    from shared.handoff import records
    from shared.handoff.reconcile import RELAY, ReconcileTask
    from shared.handoff.requests import create_request
    from shared.outbox import mark_delivered, reply_owner
    from tools import line_events

    event = line_events.new_webhook_event_id()
    owner = reply_owner(event)
    create_request(store, draft.operation, draft.content_hash, now=now, tz=settings.tz, source="webhook",
                   notice_owner=owner, lease_seconds=30.0, event_id=event)
    mark_delivered(store, records.OPERATIONS, draft.operation, owner, now=now)
    return ReconcileTask(draft.operation, draft.content_hash, RELAY, tag=event)


def _settled_reconcile(settings, store, client, line, counter: _Counter) -> dict:
    from shared.clock import utc_now
    from shared.handoff import drafts
    from shared.handoff.reconcile import ReconcileService, ReconcileTask
    from shared.identity import Actor
    from shared.store.firestore import FirestoreStore

    now = utc_now()
    service = ReconcileService(settings, store, FirestoreStore(store.project, deadline_seconds=5.0, read_only=True,
                                                               client=client), line, clock=lambda: now)

    def settled_task(user: str) -> ReconcileTask:
        draft = drafts.create_draft(store, Actor(TENANT, user), "請幫我確認週末的活動還有沒有名額", now=now,
                                    settings=settings).draft
        return created_and_told(store, settings, draft, now)

    warm, task = settled_task("U" + "4" * 32), settled_task("U" + "6" * 32)
    service.run(warm, retry_count=0)
    counter.take()
    result = service.run(task, retry_count=0)
    if result.http_status != 200:
        raise SystemExit(f"bench: reconcile answered {result.http_status} on the emulator")
    return _row("reconcile of a settled task (receipt already delivered)", counter.take(), 1,
                "one consistent read of the request and its operation: nothing to write")


def _memory_approval(settings, store, counter: _Counter) -> dict:
    from shared.clock import utc_now
    from shared.identity import Actor
    from shared.memory.service import submit_card
    from shared.memory.store import read_preference
    from shared.memory.tokens import issue_card, signing_keys

    keys = signing_keys(settings)

    def approve(user: str) -> str:
        actor = Actor(TENANT, user)
        revision = read_preference(store, actor).revision
        _, token = issue_card(keys, actor, revision=revision, dietary_type="vegan", operation="save",
                              now=utc_now(), ttl_seconds=300)
        counter.take()
        return submit_card(settings, store, actor, token).outcome

    approve("U" + "7" * 32)
    outcome = approve("U" + "8" * 32)
    if outcome != "memory_saved":
        raise SystemExit(f"bench: the approval answered {outcome} on the emulator")
    return _row("memory approval (同意記住, functions/memory)", counter.take(), 3,
                "one transaction: Begin, one read of the preference and the card's use, Commit")


def table(rows: list[dict]) -> str:
    """Markdown: operation, RPCs counted, by method, the minimum argued in docs/benchmarks.md and why."""
    lines = ["| operation | RPCs | by method | minimum (google-cloud-firestore 2.34) | the minimum is |",
             "|---|---|---|---|---|"]
    lines += [f"| {r['operation']} | {r['rpcs']} | "
              f"{', '.join(f'{name} {n}' for name, n in r['by_method'].items())} | {r['minimum']} | "
              f"{r['minimum_why']} |" for r in rows]
    return "\n".join(lines)
