"""Consent card and preference view as LINE messages (typed line-bot-sdk v3 models).

The consent card says what is stored (one dietary condition), 「用途：…」 (what it is for),
「有效至 HH:MM:SS」 on the Asia/Taipei clock, and offers 「同意記住」 / 「先不要」, whose postback
data are ``mem:<save token>`` and ``mem:<decline token>`` (same nonce). Source: docs/design.md §6;
LINE Messaging API (Flex Message, postback action limits).
"""
from __future__ import annotations

from datetime import datetime, timezone
from zoneinfo import ZoneInfo

from linebot.v3.messaging import (
    FlexBox,
    FlexBubble,
    FlexButton,
    FlexMessage,
    FlexSeparator,
    FlexText,
    Message,
    MessageAction,
    QuickReply,
    QuickReplyItem,
    TextMessage,
)

from shared.memory.diet import SAVABLE_DIETS, diet_label
from shared.memory.store import PreferenceSnapshot
from shared.memory.tokens import CardPayload, postback_data
from shared.replies.area_picker import checked_postback

PURPOSE = "用途：你查店家沒說素別時用；當次說的條件優先。"
SCOPE = "只記這一項，不記姓名、年齡或健康。說「我的偏好」可查看、更正或忘記。"


def _text(text: str, **style) -> FlexText:
    return FlexText(text=text, wrap=True, **style)


def valid_until(payload: CardPayload, tz: ZoneInfo) -> str:
    """The card's expiry as 「HH:MM:SS」 on the given wall clock (Asia/Taipei by default settings)."""
    return datetime.fromtimestamp(payload.expires_epoch_seconds, timezone.utc).astimezone(tz).strftime("%H:%M:%S")


def remember_phrase(dietary_type: str) -> str:
    """The sentence a quick reply sends to ask for a card: 「以後都找蔬食，幫我記住」."""
    return f"以後都找{diet_label(dietary_type)}，幫我記住"


def consent_card(save: CardPayload, save_token: str, decline_token: str, *, current: str | None,
                 tz: ZoneInfo) -> FlexMessage:
    """The consent card for one dietary condition.

    Args:
        save: the save token's payload (value, expiry).
        save_token / decline_token: signed tokens for 「同意記住」 / 「先不要」.
        current: the value remembered now (a correction card says it holds until approved), or None.
        tz: the wall clock of 「有效至」 (Asia/Taipei).
    Returns:
        FlexMessage with ``alt_text`` naming the value and the expiry.
    Raises:
        ValueError: postback data over 300 characters or a label over 20 (never sent).
    """
    value, until = diet_label(save.dietary_type), valid_until(save, tz)
    approve = checked_postback("同意記住", postback_data(save_token), "同意記住")
    decline = checked_postback("先不要", postback_data(decline_token), "先不要")
    title = "要更正飲食偏好嗎？" if current else "要記住你的飲食偏好嗎？"
    contents = [_text(title, weight="bold", size="lg"),
                _text(f"要記住：找店家的條件「{value}」", margin="md")]
    if current:
        contents.append(_text(f"目前記住的是「{diet_label(current)}」；按「同意記住」之前，仍照舊使用。", size="sm"))
    contents += [_text(PURPOSE, size="sm", margin="md"), _text(SCOPE, size="sm", color="#666666"),
                 FlexSeparator(margin="md"),
                 _text(f"有效至 {until}（之後按就無效）", size="sm", weight="bold", margin="md")]
    footer = FlexBox(layout="vertical", spacing="sm", contents=[
        FlexButton(action=approve, style="primary"), FlexButton(action=decline, style="secondary")])
    alt = f"確認是否記住飲食偏好「{value}」，有效至 {until}。請在 LINE 手機版按「同意記住」或「先不要」。"
    return FlexMessage(alt_text=alt, contents=FlexBubble(body=FlexBox(layout="vertical", spacing="sm",
                                                                        contents=contents), footer=footer))


def _when(at: datetime, tz: ZoneInfo) -> str:
    local = at.astimezone(tz)
    return f"{local.year}/{local.month}/{local.day} {local:%H:%M}"


def _correct_quick_reply(current: str | None) -> QuickReply:
    items = [QuickReplyItem(action=MessageAction(label=f"改成{diet_label(d)}", text=f"改成{diet_label(d)}"))
             for d in SAVABLE_DIETS if d != current]
    return QuickReply(items=items)


def preference_view(snapshot: PreferenceSnapshot, forget: CardPayload | None, forget_token: str | None, *,
                    tz: ZoneInfo) -> list[Message]:
    """我的偏好: the value and when it was consented, a forget button and correct quick replies.

    Args:
        snapshot: the stored preference.
        forget / forget_token: an ``o: forget`` token for the button; None hides the button.
        tz: wall clock for the consent time (Asia/Taipei).
    Returns:
        One message: a Flex bubble when a value is stored, else a text with remember suggestions.
    Raises:
        ValueError: postback data over LINE's limits.
    """
    if not snapshot.dietary_type:
        items = [QuickReplyItem(action=MessageAction(label=f"記住：{diet_label(d)}", text=remember_phrase(d)))
                 for d in SAVABLE_DIETS]
        return [TextMessage(text="目前沒有記住任何飲食偏好，查店家時只用你當次說的條件。\n"
                                 "想讓我記住的話，可以說「以後都找蔬食，幫我記住」，我會先請你確認。",
                            quick_reply=QuickReply(items=items))]
    value = diet_label(snapshot.dietary_type)
    contents = [_text("你的飲食偏好", weight="bold", size="lg"),
                _text(f"目前記住：{value}", size="md", margin="md")]
    if snapshot.consented_at:
        contents.append(_text(f"你同意的時間：{_when(snapshot.consented_at, tz)}", size="sm"))
    contents += [_text(PURPOSE, size="sm", margin="md"),
                 _text("想更正，請點下方「改成…」；想停止使用，請按「忘記這個偏好」。", size="sm", color="#666666")]
    footer = None
    if forget is not None and forget_token is not None:
        button = checked_postback("忘記這個偏好", postback_data(forget_token), "忘記我的飲食偏好")
        contents.append(_text(f"「忘記」按鈕有效至 {valid_until(forget, tz)}；之後也可以直接輸入「忘記我的飲食偏好」。",
                              size="xs", color="#888888"))
        footer = FlexBox(layout="vertical", contents=[FlexButton(action=button, style="secondary")])
    return [FlexMessage(alt_text=f"你的飲食偏好：{value}。可以更正或忘記。",
                        contents=FlexBubble(body=FlexBox(layout="vertical", spacing="sm", contents=contents),
                                            footer=footer),
                        quick_reply=_correct_quick_reply(snapshot.dietary_type))]
