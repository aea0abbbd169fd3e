"""The staff group's Flex cards and the signed postbacks their buttons carry.

Postback data: ``staff:v1.<op>.<operation_id>.<revision>.<sig>``:

* ``op``: ``take`` (「我來處理」), ``decline`` (「無法處理」), ``done`` (「已完成」), ``back`` (「轉回待處理」);
* ``operation_id``: the request's document id (64 lowercase hex; it names no one);
* ``revision``: the request's ``staff_revision`` when the card was made: a card is bound to the
  state it shows, and a tap on an older card changes nothing (docs/design.md §10);
* ``sig``: the MAC over the rest made by ``shared.signing`` (purpose ``local-staff-card``, key
  derived from ``LOCAL_SIGNING_KEY`` for the tenant and the staff group; the previous key version is
  still accepted), so a card only verifies for the group it was made for.

About 125 characters, checked against LINE's 300 before sending. A card shows the request's number
(its display code ``A7K-3QF``, ``shared.handoff.codes``; the time it was made for a request without
one), the resident's text and when it was made (Asia/Taipei) — never the resident's LINE user id.

Source: docs/design.md §10, §11 (labels ≤ 20, altText ≤ 400, postback data ≤ 300); LINE Messaging API,
Flex Message and postback action reference.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from linebot.v3.messaging import (
    FlexBox,
    FlexBubble,
    FlexButton,
    FlexMessage,
    FlexSeparator,
    FlexText,
)

from shared import signing
from shared.clock import wall_clock_text
from shared.config import Settings
from shared.handoff import codes, staff_outbox
from shared.handoff.push_refused import REASON as MONTHLY_LIMIT
from shared.replies.area_picker import checked_postback
from shared.signing import CardRefused
from shared.staff import audit

POSTBACK_PREFIX = "staff"
PURPOSE = "local-staff-card"
VERSION = "v1"
TAKE, DECLINE, DONE, BACK = "take", "decline", "done", "back"
LABELS = {TAKE: "我來處理", DECLINE: "無法處理", DONE: "已完成", BACK: "轉回待處理"}
#: The buttons a card offers in each state (none once the request is closed).
BUTTONS = {staff_outbox.AWAITING: (TAKE, DECLINE), staff_outbox.ACCEPTED: (DONE, BACK)}
#: Staff-facing words for each state.
STATE_WORDS = {staff_outbox.AWAITING: "待受理", staff_outbox.ACCEPTED: "處理中", staff_outbox.COMPLETED: "已完成",
               staff_outbox.DECLINED: "無法處理（已告知詢問者）"}
ALT_TEXT_MAX_CHARS = 400
_TEXT_EXCERPT_CHARS = 120


@dataclass(frozen=True)
class StaffReference:
    """A verified staff button: what to do, to which request, on which revision of it."""

    op: str
    operation_doc_id: str
    revision: int


# ---- signing (shared.signing: one purpose, bound to the tenant and the staff group) -------------

def _keys(settings: Settings) -> signing.SigningKeys:
    if not settings.staff_group_id:
        raise CardRefused(signing.NOT_CONFIGURED)
    try:
        return signing.SigningKeys.from_settings(settings)
    except signing.SigningNotConfigured as exc:
        raise CardRefused(signing.NOT_CONFIGURED) from exc


def _binding(settings: Settings) -> tuple[str, str]:
    return (settings.tenant_id, settings.staff_group_id or "")


def postback_data(settings: Settings, op: str, operation_doc_id: str, revision: int) -> str:
    """``staff:<signed reference>`` for one button.

    Raises:
        CardRefused: no signing key or no staff group configured.
        ValueError: unknown op, malformed id or negative revision; over 300 characters.
    """
    keys = _keys(settings)
    if op not in LABELS or not _is_hex64(operation_doc_id) or revision < 0:
        raise ValueError("bad staff card reference")
    body = ".".join((VERSION, op, operation_doc_id, str(int(revision))))
    return signing.postback_data(POSTBACK_PREFIX, signing.sign(keys, PURPOSE, _binding(settings), body))


def verify(settings: Settings, data: str) -> StaffReference:
    """Check a staff postback's data (after ``staff:``).

    Raises:
        CardRefused: ``not_configured``, ``malformed`` or ``bad_signature`` (tampered, or made for
            another group or tenant).
    """
    keys = _keys(settings)
    body = signing.verify(keys, PURPOSE, _binding(settings), data).body
    parts = body.split(".")
    if (len(parts) != 4 or parts[0] != VERSION or parts[1] not in LABELS or not _is_hex64(parts[2])
            or not parts[3].isdigit() or len(parts[3]) > 9):
        raise CardRefused("malformed")
    return StaffReference(parts[1], parts[2], int(parts[3]))


def _is_hex64(value: str) -> bool:
    return len(value) == 64 and all(c in "0123456789abcdef" for c in value)


# ---- cards ---------------------------------------------------------------------------------------

def local_time(settings: Settings, iso_text: str | None) -> str:
    """ISO UTC text → ``YYYY/MM/DD HH:MM`` on the configured wall clock (Asia/Taipei); "" if absent."""
    return wall_clock_text(iso_text, settings.tz)


def _excerpt(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + "…"


def state_line(request: dict[str, Any]) -> str:
    """「目前狀態：處理中（工作人員 #ab12）」 for a request document."""
    state = request.get("human_state") or staff_outbox.AWAITING
    words = STATE_WORDS.get(state, state)
    who = request.get("accepted_by") if state == staff_outbox.ACCEPTED else request.get("closed_by")
    return f"目前狀態：{words}" + (f"（{audit.staff_label(who)}）" if who else "")


def request_card(settings: Settings, operation_doc_id: str, request: dict[str, Any], *,
                 heading: str = "新的服務詢問") -> FlexMessage:
    """The staff card of one request: number, text, time (Asia/Taipei), state, and its state's buttons.

    Args:
        operation_doc_id: the request's document id (bound into the buttons).
        request: the ``handoff_requests`` document (its ``user_id`` is never shown).
        heading: 「新的服務詢問」, 「提醒：這筆服務詢問仍待受理」, …
    Raises:
        CardRefused: not configured (no signing key or staff group).
        ValueError: a postback over 300 characters or a label over 20 (checked before sending).
    """
    state = request.get("human_state") or staff_outbox.AWAITING
    revision = int(request.get("staff_revision") or 0)
    text = str(request.get("text") or "")
    number = codes.label(request, settings.tz)
    body = FlexBox(layout="vertical", spacing="md", contents=[
        FlexText(text=heading, weight="bold", size="md", wrap=True),
        FlexText(text=f"單號：{number}", size="md", weight="bold", wrap=True),
        FlexText(text=f"登記時間：{local_time(settings, request.get('created_at'))}", size="sm",
                 color="#555555", wrap=True),
        FlexSeparator(),
        FlexText(text=text or "（沒有內容）", size="md", wrap=True),
        FlexSeparator(),
        FlexText(text=state_line(request), size="sm", wrap=True),
    ])
    buttons = [FlexButton(action=checked_postback(LABELS[op], postback_data(settings, op, operation_doc_id, revision),
                                                  LABELS[op]),
                          style="primary" if index == 0 else "secondary", height="sm")
               for index, op in enumerate(BUTTONS.get(state, ()))]
    footer = FlexBox(layout="horizontal", spacing="md", contents=buttons) if buttons else None
    alt = _excerpt(f"{heading} {number}：{text}", ALT_TEXT_MAX_CHARS - 1)
    return FlexMessage(alt_text=alt, contents=FlexBubble(body=body, footer=footer))


def followup_card(settings: Settings, followup: dict[str, Any], draft_text: str | None) -> FlexMessage:
    """A ``needs_human_followup`` item for the staff group: no buttons (nothing to take yet).

    Shows what the resident confirmed (the draft's text), when, why it is unverified and a short
    reference (the first 8 hex of the operation's key) for ``make requests``; never the user id.
    """
    reference = str(followup.get("idempotency_key") or "")[:8]
    text = _excerpt(draft_text or followup.get("text") or "（找不到內容）", 500)
    if followup.get("reason") == MONTHLY_LIMIT:  # a notice LINE refused: the month's pushes are used up
        heading, why = "通知沒有送到詢問者", "本月主動通知的額度已用完，下面這則通知沒有送出，請工作人員另行告知詢問者。"
    else:
        heading, why = "需要人工確認的服務詢問", "系統無法自動查證這筆詢問是否已登記，已告知詢問者會由工作人員確認。"
    body = FlexBox(layout="vertical", spacing="md", contents=[
        FlexText(text=heading, weight="bold", size="md", wrap=True),
        FlexText(text=why, size="sm", color="#555555", wrap=True),
        FlexText(text=f"時間：{local_time(settings, followup.get('created_at'))}", size="sm", color="#555555",
                 wrap=True),
        FlexText(text=f"參考碼：{reference}（make requests 可查）", size="sm", color="#555555", wrap=True),
        FlexSeparator(),
        FlexText(text=text, size="md", wrap=True),
    ])
    alt = _excerpt(f"{heading}：{text}", ALT_TEXT_MAX_CHARS - 1)
    return FlexMessage(alt_text=alt, contents=FlexBubble(body=body))
