"""The webhook's parse phase: verify the signature, read the body, read each event.

Everything here happens before any event is claimed, so a refusal writes nothing:

* the signature is checked over the body's text with line-bot-sdk's ``SignatureValidator``
  before the body is parsed (docs/design.md §3);
* a body that verifies but is not a LINE webhook object (not JSON, nested deeper than LINE ever
  nests — 1,000 levels make ``json`` raise ``RecursionError`` — or without an ``events`` list) is
  refused as a whole: 400, nothing processed;
* each event is read on its own, so one unreadable event does not drop the others; an event whose
  ids are not in LINE's formats (``shared.line.ids``) is refused and logged, never stored;
* a lone surrogate (``"\\ud800"`` in ASCII-escaped JSON) cannot be stored: the raw event kept for
  the store (the inbox keeps it for the queued-event worker) has each replaced by U+FFFD, while the
  SDK model keeps the text as sent, so routing can refuse it with a reason the resident can act on;
* LINE adds values faster than the SDK learns them, and the SDK then cannot build the event at all
  (its ``WebhookParser`` returns an ``UnknownEvent``). For a message event we read the raw event
  LOCAL already holds: a text keeps its turn (the parts the SDK does not know — a mention of type
  ``futureType``, an emoji of a new kind — are dropped; the text is kept as sent), and any other
  message (``hologram``, a sticker with ``stickerResourceType: ZOOM_SOUND``) becomes a message
  event whose content is ``OtherMessageContent``, which gets the short fixed reply.

Source: LINE Messaging API reference, "Receive messages (webhook)", "Webhook Event Objects"
(message types, mention and sticker values, ``webhookEventId``); line-bot-sdk v3
``linebot.v3.webhook.SignatureValidator`` and ``WebhookParser.parse`` (``UnknownEvent``).
"""
from __future__ import annotations

import base64
import hashlib
import hmac
import json
from dataclasses import dataclass
from typing import Any

from linebot.v3.webhook import SignatureValidator
from linebot.v3.webhooks import Event, MessageContent, MessageEvent

from shared.bounded_json import deeper_than
from shared.line.ids import id_problem

#: LINE's webhook objects nest a handful of levels (body → events → event → message → mention →
#: mentionees → mentionee); anything deeper is not LINE's.
MAX_DEPTH = 16
_SDK_ERRORS = (ValueError, TypeError, KeyError, AttributeError, RecursionError)
#: The text message fields a turn needs; newer parts (mention, emojis, …) are dropped when unknown.
_TEXT_FIELDS = ("type", "id", "text", "quoteToken")


class DeliveryRejected(Exception):
    """The whole delivery is refused (HTTP 400) and nothing in it is processed. ``reason`` is for
    the log: "missing_signature", "bad_signature", "not_utf8", "malformed_body" or "too_deep"."""

    status = 400

    def __init__(self, reason: str, message: str):
        self.reason = reason
        super().__init__(message)


class OtherMessageContent(MessageContent):
    """A message of a type (or with a value) line-bot-sdk does not know: anything but text. Its
    ``type`` is LINE's, as sent (e.g. "hologram"); the fixed non-text reply answers it."""


@dataclass(frozen=True)
class ReadEvent:
    """One event of a delivery, as read.

    ``raw`` is the event as parsed from the body, made storable (lone surrogates → U+FFFD; the same
    object when it had none); ``event`` the SDK model read from the event as sent (rebuilt from it
    when the SDK could not read it), or None when it is not a readable LINE event;
    ``refusal`` names the id that is not in LINE's format (the event must not be processed).
    """

    raw: Any
    event: Any
    refusal: str | None = None


def read_delivery(channel_secret: str, body: str | bytes, signature: str | None) -> list[ReadEvent]:
    """Verify one delivery and read its events.

    Args:
        channel_secret: ``LINE_CHANNEL_SECRET``.
        body: the raw body, exactly as received: bytes, or text already decoded as UTF-8.
        signature: the ``X-Line-Signature`` header, or None.
    Returns:
        One ``ReadEvent`` per element of ``events``, in order (an empty list for LINE's Verify).
    Raises:
        DeliveryRejected: missing or wrong signature, a correctly signed body that is not UTF-8
            (LINE sends UTF-8 JSON), or a body that is not a LINE webhook object.
    """
    if not signature:
        raise DeliveryRejected("missing_signature", "missing X-Line-Signature")
    if isinstance(body, bytes):
        try:
            body_text = body.decode("utf-8")
        except UnicodeDecodeError:
            raise _not_utf8(channel_secret, body, signature) from None
    else:
        body_text = body
    try:
        valid = SignatureValidator(channel_secret).validate(body_text, signature)
    except (ValueError, TypeError, UnicodeError):  # e.g. a signature that is not base64 text
        valid = False
    if not valid:
        raise DeliveryRejected("bad_signature", "invalid signature")
    try:
        payload = json.loads(body_text)
    except (ValueError, RecursionError) as exc:
        raise DeliveryRejected("malformed_body", "malformed body") from exc
    if deeper_than(payload, MAX_DEPTH):
        raise DeliveryRejected("too_deep", "malformed body")
    events = payload.get("events") if isinstance(payload, dict) else None
    if not isinstance(events, list):
        raise DeliveryRejected("malformed_body", "malformed body")
    return [read_event(raw) for raw in events]


def _not_utf8(channel_secret: str, body: bytes, signature: str) -> DeliveryRejected:
    """The refusal of a body that is not UTF-8: "not UTF-8" only when its signature is right.

    line-bot-sdk's ``SignatureValidator`` takes text (it encodes it as UTF-8), so bytes that are not
    UTF-8 are checked here the same way: Base64 of HMAC-SHA256 over the body with the channel secret,
    compared in constant time. Source: Messaging API, "Verify webhook signature".
    """
    digest = hmac.new(channel_secret.encode("utf-8"), body, hashlib.sha256).digest()
    if hmac.compare_digest(base64.b64encode(digest), signature.encode("utf-8", "replace")):
        return DeliveryRejected("not_utf8", "malformed body: not UTF-8")
    return DeliveryRejected("bad_signature", "invalid signature")


def read_event(raw: Any) -> ReadEvent:
    """Read one raw event (see the module docstring); never raises."""
    if not isinstance(raw, dict):
        return ReadEvent(raw, None)
    problem = id_problem(raw)
    if problem is not None:
        return ReadEvent(storable(raw), None, refusal=problem)
    try:
        event = Event.from_dict(raw)
    except _SDK_ERRORS:
        event = _message_from_raw(raw)
    return ReadEvent(storable(raw), event)


def storable(value: Any) -> Any:
    """``value`` (parsed JSON) with every lone surrogate in its strings replaced by U+FFFD, so it
    can be written as UTF-8; ``value`` itself when it has none."""
    if not _has_surrogate(value):
        return value
    if isinstance(value, str):
        return "".join("\ufffd" if 0xD800 <= ord(c) <= 0xDFFF else c for c in value)
    if isinstance(value, dict):
        return {storable(key): storable(item) for key, item in value.items()}
    return [storable(item) for item in value]


def _has_surrogate(value: Any) -> bool:
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return True
        return False
    if isinstance(value, dict):
        return any(_has_surrogate(key) or _has_surrogate(item) for key, item in value.items())
    if isinstance(value, list):
        return any(_has_surrogate(item) for item in value)
    return False


def _message_from_raw(raw: dict) -> MessageEvent | None:
    """A message event the SDK could not read, rebuilt from what LOCAL needs of it, or None."""
    message = raw.get("message")
    if raw.get("type") != "message" or not isinstance(message, dict) or not isinstance(message.get("type"), str):
        return None
    if message["type"] == "text":
        if not isinstance(message.get("text"), str):
            return None
        return _sdk_event({**raw, "message": {k: message[k] for k in _TEXT_FIELDS if k in message}})
    # Any other message: read the envelope (source, reply token, ids) through the SDK with a
    # stand-in text, then put the real type back as OtherMessageContent.
    shell = _sdk_event({**raw, "message": {"type": "text", "id": str(message.get("id", "")), "text": "",
                                           "quoteToken": ""}})
    if shell is None:
        return None
    other = OtherMessageContent.construct(type=message["type"], id=str(message.get("id", "")))
    return shell.copy(update={"message": other})


def _sdk_event(raw: dict) -> MessageEvent | None:
    try:
        event = Event.from_dict(raw)
    except _SDK_ERRORS:
        return None
    return event if isinstance(event, MessageEvent) else None
