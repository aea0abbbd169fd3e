"""LINE webhook events and bodies as LINE sends them, built from line-bot-sdk's webhook models.

The one set of event builders for the tools (terminal chat, demo, bench) and the tests: each event
is a line-bot-sdk v3 model (``linebot.v3.webhooks``) serialised the way the SDK serialises it
(camelCase keys), so a field LOCAL reads is one the SDK's ``WebhookParser`` reads back.

Ids look like LINE's: ``webhookEventId`` a 26-character ULID, a 32-hex reply token, an 18-digit
message id. Any id can be given instead (redelivery tests reuse one).

Source: LINE Messaging API reference, "Webhook event objects"; line-bot-sdk-python v3 models.
"""
from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
import time
from typing import Any

from linebot.v3.webhooks import (
    DeliveryContext,
    EventMode,
    FollowDetail,
    FollowEvent,
    GroupSource,
    LocationMessageContent,
    MessageEvent,
    PostbackContent,
    PostbackEvent,
    RoomSource,
    Source,
    StickerMessageContent,
    TextMessageContent,
    UnfollowEvent,
    UnsendDetail,
    UnsendEvent,
    UserSource,
)

_CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"


def new_webhook_event_id(now_ms: int | None = None) -> str:
    """A ULID (26 Crockford base32 characters: 48-bit time in ms, 80 random bits), like LINE's."""
    ms = int(time.time() * 1000) if now_ms is None else now_ms
    value = (ms << 80) | secrets.randbits(80)
    return "".join(_CROCKFORD[(value >> shift) & 31] for shift in range(125, -1, -5))


def new_reply_token() -> str:
    """A fresh reply token (32 lowercase hex characters)."""
    return secrets.token_hex(16)


def new_message_id() -> str:
    """A LINE-like message id (18 digits)."""
    return str(secrets.randbelow(9 * 10**17) + 10**17)


def new_quote_token() -> str:
    """An opaque quote token."""
    return secrets.token_urlsafe(48)


def source_of(user_id: str | None, *, group_id: str | None = None, room_id: str | None = None) -> Source:
    """The event's ``source``: the user's one-to-one chat, or a group (``C`` + 32 hex) or room (``R`` + 32
    hex) with the sender's user id (None: LINE left it out, e.g. the sender is not a friend)."""
    if group_id is not None:
        return GroupSource(group_id=group_id, user_id=user_id)
    if room_id is not None:
        return RoomSource(room_id=room_id, user_id=user_id)
    if user_id is None:
        raise ValueError("a one-to-one chat needs the user id")
    return UserSource(user_id=user_id)


def _common(user_id: str | None, event_id: str | None, timestamp_ms: int | None, redelivery: bool,
            group_id: str | None = None, room_id: str | None = None) -> dict[str, Any]:
    timestamp = int(time.time() * 1000) if timestamp_ms is None else timestamp_ms
    return {"mode": EventMode.ACTIVE, "timestamp": timestamp,
            "source": source_of(user_id, group_id=group_id, room_id=room_id),
            "webhook_event_id": event_id or new_webhook_event_id(timestamp),
            "delivery_context": DeliveryContext(is_redelivery=redelivery)}


def _as_sent(model) -> dict:
    return json.loads(model.to_json())


def text_event(text: str, *, user_id: str | None, event_id: str | None = None, reply_token: str | None = None,
               message_id: str | None = None, timestamp_ms: int | None = None, redelivery: bool = False,
               group_id: str | None = None, room_id: str | None = None) -> dict:
    """A text message event (camelCase dict, as in a webhook body).

    Args:
        text: what the user typed (any Unicode).
        user_id: the sender, "U" + 32 hex (None only in a group or room: LINE left it out).
        event_id, reply_token, message_id: given ids; fresh ones by default.
        timestamp_ms: event time, Unix milliseconds (now by default).
        redelivery: ``deliveryContext.isRedelivery``.
        group_id, room_id: sent in that group or room (``source_of``); a one-to-one chat by default.
    """
    return _as_sent(MessageEvent(**_common(user_id, event_id, timestamp_ms, redelivery, group_id, room_id),
                                 reply_token=reply_token or new_reply_token(),
                                 message=TextMessageContent(id=message_id or new_message_id(),
                                                            quote_token=new_quote_token(), text=text)))


def location_event(latitude: float, longitude: float, *, user_id: str | None, address: str | None = None,
                   title: str | None = None, event_id: str | None = None, reply_token: str | None = None,
                   timestamp_ms: int | None = None, group_id: str | None = None) -> dict:
    """A location message event (the user shared a place from LINE's map).

    Args:
        latitude, longitude: WGS 84 degrees, as LINE sends them.
        address, title: LINE's text for the place (optional in the webhook; omitted when None).
        the rest as for ``text_event``.
    Source: Messaging API reference, "Location message" (webhook).
    """
    return _as_sent(MessageEvent(**_common(user_id, event_id, timestamp_ms, False, group_id),
                                 reply_token=reply_token or new_reply_token(),
                                 message=LocationMessageContent(id=new_message_id(), title=title, address=address,
                                                                latitude=latitude, longitude=longitude)))


def postback_event(data: str, *, user_id: str | None, event_id: str | None = None, reply_token: str | None = None,
                   params: dict[str, str] | None = None, timestamp_ms: int | None = None,
                   redelivery: bool = False, group_id: str | None = None, room_id: str | None = None) -> dict:
    """A postback event (a tapped postback button or quick reply); ``data`` is kept unchanged.

    Args:
        params: a date/time picker's result, e.g. ``{"date": "2025-01-31"}``; omitted when None.
        group_id, room_id: tapped in that group or room; the rest as for ``text_event``.
    """
    return _as_sent(PostbackEvent(**_common(user_id, event_id, timestamp_ms, redelivery, group_id, room_id),
                                  reply_token=reply_token or new_reply_token(),
                                  postback=PostbackContent(data=data, params=params)))


def unsend_event(message_id: str, *, user_id: str, event_id: str | None = None,
                 timestamp_ms: int | None = None, group_id: str | None = None) -> dict:
    """An unsend event (the user took back message ``message_id``); it has no reply token."""
    return _as_sent(UnsendEvent(**_common(user_id, event_id, timestamp_ms, False, group_id),
                                unsend=UnsendDetail(message_id=message_id)))


def follow_event(*, user_id: str, event_id: str | None = None, timestamp_ms: int | None = None) -> dict:
    """A follow event (the user added the account as a friend)."""
    return _as_sent(FollowEvent(**_common(user_id, event_id, timestamp_ms, False), reply_token=new_reply_token(),
                                follow=FollowDetail(is_unblocked=False)))


def unfollow_event(*, user_id: str, event_id: str | None = None, timestamp_ms: int | None = None) -> dict:
    """An unfollow event (the user blocked the account); it has no reply token."""
    return _as_sent(UnfollowEvent(**_common(user_id, event_id, timestamp_ms, False)))


def sticker_event(*, user_id: str, package_id: str = "11537", sticker_id: str = "52002734",
                  event_id: str | None = None, timestamp_ms: int | None = None) -> dict:
    """A sticker message event."""
    return _as_sent(MessageEvent(**_common(user_id, event_id, timestamp_ms, False), reply_token=new_reply_token(),
                                 message=StickerMessageContent(id=new_message_id(), quote_token=new_quote_token(),
                                                               package_id=package_id, sticker_id=sticker_id,
                                                               sticker_resource_type="STATIC", keywords=["OK"])))


def webhook_body(events: list[dict], destination: str) -> bytes:
    """A webhook body exactly as LINE serialises it: compact JSON, non-ASCII kept, UTF-8."""
    return json.dumps({"destination": destination, "events": events}, ensure_ascii=False,
                      separators=(",", ":")).encode("utf-8")


def sign(body: bytes, secret: str) -> str:
    """``X-Line-Signature`` for these exact bytes: base64(HMAC-SHA256(channel secret, body))."""
    return base64.b64encode(hmac.new(secret.encode("utf-8"), body, hashlib.sha256).digest()).decode("ascii")
