"""Unknown outcomes end to end across separate processes: webhook → embedded queue (in the store's
SQLite file, dispatched by the webhook's gunicorn worker) → functions/reconcile → LINE stand-in.

Faults come from ``LOCAL_FAULTS`` (embedded store only). Queue timings are short (min 0.2 s,
max 1 s, 3 attempts), so each case settles in a few seconds.
"""
from __future__ import annotations

from datetime import datetime

import pytest
import requests

from shared.handoff.reconcile import ReconcileTask
from shared.handoff.records import Operation
from shared.identity import Actor
from shared.queue.embedded import EmbeddedQueue
from shared.store.sqlite import path_from_url
from tests.codes_support import shown_of
from tests.conftest import all_text, line_body, postback_event
from tests.handoff_support import (
    PUSH,
    REQUEST_ID,
    USER,
    accepted,
    env_with,
    log_entries,
    new_card,
    post,
    reply_text,
    request_rows,
    store_docs,
    told_request_ids,
    wait_for,
)

pytestmark = pytest.mark.slow


def confirm(webhook_url: str, standin, data: str) -> tuple[dict, str]:
    event = postback_event(data, user_id=USER)
    assert post(webhook_url, line_body(event)).status_code == 200
    return event, reply_text(standin, event["replyToken"])


def card_operation(base_env: dict, data: str) -> Operation:
    key = data.split(".")[2]
    return Operation(Actor(base_env["LOCAL_TENANT_ID"], USER), key)


def pushes_to_user(standin) -> list[str]:
    return [all_text(c["body"]["messages"]) for c in accepted(standin, PUSH) if c["body"]["to"] == USER]


def start_pair(start_function, base_env, webhook_faults: str = "", reconcile_faults: str = "", **extra):
    reconcile = start_function("reconcile", env_with(base_env, LOCAL_FAULTS=reconcile_faults, **extra))
    webhook = start_function("webhook", env_with(base_env, RECONCILE_FUNCTION_URL=reconcile.url,
                                                 LOCAL_FAULTS=webhook_faults, **extra))
    return webhook, reconcile


def test_handoff_faults_after_commit_checking_then_original_receipt(start_function, base_env, line_standin):
    webhook, _ = start_pair(start_function, base_env, webhook_faults="AFTER_COMMIT")
    data = new_card(webhook.url, line_standin)["確認送出"]
    event, first = confirm(webhook.url, line_standin, data)
    assert "正在確認是否已登記" in first and not REQUEST_ID.search(first)
    assert request_rows(base_env["LOCAL_STORE_URL"]) == 1  # the write committed; only the answer was lost

    [pushed] = wait_for(lambda: pushes_to_user(line_standin), 15, "the receipt push")
    [request] = store_docs(base_env["LOCAL_STORE_URL"], "handoff_requests")
    assert REQUEST_ID.findall(pushed) == [shown_of(request)]  # the original receipt
    assert request["idempotency_key"] == card_operation(base_env, data).idempotency_key
    [push_call] = [c for c in accepted(line_standin, PUSH)]
    expected_key = card_operation(base_env, data).retry_key("receipt")  # the receipt's first telling
    assert push_call["headers"]["x-line-retry-key"] == expected_key
    assert request_rows(base_env["LOCAL_STORE_URL"]) == 1


def test_handoff_faults_before_write_zero_rows_then_one_with_same_key(start_function, base_env, line_standin):
    webhook, _ = start_pair(start_function, base_env, webhook_faults="BEFORE_WRITE")
    data = new_card(webhook.url, line_standin)["確認送出"]
    _, first = confirm(webhook.url, line_standin, data)
    assert "正在確認是否已登記" in first
    assert request_rows(base_env["LOCAL_STORE_URL"]) == 0  # at the timeout

    [pushed] = wait_for(lambda: pushes_to_user(line_standin), 15, "the receipt push")
    [request] = store_docs(base_env["LOCAL_STORE_URL"], "handoff_requests")
    assert request["idempotency_key"] == card_operation(base_env, data).idempotency_key  # the same key
    assert request["created_by"] == "reconcile"
    assert REQUEST_ID.findall(pushed) == [shown_of(request)]


def test_handoff_faults_lookup_unavailable_retries_with_backoff_then_followup(start_function, base_env,
                                                                              line_standin):
    webhook, reconcile = start_pair(start_function, base_env, webhook_faults="AFTER_COMMIT",
                                    reconcile_faults="LOOKUP_UNAVAILABLE")
    data = new_card(webhook.url, line_standin)["確認送出"]
    event, first = confirm(webhook.url, line_standin, data)
    assert "正在確認是否已登記" in first
    operation = card_operation(base_env, data)

    [pushed] = wait_for(lambda: pushes_to_user(line_standin), 20, "the follow-up push")
    assert "工作人員" in pushed and not REQUEST_ID.search(pushed)  # honest: no receipt, a person checks
    answers = wait_for(lambda: (lambda found: found if len(found) >= 3 else None)(
        log_entries(reconcile.log_path, "reconcile answered")), 5, "three reconcile answers")
    assert [(a["retry_count"], a["status"], a["outcome"]) for a in answers] == [
        (0, 503, "lookup_unavailable"), (1, 503, "lookup_unavailable"), (2, 200, "needs_human_followup")]
    times = [datetime.fromisoformat(a["time"]) for a in answers]
    gaps = [(b - a).total_seconds() for a, b in zip(times, times[1:])]
    assert gaps[0] >= 0.2 - 0.05 and gaps[1] >= 0.4 - 0.05  # exponential backoff: 0.2 s, then 0.4 s
    [followup] = store_docs(base_env["LOCAL_STORE_URL"], "handoff_followups")
    assert followup["status"] == "needs_human_followup"
    assert followup["idempotency_key"] == operation.idempotency_key
    assert request_rows(base_env["LOCAL_STORE_URL"]) == 1  # never a second row
    queue = EmbeddedQueue(path_from_url(base_env["LOCAL_STORE_URL"]), queue_name="handoff-reconcile",
                          target_url=reconcile.url, auth_token=None)
    check = ReconcileTask(operation, data.split(".")[3], "unknown_outcome", event["webhookEventId"])
    # The queue records the last answer just after the reconcile function sends it.
    task = wait_for(lambda: (lambda t: t if t.state != "running" else None)(queue.task(check.task_name)),
                    10, "the queue to record the last answer")
    assert (task.state, task.attempts) == ("succeeded", 3)


@pytest.mark.parametrize("restart", ["worker_respawn", "new_process_and_line_redelivery"])
def test_handoff_faults_sigkill_after_commit_user_told_once(start_function, base_env, line_standin, restart):
    store_url = base_env["LOCAL_STORE_URL"]
    fast_lease = {"LOCAL_EVENT_LEASE_SECONDS": "1.5"}
    webhook, reconcile = start_pair(start_function, base_env, webhook_faults="KILL_AFTER_COMMIT", **fast_lease)
    data = new_card(webhook.url, line_standin)["確認送出"]
    event = postback_event(data, user_id=USER)
    body = line_body(event)
    try:  # the worker dies between the commit and the reply: no answer, or gunicorn's 5xx
        answered: int | None = post(webhook.url, body).status_code
    except requests.RequestException:
        answered = None
    assert answered is None or answered >= 500, f"a killed worker answered {answered}"
    assert request_rows(store_url) == 1
    assert reply_text(line_standin, event["replyToken"], wait_seconds=0) == ""  # nobody was told yet
    operation = card_operation(base_env, data)

    if restart == "new_process_and_line_redelivery":
        webhook.stop()
        webhook = start_function("webhook", env_with(base_env, RECONCILE_FUNCTION_URL=reconcile.url, **fast_lease))

        def redeliver() -> bool:  # LINE retries while the first attempt's lease holds (503)
            try:
                return post(webhook.url, body).status_code == 200
            except requests.RequestException:
                return False

        wait_for(redeliver, 15, "the redelivered event to be accepted", interval_s=0.3)
    # else: gunicorn respawns the killed worker; its at-fork start re-queues the operation.

    wait_for(lambda: (store_docs(store_url, "handoff_operations") or [{}])[0].get("notice_state") == "delivered",
             20, "the receipt to be delivered")
    queue = EmbeddedQueue(path_from_url(store_url), queue_name="handoff-reconcile", target_url=reconcile.url,
                          auth_token=None)

    def settled() -> bool:  # the relay and the re-queue (each under its own name) have finished
        counts = queue.counts()
        return counts["succeeded"] >= 1 and sum(counts.values()) == counts["succeeded"]

    wait_for(settled, 20, "the re-queued reconcile task to finish")
    [request] = store_docs(store_url, "handoff_requests")
    assert request["idempotency_key"] == operation.idempotency_key  # the card's own key, no other
    [op_doc] = store_docs(store_url, "handoff_operations")
    if restart == "worker_respawn":  # no redelivery here: the respawned worker's re-queue told the user
        assert op_doc["notice_delivered_by"] == "push"
    told = told_request_ids(line_standin, reply_tokens=(event["replyToken"],))
    assert told == [shown_of(request)]  # the user heard the receipt exactly once
    assert request_rows(store_url) == 1
