"""The offer to leave a problem for the town hall as a request, added to the reply of the question it was
said beside (shared.turn.rules.problems): one line in the reply's text, and a quick reply whose text is
``新需求：`` and the problem's words only, which opens the request's confirmation card
(shared.handoff.flow.match_text; docs/design.md §4: nothing is sent before 確認送出)."""
from __future__ import annotations

from dataclasses import replace

from linebot.v3.messaging import MessageAction, QuickReply, QuickReplyItem, TextMessage

from shared.context import Reply
from shared.handoff.drafts import DRAFT_PREFIXES
from shared.handoff.wording import PROBLEM_OFFER_LABEL, STATUS_ENTRY, problem_alone_line, problem_offer_line
from shared.replies.menu import MENU_CHOICES

#: LINE's limits: quick reply items per message, messages per reply, a message action's text.
_QUICK_REPLY_MAX_ITEMS = 13
_REPLY_MAX_MESSAGES = 5
_ACTION_TEXT_MAX_CHARS = 300


def offer_item(words: str) -> QuickReplyItem:
    """The quick reply that sends ``新需求：<words>`` (at most 300 characters, LINE's limit)."""
    return QuickReplyItem(action=MessageAction(label=PROBLEM_OFFER_LABEL,
                                               text=f"{DRAFT_PREFIXES[0]}{words}"[:_ACTION_TEXT_MAX_CHARS]))


def with_problem_offer(reply: Reply, words: str) -> Reply:
    """``reply`` with the offer: the line after its first text message (or a text of its own when it
    has none), and the quick reply first on its last message (LINE shows only the last one's).

    Args:
        reply: the answer to the other question; a deferred or empty reply is returned as it is.
        words: the problem's words (shared.turn.rules.problems.problem_said).
    Source: LINE Messaging API (quick reply: at most 13 items, on the last message of a reply).
    """
    if reply.defer or not reply.messages:
        return reply
    messages = list(reply.messages)
    line = problem_offer_line(words)
    first_text = next((index for index, message in enumerate(messages) if isinstance(message, TextMessage)), None)
    if first_text is not None:
        messages[first_text] = messages[first_text].copy(update={"text": f"{messages[first_text].text}\n{line}"})
    elif len(messages) < _REPLY_MAX_MESSAGES:
        messages.append(TextMessage(text=line))
    else:
        return reply
    last = messages[-1]
    items = [offer_item(words), *((last.quick_reply.items if last.quick_reply else None) or [])]
    messages[-1] = last.copy(update={"quick_reply": QuickReply(items=items[:_QUICK_REPLY_MAX_ITEMS])})
    return replace(reply, messages=messages)


#: The other choices under a problem said alone (what the menu's quick reply offers besides).
_ALONE_CHOICES = (STATUS_ENTRY, *MENU_CHOICES[:2])


def problem_alone_reply(words: str) -> Reply:
    """A problem said alone (路燈壞了, 我們巷口的垃圾車都不來): one short message with the offer's button
    first, not the general prompt to leave a request (which would ask the resident to type again what they
    just typed)."""
    items = [offer_item(words), *(QuickReplyItem(action=MessageAction(label=choice, text=choice))
                                  for choice in _ALONE_CHOICES)]
    return Reply([TextMessage(text=problem_alone_line(words), quick_reply=QuickReply(items=items))])
