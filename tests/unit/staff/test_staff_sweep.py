"""The staff sweep with an injected clock: a reminder fires once for an old request and never for a
taken one; needs_human_followup items are announced once. Real SQLite store, the real embedded queue
(not dispatching: its tasks are read back), pushes through the LINE stand-in."""
from __future__ import annotations

from datetime import timedelta

import pytest

from shared.config import Settings
from shared.handoff import drafts, notify, staff_outbox
from shared.handoff import records as handoff_records
from shared.handoff.reconcile import UNKNOWN_OUTCOME, ReconcileService, ReconcileTask
from shared.handoff.requests import create_request
from shared.handoff.requeue import sweep_round
from shared.identity import Actor
from shared.queue.embedded import EmbeddedQueue
from shared.staff import relay, reminders, transitions
from shared.staff.access import staff_member
from shared.staff.cards import TAKE, StaffReference
from shared.staff.service import StaffTaskService
from shared.store.sqlite import SqliteStore, path_from_url
from shared.wiring import line_gateway
from tests.codes_support import shown_of
from tests.conftest import all_text
from tests.unit.staff.conftest import GROUP, PUSH, STAFF, USER


class GroupSource:
    """The shape of line-bot-sdk's GroupSource that ``access`` reads."""

    type = "group"
    group_id = GROUP
    user_id = STAFF


@pytest.fixture
def queue(settings) -> EmbeddedQueue:
    return EmbeddedQueue(path_from_url(settings.store_url), queue_name=settings.queue_name,
                         target_url=settings.reconcile_function_url, auth_token=None)


def new_request(settings, store, clock, text: str) -> tuple[str, dict]:
    actor = Actor(settings.tenant_id, USER)
    draft = drafts.create_draft(store, actor, text, now=clock(), settings=settings).draft
    result = create_request(store, draft.operation, draft.content_hash, now=clock(), tz=settings.tz,
                            source="webhook", notice_owner=notify.reply_owner("ev"), lease_seconds=30,
                            staff_group_id=settings.staff_group_id)
    assert result.receipt is not None
    return draft.operation.doc_id, store.get(handoff_records.REQUESTS, draft.operation.doc_id)


def queued(settings, queue: EmbeddedQueue, store, notice_doc_id: str, now) -> bool:
    """Whether the queue holds the push task the sweep at ``now`` queued for this pending notice
    (by its deterministic name)."""
    doc = store.get(staff_outbox.NOTICES, notice_doc_id)
    tag = relay.requeue_tag(doc or {}, sweep_round(settings, now))
    return doc is not None and queue.task(relay.notice_task_name(notice_doc_id, tag)) is not None


def project_requeue(settings, store, queue, now) -> None:
    """The project sweep's staff re-queue query (``shared.sweep.REQUEUES``) at ``now``."""
    from shared.sweep import REQUEUES, Queues

    [staff] = [query for query in REQUEUES if query.name == "staff_requeued"]
    staff.run(settings, store, Queues(queue, None), now)


def test_staff_sweep_old_request_reminded_once_taken_one_not(settings, store, queue, clock, line_standin):
    start = clock.at
    old_id, old = new_request(settings, store, clock, "想參加週六的社區走讀，需要輪椅協助")
    taken_id, taken = new_request(settings, store, clock, "想借用活動中心的場地")
    staff = staff_member(settings, GroupSource())
    assert transitions.apply(store, settings.tenant_id, StaffReference(TAKE, taken_id, 0), staff,
                             now=start + timedelta(seconds=60)).status == transitions.APPLIED

    clock.at = start + timedelta(seconds=599)  # not old enough yet
    assert reminders.record_due(settings, store, now=clock.at).reminders == []
    clock.at = start + timedelta(seconds=600)  # exactly the threshold
    report = reminders.record_due(settings, store, now=clock.at)
    assert report.reminders == [staff_outbox.notice_id(old_id, staff_outbox.REMINDER)]
    clock.at = start + timedelta(hours=5)
    assert reminders.record_due(settings, store, now=clock.at).reminders == []  # once, ever
    project_requeue(settings, store, queue, clock.at)
    assert queued(settings, queue, store, staff_outbox.notice_id(old_id, staff_outbox.REMINDER), clock.at)
    assert not queued(settings, queue, store, staff_outbox.notice_id(taken_id, staff_outbox.REMINDER), clock.at)

    service = StaffTaskService(settings, store, line_gateway(settings), queue, clock)
    task = {"v": 1, "kind": "staff_notice", "tenant_id": settings.tenant_id,
            "notice_id": staff_outbox.notice_id(old_id, staff_outbox.REMINDER)}
    assert service.run(task, retry_count=0).outcome == "delivered"
    assert service.run(task, retry_count=0).outcome == "already_settled"  # a duplicate delivery
    pushes = [c for c in line_standin.calls() if c["path"] == PUSH and c["status"] == 200]
    assert len(pushes) == 1 and pushes[0]["body"]["to"] == GROUP
    text = all_text(pushes[0]["body"]["messages"])
    assert "提醒" in text and shown_of(old) in text and shown_of(taken) not in text


def test_staff_sweep_reminder_taken_before_push_is_not_sent(settings, store, queue, clock, line_standin):
    doc_id, _ = new_request(settings, store, clock, "想問社區共餐的報名方式")
    clock.at = clock.at + timedelta(seconds=700)
    assert reminders.record_due(settings, store, now=clock.at).reminders
    staff = staff_member(settings, GroupSource())
    transitions.apply(store, settings.tenant_id, StaffReference(TAKE, doc_id, 0), staff, now=clock.at)
    service = StaffTaskService(settings, store, line_gateway(settings), queue, clock)
    task = {"v": 1, "kind": "staff_notice", "tenant_id": settings.tenant_id,
            "notice_id": staff_outbox.notice_id(doc_id, staff_outbox.REMINDER)}
    assert service.run(task, retry_count=0).outcome == "not_needed"
    assert not any("提醒" in all_text(c["body"]) for c in line_standin.calls() if c["path"] == PUSH)


def test_staff_sweep_followup_announced_once(base_env, settings, store, queue, clock, line_standin):
    actor = Actor(settings.tenant_id, USER)
    draft = drafts.create_draft(store, actor, "想請人協助報名長青班", now=clock(), settings=settings).draft
    faulty = Settings.from_env({**base_env, "LOCAL_STAFF_GROUP_ID": GROUP, "LOCAL_QUEUE_MAX_ATTEMPTS": "3",
                                "LOCAL_FAULTS": "LOOKUP_UNAVAILABLE"})
    reconcile = ReconcileService(faulty, store, SqliteStore(path_from_url(settings.store_url), read_only=True),
                                 line_gateway(faulty), clock)
    task = ReconcileTask(draft.operation, draft.content_hash, UNKNOWN_OUTCOME, "ev-checking")
    assert reconcile.run(task, retry_count=2).outcome == "needs_human_followup"  # the last attempt

    first = reminders.record_due(settings, store, now=clock())
    assert first.followups == [staff_outbox.notice_id(draft.operation.doc_id, staff_outbox.FOLLOWUP)]
    assert reminders.record_due(settings, store, now=clock()).followups == []
    service = StaffTaskService(settings, store, line_gateway(settings), queue, clock)
    result = service.run({"v": 1, "kind": "staff_notice", "tenant_id": settings.tenant_id,
                          "notice_id": first.followups[0]}, retry_count=0)
    assert result.outcome == "delivered"
    [push] = [c for c in line_standin.calls() if c["path"] == PUSH and c["body"]["to"] == GROUP]
    text = all_text(push["body"]["messages"])
    assert "需要人工確認" in text and "想請人協助報名長青班" in text and USER not in str(push["body"])


def test_staff_sweep_runs_within_the_project_sweep(settings, store, queue, clock):
    from shared.sweep import sweep as project_sweep

    new_request(settings, store, clock, "想問社區共餐的報名方式")
    counts = project_sweep(settings, store, queue, None, now=clock.at + timedelta(seconds=601))
    assert counts["staff_reminders"] == 1
    assert project_sweep(settings, store, queue, None, now=clock.at + timedelta(seconds=700))["staff_reminders"] == 0


def test_staff_relay_line_never_reached_kept_pending_for_retry(settings, store, clock):
    """A push whose connection was never made (the outcome table's NEVER_STARTED) is retried (503) and
    the notice stays pending: nothing reached LINE, so nothing is settled."""
    import dataclasses
    import socket

    with socket.socket() as probe:  # a loopback port nobody listens on: the connect is refused
        probe.bind(("127.0.0.1", 0))
        closed_port = probe.getsockname()[1]
    unreachable = dataclasses.replace(settings, line_api_base_url=f"http://127.0.0.1:{closed_port}")
    doc_id, _ = new_request(settings, store, clock, "想問社區共餐的報名方式")
    notice_doc_id = staff_outbox.notice_id(doc_id, staff_outbox.ANNOUNCE)
    result = relay.StaffRelay(unreachable, store, line_gateway(unreachable), clock).deliver(notice_doc_id, last=False)
    assert (result.outcome, result.http_status) == ("push_failed", 503)
    notice = notify.Notice.of(store.get(staff_outbox.NOTICES, notice_doc_id))
    assert notice is not None and notice.state is notify.NoticeState.PENDING


def test_staff_startup_requeue_busy_queue_retried_until_queued(settings, store, clock, caplog):
    """A worker killed after a commit leaves its staff notice pending; the new worker's start-up
    re-queue meets the store file's write lock held by another writer of the process (its other
    start-up threads, under load) past the queue's lock timeout. It must try again once the lock is
    free, not leave the card for the next sweep."""
    import threading

    from shared.sqlite_file import write_lock
    from shared.sweep import Queues, requeue_at_start
    from tests.handoff_support import wait_for

    doc_id, _ = new_request(settings, store, clock, "想參加週六的社區走讀，需要輪椅協助")
    notice_doc_id = staff_outbox.notice_id(doc_id, staff_outbox.ANNOUNCE)
    path = path_from_url(settings.store_url)
    queue = EmbeddedQueue(path, queue_name=settings.queue_name, target_url=settings.reconcile_function_url,
                          auth_token=None, lock_timeout_seconds=0.05)
    busy = write_lock(path)
    busy.acquire()
    try:
        thread = threading.Thread(target=requeue_at_start, args=(settings, store, Queues(queue, None)),
                                  kwargs={"now": clock}, daemon=True)
        thread.start()
        wait_for(lambda: [r for r in caplog.records if r.getMessage() == "start-up re-queue incomplete"
                          and r.fields["query"] == "staff_requeued"], 30, "a pass that met the busy lock")
        assert not queued(settings, queue, store, notice_doc_id, clock.at)
    finally:
        busy.release()
    thread.join(30)
    assert not thread.is_alive()
    assert queued(settings, queue, store, notice_doc_id, clock.at)
    [done] = [r for r in caplog.records if r.getMessage() == "start-up re-queue done"]
    assert done.fields["staff_requeued"] == 1
