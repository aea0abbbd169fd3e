"""Cancelling the open confirmation card in words (算了 / 不用了 / 取消 / 不要了), as its 「取消」 button does.

A text hook (shared.routing.TEXT_HOOKS): only when the whole message is such a word and the actor's
current draft is still open (not confirmed, cancelled, superseded, withdrawn or expired). Then the draft
is cancelled with ``drafts.cancel_draft``, the very write of the card's button, so a later tap on that
card's 「確認送出」 refuses, and the text is deleted (docs/design.md §4). With no open card the words are
not this hook's: the turn engine answers them as before.
"""
from __future__ import annotations

import re

from shared.clock import from_iso
from shared.context import EventContext, Reply
from shared.conversation_store import TTL as CONVERSATION_TTL
from shared.handoff import drafts, flow, records, wording
from shared.handoff.records import Operation
from shared.identity import Actor
from shared.logs import hash_user, log
from shared.replies.menu import HELP_CHOICES, with_menu
from shared.store import StoreError
from shared.text import short_reply_form

#: The whole message, spaces and punctuation removed (reading form): a word that drops what was just
#: started (算了, 那不用了, 還是取消好了, 不要了啦).
CANCEL_WORDS = re.compile(r"(?:那|還是|好|唉|嗯|喔|哦)?(?:我)?(?:先)?(?:算了|不用了|取消|不要了|不用|不要|不需要了)"
                          r"(?:吧|啦|喔|哦|好了|謝謝|謝啦)?")
#: Longer than any such word with its marks (characters): not read at all.
_WORDS_MAX_CHARS = 16


def says_cancel(text: str) -> bool:
    """True when the whole of ``text`` is a word that drops what was just started (``CANCEL_WORDS``)."""
    form = short_reply_form(text, _WORDS_MAX_CHARS)
    return form is not None and CANCEL_WORDS.fullmatch(form) is not None


def _open_draft(ctx: EventContext, actor: Actor) -> tuple[Operation, str] | None:
    """(operation, content hash) of the actor's current draft while its card can still be confirmed."""
    actor_doc = ctx.store.get(records.ACTORS, records.actor_doc_id(actor))
    key = (actor_doc or {}).get("current_draft_key")
    if not key:
        return None
    operation = Operation(actor, key)
    doc = ctx.store.get(records.DRAFTS, operation.doc_id)
    if (doc is None or doc.get("status") != drafts.OPEN or doc.get("confirm_requested_at")
            or ctx.now >= from_iso(doc["expires_at"])):
        return None
    return operation, doc["content_hash"]


#: How long after a request was made a bare 算了 is read as about it (seconds): the conversation's window
#: (shared.conversation_store.TTL). Later, 算了 is answered as any other message.
RECENT_REQUEST_SECONDS = CONVERSATION_TTL.total_seconds()


def _registered_meanwhile(ctx: EventContext, actor: Actor) -> Reply | None:
    """算了 with no card open but a request made in the last ``RECENT_REQUEST_SECONDS`` still open: it
    cannot be withdrawn here, said with its number and the button that drafts its cancel; else None."""
    try:
        shown = flow.open_request_number(ctx, within_seconds=RECENT_REQUEST_SECONDS)
    except StoreError:
        return None
    if shown is None:
        return None
    log("INFO", "handoff cancel words after the request was registered", user=hash_user(actor.user_id))
    return Reply([wording.cancel_registered_message(shown)])


def match_text(ctx: EventContext, text: str) -> Reply | None:
    """算了 with a confirmation card open → that card cancelled, said in one line; else None.

    Args:
        ctx: the verified event (one-to-one; in a group or room the words are not read here).
        text: the whole message (never logged).
    Returns:
        The one line and the menu when the draft was cancelled now; the card button's own words when
        the draft changed meanwhile (confirmed, already cancelled); the busy line when the cancel could
        not be written; with no card open but a request made in the last 30 minutes still open, that it
        cannot be withdrawn here and how (``_registered_meanwhile``); else None.
    """
    if ctx.shared_chat or ctx.actor is None or not says_cancel(text):
        return None
    try:
        found = _open_draft(ctx, ctx.actor)
    except StoreError:
        return None  # the words are answered as without a card; nothing was changed
    if found is None:
        return _registered_meanwhile(ctx, ctx.actor)
    operation, content_hash = found
    try:
        result = drafts.cancel_draft(ctx.store, operation, content_hash, now=ctx.now)
    except StoreError as exc:
        log("WARNING", "handoff cancel in words not stored", error=exc.__class__.__name__)
        return Reply([with_menu(wording.store_busy_cancel_message(), HELP_CHOICES)])
    log("INFO", "handoff draft cancelled in words", status=result.status, user=hash_user(ctx.actor.user_id))
    if result.status == "cancelled":
        return Reply([with_menu(wording.cancelled_in_words_message(), HELP_CHOICES)])
    shown = wording.number(ctx.settings, result.number_fields()) if result.request_id else None
    return Reply([with_menu(wording.cancel_message(result.status, shown), HELP_CHOICES)])
