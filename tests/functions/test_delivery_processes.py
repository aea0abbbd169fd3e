"""Delivery through the functions as processes (DESIGN §11): webhook, reconcile and agent as
functions-framework processes, the embedded queues in the store's SQLite file, the LINE stand-in
with its fault hooks. LINE's redelivery is off unless a test says otherwise: no resident may
depend on it."""
from __future__ import annotations

import time

import pytest

from shared.queue.embedded import EmbeddedQueue
from shared.store.sqlite import path_from_url
from tests.conftest import all_text, line_body, postback_event, text_event
from tests.functions.handoff_support import (
    PUSH,
    REPLY,
    REQUEST_ID,
    USER,
    accepted,
    env_with,
    new_card,
    post,
    store_docs,
    told_request_ids,
    wait_for,
)

pytestmark = pytest.mark.slow


def start_all(start_function, base_env, **extra):
    """reconcile, agent and webhook, wired to one another."""
    reconcile = start_function("reconcile", env_with(base_env, **extra))
    agent = start_function("agent", env_with(base_env, RECONCILE_FUNCTION_URL=reconcile.url, **extra))
    webhook = start_function("webhook", env_with(base_env, RECONCILE_FUNCTION_URL=reconcile.url,
                                                 AGENT_FUNCTION_URL=agent.url, **extra))
    return webhook, reconcile, agent


def queues_settled(store_url: str) -> bool:
    """Every task of both embedded queues has finished (succeeded or failed)."""
    path = path_from_url(store_url)
    for name in ("handoff-reconcile", "queued-events"):
        queue = EmbeddedQueue(path, queue_name=name, target_url="http://unused.invalid/", auth_token=None)
        try:
            counts = queue.counts()
        finally:
            queue.close()
        if counts.get("pending") or counts.get("running"):
            return False
    return True


def answers_to(standin, user_id: str, tokens: set[str]) -> list[str]:
    """Accepted replies to the user's tokens and accepted pushes to the user."""
    found = []
    for call in standin.calls():
        if call["status"] != 200:
            continue
        body = call["body"] or {}
        if (call["path"] == REPLY and body.get("replyToken") in tokens) or \
                (call["path"] == PUSH and body.get("to") == user_id):
            found.append(all_text(body["messages"]))
    return found


def fresh(event: dict) -> dict:
    event["timestamp"] = int(time.time() * 1000)
    return event


@pytest.mark.slow(seconds=6)
def test_delivery_hundred_events_slow_line_api_each_resident_answered_once(start_function, base_env, line_standin):
    webhook, _, _ = start_all(start_function, base_env)
    line_standin.set_latency(REPLY, 0.1)
    line_standin.set_latency(PUSH, 0.1)
    users = [f"U{n:032x}" for n in range(1, 101)]
    events = [fresh(text_event("我要預約", user_id=u)) for u in users]
    response = post(webhook.url, line_body(*events), timeout=10)
    assert response.status_code == 200  # redelivery off: nothing is left to LINE
    outcomes = response.json()["events"]
    assert "retry" not in outcomes and outcomes.count("queued") > 0

    def everyone_told() -> bool:
        return all(answers_to(line_standin, u, {e["replyToken"]}) for u, e in zip(users, events))

    wait_for(everyone_told, 120, "every resident's answer")
    wait_for(lambda: queues_settled(base_env["LOCAL_STORE_URL"]), 60, "both queues to settle")
    for u, e in zip(users, events):
        assert len(answers_to(line_standin, u, {e["replyToken"]})) == 1, u


def confirm_with_fault(webhook_url: str, standin, fault) -> dict:
    data = new_card(webhook_url, standin)["確認送出"]
    event = fresh(postback_event(data, user_id=USER))
    fault()
    return event, post(webhook_url, line_body(event))


FAST_LEASE = {"LOCAL_EVENT_LEASE_SECONDS": "1.5"}


def test_delivery_confirm_reply_5xx_after_processing_told_once(start_function, base_env, line_standin):
    webhook, _, _ = start_all(start_function, base_env, **FAST_LEASE)
    event, response = confirm_with_fault(webhook.url, line_standin,
                                         lambda: line_standin.fail_next(REPLY, 500, after_processing=True))
    assert response.status_code == 200
    store_url = base_env["LOCAL_STORE_URL"]
    [request] = store_docs(store_url, "handoff_requests")
    # the relay task runs after the reply's lease: it must not push a receipt LINE may have shown
    wait_for(lambda: (store_docs(store_url, "handoff_operations") or [{}])[0].get("notice_state") == "reply_unknown",
             20, "the notice to settle as reply_unknown")
    wait_for(lambda: queues_settled(store_url), 20, "the queues to settle")
    assert [c for c in line_standin.calls() if c["path"] == PUSH] == []
    processed = [c for c in line_standin.calls()
                 if c["path"] == REPLY and c["body"]["replyToken"] == event["replyToken"]]
    assert [c["status"] for c in processed] == [500]
    assert REQUEST_ID.findall(all_text(processed[0]["body"]["messages"])) == [request["request_id"]]


def test_delivery_confirm_connection_refused_told_once_by_push(start_function, base_env, line_standin):
    webhook, _, _ = start_all(start_function, base_env, **FAST_LEASE)
    data = new_card(webhook.url, line_standin)["確認送出"]
    event = fresh(postback_event(data, user_id=USER))
    line_standin.refuse_connections()
    try:
        response = post(webhook.url, line_body(event))
    finally:
        line_standin.accept_connections()
    assert response.status_code == 200 and response.json()["events"] == ["queued"]
    store_url = base_env["LOCAL_STORE_URL"]
    [request] = store_docs(store_url, "handoff_requests")
    wait_for(lambda: told_request_ids(line_standin), 20, "the receipt push")
    wait_for(lambda: (store_docs(store_url, "handoff_operations") or [{}])[0].get("notice_state") == "delivered",
             20, "the receipt notice to be delivered")
    wait_for(lambda: queues_settled(store_url), 20, "the queues to settle")
    assert told_request_ids(line_standin, reply_tokens=(event["replyToken"],)) == [request["request_id"]]
    assert [c for c in accepted(line_standin, REPLY) if c["body"]["replyToken"] == event["replyToken"]] == []


def test_delivery_confirm_reply_429_told_once_later(start_function, base_env, line_standin):
    webhook, _, _ = start_all(start_function, base_env, **FAST_LEASE)
    event, response = confirm_with_fault(webhook.url, line_standin, lambda: line_standin.fail_next(REPLY, 429))
    assert response.status_code == 200 and response.json()["events"] == ["queued"]
    store_url = base_env["LOCAL_STORE_URL"]
    [request] = store_docs(store_url, "handoff_requests")
    wait_for(lambda: told_request_ids(line_standin), 20, "the receipt push")
    wait_for(lambda: (store_docs(store_url, "handoff_operations") or [{}])[0].get("notice_state") == "delivered",
             20, "the receipt notice to be delivered")
    wait_for(lambda: queues_settled(store_url), 20, "the queues to settle")
    assert told_request_ids(line_standin, reply_tokens=(event["replyToken"],)) == [request["request_id"]]
    # a redelivery of the same event now repeats nothing
    assert post(webhook.url, line_body(event)).json()["events"] == ["duplicate"]
    assert told_request_ids(line_standin, reply_tokens=(event["replyToken"],)) == [request["request_id"]]
