"""我已經不吃素了 / 我現在不吃素了 / 我沒有吃素了: the resident says the remembered diet no longer holds.

A text hook (shared.routing.TEXT_HOOKS), read on the whole message: with a diet remembered, the reply
says so and shows the preference view with its buttons (忘記這個偏好, 改成…; shared.memory.flow.view_entry),
so the diet is never kept in use silently; nothing changes until a button is tapped (docs/design.md §6:
words alone delete nothing). With nothing remembered, one short line. A plain 我不吃素 (no change said)
is a search condition, not this hook's: the router reads it as 不限素別.
"""
from __future__ import annotations

import re

from shared.context import EventContext, Reply
from shared.memory import replies
from shared.memory.flow import view_entry
from shared.memory.store import read_preference
from shared.text import short_reply_form

_DIET = r"(?:素食|蔬食|全素|純素|蛋奶素|奶蛋素|奶素|素)"
#: The whole message (compact reading form): a diet no longer eaten (已經不吃素了, 沒在吃全素了, 不再吃素).
_DROPPED = re.compile(rf"(?:我|我們|我自己)?(?P<cue>已經|現在|目前|最近|從現在起|以後)?(?:都)?"
                      rf"(?:(?P<again>不再)|不|沒有?在?|沒在)(?:再)?吃(?P<diet>{_DIET})(?:的)?(?P<end>了|啦|囉)?"
                      r"(?:喔|哦|耶|呢|欸)?")
#: Longer than any such sentence with its marks (characters): not read at all.
_WORDS_MAX_CHARS = 24


def diet_dropped(text: str) -> str | None:
    """The diet word of a message that says it is no longer eaten (我已經不吃素了 → 素), else None.

    A change must be said: 已經 / 現在 / 不再 … or a closing 了 (我不吃素了); 我不吃素 alone is None.
    """
    form = short_reply_form(text, _WORDS_MAX_CHARS)
    found = _DROPPED.fullmatch(form) if form is not None else None
    if found is None or not (found.group("cue") or found.group("again") or found.group("end")):
        return None
    return found.group("diet")


def match_text(ctx: EventContext, text: str) -> Reply | None:
    """我已經不吃素了 → the remembered diet with its forget and correct buttons, or one line; else None.

    Raises:
        StoreUnavailable: the preference could not be read; retryable (LINE redelivers).
    """
    if ctx.actor is None or diet_dropped(text) is None:
        return None
    snapshot = read_preference(ctx.store, ctx.actor)
    if not snapshot.dietary_type:
        return replies.nothing_remembered_reply()
    view = view_entry(ctx)
    return Reply([replies.diet_dropped_message(snapshot.dietary_type), *view.messages][:5])
