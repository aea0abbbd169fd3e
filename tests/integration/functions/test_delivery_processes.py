"""Delivery through the functions as processes (docs/design.md §11): webhook, reconcile and agent as
functions-framework processes, the embedded queues in the store's SQLite file, the LINE stand-in
with its fault hooks. LINE's redelivery is off unless a test says otherwise: no resident may
depend on it."""
from __future__ import annotations

import time

import pytest
import requests

from shared import inbox
from shared.handoff.records import Operation
from shared.identity import Actor
from tests.codes_support import shown_of
from tests.conftest import all_text, line_body, postback_event, text_event
from tests.handoff_support import (
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
from tests.memory_support import postbacks
from tools.function_process import queues_settled  # noqa: F401  (other process tests import it here)

pytestmark = pytest.mark.slow


def start_all(start_function, base_env, **extra):
    """reconcile, agent and webhook, wired to one another."""
    reconcile = start_function("reconcile", env_with(base_env, **extra))
    agent = start_function("agent", env_with(base_env, RECONCILE_FUNCTION_URL=reconcile.url, **extra))
    webhook = start_function("webhook", env_with(base_env, RECONCILE_FUNCTION_URL=reconcile.url,
                                                 AGENT_FUNCTION_URL=agent.url, **extra))
    return webhook, reconcile, agent


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


def stale(event: dict) -> dict:
    """An event two minutes old: its reply token is past ``LOCAL_REPLY_TOKEN_FRESH_SECONDS``, so an
    answer its reply did not deliver is pushed (a fresh, unused token is replied with instead)."""
    event["timestamp"] = int((time.time() - 120) * 1000)
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


def confirm_with_fault(webhook_url: str, standin, fault, *, age=fresh) -> dict:
    data = new_card(webhook_url, standin)["確認送出"]
    event = age(postback_event(data, user_id=USER))
    fault()
    return event, post(webhook_url, line_body(event))


FAST_LEASE = {"LOCAL_EVENT_LEASE_SECONDS": "1.5"}


def receipt_pushes(standin, user_id: str = USER) -> list[dict]:
    return [c for c in standin.calls() if c["path"] == PUSH and c["body"]["to"] == user_id]


def test_delivery_confirm_reply_5xx_after_processing_pushed_once_restated(start_function, base_env, line_standin):
    webhook, _, _ = start_all(start_function, base_env, **FAST_LEASE)
    event, response = confirm_with_fault(webhook.url, line_standin,
                                         lambda: line_standin.fail_next(REPLY, 500, after_processing=True))
    assert response.status_code == 200
    store_url = base_env["LOCAL_STORE_URL"]
    [request] = store_docs(store_url, "handoff_requests")
    # the relay task runs after the reply's lease: LINE may have shown the receipt, or not; it is
    # pushed once, restated, with the receipt's retry key
    wait_for(lambda: (store_docs(store_url, "handoff_operations") or [{}])[0].get("notice_state") == "delivered",
             20, "the receipt notice to be delivered")
    wait_for(lambda: queues_settled(store_url), 20, "the queues to settle")
    processed = [c for c in line_standin.calls()
                 if c["path"] == REPLY and c["body"]["replyToken"] == event["replyToken"]]
    assert [c["status"] for c in processed] == [500]
    assert REQUEST_ID.findall(all_text(processed[0]["body"]["messages"])) == [shown_of(request)]
    [pushed] = receipt_pushes(line_standin)
    key = Operation(Actor(base_env["LOCAL_TENANT_ID"], USER), request["idempotency_key"]).retry_key("receipt")
    assert (pushed["status"], pushed["headers"]["x-line-retry-key"]) == (200, key)
    assert REQUEST_ID.findall(all_text(pushed["body"]["messages"])) == [shown_of(request)]
    assert "再說一次" in all_text(pushed["body"]["messages"])


def post_and_die(url: str, event: dict) -> None:
    """Post an event whose owed reply kills the process that sends it (``KILL_BEFORE_REPLY``): the
    webhook's worker (no answer, or gunicorn's 5xx), or, when the webhook left the reply to the
    queue (its budget short on a loaded machine: 200, ``queued``), functions/agent's worker."""
    try:
        response = post(url, line_body(event))
    except requests.RequestException:
        return
    assert response.status_code >= 500 or (response.status_code, response.json()["events"]) == (200, ["queued"]), \
        f"a killed worker answered {response.status_code}"


def test_delivery_confirm_killed_after_the_reply_started_pushed_once_restated(start_function, base_env,
                                                                              line_standin):
    """The worker sending the receipt's reply records it as started and is killed before sending it
    (SIGKILL): nobody can tell whether it was sent. The relay pushes the receipt once, restated,
    with the receipt's retry key; the respawned worker and LINE's redelivery reply nothing."""
    webhook, _, _ = start_all(start_function, base_env, LOCAL_FAULTS="KILL_BEFORE_REPLY", **FAST_LEASE)
    data = new_card(webhook.url, line_standin)["確認送出"]
    event = fresh(postback_event(data, user_id=USER))
    post_and_die(webhook.url, event)
    store_url = base_env["LOCAL_STORE_URL"]
    [request] = store_docs(store_url, "handoff_requests")
    [pushed] = wait_for(lambda: receipt_pushes(line_standin), 30, "the receipt push")
    key = Operation(Actor(base_env["LOCAL_TENANT_ID"], USER), request["idempotency_key"]).retry_key("receipt")
    assert (pushed["status"], pushed["headers"]["x-line-retry-key"]) == (200, key)
    assert REQUEST_ID.findall(all_text(pushed["body"]["messages"])) == [shown_of(request)]

    def redeliver() -> bool:  # LINE's redelivery of the tap, once the dead attempt's lease is over
        try:
            return post(webhook.url, line_body(event)).status_code == 200
        except requests.RequestException:
            return False

    wait_for(redeliver, 20, "the redelivered tap to be accepted", interval_s=0.3)
    wait_for(lambda: queues_settled(store_url), 20, "the queues to settle")
    assert len(receipt_pushes(line_standin)) == 1
    assert [c for c in line_standin.calls() if c["path"] == REPLY and c["body"]["replyToken"] == event["replyToken"]] == []
    assert store_docs(store_url, "handoff_operations")[0]["notice_state"] == "delivered"


def post_while_line_unreachable(url: str, standin, event: dict):
    """Post the event while the LINE stand-in refuses every connection (no call is ever made)."""
    standin.refuse_connections()
    try:
        return post(url, line_body(event))
    finally:
        standin.accept_connections()



def _receipt_pushed_once(store_url, line_standin, event):
    """Wait until the receipt was pushed, its notice delivered and the queues settled; assert the
    request's id was told exactly once for ``event``. Returns the request document."""
    [request] = store_docs(store_url, "handoff_requests")
    wait_for(lambda: told_request_ids(line_standin, reply_tokens=(event["replyToken"],)), 20, "the receipt")
    wait_for(lambda: (store_docs(store_url, "handoff_operations") or [{}])[0].get("notice_state") == "delivered",
             20, "the receipt notice to be delivered")
    wait_for(lambda: queues_settled(store_url), 20, "the queues to settle")
    assert told_request_ids(line_standin, reply_tokens=(event["replyToken"],)) == [shown_of(request)]
    return request

def test_delivery_confirm_connection_refused_told_once_by_push(start_function, base_env, line_standin):
    webhook, _, _ = start_all(start_function, base_env, **FAST_LEASE)
    data = new_card(webhook.url, line_standin)["確認送出"]
    event = stale(postback_event(data, user_id=USER))
    response = post_while_line_unreachable(webhook.url, line_standin, event)
    assert response.status_code == 200 and response.json()["events"] == ["queued"]
    _receipt_pushed_once(base_env["LOCAL_STORE_URL"], line_standin, event)
    assert [c for c in accepted(line_standin, REPLY) if c["body"]["replyToken"] == event["replyToken"]] == []


@pytest.mark.parametrize("token", ["fresh", "stale"])
def test_delivery_confirm_reply_429_told_once_later(start_function, base_env, line_standin, token):
    """LINE does not process a 429: while the token is fresh the queued answer is a reply (free),
    after it a push with the event's retry key (counted against the month's quota)."""
    webhook, _, _ = start_all(start_function, base_env, **FAST_LEASE)
    event, response = confirm_with_fault(webhook.url, line_standin, lambda: line_standin.fail_next(REPLY, 429),
                                         age=fresh if token == "fresh" else stale)
    assert response.status_code == 200 and response.json()["events"] == ["queued"]
    request = _receipt_pushed_once(base_env["LOCAL_STORE_URL"], line_standin, event)
    replied = [c for c in accepted(line_standin, REPLY) if c["body"]["replyToken"] == event["replyToken"]]
    assert (len(replied), len(receipt_pushes(line_standin))) == ((1, 0) if token == "fresh" else (0, 1))
    # a redelivery of the same event now repeats nothing
    assert post(webhook.url, line_body(event)).json()["events"] == ["duplicate"]
    assert told_request_ids(line_standin, reply_tokens=(event["replyToken"],)) == [shown_of(request)]


SWEEP_OFTEN = {"LOCAL_SWEEP_INTERVAL_SECONDS": "0.5"}


def accepted_pushes(standin, user_id: str) -> list[dict]:
    return [c for c in accepted(standin, PUSH) if c["body"]["to"] == user_id]


@pytest.mark.parametrize("wiring", ["agent", "webhook_only"])
def test_delivery_memory_outcome_killed_after_the_reply_started_pushed_once(start_function, base_env, line_standin,
                                                                            wiring):
    """functions/memory saved the diet; the worker sending the outcome's reply recorded it as started
    and was killed before sending it. The sweep of the respawned webhook worker hands the recorded
    follow-up to the queued-event worker (functions/agent, or the webhook's own process without
    one), or the queue's next attempt finds it, and it is pushed once with the event's retry key."""
    memory = start_function("memory", env_with(base_env))
    extra = {"MEMORY_FUNCTION_URL": memory.url, "LOCAL_FAULTS": "KILL_BEFORE_REPLY", **FAST_LEASE, **SWEEP_OFTEN}
    if wiring == "agent":
        webhook, _, _ = start_all(start_function, base_env, **extra)
    else:
        webhook = start_function("webhook", env_with(base_env, **extra))
    card = fresh(text_event("長輩吃素，以後優先找蔬食，幫我記住", user_id=USER))
    assert post(webhook.url, line_body(card)).status_code == 200
    [shown] = wait_for(lambda: [c for c in accepted(line_standin, REPLY) if c["body"]["replyToken"] == card["replyToken"]],
                       20, "the consent card")
    tap = fresh(postback_event(postbacks(shown["body"]["messages"])["同意記住"], user_id=USER))
    post_and_die(webhook.url, tap)
    [pushed] = wait_for(lambda: accepted_pushes(line_standin, USER), 30, "the outcome's push")
    assert pushed["headers"]["x-line-retry-key"] == inbox.answer_retry_key(base_env["LOCAL_TENANT_ID"],
                                                                           tap["webhookEventId"])
    words = all_text(pushed["body"]["messages"])
    assert "再說一次" in words and "已經記住你的飲食偏好：蔬食" in words
    time.sleep(1.5)  # three more sweeps
    store_url = base_env["LOCAL_STORE_URL"]
    wait_for(lambda: queues_settled(store_url), 20, "the queues to settle")
    assert len(accepted_pushes(line_standin, USER)) == 1
    assert [c for c in line_standin.calls() if c["path"] == REPLY and c["body"]["replyToken"] == tap["replyToken"]] == []
    [preference] = store_docs(store_url, "preferences")
    assert (preference["dietary_type"], preference["revision"]) == ("vegetarian", 1)


@pytest.mark.parametrize("fault", ["429", "never_started"])
def test_delivery_webhook_only_reply_not_delivered_is_pushed_once_with_a_retry_key(start_function, base_env,
                                                                                   line_standin, fault):
    """No event queue is configured (no functions/agent): a reply LINE refuses with 429, or one whose
    connection was never made, is followed by one push with the event's retry key, as in the full
    wiring, from the webhook's own process (at once, or by its sweep once LINE is reachable again)."""
    webhook = start_function("webhook", env_with(base_env, **SWEEP_OFTEN))
    other = "U" + "f" * 32
    plain = fresh(text_event("我要預約", user_id=other))
    assert post(webhook.url, line_body(plain)).status_code == 200
    [answer] = wait_for(lambda: [c for c in accepted(line_standin, REPLY) if c["body"]["replyToken"] == plain["replyToken"]],
                        20, "the answer to the same words")
    event = stale(text_event("我要預約", user_id=USER))  # past the token's freshness: pushed
    if fault == "429":
        line_standin.fail_next(REPLY, 429)
        response = post(webhook.url, line_body(event))
    else:
        response = post_while_line_unreachable(webhook.url, line_standin, event)
    assert response.status_code == 200 and response.json()["events"] == ["queued"]
    [pushed] = wait_for(lambda: accepted_pushes(line_standin, USER), 20, "the push")
    assert pushed["headers"]["x-line-retry-key"] == inbox.answer_retry_key(base_env["LOCAL_TENANT_ID"],
                                                                           event["webhookEventId"])
    assert all_text(pushed["body"]["messages"]) == all_text(answer["body"]["messages"])
    assert post(webhook.url, line_body(event)).json()["events"] == ["duplicate"]  # LINE's redelivery
    time.sleep(1.5)  # three more sweeps
    assert len(accepted_pushes(line_standin, USER)) == 1
    assert [c for c in accepted(line_standin, REPLY) if c["body"]["replyToken"] == event["replyToken"]] == []
    [doc] = [d for d in store_docs(base_env["LOCAL_STORE_URL"], "webhook_inbox")
             if d["webhook_event_id"] == event["webhookEventId"]]
    assert doc["notice_state"] == "delivered"
