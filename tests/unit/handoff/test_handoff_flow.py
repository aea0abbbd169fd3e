"""The webhook-side flow in-process: card → confirm → receipt, refusals, status, and a slow store."""
from __future__ import annotations

import json
import re
import sqlite3
import time
from datetime import datetime, timedelta, timezone

import pytest

from shared.context import EventContext
from shared.handoff import cards, drafts, flow, notify, records
from shared.handoff.reconcile import RELAY, UNKNOWN_OUTCOME, ReconcileTask
from shared.handoff.requests import create_request
from shared.queue.embedded import EmbeddedQueue
from shared.store.sqlite import SqliteStore, path_from_url
from shared.wiring import line_gateway
from tests.codes_support import SHOWN_CODE, shown_of
from tests.conftest import case_bytes

NOW = datetime(2026, 11, 30, 4, 0, tzinfo=timezone.utc)
CASE_TEXT = json.loads(case_bytes("text-new-request.json"))["events"][0]["message"]["text"]
NEVER_SAY = ("已安排好", "處理好了", "已處理", "安排好了")


@pytest.fixture
def queue(tmp_path):
    # Its own file, so a test may lock the store without locking the queue.
    return EmbeddedQueue(str(tmp_path / "queue.sqlite3"), queue_name="handoff-reconcile",
                         target_url="http://127.0.0.1:9/", auth_token="t")


@pytest.fixture
def ctx_for(settings, store, actor, queue):
    line = line_gateway(settings)

    def make(event_id: str = "EV1", now: datetime = NOW, **changes) -> EventContext:
        return EventContext(**{"settings": settings, "store": store, "line": line, "now": now, "actor": actor,
                               "webhook_event_id": event_id, "deadline_monotonic": time.monotonic() + 1.8,
                               "queue": queue, **changes})

    return make


def texts(reply) -> str:
    out = []
    for message in reply.messages:
        out.append(json.dumps(message.to_dict(), ensure_ascii=False))
    return "\n".join(out)


def confirm_rest(reply) -> tuple[str, str]:
    card = reply.messages[0].to_dict()
    found = {b["action"]["label"]: b["action"]["data"].split(":", 1)[1] for b in card["contents"]["footer"]["contents"]}
    return found["確認送出"], found["取消"]


def test_flow_case_text_gets_card_with_exact_text(ctx_for):
    reply = flow.match_text(ctx_for(), CASE_TEXT)
    exact = CASE_TEXT.split("：", 1)[1]
    body = reply.messages[0].to_dict()["contents"]["body"]["contents"]
    assert exact in [part.get("text") for part in body]


def test_flow_other_text_is_not_a_handoff(ctx_for):
    assert flow.match_text(ctx_for(), "花壇有素食店嗎？") is None


def test_flow_confirm_gives_receipt_marks_delivered_and_queues_relay(ctx_for, store, queue, settings):
    confirm, _ = confirm_rest(flow.match_text(ctx_for(), CASE_TEXT))
    reply = flow.handle_postback(ctx_for("EV-CONFIRM"), confirm)
    [request] = store.query(records.REQUESTS)
    assert shown_of(request) in texts(reply)
    assert "等待工作人員受理" in texts(reply)
    assert not any(word in texts(reply) for word in NEVER_SAY)
    reply.after_reply()  # the service runs this once LINE accepted the reply
    operation = store.get(records.OPERATIONS, records.Operation(ctx_for().actor, request["idempotency_key"]).doc_id)
    assert operation["notice_state"] == "delivered"
    relay = queue.task(ReconcileTask(records.Operation(ctx_for().actor, request["idempotency_key"]),
                                     request["content_hash"], "relay", tag="EV-CONFIRM").task_name)
    assert relay.payload["reason"] == "relay"
    assert relay.schedule_at > datetime.now(timezone.utc) + timedelta(seconds=settings.event_lease_seconds - 5)


def test_flow_tapped_again_same_request_id(ctx_for, store):
    confirm, _ = confirm_rest(flow.match_text(ctx_for(), CASE_TEXT))
    first = flow.handle_postback(ctx_for("EV-A"), confirm)
    second = flow.handle_postback(ctx_for("EV-B", now=NOW + timedelta(seconds=20)), confirm)
    [request] = store.query(records.REQUESTS)
    assert shown_of(request) in texts(first) and shown_of(request) in texts(second)
    assert "不會重複登記" in texts(second)


def test_flow_redelivered_creating_event_tells_only_if_nobody_did(ctx_for, store, actor, settings):
    confirm, _ = confirm_rest(flow.match_text(ctx_for(), CASE_TEXT))
    reference = flow.cards.verify_reference(settings, actor, confirm)
    # The first attempt of EV-K committed and was killed before replying.
    create_request(store, reference.operation, reference.content_hash, now=NOW, tz=settings.tz, source="webhook",
                   notice_owner="reply:EV-K", lease_seconds=30, event_id="EV-K")
    redelivered = flow.handle_postback(ctx_for("EV-K", now=NOW + timedelta(seconds=31)), confirm)
    assert "已登記你的服務詢問" in texts(redelivered)
    # Had the queue's push told the user first, the redelivery says nothing.
    notify.mark_delivered(store, records.OPERATIONS, reference.operation, "push", now=NOW)
    again = flow.handle_postback(ctx_for("EV-K", now=NOW + timedelta(seconds=32)), confirm)
    assert again.messages == []


def test_flow_locked_store_is_unknown_outcome_at_the_store_deadline(ctx_for, store, queue, settings):
    confirm, _ = confirm_rest(flow.match_text(ctx_for(), CASE_TEXT))
    holder = sqlite3.connect(path_from_url(settings.store_url), isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # another writer holds the store past the create's deadline
    try:
        # The lock outlives the call: only the store deadline (0.2 s here) can end the create's wait.
        reply = flow.handle_postback(ctx_for("EV-SLOW", store=SqliteStore(
            path_from_url(settings.store_url), deadline_seconds=0.2)), confirm)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert "正在確認是否已登記" in texts(reply)
    assert not SHOWN_CODE.search(texts(reply))
    reference = flow.cards.verify_reference(settings, ctx_for().actor, confirm)
    task = queue.task(ReconcileTask(reference.operation, reference.content_hash, "unknown_outcome",
                                    "EV-SLOW").task_name)
    assert task.payload["reason"] == "unknown_outcome" and task.payload["reply_event_id"] == "EV-SLOW"
    assert store.query(records.REQUESTS) == []


def test_flow_superseded_card_creates_nothing(ctx_for, store):
    old_confirm, _ = confirm_rest(flow.match_text(ctx_for(), "新需求：第一次寫的"))
    flow.match_text(ctx_for(now=NOW + timedelta(seconds=5)), "新需求：改寫過的")
    reply = flow.handle_postback(ctx_for("EV-OLD", now=NOW + timedelta(seconds=10)), old_confirm)
    assert "取代" in texts(reply)
    assert store.query(records.REQUESTS) == []


def test_flow_cancel_then_confirm_creates_nothing(ctx_for, store):
    confirm, cancel = confirm_rest(flow.match_text(ctx_for(), CASE_TEXT))
    assert "已取消" in texts(flow.handle_postback(ctx_for("EV-C"), cancel))
    assert "取消" in texts(flow.handle_postback(ctx_for("EV-D"), confirm))
    assert store.query(records.REQUESTS) == []


def test_flow_tampered_postback_refused_kindly_nothing_written(ctx_for, store):
    confirm, _ = confirm_rest(flow.match_text(ctx_for(), CASE_TEXT))
    before = store.query(records.OPERATIONS)
    reply = flow.handle_postback(ctx_for("EV-T"), confirm[:-3] + "AAA")
    assert "無法辨識" in texts(reply)
    assert store.query(records.REQUESTS) == [] and store.query(records.OPERATIONS) == before


def test_flow_long_text_gets_kind_message_with_limit(ctx_for, store, settings):
    reply = flow.match_text(ctx_for(), "新需求：" + "長" * (settings.request_text_max_chars + 1))
    assert str(settings.request_text_max_chars) in texts(reply)
    assert store.query(records.DRAFTS) == []


def test_flow_status_entry_before_and_after(ctx_for, store):
    assert "查不到" in texts(flow.status_entry(ctx_for()))
    confirm, _ = confirm_rest(flow.match_text(ctx_for(), CASE_TEXT))
    flow.handle_postback(ctx_for("EV-S"), confirm)
    [request] = store.query(records.REQUESTS)
    status = texts(flow.status_entry(ctx_for("EV-S2")))
    assert shown_of(request) in status
    assert "等待工作人員受理" in status
    assert not any(word in status for word in NEVER_SAY)


def test_flow_expired_card_refused_kindly_nothing_written(ctx_for, store, settings):
    confirm, _ = confirm_rest(flow.match_text(ctx_for(), CASE_TEXT))
    late = NOW + timedelta(seconds=settings.draft_ttl_seconds)
    reply = flow.handle_postback(ctx_for("EV-LATE", now=late), confirm)
    assert "過期" in texts(reply) and not SHOWN_CODE.search(texts(reply))
    assert store.query(records.REQUESTS) == []


def test_flow_unknown_outcome_without_a_queue_says_it_cannot_check_automatically(ctx_for, store, settings):
    confirm, _ = confirm_rest(flow.match_text(ctx_for(), CASE_TEXT))
    holder = sqlite3.connect(path_from_url(settings.store_url), isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        reply = flow.handle_postback(ctx_for("EV-NOQ", queue=None, store=SqliteStore(
            path_from_url(settings.store_url), deadline_seconds=0.2)), confirm)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert "正在確認是否已登記" in texts(reply)
    assert "查看原本服務單" in texts(reply) and "不會重複登記" in texts(reply)


def test_flow_checking_after_a_relay_still_queues_its_own_check(make_settings, store, actor, queue):
    settings = make_settings(LOCAL_FAULTS="BEFORE_WRITE")
    plain = make_settings()
    line = line_gateway(plain)

    def ctx(event, s, now=NOW):
        return EventContext(s, store, line, now, actor, event, time.monotonic() + 1.8, queue=queue)

    draft = drafts.create_draft(store, actor, "想參加週六的社區走讀", now=NOW, settings=plain).draft
    confirm = cards.sign_reference(plain, cards.CONFIRM, draft.operation, draft.content_hash, draft.expires_at)
    flow.handle_postback(ctx("E1", plain), confirm)  # created; relay queued
    checking = flow.handle_postback(ctx("E2", settings, NOW + timedelta(seconds=1)), confirm)
    assert "正在確認" in checking.messages[0].text
    relay = ReconcileTask(draft.operation, draft.content_hash, RELAY, tag="E1")
    check = ReconcileTask(draft.operation, draft.content_hash, UNKNOWN_OUTCOME, "E2")
    assert queue.task(relay.task_name).payload["reason"] == RELAY
    assert queue.task(check.task_name).payload["reply_event_id"] == "E2"


def _confirmed(ctx_for, text: str, event_id: str) -> str:
    confirm, _ = confirm_rest(flow.match_text(ctx_for(f"{event_id}-card"), text))
    receipt = texts(flow.handle_postback(ctx_for(event_id), confirm))
    [request_id] = re.findall(SHOWN_CODE, receipt)
    return request_id


def test_flow_same_text_as_an_open_request_card_says_so_and_still_offers_the_card(ctx_for):
    # The same text sent again must not make a second request with no word about the first.
    first = _confirmed(ctx_for, "新需求：中正路上有大坑洞 機車騎士會摔", "EV-A")
    again = flow.match_text(ctx_for("EV-B"), "新需求：中正路上有大坑洞 機車騎士會摔")
    note, card = again.messages  # the note first: read before the card is tapped
    assert card.to_dict()["type"] == "flex"  # still confirmable: another request is the resident's choice
    assert first in note.text and "一樣的內容" in note.text and "不用再送" in note.text and "下面的卡片" in note.text


@pytest.mark.parametrize("second", ["新需求：中正路上有大坑洞", "新需求：公園路燈不亮"])
def test_flow_other_text_after_a_request_gets_no_same_request_note(ctx_for, second):
    _confirmed(ctx_for, "新需求：中正路上有大坑洞 機車騎士會摔", "EV-A")
    again = flow.match_text(ctx_for("EV-B"), second)
    assert len(again.messages) == 1


def test_flow_same_text_after_the_request_was_completed_gets_no_note(ctx_for, store, actor):
    _confirmed(ctx_for, "新需求：中正路上有大坑洞 機車騎士會摔", "EV-A")
    from shared.handoff import status

    latest = status.latest_request(store, actor)
    store.set(records.REQUESTS, records.Operation(actor, latest["idempotency_key"]).doc_id,
              {**latest, "human_state": "completed"})
    again = flow.match_text(ctx_for("EV-B"), "新需求：中正路上有大坑洞 機車騎士會摔")
    assert len(again.messages) == 1


def test_webhook_same_text_twice_second_card_names_the_first_request(base_env, line_standin):
    # Through the signed webhook: confirm one request, send the same text again.
    from tests.conftest import FixedClock, all_text, postback_event, reply_messages, text_event
    from tests.memory_support import webhook_with_memory

    service = webhook_with_memory(base_env, FixedClock(NOW))
    text = "新需求：中正路上有大坑洞 機車騎士會摔"
    card = reply_messages(service, line_standin, text_event(text))[0]
    confirm = {b["action"]["label"]: b["action"]["data"] for b in card["contents"]["footer"]["contents"]}["確認送出"]
    [request_id] = re.findall(SHOWN_CODE,
                              all_text(reply_messages(service, line_standin, postback_event(confirm))))
    again = reply_messages(service, line_standin, text_event(text))
    assert [m["type"] for m in again] == ["text", "flex"] and request_id in all_text(again[:1])


@pytest.mark.parametrize("tapped_before_expiry_seconds, created", [(1, True), (0, False), (-30, False)])
def test_flow_confirmation_expiry_is_judged_at_the_tap_not_when_processed(ctx_for, store, settings,
                                                                           tapped_before_expiry_seconds, created):
    """A confirmation tapped in time but processed after the card expired (queued, retried) creates the
    request; one tapped at or after the expiry (end exclusive) does not, however it is processed."""
    confirm, _ = confirm_rest(flow.match_text(ctx_for(), CASE_TEXT))
    expiry = NOW + timedelta(seconds=settings.draft_ttl_seconds)
    tapped = expiry - timedelta(seconds=tapped_before_expiry_seconds)
    reply = flow.handle_postback(ctx_for("EV-QUEUED", now=expiry + timedelta(minutes=5), event_time=tapped), confirm)
    assert bool(store.query(records.REQUESTS)) is created
    assert bool(SHOWN_CODE.search(texts(reply))) is created and ("過期" in texts(reply)) is not created


def test_flow_confirmation_event_time_after_now_cannot_extend_the_card(ctx_for, store, settings):
    """An event time later than the processing time is read as now: it never makes an expired card valid."""
    confirm, _ = confirm_rest(flow.match_text(ctx_for(), CASE_TEXT))
    late = NOW + timedelta(seconds=settings.draft_ttl_seconds + 60)
    reply = flow.handle_postback(ctx_for("EV-FUTURE", now=late, event_time=late + timedelta(hours=1)), confirm)
    assert store.query(records.REQUESTS) == [] and "過期" in texts(reply)
