"""LINE's push quota through the functions as processes (docs/delivery.md#push-quota): webhook,
reconcile and agent as functions-framework processes, the embedded queues, signed webhook bodies
and the LINE stand-in with a monthly limit. A push LINE refuses for the monthly limit is never
retried and lands on the staff follow-up list (``make requests``); the serving webhook's sweep
reads the quota and warns the staff group once."""
from __future__ import annotations

import io
import json
import time

import pytest

from tests.conftest import all_text, line_body, text_event
from tests.handoff_support import PUSH, REPLY, USER, accepted, env_with, post, store_docs, wait_for
from tools import open_requests

pytestmark = pytest.mark.slow

GROUP = "C0a1b2c3d4e5f60718293a4b5c6d7e8f9"


def stale(event: dict) -> dict:
    """An event two minutes old: its reply token is past its freshness, so its answer is pushed."""
    event["timestamp"] = int((time.time() - 120) * 1000)
    return event


def open_rows(env: dict) -> list[dict]:
    out = io.StringIO()
    assert open_requests.main(env, stdout=out, stderr=io.StringIO()) == 0
    return [json.loads(line) for line in out.getvalue().splitlines()]


def test_push_refused_for_the_monthly_limit_is_on_the_staff_follow_up_list_never_retried(
        start_function, base_env, line_standin):
    reconcile = start_function("reconcile", env_with(base_env))
    agent = start_function("agent", env_with(base_env, RECONCILE_FUNCTION_URL=reconcile.url))
    webhook = start_function("webhook", env_with(base_env, RECONCILE_FUNCTION_URL=reconcile.url,
                                                 AGENT_FUNCTION_URL=agent.url))
    line_standin.set_quota(200, used=200)  # the month's pushes are used up
    event = stale(text_event("我要預約", user_id=USER))
    line_standin.fail_next(REPLY, 429)  # a rate limit on the reply: the answer is owed by push
    response = post(webhook.url, line_body(event))
    assert response.status_code == 200 and response.json()["events"] == ["queued"]
    store_url = base_env["LOCAL_STORE_URL"]
    [followup] = wait_for(lambda: store_docs(store_url, "handoff_followups"), 20, "the follow-up record")
    [refused] = [c for c in line_standin.calls() if c["path"] == PUSH]
    assert (refused["status"], refused["response"]["message"]) == (429, "You have reached your monthly limit.")
    [answer_refused] = [c for c in line_standin.calls() if c["path"] == REPLY and c["status"] == 429]
    assert answer_refused["body"]["messages"][0]["text"] in followup["text"]  # staff read what the resident missed
    [row] = open_rows(base_env)  # `make requests`
    assert (row["kind"], row["human_state"], row["reason"]) == ("followup", "needs_human_followup", "monthly_limit")
    [doc] = [d for d in store_docs(store_url, "webhook_inbox") if d["webhook_event_id"] == event["webhookEventId"]]
    assert (doc["notice_state"], doc["notice_failed_reason"]) == ("failed", "monthly_limit")
    time.sleep(1.0)  # the queue's fast retries would have come by now
    assert len([c for c in line_standin.calls() if c["path"] == PUSH]) == 1  # never retried blindly
    assert accepted(line_standin, PUSH) == []
    [count] = store_docs(store_url, "line_push_counts")
    assert (count.get("pushes", 0), count["refused_monthly_limit"]) == (0, 1)


def test_serving_webhook_sweep_reads_the_quota_and_warns_the_staff_group_once(start_function, base_env,
                                                                            line_standin):
    line_standin.set_quota(200, used=170)
    # a sweep every 0.3 s; a sweep window of about 1.1 s (the fast queue's backoffs and reconcile delay)
    env = env_with(base_env, LOCAL_STAFF_GROUP_ID=GROUP, LOCAL_SWEEP_INTERVAL_SECONDS="0.3")
    webhook = start_function("webhook", env)
    event = text_event("選單")
    assert post(webhook.url, line_body(event)).status_code == 200  # the first request starts the sweep
    [warning] = wait_for(lambda: [c for c in accepted(line_standin, PUSH) if c["body"]["to"] == GROUP], 20,
                         "the staff group's warning")
    assert "170" in all_text(warning["body"]["messages"]) and "200" in all_text(warning["body"]["messages"])
    wait_for(lambda: len([c for c in line_standin.calls() if c["path"] == "/v2/bot/message/quota"]) >= 3, 20,
             "three windows' quota reads")
    assert len([c for c in accepted(line_standin, PUSH) if c["body"]["to"] == GROUP]) == 1
