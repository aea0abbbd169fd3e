"""Review findings on the handoff flow: per-purpose task names, replies of unknown outcome, a cancel
during "checking", and non-ASCII card references."""
from __future__ import annotations

import time
from datetime import datetime, timedelta, timezone

import pytest

from shared import inbox
from shared.context import EventContext
from shared.handoff import cards, drafts, flow, notify, records, worker
from shared.handoff.reconcile import RELAY, REQUEUE, UNKNOWN_OUTCOME, ReconcileService, ReconcileTask
from shared.handoff.requests import create_request
from shared.identity import Actor
from shared.queue.embedded import EmbeddedQueue
from shared.store.sqlite import SqliteStore, path_from_url
from shared.wiring import line_gateway
from tests.conftest import FixedClock, all_text, line_body, postback_event, sign

NOW = datetime(2026, 11, 30, 4, 0, tzinfo=timezone.utc)
PUSH = "/v2/bot/message/push"
REPLY = "/v2/bot/message/reply"


def accepted_pushes(standin) -> list[dict]:
    return [c for c in standin.calls() if c["path"] == PUSH and c["status"] == 200]


def reconcile_service(settings, clock) -> ReconcileService:
    path = path_from_url(settings.store_url)
    return ReconcileService(settings, SqliteStore(path, deadline_seconds=2.0),
                            SqliteStore(path, deadline_seconds=2.0, read_only=True), line_gateway(settings),
                            clock=clock)


def new_draft(store, actor, settings, now=NOW):
    return drafts.create_draft(store, actor, "想參加週六的社區走讀", now=now, settings=settings).draft


def create_by_reply(store, settings, draft, event, now=NOW):
    return create_request(store, draft.operation, draft.content_hash, now=now, tz=settings.tz, source="webhook",
                          notice_owner=notify.reply_owner(event), lease_seconds=settings.event_lease_seconds,
                          event_id=event)


def inbox_event(store, settings, event, *, attempted: bool, outcome: str | None):
    """An inbox document for ``event`` as the webhook leaves it (``outcome`` None: not finished)."""
    claim = inbox.claim_event(store, settings.tenant_id, event, now=NOW, lease_seconds=settings.event_lease_seconds)
    if attempted:
        inbox.mark_reply_attempted(store, settings.tenant_id, event, claim.attempt, now=NOW)
    if outcome is not None:
        inbox.mark_done(store, settings.tenant_id, event, claim.attempt, now=NOW, outcome=outcome)


@pytest.fixture
def queue(tmp_path):
    return EmbeddedQueue(str(tmp_path / "queue.sqlite3"), queue_name="handoff-reconcile",
                         target_url="http://127.0.0.1:9/", auth_token="t")


# ---- 1. one task name per purpose ------------------------------------------------------------

def test_reconcile_task_names_differ_by_purpose_and_event_but_are_deterministic(store, actor, settings):
    draft = new_draft(store, actor, settings)
    op, digest = draft.operation, draft.content_hash
    names = {ReconcileTask(op, digest, UNKNOWN_OUTCOME, "E1").task_name,
             ReconcileTask(op, digest, UNKNOWN_OUTCOME, "E2").task_name,
             ReconcileTask(op, digest, RELAY, tag="E1").task_name,
             ReconcileTask(op, digest, RELAY, tag="E2").task_name,
             ReconcileTask(op, digest, REQUEUE, tag="created|reply:E1|t1").task_name,
             ReconcileTask(op, digest, REQUEUE, tag="created|push|t2").task_name}
    assert len(names) == 6
    assert all(name.startswith("reconcile-") and op.idempotency_key not in name for name in names)
    again = ReconcileTask(op, digest, RELAY, tag="E1")
    assert again.task_name == ReconcileTask.from_payload(again.payload()).task_name


def test_flow_checking_after_a_relay_still_queues_its_own_check(make_settings, store, actor, queue):
    settings = make_settings(LOCAL_FAULTS="BEFORE_WRITE")
    plain = make_settings()
    line = line_gateway(plain)

    def ctx(event, s, now=NOW):
        return EventContext(s, store, line, now, actor, event, time.monotonic() + 1.8, queue=queue)

    draft = new_draft(store, actor, plain)
    confirm = cards.sign_reference(plain, cards.CONFIRM, draft.operation, draft.content_hash, draft.expires_at)
    flow.handle_postback(ctx("E1", plain), confirm)  # created; relay queued
    checking = flow.handle_postback(ctx("E2", settings, NOW + timedelta(seconds=1)), confirm)
    assert "正在確認" in checking.messages[0].text
    relay = ReconcileTask(draft.operation, draft.content_hash, RELAY, tag="E1")
    check = ReconcileTask(draft.operation, draft.content_hash, UNKNOWN_OUTCOME, "E2")
    assert queue.task(relay.task_name).payload["reason"] == RELAY
    assert queue.task(check.task_name).payload["reply_event_id"] == "E2"


def test_worker_requeue_after_an_ended_task_queues_again_for_the_new_claim(store, actor, settings, queue):
    draft = new_draft(store, actor, settings)
    create_by_reply(store, settings, draft, "E1")
    later = NOW + timedelta(seconds=settings.event_lease_seconds + 5)
    assert worker.requeue_pending(settings, store, queue, now=later) == 1
    assert worker.requeue_pending(settings, store, queue, now=later) == 1  # a second worker: same name
    assert sum(queue.counts().values()) == 1
    # The push claimed the notice (new claim) and its process died: the next start queues anew.
    notify.claim_notice(store, records.OPERATIONS, draft.operation, notify.PUSH_OWNER, now=later,
                        lease_seconds=settings.event_lease_seconds)
    worker.requeue_pending(settings, store, queue, now=later + timedelta(seconds=60))
    assert sum(queue.counts().values()) == 2


# ---- 2. a reply of unknown outcome is never blindly followed by a push --------------------------

@pytest.mark.parametrize("attempted,outcome,pushed,notice_state", [
    (True, "reply_unknown", False, "reply_unknown"),
    (True, None, False, "reply_unknown"),          # died after starting the reply
    (True, "replied", False, "delivered"),         # told; only "delivered" was not written
    (True, "reply_failed", True, "delivered"),     # LINE refused: definitely not told
    (False, None, True, "delivered"),              # killed after the commit, before the reply
])
def test_reconcile_relay_reads_the_owner_reply_before_pushing(store, actor, settings, line_standin, attempted,
                                                              outcome, pushed, notice_state):
    draft = new_draft(store, actor, settings)
    create_by_reply(store, settings, draft, "E1")
    inbox_event(store, settings, "E1", attempted=attempted, outcome=outcome)
    later = FixedClock(NOW + timedelta(seconds=settings.event_lease_seconds + 1))
    result = reconcile_service(settings, later).run(
        ReconcileTask(draft.operation, draft.content_hash, RELAY, tag="E1"), retry_count=0)
    assert result.http_status == 200
    assert len(accepted_pushes(line_standin)) == (1 if pushed else 0)
    assert store.get(records.OPERATIONS, draft.operation.doc_id)["notice_state"] == notice_state


def test_webhook_failed_reply_releases_the_notice_so_the_check_pushes_now(webhook_service, line_standin, clock):
    settings, store = webhook_service.settings, webhook_service.store
    actor = Actor(settings.tenant_id, "U" + "a" * 32)
    draft = new_draft(store, actor, settings, now=clock())
    data = "handoff:" + cards.sign_reference(settings, cards.CONFIRM, draft.operation, draft.content_hash,
                                             draft.expires_at)
    line_standin.fail_next(REPLY, 400)
    body = line_body(postback_event(data, user_id=actor.user_id, event_id="01E2" + "0" * 22))
    assert webhook_service.handle(body.decode(), sign(body, settings.line_channel_secret)).status == 200
    op_doc = store.get(records.OPERATIONS, draft.operation.doc_id)
    assert op_doc["notice_state"] == "pending"
    # E1 had been told "checking"; its check runs at once and need not wait out E2's lease.
    result = reconcile_service(settings, clock).run(
        ReconcileTask(draft.operation, draft.content_hash, UNKNOWN_OUTCOME, "E1"), retry_count=0)
    assert (result.http_status, result.detail.get("notice")) == (200, "pushed")
    assert len(accepted_pushes(line_standin)) == 1


# ---- 3. a cancel during "checking" ------------------------------------------------------------

def test_reconcile_not_found_after_user_cancel_says_it_was_cancelled(store, actor, settings, line_standin):
    draft = new_draft(store, actor, settings)
    drafts.cancel_draft(store, draft.operation, draft.content_hash, now=NOW)
    result = reconcile_service(settings, FixedClock(NOW + timedelta(seconds=2))).run(
        ReconcileTask(draft.operation, draft.content_hash, UNKNOWN_OUTCOME, "E1"), retry_count=0)
    assert (result.outcome, result.http_status) == ("not_created", 200)
    assert result.detail["reason"] == "cancelled_by_user"
    [push] = accepted_pushes(line_standin)
    text = all_text(push["body"]["messages"])
    assert "取消" in text and "沒有登記" not in text and "重新輸入" not in text
    assert store.query(records.REQUESTS) == []


# ---- 4. non-ASCII card references ----------------------------------------------------------------

def test_cards_full_width_digits_are_refused_kindly(store, actor, settings):
    draft = new_draft(store, actor, settings)
    good = cards.sign_reference(settings, cards.CONFIRM, draft.operation, draft.content_hash, draft.expires_at)
    parts = good.split(".")
    full_width = ".".join(parts[:4] + ["１２３", "x"])
    for data in (full_width, ".".join(parts[:4] + ["１２３", parts[5]])):
        with pytest.raises(cards.CardRefused) as refused:
            cards.verify_reference(settings, actor, data)
        assert refused.value.reason == "malformed"
