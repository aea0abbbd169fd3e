"""Kind refusals for what LOCAL cannot take from this chat or in this text, each with what the
resident can do instead (never 「請稍後再試一次」 when no retry can help).

Source: docs/design.md §2 (identity), §4 (handoff), §6 (consented memory: one account's data);
LINE URL scheme ``https://line.me/R/oaMessage/{LINE ID}/`` (opens the one-to-one
chat with an official account: developers.line.biz/en/docs/messaging-api/using-line-url-scheme/).
"""
from __future__ import annotations

from urllib.parse import quote

from linebot.v3.messaging import (
    ButtonsTemplate,
    MessageAction,
    QuickReply,
    QuickReplyItem,
    TemplateMessage,
    TextMessage,
    URIAction,
)

from shared.bounded_json import is_text
from shared.config import Settings
from shared.context import Reply

ONE_TO_ONE_TEXT = ("服務詢問和飲食偏好只在一對一聊天處理，這樣群組裡的其他人不會看到你的內容。"
                   "請到和我的一對一聊天室再傳一次（在群組成員裡點我的頭像，選「聊天」）。")
UNSTORABLE_TEXT = ("這則訊息裡有手機無法正常顯示的字元（例如不完整的表情符號），所以我沒辦法保存或處理。"
                   "請刪掉那個符號，或換個說法再傳一次。")


def one_to_one_reply(settings: Settings) -> Reply:
    """In a group or room: handoff and memory are one-to-one; say so and offer the 1:1 chat.

    The member's text is never repeated here (the group sees this reply). With
    ``LINE_BOT_BASIC_ID`` set, a button opens the one-to-one chat with the official account.
    """
    if not settings.line_bot_basic_id:
        return Reply([TextMessage(text=ONE_TO_ONE_TEXT)])
    uri = f"https://line.me/R/oaMessage/{quote(settings.line_bot_basic_id, safe='')}/"
    template = ButtonsTemplate(text="服務詢問和飲食偏好只在一對一聊天處理，群組裡的其他人不會看到。",
                               actions=[URIAction(label="到一對一聊天", uri=uri)])
    return Reply([TemplateMessage(alt_text=ONE_TO_ONE_TEXT, template=template)])


def unstorable_text_reply() -> Reply:
    """Text with characters that cannot be stored (a lone UTF-16 surrogate): say what to change."""
    return Reply([TextMessage(text=UNSTORABLE_TEXT, quick_reply=QuickReply(items=[
        QuickReplyItem(action=MessageAction(label="看選單", text="選單"))]))])


#: True when a text can be written as UTF-8 (no lone surrogates from ``\\ud800``-style escapes).
is_storable = is_text
