"""The courier's push counter (shared/push_count.py, shared/outbox.py): one count per push LINE
accepted, per tenant and Asia/Taipei calendar month, through the real SDK gateway and the LINE
stand-in; a 409 repeat and a failed push count nothing; the monthly limit is counted apart."""
from __future__ import annotations

import uuid
from datetime import datetime, timedelta, timezone

import pytest
from linebot.v3.messaging import TextMessage

from shared import outbox
from shared.line.messaging import SdkLineGateway
from shared.push_count import COLLECTION, Flow, PushCount, PushCounter, count_id, month_of
from tests.conftest import TEST_TOKEN, FixedClock
from tests.unit.conftest import store_at

USER = "U0123456789abcdef0123456789abcdef"
PUSH = "/v2/bot/message/push"
#: 2026-11-30 23:30 in Taipei (UTC+8): the last half hour of November there.
LAST_NOVEMBER_EVENING = datetime(2026, 11, 30, 15, 30, tzinfo=timezone.utc)


@pytest.fixture
def store(store_url):
    return store_at(store_url, deadline_seconds=2.0)


def push(line_standin, counter: PushCounter, flow: Flow = Flow.EVENT_ANSWER, key: str | None = None) -> outbox.Sent:
    return outbox.send_push(SdkLineGateway(line_standin.url, TEST_TOKEN), USER, [TextMessage(text="你好")],
                            retry_key=key or str(uuid.uuid4()), timeout_seconds=5, counter=counter, flow=flow)


@pytest.mark.parametrize(("utc", "month"), [
    (datetime(2026, 11, 30, 15, 59, 59, tzinfo=timezone.utc), "2026-11"),  # 23:59:59 in Taipei
    (datetime(2026, 11, 30, 16, 0, tzinfo=timezone.utc), "2026-12"),       # 00:00 on 12/1 in Taipei
    (datetime(2026, 12, 31, 16, 0, tzinfo=timezone.utc), "2027-01"),
])
def test_push_count_month_is_the_taipei_calendar_month(utc, month):
    assert month_of(utc) == month


def test_push_count_month_refuses_a_naive_time():
    with pytest.raises(ValueError):
        month_of(datetime(2026, 12, 1))


def test_push_count_counts_accepted_pushes_by_flow_and_month(store, line_standin):
    clock = FixedClock(LAST_NOVEMBER_EVENING)
    counter = PushCounter(store, "tenant-a", clock)
    push(line_standin, counter, Flow.EVENT_ANSWER)
    push(line_standin, counter, Flow.STAFF_RESIDENT)
    clock.at += timedelta(minutes=31)  # 00:01 on 12/1 in Taipei: a new month
    push(line_standin, counter, Flow.STAFF_RESIDENT)
    assert PushCount.of("2026-11", store.get(COLLECTION, count_id("tenant-a", "2026-11"))) == PushCount(
        "2026-11", 2, {"event_answer": 1, "staff_resident": 1})
    assert counter.this_month() == PushCount("2026-12", 1, {"staff_resident": 1})
    assert PushCounter(store, "tenant-b", clock).this_month().pushes == 0  # per tenant


def test_push_count_a_409_repeat_and_a_failed_push_count_nothing(store, line_standin):
    counter = PushCounter(store, "tenant-a", FixedClock(LAST_NOVEMBER_EVENING))
    key = str(uuid.uuid4())
    assert push(line_standin, counter, key=key).error is None
    repeat = push(line_standin, counter, key=key)
    assert repeat.duplicate  # LINE sent nothing again
    line_standin.fail_next(PUSH, 500)
    assert push(line_standin, counter).error is not None
    line_standin.fail_next(PUSH, 429)  # a rate limit: retried later, not the monthly limit
    assert push(line_standin, counter).retryable
    assert counter.this_month() == PushCount("2026-11", 1, {"event_answer": 1})


def test_push_count_the_monthly_limit_is_refused_final_and_counted_apart(store, line_standin):
    counter = PushCounter(store, "tenant-a", FixedClock(LAST_NOVEMBER_EVENING))
    line_standin.set_quota(1)
    assert push(line_standin, counter).error is None
    refused = push(line_standin, counter)
    assert (refused.monthly_limit, refused.retryable, refused.status) == (True, False, 429)
    assert counter.this_month() == PushCount("2026-11", 1, {"event_answer": 1}, refused_monthly_limit=1)


def test_push_count_a_store_that_fails_never_fails_the_push(line_standin, store_url):
    read_only = store_at(store_url, deadline_seconds=2.0, read_only=True)
    sent = push(line_standin, PushCounter(read_only, "tenant-a", FixedClock(LAST_NOVEMBER_EVENING)))
    assert sent.error is None and len([c for c in line_standin.calls() if c["status"] == 200]) == 1
