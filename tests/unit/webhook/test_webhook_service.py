"""WebhookService in-process: signatures, leases, batches and bad input, on a real SQLite file
and the recording LINE stand-in."""
from __future__ import annotations

import json
import threading
from datetime import timedelta

import pytest

from shared import inbox
from tests.conftest import all_text, line_body, postback_event, replies_to, sign, text_event


def handle(service, body: bytes, signature: str | None = "sign"):
    if signature == "sign":
        signature = sign(body)
    return service.handle(body.decode("utf-8"), signature)


def reply_calls(standin) -> list[dict]:
    return [c for c in standin.calls() if c["path"] == "/v2/bot/message/reply"]


def test_signature_valid_body_is_processed(webhook_service, line_standin):
    event = text_event("我要預約")
    result = handle(webhook_service, line_body(event))
    assert result.status == 200
    assert len(replies_to(line_standin, event["replyToken"])) == 1


def test_signature_wrong_is_rejected_and_nothing_stored(webhook_service, line_standin):
    event = text_event("我要預約")
    body = line_body(event)
    result = handle(webhook_service, body, signature=sign(body, "wrong-secret"))
    assert result.status == 400
    assert reply_calls(line_standin) == []
    assert webhook_service.store.get(inbox.COLLECTION, f"test-tenant:{event['webhookEventId']}") is None


def test_signature_missing_is_rejected(webhook_service, line_standin):
    assert handle(webhook_service, line_body(text_event("我要預約")), signature=None).status == 400
    assert reply_calls(line_standin) == []


def test_signature_reserialised_body_is_rejected(webhook_service, line_standin):
    body = line_body(text_event("花壇有素食店嗎？"))
    signature = sign(body)
    reserialised = json.dumps(json.loads(body)).encode()  # ASCII-escaped, spaced: other bytes
    assert reserialised != body
    assert webhook_service.handle(reserialised.decode(), signature).status == 400
    assert reply_calls(line_standin) == []


@pytest.mark.parametrize("text", ["我要預約😀", "👨‍👩‍👧 花壇有素食店嗎？", "𠮷野家 👍🏽"])
def test_signature_astral_and_zwj_emoji_verify(webhook_service, line_standin, text):
    event = text_event(text)
    assert handle(webhook_service, line_body(event)).status == 200
    assert len(replies_to(line_standin, event["replyToken"])) == 1


def test_service_malformed_json_with_valid_signature_is_400(webhook_service, line_standin):
    assert handle(webhook_service, b'{"events": [').status == 400
    assert handle(webhook_service, b'{"destination": "U0"}').status == 400
    assert reply_calls(line_standin) == []


def test_service_unknown_event_kind_is_200_without_reply_and_others_proceed(webhook_service, line_standin):
    unknown = {"type": "somethingNew", "mode": "active", "timestamp": 1, "webhookEventId": "01UNKNOWN00000000000000000",
               "source": {"type": "user", "userId": "U7a1e5b0c2d3f4a5b6c7d8e9f0a1b2c3d"},
               "deliveryContext": {"isRedelivery": False}}
    event = text_event("我要預約")
    assert handle(webhook_service, line_body(unknown, event)).status == 200
    assert len(reply_calls(line_standin)) == 1
    assert len(replies_to(line_standin, event["replyToken"])) == 1


def test_service_event_without_user_gets_guidance_and_no_writes(webhook_service, line_standin):
    event = text_event("新需求：幫我預約", user_id=None, group_id="C0123456789abcdef0123456789abcdef")
    assert handle(webhook_service, line_body(event)).status == 200
    [reply] = replies_to(line_standin, event["replyToken"])
    assert "好友" in all_text(reply["body"]["messages"])
    stored = webhook_service.store.query("handoff_requests") + webhook_service.store.query("handoff_drafts")
    assert stored == []


def test_service_failed_reply_does_not_stop_next_event(webhook_service, line_standin):
    first, second = text_event("我要預約"), text_event("查蔬食")
    line_standin.fail_next("/v2/bot/message/reply", 500)
    assert handle(webhook_service, line_body(first, second)).status == 200
    assert replies_to(line_standin, first["replyToken"]) == []
    assert len(replies_to(line_standin, second["replyToken"])) == 1


def test_service_postback_301_chars_gets_kind_message(webhook_service, line_standin):
    event = postback_event("places:area=" + "花" * 289)
    assert len(event["postback"]["data"]) == 301
    assert handle(webhook_service, line_body(event)).status == 200
    [reply] = replies_to(line_standin, event["replyToken"])
    assert "失效" in all_text(reply["body"]["messages"])


def test_service_unknown_area_postback_gets_kind_message(webhook_service, line_standin):
    event = postback_event("places:area=台北市")
    assert handle(webhook_service, line_body(event)).status == 200
    [reply] = replies_to(line_standin, event["replyToken"])
    assert "鄉鎮" in all_text(reply["body"]["messages"])


def test_service_menu_postback_lists_townships_with_data(webhook_service, line_standin):
    event = postback_event("menu:places")
    assert handle(webhook_service, line_body(event)).status == 200
    [reply] = replies_to(line_standin, event["replyToken"])
    labels = all_text([m.get("quickReply") for m in reply["body"]["messages"]])
    assert "花壇鄉" in labels and "彰化市" in labels


def test_lease_held_by_live_attempt_answers_503_then_processes_after_expiry(webhook_service, line_standin, clock):
    event = text_event("我要預約")
    # A first attempt claimed the event and crashed before replying.
    inbox.claim_event(webhook_service.store, "test-tenant", event["webhookEventId"], now=clock(),
                      lease_seconds=30)
    assert handle(webhook_service, line_body(event)).status == 503
    assert reply_calls(line_standin) == []
    clock.at += timedelta(seconds=29)
    assert handle(webhook_service, line_body(event)).status == 503
    clock.at += timedelta(seconds=1)  # lease_until is exclusive: at expiry the lease is free
    assert handle(webhook_service, line_body(event)).status == 200
    assert len(replies_to(line_standin, event["replyToken"])) == 1
    assert handle(webhook_service, line_body(event)).status == 200
    assert len(reply_calls(line_standin)) == 1


def test_lease_takeover_after_reply_attempt_never_replies_twice(webhook_service, line_standin, clock):
    event = text_event("我要預約")
    claim = inbox.claim_event(webhook_service.store, "test-tenant", event["webhookEventId"], now=clock(),
                              lease_seconds=30)
    inbox.mark_reply_attempted(webhook_service.store, "test-tenant", event["webhookEventId"], claim.attempt,
                               now=clock())
    clock.at += timedelta(seconds=31)
    assert handle(webhook_service, line_body(event)).status == 200
    assert reply_calls(line_standin) == []
    doc = webhook_service.store.get(inbox.COLLECTION, f"test-tenant:{event['webhookEventId']}")
    assert doc["state"] == "done" and doc["outcome"] == "reply_unknown"


def test_concurrency_eight_threads_one_event_one_reply(webhook_service, line_standin):
    body = line_body(text_event("花壇有素食店嗎？"))
    barrier = threading.Barrier(8)
    statuses: list[int] = []

    def deliver():
        barrier.wait()
        statuses.append(handle(webhook_service, body).status)

    threads = [threading.Thread(target=deliver) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(reply_calls(line_standin)) == 1
    assert statuses.count(200) >= 1 and set(statuses) <= {200, 503}


def test_budget_slow_line_api_reply_is_cut_at_its_timeout_and_not_retried(webhook_service, line_standin):
    """The reply call carries a timeout inside the budget (1 s by default), so a LINE that answers
    only after 3 s leaves the reply unknown. Real-time figures belong to ``make bench``."""
    event = text_event("我要預約")
    line_standin.delay_next("/v2/bot/message/reply", 3.0)
    result = handle(webhook_service, line_body(event))
    assert result.status == 200  # the reply's outcome is unknown: it is never retried blindly
    doc = webhook_service.store.get(inbox.COLLECTION, f"test-tenant:{event['webhookEventId']}")
    assert doc["state"] == "done" and doc["outcome"] == "reply_unknown"


def test_budget_locked_store_answers_503_at_the_store_deadline(webhook_service, line_standin, store_url):
    """The lock is held until after the call returns, so only the store deadline can end the wait. The
    delivery arrives with 0.9 s of its budget left (the service's ``monotonic`` reads earlier by the rest):
    room for one try of 0.5 s, not for a second."""
    import sqlite3
    import time

    from shared.store.sqlite import path_from_url
    from shared.webhook.service import WebhookService

    settings = webhook_service.settings
    spent = settings.webhook_budget_seconds - 0.9
    service = WebhookService(settings, webhook_service.store, webhook_service.line, clock=webhook_service.clock,
                             monotonic=lambda: time.monotonic() - spent)
    service.store.get("warm", "up")  # creates the file and table
    blocker = sqlite3.connect(path_from_url(store_url), isolation_level=None)
    blocker.execute("BEGIN IMMEDIATE")  # another writer holds the lock
    try:
        result = handle(service, line_body(text_event("我要預約")))
    finally:
        blocker.execute("ROLLBACK")
        blocker.close()
    assert result.status == 503  # LINE redelivers; nothing was claimed or replied
    assert reply_calls(line_standin) == []


def test_service_event_missing_fields_does_not_drop_the_others(webhook_service, line_standin):
    good, broken = text_event("我要預約"), text_event("查蔬食")
    del broken["webhookEventId"]
    result = handle(webhook_service, line_body(broken, good))
    assert result.status == 200
    assert result.body["events"][0] == "unreadable"
    assert len(replies_to(line_standin, good["replyToken"])) == 1
    assert replies_to(line_standin, broken["replyToken"]) == []


@pytest.mark.parametrize("body", [b'{"events":{}}', b'[]', b'{"events":"x"}', b'"events"'])
def test_service_events_not_a_list_is_400(webhook_service, line_standin, body):
    assert handle(webhook_service, body).status == 400
    assert reply_calls(line_standin) == []


def test_service_standby_mode_event_gets_no_reply(webhook_service, line_standin):
    event = text_event("我要預約")
    event["mode"] = "standby"
    assert handle(webhook_service, line_body(event)).status == 200
    assert reply_calls(line_standin) == []


class CountingStore:
    """The store with its transactions counted (every other call passes through)."""

    def __init__(self, store):
        self._store = store
        self.transactions = 0

    def run_transaction(self, fn, **kwargs):
        self.transactions += 1
        return self._store.run_transaction(fn, **kwargs)

    def __getattr__(self, name):
        return getattr(self._store, name)


def test_side_effect_free_reply_claims_and_records_the_reply_in_one_transaction(webhook_service, line_standin):
    store = webhook_service.store = CountingStore(webhook_service.store)
    event = text_event("選單")
    assert handle(webhook_service, line_body(event)).status == 200
    assert len(replies_to(line_standin, event["replyToken"])) == 1
    assert store.transactions == 2  # claim with the reply's start, then done
    doc = store.get(inbox.COLLECTION, f"test-tenant:{event['webhookEventId']}")
    assert doc["state"] == "done" and doc["outcome"] == "replied" and doc["reply_attempted"] is True
    store.transactions = 0
    other = text_event("查蔬食")  # not known to be free of side effects: claimed, then the reply recorded
    assert handle(webhook_service, line_body(other)).status == 200
    assert len(replies_to(line_standin, other["replyToken"])) == 1
    assert store.transactions == 3


def test_side_effect_free_reply_is_the_routed_reply(webhook_service):
    from shared.context import EventContext
    from shared.identity import Actor
    from shared.line.webhook_body import read_event
    from shared.routing import SIDE_EFFECT_FREE_ENTRIES, dispatch_event, side_effect_free_reply

    ctx = EventContext(webhook_service.settings, webhook_service.store, webhook_service.line,
                       webhook_service.clock(), Actor("test-tenant", "U" + "1" * 32), "01EARLY", 0.0)
    for text in SIDE_EFFECT_FREE_ENTRIES:
        event = read_event(text_event(f" {text} ")).event
        assert side_effect_free_reply(ctx, event).messages == dispatch_event(ctx, event).messages
    for text in ("查蔬食", "留下服務詢問", "新需求：選單", "花壇有素食店嗎？"):
        assert side_effect_free_reply(ctx, read_event(text_event(text)).event) is None
    assert side_effect_free_reply(ctx, read_event(postback_event("menu:main")).event) is None


def test_side_effect_free_reply_takeover_after_its_claim_never_replies(webhook_service, line_standin, clock):
    """An attempt that claimed the event with its reply started and then died: its reply's outcome
    is unknown, so the redelivery after the lease finishes the event and sends nothing."""
    event = text_event("選單")
    first = inbox.claim_event(webhook_service.store, "test-tenant", event["webhookEventId"], now=clock(),
                              lease_seconds=30, claimant="a1", start_reply=True)
    assert first.claim is inbox.EventClaim.CLAIMED and not first.reply_attempted
    again = inbox.claim_event(webhook_service.store, "test-tenant", event["webhookEventId"], now=clock(),
                              lease_seconds=30, claimant="a1", start_reply=True)  # its own answer was lost
    assert again.claim is inbox.EventClaim.CLAIMED and not again.reply_attempted  # its reply is not sent yet
    assert handle(webhook_service, line_body(event)).status == 503  # the lease is live
    clock.at += timedelta(seconds=31)
    assert handle(webhook_service, line_body(event)).status == 200
    assert reply_calls(line_standin) == []
    doc = webhook_service.store.get(inbox.COLLECTION, f"test-tenant:{event['webhookEventId']}")
    assert doc["state"] == "done" and doc["outcome"] == "reply_unknown"


def test_side_effect_free_reply_takeover_of_an_unstarted_claim_replies_once(webhook_service, line_standin, clock):
    event = text_event("選單")
    inbox.claim_event(webhook_service.store, "test-tenant", event["webhookEventId"], now=clock(),
                      lease_seconds=30)  # died before starting a reply
    clock.at += timedelta(seconds=31)
    assert handle(webhook_service, line_body(event)).status == 200
    assert handle(webhook_service, line_body(event)).status == 200
    assert len(replies_to(line_standin, event["replyToken"])) == 1


class DurabilityStore(CountingStore):
    """The store with each transaction's ``durable`` recorded; ``lose_non_durable`` makes it drop every
    non-durable transaction after telling its caller it committed, as a power loss right after a
    commit without an fsync would (the caller returns; the write is gone)."""

    def __init__(self, store, *, lose_non_durable: bool = False):
        super().__init__(store)
        self.durable: list[bool] = []
        self.lose_non_durable = lose_non_durable

    def run_transaction(self, fn, **kwargs):
        self.durable.append(kwargs.get("durable", True))
        if self.lose_non_durable and not kwargs.get("durable", True):
            return True  # what mark_done's transaction answers when it wrote
        return super().run_transaction(fn, **kwargs)


def test_side_effect_free_reply_finish_alone_is_not_fsynced(webhook_service, line_standin):
    """The claim that records the reply as started is durable; only the finish of a reply that
    carries nothing may skip its fsync. Every other event keeps durable writes throughout."""
    store = webhook_service.store = DurabilityStore(webhook_service.store)
    event = text_event("選單")
    assert handle(webhook_service, line_body(event)).status == 200
    assert store.durable == [True, False]  # claim with the reply's start, then done
    store.durable.clear()
    other = text_event("查蔬食")
    assert handle(webhook_service, line_body(other)).status == 200
    assert store.durable and all(store.durable)


def test_side_effect_free_reply_finish_lost_to_a_power_loss_never_replies_twice(webhook_service, line_standin,
                                                                                clock):
    """A power loss takes the non-durable finish away: the inbox keeps the durable claim, "reply
    started" and processing. A redelivery (after the lease) and the sweep each finish such an event
    as reply_unknown, and neither replies, pushes or queues anything."""
    from shared.sweep import finish_abandoned

    store = webhook_service.store = DurabilityStore(webhook_service.store, lose_non_durable=True)
    redelivered, swept = text_event("選單"), text_event("我要預約")
    for event in (redelivered, swept):
        assert handle(webhook_service, line_body(event)).status == 200
        assert len(replies_to(line_standin, event["replyToken"])) == 1
        doc = store.get(inbox.COLLECTION, f"test-tenant:{event['webhookEventId']}")
        assert doc["state"] == "processing" and doc["reply_attempted"] is True  # the finish was lost
    store.lose_non_durable = False
    calls_before = len(line_standin.calls())

    assert handle(webhook_service, line_body(redelivered)).status == 503  # its lease is still live
    clock.at += timedelta(seconds=webhook_service.settings.event_lease_seconds + 1)
    assert handle(webhook_service, line_body(redelivered)).status == 200

    class RecordingQueue:
        def __init__(self):
            self.tasks = []

        def enqueue(self, name, payload, *, delay_seconds=0.0):
            self.tasks.append(name)

    queue = RecordingQueue()
    assert finish_abandoned(webhook_service.settings, store, queue, now=clock()) == 1  # only `swept` was left
    assert queue.tasks == []
    for event in (redelivered, swept):
        doc = store.get(inbox.COLLECTION, f"test-tenant:{event['webhookEventId']}")
        assert doc["state"] == "done" and doc["outcome"] == "reply_unknown"
        assert doc["content_removed"] is True and "text" not in (doc["event"].get("message") or {})
        assert len(replies_to(line_standin, event["replyToken"])) == 1
    assert len(line_standin.calls()) == calls_before  # no reply, no push
