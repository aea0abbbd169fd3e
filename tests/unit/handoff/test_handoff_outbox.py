"""The notification outbox (claims, retry keys) and the start-up re-queue."""
from __future__ import annotations

import os
import uuid
from datetime import datetime, timedelta, timezone

from shared.handoff import drafts, notify, records, worker
from shared.handoff.records import Operation
from shared.handoff.requests import create_request
from shared.identity import Actor
from shared.queue.embedded import EmbeddedQueue
from shared.store.sqlite import path_from_url
from tests.unit.handoff.conftest import OTHER_USER

NOW = datetime(2026, 11, 30, 4, 0, tzinfo=timezone.utc)


def pending_doc(owner: str, until: datetime) -> dict:
    return {"notice_state": notify.PENDING, "notice_owner": owner, "notice_claim_until": until.isoformat()}


def test_outbox_retry_key_is_a_deterministic_uuid_per_operation_and_purpose(actor):
    operation = Operation(actor, "0" * 32)
    key = operation.retry_key()
    assert uuid.UUID(key).version == 5
    assert Operation(actor, "0" * 32).retry_key() == key
    assert operation.retry_key("needs_human_followup") != key
    assert Operation(Actor(actor.tenant_id, OTHER_USER), "0" * 32).retry_key() != key
    assert Operation(actor, "1" * 32).retry_key() != key


def test_outbox_claim_rules():
    live, over = NOW + timedelta(seconds=5), NOW - timedelta(seconds=1)
    claim = notify.try_claim
    assert claim(None, "push", now=NOW, lease_seconds=30)[0] is notify.Claim.NO_NOTICE
    assert claim({"notice_state": "delivered"}, "push", now=NOW, lease_seconds=30)[0] is notify.Claim.DELIVERED
    assert claim(pending_doc("reply:A", live), "push", now=NOW, lease_seconds=30)[0] is notify.Claim.HELD
    assert claim(pending_doc("reply:A", live), "reply:B", now=NOW, lease_seconds=30)[0] is notify.Claim.HELD
    decision, updated = claim(pending_doc("reply:A", over), "push", now=NOW, lease_seconds=30)
    assert decision is notify.Claim.CLAIMED and updated["notice_owner"] == "push"
    assert claim(pending_doc("reply:A", live), "reply:A", now=NOW, lease_seconds=30)[0] is notify.Claim.CLAIMED
    assert claim(pending_doc("reply:A", live), "push", now=NOW, lease_seconds=30,
                 void_owner="reply:A")[0] is notify.Claim.CLAIMED


def test_outbox_mark_delivered_is_idempotent(store, actor, settings):
    draft = drafts.create_draft(store, actor, "需求", now=NOW, settings=settings).draft
    create_request(store, draft.operation, draft.content_hash, now=NOW, tz=settings.tz, source="webhook",
                   notice_owner="reply:E", lease_seconds=30)
    assert notify.mark_delivered(store, records.OPERATIONS, draft.operation, "reply:E", now=NOW) is True
    assert notify.mark_delivered(store, records.OPERATIONS, draft.operation, "push", now=NOW) is False
    assert store.get(records.OPERATIONS, draft.operation.doc_id)["notice_delivered_by"] == "reply:E"


def test_outbox_requeue_queues_undelivered_notices_once_after_the_reply_lease(store, actor, settings):
    undelivered = drafts.create_draft(store, actor, "沒送達的", now=NOW, settings=settings).draft
    create_request(store, undelivered.operation, undelivered.content_hash, now=NOW, tz=settings.tz,
                   source="webhook", notice_owner="reply:E1", lease_seconds=30)
    told = drafts.create_draft(store, actor, "已告知的", now=NOW, settings=settings).draft
    create_request(store, told.operation, told.content_hash, now=NOW, tz=settings.tz, source="webhook",
                   notice_owner="reply:E2", lease_seconds=30)
    notify.mark_delivered(store, records.OPERATIONS, told.operation, "reply:E2", now=NOW)
    queue = EmbeddedQueue(path_from_url(settings.store_url), queue_name="handoff-reconcile",
                          target_url="http://127.0.0.1:9/", auth_token="t")
    now = NOW + timedelta(seconds=10)
    assert worker.requeue_pending(settings, store, queue, now=now) == 1
    op_doc = store.get(records.OPERATIONS, undelivered.operation.doc_id)
    round_tag = worker.sweep_round(settings, now)
    task = queue.task(worker.requeue_task(undelivered.operation, op_doc, round_tag).task_name)
    assert task.payload["reason"] == "requeue" and task.payload["idempotency_key"] == undelivered.operation.idempotency_key
    worker.requeue_pending(settings, store, queue, now=now)  # a second worker start: same name, no new task
    assert sum(queue.counts().values()) == 1


def test_outbox_requeue_delay_waits_for_the_reply_lease():
    doc = pending_doc("reply:E", NOW + timedelta(seconds=12))
    assert abs(worker.requeue_delay_seconds(doc, NOW) - 12) < 1e-6
    assert worker.requeue_delay_seconds(pending_doc("push", NOW + timedelta(seconds=12)), NOW) == 0.0


def test_outbox_background_start_runs_once_per_process():
    calls = []
    start = worker.BackgroundStart(lambda: calls.append(os.getpid()))
    assert start.ensure_started() is True
    assert start.ensure_started() is False
    start.after_fork()  # what the at-fork hook does in a new worker: starts again there
    assert calls == [os.getpid(), os.getpid()]


def test_outbox_background_start_failure_is_contained():
    def boom() -> None:
        raise RuntimeError("no queue")

    assert worker.BackgroundStart(boom).ensure_started() is True
