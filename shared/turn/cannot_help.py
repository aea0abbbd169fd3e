"""What LOCAL cannot do, and the honest reply of a refused model call (docs/design.md §5, §8).

``limits_with_details`` is the ``show_limits`` reply, whoever proposed it (the router, or the model's
``show_limits`` tool): the sentences of shared.replies.menu.limits_reply, the same menu.
``refused_reply`` answers a model call refused by a context check (another session or user): nothing
was run. A model that fails in any other way gets no reply of its own here: the resident gets the
offline router's reading of the same text (shared.agent.agent.router_fallback). A resident always has a
next step; nothing is guessed.
"""
from __future__ import annotations

from linebot.v3.messaging import TextMessage

from shared.context import Reply
from shared.replies.menu import NO_DATA_LINE, REFUSED_TEXT, limits_reply, menu_reply
from shared.turn.ask import Limit, Note
from shared.turn.wording import detail_line

#: Replies that stand alone: the safety reply and the scam warning replace every detail line (a scam
#: story's 「要我刷卡」 is no question for a shop or an organiser).
_NO_DETAIL_LINE = frozenset({Limit.CRISIS, Limit.DISTRESS, Limit.EMERGENCY, Limit.FRAUD})


def limits_with_details(kinds: list[Limit] | tuple[Limit, ...], notes: tuple[Note, ...]) -> Reply:
    """The router's ``show_limits`` reply, with the details the question asked that no data holds.

    Args:
        kinds: the limits (said with shared.replies.menu.LIMIT_WORDS), possibly none.
        notes: the reading's notes; the details not recorded are said first
            (shared.turn.wording.detail_line: 資料沒有記錄能不能帶寵物，請先問店家或主辦單位。), except
            beside the safety reply or a scam warning, which stand alone.
    Returns:
        menu.limits_reply's reply (one text with the menu), the detail sentence leading it.
    Source: docs/design.md §5 (name what is not recorded).
    """
    line = None if _NO_DETAIL_LINE & set(kinds) else detail_line(notes, "any")
    reply = limits_reply(tuple(kinds))
    if line is None:
        return reply
    message = reply.messages[0]
    text = message.text if kinds else message.text.replace(NO_DATA_LINE + "\n", "", 1)
    return Reply([TextMessage(text=f"{line}\n{text}", quick_reply=message.quick_reply)])


def _with_menu(text: str) -> Reply:
    quick_reply = menu_reply().messages[0].quick_reply
    return Reply([TextMessage(text=text, quick_reply=quick_reply)])


def refused_reply() -> Reply:
    """A proposed call was refused by a context check (another session or user): nothing was run."""
    return _with_menu(REFUSED_TEXT)
