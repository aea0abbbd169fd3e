"""Durable confirmations (docs/design.md §4, §11): the draft records the tap before the create, expiry is
judged at the tap, and the sweep re-queues every confirmation still unsettled, once per retry
window, however long reconcile was down. Real SQLite file, real embedded queue, LINE stand-in."""
from __future__ import annotations

import json
import time
from dataclasses import replace
from datetime import datetime, timedelta, timezone

import pytest

from shared.context import EventContext
from shared.handoff import drafts, flow, records, requeue
from shared.handoff.reconcile import ReconcileService, ReconcileTask
from shared.queue.embedded import EmbeddedQueue
from shared.store.sqlite import SqliteStore, path_from_url
from shared.wiring import line_gateway
from tests.conftest import FixedClock

NOW = datetime(2026, 11, 30, 4, 0, tzinfo=timezone.utc)
TEXT = "新需求：想參加週六的社區走讀，需要輪椅協助"


@pytest.fixture
def settings(make_settings):
    return make_settings(LOCAL_DRAFT_TTL_SECONDS="4", LOCAL_FAULTS="BEFORE_WRITE",
                         LOCAL_QUEUE_MIN_BACKOFF_SECONDS="1", LOCAL_QUEUE_MAX_BACKOFF_SECONDS="4",
                         LOCAL_QUEUE_MAX_ATTEMPTS="3", LOCAL_RECONCILE_DELAY_SECONDS="1")


@pytest.fixture
def queue(settings):
    q = EmbeddedQueue(path_from_url(settings.store_url), queue_name="handoff-reconcile",
                      target_url="http://127.0.0.1:9/", auth_token="t")
    yield q
    q.close()


def ctx(settings, store, actor, queue, now, event_id="EV1") -> EventContext:
    return EventContext(settings=settings, store=store, line=line_gateway(settings), now=now, actor=actor,
                        webhook_event_id=event_id, deadline_monotonic=time.monotonic() + 1.8, queue=queue)


def card_then_tap(settings, store, actor, queue, tap_at: datetime, event_id="EV1") -> tuple[str, str]:
    """A card at NOW, 確認送出 at ``tap_at`` (the create meets BEFORE_WRITE); returns (reference, answer)."""
    card = flow.match_text(ctx(settings, store, actor, queue, NOW), TEXT).messages[0].to_dict()
    data = {b["action"]["label"]: b["action"]["data"] for b in card["contents"]["footer"]["contents"]}["確認送出"]
    rest = data.split(":", 1)[1]
    reply = flow.handle_postback(ctx(settings, store, actor, queue, tap_at, event_id), rest)
    return rest, json.dumps([m.to_dict() for m in reply.messages], ensure_ascii=False)


def reconcile_service(settings, clock) -> ReconcileService:
    path = path_from_url(settings.store_url)
    no_faults = type(settings)(**{**settings.__dict__, "faults": frozenset()})
    return ReconcileService(no_faults, SqliteStore(path, deadline_seconds=2.0),
                            SqliteStore(path, deadline_seconds=2.0, read_only=True), line_gateway(settings),
                            clock=clock)


def test_confirmation_tap_is_recorded_on_the_draft_before_the_create(settings, store, actor, queue):
    rest, answer = card_then_tap(settings, store, actor, queue, NOW + timedelta(seconds=3.2))
    assert "正在確認是否已登記" in answer
    [draft] = store.query(records.DRAFTS)
    assert draft["status"] == drafts.OPEN and draft["confirm_state"] == drafts.CONFIRMING
    assert draft["confirm_requested_at"] == (NOW + timedelta(seconds=3.2)).isoformat()
    assert draft["confirm_event"] == "EV1"
    assert store.query(records.REQUESTS) == []  # BEFORE_WRITE: nothing written by the create


def test_confirmation_expiry_judged_at_the_tap_not_at_reconcile(settings, store, actor, queue, line_standin):
    # TTL 4 s; tapped at 3.2 s; the first write fails; reconcile runs at 10 s, well past the TTL.
    rest, _ = card_then_tap(settings, store, actor, queue, NOW + timedelta(seconds=3.2))
    [draft] = store.query(records.DRAFTS)
    operation = records.Operation(actor, draft["idempotency_key"])
    task = ReconcileTask(operation, draft["content_hash"], "unknown_outcome", "EV1")  # no tapped_at in it
    result = reconcile_service(settings, FixedClock(NOW + timedelta(seconds=10))).run(task, retry_count=0)
    assert result.outcome == "created"
    [request] = store.query(records.REQUESTS)
    assert request["idempotency_key"] == draft["idempotency_key"]


def test_confirmation_tapped_after_expiry_is_not_recorded(settings, store, actor, queue):
    card = flow.match_text(ctx(settings, store, actor, queue, NOW), TEXT).messages[0].to_dict()
    data = {b["action"]["label"]: b["action"]["data"] for b in card["contents"]["footer"]["contents"]}["確認送出"]
    late = NOW + timedelta(seconds=4)  # the expiry is exclusive
    operation = records.Operation(actor, store.query(records.DRAFTS)[0]["idempotency_key"])
    assert drafts.mark_confirming(store, operation, store.query(records.DRAFTS)[0]["content_hash"], now=late,
                                  event_id="EV9") is False
    assert "confirm_state" not in store.query(records.DRAFTS)[0]
    assert data.startswith("handoff:")


def test_confirmation_task_tapped_at_decides_expiry_when_the_draft_has_no_record(settings, store, actor):
    draft = drafts.create_draft(store, actor, "想參加週六的社區走讀", now=NOW, settings=settings).draft
    task = ReconcileTask(draft.operation, draft.content_hash, "unknown_outcome", "EV2",
                         tapped_at=(NOW + timedelta(seconds=3)).isoformat())
    assert ReconcileTask.from_payload(task.payload()) == task
    result = reconcile_service(settings, FixedClock(NOW + timedelta(seconds=30))).run(task, retry_count=0)
    assert result.outcome == "created"


def test_sweep_requeues_unsettled_confirmation_once_per_retry_window(settings, store, actor, queue):
    card_then_tap(settings, store, actor, queue, NOW + timedelta(seconds=1))
    window = settings.queue_retry_window_seconds + settings.reconcile_delay_seconds
    assert window == 1 + 2 + 1
    webhook_task = sum(queue.counts().values())
    # inside the first window the webhook's own task has its chance: the sweep adds nothing
    requeue.requeue_pending(settings, store, queue, now=NOW + timedelta(seconds=1 + window / 2))
    assert sum(queue.counts().values()) == webhook_task
    later = NOW + timedelta(seconds=1 + window * 3)
    requeue.requeue_pending(settings, store, queue, now=later)
    requeue.requeue_pending(settings, store, queue, now=later + timedelta(seconds=0.1))  # same round
    assert sum(queue.counts().values()) == webhook_task + 1
    requeue.requeue_pending(settings, store, queue, now=later + timedelta(seconds=window))  # next round
    assert sum(queue.counts().values()) == webhook_task + 2
    [draft] = store.query(records.DRAFTS)
    swept = [t for t in _tasks(queue) if (t.payload.get("tag") or "").startswith("sweep|")]
    assert {t.payload["tapped_at"] for t in swept} == {draft["confirm_requested_at"]}
    assert {t.payload["reply_event_id"] for t in swept} == {"EV1"}


def test_sweep_skips_confirmations_settled_by_a_request_or_a_followup(settings, store, actor, queue, line_standin):
    card_then_tap(settings, store, actor, queue, NOW + timedelta(seconds=1), event_id="EV1")
    [draft] = store.query(records.DRAFTS)
    operation = records.Operation(actor, draft["idempotency_key"])
    task = ReconcileTask(operation, draft["content_hash"], "unknown_outcome", "EV1")
    reconcile_service(settings, FixedClock(NOW + timedelta(seconds=2))).run(task, retry_count=0)
    assert len(store.query(records.REQUESTS)) == 1
    before = sum(queue.counts().values())
    requeue.requeue_pending(settings, store, queue, now=NOW + timedelta(hours=1))
    confirmations = [t for t in _tasks(queue) if (t.payload.get("tag") or "").startswith("sweep|")]
    assert confirmations == [] and sum(queue.counts().values()) >= before


def _tasks(queue: EmbeddedQueue):
    import sqlite3

    with sqlite3.connect(queue.path) as conn:
        names = [row[0] for row in conn.execute("SELECT name FROM queue_tasks")]
    return [queue.task(name) for name in names]


def test_confirmation_being_checked_then_unsent_settles_not_created_and_says_withdrawn(settings, store, actor, queue,
                                                                                     line_standin):
    card = flow.match_text(replace(ctx(settings, store, actor, queue, NOW), message_id="M-1"), TEXT)
    data = {b["action"]["label"]: b["action"]["data"]
            for b in card.messages[0].to_dict()["contents"]["footer"]["contents"]}["確認送出"]
    flow.handle_postback(ctx(settings, store, actor, queue, NOW + timedelta(seconds=1)), data.split(":", 1)[1])
    flow.handle_unsend(ctx(settings, store, actor, queue, NOW + timedelta(seconds=2)), "M-1")
    [draft] = store.query(records.DRAFTS)
    assert draft["status"] == drafts.WITHDRAWN and draft["text"] is None
    assert requeue.unsettled_confirmations(settings, store, NOW + timedelta(hours=1)) == []  # nothing to chase
    operation = records.Operation(actor, draft["idempotency_key"])
    task = ReconcileTask(operation, draft["content_hash"], "unknown_outcome", "EV1")
    result = reconcile_service(settings, FixedClock(NOW + timedelta(seconds=3))).run(task, retry_count=0)
    assert result.outcome == "not_created" and store.query(records.REQUESTS) == []
    [push] = [c for c in line_standin.calls() if c["path"] == "/v2/bot/message/push" and c["status"] == 200]
    assert "收回" in json.dumps(push["body"], ensure_ascii=False)
