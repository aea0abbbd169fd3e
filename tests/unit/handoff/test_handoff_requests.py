"""create_request: the outcome table of docs/design.md §4 on a real SQLite file (one transaction, one row)."""
from __future__ import annotations

import re
import threading
from datetime import datetime, timedelta, timezone

import pytest

from shared.handoff import drafts, notify, records
from shared.handoff.records import Operation
from shared.handoff.requests import create_request
from shared.identity import Actor
from shared.store import TransactionConflict
from shared.store.sqlite import SqliteStore, path_from_url
from tests.unit.handoff.conftest import OTHER_USER, all_documents, count

NOW = datetime(2026, 11, 30, 4, 0, tzinfo=timezone.utc)  # 12:00 in Taipei
REQUEST_ID = re.compile(r"^req-(\d{8})-[0-9a-f]{16}$")


def make_draft(store, actor, settings, text="想參加週六的社區走讀，需要輪椅協助", now=NOW):
    result = drafts.create_draft(store, actor, text, now=now, settings=settings)
    assert result.status == "draft_created"
    return result.draft


def create(store, settings, operation, digest, now=NOW, owner="reply:EV1"):
    return create_request(store, operation, digest, now=now, tz=settings.tz, source="webhook",
                          notice_owner=owner, lease_seconds=30, event_id=owner.split(":", 1)[1])


def test_create_request_first_create_writes_request_and_notice(store, actor, settings):
    draft = make_draft(store, actor, settings)
    result = create(store, settings, draft.operation, draft.content_hash)
    assert result.status == "request_created"
    receipt = result.receipt.as_dict()
    assert set(receipt) == {"status", "request_id", "display_code", "human_state", "created_at", "idempotency_key"}
    assert receipt["human_state"] == "awaiting_acceptance"
    assert receipt["idempotency_key"] == draft.operation.idempotency_key
    assert REQUEST_ID.match(receipt["request_id"])
    request = store.get(records.REQUESTS, draft.operation.doc_id)
    for field in ("tenant_id", "user_id", "idempotency_key", "content_hash", "text", "status", "human_state",
                  "created_at"):
        assert field in request
    assert request["text"] == draft.text and request["content_hash"] == draft.content_hash
    operation = store.get(records.OPERATIONS, draft.operation.doc_id)
    assert operation["notice_state"] == notify.PENDING and operation["notice_owner"] == "reply:EV1"
    assert store.get(records.DRAFTS, draft.operation.doc_id)["request_id"] == receipt["request_id"]


def test_create_request_id_uses_taipei_date_not_utc(store, actor, settings):
    late_utc = datetime(2026, 11, 30, 17, 0, tzinfo=timezone.utc)  # already 12-01 01:00 in Taipei
    draft = make_draft(store, actor, settings, now=late_utc)
    result = create(store, settings, draft.operation, draft.content_hash, now=late_utc)
    assert REQUEST_ID.match(result.receipt.request_id).group(1) == "20261201"


def test_create_request_same_key_same_content_returns_same_receipt(store, actor, settings):
    draft = make_draft(store, actor, settings)
    first = create(store, settings, draft.operation, draft.content_hash)
    again = create(store, settings, draft.operation, draft.content_hash, now=NOW + timedelta(seconds=5),
                   owner="reply:EV2")
    assert again.status == "already_created"
    assert again.receipt.request_id == first.receipt.request_id
    assert again.receipt.created_at == first.receipt.created_at
    assert count(store, records.REQUESTS) == 1


def test_create_request_same_key_other_content_is_conflict_and_writes_nothing(store, actor, settings):
    draft = make_draft(store, actor, settings)
    create(store, settings, draft.operation, draft.content_hash)
    before = all_documents(settings)
    result = create(store, settings, draft.operation, records.content_hash("別的內容"), owner="reply:EV3")
    assert result.status == "idempotency_conflict"
    assert result.receipt is None
    assert all_documents(settings) == before


def test_create_request_conflict_before_any_request_writes_no_row(store, actor, settings):
    draft = make_draft(store, actor, settings)
    before = all_documents(settings)
    result = create(store, settings, draft.operation, records.content_hash("被改過的內容"))
    assert result.status == "idempotency_conflict"
    assert count(store, records.REQUESTS) == 0
    assert all_documents(settings) == before


def test_create_request_expiry_is_exclusive(store, actor, settings):
    draft = make_draft(store, actor, settings)
    at_expiry = create(store, settings, draft.operation, draft.content_hash, now=draft.expires_at)
    assert at_expiry.status == "expired"
    assert count(store, records.REQUESTS) == 0
    just_before = create(store, settings, draft.operation, draft.content_hash,
                         now=draft.expires_at - timedelta(seconds=1))
    assert just_before.status == "request_created"


def test_create_request_superseded_card_creates_nothing(store, actor, settings):
    older = make_draft(store, actor, settings, text="第一次寫的需求")
    newer = make_draft(store, actor, settings, text="改寫後的需求", now=NOW + timedelta(seconds=30))
    result = create(store, settings, older.operation, older.content_hash, now=NOW + timedelta(seconds=40))
    assert result.status == "superseded"
    assert count(store, records.REQUESTS) == 0
    assert create(store, settings, newer.operation, newer.content_hash,
                  now=NOW + timedelta(seconds=40)).status == "request_created"


def test_create_request_cancelled_or_unknown_draft_is_unconfirmed(store, actor, settings):
    draft = make_draft(store, actor, settings)
    assert drafts.cancel_draft(store, draft.operation, draft.content_hash, now=NOW).status == "cancelled"
    assert create(store, settings, draft.operation, draft.content_hash).status == "unconfirmed_operation"
    unknown = Operation(actor, records.new_idempotency_key())
    assert create(store, settings, unknown, draft.content_hash).status == "unconfirmed_operation"
    assert count(store, records.REQUESTS) == 0


def test_create_request_other_users_key_is_not_confirmed_for_them(store, actor, settings):
    draft = make_draft(store, actor, settings)
    stranger = Operation(Actor(actor.tenant_id, OTHER_USER), draft.operation.idempotency_key)
    assert create(store, settings, stranger, draft.content_hash).status == "unconfirmed_operation"
    assert count(store, records.REQUESTS) == 0


def test_create_request_document_of_another_actor_is_wrong_actor(store, actor, settings):
    draft = make_draft(store, actor, settings)
    doc = store.get(records.DRAFTS, draft.operation.doc_id)
    store.set(records.DRAFTS, draft.operation.doc_id, {**doc, "user_id": OTHER_USER})
    assert create(store, settings, draft.operation, draft.content_hash).status == "wrong_actor"
    assert count(store, records.REQUESTS) == 0


def test_create_request_sixteen_threads_one_key_exactly_one_row(store, actor, settings):
    draft = make_draft(store, actor, settings)
    path = path_from_url(settings.store_url)
    barrier = threading.Barrier(16)
    results, errors = [], []

    def tap(n: int) -> None:
        own = SqliteStore(path, deadline_seconds=10.0)  # its own connections, like separate workers
        barrier.wait()
        try:
            results.append(create(own, settings, draft.operation, draft.content_hash, owner=f"reply:EV{n}"))
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=tap, args=(n,)) for n in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert errors == []
    assert sorted(r.status for r in results).count("request_created") == 1
    assert {r.receipt.request_id for r in results} == {results[0].receipt.request_id}
    assert count(store, records.REQUESTS) == 1


def test_create_request_rerun_transaction_still_one_row(settings, actor):
    attempts = []

    def conflict_once(attempt: int) -> None:
        attempts.append(attempt)
        if len(attempts) == 2:  # the create's first commit (the draft's commit was the first call)
            raise TransactionConflict("lost a race")

    store = SqliteStore(path_from_url(settings.store_url), deadline_seconds=2.0, before_commit=conflict_once)
    draft = make_draft(store, actor, settings)
    result = create(store, settings, draft.operation, draft.content_hash)
    assert result.status == "request_created"
    assert count(store, records.REQUESTS) == 1
    assert store.get(records.REQUESTS, draft.operation.doc_id)["request_id"] == result.receipt.request_id


@pytest.mark.parametrize("cap", ["2"])
def test_create_request_daily_cap_counts_taipei_day(make_settings, actor, cap):
    settings = make_settings(LOCAL_DAILY_REQUEST_CAP=cap)
    store = SqliteStore(path_from_url(settings.store_url), deadline_seconds=2.0)
    evening = datetime(2026, 11, 30, 15, 0, tzinfo=timezone.utc)  # 23:00 Taipei
    for n in range(2):
        draft = make_draft(store, actor, settings, text=f"需求 {n}", now=evening + timedelta(minutes=n))
        assert create(store, settings, draft.operation, draft.content_hash,
                      now=evening + timedelta(minutes=n)).status == "request_created"
    refused = drafts.create_draft(store, actor, "第三筆", now=evening + timedelta(minutes=5), settings=settings)
    assert refused.status == "daily_cap_reached" and refused.limit == 2
    next_day = datetime(2026, 11, 30, 16, 0, tzinfo=timezone.utc)  # 00:00 Taipei, a new day
    assert drafts.create_draft(store, actor, "第三筆", now=next_day, settings=settings).status == "draft_created"
