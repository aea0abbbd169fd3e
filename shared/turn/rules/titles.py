"""Named events: the words of a message that name one event of the events snapshot (鹿港龍舟賽 → 龍舟賽 of
鹿港慶端陽龍舟賽), read against the snapshot's titles given as an argument (``EventTitles``).

Pure: the titles come from the caller (the turn engine gives the current snapshot's; shared.turn.router
reads the demo snapshot's when none are given), never from a store or a context variable.
"""
from __future__ import annotations

import functools
import heapq
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from shared.text import reading_form
from shared.turn.dates import read_date
from shared.turn.rules.townships import strip_townships
from shared.turn.vocabulary import all_words
from shared.turn.vocabulary.events import EVENT_KINDS, EVENT_TOPICS, EVENT_WORDS
from shared.turn.vocabulary.places import NOT_PLACES, NOT_TOWNSHIP_TYPOS


@dataclass(frozen=True)
class EventTitles:
    """An events snapshot's titles as the router reads them.

    Attributes:
        reading: each title's reading form (shared.text), each once, in the snapshot's order.
        recorded: a reading form → the title as recorded (the first with that reading form); not
            part of equality (two snapshots with the same reading forms read alike).
    """

    reading: tuple[str, ...] = ()
    recorded: Mapping[str, str] = field(default_factory=dict, compare=False, hash=False)


@functools.lru_cache(maxsize=4)
def titles_of(titles: tuple[str, ...]) -> EventTitles:
    """``EventTitles`` of titles as recorded, once per snapshot's titles (a snapshot changes at most daily)."""
    recorded: dict[str, str] = {}
    for title in titles:
        recorded.setdefault(reading_form(title), title)
    return EventTitles(tuple(recorded), recorded)


@functools.cache
def demo_titles() -> EventTitles:
    """The demo events snapshot's titles (data/events-demo.json, parsed once per process), or none
    when the file cannot be read (the other rules still read the text)."""
    from shared.events.search import load_event_snapshot  # not on the webhook's import path until asked
    try:
        return titles_of(tuple(event.title for event in load_event_snapshot().events))
    except Exception:  # noqa: BLE001 - no demo file: no titles
        return EventTitles()


#: Letters that cannot be part of an event's title said before its kind (冬季蔬果市集 → 冬季蔬果; not 週末,
#: 有什麼, 彰化市).
NOT_TITLE = re.compile(r"[有的嗎呢哪什麼啥想要去找查問我你在是和跟或及與這那個些一都也還再請幫看帶辦週周禮拜星期月日號天年今明後昨晚早午]")
#: A title-like word and its kind: 2–6 Han characters that are no question word, then the kind, then
#: a question or the end (not 發展協會, 賽車場, 展開).
_KIND_PHRASE = re.compile(rf"(?P<phrase>[\u4e00-\u9fff]{{2,6}}?{EVENT_KINDS})"
                          r"(?=$|[^\u4e00-\u9fff]|幾|是|在|什|有|的|要|那|還|會|哪|怎|多|可|嗎|呢|時|門|好|開始|結束|誰|辦|從|到)")
#: The most places in a message at which one title's pieces are looked for: far more than a resident's
#: message names of one event, and what bounds ``event_named``'s work per title whatever the text.
TITLE_PLACES_MAX = 256
_HAN_PAIR = re.compile(r"[\u4e00-\u9fff]{2}")


def _as_titled(piece: str, title: str, titles: EventTitles) -> str:
    """``piece`` (reading form) spelt as the snapshot's own title spells it, where that can be told (the
    keyword is matched against the title as recorded)."""
    raw = titles.recorded.get(title, title)
    at = title.find(piece)
    return raw[at:at + len(piece)] if len(raw) == len(title) and at >= 0 else piece


def names_event_kind(t: str, titles: EventTitles) -> bool:
    """True when the event named in ``t`` is said with its kind (龍舟賽, 花卉市集, 巷弄文化散步), not a
    place alone (八卦山停得下嗎 asks about parking at the hill)."""
    named = event_named(t, titles)
    kinds = list(EVENT_WORDS) + [word for word, _ in EVENT_TOPICS]
    return named is not None and any(re.search(rf"{EVENT_KINDS}$", piece) or any(k in piece for k in kinds)
                                     for piece in named.split(" "))


@functools.cache
def _title_vocabulary() -> tuple[str, ...]:
    """The vocabulary taken out of a title's piece, longest first: words of two or more letters and the
    one-letter meal and diet words (店, 餐, 麵, 飯, 吃, 素)."""
    return tuple(word for word in sorted(all_words(), key=len, reverse=True)
                 if len(word) >= 2 or word in ("店", "餐", "麵", "飯", "吃", "素"))


@functools.lru_cache(maxsize=4096)
def _significant(piece: str) -> bool:
    """True when a piece of an event title is more than townships, date, vocabulary and question words.

    Cached: a piece is a substring of a title or a phrase of at most 7 characters, so the cache holds
    what the snapshot's titles can give, and a message that repeats one piece pays for it once."""
    rest = piece
    for word in _title_vocabulary():
        rest = rest.replace(word, "｜")
    for word in NOT_PLACES + NOT_TOWNSHIP_TYPOS:  # 社區, 附近: generic words, no event's name
        rest = rest.replace(word, "｜")
    parts = [part for part in re.split(r"[｜]+", NOT_TITLE.sub("｜", rest)) if len(part) >= 2]
    return bool(parts) and read_date(piece) is None


def _is_han(char: str) -> bool:
    return "\u4e00" <= char <= "\u9fff"


def _pairs(text: str) -> dict[str, list[int]]:
    """Every two-character stretch of ``text`` → where it starts, in order (one pass over the text)."""
    index: dict[str, list[int]] = {}
    for at, pair in enumerate(map(str.__add__, text, text[1:])):
        index.setdefault(pair, []).append(at)
    return index


@functools.lru_cache(maxsize=1024)
def _title_pairs(title: str) -> tuple[str, ...]:
    """The distinct pairs of Han characters in ``title`` (every piece of two or more starts with one)."""
    return tuple(dict.fromkeys(pair for pair in map(str.__add__, title, title[1:]) if _HAN_PAIR.fullmatch(pair)))


def _title_pieces_in(t: str, title: str, pairs: dict[str, list[int]],
                     titles: EventTitles) -> tuple[dict[str, None], int]:
    """The significant pieces of ``title`` that ``t`` says, in the order said, and their lengths summed
    over every time each is said (what ranks one title against another in ``event_named``).

    A piece is the longest stretch of Han characters of ``t`` that the title holds, read from the start:
    where one starts, the text after it is read next; where none does, the next character. Only the
    places where a pair of the title's characters starts are visited (``pairs``, the text's pairs), in
    order, at most ``TITLE_PLACES_MAX`` of them; a piece grows one character at a time while the title
    holds it. Cost: O(len(title)) to gather the places, then at most TITLE_PLACES_MAX visits, each at
    most len(title) checks of at most len(title) characters: nothing here grows with the text.
    """
    places = [pairs[pair] for pair in _title_pairs(title) if pair in pairs]
    pieces: dict[str, None] = {}
    size = at = 0
    for visited, start in enumerate(heapq.merge(*places)):
        if visited == TITLE_PLACES_MAX:
            break
        if start < at:
            continue  # inside the piece just read
        end = start + 2
        while end < len(t) and _is_han(t[end]) and t[start:end + 1] in title:
            end += 1
        said, at = t[start:end], end
        if _significant(said):  # 社區長輩健康操: vocabulary only, and no piece of it either
            piece = _as_titled(strip_townships(said) or said, title, titles)
            pieces.setdefault(piece)
            size += len(piece)
    return pieces, size


@functools.lru_cache(maxsize=16)
def event_named(t: str, titles: EventTitles) -> str | None:
    """The words of ``t`` that name one event: one of ``titles`` holds them (鹿港龍舟賽幾點開始 → 龍舟賽
    of 鹿港慶端陽龍舟賽; 田尾花卉市集 → 花卉市集), or they are an event kind with a title-like word
    before it (龍舟賽是哪一天 → 龍舟賽), or None.

    A title's piece counts when it is 2+ Han characters and more than township, date, vocabulary and
    question words (鹿港, 週末, 市集 alone name no event); at each position the longest piece of the title
    is taken, then the text after it is read. Several pieces of one title are joined by a space
    (every term must be in the title); the title whose pieces cover the most of the text wins (the
    first such title on a tie).

    Cost: one pass over the text to index its pairs of characters, then per title at most
    ``TITLE_PLACES_MAX`` places (``_title_pieces_in``), and one scan of ``_KIND_PHRASE``: linear in
    ``len(t)``; no stretch of the text is tried against every title. Cached per text and titles (the
    router asks up to four times per message).
    """
    best: dict[str, None] = {}
    best_size = 0
    pairs = _pairs(t)
    for title in titles.reading:
        pieces, size = _title_pieces_in(t, title, pairs, titles)
        if size > best_size:
            best, best_size = pieces, size
    if best:
        return " ".join(best)
    for found in _KIND_PHRASE.finditer(t):
        phrase = strip_townships(NOT_TITLE.split(found.group("phrase"))[-1])
        if len(phrase) >= 3 and _significant(phrase):
            return phrase
    return None


def in_a_title(word: str, titles: EventTitles) -> bool:
    """True when ``word`` (reading form) is part of one of ``titles``."""
    return any(word in title for title in titles.reading)
