"""A bare progress question (好了嗎, 辦好了沒, 有消息了嗎) asked about the resident's own request.

A text hook (shared.routing.TEXT_HOOKS), one-to-one only: the words name no request, so they are read
as about one only when the resident has one to ask about: a request still open (awaiting acceptance or
accepted), or one whose last change (made, taken, closed) is at most ``RECENT_CHANGE_SECONDS`` old, as
right after the 「處理結束」 notice. Then the status answer (shared.handoff.flow.status_entry); otherwise
None and the turn engine answers as before, claiming nothing. Words that name a request
(路燈的事處理好了沒, 我的申請呢) are the router's (shared.turn.rules.handoff.request_status).
"""
from __future__ import annotations

import re
from datetime import timedelta

from shared.clock import from_iso
from shared.context import EventContext, Reply
from shared.handoff import flow, status
from shared.handoff.staff_outbox import OPEN_STATES
from shared.identity import Actor
from shared.logs import hash_user, log
from shared.store import StoreError
from shared.text import short_reply_form

#: The whole message, spaces and marks removed: a progress question naming nothing (好了嗎, 好了沒,
#: 辦好了沒, 處理好了嗎, 修好了沒有, 有人處理了嗎, 有消息了嗎, 進度呢, 結果呢, 怎麼樣了, 還沒好嗎).
PROGRESS_ALONE = re.compile(
    r"(?:請問|那|所以|啊|欸|阿)?(?:現在)?"
    r"(?:(?:辦|處理|修|弄|做|解決)?(?:好|完)了?(?:沒有?|嗎|了沒|了嗎|沒)"
    r"|有(?:沒有)?(?:人)?(?:處理|回覆?|消息|訊息|下文|回音|進度)了?(?:沒有?|嗎)?"
    r"|(?:進度|結果)(?:呢|如何|怎樣)|(?:怎麼樣|怎樣|如何)了|還沒(?:好|處理|修好?)(?:嗎)?)"
    r"(?:呢|啊|阿|啦|喔)?")
_WORDS_MAX_CHARS = 16
#: How long after its last change a closed request is still what a bare 好了嗎 asks about (seconds).
RECENT_CHANGE_SECONDS = timedelta(days=1).total_seconds()


def asks_progress(text: str) -> bool:
    """True when the whole of ``text`` is a progress question naming nothing (``PROGRESS_ALONE``)."""
    form = short_reply_form(text, _WORDS_MAX_CHARS)
    return form is not None and PROGRESS_ALONE.fullmatch(form) is not None


def _has_request_to_ask_about(ctx: EventContext, actor: Actor) -> bool:
    latest = status.latest_request(ctx.store, actor)
    if latest is None:
        return False
    if latest.get("human_state") in OPEN_STATES:
        return True
    changed = latest.get("updated_at") or latest.get("created_at")
    return isinstance(changed, str) and (ctx.now - from_iso(changed)).total_seconds() <= RECENT_CHANGE_SECONDS


def match_text(ctx: EventContext, text: str) -> Reply | None:
    """好了嗎 from a resident with a request to ask about → its status; else None.

    Args:
        ctx: the verified event (one-to-one; in a group or room the words are not read here).
        text: the whole message (never logged).
    Returns:
        The status answer, or None (not such words, no request to ask about, or a store that cannot be read:
        the words are then answered as before).
    """
    if ctx.shared_chat or ctx.actor is None or not asks_progress(text):
        return None
    try:
        if not _has_request_to_ask_about(ctx, ctx.actor):
            return None
    except StoreError:
        return None
    log("INFO", "bare progress question read as the request's status", user=hash_user(ctx.actor.user_id))
    return flow.status_entry(ctx)
