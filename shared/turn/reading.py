"""Does the offline router read a message completely? (``Reading``; docs/design.md §8, reader order.)

With ``LOCAL_READER=router_first`` the webhook answers inline a message the router reads completely and
queues only the rest for the model. A reading is complete when the router's proposal is a full ask and
nothing of the message is left unread. It is not complete (``Incomplete``) when:

- ``NOTHING_READ``: the proposal is the help menu (``show_local_help``): nothing was understood;
- ``SPELLING``: the router asks 「你是說…嗎」 (``did_you_mean``): it is not sure of a name;
- ``UNKNOWN_PLACE``: a place word that is no township (``UnknownTownship``);
- ``QUESTION_LEFT``: a question the reply does not answer (an ``Unasked`` note);
- ``UNREAD_WORDS``: content words no rule read are left once every word the router reads is taken
  out: the vocabulary (shared.turn.vocabulary.all_words), date and holiday words, shop names, the
  event named, the proposal's own arguments and notes' words, and the words that only carry a
  question or fill a sentence (shared.turn.details).

Crisis and emergency replies, and the scam warning, are always complete: they are never deferred (shared.routing).

Pure text in, a typed value out: no store, no clock, no LINE. Cost: one router reading (``route``),
then a few regular-expression passes and one left-to-right scan that takes the longest known word at
each position (one set lookup per distinct word length, a number fixed by the vocabulary): linear in
``len(text)``.
"""
from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum

from shared import diets
from shared.places.search import place_aliases, places_named_in
from shared.text import reading_form
from shared.turn.ask import Limit, Note, Unasked, UnknownTownship, words_of
from shared.turn.details import ANSWERED_WORDS, DETAIL_PATTERNS, FILLER_CHARS
from shared.turn.proposal import Proposal
from shared.turn.router import route
from shared.turn.rules import limits as limit_rules
from shared.turn.rules.events import ASKER, GOER
from shared.turn.rules.follow_ups import FOLLOW_UP_TOOL, follow_up_words
from shared.turn.rules.places import WHOLE_COUNTY_SAID
from shared.turn.rules.privacy import NO_MEMORY
from shared.turn.rules.titles import EventTitles, demo_titles, event_named, titles_of
from shared.turn.rules.townships import english_places
from shared.turn.vocabulary import all_words
from shared.turn.vocabulary.dates import (
    COLLOQUIAL,
    COMPUTED_HOLIDAYS,
    ENGLISH_DATES,
    FIXED_HOLIDAYS,
    HOLIDAY_ALIASES,
    LUNAR_EVE_WORDS,
    LUNAR_WORDS,
    UNREAD_HOLIDAYS,
)
from shared.turn.vocabulary.places import DIRECTORY, NOT_FOOD_SHOPS
from shared.turn.vocabulary.talk import ACK

__all__ = ["Incomplete", "Reading", "judge", "read", "unread_words"]

#: Content letters left unread from which a reading is not complete (one stray letter is noise).
UNREAD_MIN_LETTERS = 2


class Incomplete(StrEnum):
    """Why the router's reading of a message is not complete (the audit and the log name it)."""

    NOTHING_READ = "nothing_read"
    SPELLING = "spelling"
    UNKNOWN_PLACE = "unknown_place"
    QUESTION_LEFT = "question_left"
    UNREAD_WORDS = "unread_words"


@dataclass(frozen=True)
class Reading:
    """The router's reading of one message.

    Attributes:
        proposal: what the router proposes (shared.turn.router.route).
        why_incomplete: None when the reading is complete, else why not.
    """

    proposal: Proposal
    why_incomplete: Incomplete | None = None

    @property
    def complete(self) -> bool:
        """True when the router answers the whole message (the webhook answers it inline)."""
        return self.why_incomplete is None


#: Date words as said (the date reader's holidays, day words and Taiwanese day words), and the letters
#: that make up written and relative dates (12月25日, 下禮拜六, 初一): a date is read by the router.
_DATE_WORDS = tuple(word for word, _ in FIXED_HOLIDAYS + COMPUTED_HOLIDAYS + HOLIDAY_ALIASES) + UNREAD_HOLIDAYS \
    + LUNAR_EVE_WORDS + LUNAR_WORDS
#: Phrases the rules read by pattern (food conditions, limits, who asks or goes, the whole county, 不用記,
#: named details, English and Taiwanese date words, named days and the lunar calendar).
_READ_PATTERNS: tuple[re.Pattern[str], ...] = (
    diets.NO_EGG, diets.NO_PUNGENT, diets.NO_DAIRY, diets.OTHER_FOOD, diets.NOT_ASKED_TO_REMEMBER,
    limit_rules.PARKING, limit_rules.TRAVEL, limit_rules.BRING, limit_rules.DISTANCE, limit_rules.APPOINTMENT,
    limit_rules.EVENING, DIRECTORY, NOT_FOOD_SHOPS, ASKER, GOER, WHOLE_COUNTY_SAID, NO_MEMORY, *DETAIL_PATTERNS,
    *(re.compile(rf"(?<![a-z])(?:{pattern})(?![a-z])") for pattern, _ in ENGLISH_DATES),
    *(re.compile(pattern) for pattern, _ in COLLOQUIAL),
    re.compile(r"[\u4e00-\u9fff]{1,3}(?:紀念日|紀念|節)|農曆|舊曆|陰曆|古曆|[正臘腊]月|啥物|有無|[無喔]$"),
)
#: English words that only carry a question or name what the vocabulary names in Chinese.
_ENGLISH_FILLER = re.compile(r"(?<![a-z])(?:any|some|the|in|on|at|of|for|near|is|are|there|what|which|where|when|"
                             r"how|do|does|you|have|has|food|foods|restaurants?|places?|shops?|events?|activities|"
                             r"activity|things?|to|township|city|town|happy|please|can|i|me|find)(?![a-z])")
#: Whole-message intents the rules read by their own patterns (a request's status, how to cancel or leave
#: one, what LOCAL keeps, ok / 不用記, an item of the last list, which shared.turn.rules.items takes only when the message holds nothing but
#: the pointer, fillers and questions about the item): their reply answers the message.
_WHOLE_INTENTS = frozenset({"handoff_status", "handoff_cancel_help", "handoff_info", "privacy_info", "ack",
                            "item_detail"})
_DATE_LETTERS = re.compile(r"[\d〇零一二兩三四五六七八九十廿卅百月日號号年週周禮拜礼星期末今明後昨前天晚早午夜初底旬上下這这本個个次]")
#: Left after the words are taken out: separators, punctuation, digits and Latin letters shorter than a word.
_NOISE = re.compile(r"[\s\W_]+|(?<![a-z])[a-z]{1,2}(?![a-z])")
_CONTENT = re.compile(r"[\u4e00-\u9fff]|[a-z]{3,}")


@functools.cache
def _lexicon() -> frozenset[str]:
    """Every word the router reads and every date word, in reading form (built once per process)."""
    return frozenset(reading_form(word) for word in all_words() + _DATE_WORDS + ACK if word)


@functools.cache
def _lengths(known: frozenset[str]) -> frozenset[int]:
    """The distinct lengths of the words of ``known`` (the lexicon: computed once)."""
    return frozenset(len(word) for word in known)


def _proposal_words(proposal: Proposal) -> set[str]:
    """The words a proposal holds: its string arguments (township, keyword terms, a shop's name, vague
    words) and its notes' words (shared.turn.ask.words_of)."""
    words: set[str] = set()
    for value in proposal.args.values():
        values = value if isinstance(value, (list, tuple)) else [value]
        for item in values:
            if isinstance(item, str):
                words.update(part for part in re.split(r"[|\s,、/]+", reading_form(item)) if part)
    for note in proposal.notes:
        words.update(reading_form(word) for word in words_of(note) if word)
    return words


def _take_words(text: str, known: frozenset[str], extra: set[str]) -> str:
    """``text`` with every known word replaced by ``｜``: at each position the longest word of
    ``known`` or ``extra``. Linear in ``len(text)``: per position one lookup per distinct word length."""
    lengths = sorted(_lengths(known) | {len(word) for word in extra}, reverse=True)
    out: list[str] = []
    i = 0
    while i < len(text):
        size = next((n for n in lengths if i + n <= len(text) and (text[i:i + n] in known or text[i:i + n] in extra)),
                    0)
        if size:
            out.append("｜")
            i += size
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def unread_words(form: str, proposal: Proposal, titles: EventTitles) -> str:
    """The letters of ``form`` (a message's reading form) that no word the router reads covers, in
    order ("" when the router read it all).

    Args:
        form: the message in reading form (shared.text.reading_form, English township names in Chinese).
        proposal: the router's proposal for it (its words count as read).
        titles: the events snapshot's titles the router read against.
    """
    extra = _proposal_words(proposal)
    for place in places_named_in(form):
        extra.update(place_aliases(place["name"]))
    named = event_named(form, titles)
    if named:
        extra.update(named.split(" "))
    for pattern in _READ_PATTERNS:
        form = pattern.sub("｜", form)
    form = _ENGLISH_FILLER.sub("｜", form)
    rest = _take_words(form, _lexicon(), extra)
    rest = ANSWERED_WORDS.sub("｜", rest)
    rest = _DATE_LETTERS.sub("｜", rest)
    rest = FILLER_CHARS.sub("｜", rest)
    rest = _NOISE.sub("", rest.replace("｜", " "))
    return "".join(_CONTENT.findall(rest))


#: Limits answered at once whatever else the message says: the safety reply, and the scam warning
#: (165 反詐騙專線), which no other reading of the words may delay behind a queued model turn.
_AT_ONCE = frozenset({Limit.CRISIS, Limit.DISTRESS, Limit.EMERGENCY, Limit.FRAUD})


def _safety(proposal: Proposal) -> bool:
    kinds = proposal.args.get("kinds") or () if proposal.tool == "show_limits" else ()
    return bool(_AT_ONCE & set(kinds))


def _note_gap(notes: tuple[Note, ...]) -> Incomplete | None:
    if any(isinstance(note, UnknownTownship) for note in notes):
        return Incomplete.UNKNOWN_PLACE
    if any(isinstance(note, Unasked) for note in notes):
        return Incomplete.QUESTION_LEFT
    return None


def judge(text: str, proposal: Proposal, titles: Iterable[str] | None = None) -> Reading:
    """Whether ``proposal`` (the router's, for ``text`` as typed) reads the message completely.

    Args:
        text: the message as typed (never logged or stored).
        proposal: shared.turn.router.route's proposal for it.
        titles: the events snapshot's titles the router read against, as recorded (None: the demo's).
    Returns:
        The Reading (see the module docstring for what is not complete).
    """
    if _safety(proposal) or proposal.tool in _WHOLE_INTENTS:
        return Reading(proposal)
    if proposal.tool == FOLLOW_UP_TOOL:
        return _follow_up_reading(text, proposal, titles)
    if proposal.tool == "show_local_help":
        return Reading(proposal, Incomplete.NOTHING_READ)
    if proposal.tool == "did_you_mean":
        return Reading(proposal, Incomplete.SPELLING)
    gap = _note_gap(proposal.notes)
    if gap is not None:
        return Reading(proposal, gap)
    event_titles = demo_titles() if titles is None else titles_of(tuple(titles))
    if len(unread_words(english_places(reading_form(text)), proposal, event_titles)) >= UNREAD_MIN_LETTERS:
        return Reading(proposal, Incomplete.UNREAD_WORDS)
    return Reading(proposal)


def _follow_up_reading(text: str, proposal: Proposal, titles: Iterable[str] | None) -> Reading:
    """A follow-up or correction is read completely when the words between its opening and closing are
    (換成週日 → 週日; 笑死 那下禮拜呢 → 笑死 那下禮拜 is not): its marker words are the follow-up rule's own."""
    middle = follow_up_words(english_places(reading_form(text)))
    said = None if titles is None else tuple(titles)
    if not middle:
        return Reading(proposal)
    inner = route(middle, said)
    if inner.tool == FOLLOW_UP_TOOL:
        return Reading(proposal)
    return Reading(proposal, judge(middle, inner, said).why_incomplete)


def read(text: str, titles: Iterable[str] | None = None) -> Reading:
    """The router's reading of ``text`` and whether it is complete.

    Args:
        text: the message as typed (never logged or stored).
        titles: the current events snapshot's titles (None: the demo snapshot's), as for ``route``.
    """
    said = None if titles is None else tuple(titles)
    return judge(text, route(text, said), said)
