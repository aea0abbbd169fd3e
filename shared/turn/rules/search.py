"""The search a message asks for once no fixed, limit or shop-name rule answered it: what it says
(``SearchReading``: townships, diet, date, topics, a named event), then ``OUTCOMES`` in order, the
first that answers: an unknown place, an events search, a booking or hours question with nothing to
search, a township with a subject LOCAL has no data on, a places search, limits only, no data, the
township picker, and what is left (a person, cancelling, thanks, a greeting, the menu)."""
from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from shared.areas import COUNTY, match_area, townships_in, vague_words_in
from shared.diets import NOT_ASKED_TO_REMEMBER, has_word, read_diet, unnegated
from shared.turn.ask import Flag, Limit, Note, OtherAreas, TitleHint, UnknownTownship, UnrecordedDiet, UnrecordedKind
from shared.turn.dates import read_date
from shared.turn.datespec import DateSpec
from shared.turn.proposal import Proposal
from shared.turn.rules.events import ASKER, GOER, event_topics, title_hint, without_goers
from shared.turn.rules.handoff import CANCEL, HANDOFF_INFO
from shared.turn.rules.places import (
    CHANGHUA_ALSO,
    CHANGHUA_BEFORE_TOWNSHIP,
    WHOLE_COUNTY_SAID,
    diet_of_other,
    is_generic_diet,
    unknown_place,
    unknown_subject,
)
from shared.turn.rules.privacy import NO_MEMORY, OWN_DIET_STATEMENT
from shared.turn.rules.titles import EventTitles, event_named
from shared.turn.rules.townships import strip_townships
from shared.turn.vocabulary.events import EVENT_WORDS
from shared.turn.vocabulary.places import NOT_FOOD_SHOPS, PLACE_WORDS, SHOP_KINDS
from shared.turn.vocabulary.talk import GREETINGS, MORE_THANKS, THANKS


@dataclass(frozen=True)
class SearchReading:
    """What a message says for a search.

    Attributes:
        text: the message (reading form).
        side: the limits said beside it (they stay notes of the search).
        townships: the townships said, in order (a bare 彰化 beside another one added as 彰化市).
        vague / said_vague: a place word that names no township (附近, 彰化), and those words.
        county_wide: the whole county said (彰化縣, 全彰化) and no township.
        diet / unrecorded: shared.diets.read_diet.
        date: the date said, or None.
        notes: the notes every outcome keeps (limits beside, unrecorded diet, not saved, diet notes).
        food: the text without shops that are no place to eat (便利商店, 飯店).
        place_cue: a diet or a shop or meal word said.
        event_word: an event word said, or an event named.
        topics: the event topics (keyword terms).
        named_event: the words naming one event, when they are not the topics.
    """

    text: str
    side: tuple[Limit, ...]
    townships: tuple[str, ...]
    vague: bool
    said_vague: tuple[str, ...]
    county_wide: bool
    diet: str | None
    unrecorded: str | None
    date: DateSpec | None
    notes: tuple[Note, ...]
    food: str
    place_cue: bool
    event_word: bool
    topics: tuple[str, ...]
    named_event: str | None

    @property
    def township(self) -> str | None:
        return self.townships[0] if self.townships else None

    @property
    def others(self) -> tuple[Note, ...]:
        """The ``OtherAreas`` note: townships asked about but not searched."""
        return (OtherAreas(self.townships[1:]),) if len(self.townships) > 1 else ()

    @property
    def keyword(self) -> str | None:
        return " ".join(self.topics) or None


def _diet_notes(t: str, diet: str | None, unrecorded: str | None) -> tuple[Note, ...]:
    """A finer diet not recorded, 不用記 (no 記住 button), a plain 素食 (a remembered finer type fills it)
    and someone else's diet (theirs: the user's memory does not fill it)."""
    notes: tuple[Note, ...] = ((UnrecordedDiet(tuple(unrecorded.split("、"))),) if unrecorded else ()) + \
        ((Flag.NOT_SAVED,) if NO_MEMORY.search(t) or NOT_ASKED_TO_REMEMBER.search(t) else ())
    if diet is None or diet == "any":
        return notes
    other = diet_of_other(t)
    return notes + ((Flag.GENERIC_DIET,) if is_generic_diet(t, diet, unrecorded) and not other else ()) + \
        ((Flag.DIET_OF_OTHER,) if other else ())


def _townships(t: str) -> tuple[list[str], tuple[Note, ...]]:
    """The townships said, with a bare 彰化 beside another one as 彰化市 (花壇 彰化 哪裡有全素: asked
    too, never dropped; the note ``Flag.CHANGHUA_AS_CITY``); not 彰化 said before a township (彰化花壇)."""
    townships = townships_in(t)
    if townships and "彰化市" not in townships and CHANGHUA_ALSO.search(strip_townships(t)) and \
            not CHANGHUA_BEFORE_TOWNSHIP.search(t):
        return townships + ["彰化市"], (Flag.CHANGHUA_AS_CITY,)
    return townships, ()


def _events_said(t: str, event_word: bool, place_cue: bool,
                 titles: EventTitles) -> tuple[bool, list[str], str | None]:
    """(an events ask, its topics, the named event when it is not the topics). Who asks or goes is no
    topic (阿公想去看龍舟, 想帶阿公去看市集: the boats, the market); a named event with no event word
    is an events ask (鹿港龍舟賽幾點開始), searched by its name when no topic is said."""
    asked = ASKER.sub("｜", unnegated(t)[0])
    topics = event_topics(without_goers(asked), with_diet=event_word)
    named_event = None if place_cue and not event_word else event_named(t, titles)
    party_free = event_topics(GOER.sub("｜", asked), with_diet=event_word)
    if party_free != topics and (party_free or named_event):
        topics = party_free
    if named_event and not event_word:
        return True, topics or [named_event], named_event if topics else None
    return event_word, topics, named_event


def read_search(t: str, side: tuple[Limit, ...], titles: EventTitles) -> SearchReading:
    """What ``t`` (reading form) says for a search, the limits ``side`` said beside it."""
    townships, changhua = _townships(t)
    vague = match_area(t).kind == "vague"
    diet, unrecorded = read_diet(t)
    food = NOT_FOOD_SHOPS.sub("｜", t)  # 便利商店, 飯店 (a hotel): not a place to eat
    place_cue = diet is not None or any(word in food for word in PLACE_WORDS)
    event_word, topics, named_event = _events_said(t, any(word in t for word in EVENT_WORDS), place_cue, titles)
    return SearchReading(
        text=t, side=side, townships=tuple(townships), vague=vague,
        said_vague=tuple(vague_words_in(t)) if vague else (),  # needs_area's vague_words: only these are explained
        county_wide=not townships_in(t) and (COUNTY in t or WHOLE_COUNTY_SAID.search(t) is not None),
        diet=diet, unrecorded=unrecorded, date=read_date(t),
        notes=side + _diet_notes(t, diet, unrecorded) + changhua,
        food=food, place_cue=place_cue, event_word=event_word, topics=tuple(topics), named_event=named_event)


def _unknown_place(s: SearchReading) -> Proposal | None:
    """鹿巷活動: say it was not recognised and offer the townships, not a county-wide list."""
    unknown = None if s.township or s.vague or s.county_wide else unknown_place(s.text)
    if not unknown:
        return None
    notes = s.notes + (UnknownTownship(unknown),)
    if s.event_word:
        return Proposal("needs_area", {"kind": "events", "vague": False, "date": s.date, "keyword": s.keyword},
                        notes=notes)
    return Proposal("needs_area", {"kind": "places", "dietary_type": s.diet, "vague": False}, notes=notes)


def _asks_events(s: SearchReading) -> bool:
    """An event word; or, with no shop or meal word, a topic, a date or 報名."""
    return s.event_word or (not s.place_cue and (bool(s.topics) or s.date is not None or Limit.REGISTRATION in s.side))


def _books_a_day(s: SearchReading) -> bool:
    """A booking whose only cue is its day (訂明天中午兩份肉圓): no event word, topic or 報名."""
    return Limit.BOOKING in s.side and not (s.event_word or s.topics or Limit.REGISTRATION in s.side)


def _events(s: SearchReading) -> Proposal | None:
    """An event word or a named event; or, with no shop or meal word, a topic, a date or 報名. A date that
    only says when something is to be booked (可以幫我訂明天中午兩份肉圓嗎) is no events ask."""
    if not _asks_events(s) or _books_a_day(s):
        return None
    notes = tuple(note for note in s.notes if note not in (Limit.HOURS, Flag.GENERIC_DIET, Flag.DIET_OF_OTHER))
    if s.township is None and s.vague and not s.county_wide:
        return Proposal("needs_area", {"kind": "events", "vague": True, "vague_words": list(s.said_vague),
                                       "date": s.date, "keyword": s.keyword}, notes=notes)
    hint = s.named_event or title_hint(s.text)
    return Proposal("search_local_events", {"area": s.township, "date": s.date, "keyword": s.keyword},
                    notes=notes + s.others + ((TitleHint(hint),) if hint else ()))


def _booking_only(s: SearchReading) -> Proposal | None:
    """現在哪裡有開著的爌肉飯？可以幫我預約…: a meal, no township or diet, and a booking or hours question."""
    if s.place_cue and s.township is None and s.diet is None and set(s.side) & {Limit.BOOKING, Limit.HOURS}:
        return Proposal("show_limits", {"kinds": list(s.side)})
    return None


def _no_data_in_township(s: SearchReading) -> Proposal | None:
    """鹿港天后宮幾點開, 花壇鄉長是誰: a township with a subject LOCAL has no data on, not a shop search."""
    if s.township is not None and not s.place_cue and unknown_subject(s.text):
        return Proposal("ask_search_kind", {"area": s.township, "no_data": True})
    return None


def _places(s: SearchReading) -> Proposal | None:
    """A diet, a shop or meal word, or a township: the places search, or the township picker (which may
    offer to remember a statement of one's own diet: 我吃全素)."""
    if not (s.place_cue or s.township is not None):
        return None
    if s.township is None:
        own = s.diet not in (None, "any") and OWN_DIET_STATEMENT.match(re.sub(r"\s+", "", s.text)) is not None
        return Proposal("needs_area", {"kind": "places", "dietary_type": s.diet, "vague": s.vague,
                                       **({"vague_words": list(s.said_vague)} if s.vague else {})},
                        notes=s.notes + ((Flag.OWN_DIET,) if own else ()))
    kind = next((word for word in SHOP_KINDS if word in s.food), None)
    return Proposal("search_local_places", {"area": s.township, "dietary_type": s.diet, "keyword": None},
                    notes=s.notes + s.others + ((UnrecordedKind(kind),) if kind else ()))


def _limits_only(s: SearchReading) -> Proposal | None:
    """Booking, hours, prices or registration with nothing to search."""
    return Proposal("show_limits", {"kinds": list(s.side)}) if s.side else None


def _vague(s: SearchReading) -> Proposal | None:
    """A vague place alone: no data on its subject (彰化縣長是誰), else the township picker."""
    if not s.vague:
        return None
    if unknown_subject(s.text):
        return Proposal("show_limits", {"kinds": [Limit.NO_DATA]})
    return Proposal("needs_area", {"kind": "places", "dietary_type": None, "vague": True,
                                   "vague_words": list(s.said_vague)})


def _rest(s: SearchReading) -> Proposal:
    """Asking for a person, how to cancel (要怎麼取消), thanks or a greeting inside other words, else the menu."""
    t = s.text
    if HANDOFF_INFO.search(t):
        return Proposal("handoff_info")
    if CANCEL.search(t):
        return Proposal("handoff_cancel_help")
    if any(has_word(t, word) for word in THANKS + MORE_THANKS):
        return Proposal("thanks")
    if any(has_word(t, word) for word in GREETINGS):
        return Proposal("greeting")
    return Proposal("show_local_help")


#: The outcomes of a search reading, in order: the first that answers is the proposal.
OUTCOMES: tuple[Callable[[SearchReading], Proposal | None], ...] = (
    _unknown_place, _events, _booking_only, _no_data_in_township, _places, _limits_only, _vague, _rest)


def search(t: str, side: tuple[Limit, ...], titles: EventTitles) -> Proposal:
    """The search (or fallback) ``t`` (reading form) asks for, with the limits ``side`` said beside it."""
    reading = read_search(t, side, titles)
    return next(proposal for outcome in OUTCOMES if (proposal := outcome(reading)) is not None)
