"""The webhook's HTTP contract: functions/webhook/main.py through functions-framework's
``create_app(...).test_client()``, signed acceptance bodies from tests/fixtures/line/, and the
recording LINE stand-in over real loopback HTTP (docs/design.md §3). Claims about the served
process (concurrent deliveries to one worker, a body cap before reading) use a real process."""
from __future__ import annotations

import json
import select
from concurrent.futures import ThreadPoolExecutor

import pytest
import requests

from tests.conftest import all_text, case_bytes, line_body, recorded_replies, sign, text_event


@pytest.fixture
def webhook(function_app, base_env):
    return function_app("webhook", base_env)


@pytest.fixture
def webhook_process(start_function, base_env):
    return start_function("webhook", base_env)


def _headers(body: bytes, signature: str | None) -> dict[str, str]:
    headers = {"Content-Type": "application/json"}
    if signature == "sign":
        headers["X-Line-Signature"] = sign(body)
    elif signature is not None:
        headers["X-Line-Signature"] = signature
    return headers


def post(client, body: bytes, signature: str | None = "sign") -> int:
    """POST exact bytes to the in-process webhook; the status code."""
    return client.post("/", data=body, headers=_headers(body, signature)).status_code


def post_http(url: str, body: bytes, signature: str | None = "sign") -> int:
    """POST exact bytes to a served webhook process; the status code."""
    return requests.post(url, data=body, headers=_headers(body, signature), timeout=5).status_code


def reply_token_of(name: str, index: int = 0) -> str:
    return json.loads(case_bytes(name))["events"][index]["replyToken"]


def test_webhook_http_huatan_places_one_sourced_reply(webhook, line_standin):
    status = post(webhook, case_bytes("text-places-huatan.json"))
    assert status == 200
    replies = recorded_replies(line_standin, reply_token_of("text-places-huatan.json"))
    assert len(replies) == 1
    text = all_text(replies[0]["body"]["messages"])
    assert "和米素食" in text
    assert "彰員路三段117號" in text
    assert text.count("資料來源：") == 1 and "2026/9/27 查閱" in text  # the source, said once
    assert "營業時間" in text and "距離" in text and "無障礙" in text  # what the data does not record
    assert "John手作蔬食" not in text


def test_webhook_http_redelivery_gets_no_second_reply(webhook, line_standin):
    assert post(webhook, case_bytes("text-places-huatan.json")) == 200
    assert post(webhook, case_bytes("redelivery.json")) == 200
    token = reply_token_of("text-places-huatan.json")
    assert token == reply_token_of("redelivery.json")
    replies = [c for c in line_standin.calls() if c["path"] == "/v2/bot/message/reply"]
    assert len(replies) == 1


def test_webhook_http_verify_empty_is_200_without_reply(webhook, line_standin):
    status = post(webhook, case_bytes("verify-empty.json"))
    assert status == 200
    assert line_standin.calls() == []


def test_webhook_http_batch_two_users_replies_to_each_token(webhook, line_standin):
    assert post(webhook, case_bytes("batch-two-users.json")) == 200
    for index in (0, 1):
        assert len(recorded_replies(line_standin, reply_token_of("batch-two-users.json", index))) == 1


def test_webhook_http_nearby_asks_for_township_with_choices(webhook, line_standin):
    assert post(webhook, case_bytes("text-places-nearby.json")) == 200
    [reply] = recorded_replies(line_standin, reply_token_of("text-places-nearby.json"))
    quick = [m.get("quickReply") for m in reply["body"]["messages"] if m.get("quickReply")]
    assert quick, "the question must offer township choices"
    labels = all_text(quick)
    assert "花壇鄉" in labels and "彰化市" in labels
    assert "鄉鎮" in all_text(reply["body"]["messages"])


def test_webhook_http_menu_offers_three_quick_replies(webhook, line_standin):
    assert post(webhook, case_bytes("text-menu.json")) == 200
    [reply] = recorded_replies(line_standin, reply_token_of("text-menu.json"))
    items = reply["body"]["messages"][-1]["quickReply"]["items"]
    assert [item["action"]["label"] for item in items] == ["查活動", "查蔬食", "留下服務詢問"]


def test_webhook_http_events_reply_is_marked_demo(webhook, line_standin):
    assert post(webhook, case_bytes("text-events.json")) == 200
    [reply] = recorded_replies(line_standin, reply_token_of("text-events.json"))
    assert "示範" in all_text(reply["body"]["messages"])


@pytest.mark.parametrize("signature", [None, "", "bm90LXRoZS1zaWduYXR1cmU=", "!!!"])
def test_webhook_http_bad_or_missing_signature_is_4xx_without_reply(webhook, line_standin, signature):
    status = post(webhook, case_bytes("text-menu.json"), signature=signature)
    assert 400 <= status < 500
    assert line_standin.calls() == []


def test_webhook_http_body_signed_with_other_secret_is_rejected(webhook, line_standin):
    body = case_bytes("text-menu.json")
    status = post(webhook, body, signature=sign(body, "another-channel-secret"))
    assert status == 400
    assert line_standin.calls() == []


def test_webhook_http_malformed_json_with_valid_signature_is_400(webhook, line_standin):
    body = b'{"destination":"U0","events":[{"type":"message",'
    assert post(webhook, body) == 400
    assert line_standin.calls() == []


@pytest.mark.parametrize("raw", [
    b"\xff\xfe{}",                                         # a UTF-16 byte-order mark
    json.dumps(json.loads(case_bytes("text-menu.json")), ensure_ascii=False).encode("big5"),  # Big5 text
    case_bytes("text-menu.json")[:-3] + b"\xe9\x81" + b"}]}",  # a cut multi-byte character
    b'{"events":[],"x":"\xc0\xaf"}',                       # an overlong encoding
], ids=["utf16-bom", "big5", "cut-character", "overlong"])
def test_webhook_http_signed_body_not_utf8_is_400_malformed_not_signature(webhook, line_standin, raw):
    response = webhook.post("/", data=raw, headers=_headers(raw, "sign"))
    assert response.status_code == 400
    assert "not UTF-8" in response.get_json()["error"]
    assert line_standin.calls() == []
    wrong = webhook.post("/", data=raw, headers=_headers(raw, sign(raw, "another-channel-secret")))
    assert (wrong.status_code, wrong.get_json()["error"]) == (400, "invalid signature")


@pytest.mark.slow
def test_webhook_http_eight_concurrent_deliveries_one_reply(webhook_process, line_standin):
    body = line_body(text_event("花壇有素食店嗎？", event_id="01CONCURRENT0000000000000A",
                                reply_token="rt-concurrent-1"))
    with ThreadPoolExecutor(max_workers=8) as pool:
        statuses = list(pool.map(lambda _: post_http(webhook_process.url, body), range(8)))
    assert set(statuses) <= {200, 503}
    assert 200 in statuses
    assert len([c for c in line_standin.calls() if c["path"] == "/v2/bot/message/reply"]) == 1


def test_webhook_http_non_text_follow_unfollow_handled(webhook, line_standin):
    for name in ("sticker.json", "follow.json"):
        assert post(webhook, case_bytes(name)) == 200
        assert len(recorded_replies(line_standin, reply_token_of(name))) == 1
    before = len(line_standin.calls())
    assert post(webhook, case_bytes("unfollow.json")) == 200
    assert len(line_standin.calls()) == before


@pytest.mark.slow
def test_webhook_http_oversized_body_is_413_without_reply(webhook_process, line_standin):
    body = line_body(text_event("花" * 600_000))  # about 1.8 MB of UTF-8
    assert post_http(webhook_process.url, body) == 413
    assert line_standin.calls() == []


def test_webhook_http_huge_unknown_event_type_is_logged_cut_in_lines_of_one_write(webhook_process, line_standin):
    kind = "hologram" * 12_500  # 100,000 characters, no type LINE has
    normal = text_event("花壇有素食店嗎？")
    body = line_body({**text_event("花壇有素食店嗎？"), "type": kind}, normal)
    assert post_http(webhook_process.url, body) == 200
    assert len(recorded_replies(line_standin, normal["replyToken"])) == 1  # the other event loses nothing
    lines = [line for line in webhook_process.log_path.read_bytes().splitlines() if line.startswith(b"{")]
    entries = [json.loads(line) for line in lines]
    logged = [e["event_type"] for e in entries if str(e.get("event_type")).startswith("hologram")]
    assert logged and all(len(value) < 400 and "100000" in value for value in logged)
    assert all(len(line) + 1 <= select.PIPE_BUF for line in lines)  # one write each, no lock
