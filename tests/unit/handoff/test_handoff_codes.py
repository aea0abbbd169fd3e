"""Readable request numbers (shared.handoff.codes, docs/design.md §4): the alphabet, how residents type a
number, uniqueness per tenant under concurrent creates on the real SQLite store, a forced collision, and
through the signed webhook: the receipt, the staff group's card and 「<number> 處理到哪了」."""
from __future__ import annotations

import re
import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timedelta, timezone

import pytest

from shared.handoff import codes, drafts, notify, records
from shared.handoff.requests import REQUEST_CREATED, create_request
from shared.identity import Actor
from shared.staff.relay import StaffRelay
from shared.store import StoreUnavailable
from shared.wiring import line_gateway
from tests.codes_support import SHOWN_CODE, shown_in, shown_of
from tests.conftest import FixedClock, all_text, postback_event, reply_messages, text_event
from tests.memory_support import webhook_with_memory
from tests.unit.handoff.conftest import OTHER_USER, USER, count

NOW = datetime(2026, 12, 2, 2, 0, tzinfo=timezone.utc)
GROUP = "C0a1b2c3d4e5f60718293a4b5c6d7e8f9"
PUSH = "/v2/bot/message/push"


# -- the alphabet and how people type a number ------------------------------------------------

def test_codes_alphabet_has_no_look_alikes():
    assert len(codes.ALPHABET) == len(set(codes.ALPHABET)) == 26
    assert not set("0O1IL2Z5SU") & set(codes.ALPHABET)
    assert set(codes.ALPHABET) <= set("0123456789ABCDEFGHJKMNPQRSTVWXYZ")  # Crockford's Base32


def test_codes_candidates_are_in_the_alphabet_and_deterministic():
    drawn = [codes.candidate("t", "op" * 32, attempt) for attempt in range(200)]
    assert all(len(code) == 6 and set(code) <= set(codes.ALPHABET) for code in drawn)
    assert drawn == [codes.candidate("t", "op" * 32, attempt) for attempt in range(200)]  # a re-run draws the same
    assert codes.candidate("t", "op" * 32, 0) != codes.candidate("other", "op" * 32, 0)


@pytest.mark.parametrize("said", ["A7K-3QF 處理到哪了", "a7k-3qf處理到哪了", "A7K3QF", "a7k3qf 好了沒",
                                  "A7K 3QF", "單號：Ａ７Ｋ－３ＱＦ", "ａ７ｋ３ｑｆ", "A7K—3QF", "我的單號是a7k 3qf喔"])
def test_codes_find_in_reads_every_spelling(said):
    assert codes.find_in(said) == codes.DisplayCode("A7K3QF")
    assert str(codes.find_in(said)) == "A7K-3QF"


@pytest.mark.parametrize("said", ["market 處理到哪了", "ABCDEF", "346789", "A7K3QFX", "XA7K3QF", "0912345678",
                                  "A7K-3QF9", "查看原本服務單"])
def test_codes_find_in_ignores_words_numbers_and_longer_runs(said):
    assert codes.find_in(said) is None


def test_codes_display_code_refuses_other_shapes():
    for bad in ("A7K3Q", "A7K3QO", "ABCDEF", "346789", "a7k3qf"):
        with pytest.raises(ValueError):
            codes.DisplayCode(bad)


# -- uniqueness, on the real SQLite store -----------------------------------------------------

def _create(settings, store, user_id: str, text: str, *, now=NOW, **kwargs):
    actor = Actor(settings.tenant_id, user_id)
    draft = drafts.create_draft(store, actor, text, now=now, settings=settings).draft
    return create_request(store, draft.operation, draft.content_hash, now=now, tz=settings.tz, source="webhook",
                          notice_owner=notify.reply_owner("ev"), lease_seconds=30, **kwargs)


def test_codes_concurrent_creates_get_distinct_codes(settings, store):
    users = [f"U{index:032x}" for index in range(16)]
    start = threading.Barrier(8)

    def one(user_id: str):
        try:
            start.wait(timeout=5)
        except threading.BrokenBarrierError:
            pass
        return _create(settings, store, user_id, f"路燈壞了 {user_id[-4:]}")

    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(one, users))
    assert [r.status for r in results] == [REQUEST_CREATED] * len(users)
    shown = [r.receipt.display_code for r in results]
    assert all(code is not None for code in shown) and len(set(shown)) == len(users)
    stored = store.query(records.REQUESTS)
    assert sorted(doc["display_code"] for doc in stored) == sorted(code.value for code in shown)
    assert count(store, codes.CODES) == len(users)  # one uniqueness document per code


def test_codes_forced_collision_draws_again(settings, store):
    # Every operation's first candidate is the same code: the second create must draw its next one.
    def source(tenant_id: str, operation_doc_id: str, attempt: int) -> str:
        return "A7K3QF" if attempt == 0 else codes.candidate(tenant_id, operation_doc_id, attempt)

    first = _create(settings, store, USER, "路燈壞了", code_source=source)
    second = _create(settings, store, OTHER_USER, "水溝堵住了", code_source=source)
    assert first.receipt.display_code == codes.DisplayCode("A7K3QF")
    assert second.status == REQUEST_CREATED and second.receipt.display_code not in (None, first.receipt.display_code)
    # the same key again reads the same request: no third code
    assert count(store, codes.CODES) == 2


def test_codes_every_candidate_taken_writes_nothing(settings, store):
    _create(settings, store, USER, "路燈壞了", code_source=lambda tenant, op, attempt: "A7K3QF")
    before = count(store, records.REQUESTS)
    with pytest.raises(StoreUnavailable):  # met like a store that did not answer: retryable, same key
        _create(settings, store, OTHER_USER, "水溝堵住了", code_source=lambda tenant, op, attempt: "A7K3QF")
    assert count(store, records.REQUESTS) == before and count(store, codes.CODES) == 1


def test_codes_unique_per_tenant_not_across(make_settings, store):
    same = lambda tenant, op, attempt: "A7K3QF"  # noqa: E731
    one = _create(make_settings(LOCAL_TENANT_ID="tenant-one"), store, USER, "路燈壞了", code_source=same)
    two = _create(make_settings(LOCAL_TENANT_ID="tenant-two"), store, USER, "路燈壞了", code_source=same)
    assert one.receipt.display_code == two.receipt.display_code == codes.DisplayCode("A7K3QF")


# -- through the signed webhook ---------------------------------------------------------------

def _service(base_env, **extra: str):
    return webhook_with_memory({**base_env, "LOCAL_STAFF_GROUP_ID": GROUP, **extra}, FixedClock(NOW))


def _confirm(service, line_standin, text: str, user_id: str = USER) -> str:
    [card] = reply_messages(service, line_standin, text_event(f"新需求：{text}", user_id=user_id))
    confirm = {b["action"]["label"]: b["action"]["data"] for b in card["contents"]["footer"]["contents"]}["確認送出"]
    receipt = all_text(reply_messages(service, line_standin, postback_event(confirm, user_id=user_id)))
    [shown] = shown_in(receipt)
    assert "req-" not in receipt
    return shown


def test_codes_webhook_receipt_and_staff_card_show_the_same_code(base_env, line_standin):
    service = _service(base_env)
    shown = _confirm(service, line_standin, "巷口水溝堵住了")
    assert re.fullmatch(rf"[{codes.ALPHABET}]{{3}}-[{codes.ALPHABET}]{{3}}", shown)
    [request] = service.store.query(records.REQUESTS)
    assert shown_of(request) == shown
    operation_doc = records.Operation(Actor(request["tenant_id"], USER), request["idempotency_key"]).doc_id
    relay = StaffRelay(service.settings, service.store, line_gateway(service.settings), FixedClock(NOW))
    assert relay.announce_now(operation_doc).outcome == "delivered"
    [card] = [c for c in line_standin.calls() if c["path"] == PUSH and c["body"]["to"] == GROUP]
    words = all_text(card["body"]["messages"]) + card["body"]["messages"][0]["altText"]
    assert f"單號：{shown}" in words and "req-" not in words and USER not in str(card["body"])


@pytest.mark.parametrize("spelling", [
    lambda code: f"{code} 處理到哪了",
    lambda code: f"{code.lower()}處理到哪了",
    lambda code: f"{code.replace('-', '')} 好了沒",
    lambda code: f"{code.replace('-', ' ')} 進度",
    lambda code: "單號 " + code.translate({ord(c): ord(c) + 0xFEE0 for c in code}) + " 呢？",  # full-width
    lambda code: code,
], ids=["grouped", "lower", "no_dash", "space", "full_width", "alone"])
def test_codes_webhook_status_by_code_finds_that_request(base_env, line_standin, spelling):
    service = _service(base_env)
    first = _confirm(service, line_standin, "巷口水溝堵住了")
    _confirm(service, line_standin, "公園路燈不亮")
    words = all_text(reply_messages(service, line_standin, text_event(spelling(first))))
    assert f"單號：{first}" in words and "巷口水溝堵住了" in words
    assert "公園路燈不亮" not in words  # that request alone
    assert "等待工作人員受理" in words


def test_codes_webhook_another_tenants_or_residents_code_finds_nothing(base_env, line_standin):
    service = _service(base_env)
    mine = _confirm(service, line_standin, "巷口水溝堵住了")
    # another resident of the same tenant asks by that number
    words = all_text(reply_messages(service, line_standin, text_event(f"{mine} 處理到哪了", user_id=OTHER_USER)))
    assert f"查不到單號 {mine}" in words and "水溝" not in words
    # the same resident, through another tenant's bot on the same store
    other = webhook_with_memory({**base_env, "LOCAL_TENANT_ID": "other-tenant", "LOCAL_STAFF_GROUP_ID": GROUP},
                                FixedClock(NOW))
    words = all_text(reply_messages(other, line_standin, text_event(f"{mine} 處理到哪了")))
    assert f"查不到單號 {mine}" in words and "水溝" not in words


def test_codes_webhook_request_without_a_code_is_shown_by_its_time(base_env, line_standin):
    # A request stored before codes existed: no display_code; it is named by when it was made.
    service = _service(base_env)
    _confirm(service, line_standin, "巷口水溝堵住了")
    [request] = service.store.query(records.REQUESTS)
    operation_doc = records.Operation(Actor(request["tenant_id"], USER), request["idempotency_key"]).doc_id
    service.store.set(records.REQUESTS, operation_doc, {k: v for k, v in request.items() if k != "display_code"})
    words = all_text(reply_messages(service, line_standin, text_event("查看原本服務單")))
    local = (NOW + timedelta(hours=8)).strftime("%m/%d %H:%M")
    assert f"單號：{local} 登記的那筆" in words and not SHOWN_CODE.search(words) and "req-" not in words

