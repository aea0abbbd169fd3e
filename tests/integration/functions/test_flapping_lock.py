"""A flapping store lock under concurrent senders (docs/design.md §11), through the functions as processes:
a second process holds the SQLite write lock 0.6 s, frees it 0.05 s, over and over, while senders
post events to the webhook and redeliver every non-200 answer (as LINE does when the operator
enabled redelivery). The issue's run: 12 s of flapping, 12 senders (about half a minute).

Claims: every event ends answered exactly once (a reply to its token or a push with its retry
key), or queued with a recorded reason and answered by the worker; no inbox entry stays
``processing``; every confirmation ends as a request row or a ``needs_human_followup``.
"""
from __future__ import annotations

import subprocess
import sys
import threading
import time

import pytest
import requests

from shared import inbox
from shared.context import RESTATED_HEAD
from shared.handoff import wording
from shared.handoff.records import Operation
from shared.identity import Actor
from shared.store.sqlite import path_from_url
from tests.conftest import all_text, line_body, postback_event, text_event
from tests.handoff_support import PUSH, REPLY, post, store_docs, wait_for
from tests.integration.functions.test_delivery_processes import queues_settled, start_all

pytestmark = pytest.mark.slow

FLAP_SECONDS, SENDERS = 12.0, 12
#: The first line of the "checking" answer (an unknown outcome whose result is pushed later).
CHECKING = wording.pending_message(will_check=True).text.splitlines()[0]
LOCKER = """
import sqlite3, sys, time
conn = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=5)
end = time.monotonic() + float(sys.argv[2])
print("ready", flush=True)
while time.monotonic() < end:
    conn.execute("BEGIN IMMEDIATE")
    time.sleep(0.6)
    conn.execute("ROLLBACK")
    time.sleep(0.05)
"""


def deliver(url: str, event: dict, deadline: float) -> int:
    """Post until 200, redelivering the same event (``isRedelivery``) on any other answer."""
    attempts = 0
    while time.monotonic() < deadline:
        attempts += 1
        try:
            if post(url, line_body(event), timeout=10).status_code == 200:
                return attempts
        except requests.RequestException:
            pass
        event = {**event, "deliveryContext": {"isRedelivery": True}}
        time.sleep(0.2)
    raise AssertionError("an event was never accepted")


def _answered_events(op: dict) -> set[str]:
    """The confirmations an operation's receipt answers: the one that created it in the webhook
    (``created_by_event``), or the one answered "checking" whose check created it in reconcile
    (``checked_event``; ``created_by_event`` is then None)."""
    return {op.get("created_by_event"), op.get("checked_event")} - {None}


def receipt_keys(store_url: str) -> dict[str, str]:
    """webhookEventId of a confirmation → the retry key of its request's receipt notice.

    A confirmation whose reply never reached the resident is answered by the outbox instead: the
    relay (or the check that created the request) pushes the receipt with this key, and the
    event then says nothing more.
    """
    return {event_id: Operation(Actor(op["tenant_id"], op["user_id"]), op["idempotency_key"]).retry_key("receipt")
            for op in store_docs(store_url, "handoff_operations") for event_id in _answered_events(op)}


def answers_for(standin, event: dict, receipts: dict[str, str] | None = None) -> list[dict]:
    """Accepted replies to the event's token and accepted pushes carrying its answer's retry key
    (or, for a confirmation, its receipt's)."""
    keys = {inbox.answer_retry_key("test-tenant", event["webhookEventId"]),
            (receipts or {}).get(event["webhookEventId"])} - {None}
    return [c for c in standin.calls() if c["status"] == 200 and (
        (c["path"] == REPLY and c["body"].get("replyToken") == event["replyToken"])
        or (c["path"] == PUSH and c["headers"].get("x-line-retry-key") in keys))]


def docs_of(store_url: str, event_id: str) -> dict:
    """The inbox entry and (for a confirmation) the operation's notice fields, for a failure message."""
    inbox_doc = next((d for d in store_docs(store_url, "webhook_inbox") if d["webhook_event_id"] == event_id), {})
    ops = [o for o in store_docs(store_url, "handoff_operations") if event_id in _answered_events(o)]
    keep = ("state", "outcome", "queued_reason", "answer_via", "reply_attempted", "attempt")
    return {"inbox": {k: inbox_doc.get(k) for k in keep}
            | {k: v for k, v in inbox_doc.items() if k.startswith("notice_") and k != "notice_retry_key"},
            "operation": [{k: v for k, v in o.items() if k.startswith("notice_") and k != "notice_retry_key"}
                          for o in ops]}


def card_confirm_data(messages: list[dict]) -> str | None:
    for message in messages:
        footer = (message.get("contents") or {}).get("footer") or {}
        for button in footer.get("contents", []):
            if button.get("action", {}).get("label") == "確認送出":
                return button["action"]["data"]
    return None


@pytest.mark.slow(seconds=17)
def test_flapping_lock_every_event_answered_once_or_queued(start_function, base_env, line_standin):
    store_url = base_env["LOCAL_STORE_URL"]
    webhook, _, _ = start_all(start_function, base_env, LOCAL_EVENT_LEASE_SECONDS="2",
                              LOCAL_SWEEP_INTERVAL_SECONDS="1")
    post(webhook.url, line_body(text_event("我要預約")))  # the store file and tables exist
    locker = subprocess.Popen([sys.executable, "-c", LOCKER, path_from_url(store_url), str(FLAP_SECONDS)],
                              stdout=subprocess.PIPE, text=True)
    assert locker.stdout.readline().strip() == "ready"
    sent: list[dict] = []
    confirms: list[dict] = []
    lock = threading.Lock()
    errors: list[BaseException] = []
    stop_at = time.monotonic() + FLAP_SECONDS

    def sender(n: int) -> None:
        user = f"U{0xF1A9000 + n:032x}"
        try:
            i = 0
            while time.monotonic() < stop_at:
                i += 1
                if i % 3:
                    event = text_event("我要預約", user_id=user)
                    deliver(webhook.url, event, time.monotonic() + 60)
                    with lock:
                        sent.append(event)
                    continue
                draft = text_event(f"新需求：第{n}-{i}次詢問", user_id=user)
                deliver(webhook.url, draft, time.monotonic() + 60)
                with lock:
                    sent.append(draft)
                found = wait_for(lambda draft=draft: answers_for(line_standin, draft), 90, "the card")
                data = card_confirm_data(found[0]["body"]["messages"])
                if data is None:  # the store was too busy for a draft: the answer says so
                    continue
                confirm = postback_event(data, user_id=user)
                deliver(webhook.url, confirm, time.monotonic() + 60)
                with lock:
                    sent.append(confirm)
                    confirms.append(confirm)
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=sender, args=(n,)) for n in range(SENDERS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    locker.wait(30)
    assert not errors, errors[0]
    assert len(sent) >= SENDERS and confirms

    try:
        wait_for(lambda: all(answers_for(line_standin, e, receipt_keys(store_url)) for e in sent), 180,
                 "every event's answer")
    except AssertionError as timed_out:
        docs = {d["webhook_event_id"]: d for d in store_docs(store_url, "webhook_inbox")}
        receipts = receipt_keys(store_url)
        missing = [docs.get(e["webhookEventId"]) for e in sent if not answers_for(line_standin, e, receipts)]
        raise AssertionError(f"{len(missing)} of {len(sent)} unanswered: "
                             + repr([{k: v for k, v in (d or {}).items() if k != "event"} for d in missing][:3])
                             ) from timed_out
    wait_for(lambda: queues_settled(store_url), 90, "both queues to settle")
    receipts = receipt_keys(store_url)
    for event in sent:
        answers = answers_for(line_standin, event, receipts)
        # An answer "正在確認…" promises the check's result as a follow-up push under the receipt's own
        # key (docs/design.md §4): that push is the promised second message, not a second answer.
        key = receipts.get(event["webhookEventId"])
        if any(CHECKING in all_text(a["body"]["messages"]) for a in answers):
            followups = [a for a in answers if a["path"] == PUSH and key and a["headers"].get("x-line-retry-key") == key]
            assert len(followups) <= 1, (event["webhookEventId"], "the check's result was pushed twice")
            answers = [a for a in answers if a not in followups]
        # A receipt reply whose outcome LOCAL could not record (the lock held its "delivered" and its
        # end) is followed by one push under the receipt's key, worded to be read twice (docs/delivery.md,
        # "After a reply of unknown outcome"): a restatement, not a second answer.
        restated = [a for a in answers if a["path"] == PUSH and key and a["headers"].get("x-line-retry-key") == key
                    and RESTATED_HEAD in all_text(a["body"]["messages"])]
        assert len(restated) <= 1, (event["webhookEventId"], "the receipt was restated twice")
        if restated and len(answers) > 1:
            answers = [a for a in answers if a not in restated]
        assert len(answers) == 1, (event["webhookEventId"], [
            (a["path"], "receipt key" if a["headers"].get("x-line-retry-key") == receipts.get(event["webhookEventId"])
             else "answer key" if a["headers"].get("x-line-retry-key") else "reply token",
             all_text(a["body"]["messages"])[:40]) for a in answers], docs_of(store_url, event["webhookEventId"]))
    docs = {d["webhook_event_id"]: d for d in store_docs(store_url, "webhook_inbox")}
    for event in sent:
        doc = docs[event["webhookEventId"]]
        assert doc["state"] in ("done", "queued"), doc["state"]
        if doc["state"] == "queued":
            assert doc["queued_reason"] and doc["notice_state"] in ("delivered", "reply_unknown", "failed")
            if doc["notice_state"] == "failed":  # said nothing: its confirmation's receipt was told instead
                assert doc["notice_failed_reason"] == "no_answer" and event["webhookEventId"] in receipts
    assert not [d for d in docs.values() if d["state"] == "processing"]
    # every confirmation ends as a request row or a follow-up, never both, never two rows
    requests_ = store_docs(store_url, "handoff_requests")
    followups = store_docs(store_url, "handoff_followups")
    confirmed_drafts = [d for d in store_docs(store_url, "handoff_drafts") if d.get("confirm_requested_at")]
    keys = [r["idempotency_key"] for r in requests_]
    assert len(keys) == len(set(keys))
    not_created = [o["idempotency_key"] for o in store_docs(store_url, "handoff_operations")
                   if o.get("state") == "not_created"]
    settled = set(keys) | {f["idempotency_key"] for f in followups} | set(not_created)
    unsettled = [d for d in confirmed_drafts if d["idempotency_key"] not in settled
                 and d["status"] not in ("superseded", "withdrawn", "cancelled")]
    assert unsettled == []
