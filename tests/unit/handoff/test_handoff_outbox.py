"""The notification outbox (claims, retry keys) and the start-up re-queue."""
from __future__ import annotations

import json
import os
import uuid
from datetime import datetime, timedelta, timezone

import pytest

from shared import inbox
from shared.deferred_events.task import QueuedEventTask
from shared.deferred_events.worker import QueuedEventWorker
from shared.handoff import cards, drafts, notify, records, requeue, wording
from shared.handoff.reconcile import RELAY, UNKNOWN_OUTCOME, ReconcileService, ReconcileTask
from shared.handoff.records import Operation
from shared.handoff.requests import create_request
from shared.identity import Actor
from shared.outbox import send_push
from shared.push_count import Flow, PushCounter
from shared.queue import background
from shared.queue.embedded import EmbeddedQueue
from shared.store.sqlite import SqliteStore, path_from_url
from shared.webhook.service import WebhookService
from shared.wiring import line_gateway
from tests.codes_support import shown_of
from tests.conftest import all_text, line_body, postback_event, sign, text_event
from tests.handoff_support import card_postbacks
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
    assert claim(None, "push", now=NOW, lease_seconds=30)[0] is notify.NoticeClaim.NO_NOTICE
    assert claim({"notice_state": "delivered"}, "push", now=NOW, lease_seconds=30)[0] is notify.NoticeClaim.DELIVERED
    assert claim(pending_doc("reply:A", live), "push", now=NOW, lease_seconds=30)[0] is notify.NoticeClaim.HELD
    assert claim(pending_doc("reply:A", live), "reply:B", now=NOW, lease_seconds=30)[0] is notify.NoticeClaim.HELD
    decision, updated = claim(pending_doc("reply:A", over), "push", now=NOW, lease_seconds=30)
    assert decision is notify.NoticeClaim.CLAIMED and updated["notice_owner"] == "push"
    assert claim(pending_doc("reply:A", live), "reply:A", now=NOW, lease_seconds=30)[0] is notify.NoticeClaim.CLAIMED
    assert claim(pending_doc("reply:A", live), "push", now=NOW, lease_seconds=30,
                 void_owner="reply:A")[0] is notify.NoticeClaim.CLAIMED


def test_outbox_notice_record_reads_the_stored_fields():
    until = NOW + timedelta(seconds=5)
    doc = {**pending_doc("reply:E1", until), "notice_kind": "receipt", "notice_retry_key": "k",
           "notice_taken_from": "push"}
    notice = notify.Notice.of(doc)
    assert notice == notify.Notice("receipt", notify.NoticeState.PENDING, "reply:E1", until, "k", "push")
    assert notice.live_claim(NOW) and not notice.live_claim(until)
    assert notice.claim_delay_seconds(NOW) == 5.0 and notice.held_by("reply:E1") and not notice.held_by("push")
    assert notify.reply_event_of(notice.owner) == "E1" and notify.reply_event_of(notice.taken_from) is None
    assert notify.Notice.of({"notice_owner": "push"}) is None and notify.Notice.of(None) is None


def test_outbox_unknown_stored_state_is_settled_never_claimed():
    doc = {**pending_doc("reply:A", NOW - timedelta(seconds=1)), "notice_state": "from_a_newer_version"}
    assert notify.Notice.of(doc).state.settled
    assert notify.try_claim(doc, "push", now=NOW, lease_seconds=30)[0] is notify.NoticeClaim.DELIVERED


def test_outbox_fields_are_stored_as_plain_strings():
    fields = notify.notice_fields("receipt", "push", now=NOW, lease_seconds=30, retry_key="k")
    assert type(fields["notice_state"]) is str and fields["notice_state"] == "pending"


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
    assert requeue.requeue_pending(settings, store, queue, now=now) == 1
    op_doc = store.get(records.OPERATIONS, undelivered.operation.doc_id)
    round_tag = requeue.sweep_round(settings, now)
    task = queue.task(requeue.requeue_task(undelivered.operation, op_doc, round_tag).task_name)
    assert task.payload["reason"] == "requeue" and task.payload["idempotency_key"] == undelivered.operation.idempotency_key
    requeue.requeue_pending(settings, store, queue, now=now)  # a second worker start: same name, no new task
    assert sum(queue.counts().values()) == 1


def test_outbox_requeue_delay_waits_for_the_reply_lease():
    doc = pending_doc("reply:E", NOW + timedelta(seconds=12))
    assert abs(requeue.requeue_delay_seconds(doc, NOW) - 12) < 1e-6
    assert requeue.requeue_delay_seconds(pending_doc("push", NOW + timedelta(seconds=12)), NOW) == 0.0


def test_outbox_background_start_runs_once_per_process():
    calls = []
    start = background.BackgroundStart(lambda: calls.append(os.getpid()))
    assert start.ensure_started() is True
    assert start.ensure_started() is False
    start.after_fork()  # what the at-fork hook does in a new worker: starts again there
    assert calls == [os.getpid(), os.getpid()]


def test_outbox_background_start_failure_is_contained():
    def boom() -> None:
        raise RuntimeError("no queue")

    assert background.BackgroundStart(boom).ensure_started() is True


def test_outbox_requeue_after_an_ended_task_queues_again_for_the_new_claim(store, actor, settings, tmp_path):
    queue = EmbeddedQueue(str(tmp_path / "queue.sqlite3"), queue_name="handoff-reconcile",
                          target_url="http://127.0.0.1:9/", auth_token="t")
    draft = drafts.create_draft(store, actor, "想參加週六的社區走讀", now=NOW, settings=settings).draft
    create_request(store, draft.operation, draft.content_hash, now=NOW, tz=settings.tz, source="webhook",
                   notice_owner=notify.reply_owner("E1"), lease_seconds=settings.event_lease_seconds,
                   event_id="E1")
    later = NOW + timedelta(seconds=settings.event_lease_seconds + 5)
    assert requeue.requeue_pending(settings, store, queue, now=later) == 1
    assert requeue.requeue_pending(settings, store, queue, now=later) == 1  # a second worker: same name
    assert sum(queue.counts().values()) == 1
    # The push claimed the notice (new claim) and its process died: the next start queues anew.
    notify.claim_notice(store, records.OPERATIONS, draft.operation, notify.PUSH_OWNER, now=later,
                        lease_seconds=settings.event_lease_seconds)
    requeue.requeue_pending(settings, store, queue, now=later + timedelta(seconds=60))
    assert sum(queue.counts().values()) == 2


def test_outbox_failed_reply_releases_the_notice_so_the_check_pushes_now(webhook_service, line_standin, clock):
    settings, store = webhook_service.settings, webhook_service.store
    actor = Actor(settings.tenant_id, "U" + "a" * 32)
    draft = drafts.create_draft(store, actor, "想參加週六的社區走讀", now=clock(), settings=settings).draft
    data = "handoff:" + cards.sign_reference(settings, cards.CONFIRM, draft.operation, draft.content_hash,
                                             draft.expires_at)
    line_standin.fail_next("/v2/bot/message/reply", 400)
    body = line_body(postback_event(data, user_id=actor.user_id, event_id="01E2" + "0" * 22))
    assert webhook_service.handle(body.decode(), sign(body, settings.line_channel_secret)).status == 200
    op_doc = store.get(records.OPERATIONS, draft.operation.doc_id)
    assert op_doc["notice_state"] == "pending"
    # E1 had been told "checking"; its check runs at once and need not wait out E2's lease.
    path = path_from_url(settings.store_url)
    reconcile = ReconcileService(settings, SqliteStore(path, deadline_seconds=2.0),
                                 SqliteStore(path, deadline_seconds=2.0, read_only=True),
                                 line_gateway(settings), clock=clock)
    result = reconcile.run(
        ReconcileTask(draft.operation, draft.content_hash, UNKNOWN_OUTCOME, "E1"), retry_count=0)
    assert (result.http_status, result.detail.get("notice")) == (200, "pushed")
    assert len([c for c in line_standin.calls() if c["path"] == "/v2/bot/message/push" and c["status"] == 200]) == 1


def test_outbox_claim_after_a_push_claimed_is_held_for_every_other_owner():
    over = NOW - timedelta(seconds=1)
    claim = notify.try_claim
    _, pushed = claim(pending_doc("reply:A", over), notify.PUSH_OWNER, now=NOW, lease_seconds=1)
    assert pushed["notice_push_claimed"] is True
    expired = {**pushed, "notice_claim_until": over.isoformat()}
    # the push may have reached the user unrecorded: a reply (no retry key) must not tell it again
    for owner in ("reply:A", "reply:B", "queue:1"):
        assert claim(expired, owner, now=NOW, lease_seconds=30)[0] is notify.NoticeClaim.HELD, owner
    decision, again = claim(expired, notify.PUSH_OWNER, now=NOW, lease_seconds=30)
    assert decision is notify.NoticeClaim.CLAIMED and again["notice_taken_from"] == "reply:A"
    # a notice written already owned by the push (reconcile's own create) is the same
    born_pushed = notify.notice_fields("receipt", notify.PUSH_OWNER, now=over - timedelta(seconds=60),
                                       lease_seconds=1, retry_key="k")
    assert claim(born_pushed, "reply:A", now=NOW, lease_seconds=30)[0] is notify.NoticeClaim.HELD
    born_replied = notify.notice_fields("receipt", "reply:A", now=over - timedelta(seconds=60),
                                        lease_seconds=1, retry_key="k")
    assert claim(born_replied, "reply:B", now=NOW, lease_seconds=30)[0] is notify.NoticeClaim.CLAIMED


def receipts_told(line_standin, request_id: str) -> list[dict]:
    """Accepted replies and pushes whose text carries the request id."""
    return [c for c in line_standin.calls() if c["status"] == 200
            and c["path"] in ("/v2/bot/message/reply", "/v2/bot/message/push")
            and request_id in str(c["body"].get("messages"))]


def pushed_unrecorded(settings, store, clock, line_standin, event_id: str):
    """A confirmation created by webhook event ``event_id`` (whose attempt then died), then a relay
    that claimed the notice, pushed the receipt (LINE accepted it) and died before "delivered";
    the clock ends past that push's lease. Returns (draft, request_id, the tapped card's data)."""
    actor = Actor(settings.tenant_id, "U" + "b" * 32)
    draft = drafts.create_draft(store, actor, "想報名週六的長輩健康操", now=clock(), settings=settings).draft
    created = create_request(store, draft.operation, draft.content_hash, now=clock(), tz=settings.tz,
                             source="webhook", notice_owner=notify.reply_owner(event_id),
                             lease_seconds=settings.event_lease_seconds, event_id=event_id)
    clock.at += timedelta(seconds=settings.event_lease_seconds + 1)
    assert notify.claim_notice(store, records.OPERATIONS, draft.operation, notify.PUSH_OWNER, now=clock(),
                               lease_seconds=settings.event_lease_seconds) is notify.NoticeClaim.CLAIMED
    message = wording.receipt_message(settings, created.receipt, variant="created")
    assert send_push(line_gateway(settings), actor.user_id, [message], retry_key=draft.operation.retry_key("receipt"),
                     timeout_seconds=5, counter=PushCounter(store, settings.tenant_id, clock),
                     flow=Flow.HANDOFF_NOTICE).error is None  # LINE accepted it
    assert len(receipts_told(line_standin, created.receipt.display_code.grouped)) == 1
    clock.at += timedelta(seconds=settings.event_lease_seconds + 1)  # the dead push's lease is over
    data = "handoff:" + cards.sign_reference(settings, cards.CONFIRM, draft.operation, draft.content_hash,
                                             draft.expires_at)
    return draft, created.receipt.display_code.grouped, data


def test_outbox_push_delivered_but_unrecorded_then_redelivery_tells_once(webhook_service, line_standin, clock):
    """A flapping store lock: once a push may have told the receipt, the confirmation's
    redelivery must not reply it again, and the sweep's keyed re-push is LINE's 409."""
    settings, store = webhook_service.settings, webhook_service.store
    event_id = "01F1" + "0" * 22
    draft, request_id, data = pushed_unrecorded(settings, store, clock, line_standin, event_id)
    body = line_body(postback_event(data, user_id=draft.operation.actor.user_id, event_id=event_id))
    assert webhook_service.handle(body.decode(), sign(body, settings.line_channel_secret)).status == 200
    assert len(receipts_told(line_standin, request_id)) == 1  # the redelivery said nothing more

    path = path_from_url(settings.store_url)
    reconcile = ReconcileService(settings, SqliteStore(path, deadline_seconds=2.0),
                                 SqliteStore(path, deadline_seconds=2.0, read_only=True),
                                 line_gateway(settings), clock=clock)
    op_doc = store.get(records.OPERATIONS, draft.operation.doc_id)
    result = reconcile.run(requeue.requeue_task(draft.operation, op_doc, "r1"), retry_count=0)
    assert (result.http_status, result.detail.get("notice")) == (200, "push_duplicate")
    assert len(receipts_told(line_standin, request_id)) == 1
    assert store.get(records.OPERATIONS, draft.operation.doc_id)["notice_state"] == notify.DELIVERED


def test_outbox_push_delivered_but_unrecorded_then_queued_confirmation_tells_once(webhook_service, line_standin,
                                                                                 clock):
    """The same, when the confirmation went to the queue (store busy): the queued-event worker runs
    the tap again and says nothing, and its inbox reads "not told" so no relay waits on it."""
    settings, store = webhook_service.settings, webhook_service.store
    event_id = "01F2" + "0" * 22
    draft, request_id, data = pushed_unrecorded(settings, store, clock, line_standin, event_id)
    raw = postback_event(data, user_id=draft.operation.actor.user_id, event_id=event_id)
    raw["timestamp"] = int(clock().timestamp() * 1000)
    assert inbox.claim_and_queue(store, settings.tenant_id, [(event_id, raw)], now=clock(), reason="store_busy",
                                 lease_seconds=settings.event_lease_seconds) == {event_id: "queued"}
    answer = QueuedEventWorker(settings, store, line_gateway(settings), clock=clock).run(
        QueuedEventTask(settings.tenant_id, event_id), retry_count=0)
    assert (answer.outcome, answer.http_status) == ("no_answer", 200)
    assert len(receipts_told(line_standin, request_id)) == 1
    assert inbox.reply_state(store, settings.tenant_id, event_id) is inbox.ReplyState.FAILED


def test_outbox_relay_fences_a_slow_attempt_that_never_started_its_reply(webhook_service, line_standin, clock):
    """A webhook attempt created the request and is still running (slow store) past the notice's
    lease: the relay pushes the receipt and fences that attempt, which can then neither reply nor
    queue its receipt answer; a redelivery of the tap is a duplicate. The user is told once."""
    settings, store = webhook_service.settings, webhook_service.store
    actor = Actor(settings.tenant_id, "U" + "c" * 32)
    event_id = "01F3" + "0" * 22
    draft = drafts.create_draft(store, actor, "社區路燈不亮", now=clock(), settings=settings).draft
    data = "handoff:" + cards.sign_reference(settings, cards.CONFIRM, draft.operation, draft.content_hash,
                                             draft.expires_at)
    raw = postback_event(data, user_id=actor.user_id, event_id=event_id)
    attempt = inbox.claim_event(store, settings.tenant_id, event_id, now=clock(),
                                lease_seconds=settings.event_lease_seconds, event=raw).attempt
    created = create_request(store, draft.operation, draft.content_hash, now=clock(), tz=settings.tz,
                             source="webhook", notice_owner=notify.reply_owner(event_id),
                             lease_seconds=settings.event_lease_seconds, event_id=event_id)
    clock.at += timedelta(seconds=settings.event_lease_seconds + 1)
    path = path_from_url(settings.store_url)
    reconcile = ReconcileService(settings, SqliteStore(path, deadline_seconds=2.0),
                                 SqliteStore(path, deadline_seconds=2.0, read_only=True),
                                 line_gateway(settings), clock=clock)
    result = reconcile.run(ReconcileTask(draft.operation, draft.content_hash, RELAY, tag=event_id), retry_count=0)
    assert (result.http_status, result.detail.get("notice")) == (200, "pushed")
    # the slow attempt wakes up: it may neither reply nor hand its receipt answer to the queue
    assert inbox.mark_reply_attempted(store, settings.tenant_id, event_id, attempt, now=clock()) is False
    assert inbox.queue_event(store, settings.tenant_id, event_id, attempt, event=raw, reason="reply_unrecorded",
                             now=clock(), answer=[{"type": "text", "text": "receipt"}]) is False
    body = line_body(raw)
    assert webhook_service.handle(body.decode(), sign(body, settings.line_channel_secret)).status == 200
    assert len(receipts_told(line_standin, created.receipt.display_code.grouped)) == 1
    doc = store.get(inbox.COLLECTION, f"{settings.tenant_id}:{event_id}")
    assert (doc["state"], doc["outcome"]) == ("done", inbox.EventOutcome.TOLD_BY_PUSH)


REPLY, PUSH = "/v2/bot/message/reply", "/v2/bot/message/push"
#: How the confirmation's reply ends with an unknown outcome: LINE's 5xx (before or after it showed
#: the receipt) or no answer within the reply's timeout (the stand-in answers after it, having shown it).
UNKNOWN_REPLIES = {
    "500": lambda standin: standin.fail_next(REPLY, 500),
    "500_after_processing": lambda standin: standin.fail_next(REPLY, 500, after_processing=True),
    "503": lambda standin: standin.fail_next(REPLY, 503),
    "timeout": lambda standin: standin.delay_next(REPLY, 0.8),  # the reply's timeout is 0.5 s here
}


@pytest.mark.parametrize("fault", list(UNKNOWN_REPLIES))
def test_outbox_receipt_reply_of_unknown_outcome_is_pushed_once_restated(make_settings, clock, line_standin, fault):
    """A confirmation's receipt reply whose outcome is unknown still reaches the resident: the relay
    the webhook queued pushes it once, with the receipt's retry key, in words that restate it; a
    second delivery of the relay and LINE's redelivery of the tap send nothing more."""
    settings = make_settings(LOCAL_LINE_TIMEOUT_SECONDS="0.5")
    path = path_from_url(settings.store_url)
    reconcile = ReconcileService(settings, SqliteStore(path, deadline_seconds=2.0),
                                 SqliteStore(path, deadline_seconds=2.0, read_only=True),
                                 line_gateway(settings), clock=clock)
    relayed: list[int] = []

    def deliver(url, raw, headers, timeout_seconds) -> int:
        result = reconcile.run(ReconcileTask.from_payload(json.loads(raw)),
                               retry_count=int(headers["X-CloudTasks-TaskRetryCount"]))
        relayed.append(result.http_status)
        return result.http_status

    queue = EmbeddedQueue(path, queue_name="handoff-reconcile", target_url="http://reconcile.invalid/",
                          auth_token=None, clock=clock, http=deliver, min_backoff_seconds=0.0, max_backoff_seconds=0.0)
    store = SqliteStore(path, deadline_seconds=2.0)
    webhook = WebhookService(settings, store, line_gateway(settings), clock=clock, queue=queue)
    user = "U" + "e" * 32
    card = text_event("新需求：社區路燈不亮，想請人來看看", user_id=user)
    body = line_body(card)
    assert webhook.handle(body.decode(), sign(body)).status == 200
    confirm = card_postbacks(line_standin, card["replyToken"])["確認送出"]
    tap = postback_event(confirm, user_id=user)
    UNKNOWN_REPLIES[fault](line_standin)
    body = line_body(tap)
    assert webhook.handle(body.decode(), sign(body)).body["events"] == ["done"]
    [request] = store.query(records.REQUESTS)
    [reply] = line_standin.wait_for(lambda c: c["path"] == REPLY and c["body"]["replyToken"] == tap["replyToken"])
    assert shown_of(request) in all_text(reply["body"]["messages"])  # the receipt was in the reply
    assert not [c for c in line_standin.calls() if c["path"] == PUSH]

    clock.at += timedelta(seconds=settings.event_lease_seconds + 2)  # the relay runs after the reply's lease
    while queue.dispatch_due(limit=10):
        pass
    [pushed] = [c for c in line_standin.calls() if c["path"] == PUSH and c["body"]["to"] == user]
    operation = records.Operation(Actor(settings.tenant_id, user), confirm.split(".")[2])
    assert (pushed["status"], pushed["headers"]["x-line-retry-key"]) == (200, operation.retry_key("receipt"))
    words = all_text(pushed["body"]["messages"])
    assert shown_of(request) in words and "再說一次" in words and "已登記" in words
    assert relayed == [200]

    relay = ReconcileTask(operation, request["content_hash"], RELAY, tag=tap["webhookEventId"])
    assert queue.task(relay.task_name).payload == relay.payload()  # the task the webhook queued
    assert reconcile.run(relay, retry_count=1).http_status == 200  # a second delivery of the relay
    body = line_body({**tap, "deliveryContext": {"isRedelivery": True}})
    assert webhook.handle(body.decode(), sign(body)).body["events"] == ["duplicate"]
    assert len([c for c in line_standin.calls() if c["path"] == PUSH]) == 1
    assert len([c for c in line_standin.calls() if c["path"] == REPLY and c["body"]["replyToken"] == tap["replyToken"]]) == 1
