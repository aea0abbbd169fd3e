"""One reading of a message, typed: what it asks (an ``Ask``) and what the reply must also say (its notes).

Both readers build these values: the offline router (shared.turn.router) from the text, and the
model's tool calls (shared.agent.calls) from checked arguments. The turn engine runs the ask and
shared.turn.wording says the notes, so a note means the same on both paths.

Strings stand for these values only at the three boundaries of the turn: postback data
(shared.replies.area_picker, shared.turn.pickers), the model's tool arguments (shared.agent.tools) and
the audit record (shared.audit, through ``encoded``). Dates are ``DateSpec`` values
(shared.turn.datespec) everywhere in between.

No LINE, store or clock here: plain values, cheap to import on the webhook's cold path.
"""
from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Literal, Union

from shared.turn.datespec import DateSpec

__all__ = [
    "Ask", "AskSearchKind", "Changed", "Crisis", "DetailKind", "DidYouMean", "DietCheck", "EventsSearch", "Flag",
    "FollowUp", "ItemDetail", "ItemRef", "Limit",
    "Limits", "Memory", "MemoryPropose", "NeedsArea", "Note", "NotRecorded", "OtherAreas", "OtherPlace",
    "PlacesSearch", "Privacy", "PrivacyTopic", "RequestDraft", "RequestHelp", "SecondAsk", "ShopByName", "SmallTalk",
    "TitleHint", "UnknownTownship", "Unasked", "Unreadable", "UnrecordedDiet", "UnrecordedKind", "notes_of",
    "words_of",
]


class Limit(StrEnum):
    """What LOCAL cannot do or has no data for; each is said with fixed words (shared.replies.menu.LIMIT_WORDS).

    A StrEnum: a value is its own stable name in the audit record and in tests of the router's tables.
    """

    CRISIS = "crisis"
    #: low mood, loneliness or pressure with no risk said: a gentle line offering 1925
    DISTRESS = "distress"
    EMERGENCY = "emergency"
    MEDICAL = "medical"
    APPOINTMENT = "no_appointment"
    TRANSPORT = "transport"
    PARKING = "parking"
    SHUTTLE = "shuttle"
    TAXI = "taxi"
    WEATHER = "weather"
    ELSEWHERE = "elsewhere"
    NO_DATA = "no_data"
    DIRECTORY = "directory"
    BOOKING = "no_booking"
    HOURS = "no_hours"
    PRICE = "no_price"
    EVENING = "evening"
    REGISTRATION = "no_registration"
    PETS = "no_pets"
    BRING = "no_bring"
    DISTANCE = "no_distance"
    #: a caller asking for money, a prize that needs a transfer, someone posing as an official: a scam warning
    FRAUD = "fraud"
    #: politics, elections or religion: LOCAL takes no side
    POLITICS = "politics"
    #: writing, chatting or general knowledge: not what LOCAL answers
    OFF_TOPIC = "off_topic"


class Flag(StrEnum):
    """A note with no parts: something the reply says, or must not offer, beside its answer."""

    #: a bare 彰化 beside another township read as 彰化市: the reply says so
    CHANGHUA_AS_CITY = "changhua_as_city"
    #: a plain 素食 that names no finer type: a remembered finer diet fills it
    GENERIC_DIET = "generic_diet"
    #: the diet said is someone else's (我媽媽吃全素): searched, never offered to remember
    DIET_OF_OTHER = "diet_of_other"
    #: the resident said not to remember (不用記): no 記住 button, and the reply says nothing is kept
    NOT_SAVED = "not_saved"
    #: a question about what is kept beside a search: the reply says what is kept
    PRIVACY_ASKED = "privacy_asked"
    #: a greeting said before the question: answered first
    GREETED = "greeted"
    #: a statement of one's own diet with no township (我吃全素): the picker offers to remember it
    OWN_DIET = "own_diet"


class DetailKind(StrEnum):
    """A detail a question asks about that LOCAL's data does not record (shared.turn.details)."""

    BRING = "bring"
    PAYMENT = "payment"
    PETS = "pets"
    AGE = "age"
    CROWD = "crowd"
    SEATING = "seating"
    ACCESS = "access"
    TOILET = "toilet"
    ORGANISER = "organiser"
    END_TIME = "end_time"
    SUITABILITY = "suitability"


#: Details only an event has (a shop has hours, not an end time, an age range or an organiser).
EVENT_ONLY_DETAILS = frozenset({DetailKind.END_TIME, DetailKind.AGE, DetailKind.SUITABILITY, DetailKind.ORGANISER,
                                DetailKind.BRING})


# -- the asks ---------------------------------------------------------------------------------------

@dataclass(frozen=True)
class EventsSearch:
    """Events in a township (None: every township), on a date (None: every date), on topics.

    Attributes:
        area: a township's full name (花壇鄉), or None for every township.
        date: the days asked, or None.
        keyword: the topic terms as the events search reads them (terms ANDed by a space, either of
            two by ``|``: ``市集|親子 長輩``), or None.
    """

    area: str | None = None
    date: DateSpec | None = None
    keyword: str | None = None


@dataclass(frozen=True)
class PlacesSearch:
    """Vegetarian places in a township (None: every township), with a diet (None: left open).

    Attributes:
        area: a township's full name, 全彰化, or None (every township, as a second ask's button).
        diet: a canonical diet (shared.diets: ``vegan`` …), or None.
    """

    area: str | None = None
    diet: str | None = None


@dataclass(frozen=True)
class NeedsArea:
    """A search asked with no township: the township picker, keeping what was said.

    Attributes:
        search: the search the picker's buttons run (its ``area`` is None).
        vague_words: the place words said that name no township (附近, 彰化), explained by the reply.
    """

    search: EventsSearch | PlacesSearch
    vague_words: tuple[str, ...] = ()


@dataclass(frozen=True)
class ShopByName:
    """A shop named by its catalog name or alias; ``area`` None when the reader cannot know it."""

    name: str
    area: str | None = None


@dataclass(frozen=True)
class RequestDraft:
    """A request for a person, in the resident's words (the 新需求 card)."""

    text: str


@dataclass(frozen=True)
class RequestHelp:
    """About the resident's requests: where they stand (``status``), how cancelling works
    (``cancel``), or how to leave one when a person is asked for (``person``)."""

    kind: Literal["status", "cancel", "person"]


@dataclass(frozen=True)
class Memory:
    """What LOCAL remembers of the resident's diet (``view``), or forget it (``forget``: the card's
    button; words alone delete nothing)."""

    kind: Literal["view", "forget"]


@dataclass(frozen=True)
class MemoryPropose:
    """Remember this diet (the consent card; nothing is stored until the resident consents)."""

    diet: str


class PrivacyTopic(StrEnum):
    """What a privacy question is about."""

    WHAT_IS_KEPT = "what_is_kept"
    FORGET_MY_DIET = "forget_my_diet"
    WHO_SEES_MY_DATA = "who_sees_my_data"


@dataclass(frozen=True)
class Privacy:
    """What LOCAL keeps about the resident, led by what the question asked."""

    topic: PrivacyTopic = PrivacyTopic.WHAT_IS_KEPT


@dataclass(frozen=True)
class Limits:
    """Only things LOCAL cannot do or has no data for (none: 「這個我沒有資料可以回答」)."""

    kinds: tuple[Limit, ...] = ()


@dataclass(frozen=True)
class Crisis:
    """Suicidal intent, self-harm or an emergency: the safety reply alone, before anything else."""

    kinds: tuple[Limit, ...] = (Limit.CRISIS,)


@dataclass(frozen=True)
class SmallTalk:
    """A greeting (or asking what LOCAL is), thanks, ok / 收到, or nothing LOCAL can answer (``help``:
    the menu)."""

    kind: Literal["greeting", "thanks", "ack", "help"]


@dataclass(frozen=True)
class DidYouMean:
    """A misspelt shop or township: 「你是說「和米素食」嗎？」 with buttons that ask again, spelt right.

    Attributes:
        name: the catalog's spelling.
        area: its township.
        text: the message with that spelling.
        choices: for a township typo, (township, message spelt with it) per near township.
        typed: the misspelt word, for a township typo.
    """

    name: str
    area: str
    text: str
    choices: tuple[tuple[str, str], ...] = ()
    typed: str | None = None


@dataclass(frozen=True)
class AskSearchKind:
    """A bare township follow-up (那鹿港呢): events or shops? ``no_data``: a subject LOCAL has no data on."""

    area: str
    no_data: bool = False


class ItemDetail(StrEnum):
    """What a question about one listed item asks (第三個在哪裡集合 → WHERE); its value names it in the audit."""

    #: 在哪, 地址, 集合地點: an event's meeting point, a shop's address
    WHERE = "where"
    #: 幾點, 什麼時候, 哪天: an event's day and start time, a shop's hours
    WHEN = "when"
    #: 幾點結束, 到幾點, 多久: an event's end time, a shop's hours
    END_TIME = "end_time"
    #: 電話, 聯絡: a shop's phone
    PHONE = "phone"
    #: 要錢嗎, 免費嗎, 多少錢
    PRICE = "price"
    #: 要報名嗎, 要預約嗎
    REGISTRATION = "registration"
    #: 那家有全素嗎: the diets a shop's record lists
    DIET = "diet"
    #: 那家有賣便當嗎, 這家可以內用嗎: anything else, which no record holds (ItemRef.asked says it)
    OTHER = "other"


@dataclass(frozen=True)
class ItemRef:
    """An item of the last answer's list, named by its place in it or by a word, and what is asked about it
    (第三個在哪裡集合, 第2家電話幾號, 最後一個要錢嗎, 剛剛那家在哪, 那個市集).

    Attributes:
        position: 1 for the first item shown, 2 for the second …; negative counts from the end (-1 最後一個,
            -2 倒數第二個); None when the item is named by a word or only pointed at (那家).
        name_word: the word that names it among the listed items (市集 of 那個市集), as said, or None. The
            resident's words: never in the audit record (``audited``).
        details: what is asked, in the order said; () asks for the item itself (its card).
        asked: for ``ItemDetail.OTHER``, the resident's words for it (有賣便當) when short and plain, else
            None. Reply text only: never in the audit record.
    """

    position: int | None = None
    name_word: str | None = None
    details: tuple[ItemDetail, ...] = ()
    asked: str | None = None

    def audited(self) -> dict[str, object]:
        """The reference as the audit record holds it: the position and the details, never the word said."""
        return {"position": self.position, "named": self.name_word is not None,
                "details": [detail.value for detail in self.details]}


@dataclass(frozen=True)
class Unreadable:
    """A message or a date that could not be read; ``why`` names it for the audit."""

    why: str


@dataclass(frozen=True)
class FollowUp:
    """A message that changes conditions of the last search and keeps the rest (那下禮拜呢, 換成溪湖, 那全素的呢),
    or corrects one (``correction``: 不是啦 我是說鹿港, 啊不對 是禮拜天). Only what it names is set; the turn
    merges it with the conversation state (shared.turn.follow_up.merge_follow_up).

    Attributes:
        area: a township's full name, or None (kept).
        date: the days now asked, or None (kept).
        diet: a canonical diet (``vegan`` …, ``any`` for 不限素別), or None (kept; a plain 素食 names no diet).
        keyword: the events topic terms now asked, or None (kept).
        kind: ``events`` or ``places`` when the message names or implies one (a date or topic: events; a
            diet or 店家: places), None when it names only a township (the last search's kind is kept).
        correction: the resident says the last reading was wrong (the reply opens with 好的, never a refusal).
    """

    area: str | None = None
    date: DateSpec | None = None
    diet: str | None = None
    keyword: str | None = None
    kind: Literal["events", "places"] | None = None
    correction: bool = False


#: Every kind of ask LOCAL answers.
Ask = Union[EventsSearch, PlacesSearch, NeedsArea, ShopByName, RequestDraft, RequestHelp, Memory, MemoryPropose,
            Privacy, Limits, Crisis, SmallTalk, DidYouMean, AskSearchKind, Unreadable, FollowUp, ItemRef]


# -- the notes said beside an ask -------------------------------------------------------------------

@dataclass(frozen=True)
class SecondAsk:
    """Another ask in the same message, never a filter of the first: named and offered as a button.

    ``ask`` of the other kind than the one answered (shops beside events) is said as 「你也問了…」;
    of the same kind (two events asks with their own conditions) as 「你問了兩件事…另一件：…」.
    """

    ask: EventsSearch | PlacesSearch


@dataclass(frozen=True)
class OtherAreas:
    """Townships asked about but not searched (one township is searched at a time)."""

    areas: tuple[str, ...]


@dataclass(frozen=True)
class OtherPlace:
    """Another shop named in the message, offered as a button."""

    name: str


@dataclass(frozen=True)
class UnknownTownship:
    """A place word that is no township of the county (鹿巷), as typed."""

    typed: str


@dataclass(frozen=True)
class UnrecordedKind:
    """A kind of eating place the catalog does not record (自助餐), as said."""

    word: str


@dataclass(frozen=True)
class UnrecordedDiet:
    """Finer diet conditions the catalog does not record, as said, in order (鍋邊素, 不吃蔥蒜)."""

    words: tuple[str, ...]


@dataclass(frozen=True)
class DietCheck:
    """A diet asked about named shops (哪間有全素): per shop, what the catalog lists."""

    diet: str


@dataclass(frozen=True)
class TitleHint:
    """Words that may be part of one event's title (冬季蔬果): they narrow the search when a title holds them."""

    words: str


@dataclass(frozen=True)
class NotRecorded:
    """A detail asked that the data does not record; ``who`` for a suitability question (老人家)."""

    kind: DetailKind
    who: str | None = None


@dataclass(frozen=True)
class Unasked:
    """Another question the reply does not answer, in the resident's words ("" when not short and plain)."""

    words: str = ""


@dataclass(frozen=True)
class Changed:
    """A follow-up or correction answered with the last search changed: the reply opens with one short
    line saying what changed and what was kept (「改查下禮拜，員林市的活動：」).

    Attributes:
        follow_up: what the message changed.
        search: the search that runs (the last one with the change made).
    """

    follow_up: FollowUp
    search: EventsSearch | PlacesSearch


#: What the reply must say besides its answer.
Note = Union[Limit, Flag, SecondAsk, OtherAreas, OtherPlace, UnknownTownship, UnrecordedKind, UnrecordedDiet,
             DietCheck, TitleHint, NotRecorded, Unasked, Changed]


def notes_of(notes: tuple[Note, ...], kind: type) -> list:
    """The notes of one kind, in order (``notes_of(p.notes, OtherPlace)``)."""
    return [note for note in notes if isinstance(note, kind)]


def words_of(note: Note) -> tuple[str, ...]:
    """The resident's own words a note holds (a title hint, an unrecorded kind or diet, a shop or place
    name, townships): the router takes them out before it looks for questions left unanswered."""
    if isinstance(note, TitleHint):
        return (note.words,)
    if isinstance(note, UnrecordedKind):
        return (note.word,)
    if isinstance(note, UnrecordedDiet):
        return note.words
    if isinstance(note, OtherPlace):
        return (note.name,)
    if isinstance(note, UnknownTownship):
        return (note.typed,)
    if isinstance(note, OtherAreas):
        return note.areas
    return ()

