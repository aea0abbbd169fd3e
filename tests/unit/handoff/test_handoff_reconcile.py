"""ReconcileService on a real SQLite file (read-only lookup connection) and the LINE stand-in."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from shared import inbox
from shared.handoff import drafts, notify, records, requeue, status
from shared.handoff.reconcile import (
    RELAY,
    REQUEUE,
    UNKNOWN_OUTCOME,
    InvalidReconcileTask,
    ReconcileService,
    ReconcileTask,
)
from shared.handoff.requests import create_request
from shared.identity import Actor
from shared.store import StoreTimeout
from shared.store.sqlite import SqliteStore, path_from_url
from shared.wiring import line_gateway
from tests.codes_support import shown_of
from tests.conftest import FixedClock, all_text

NOW = datetime(2026, 11, 30, 4, 0, tzinfo=timezone.utc)
PUSH = "/v2/bot/message/push"


def pushes(standin) -> list[dict]:
    return [c for c in standin.calls() if c["path"] == PUSH]


def accepted_pushes(standin) -> list[dict]:
    return [c for c in pushes(standin) if c["status"] == 200]


@pytest.fixture
def clock():
    return FixedClock(NOW + timedelta(seconds=2))


def service(settings, clock, store=None, lookup_store=None) -> ReconcileService:
    path = path_from_url(settings.store_url)
    return ReconcileService(settings, store or SqliteStore(path, deadline_seconds=2.0),
                            lookup_store or SqliteStore(path, deadline_seconds=2.0, read_only=True),
                            line_gateway(settings), clock=clock)


def draft_for(store, actor, settings, now=NOW):
    return drafts.create_draft(store, actor, "想參加週六的社區走讀", now=now, settings=settings).draft


def webhook_create(store, settings, draft, event="EV1", now=NOW):
    """The webhook's first write attempt, as if its answer was then lost (AFTER_COMMIT)."""
    return create_request(store, draft.operation, draft.content_hash, now=now, tz=settings.tz, source="webhook",
                          notice_owner=f"reply:{event}", lease_seconds=settings.event_lease_seconds, event_id=event)


def unknown_task(draft, event="EV1") -> ReconcileTask:
    return ReconcileTask(draft.operation, draft.content_hash, "unknown_outcome", event)


def test_reconcile_found_pushes_original_receipt_once(store, actor, settings, clock, line_standin):
    draft = draft_for(store, actor, settings)
    created = webhook_create(store, settings, draft)
    svc = service(settings, clock)
    result = svc.run(unknown_task(draft), retry_count=0)
    assert (result.outcome, result.http_status) == ("found", 200)
    assert result.request_id == created.receipt.request_id
    [push] = pushes(line_standin)
    # the receipt's first telling carries the notice's own key, whoever pushes it
    assert push["headers"]["x-line-retry-key"] == draft.operation.retry_key("receipt")
    assert created.receipt.display_code.grouped in all_text(push["body"]["messages"])
    assert store.get(records.OPERATIONS, draft.operation.doc_id)["notice_state"] == "delivered"
    again = svc.run(unknown_task(draft), retry_count=0)  # a duplicate delivery: this check told it already
    assert again.http_status == 200 and again.detail["notice"] == "already_delivered"
    assert len(accepted_pushes(line_standin)) == 1
    assert len(store.query(records.REQUESTS)) == 1


def test_reconcile_checking_answer_after_an_earlier_receipt_still_gets_result(store, actor, settings, clock,
                                                                             line_standin):
    draft = draft_for(store, actor, settings)
    webhook_create(store, settings, draft, event="EV1")
    notify.mark_delivered(store, records.OPERATIONS, draft.operation, "reply:EV1", now=NOW)  # EV1 told the receipt
    relay = service(settings, clock).run(ReconcileTask(draft.operation, draft.content_hash, "relay"), retry_count=0)
    assert relay.detail["notice"] == "already_delivered" and pushes(line_standin) == []
    # A later tap (EV2) timed out and was told "checking": it hears the result, once.
    for attempt in range(2):
        service(settings, clock).run(unknown_task(draft, "EV2"), retry_count=attempt)
    assert [c["headers"]["x-line-retry-key"] for c in accepted_pushes(line_standin)] == [
        draft.operation.retry_key("checked:EV2")]


def test_reconcile_relay_of_a_delivered_receipt_opens_no_write_transaction(store, actor, settings, clock,
                                                                          line_standin):
    draft = draft_for(store, actor, settings)
    webhook_create(store, settings, draft, event="EV1")
    notify.mark_delivered(store, records.OPERATIONS, draft.operation, "reply:EV1", now=NOW)
    before = store.get(records.OPERATIONS, draft.operation.doc_id)
    commits: list[int] = []  # the store's test seam: called before each COMMIT
    path = path_from_url(settings.store_url)
    writer = SqliteStore(path, deadline_seconds=2.0, before_commit=commits.append)
    relay = service(settings, clock, store=writer).run(ReconcileTask(draft.operation, draft.content_hash, RELAY),
                                                       retry_count=0)
    assert (relay.outcome, relay.http_status, relay.detail["notice"]) == ("found", 200, "already_delivered")
    assert commits == [] and pushes(line_standin) == []  # the lookup saw "delivered": nothing to claim
    assert store.get(records.OPERATIONS, draft.operation.doc_id) == before


def test_reconcile_relay_waits_for_a_live_reply_then_pushes(store, actor, settings, clock, line_standin):
    draft = draft_for(store, actor, settings)
    webhook_create(store, settings, draft)
    relay = ReconcileTask(draft.operation, draft.content_hash, "relay")
    held = service(settings, clock).run(relay, retry_count=0)
    assert (held.outcome, held.http_status) == ("notice_held", 503)
    assert pushes(line_standin) == []
    later = FixedClock(NOW + timedelta(seconds=settings.event_lease_seconds + 1))
    result = service(settings, later).run(relay, retry_count=1)
    assert result.http_status == 200 and result.detail["notice"] == "pushed"
    assert len(accepted_pushes(line_standin)) == 1


def test_reconcile_not_found_creates_once_with_the_same_key(store, actor, settings, clock, line_standin):
    draft = draft_for(store, actor, settings)  # the webhook's attempt never wrote (BEFORE_WRITE)
    svc = service(settings, clock)
    result = svc.run(unknown_task(draft), retry_count=0)
    assert (result.outcome, result.http_status) == ("created", 200)
    [request] = store.query(records.REQUESTS)
    assert request["idempotency_key"] == draft.operation.idempotency_key
    assert request["created_by"] == "reconcile" and request["request_id"] == result.request_id
    assert shown_of(request) in all_text(pushes(line_standin)[0]["body"]["messages"])
    again = svc.run(unknown_task(draft), retry_count=1)
    assert again.outcome == "found" and again.detail["notice"] == "already_delivered"  # this check told it
    assert len(store.query(records.REQUESTS)) == 1 and len(accepted_pushes(line_standin)) == 1


def test_reconcile_not_found_with_expired_consent_settles_not_created(store, actor, settings, line_standin):
    draft = draft_for(store, actor, settings)
    after_expiry = FixedClock(draft.expires_at + timedelta(seconds=1))
    svc = service(settings, after_expiry)
    result = svc.run(unknown_task(draft), retry_count=0)
    assert (result.outcome, result.http_status) == ("not_created", 200)
    assert store.query(records.REQUESTS) == []
    text = all_text(pushes(line_standin)[0]["body"]["messages"])
    assert "沒有登記" in text and "新需求" in text
    assert svc.run(unknown_task(draft), retry_count=1).detail["notice"] == "already_delivered"
    assert len(pushes(line_standin)) == 1


def test_reconcile_lookup_unavailable_retries_then_needs_human_followup(make_settings, store, actor, clock,
                                                                        line_standin):
    settings = make_settings(LOCAL_FAULTS="LOOKUP_UNAVAILABLE")
    draft = draft_for(store, actor, settings)
    webhook_create(store, settings, draft)
    svc = service(settings, clock)
    answers = [svc.run(unknown_task(draft), retry_count=n) for n in range(3)]  # max attempts 3
    assert [(a.outcome, a.http_status) for a in answers] == [
        ("lookup_unavailable", 503), ("lookup_unavailable", 503), ("needs_human_followup", 200)]
    assert answers[-1].request_id is None
    followup = store.get(records.FOLLOWUPS, draft.operation.doc_id)
    assert followup["status"] == "needs_human_followup" and followup["reason"] == "lookup_unavailable"
    [push] = pushes(line_standin)
    assert push["headers"]["x-line-retry-key"] == draft.operation.retry_key("needs_human_followup")
    assert "工作人員" in all_text(push["body"]["messages"])
    assert len(store.query(records.REQUESTS)) == 1  # never a second row
    assert "人工確認" in status.status_message(settings, store, actor).text  # 查看原本服務單 says so too


def test_reconcile_unreadable_store_is_lookup_unavailable(settings, store, actor, clock, tmp_path, line_standin):
    draft = draft_for(store, actor, settings)
    missing = tmp_path / "missing.sqlite3"
    result = service(settings, clock, lookup_store=SqliteStore(str(missing), read_only=True)).run(
        unknown_task(draft), retry_count=0)
    assert (result.outcome, result.http_status) == ("lookup_unavailable", 503)
    assert not missing.exists()  # mode=ro never creates a database
    assert store.query(records.REQUESTS) == [] and pushes(line_standin) == []


def test_reconcile_write_budget_allows_one_create_attempt(settings, store, actor, clock, line_standin):
    draft = draft_for(store, actor, settings)
    commits = []
    lose_writes = {"on": True}

    def lose_the_create(attempt: int) -> None:
        commits.append(attempt)
        if lose_writes["on"] and len(commits) == 2:  # 1: the budget claim, 2: the create
            raise StoreTimeout("deadline passed")

    seamed = SqliteStore(path_from_url(settings.store_url), deadline_seconds=2.0, before_commit=lose_the_create)
    svc = service(settings, clock, store=seamed)
    first = svc.run(unknown_task(draft), retry_count=0)
    lose_writes["on"] = False  # from now on a create would succeed: only the budget can stop it
    second = svc.run(unknown_task(draft), retry_count=1)
    last = svc.run(unknown_task(draft), retry_count=2)
    assert (first.outcome, first.http_status) == ("create_unknown", 503)
    assert (second.outcome, second.http_status) == ("write_budget_spent", 503)
    assert last.outcome == "needs_human_followup"
    assert store.query(records.REQUESTS) == []  # no second create attempt was made
    assert store.get(records.OPERATIONS, draft.operation.doc_id)["reconcile_write_attempted"] is True


def test_reconcile_push_answer_lost_then_409_counts_delivered(store, actor, settings, clock, line_standin):
    draft = draft_for(store, actor, settings)
    webhook_create(store, settings, draft)
    line_standin.fail_next(PUSH, 500, after_processing=True)  # LINE delivered, the answer was lost
    svc = service(settings, clock)
    lost = svc.run(unknown_task(draft), retry_count=0)
    assert (lost.outcome, lost.http_status) == ("push_failed", 503)
    retried = svc.run(unknown_task(draft), retry_count=1)
    assert retried.http_status == 200 and retried.detail["notice"] == "push_duplicate"
    assert [c["status"] for c in pushes(line_standin)] == [500, 409]
    assert store.get(records.OPERATIONS, draft.operation.doc_id)["notice_state"] == "delivered"


def test_reconcile_found_with_other_content_or_tenant_pushes_nothing(store, actor, settings, clock, line_standin):
    draft = draft_for(store, actor, settings)
    webhook_create(store, settings, draft)
    other_content = ReconcileTask(draft.operation, records.content_hash("別的"), "unknown_outcome", "EV1")
    assert service(settings, clock).run(other_content, retry_count=0).outcome == "idempotency_conflict"
    foreign = ReconcileTask(records.Operation(Actor("other-tenant", actor.user_id), draft.operation.idempotency_key),
                            draft.content_hash, "unknown_outcome")
    assert service(settings, clock).run(foreign, retry_count=0).outcome == "wrong_actor"
    assert pushes(line_standin) == []


def test_reconcile_task_payload_round_trip_and_bad_bodies(store, actor, settings):
    task = unknown_task(draft_for(store, actor, settings))
    assert ReconcileTask.from_payload(task.payload()) == task
    assert task.task_name.startswith("reconcile-")
    assert task.operation.idempotency_key not in task.task_name  # named from a hash of the key
    for bad in (None, [], {**task.payload(), "kind": "other"}, {**task.payload(), "idempotency_key": "X" * 32},
                {**task.payload(), "content_hash": "abc"}, {**task.payload(), "reason": "because"}):
        with pytest.raises(InvalidReconcileTask):
            ReconcileTask.from_payload(bad)


def inbox_event(store, settings, event, *, attempted: bool, outcome: str | None):
    """An inbox document for ``event`` as the webhook leaves it (``outcome`` None: not finished)."""
    claim = inbox.claim_event(store, settings.tenant_id, event, now=NOW, lease_seconds=settings.event_lease_seconds)
    if attempted:
        inbox.mark_reply_attempted(store, settings.tenant_id, event, claim.attempt, now=NOW)
    if outcome is not None:
        inbox.mark_done(store, settings.tenant_id, event, claim.attempt, now=NOW, outcome=outcome)


def test_reconcile_task_names_differ_by_purpose_and_event_but_are_deterministic(store, actor, settings):
    draft = draft_for(store, actor, settings)
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


@pytest.mark.parametrize("attempted,outcome,pushed,notice_state", [
    (True, "reply_unknown", True, "delivered"),    # perhaps told: told once more, restated
    (True, None, True, "delivered"),               # died after starting the reply: the same
    (True, "replied", False, "delivered"),         # told; only "delivered" was not written
    (True, "reply_failed", True, "delivered"),     # LINE refused: definitely not told
    (False, None, True, "delivered"),              # killed after the commit, before the reply
])
def test_reconcile_relay_reads_the_owner_reply_before_pushing(store, actor, settings, line_standin, attempted,
                                                              outcome, pushed, notice_state):
    draft = draft_for(store, actor, settings)
    webhook_create(store, settings, draft, "E1")
    inbox_event(store, settings, "E1", attempted=attempted, outcome=outcome)
    later = FixedClock(NOW + timedelta(seconds=settings.event_lease_seconds + 1))
    result = service(settings, later).run(
        ReconcileTask(draft.operation, draft.content_hash, RELAY, tag="E1"), retry_count=0)
    assert result.http_status == 200
    assert len(accepted_pushes(line_standin)) == (1 if pushed else 0)
    assert store.get(records.OPERATIONS, draft.operation.doc_id)["notice_state"] == notice_state


def test_reconcile_not_found_after_user_cancel_says_it_was_cancelled(store, actor, settings, line_standin):
    draft = draft_for(store, actor, settings)
    drafts.cancel_draft(store, draft.operation, draft.content_hash, now=NOW)
    result = service(settings, FixedClock(NOW + timedelta(seconds=2))).run(
        ReconcileTask(draft.operation, draft.content_hash, UNKNOWN_OUTCOME, "E1"), retry_count=0)
    assert (result.outcome, result.http_status) == ("not_created", 200)
    assert result.detail["reason"] == "cancelled_by_user"
    [push] = accepted_pushes(line_standin)
    text = all_text(push["body"]["messages"])
    assert "取消" in text and "沒有登記" not in text and "重新輸入" not in text
    assert store.query(records.REQUESTS) == []


@pytest.mark.parametrize("later", ["requeue", "relay"])
def test_reconcile_check_push_delivered_but_unrecorded_is_never_told_again(settings, store, actor, clock,
                                                                            line_standin, later):
    """A flapping lock: the check after "checking" pushed the receipt, then its "delivered"
    write was lost; the sweep's re-queue (or a relay) pushes the same notice again. The repeat
    must carry the same retry key, so LINE answers 409 and the user reads the receipt once."""
    draft = draft_for(store, actor, settings)
    created = webhook_create(store, settings, draft, event="EV1")  # committed; its answer was "checking"
    commits = []

    def lose_the_mark(attempt: int) -> None:
        commits.append(attempt)
        if len(commits) == 2:  # 1: the push's claim, 2: "delivered"
            raise StoreTimeout("deadline passed")

    seamed = SqliteStore(path_from_url(settings.store_url), deadline_seconds=2.0, before_commit=lose_the_mark)
    check = service(settings, clock, store=seamed).run(unknown_task(draft, "EV1"), retry_count=0)
    assert (check.http_status, check.detail["notice"]) == (200, "pushed")
    assert store.get(records.OPERATIONS, draft.operation.doc_id)["notice_state"] == "pending"
    clock.at += timedelta(seconds=settings.event_lease_seconds + 1)
    op_doc = store.get(records.OPERATIONS, draft.operation.doc_id)
    task = (requeue.requeue_task(draft.operation, op_doc, "r1") if later == "requeue"
            else ReconcileTask(draft.operation, draft.content_hash, RELAY, tag="EV1"))
    again = service(settings, clock).run(task, retry_count=0)
    assert (again.http_status, again.detail["notice"]) == (200, "push_duplicate")
    told = [c for c in accepted_pushes(line_standin) if created.receipt.display_code.grouped in all_text(c["body"]["messages"])]
    assert len(told) == 1
    assert store.get(records.OPERATIONS, draft.operation.doc_id)["notice_state"] == "delivered"


def test_reconcile_receipt_refused_for_the_monthly_limit_is_a_follow_up_on_the_first_attempt(
        store, actor, settings, clock, line_standin):
    """LINE's 429 "You have reached your monthly limit." is final: not retried (200, not 503, even on
    the first of the queue's attempts), and the operation goes on the staff follow-up list."""
    draft = draft_for(store, actor, settings)
    webhook_create(store, settings, draft)
    line_standin.set_quota(200, used=200)
    result = service(settings, clock).run(unknown_task(draft), retry_count=0)
    assert (result.http_status, result.outcome, result.detail["notice"]) == (200, "push_failed", "followup_recorded")
    [refused] = pushes(line_standin)
    assert (refused["status"], refused["response"]["message"]) == (429, "You have reached your monthly limit.")
    [followup] = store.query(records.FOLLOWUPS)
    assert (followup["reason"], followup["status"]) == ("monthly_limit", "needs_human_followup")
    line_standin.fail_next(PUSH, 429)  # an ordinary rate limit, for contrast: retried later (503)
    line_standin.set_quota(None)
    other = draft_for(store, Actor(actor.tenant_id, "U" + "c" * 32), settings)
    webhook_create(store, settings, other, event="EV2")
    assert service(settings, clock).run(unknown_task(other, "EV2"), retry_count=0).http_status == 503


def test_reconcile_receipt_refused_for_the_monthly_limit_is_never_pushed_again_by_the_sweep(
        store, actor, settings, clock, line_standin):
    """The refused receipt is on the follow-up list: the sweep's re-queue of pending notices must not
    find it pending and push it again (another 429, counted and alerted again) in every window."""
    draft = draft_for(store, actor, settings)
    webhook_create(store, settings, draft)
    line_standin.set_quota(200, used=200)
    assert service(settings, clock).run(unknown_task(draft), retry_count=0).detail["notice"] == "followup_recorded"
    assert [doc["idempotency_key"] for doc in requeue.pending_operations(store, settings.tenant_id)] == []
    clock.at += timedelta(seconds=settings.event_lease_seconds + 1)
    doc = store.get(records.OPERATIONS, draft.operation.doc_id)
    service(settings, clock).run(requeue.requeue_task(draft.operation, doc, "later"), retry_count=0)
    assert [c["status"] for c in pushes(line_standin)] == [429]  # one refusal, never a second try
    assert status.latest_followup(store, actor) is None  # and the request itself is what 查看原本服務單 shows
