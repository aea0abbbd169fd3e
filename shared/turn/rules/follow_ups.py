"""Follow-ups and corrections: a message that only changes conditions of the last search.

A follow-up (那下禮拜呢, 那溪湖呢, 那全素的呢, 換成週日, 改成鹿港) or a correction (不是啦 我是說鹿港, 啊不對 是禮拜天,
我是要問溪湖的, 我是要問素食) is an opening word (``_HEAD``, ``_CORRECTION``) and/or a closing 呢, around
conditions only: a township, a date, a topic, a diet, a kind (活動, 店家). The conditions are read by the
router itself (``Message.route`` on the words between), and only a clean reading counts: one search,
nothing said beside it (no limit, no detail question, no second ask). Anything else is no follow-up and
the message is read by the other rules.

The router stays a reader of one message: it returns a ``FollowUp`` with only what was said; the turn
merges it with the conversation state, or, with none, answers the message as the other rules read it
(``FOLLOW_UP_TOOL``'s ``alone``). Source: docs/design.md §7 (Conversation).
"""
from __future__ import annotations

import re
from dataclasses import replace

from shared.areas import townships_in
from shared.turn.ask import Flag, FollowUp
from shared.turn.proposal import Proposal
from shared.turn.rules.message import Message
from shared.turn.rules.townships import strip_townships

#: The proposal's tool for a follow-up: args ``follow_up`` (FollowUp) and ``alone`` (the Proposal the
#: message gets when there is no conversation to follow).
FOLLOW_UP_TOOL = "follow_up"

_PUNCT = r"[\s,，、.。!！?？~～…:：]*"
_NEGATION = r"(?:啊|阿|喔|哦|欸|唉|呃)?(?:不是啦|不是喔|不是|不對啦|不對|說錯了|打錯了|錯了|抱歉)"
_I_MEANT = r"(?:我是說|我是要問|我要問的是|我是問|我說的是|我要的是)"
#: Words that open a correction: a negation then a pause (不對不對，鹿港) or 我是說 (不是啦 我是說鹿港, 啊不對
#: 是禮拜天), or 我是說 alone. A negation running on into other words (不是要你記住) opens none.
_CORRECTION = re.compile(
    rf"^(?:{_NEGATION})+{_PUNCT}(?:{_I_MEANT}|是要問|應該是|是說|是){_PUNCT}"
    rf"|^(?:{_NEGATION})+[\s,，、.。!！~～…:：]+"
    rf"|^{_I_MEANT}{_PUNCT}")
#: Words that open a follow-up (那 not before 個 / 家 / 間 …: 那個市集 names an item listed, not a condition).
_HEAD = re.compile(
    rf"^(?:那如果是|如果是|那改成|那換成|改成|改為|改查|改問|換成|換到|那改|那換|那麼|換|改(?![天善變])|那(?![個家間場位]))(?:是)?{_PUNCT}")
#: What may close one: 呢 (and its spoken forms) or a softener.
_TAIL = re.compile(rf"(?:那邊|那裡)?(?:的)?(?:呢|咧|勒|好了|看看|才對|啦|吧|喔)?{_PUNCT}$")
_ASKING_TAIL = re.compile(rf"(?:呢|咧|勒){_PUNCT}$")
#: The longest condition words read between (a township, a date and a topic fit).
_MAX_MIDDLE = 16
#: The notes a clean search reading may carry: a plain 素食 (no diet named).
_CLEAN_NOTES = frozenset({Flag.GENERIC_DIET, Flag.OWN_DIET})


def _parts(text: str) -> tuple[str, bool] | None:
    """``(middle, correction)``: the words between the opening and the closing, or None when the
    message has neither an opening word nor a closing 呢."""
    correction = _CORRECTION.match(text)
    opening = correction or _HEAD.match(text)
    rest = text[opening.end():] if opening else text
    asked = bool(_ASKING_TAIL.search(rest))
    tail = _TAIL.search(rest)
    middle = rest[:tail.start()] if tail else rest
    if not (opening or asked):
        return None
    return middle.strip(), bool(correction)


def follow_up_words(form: str) -> str | None:
    """The words between a follow-up's opening and closing (``換成週日`` → ``週日``), or None when ``form``
    (a message's reading form) has neither: what a judge of the reading must find read."""
    parts = _parts(form)
    return parts[0] if parts is not None else None


def _only_townships(middle: str, townships: list[str]) -> bool:
    return len(townships) == 1 and not strip_townships(middle).strip(" 的")


def _from_reading(proposal: Proposal) -> FollowUp | None:
    """The conditions of a clean search reading of the words between, or None."""
    args = proposal.args
    if any(note not in _CLEAN_NOTES for note in proposal.notes) or args.get("vague"):
        return None  # something said beside the conditions, or a place word naming no township (那附近呢)
    kind = args.get("kind") if proposal.tool == "needs_area" else None
    if proposal.tool == "search_local_events" or kind == "events":
        return FollowUp(area=args.get("area"), date=args.get("date"), keyword=args.get("keyword"), kind="events")
    if proposal.tool == "search_local_places" or kind == "places":
        diet = None if Flag.GENERIC_DIET in proposal.notes else args.get("dietary_type")
        return FollowUp(area=args.get("area"), diet=diet, kind="places")
    return None


def follow_up_in(m: Message) -> FollowUp | None:
    """The follow-up or correction ``m`` is, or None (module docstring)."""
    parts = _parts(m.text)
    if parts is None:
        return None
    middle, correction = parts
    if not middle or len(middle) > _MAX_MIDDLE:
        return None
    townships = townships_in(middle)
    if _only_townships(middle, townships):
        return FollowUp(area=townships[0], correction=correction)
    reading = m.route(middle)
    found = _from_reading(reading) if reading.tool != FOLLOW_UP_TOOL else None
    if found is None:
        return None
    return replace(found, correction=correction)
