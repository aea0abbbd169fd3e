"""The confirmation card and the signed reference its buttons carry.

Postback data is ``handoff:`` + a reference ``v1.<op>.<key>.<hash>.<exp>.<sig>``:

* ``op``: ``ok`` (「確認送出」) or ``no`` (「取消」);
* ``key``: the idempotency key (32 lowercase hex); ``hash``: the content hash (64 lowercase hex);
* ``exp``: the draft's expiry, whole UTC epoch seconds;
* ``sig``: the MAC over ``v1.<op>.<key>.<hash>.<exp>`` made by ``shared.signing`` (purpose
  ``local-handoff-card``, key derived per actor from ``LOCAL_SIGNING_KEY``; the previous key version
  is still accepted), so a card only verifies for the user it was made for.

About 166 characters in all, checked against LINE's 300 before sending. Signing is for integrity
(nobody can confirm text they did not see, or another user's card), not for secrecy.

Source: docs/design.md §4 (signed reference, ≤ 300 chars); LINE Messaging API (postback data ≤ 300
characters, action label ≤ 20).
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone

from linebot.v3.messaging import (
    FlexBox,
    FlexBubble,
    FlexButton,
    FlexMessage,
    FlexSeparator,
    FlexText,
)

from shared import signing
from shared.config import Settings
from shared.handoff import records
from shared.handoff.drafts import Draft
from shared.handoff.records import Operation
from shared.identity import Actor
from shared.line import limits
from shared.replies.area_picker import checked_postback
from shared.signing import CardRefused

POSTBACK_PREFIX = "handoff"
PURPOSE = "local-handoff-card"
VERSION = "v1"
CONFIRM, CANCEL = "ok", "no"


@dataclass(frozen=True)
class Reference:
    """A verified card reference: which operation, which content, until when, which button."""

    op: str
    operation: Operation
    content_hash: str
    expires_at: datetime


def _keys(settings: Settings) -> signing.SigningKeys:
    try:
        return signing.SigningKeys.from_settings(settings)
    except signing.SigningNotConfigured as exc:
        raise CardRefused(signing.NOT_CONFIGURED) from exc


def sign_reference(settings: Settings, op: str, operation: Operation, content_hash: str,
                   expires_at: datetime) -> str:
    """The reference for one button (without the ``handoff:`` prefix).

    Raises:
        CardRefused: ``LOCAL_SIGNING_KEY`` is not configured (``NOT_CONFIGURED``).
        ValueError: unknown ``op``.
    """
    keys = _keys(settings)
    if op not in (CONFIRM, CANCEL):
        raise ValueError(f"unknown card op {op!r}")
    exp = int(expires_at.timestamp())
    body = ".".join((VERSION, op, operation.idempotency_key, content_hash, str(exp)))
    return signing.sign(keys, PURPOSE, operation.actor, body)


def verify_reference(settings: Settings, actor: Actor, data: str) -> Reference:
    """Check a reference against the tapping actor. Expiry is returned, not judged, here: the
    create transaction decides (a card tapped again after its request exists still gets the receipt).

    Args:
        data: the postback data after ``handoff:``.
    Raises:
        CardRefused: ``NOT_CONFIGURED``, ``MALFORMED`` or ``BAD_SIGNATURE`` (tampered or another user's).
    """
    keys = _keys(settings)
    if not data.isascii():  # e.g. full-width digits pass str.isdigit(); every field is ASCII
        raise CardRefused("malformed")
    parts = data.split(".")
    if len(parts) != 6 or parts[0] != VERSION or parts[1] not in (CONFIRM, CANCEL):
        raise CardRefused("malformed")
    _, op, key, digest, exp, _signature = parts
    if (not records.is_idempotency_key(key) or len(digest) != 64
            or any(c not in "0123456789abcdef" for c in digest) or not exp.isdigit() or len(exp) > 12):
        raise CardRefused("malformed")
    signing.verify(keys, PURPOSE, actor, data)
    return Reference(op, Operation(actor, key), digest, datetime.fromtimestamp(int(exp), timezone.utc))


def postback_data(settings: Settings, op: str, draft: Draft) -> str:
    """``handoff:<reference>`` for one button of the draft's card."""
    reference = sign_reference(settings, op, draft.operation, draft.content_hash, draft.expires_at)
    return signing.postback_data(POSTBACK_PREFIX, reference)


def confirmation_card(settings: Settings, draft: Draft) -> FlexMessage:
    """The card showing the exact text, with 「確認送出」 and 「取消」.

    Returns:
        A FlexMessage whose body holds ``draft.text`` unchanged and the validity time (Asia/Taipei).
    Raises:
        CardRefused: no signing key configured.
        ValueError: postback data over 300 characters (checked before sending).
    """
    until = draft.expires_at.astimezone(settings.tz).strftime("%H:%M")
    minutes = max(1, round(settings.draft_ttl_seconds / 60))
    confirm = checked_postback("確認送出", postback_data(settings, CONFIRM, draft), "確認送出")
    cancel = checked_postback("取消", postback_data(settings, CANCEL, draft), "取消")
    body = FlexBox(layout="vertical", spacing="md", contents=[
        FlexText(text="請確認要交給工作人員的內容", weight="bold", size="md", wrap=True),
        FlexSeparator(),
        FlexText(text=draft.text, size="md", wrap=True),
        FlexSeparator(),
        FlexText(text="按「確認送出」後才會登記，並交給工作人員；按「取消」就不會送出。", size="sm",
                 color="#555555", wrap=True),
        FlexText(text=f"這張卡片有效至 {until}（{minutes} 分鐘內）", size="sm", color="#555555", wrap=True),
    ])
    footer = FlexBox(layout="horizontal", spacing="md", contents=[
        FlexButton(action=confirm, style="primary", height="md"),
        FlexButton(action=cancel, style="secondary", height="md"),
    ])
    # altText ≤ 400 UTF-16 units as LINE counts them: 200 emoji are 400 units, not 200 characters.
    alt_text = limits.fit(f"請確認服務詢問：{draft.text}", limits.ALT_TEXT)
    return FlexMessage(alt_text=alt_text, contents=FlexBubble(body=body, footer=footer))
