"""The LINE gateway's one outcome table (docs/design.md §11), through the real SDK adapter against the
recording LINE stand-in: each row is produced by what LINE (or the network) really does."""
from __future__ import annotations

import pytest
from linebot.v3.messaging import TextMessage

from shared.line import (
    Delivery,
    LineApiError,
    LineNeverStarted,
    LineOutcomeUnknown,
    LineSendError,
    Quota,
    delivery_of,
    delivery_of_status,
)
from shared.line.messaging import SdkLineGateway
from tests.conftest import TEST_TOKEN
from tools.function_process import free_port

REPLY, PUSH = "/v2/bot/message/reply", "/v2/bot/message/push"
USER = "U0123456789abcdef0123456789abcdef"
KEY = "6f1c2d3e-4a5b-4c6d-8e7f-901a2b3c4d5e"


@pytest.fixture
def gateway(line_standin) -> SdkLineGateway:
    return SdkLineGateway(line_standin.url, TEST_TOKEN)


def outcome(call) -> Delivery:
    try:
        call()
    except LineSendError as exc:
        return delivery_of(exc)
    return delivery_of(None)


@pytest.mark.parametrize(("status", "expected"), [
    (200, Delivery.DELIVERED), (202, Delivery.DELIVERED), (400, Delivery.REFUSED), (401, Delivery.REFUSED),
    (403, Delivery.REFUSED), (409, Delivery.REFUSED), (429, Delivery.NOT_DELIVERED), (500, Delivery.UNKNOWN),
    (502, Delivery.UNKNOWN), (503, Delivery.UNKNOWN), (0, Delivery.UNKNOWN),
])
def test_outcome_table_status_row(status, expected):
    assert delivery_of_status(status) is expected


def test_outcome_table_push_409_with_retry_key_is_delivered():
    assert delivery_of_status(409, push_with_retry_key=True) is Delivery.DELIVERED


def test_outcome_table_only_refused_is_final():
    assert [d for d in Delivery if d.send_later] == [Delivery.NOT_DELIVERED, Delivery.NEVER_STARTED]
    assert [d for d in Delivery if d.may_have_reached_user] == [Delivery.DELIVERED, Delivery.UNKNOWN]
    assert LineApiError(400).retryable is False and LineApiError(429).retryable is True
    assert LineApiError(500).retryable is True  # a push may repeat with the same retry key


def test_outcome_table_reply_accepted_is_delivered(gateway, line_standin):
    assert outcome(lambda: gateway.reply("rt-1", [TextMessage(text="hi")], timeout_seconds=2)) is Delivery.DELIVERED


def test_outcome_table_reply_used_token_is_refused(gateway, line_standin):
    gateway.reply("rt-2", [TextMessage(text="hi")], timeout_seconds=2)
    assert outcome(lambda: gateway.reply("rt-2", [TextMessage(text="again")], timeout_seconds=2)) is Delivery.REFUSED


def test_outcome_table_reply_429_is_not_delivered_and_token_unused(gateway, line_standin):
    line_standin.fail_next(REPLY, 429)
    assert outcome(lambda: gateway.reply("rt-3", [TextMessage(text="hi")], timeout_seconds=2)) is Delivery.NOT_DELIVERED
    # LINE did not process it: the token still works
    assert outcome(lambda: gateway.reply("rt-3", [TextMessage(text="hi")], timeout_seconds=2)) is Delivery.DELIVERED


def test_outcome_table_reply_5xx_after_processing_is_unknown(gateway, line_standin):
    line_standin.fail_next(REPLY, 500, after_processing=True)
    with pytest.raises(LineApiError) as info:
        gateway.reply("rt-4", [TextMessage(text="hi")], timeout_seconds=2)
    assert info.value.delivery is Delivery.UNKNOWN
    # it was processed: a blind repeat is refused by LINE (and would have said it twice)
    assert outcome(lambda: gateway.reply("rt-4", [TextMessage(text="hi")], timeout_seconds=2)) is Delivery.REFUSED


def test_outcome_table_reply_timeout_is_unknown(gateway, line_standin):
    line_standin.delay_next(REPLY, 1.0)
    with pytest.raises(LineOutcomeUnknown):
        gateway.reply("rt-5", [TextMessage(text="hi")], timeout_seconds=0.2)


def test_outcome_table_connection_refused_is_never_started():
    gateway = SdkLineGateway(f"http://127.0.0.1:{free_port()}", TEST_TOKEN)  # nothing listens there
    with pytest.raises(LineNeverStarted) as info:
        gateway.reply("rt-6", [TextMessage(text="hi")], timeout_seconds=1)
    assert info.value.delivery is Delivery.NEVER_STARTED
    with pytest.raises(LineNeverStarted):
        gateway.push(USER, [TextMessage(text="hi")], retry_key=KEY, timeout_seconds=1)


def test_outcome_table_standin_refusing_connections_is_never_started(gateway, line_standin):
    gateway.reply("rt-7", [TextMessage(text="warm")], timeout_seconds=2)  # a pooled connection exists
    line_standin.refuse_connections()
    try:
        first = outcome(lambda: gateway.push(USER, [TextMessage(text="hi")], retry_key=KEY, timeout_seconds=1))
        # the pooled connection may be found dead only after sending (unknown); a new one is refused
        second = outcome(lambda: gateway.push(USER, [TextMessage(text="hi")], retry_key=KEY, timeout_seconds=1))
    finally:
        line_standin.accept_connections()
    assert first in (Delivery.UNKNOWN, Delivery.NEVER_STARTED)
    assert second is Delivery.NEVER_STARTED
    assert outcome(lambda: gateway.push(USER, [TextMessage(text="hi")], retry_key=KEY,
                                        timeout_seconds=2)) is Delivery.DELIVERED
    assert len([c for c in line_standin.calls() if c["path"] == PUSH and c["status"] == 200]) == 1


def test_outcome_table_push_5xx_after_processing_then_same_key_is_delivered_once(gateway, line_standin):
    line_standin.fail_next(PUSH, 500, after_processing=True)
    with pytest.raises(LineApiError) as info:
        gateway.push(USER, [TextMessage(text="hi")], retry_key=KEY, timeout_seconds=2)
    assert info.value.delivery is Delivery.UNKNOWN and info.value.retryable
    again = gateway.push(USER, [TextMessage(text="hi")], retry_key=KEY, timeout_seconds=2)
    assert again.duplicate is True  # 409: LINE had it; the user saw it once


def test_outcome_table_push_429_is_not_delivered(gateway, line_standin):
    line_standin.fail_next(PUSH, 429)
    with pytest.raises(LineApiError) as info:
        gateway.push(USER, [TextMessage(text="hi")], retry_key=KEY, timeout_seconds=2)
    assert info.value.delivery is Delivery.NOT_DELIVERED
    assert gateway.push(USER, [TextMessage(text="hi")], retry_key=KEY, timeout_seconds=2).duplicate is False


# ---- 429: a rate limit is retried later, the monthly limit is final -------------------------------

@pytest.mark.parametrize(("body_message", "too_many", "expected"), [
    ("You have reached your monthly limit.", "monthly", Delivery.REFUSED),
    ("The API rate limit has been exceeded. Try again later.", "rate", Delivery.NOT_DELIVERED),
    (None, "rate", Delivery.NOT_DELIVERED),          # no body, or one that is not LINE's JSON
    ("you have reached your monthly limit", "rate", Delivery.NOT_DELIVERED),  # only LINE's exact words
])
def test_line_429_kinds_by_the_body_message(body_message, too_many, expected):
    error = LineApiError(429, "Too Many Requests", body_message=body_message)
    assert (error.too_many.value, error.delivery, error.retryable) == (too_many, expected, expected is not Delivery.REFUSED)
    assert error.monthly_limit is (too_many == "monthly")
    assert LineApiError(400, body_message="You have reached your monthly limit.").too_many is None


def test_line_push_over_the_monthly_limit_is_refused_not_retryable_and_sends_nothing(gateway, line_standin):
    line_standin.set_quota(1, used=0)
    assert outcome(lambda: gateway.push(USER, [TextMessage(text="一")], retry_key=KEY, timeout_seconds=5)) \
        is Delivery.DELIVERED
    with pytest.raises(LineApiError) as refused:
        gateway.push(USER, [TextMessage(text="二")], retry_key="6f1c2d3e-4a5b-4c6d-8e7f-901a2b3c4d5f", timeout_seconds=5)
    assert (refused.value.status, refused.value.monthly_limit, refused.value.retryable) == (429, True, False)
    assert line_standin.quota_used() == 1  # nothing sent
    # a rate limit (another 429 body) stays "send later"
    line_standin.set_quota(None)
    line_standin.fail_next(PUSH, 429)
    with pytest.raises(LineApiError) as limited:
        gateway.push(USER, [TextMessage(text="三")], retry_key="6f1c2d3e-4a5b-4c6d-8e7f-901a2b3c4d60", timeout_seconds=5)
    assert (limited.value.delivery, limited.value.monthly_limit) == (Delivery.NOT_DELIVERED, False)
    # a reply is never limited by the month's pushes
    line_standin.set_quota(0, used=5)
    assert outcome(lambda: gateway.reply("rt-free", [TextMessage(text="回覆")], timeout_seconds=5)) is Delivery.DELIVERED


def test_line_quota_is_read_through_the_sdk_from_both_endpoints(gateway, line_standin):
    assert gateway.quota(timeout_seconds=5) == Quota(limit=None, used=0)
    line_standin.set_quota(200, used=150)
    gateway.push(USER, [TextMessage(text="一")], retry_key=KEY, timeout_seconds=5)
    quota = gateway.quota(timeout_seconds=5)
    assert quota == Quota(limit=200, used=151) and quota.share == pytest.approx(0.755)
    paths = [c["path"] for c in line_standin.calls() if c["method"] == "GET"]
    assert paths == ["/v2/bot/message/quota", "/v2/bot/message/quota/consumption"] * 2
