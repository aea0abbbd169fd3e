"""Reconcile down far longer than the queue's retry window, with unknown-outcome confirmations
(docs/design.md §4, §11), through the functions as processes: the webhook (LOCAL_FAULTS=BEFORE_WRITE) and,
later, functions/reconcile on the URL the queue was given all along; the embedded queue and the
sweep in the webhook's worker; the LINE stand-in.

Times are short and configured, never waited out in full: the queue gives up after about 1 s
(0.2 s, 0.4 s backoff, 3 attempts), the sweep runs every 0.5 s, a draft lives 3 s. The outage lasts
until every confirmation's task has failed at least twice (two full retry windows), which is the
claim: the durable record on the draft, not any task, carries the confirmation through.
"""
from __future__ import annotations

import os

import pytest

from shared.queue.embedded import EmbeddedQueue
from shared.store.sqlite import path_from_url
from tests.codes_support import shown_of
from tests.conftest import line_body, postback_event
from tests.handoff_support import (
    REQUEST_ID,
    accepted,
    env_with,
    new_card,
    post,
    reply_text,
    store_docs,
    wait_for,
)
from tools.function_process import FunctionProcess, free_port

pytestmark = pytest.mark.slow

PUSH = "/v2/bot/message/push"
USERS = [f"U{n:032x}" for n in range(0xA000, 0xA00A)]  # ten residents
OUTAGE = {"LOCAL_SWEEP_INTERVAL_SECONDS": "0.5", "LOCAL_DRAFT_TTL_SECONDS": "3"}


def failed_tasks(store_url: str) -> int:
    queue = EmbeddedQueue(path_from_url(store_url), queue_name="handoff-reconcile",
                          target_url="http://unused.invalid/", auth_token=None)
    try:
        return queue.counts()["failed"]
    finally:
        queue.close()


def test_reconcile_outage_ten_unknown_confirmations_each_settle_once(start_function, base_env, line_standin,
                                                                      tmp_path):
    store_url = base_env["LOCAL_STORE_URL"]
    reconcile_port = free_port()
    reconcile_url = f"http://127.0.0.1:{reconcile_port}/"  # nothing listens there yet: reconcile is down
    webhook_env = env_with(base_env, RECONCILE_FUNCTION_URL=reconcile_url, LOCAL_FAULTS="BEFORE_WRITE", **OUTAGE)
    webhook = start_function("webhook", webhook_env)

    confirmations = []
    for user in USERS:
        data = new_card(webhook.url, line_standin, user_id=user)["確認送出"]
        event = postback_event(data, user_id=user)
        assert post(webhook.url, line_body(event)).status_code == 200
        assert "正在確認是否已登記" in reply_text(line_standin, event["replyToken"])
        confirmations.append((user, event))
    assert store_docs(store_url, "handoff_requests") == []

    # The outage outlasts the retry window: every first task fails, then the sweep's tasks fail too.
    wait_for(lambda: failed_tasks(store_url) >= len(USERS), 30, "the first tasks to fail")
    webhook.stop()  # a webhook restart in the middle of the outage
    webhook = start_function("webhook", webhook_env)
    wait_for(lambda: failed_tasks(store_url) >= 2 * len(USERS), 30, "the sweep's tasks to fail as well")
    assert store_docs(store_url, "handoff_requests") == [] and accepted(line_standin, PUSH) == []

    env = {k: v for k, v in os.environ.items() if not k.startswith(("LINE_", "LOCAL_"))}
    env.update(env_with(base_env, **OUTAGE))
    reconcile = FunctionProcess("reconcile", env, tmp_path / "reconcile-back.log", port=reconcile_port, preloaded=True)
    try:
        def settled() -> bool:
            requests = store_docs(store_url, "handoff_requests")
            followups = store_docs(store_url, "handoff_followups")
            return len(requests) + len(followups) >= len(USERS)

        wait_for(settled, 60, "every confirmation to end as a request or a follow-up")
        wait_for(lambda: len(accepted(line_standin, PUSH)) >= len(USERS), 30, "every resident to be told")
    finally:
        reconcile.stop()

    requests = {r["user_id"]: r for r in store_docs(store_url, "handoff_requests")}
    followups = {f["user_id"]: f for f in store_docs(store_url, "handoff_followups")}
    assert set(requests) | set(followups) == set(USERS) and not set(requests) & set(followups)
    drafts = {d["user_id"]: d for d in store_docs(store_url, "handoff_drafts")}
    for user, _event in confirmations:
        pushed = [c for c in accepted(line_standin, PUSH) if c["body"]["to"] == user]
        assert len(pushed) == 1, f"{user} was told {len(pushed)} times"
        if user in requests:  # the consent was given in time: created, though the TTL has long passed
            assert requests[user]["idempotency_key"] == drafts[user]["idempotency_key"]
            texts = str(pushed[0]["body"]["messages"])
            assert REQUEST_ID.findall(texts) == [shown_of(requests[user])]
    assert len(store_docs(store_url, "handoff_requests")) == len(requests)  # never a second row
