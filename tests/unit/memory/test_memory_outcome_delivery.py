"""A memory outcome whose reply outcome is unknown still reaches the resident (docs/delivery.md, "After a reply of unknown outcome"):
the in-process WebhookService on a real SQLite file, the LINE stand-in with its fault hooks, the
queued-event worker behind the real embedded queue (or, in a webhook-only deployment, in the
webhook's own process), and functions/memory's use case in-process (``DirectMemoryClient``)."""
from __future__ import annotations

import json
import time
from datetime import timedelta

import pytest

from shared import inbox
from shared.config import WEBHOOK_REQUIRED, Settings
from shared.deferred_events.local import LocalEventQueue
from shared.deferred_events.task import QueuedEventTask
from shared.deferred_events.worker import QueuedEventWorker
from shared.queue.embedded import EmbeddedQueue
from shared.store.sqlite import path_from_url
from shared.sweep import sweep
from shared.webhook.service import WebhookService
from shared.wiring import line_gateway, open_store
from tests.conftest import all_text, line_body, reply_messages, sign, text_event
from tests.memory_support import USER_A, DirectMemoryClient, postbacks, preference_of, tap_event

REPLY, PUSH = "/v2/bot/message/reply", "/v2/bot/message/push"
#: How the reply of the outcome ends with an unknown outcome: LINE's 5xx (before or after it showed
#: it), or no answer within the reply's timeout (the stand-in answers after it, having shown it).
UNKNOWN_REPLIES = {
    "500": lambda standin: standin.fail_next(REPLY, 500),
    "500_after_processing": lambda standin: standin.fail_next(REPLY, 500, after_processing=True),
    "timeout": lambda standin: standin.delay_next(REPLY, 0.8),  # the reply's timeout is 0.5 s here
}


class Deployment:
    """The webhook, and the worker that answers what it queues: behind the embedded queue
    (``agent_queue``) or in the webhook's process (``webhook_only``, no event queue configured)."""

    def __init__(self, env: dict, clock, wiring: str, *, budget_left: float | None = None):
        self.settings = Settings.from_env({**env, "LOCAL_LINE_TIMEOUT_SECONDS": "0.5"}, required=WEBHOOK_REQUIRED)
        self.store = open_store(self.settings)
        memory = DirectMemoryClient(self.settings, open_store(self.settings), clock)
        self.worker = QueuedEventWorker(self.settings, self.store, line_gateway(self.settings), memory=memory,
                                        clock=clock)
        self.queue = None
        self.local = None
        if wiring == "agent_queue":
            self.queue = EmbeddedQueue(path_from_url(self.settings.store_url), queue_name="queued-events",
                                       target_url="http://agent.invalid/", auth_token=None, clock=clock,
                                       min_backoff_seconds=0.0, max_backoff_seconds=0.0, http=self._deliver)
        else:
            self.local = LocalEventQueue(self.worker)
        budget = self.settings.webhook_budget_seconds
        spent = (lambda: time.monotonic() - (budget - budget_left)) if budget_left is not None else time.monotonic
        self.webhook = WebhookService(self.settings, self.store, line_gateway(self.settings), clock=clock,
                                      memory=memory, event_queue=self.queue, local_events=self.local,
                                      monotonic=spent)
        # Consent cards come from a webhook without a queue: it answers inline however slow the machine.
        self.cards = WebhookService(self.settings, self.store, line_gateway(self.settings), clock=clock,
                                    memory=memory)

    def _deliver(self, url, raw, headers, timeout_seconds) -> int:
        task = QueuedEventTask.from_payload(json.loads(raw))
        return self.worker.run(task, retry_count=int(headers["X-CloudTasks-TaskRetryCount"])).http_status

    def post(self, event: dict) -> list[str]:
        body = line_body(event)
        return self.webhook.handle(body.decode(), sign(body)).body["events"]

    def drain(self) -> None:
        if self.queue is not None:
            while self.queue.dispatch_due(limit=10):
                pass

    def sweep(self) -> None:
        sweep(self.settings, self.store, None, self.queue if self.queue is not None else self.local)
        self.drain()


def card_approve(deployment: Deployment, standin, user_id: str = USER_A) -> str:
    messages = reply_messages(deployment.cards, standin, text_event("長輩吃素，以後優先找蔬食，幫我記住",
                                                                    user_id=user_id))
    return postbacks(messages)["同意記住"]


def pushes_to(standin, user_id: str) -> list[dict]:
    return [c for c in standin.calls() if c["path"] == PUSH and c["body"]["to"] == user_id]


@pytest.mark.parametrize("fault", list(UNKNOWN_REPLIES))
@pytest.mark.parametrize("wiring", ["agent_queue", "webhook_only"])
def test_memory_outcome_reply_of_unknown_outcome_is_pushed_once_restated(base_env, clock, line_standin, wiring,
                                                                        fault):
    deployment = Deployment(base_env, clock, wiring)
    tap = tap_event(card_approve(deployment, line_standin), USER_A, clock())
    UNKNOWN_REPLIES[fault](line_standin)
    assert deployment.post(tap) == ["queued"]  # the unknown outcome is recorded with the push it owes
    deployment.drain()
    assert preference_of(deployment.store).dietary_type == "vegetarian"
    [reply] = line_standin.wait_for(lambda c: c["path"] == REPLY and c["body"]["replyToken"] == tap["replyToken"])
    assert "已經記住" in all_text(reply["body"]["messages"])
    [pushed] = pushes_to(line_standin, USER_A)
    key = inbox.answer_retry_key(deployment.settings.tenant_id, tap["webhookEventId"])
    assert (pushed["status"], pushed["headers"]["x-line-retry-key"]) == (200, key)
    words = all_text(pushed["body"]["messages"])
    assert "再說一次" in words and "已經記住你的飲食偏好：蔬食" in words  # restates what is now remembered

    # A second delivery of the task, a sweep and LINE's redelivery of the tap send nothing more.
    again = deployment.worker.run(QueuedEventTask(deployment.settings.tenant_id, tap["webhookEventId"]),
                                  retry_count=1)
    assert again.http_status == 200
    deployment.sweep()
    assert deployment.post({**tap, "deliveryContext": {"isRedelivery": True}}) == ["duplicate"]
    assert len(pushes_to(line_standin, USER_A)) == 1
    assert len([c for c in line_standin.calls() if c["path"] == REPLY and c["body"]["replyToken"] == tap["replyToken"]]) == 1


@pytest.mark.parametrize("wiring", ["agent_queue", "webhook_only"])
def test_memory_outcome_push_after_an_unknown_reply_that_fails_is_pushed_by_the_sweep_with_the_same_key(
        base_env, clock, line_standin, wiring):
    """The follow-up's own push meets a 503 after LINE showed it: it stays owed, and the next delivery (the
    queue's retry, or the sweep) pushes it with the same retry key; LINE shows it once. A search
    answer whose reply is unknown is not followed up."""
    deployment = Deployment(base_env, clock, wiring)
    tap = tap_event(card_approve(deployment, line_standin), USER_A, clock())
    line_standin.fail_next(REPLY, 500)
    line_standin.fail_next(PUSH, 503, times=1, after_processing=True)
    assert deployment.post(tap) == ["queued"]
    deployment.drain()
    deployment.sweep()
    attempts = pushes_to(line_standin, USER_A)
    assert [c["status"] for c in attempts] == [503, 409]  # shown at the first push, deduplicated after
    assert {c["headers"]["x-line-retry-key"] for c in attempts} == {
        inbox.answer_retry_key(deployment.settings.tenant_id, tap["webhookEventId"])}

    # A plain answer the resident can ask again (a place search) is never repeated after an unknown reply.
    line_standin.fail_next(REPLY, 500)
    assert deployment.post(text_event("花壇有素食店嗎？", user_id=USER_A)) == ["done"]
    deployment.sweep()
    assert len(pushes_to(line_standin, USER_A)) == 2


def test_memory_outcome_answered_by_the_worker_whose_reply_is_unknown_is_pushed_once(base_env, clock, line_standin):
    """The tap arrived with too little of LINE's budget left, so the worker answers it; its reply
    (the token still fresh) meets LINE's 500: the worker pushes the restated outcome at once."""
    deployment = Deployment(base_env, clock, "agent_queue", budget_left=1.2)
    approve = card_approve(deployment, line_standin)
    tap = tap_event(approve, USER_A, clock())
    assert deployment.post(tap) == ["queued"]
    line_standin.fail_next(REPLY, 500)
    deployment.drain()
    [reply] = [c for c in line_standin.calls() if c["path"] == REPLY and c["body"]["replyToken"] == tap["replyToken"]]
    assert reply["status"] == 500
    [pushed] = pushes_to(line_standin, USER_A)
    assert pushed["status"] == 200 and "再說一次" in all_text(pushed["body"]["messages"])
    assert pushed["headers"]["x-line-retry-key"] == inbox.answer_retry_key(deployment.settings.tenant_id,
                                                                           tap["webhookEventId"])
    assert preference_of(deployment.store).dietary_type == "vegetarian"



class Killed(BaseException):
    """The worker's process dying mid-call (nothing below catches it)."""


class DiesOnReply:
    """The LINE gateway of a worker whose process dies just as it sends a reply."""

    def __init__(self, inner):
        self.inner = inner

    def reply(self, *args, **kwargs):
        raise Killed()

    def __getattr__(self, name):
        return getattr(self.inner, name)


def test_memory_outcome_worker_killed_after_its_reply_started_is_pushed_once_by_the_next_attempt(
        base_env, clock, line_standin):
    """The worker recorded its reply of the outcome as started and died before sending it: the next
    delivery of the task never replies again, and pushes the recorded follow-up once."""
    deployment = Deployment(base_env, clock, "agent_queue", budget_left=1.2)
    approve = card_approve(deployment, line_standin)
    tap = tap_event(approve, USER_A, clock())
    assert deployment.post(tap) == ["queued"]
    task = QueuedEventTask(deployment.settings.tenant_id, tap["webhookEventId"])
    dying = QueuedEventWorker(deployment.settings, deployment.store, DiesOnReply(line_gateway(deployment.settings)),
                              memory=deployment.worker.memory, clock=clock)
    with pytest.raises(Killed):
        dying.run(task, retry_count=0)
    assert preference_of(deployment.store).dietary_type == "vegetarian"
    clock.at += timedelta(seconds=deployment.settings.event_lease_seconds + 1)  # its claim has ended
    assert deployment.worker.run(task, retry_count=1).http_status == 200
    assert deployment.worker.run(task, retry_count=2).http_status == 200  # a later delivery: nothing more
    assert [c for c in line_standin.calls() if c["path"] == REPLY and c["body"]["replyToken"] == tap["replyToken"]] == []
    [pushed] = pushes_to(line_standin, USER_A)
    assert pushed["status"] == 200 and "已經記住你的飲食偏好：蔬食" in all_text(pushed["body"]["messages"])
    assert pushed["headers"]["x-line-retry-key"] == inbox.answer_retry_key(deployment.settings.tenant_id,
                                                                           tap["webhookEventId"])
