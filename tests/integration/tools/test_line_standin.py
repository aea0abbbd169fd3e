"""The LINE stand-in, driven by the real line-bot-sdk client over loopback."""
from __future__ import annotations

import json
import time
import uuid

import pytest
import requests
from linebot.v3.messaging import (
    ApiClient,
    ApiException,
    Configuration,
    MessagingApi,
    PushMessageRequest,
    ReplyMessageRequest,
    ShowLoadingAnimationRequest,
    TextMessage,
)

from tools.line_standin import PUSH_PATH, REPLY_PATH, LineStandin

TOKEN = "standin-test-access-token"
USER = "U" + "0123456789abcdef" * 2


@pytest.fixture
def standin(tmp_path):
    with LineStandin(record_path=tmp_path / "calls.jsonl", access_token=TOKEN) as running:
        yield running


def _api(standin: LineStandin, token: str = TOKEN):
    client = ApiClient(Configuration(host=standin.url, access_token=token))
    return client, MessagingApi(client)


@pytest.fixture
def api(standin):
    client, messaging = _api(standin)
    with client:
        yield messaging


def _reply(api: MessagingApi, token: str, text: str = "你好"):
    return api.reply_message(ReplyMessageRequest(reply_token=token, messages=[TextMessage(text=text)]))


def _push(api: MessagingApi, retry_key: str | None, text: str = "收到了"):
    return api.push_message_with_http_info(PushMessageRequest(to=USER, messages=[TextMessage(text=text)]),
                                           x_line_retry_key=retry_key)


def _raw(standin: LineStandin, path: str, data: bytes | None = None, method: str = "POST"):
    response = requests.request(method, standin.url + path, data=data, timeout=5, headers={
        "Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"})
    return response.status_code, response.json()


def test_reply_fresh_token_records_call_and_returns_sent_messages(standin, api):
    response = _reply(api, "token-1", "你好 😀")

    assert len(response.sent_messages) == 1
    assert response.sent_messages[0].id.isdigit() and response.sent_messages[0].quote_token
    [call] = standin.calls()
    assert call["path"] == REPLY_PATH and call["status"] == 200 and call["method"] == "POST"
    assert call["body"]["replyToken"] == "token-1"
    assert call["body"]["messages"] == [{"type": "text", "text": "你好 😀"}]
    assert call["headers"]["authorization"] == "Bearer ***"


def test_reply_token_used_twice_second_answers_400_invalid_reply_token(standin, api):
    _reply(api, "token-once")

    with pytest.raises(ApiException) as raised:
        _reply(api, "token-once")

    assert raised.value.status == 400
    assert json.loads(raised.value.body) == {"message": "Invalid reply token"}
    assert [c["status"] for c in standin.calls()] == [200, 400]


def test_reply_six_messages_answers_400_and_keeps_token_unused(standin):
    body = {"replyToken": "token-6", "messages": [{"type": "text", "text": str(i)} for i in range(6)]}

    status, _ = _raw(standin, REPLY_PATH, json.dumps(body).encode())
    body["messages"] = body["messages"][:5]
    retry_status, retry_body = _raw(standin, REPLY_PATH, json.dumps(body).encode())

    assert status == 400
    assert retry_status == 200 and len(retry_body["sentMessages"]) == 5


@pytest.mark.parametrize("message, where", [
    ({"type": "nope", "text": "x"}, "failed to lookup discriminator"),
    ({"type": "text"}, "(TextMessage.text)"),
    ({"type": "flex", "altText": "x", "contents": {"type": "bubble", "body": {
        "type": "box", "layout": "diagonal", "contents": []}}}, "(FlexBox.layout)"),
], ids=["unknown_type", "text_missing", "flex_bad_layout"])
def test_reply_body_the_sdk_model_refuses_answers_400_and_keeps_token_unused(standin, message, where):
    body = {"replyToken": "token-sdk", "messages": [message]}

    status, answer = _raw(standin, REPLY_PATH, json.dumps(body).encode())
    body["messages"] = [{"type": "text", "text": "ok"}]
    retry_status, _ = _raw(standin, REPLY_PATH, json.dumps(body).encode())

    assert status == 400 and [d["property"] for d in answer["details"]] == ["messages[0]"]
    assert where in answer["details"][0]["message"]
    assert retry_status == 200


def test_push_body_field_of_wrong_type_answers_400_like_line(standin):
    body = {"to": USER, "messages": [{"type": "text", "text": "x"}], "notificationDisabled": "yes"}

    status, answer = _raw(standin, PUSH_PATH, json.dumps(body).encode())

    assert status == 400 and [d["property"] for d in answer["details"]] == ["notificationDisabled"]
    assert "(PushMessageRequest.notificationDisabled)" in answer["details"][0]["message"]


def test_loading_start_seconds_not_an_integer_answers_400(standin):
    body = {"chatId": USER, "loadingSeconds": 10.0}  # 10.0 == 10, but LINE's schema wants an integer

    status, answer = _raw(standin, "/v2/bot/chat/loading/start", json.dumps(body).encode())

    assert status == 400
    assert "(ShowLoadingAnimationRequest.loadingSeconds)" in answer["details"][0]["message"]


def test_push_same_retry_key_twice_second_raises_409_with_accepted_request_id(standin, api):
    key = str(uuid.uuid4())
    first = _push(api, key)

    with pytest.raises(ApiException) as raised:
        _push(api, key)

    assert first.status_code == 200
    first_request_id = first.headers["x-line-request-id"]
    assert raised.value.status == 409
    assert raised.value.headers["x-line-accepted-request-id"] == first_request_id
    body = json.loads(raised.value.body)
    assert body["message"] == "The retry key is already accepted"
    assert body["sentMessages"] == [m.to_dict() for m in first.data.sent_messages]
    assert [c["headers"]["x-line-retry-key"] for c in standin.calls()] == [key, key]


def test_push_without_retry_key_twice_both_answer_200(api):
    assert _push(api, None).status_code == 200
    assert _push(api, None).status_code == 200


def test_push_wrong_access_token_answers_401_and_never_records_token(standin):
    client, api = _api(standin, token="not-the-token")

    with client, pytest.raises(ApiException) as raised:
        _push(api, str(uuid.uuid4()))

    assert raised.value.status == 401
    assert "Authentication failed" in json.loads(raised.value.body)["message"]
    [call] = standin.calls()
    assert call["status"] == 401 and call["headers"]["authorization"] == "Bearer ***"
    assert "not-the-token" not in json.dumps(call)


def test_loading_start_valid_request_answers_202_empty_object(standin, api):
    response = api.show_loading_animation_with_http_info(
        ShowLoadingAnimationRequest(chat_id=USER, loading_seconds=20))

    assert response.status_code == 202
    assert standin.calls()[0]["response"] == {}


def test_calls_endpoint_since_seq_returns_only_newer_calls(standin, api):
    for n in range(3):
        _reply(api, f"token-page-{n}")

    status, newer = _raw(standin, "/__calls?since=1", method="GET")
    _, none_left = _raw(standin, "/__calls?since=3", method="GET")

    assert status == 200
    assert [c["seq"] for c in newer] == [2, 3]
    assert [c["body"]["replyToken"] for c in newer] == ["token-page-1", "token-page-2"]
    assert none_left == []
    assert len(standin.calls()) == 3  # polling is not recorded


def test_fail_next_500_records_failure_then_same_token_succeeds(standin, api):
    standin.fail_next(REPLY_PATH, 500)

    with pytest.raises(ApiException) as raised:
        _reply(api, "token-fault")
    _reply(api, "token-fault")

    assert raised.value.status == 500
    assert [c["status"] for c in standin.calls()] == [500, 200]


def test_fail_next_after_processing_push_retry_answers_409(standin, api):
    standin.fail_next(PUSH_PATH, 500, after_processing=True)
    key = str(uuid.uuid4())

    with pytest.raises(ApiException) as lost:
        _push(api, key)
    with pytest.raises(ApiException) as retried:
        _push(api, key)

    assert lost.value.status == 500
    assert retried.value.status == 409
    first_request_id = standin.calls()[0]["request_id"]
    assert retried.value.headers["x-line-accepted-request-id"] == first_request_id


def test_delay_next_holds_answer_for_given_seconds(standin, api):
    standin.delay_next(REPLY_PATH, 0.3)

    started = time.monotonic()
    _reply(api, "token-slow")

    assert time.monotonic() - started >= 0.3


def test_unknown_path_answers_404_json(standin):
    status, body = _raw(standin, "/v2/bot/nothing", b"{}")

    assert status == 404 and "message" in body
    assert standin.calls()[0]["status"] == 404


def test_malformed_json_body_answers_400_and_records_null_body(standin):
    status, body = _raw(standin, REPLY_PATH, b"{not json")

    assert status == 400 and "message" in body
    assert standin.calls()[0]["body"] is None


def test_record_path_each_call_appended_as_one_json_line(standin, api, tmp_path):
    _reply(api, "token-file-1")
    with pytest.raises(ApiException):
        _reply(api, "token-file-1")

    lines = (tmp_path / "calls.jsonl").read_text(encoding="utf-8").splitlines()

    assert [json.loads(line)["status"] for line in lines] == [200, 400]
    assert TOKEN not in "".join(lines)


def test_wait_for_no_matching_call_raises_timeout(standin):
    with pytest.raises(TimeoutError):
        standin.wait_for(lambda call: call["path"] == PUSH_PATH, timeout_s=0.1)


def test_wait_for_matching_call_returns_it(standin, api):
    _reply(api, "token-wait")

    [call] = standin.wait_for(lambda c: c["body"]["replyToken"] == "token-wait", timeout_s=1)

    assert call["status"] == 200
