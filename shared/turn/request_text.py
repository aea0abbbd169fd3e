"""The plain message right after the prompt to leave a request (留下服務詢問, 我要找里長): it is the request's
text, shown on the confirmation card exactly as typed, unless it is clearly another ask.

A text hook (shared.routing.TEXT_HOOKS, the last one), one-to-one, only while the prompt's mark is kept
(shared.handoff.awaiting: 10 minutes, no message text). Another ask is what the offline router reads as
anything but a problem for a person or words it cannot place (a search, a greeting, thanks, a status
question, a limit, a crisis): the mark ends and the message is answered as usual. A cancel word (算了) ends
it too, said in one line. The menu words never reach here (shared.routing.FIXED_ENTRIES come first).
Source: docs/handoff.md (the steps).
"""
from __future__ import annotations

from shared.context import EventContext, Reply
from shared.handoff import awaiting, wording
from shared.handoff import flow as handoff_flow
from shared.handoff.cancel_words import says_cancel
from shared.logs import hash_user, log
from shared.replies.menu import HELP_CHOICES, with_menu
from shared.turn.router import route

#: The router's proposals that are not another ask: a problem said alone (路燈壞了), a person asked for
#: (我要找里長幫忙), or words it does not place.
REQUEST_TEXT_TOOLS = frozenset({"handoff_info", "show_local_help"})


def match_text(ctx: EventContext, text: str) -> Reply | None:
    """The awaited request text → its confirmation card; 算了 → nothing left, in one line; else None.

    Args:
        ctx: the verified event (one-to-one only).
        text: the whole message (never logged).
    Returns:
        The card (``shared.handoff.flow.draft_reply``), the one line for a cancel word, or None (nothing
        awaited, or another ask: the mark then ends and the message is answered as usual).
    """
    if ctx.shared_chat or ctx.actor is None or not text.strip() or not awaiting.is_awaited(ctx):
        return None
    awaiting.end(ctx)  # whatever this message is, it answers the prompt once
    if says_cancel(text):
        return Reply([with_menu(wording.request_not_left_message(), HELP_CHOICES)])
    if route(text).tool not in REQUEST_TEXT_TOOLS:
        return None
    log("INFO", "awaited request text drafted", user=hash_user(ctx.actor.user_id))
    return handoff_flow.draft_reply(ctx, text.strip())
