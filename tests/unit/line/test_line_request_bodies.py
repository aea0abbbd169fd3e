"""The gateway's request bodies are exactly line-bot-sdk's own serialisation of LOCAL's messages.

``SdkLineGateway`` serialises reply and push requests in one pass (to spare CPU); this checks the body
LINE receives (the stand-in records it) against the SDK's generated ``to_dict`` for every kind of
message model LOCAL sends: text with quick replies, Flex bubbles and carousels (boxes, texts,
buttons, separators), a buttons template, and message, postback and URI actions.
"""
from __future__ import annotations

import json

import pytest
from linebot.v3.messaging import (
    ButtonsTemplate,
    FlexBox,
    FlexBubble,
    FlexButton,
    FlexCarousel,
    FlexMessage,
    FlexSeparator,
    FlexText,
    MessageAction,
    PostbackAction,
    PushMessageRequest,
    QuickReply,
    QuickReplyItem,
    ReplyMessageRequest,
    TemplateMessage,
    TextMessage,
    URIAction,
)

from shared.line.messaging import SdkLineGateway
from shared.replies import menu
from tests.conftest import TEST_TOKEN
from tools.line_events import new_reply_token

USER = "U0123456789abcdef0123456789abcdef"
KEY = "6f1c2d3e-4a5b-4c6d-8e7f-901a2b3c4d5e"


def _bubble(title: str) -> FlexBubble:
    return FlexBubble(
        body=FlexBox(layout="vertical", spacing="sm", contents=[
            FlexText(text=title, weight="bold", wrap=True), FlexSeparator(),
            FlexText(text="地址：彰化縣花壇鄉", size="sm", color="#666666", wrap=True)]),
        footer=FlexBox(layout="vertical", contents=[
            FlexButton(action=URIAction(label="地圖", uri="https://maps.google.com/?q=1"), style="link"),
            FlexButton(action=PostbackAction(label="確認送出", data="handoff:v1.x", display_text="確認送出"),
                       style="primary")]))


MESSAGES = {
    "menu": menu.menu_reply().messages,
    "help": menu.help_reply("先說一聲").messages,
    "flex carousel": [FlexMessage(alt_text="店家", contents=FlexCarousel(contents=[_bubble("一"), _bubble("二")]))],
    "flex bubble and text": [FlexMessage(alt_text="卡片", contents=_bubble("服務詢問")),
                             TextMessage(text="好的", quick_reply=QuickReply(items=[
                                 QuickReplyItem(action=PostbackAction(label="取消", data="handoff:c"))]))],
    "buttons template": [TemplateMessage(alt_text="一對一", template=ButtonsTemplate(
        text="到一對一聊天", actions=[URIAction(label="到一對一聊天", uri="https://line.me/R/oaMessage/%40x/"),
                                   MessageAction(label="查活動", text="查活動")]))],
}


@pytest.fixture
def gateway(line_standin) -> SdkLineGateway:
    return SdkLineGateway(line_standin.url, TEST_TOKEN)


def _as_sent(body: dict) -> dict:
    return json.loads(json.dumps(body, ensure_ascii=False))


@pytest.mark.parametrize("kind", sorted(MESSAGES))
def test_line_request_body_reply_equals_the_sdk_serialisation(gateway, line_standin, kind):
    token = new_reply_token()
    gateway.reply(token, MESSAGES[kind], timeout_seconds=5)
    [call] = [c for c in line_standin.calls() if (c.get("body") or {}).get("replyToken") == token]
    assert call["status"] == 200
    expected = ReplyMessageRequest(reply_token=token, messages=list(MESSAGES[kind])).to_dict()
    assert call["body"] == _as_sent(expected)


@pytest.mark.parametrize("kind", sorted(MESSAGES))
def test_line_request_body_push_equals_the_sdk_serialisation(gateway, line_standin, kind):
    gateway.push(USER, MESSAGES[kind], retry_key=KEY, timeout_seconds=5)
    [call] = [c for c in line_standin.calls() if c["path"] == "/v2/bot/message/push"]
    assert call["status"] == 200
    assert call["body"] == _as_sent(PushMessageRequest(to=USER, messages=list(MESSAGES[kind])).to_dict())


def test_line_request_reply_is_sent_as_the_sdks_reply_message_sends_it(gateway, line_standin):
    """The gateway sends a reply through the SDK's ``ApiClient`` without ``MessagingApi.reply_message``'s
    re-validation and answer model: the same call reaches LINE (method, path, headers, body)."""
    from linebot.v3.messaging import ApiClient, Configuration, MessagingApi

    ours, theirs = new_reply_token(), new_reply_token()
    gateway.reply(ours, MESSAGES["menu"], timeout_seconds=5)
    api = MessagingApi(ApiClient(Configuration(host=line_standin.url, access_token=TEST_TOKEN)))
    api.reply_message(ReplyMessageRequest(reply_token=theirs, messages=list(MESSAGES["menu"])))
    calls = {c["body"]["replyToken"]: c for c in line_standin.calls() if c["path"] == "/v2/bot/message/reply"}
    sent, expected = calls[ours], calls[theirs]
    assert sent["status"] == expected["status"] == 200
    assert (sent["method"], sent["headers"]) == (expected["method"], expected["headers"])
    assert {**sent["body"], "replyToken": theirs} == expected["body"]
