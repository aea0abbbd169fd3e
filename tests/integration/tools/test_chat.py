"""The terminal chat: LINE-exact bodies and signatures, rendering, and headless mode."""
from __future__ import annotations

import io
import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from linebot.v3 import WebhookParser
from linebot.v3.exceptions import InvalidSignatureError
from linebot.v3.messaging import (
    ApiClient,
    Configuration,
    MessagingApi,
    PostbackAction,
    PushMessageRequest,
    QuickReply,
    QuickReplyItem,
    ReplyMessageRequest,
    TextMessage,
)
from linebot.v3.webhook import SignatureValidator
from linebot.v3.webhooks import FollowEvent, MessageEvent, PostbackEvent, StickerMessageContent

from tools import chat, line_events
from tools.line_standin import LineStandin

SECRET = "chat-test-channel-secret"
TOKEN = "chat-test-access-token"
USER = "U" + "fedcba9876543210" * 2


def _signed(events: list[dict]) -> tuple[str, str]:
    body = line_events.webhook_body(events, chat.DEFAULT_DESTINATION)
    return body.decode("utf-8"), line_events.sign(body, SECRET)


@pytest.mark.parametrize("text", ["你好", "早安😀", "全家👨‍👩‍👧出遊", "e\u0301 ﹏ 𠀋"])
def test_sign_text_event_body_validates_with_sdk_validator(text):
    body_text, signature = _signed([line_events.text_event(text, user_id=USER)])

    assert SignatureValidator(SECRET).validate(body_text, signature)
    assert not SignatureValidator("another-secret").validate(body_text, signature)


def test_build_body_non_ascii_kept_raw_and_compact():
    body = line_events.webhook_body([line_events.text_event("素食😀", user_id=USER)], chat.DEFAULT_DESTINATION)

    assert "素食😀".encode("utf-8") in body
    assert b"\\u" not in body and b'": ' not in body and b", " not in body


def test_build_text_event_body_parses_with_webhook_parser_as_message_event():
    body_text, signature = _signed([line_events.text_event("全家👨‍👩‍👧", user_id=USER)])

    [event] = WebhookParser(SECRET).parse(body_text, signature)

    assert isinstance(event, MessageEvent)
    assert event.message.text == "全家👨‍👩‍👧"
    assert event.source.user_id == USER
    assert re.fullmatch(r"[0-9A-HJKMNP-TV-Z]{26}", event.webhook_event_id)
    assert event.delivery_context.is_redelivery is False
    assert event.reply_token and event.message.quote_token


def test_build_postback_event_body_parses_with_data_unchanged():
    data = "handoff:confirm:abc.def~1"
    body_text, signature = _signed([line_events.postback_event(data, user_id=USER)])

    [event] = WebhookParser(SECRET).parse(body_text, signature)

    assert isinstance(event, PostbackEvent)
    assert event.postback.data == data


def test_build_follow_and_sticker_events_parse_as_their_kinds():
    body_text, signature = _signed([line_events.follow_event(user_id=USER), line_events.sticker_event(user_id=USER)])

    follow, sticker = WebhookParser(SECRET).parse(body_text, signature)

    assert isinstance(follow, FollowEvent)
    assert isinstance(sticker, MessageEvent) and isinstance(sticker.message, StickerMessageContent)


def test_build_body_tampered_byte_fails_parser_signature():
    body_text, signature = _signed([line_events.text_event("你好", user_id=USER)])

    with pytest.raises(InvalidSignatureError):
        WebhookParser(SECRET).parse(body_text.replace("你好", "您好"), signature)


def test_new_webhook_event_id_fresh_ids_are_distinct_and_time_ordered():
    earlier = line_events.new_webhook_event_id(now_ms=1_700_000_000_000)
    later = line_events.new_webhook_event_id(now_ms=1_700_000_000_001)

    assert len(earlier) == 26 and earlier != later
    assert earlier[:10] < later[:10]


def _flex_carousel() -> dict:
    bubble = {"type": "bubble",
              "body": {"type": "box", "layout": "vertical", "contents": [
                  {"type": "text", "text": "員林蔬食小館"},
                  {"type": "box", "layout": "baseline", "contents": [
                      {"type": "text", "text": "營業時間"}, {"type": "text", "text": "這份快照未記錄"}]}]},
              "footer": {"type": "box", "layout": "vertical", "contents": [
                  {"type": "button", "action": {"type": "postback", "label": "記住蔬食", "data": "m:1"}}]}}
    second = {"type": "bubble", "body": {"type": "box", "layout": "vertical",
                                         "contents": [{"type": "text", "text": "溪湖素食"}]}}
    return {"type": "flex", "altText": "店家", "contents": {"type": "carousel", "contents": [bubble, second]}}


def test_render_messages_flex_carousel_postback_button_numbered():
    text = chat.render_messages([_flex_carousel()], width=40)

    assert "[1] 記住蔬食" in text
    assert "員林蔬食小館" in text and "溪湖素食" in text
    assert text.index("員林蔬食小館") < text.index("[1] 記住蔬食") < text.index("溪湖素食")
    assert "1/2" in text and "2/2" in text


def test_render_quick_reply_after_flex_numbers_continue_in_reading_order():
    text_message = {"type": "text", "text": "要查哪裡？", "quickReply": {"items": [
        {"type": "action", "action": {"type": "message", "label": "員林", "text": "員林 素食"}}]}}

    rendered = chat.render([_flex_carousel(), text_message], width=40)

    assert [(c.n, c.label, c.kind) for c in rendered.choices] == [(1, "記住蔬食", "postback"), (2, "員林", "message")]
    assert "[2] 員林" in rendered.text
    assert rendered.choices[1].to_json() == {"n": 2, "label": "員林", "kind": "message", "text": "員林 素食"}


def test_wrap_text_cjk_lines_stay_within_width():
    lines = chat.wrap_text("彰化縣的蔬食店家資料來自示範快照，營業時間請向店家確認。", 20)

    assert len(lines) > 1
    assert all(chat.display_width(line) <= 20 for line in lines)
    assert "".join(lines) == "彰化縣的蔬食店家資料來自示範快照，營業時間請向店家確認。"


class _EchoWebhook:
    """A stand-in bot: verifies the signature with the SDK and replies through the LINE stand-in;
    with ``group``, a text also pushes a card with a 「我來處理」 button to that group (as LOCAL's
    staff card), and a postback's reply says which chat it came from."""

    def __init__(self, standin: LineStandin, group: str | None = None) -> None:
        api = MessagingApi(ApiClient(Configuration(host=standin.url, access_token=TOKEN)))
        parser = WebhookParser(SECRET)

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"])).decode("utf-8")
                try:
                    events = parser.parse(body, self.headers.get("X-Line-Signature", ""))
                except InvalidSignatureError:
                    self._answer(400)
                    return
                for event in events:
                    if isinstance(event, MessageEvent):
                        quick = QuickReply(items=[QuickReplyItem(action=PostbackAction(label="確認", data="ok:1"))])
                        message = TextMessage(text=f"收到：{event.message.text}", quick_reply=quick)
                        if group:
                            take = QuickReply(items=[QuickReplyItem(action=PostbackAction(label="我來處理",
                                                                                          data="staff:take"))])
                            api.push_message(PushMessageRequest(to=group, messages=[
                                TextMessage(text="新的服務詢問", quick_reply=take)]))
                    else:
                        message = TextMessage(text=f"按了：{event.postback.data}（{event.source.type}）")
                    api.reply_message(ReplyMessageRequest(reply_token=event.reply_token, messages=[message]))
                self._answer(200)

            def _answer(self, status: int) -> None:
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args) -> None:
                return

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/"
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def session(monkeypatch):
    monkeypatch.setattr(chat, "GRACE_SECONDS", 0.05)
    monkeypatch.setattr(chat, "POLL_INTERVAL_SECONDS", 0.02)
    with LineStandin(access_token=TOKEN) as standin:
        bot = _EchoWebhook(standin)
        try:
            yield chat.ChatSession(bot.url, SECRET, USER, standin.url, wait_s=2.0)
        finally:
            bot.close()


def _headless(session: chat.ChatSession, *requests: dict | str) -> list[dict]:
    lines = [r if isinstance(r, str) else json.dumps(r, ensure_ascii=False) for r in requests]
    out = io.StringIO()
    chat.run_headless(session, io.StringIO("\n".join(lines) + "\n"), out, io.StringIO())
    return [json.loads(line) for line in out.getvalue().splitlines()]


def test_headless_text_then_tap_sends_postback_and_returns_replies(session):
    first, tapped = _headless(session, {"text": "你好😀"}, {"tap": 1})

    assert first["status"] == 200
    assert first["replies"][0]["messages"][0]["text"] == "收到：你好😀"
    assert first["choices"] == [{"n": 1, "label": "確認", "kind": "postback", "data": "ok:1"}]
    assert tapped["status"] == 200
    assert tapped["replies"][0]["messages"][0]["text"] == "按了：ok:1（user）"


def test_headless_wrong_secret_reports_webhook_400_and_no_replies(session):
    session.secret = "not-the-channel-secret"

    [result] = _headless(session, {"text": "你好"})

    assert result["status"] == 400 and result["replies"] == []


def test_headless_tap_without_choices_and_bad_line_each_get_one_error_line(session):
    results = _headless(session, {"tap": 3}, "not json", {"unknown": 1})

    assert len(results) == 3
    assert all(r["status"] is None and r["error"] for r in results)


def test_bare_user_command_returns_from_the_staff_group_to_the_one_to_one_chat():
    # `/user` alone, which the help says returns to the one-to-one chat, must not ask for an id.
    import io

    from tools.chat import ChatSession, _command_event

    session = ChatSession("http://127.0.0.1:9/", "secret", user_id="U" + "1" * 32,
                          staff_group_id="C" + "2" * 32)
    out = io.StringIO()
    assert _command_event(session, "/staff", out) is None
    assert session.in_staff_group and session.user_id != "U" + "1" * 32
    assert _command_event(session, "/user", out) is None
    assert (session.user_id, session.in_staff_group) == ("U" + "1" * 32, False)
    assert _command_event(session, "/user U" + "3" * 32, out) is None
    assert _command_event(session, "/staff", out) is None
    assert _command_event(session, "/user", out) is None
    assert session.user_id == "U" + "3" * 32  # the chat's latest resident, not the first


def test_location_command_shares_a_location_and_refuses_what_is_not_two_numbers():
    import io

    from tools.chat import ChatSession, _command_event

    session = ChatSession("http://127.0.0.1:9/", "secret", user_id="U" + "1" * 32)
    out = io.StringIO()
    event = _command_event(session, "/location 24.0818,120.5386", out)
    assert event is not None and event["message"]["type"] == "location"
    assert (event["message"]["latitude"], event["message"]["longitude"]) == (24.0818, 120.5386)
    assert event["source"]["userId"] == "U" + "1" * 32
    assert _command_event(session, "/location 彰化車站", out) is None and "/location 緯度,經度" in out.getvalue()


GROUP = "C" + "7" * 32


@pytest.fixture
def group_session(monkeypatch):
    monkeypatch.setattr(chat, "GRACE_SECONDS", 0.05)
    monkeypatch.setattr(chat, "POLL_INTERVAL_SECONDS", 0.02)
    with LineStandin(access_token=TOKEN) as standin:
        bot = _EchoWebhook(standin, group=GROUP)
        try:
            yield chat.ChatSession(bot.url, SECRET, USER, standin.url, wait_s=2.0, staff_group_id=GROUP)
        finally:
            bot.close()


def test_headless_tap_acts_on_the_current_chats_buttons_never_the_groups(group_session):
    # The staff card pushed in the same exchange must not be merged into the resident's choices,
    # where a tap would act on whichever output came last.
    said, tapped = _headless(group_session, {"text": "新需求：路燈壞了"}, {"tap": 1})
    assert [c["label"] for c in said["choices"]] == ["確認"]
    assert [c["label"] for c in said["other_choices"][GROUP]] == ["我來處理"]
    assert tapped["replies"][0]["messages"][0]["text"] == "按了：ok:1（user）"
    # acting as staff, tap 1 is the group's card, sent from the group
    switched, as_staff = _headless(group_session, {"staff": ""}, {"tap": 1})
    assert switched.get("error") is None
    assert as_staff["replies"][0]["messages"][0]["text"] == "按了：staff:take（group）"


def test_headless_tap_after_switching_user_is_that_users_own(group_session):
    first, switched, tap = _headless(group_session, {"text": "你好"}, {"user": "U" + "8" * 32}, {"tap": 1})
    assert first["choices"] and switched.get("error") is None
    assert tap["status"] is None and "no choice" in tap["error"]  # not the first user's 確認
    back, again = _headless(group_session, {"user": USER}, {"tap": 1})
    assert again["replies"][0]["messages"][0]["text"] == "按了：ok:1（user）"  # each user keeps their own


def test_present_numbers_each_chats_buttons_from_one_and_says_where_to_tap(group_session):
    exchange = group_session.send(line_events.text_event("新需求：路燈壞了", user_id=USER))
    shown = group_session.present(exchange.calls)
    assert "[1] 確認" in shown.text and "[1] 我來處理" in shown.text and "[2]" not in shown.text
    assert "先輸入 /staff 再點" in shown.text
    assert [c.label for c in group_session.choices] == ["確認"]

