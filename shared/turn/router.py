"""The offline router: reads a resident's free text with fixed rules, deterministically and without a
model. It is the embedded default and the model's fallback. It only proposes; it never writes.

Public surface: ``route(text) -> Proposal(tool, args, notes)``; the turn engine executes it.
Text is read in its reading form (shared.turn.text: NFKC width, OpenCC Simplified → Traditional,
case-folded Latin). Dates come from shared.turn.dates, townships from shared.areas, diet words
from shared.diets; the rest of the vocabulary below is LOCAL's own.

Rules, in order (issue 9; DESIGN §5, §7; newcomer trial 1):
0. suicidal intent, self-harm or despair in any phrasing (shared.turn.crisis: 想去死, 不想再撐了,
   自我了斷 …) or an emergency (跌倒了起不來) → ``show_limits`` (``crisis`` / ``emergency``) before anything;
1. a greeting or thanks and nothing else → ``greeting`` / ``thanks``; ok / 收到 → ``ack``; what LOCAL
   is or can do (你們是誰) → ``greeting``;
2. a question about the user's request (服務單進度, 我的服務單) → ``handoff_status``; how to cancel
   one → ``handoff_cancel_help``; what LOCAL keeps about the user (我的資料, 忘記我) → ``privacy_info``;
   asking to forget the remembered diet in words (以後不用記了，刪掉; 把我吃奶素的紀錄忘掉) → ``privacy_info``
   with the note ``forget`` (the reply leads with the 忘記我的飲食偏好 button; words alone delete nothing);
   status may name the request by its subject (剛剛那個水溝蓋的 處理了沒); a privacy or no-memory remark beside a
   search (但不要存我的資料喔 彰化市有嗎) keeps the search, with the note ``not_saved`` / ``privacy_asked`` (trial 5);
3. health, transport, parking (停車, 車子要停哪裡, 好停嗎), shuttles and weather → ``show_limits`` (never a search); a place
   outside Changhua County (台中) → ``show_limits`` (``elsewhere``); but an event, shop or diet ask in
   another clause (鹿港有素食店嗎？那邊停車方便嗎) is routed on its own, with the limits as notes (trial 3 finding 6);
   a complaint about 記住 (我又沒說要你記住) → ``ack`` with the note ``not_saved`` (trial 3 finding 9);
4. a shop named by its catalog name or alias (John手作蔬食, 和米) → ``find_place`` (an events ask in another
   clause is the note ``also_events``; a limit beside it, 叫計程車到和米素食, is a note too: trial 4); with a diet asked
   (哪間有全素) the note ``diet_check:<type>`` makes the reply say, per named shop, what the catalog lists;
   a shop name with a typo (合米素食, jonh手作; shared.places.search.place_close_to, difflib) → ``did_you_mean``
   (「你是說「和米素食」嗎？」 with a button that sends the message again, spelt as the catalog does); so is a
   misspelt township where a place is clearly meant (溪胡還是員林, 溪胡鎮: township_typo; ``choices`` per township;
   trial 5 finding 13);
5. a government office, school or other body, or a phone number / address / website with no shop,
   diet or event word (彰化縣政府電話幾號) → ``show_limits`` (``directory``);
6. an events ask and a shop ask in one message (週末彰化市有活動嗎？順便推薦附近的素食店) → the first
   ask is searched on its own words, the second is a note (``also_places:<township>/<type>`` or
   ``also_events:<township>/<date>``) the reply offers as a button: it never filters the first; two questions
   with only a space between (员林有没有纯素的店 周末有活动吗) are two asks too (trial 5 finding 6); two asks of
   one kind, each with conditions of its own (聖誕節員林有活動嗎？還有12/5到12/7全彰化的市集), are never merged:
   the first is searched, each later one is the note ``second_events:<query>`` / ``second_places:<query>``
   the reply names and offers as a button (trial 8 F3);
7. an event word, an event topic, kind or title word (市集, 長輩, 講座, 音樂表演, 展覽, 老街散步) or a date without a diet or
   place word → ``search_local_events`` (keyword = the topics, AND; two joined by 跟 / 或 are either: ``市集|親子``;
   an unread date → ``unreadable``);
   who asks (阿嬤想問, 我媽要我問) is not a topic;
   a named event (event_named: a piece of a title of the current events snapshot, 鹿港龍舟賽 → 龍舟賽, or an event
   kind after a title-like word, 燈籠展) is an events ask too, said with a limit in one clause (鹿港龍舟賽那邊好停車嗎)
   as well; never a shop hours question, an unknown subject or a township typo beside a real township (trial 7 F1);
8. a diet word, a place word or a township → ``search_local_places``; 全彰化 (整個彰化 …) → every township
   (area ``全彰化``); no township → ``needs_area``;
9. booking, opening hours, prices or registration with nothing to search → ``show_limits``;
   A township in a bare follow-up (那鹿港呢) → ``ask_search_kind`` (events or shops? the router keeps no state;
   the engine's buttons keep the conditions of the resident's last search: shared.turn.follow_up, trial 8 M1);
10. asking for a person without the 新需求 form (我想留言給你們, 我要找人幫忙) → ``handoff_info``; thanks or
   a greeting inside other words → ``thanks`` / ``greeting``; anything else → ``show_local_help``.
Notes carry what the reply must also say: a limit asked beside a search (``no_booking``,
``no_hours``, ``no_price``, ``no_registration``, ``no_pets``, ``no_bring``, ``no_distance``; and the hard
limits ``parking``, ``transport``, ``medical``, ``shuttle``, ``weather``, ``taxi`` when another clause is a
search), a kind of restaurant not recorded (``unrecorded_kind:自助餐``), a title hint for the events
search (``title:冬季蔬果``), a bare 彰化 read as 彰化市 (``changhua_as_city``), 不用記 (``not_saved``), a finer diet the catalog does not record
(``unrecorded_diet:五辛素``), townships asked about but not searched (``other_areas:彰化市``), other
shops named (``other_places:<name>``), a plain 素食 that names no finer type (``generic_diet``: a
remembered 全素 fills it) and a diet that is someone else's (``diet_of_other``: 我媽媽吃全素; never
offered as the user's memory).
Last, ``route`` reads the questions the proposal does not answer (shared.turn.details; trial 5): a detail
the data does not hold (要帶水嗎, 可以刷卡嗎, 狗可以去嗎) → ``detail:<kind>``; any other question clause beside a
search → ``unasked:<words>``; a suitability question (老人家可以去嗎) is no 長輩 filter; 掛號 → ``no_appointment``.
"""
from __future__ import annotations

import contextlib
import contextvars
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from shared import diets
from shared.areas import COUNTY, TOWNSHIPS, WHOLE_COUNTY, match_area, townships_in, vague_words_in
from shared.diets import (
    DIET_WORDS,
    NO_DAIRY,
    NO_EGG,
    NO_PUNGENT,
    NOT_ASKED_TO_REMEMBER,
    OTHER_FOOD,
    has_word,
    unnegated,
)
from shared.handoff.drafts import request_text_of
from shared.places.search import place_aliases, place_close_to, places_named_in
from shared.turn.crisis import is_crisis
from shared.turn.dates import read_date
from shared.turn.datespec import DateSpec, Unreadable, date_arg, encoded
from shared.turn.details import read_details, suitability_people
from shared.turn.rules import titles as titles_module
from shared.turn.rules.clauses import ASK_BREAK, LIMIT_CLAUSE_BREAK, clauses_read
from shared.turn.rules.events import ASKER, GOER, event_topics, without_goers
from shared.turn.rules.handoff import (
    CANCEL,
    CANCEL_ANY,
    CANCEL_REQUEST,
    HANDOFF_INFO,
    NOT_CANCEL,
    PERSON_ASK,
    STATUS,
    STATUS_BY_SUBJECT,
)
from shared.turn.rules.limits import APPOINTMENT, BRING, DISTANCE, EVENING, PARKING, TRAVEL
from shared.turn.rules.places import (
    CHANGHUA_ALSO,
    CHANGHUA_BEFORE_TOWNSHIP,
    FOLLOW_UP,
    PLACE_JOIN,
    WHOLE_COUNTY_SAID,
    diet_of_other,
    is_generic_diet,
    one_apart,
    unknown_place,
    unknown_subject,
    without_names,
)
from shared.turn.rules.privacy import FORGET, FORGET_EXCEPT, NO_MEMORY, OWN_DIET_STATEMENT, PRIVACY, QUESTION, SHARING
from shared.turn.rules.talk import ABOUT, GREETING_FIRST, ack_only, only_small_talk
from shared.turn.rules.titles import NOT_TITLE, EventTitles, demo_titles, in_a_title, names_event_kind, titles_of
from shared.turn.rules.townships import english_places, short_name, strip_townships
from shared.turn.text import reading_form
from shared.turn.vocabulary import all_words
from shared.turn.vocabulary.events import EVENT_TOPICS, EVENT_WORDS
from shared.turn.vocabulary.events import SUITABILITY_TOPICS as _SUIT_TOPIC
from shared.turn.vocabulary.limits import LIMITS, SIDE_LIMITS
from shared.turn.vocabulary.places import DIRECTORY as _DIRECTORY
from shared.turn.vocabulary.places import ELSEWHERE as _ELSEWHERE
from shared.turn.vocabulary.places import NOT_FOOD_SHOPS as _NOT_FOOD_SHOPS
from shared.turn.vocabulary.places import NOT_PLACES as _NOT_PLACES
from shared.turn.vocabulary.places import NOT_TOWNSHIP_TYPOS as _NOT_TOWNSHIP_TYPOS
from shared.turn.vocabulary.places import PLACE_WORDS
from shared.turn.vocabulary.places import SHOP_KINDS as _SHOP_KINDS
from shared.turn.vocabulary.talk import GREETINGS as _GREETINGS
from shared.turn.vocabulary.talk import MORE_THANKS as _MORE_THANKS
from shared.turn.vocabulary.talk import THANKS as _THANKS

__all__ = ["DIET_WORDS", "EVENT_WORDS", "PLACE_WORDS", "Proposal", "date_in", "diet_in",
           "is_emergency", "read_diet", "route"]


@dataclass(frozen=True)
class Proposal:
    """A proposed action: one read-only tool call, or a fixed reply.

    Attributes:
        tool: ``search_local_places``, ``search_local_events``, ``needs_area``, ``find_place``,
            ``show_limits``, ``handoff_status``, ``handoff_cancel_help``, ``handoff_info``,
            ``privacy_info``, ``greeting``, ``thanks``, ``ack``, ``ask_search_kind``, ``did_you_mean`` or
            ``show_local_help``.
        args: the tool's arguments (strings, lists or None). ``needs_area`` carries ``kind`` and
            ``vague`` (True when the user said 附近 / 彰化 / 彰化縣: the reply explains why a township is
            needed, naming only the words said, ``vague_words`` from ``shared.areas.vague_words_in``);
            ``show_limits`` carries ``kinds``; ``find_place`` carries ``name`` and ``area``;
            ``did_you_mean`` carries ``name``, ``area`` and ``text`` (the message with the catalog's spelling).
        source: ``offline_router``, ``postback``, ``fixed`` or ``model``.
        notes: what the reply must say besides the result (see the module docstring).
    """

    tool: str
    args: dict[str, Any] = field(default_factory=dict)
    source: str = "offline_router"
    notes: tuple[str, ...] = ()


def read_diet(text: str) -> tuple[str | None, str | None]:
    """shared.diets.read_diet on the reading form of ``text`` (a message as typed)."""
    return diets.read_diet(reading_form(text))


def diet_in(text: str) -> str | None:
    """shared.diets.diet_in on the reading form of ``text`` (a message as typed)."""
    return diets.diet_in(reading_form(text))


def date_in(text: str) -> DateSpec | None:
    """The date a message asks about (shared.turn.dates.read_date on its reading form)."""
    return read_date(reading_form(text))


def is_emergency(text: str) -> bool:
    """True when ``text`` (reading form) tells of an emergency (跌倒了起不來, 呼吸困難, 叫救護車): rule 0,
    answered with 119 before anything else, and never left to the model (shared.routing)."""
    return bool(_limits(text, LIMITS[:1]))


def _limits(text: str, table: tuple[tuple[str, tuple[str, ...]], ...]) -> list[str]:
    found = [kind for kind, words in table if any(has_word(text, word) for word in words)]
    if table is SIDE_LIMITS:
        found += (["no_bring"] if BRING.search(text) else []) + (["no_distance"] if DISTANCE.search(text) else [])
        found += ["evening"] if EVENING.search(text) else []
    return found


def route(text: str) -> Proposal:
    """Propose one action for a free-text message.

    Args:
        text: the user's message as typed (any width or script); not stored or logged.
    Returns:
        A Proposal (see the module docstring for the rules); the caller validates and runs it.
        A greeting before a question (早上好 今天有什麼活動) adds the note ``greeted`` to the answer. A
        question about a detail the data does not hold (要帶水嗎, 可以刷卡嗎) adds ``detail:<kind>`` /
        ``unasked:<words>`` notes (shared.turn.details; trial 5).
    Named events are read against the titles given by ``event_titles`` (the turn engine gives the
    current snapshot's), else the demo snapshot's.
    """
    t = english_places(reading_form(text))
    proposal = _every_township(t, _with_details(t, _route(text)))
    if proposal.tool in _SEARCH_TOOLS and GREETING_FIRST.match(t):
        return Proposal(proposal.tool, proposal.args, proposal.source, proposal.notes + ("greeted",))
    return proposal


def _every_township(t: str, proposal: Proposal) -> Proposal:
    """A shop ask for the whole county (全彰化有全素的店嗎, 整個彰化哪裡有素食) → the places search in every
    township (area 全彰化), never the township picker; a bare 彰化 or 彰化縣 still asks which township."""
    if proposal.tool != "needs_area" or proposal.args.get("kind") == "events" or not WHOLE_COUNTY_SAID.search(t):
        return proposal
    return Proposal("search_local_places", {"area": WHOLE_COUNTY, "dietary_type": proposal.args.get("dietary_type"),
                                            "keyword": None}, proposal.source,
                    tuple(note for note in proposal.notes if note != "own_diet"))


@contextlib.contextmanager
def event_titles(titles: tuple[str, ...] | None) -> Iterator[None]:
    """Route with these event titles (the current events snapshot's): ``with event_titles(t): route(text)``.
    None keeps the demo snapshot's. The router sees titles and text only, never a stored value."""
    token = _TITLES.set(titles_of(tuple(titles))) if titles is not None else None
    try:
        yield
    finally:
        if token is not None:
            _TITLES.reset(token)


#: The event titles the router reads named events with (event_titles).
_TITLES: contextvars.ContextVar[EventTitles | None] = contextvars.ContextVar("event_titles", default=None)


def _titles() -> EventTitles:
    titles = _TITLES.get()
    return demo_titles() if titles is None else titles


def event_named(t: str) -> str | None:
    """shared.turn.rules.titles.event_named with the titles routed with."""
    return titles_module.event_named(t, _titles())


def _names_event_kind(t: str) -> bool:
    return names_event_kind(t, _titles())


def _route(text: str) -> Proposal:
    """route without the greeting note and the unanswered details (see route)."""
    t = english_places(reading_form(text))
    if not t:
        return Proposal("show_local_help")
    urgent = (["crisis"] if is_crisis(t) else []) + _limits(t, LIMITS[:1])
    if urgent:  # 我想自殺 / 我跌倒了起不來: a safety reply before anything else (issue 9 follow-up item 1)
        return Proposal("show_limits", {"kinds": urgent})
    if only_small_talk(t, _THANKS):
        return Proposal("thanks")
    if only_small_talk(t, _GREETINGS + _THANKS):
        return Proposal("greeting")
    if FORGET.search(t) and not FORGET_EXCEPT.search(t):
        return Proposal("privacy_info", notes=("forget",))  # 以後不用記了，刪掉 / 把我吃奶素的紀錄忘掉
    if NOT_ASKED_TO_REMEMBER.search(t) and not townships_in(t) and read_date(t) is None:
        return Proposal("ack", notes=("not_saved",))  # 我又沒說要你記住: nothing is kept without 同意記住
    if NO_MEMORY.search(t) and not townships_in(t) and not ack_only(t):
        beside = _search_beside_privacy(t)
        if beside is not None:  # 我吃奶素 不用記 john有嗎: the shop, and nothing is kept
            return beside
    if ack_only(t) or (NO_MEMORY.search(t) and not townships_in(t)):
        return Proposal("ack", notes=("not_saved",) if NO_MEMORY.search(t) else ())
    if ABOUT.search(t):
        return Proposal("greeting")
    if request_text_of(t) is not None:
        # 幫我建立服務單：路燈壞了, 我要建單: a request to create one, never a status question (trial 7, F6);
        # the request hook makes its card first, so this answers only where no hook ran (the 新需求 form).
        return Proposal("handoff_info")
    by_subject = STATUS_BY_SUBJECT.search(t) is not None and not any(word in t for word in EVENT_WORDS) \
        and not any(word in t for word in PLACE_WORDS) and not places_named_in(t)  # not 上次那個市集辦了沒
    if STATUS.search(t) or by_subject or CANCEL_REQUEST.search(t) or re.fullmatch(r"(?:我要|我想|幫我)?(?:取消|撤銷|撤回|撤掉)", t):
        cancel = CANCEL_ANY.search(t) and not NOT_CANCEL.search(t)
        return Proposal("handoff_cancel_help" if cancel else "handoff_status")
    if SHARING.search(t):
        return Proposal("privacy_info", notes=("sharing",))  # 會不會把我的電話跟資料給別人
    if PRIVACY.search(t):
        beside = _search_beside_privacy(t)
        if beside is not None:  # 我吃奶素 但不要存我的資料喔 彰化市有嗎: the search, and nothing is kept
            return beside
        return Proposal("privacy_info")
    hard = _hard_limits(t)
    if hard == ["weather"] and event_topics(t, with_diet=False):
        hard = []  # 下雨天有室內活動嗎: an events question; the weather is said beside it
        weather_note: tuple[str, ...] = ("weather",)
    else:
        weather_note = ()
    if hard:
        shops = places_named_in(t)
        if shops and not set(hard) & {"medical", "emergency"}:  # 叫一台計程車到和米素食: the limit, and the shop's card
            return Proposal("find_place", {"name": shops[0]["name"], "area": shops[0]["area"]},
                            notes=tuple(hard + _limits(t, SIDE_LIMITS)))
        beside = _ask_beside_limits(t)
        if beside is None and _names_event_kind(t) and not set(hard) & {"medical", "emergency"} \
                and diets.read_diet(t)[0] in (None, "any"):
            beside = _search(t, tuple(_limits(t, SIDE_LIMITS)))  # 鹿港龍舟賽那邊好停車嗎: the event, and parking
            beside = beside if beside.tool in _SEARCH_TOOLS else None
        if beside is not None:  # 鹿港有素食店嗎？那邊停車方便嗎: the shops, and the parking limit
            dropped = ("no_hours",) if beside.tool == "search_local_events" else ()  # 幾點開始: the card says it
            return Proposal(beside.tool, beside.args, beside.source,
                            beside.notes + tuple(kind for kind in hard + _limits(t, SIDE_LIMITS)
                                                 if kind not in beside.notes and kind not in dropped))
        return Proposal("show_limits", {"kinds": hard + _limits(t, SIDE_LIMITS)})
    side = tuple(_limits(t, SIDE_LIMITS)) + weather_note
    if any(word in t for word in _ELSEWHERE) and not townships_in(t):
        return Proposal("show_limits", {"kinds": ["elsewhere"]})
    named = places_named_in(t)
    if named:
        first = named[0]
        others = tuple(f"other_places:{place['name']}" for place in named[1:])
        if "no_hours" not in side and re.search(r"幾點|時間|休息|開嗎|有開", t):
            side += ("no_hours",)
        asked_diet = diets.read_diet(without_names(t, named))[0]
        check: tuple[str, ...] = (f"diet_check:{asked_diet}",) if asked_diet not in (None, "any") else ()
        # the diet said beside a shop name is offered to remember like a search's (trial 5 minor), unless
        # it is someone else's or the user said not to remember
        check += (("diet_of_other",) if check and diet_of_other(t) else ()) + \
            (("not_saved",) if NO_MEMORY.search(t) or NOT_ASKED_TO_REMEMBER.search(t) else ())
        return Proposal("find_place", {"name": first["name"], "area": first["area"]},
                        notes=side + check + others + _events_beside_shop(t, named))
    close = place_close_to(t)
    if close is not None and townships_in(t) and close["area"] not in townships_in(t):
        close = None  # 有糙米素食嗎 彰化市: a shop of another township is not what was meant
    if close is not None:  # 合米素食有全素嗎: ask 你是說「和米素食」嗎？ with a button that asks again, spelt right
        return Proposal("did_you_mean", {"name": close["name"], "area": close["area"],
                                         "text": t.replace(close["typed"], close["spelling"], 1)}, notes=side)
    if PERSON_ASK.search(t) and not any(word in t for word in EVENT_WORDS):
        return Proposal("handoff_info")  # 可以請人打電話給我嗎, 我要反映路燈壞了: the 新需求 form
    if (_DIRECTORY.search(t) and diets.read_diet(t)[0] is None and not any(word in t for word in EVENT_WORDS)
            and not any(word in t for word in PLACE_WORDS)):
        return Proposal("show_limits", {"kinds": ["directory"]})  # 彰化縣政府電話幾號: no directory data
    typo = township_typo(t)
    if typo is not None:  # 溪胡還是員林有素食餐廳: 「你是說溪湖鎮嗎？」, never silently only 員林
        typed, suffix, names = typo
        choices = [[name, t.replace(typed + suffix, name if suffix else short_name(name), 1)]
                   for name in names]
        return Proposal("did_you_mean", {"name": names[0], "area": names[0], "text": choices[0][1],
                                         "choices": choices, "typed": typed}, notes=("township",))
    townships = townships_in(t)
    if townships and FOLLOW_UP.fullmatch(strip_townships(t)):
        return Proposal("ask_search_kind", {"area": townships[0]})  # 那鹿港呢: events or shops?
    split = _two_asks(t, townships)
    if split is not None:
        first_text, kind, seconds = split
        proposal = _search(first_text, side)
        if proposal.tool in ("search_local_events", "search_local_places", "needs_area") and \
                (proposal.tool != "needs_area" or proposal.args.get("kind", "places") == kind):
            return Proposal(proposal.tool, proposal.args, proposal.source, proposal.notes + seconds)
    return _search(t, side)


#: What makes a clause an ask LOCAL can answer: an event, shop or diet word (a township or a day alone
#: is context: 禮拜六去花壇 會不會很冷 asks about the weather only).
_SEARCH_TOOLS = ("search_local_places", "search_local_events", "needs_area", "find_place")


def _hard_limits(text: str) -> list[str]:
    """The limits a text asks about that no search can answer (transport, parking, health, weather …).

    A food allergy beside a diet ask (我對花生過敏 花壇有素食嗎) is a food condition read_diet names, not
    a health question."""
    if diets.read_diet(text)[0] not in (None, "any"):
        text = OTHER_FOOD.sub("｜", NO_DAIRY.sub("｜", NO_EGG.sub("｜", text)))
    hard = _limits(text, LIMITS)
    if "transport" not in hard and TRAVEL.search(text):
        hard.append("transport")
    if "parking" not in hard and PARKING.search(text):
        hard.append("parking")
    return hard


def _ask_beside_limits(t: str) -> Proposal | None:
    """A search asked beside a limit (鹿港有素食店嗎？那邊停車方便嗎; 12/31彰化市有跨年晚會嗎 要怎麼去):
    the clauses without a limit word, routed on their own, when they hold an event, shop or diet
    ask; None when every ask is a limit (彰化到鹿港的公車, 我頭很痛要吃什麼藥). A township said only in the
    limit's clause (去鹿港要坐什麼車？那邊有素食嗎) serves the search. Source: trial 3 finding 6.
    """
    clauses = clauses_read([clause for clause in LIMIT_CLAUSE_BREAK.split(t) if clause and clause.strip()])
    if len(clauses) < 2:
        return None
    rest = [clause for clause in clauses if not _hard_limits(clause)]
    limited = [clause for clause in clauses if _hard_limits(clause)]
    if not rest or not limited:
        return None
    text = " ".join(rest)
    asks = (any(word in text for word in EVENT_WORDS) or diets.read_diet(text)[0] not in (None, "any")
            or any(word in _NOT_FOOD_SHOPS.sub("｜", text) for word in PLACE_WORDS)
            or event_topics(text, with_diet=False) or places_named_in(text) or event_named(text))
    if not asks:
        return None
    if not townships_in(text):
        areas = [area for clause in limited for area in townships_in(clause)]
        text = f"{areas[0]} {text}" if areas else text
    proposal = route(text)
    said = next((value for clause in limited if (value := read_date(clause)) is not None), None)
    if said is not None and "date" in proposal.args and proposal.args["date"] is None:
        # 這禮拜六會不會下雨 員林的活動還有辦嗎: the day said with the limit is the events' day (trial 5 finding 9)
        proposal = Proposal(proposal.tool, {**proposal.args, "date": said}, proposal.source, proposal.notes)
    return proposal if proposal.tool in _SEARCH_TOOLS else None


def _search_beside_privacy(t: str) -> Proposal | None:
    """A privacy or no-memory remark beside a search (我吃奶素 但不要存我的資料喔 彰化市有嗎; 你們會存我的個資嗎
    花壇有素食嗎; 我吃奶素 不用記 john有嗎): the message without the remark's words, routed on its own, with the
    note ``not_saved`` (no 記住 button; the reply says nothing is kept without consent) or ``privacy_asked``
    (the reply says what is kept); None when what is left asks for no search. Source: trial 5 finding 10.
    """
    not_saved = bool(NO_MEMORY.search(t) or NOT_ASKED_TO_REMEMBER.search(t))
    rest = t
    for pattern in (NOT_ASKED_TO_REMEMBER, NO_MEMORY, PRIVACY):
        rest = pattern.sub("｜", rest)
    if not re.sub(r"[｜\W_]+", "", rest):
        return None
    proposal = _route(rest)
    if proposal.tool not in _SEARCH_TOOLS or proposal.tool == "needs_area":  # 不用記我吃素: no search asked
        return None
    if not_saved:
        note = "not_saved"
    elif any(PRIVACY.search(clause) and QUESTION.search(clause) for clause in LIMIT_CLAUSE_BREAK.split(t)):
        note = "privacy_asked"
    else:
        return proposal
    return Proposal(proposal.tool, proposal.args, proposal.source,
                    proposal.notes + ((note,) if note not in proposal.notes else ()))


def township_typo(t: str) -> tuple[str, str, list[str]] | None:
    """A misspelt township where a place is clearly meant, and the townships it may be, or None.

    A place is clearly meant where two Han characters are joined to a real township by 還是 / 或 / 跟 / 和
    / 、 (溪胡還是員林, 員林或花潭), or are followed by 鄉 / 鎮 / 市 (溪胡鎮). They must differ from a township's
    short name in exactly one character (溪胡 / 溪湖; never by sound, which the router cannot read) and
    be no word of LOCAL's vocabulary (社區, 北部, 市集 …). Several townships may be that close (溪胡:
    溪湖鎮 and 溪州鄉): all are returned, a same suffix (溪胡鎮 → 溪湖鎮) first. The caller asks
    「你是說…嗎？」; it never searches a guess. Source: newcomer trial 5 finding 13.

    Returns:
        (the characters as typed, the 鄉 / 鎮 / 市 typed after them or "", [full township names, best
        first]) or None.
    """
    spellings = "|".join(sorted({*TOWNSHIPS, *(short_name(name) for name in TOWNSHIPS)}, key=len, reverse=True))
    typed_places = re.finditer(
        rf"(?P<a>[\u4e00-\u9fff]{{2}})(?={PLACE_JOIN}(?:{spellings}))|(?:{spellings}){PLACE_JOIN}(?P<b>[\u4e00-\u9fff]{{2}})"
        r"|(?P<c>[\u4e00-\u9fff]{2})(?P<suffix>[鄉鎮市])"
        # trial 7 F7: 鹿巷這禮拜有活動嗎 (a word first, then when: a place is meant)
        r"|^(?:請問|想問|我想查|想查|查)?(?P<d>[\u4e00-\u9fff]{2})(?=(?:這|今|明|下|本)(?:個)?(?:禮拜|星期|週|周|月|天)|(?:週|周)末)",
        t)
    known = [w for w, _ in EVENT_TOPICS] + list(EVENT_WORDS) + [w for w, _ in DIET_WORDS] + list(_NOT_PLACES) + \
        list(_NOT_TOWNSHIP_TYPOS)
    said_townships = townships_in(t)  # once, not per place-like word
    near_of: dict[str, list[str]] = {}  # per word typed: a message may repeat it thousands of times

    def townships_near(typed: str) -> list[str]:
        if typed not in near_of:
            vocabulary = townships_in(typed) or any(k in typed or typed in k for k in known) \
                or read_date(typed) is not None
            near_of[typed] = [] if vocabulary else [name for name in TOWNSHIPS if one_apart(typed, name)]
        return list(near_of[typed])

    for found in typed_places:
        typed = found.group("a") or found.group("b") or found.group("c") or found.group("d")
        if found.group("d") and not any(word in t for word in EVENT_WORDS + PLACE_WORDS) and diets.read_diet(t)[0] is None:
            continue  # a word before a date with no ask is no place
        near = townships_near(typed)
        if not near:
            continue
        suffix = found.group("suffix")
        if suffix and townships_in(t[found.start():found.end() + 1]):
            continue  # part of a real name said with its suffix
        if suffix == "市" and t[found.end():found.end() + 1] in ("集", "場", "區"):
            continue  # 花卉市集, 魚市場: a market, not 花卉市 (trial 7, F1)
        if said_townships and in_a_title(typed, _titles()):
            continue  # 田尾 … 花卉: a word of an event's title beside a real township
        near.sort(key=lambda name: 0 if suffix and name.endswith(suffix) else 1)
        return typed, suffix or "", near
    return None


def _search(t: str, side: tuple[str, ...]) -> Proposal:
    """The search (or fallback) a message asks for, once no fixed, limit or shop-name rule answered."""
    townships = townships_in(t)
    vague = match_area(t).kind == "vague"
    said_vague = list(vague_words_in(t)) if vague else []  # needs_area's vague_words: only these are explained
    county_wide = not townships and (COUNTY in t or WHOLE_COUNTY_SAID.search(t) is not None)
    diet, unrecorded = diets.read_diet(t)
    date = read_date(t)
    notes = side + ((f"unrecorded_diet:{unrecorded}",) if unrecorded else ()) + \
        (("not_saved",) if NO_MEMORY.search(t) or NOT_ASKED_TO_REMEMBER.search(t) else ())  # 不用記起來: no 記住 button
    if diet is not None and diet != "any":  # someone else's plain 素 is theirs: the user's memory does not fill it
        other = diet_of_other(t)
        notes += (("generic_diet",) if is_generic_diet(t, diet, unrecorded) and not other else ()) + \
                 (("diet_of_other",) if other else ())
    if townships and "彰化市" not in townships and CHANGHUA_ALSO.search(strip_townships(t)) and \
            not CHANGHUA_BEFORE_TOWNSHIP.search(t):
        townships = townships + ["彰化市"]  # 花壇 彰化 哪裡有全素: 彰化 is asked too (as 彰化市), never dropped
        notes += ("changhua_as_city",)
    others = (f"other_areas:{','.join(townships[1:])}",) if len(townships) > 1 else ()
    township = townships[0] if townships else None
    event_word = any(word in t for word in EVENT_WORDS)
    food = _NOT_FOOD_SHOPS.sub("｜", t)  # 便利商店, 飯店 (a hotel): not a place to eat
    place_cue = diet is not None or any(word in food for word in PLACE_WORDS)
    asked = ASKER.sub("｜", unnegated(t)[0])
    topics = event_topics(without_goers(asked), with_diet=event_word)
    named_event = None if place_cue and not event_word else event_named(t)
    party_free = event_topics(GOER.sub("｜", asked), with_diet=event_word)
    if party_free != topics and (party_free or named_event):
        topics = party_free  # 阿公想去看龍舟, 想帶阿公去看市集: the boats, the market; who goes filters nothing
    if named_event and not event_word:  # 鹿港龍舟賽幾點開始: an events ask, never a shop or unknown subject
        event_word = True
        if not topics:
            topics = [named_event]
            named_event = None
    unknown = None if township or vague or county_wide else unknown_place(t)
    if unknown:  # 鹿巷活動: say it was not recognised and offer the townships, not a county-wide list
        notes += (f"unknown_area:{unknown}",)
        if event_word:
            return Proposal("needs_area", {"kind": "events", "vague": False, "date": date,
                                           "keyword": " ".join(topics) or None}, notes=notes)
        return Proposal("needs_area", {"kind": "places", "dietary_type": diet, "vague": False}, notes=notes)
    if event_word or (not place_cue and (topics or date is not None or "no_registration" in side)):
        notes = tuple(note for note in notes if note not in ("no_hours", "generic_diet", "diet_of_other"))
        if township is None and vague and not county_wide:
            return Proposal("needs_area", {"kind": "events", "vague": True, "vague_words": said_vague,
                                           "date": date, "keyword": " ".join(topics) or None}, notes=notes)
        hint = named_event or _title_hint(t)
        return Proposal("search_local_events", {"area": township, "date": date, "keyword": " ".join(topics) or None},
                        notes=notes + others + ((f"title:{hint}",) if hint else ()))
    if place_cue and township is None and diet is None and set(side) & {"no_booking", "no_hours"}:
        return Proposal("show_limits", {"kinds": list(side)})  # 現在哪裡有開著的爌肉飯？可以幫我預約…
    if township is not None and not place_cue and unknown_subject(t):
        # 鹿港天后宮幾點開, 花壇鄉長是誰: a township with a subject LOCAL has no data on, not a shop search
        return Proposal("ask_search_kind", {"area": township}, notes=("no_data",))
    if place_cue or township is not None:
        if township is None:
            own = diet not in (None, "any") and OWN_DIET_STATEMENT.match(re.sub(r"\s+", "", t)) is not None
            return Proposal("needs_area", {"kind": "places", "dietary_type": diet, "vague": vague,
                                           **({"vague_words": said_vague} if vague else {})},
                            notes=notes + (("own_diet",) if own else ()))
        kind = next((word for word in _SHOP_KINDS if word in food), None)
        return Proposal("search_local_places", {"area": township, "dietary_type": diet, "keyword": None},
                        notes=notes + others + ((f"unrecorded_kind:{kind}",) if kind else ()))
    if side:
        return Proposal("show_limits", {"kinds": list(side)})
    if vague and unknown_subject(t):
        return Proposal("show_limits", {"kinds": ["no_data"]})  # 彰化縣長是誰: no data, not a shop picker
    if vague:
        return Proposal("needs_area", {"kind": "places", "dietary_type": None, "vague": True,
                                       "vague_words": said_vague})
    if HANDOFF_INFO.search(t):
        return Proposal("handoff_info")
    if CANCEL.search(t):
        return Proposal("handoff_cancel_help")  # 要怎麼取消 (nothing else to cancel offline)
    if any(has_word(t, word) for word in _THANKS + _MORE_THANKS):
        return Proposal("thanks")
    if any(has_word(t, word) for word in _GREETINGS):
        return Proposal("greeting")
    return Proposal("show_local_help")


def _title_hint(t: str) -> str | None:
    """Words said right before an event kind that may be part of one event's title (冬季蔬果市集要帶什麼
    → 冬季蔬果; 八卦山健走 → 八卦山), or None. The engine narrows with it only when a title holds it.
    Source: trial 4 finding 8."""
    for word, _ in EVENT_TOPICS:
        at = t.find(word)
        if at <= 0:
            continue
        before = re.search(r"[\u4e00-\u9fff]{2,6}$", strip_townships(t[:at]))
        if before is None:
            continue
        hint = NOT_TITLE.split(before.group(0))[-1]
        known = [w for w, _ in EVENT_TOPICS] + list(EVENT_WORDS) + [w for w, _ in DIET_WORDS]
        if len(hint) >= 2 and not any(hint in k or k in hint for k in known) and read_date(hint) is None:
            return hint
    return None


def _events_beside_shop(t: str, named: list[dict[str, str]]) -> tuple[str, ...]:
    """An events ask in another clause than a named shop's (和米禮拜天有開嗎？順便問花壇這禮拜天有活動嗎) →
    ``also_events:<township>/<date value>`` (offered as a button with its dates), or nothing.
    Source: trial 4 finding 14."""
    for clause in clauses_read(ASK_BREAK.split(t)):
        if not clause or not any(word in clause for word in EVENT_WORDS) or places_named_in(clause):
            continue
        areas = townships_in(clause)
        return (f"also_events:{areas[0] if areas else named[0]['area']}/{_date_words(clause)}",)
    return ()


#: A part of a message that asks something (used to split two asks said with a space between).
_ASKS = re.compile(r"有|嗎|呢|哪|什麼|啥|推薦|幾點|[?？]")
#: Words of a shop ask (besides diet words): a shop, a meal, a recommendation to eat.
_SHOP_ASK = re.compile(r"店|餐廳|小吃|料理|便當|吃(?:什麼|飯|的)|推薦.{0,4}吃")


def _two_asks(t: str, townships: list[str]) -> tuple[str, str, tuple[str, ...]] | None:
    """An events ask and a shop ask in one message (週末彰化市有活動嗎？順便推薦附近的素食店), or two asks
    of one kind with their own conditions (_same_kind_asks).

    Returns:
        (text of the first ask, its kind ``events`` / ``places``, the notes for the other asks:
        ``also_places:<township>/<diet>`` or ``also_events:<township>/<date value>``; or
        ``second_events:<query>`` / ``second_places:<query>``), or None when the message holds one ask.
        The second ask never becomes a filter of the first (no 蔬食 keyword on the events); the reply
        offers it as a button. Source: trial 1 finding 5.
    """
    clauses = [clause for clause in ASK_BREAK.split(t) if clause and clause.strip()]
    if len(clauses) < 2:
        # two questions said with a space between (员林有没有纯素的店 周末有活动吗; trial 5 finding 6): only
        # when each part asks something (有 / 嗎 / 哪 …), so 花壇 素食 活動 stays one ask
        clauses = [clause for clause in t.split() if clause]
        if len(clauses) < 2 or sum(1 for clause in clauses if _ASKS.search(clause)) < 2:
            return None
    clauses = clauses_read(clauses)
    kinds: list[str | None] = []
    for clause in clauses:
        diet = diets.read_diet(clause)[0]
        shop = diet not in (None, "any") or _SHOP_ASK.search(clause) is not None
        if any(word in clause for word in EVENT_WORDS):
            kinds.append("events")
        elif shop:
            kinds.append("places")
        elif read_date(clause) is not None or event_topics(clause, with_diet=False):
            kinds.append("events")  # 週日想帶孩子去玩: a day and a topic, no event word
        else:
            kinds.append(None)
    if "events" not in kinds or "places" not in kinds:
        return _same_kind_asks(clauses, kinds)
    first = next(kind for kind in kinds if kind)
    mine = " ".join(clause for clause, kind in zip(clauses, kinds) if kind in (first, None))
    theirs = " ".join(clause for clause, kind in zip(clauses, kinds) if kind not in (first, None))
    # each ask keeps its own township; one said only once serves both (trial 2 finding 9:
    # 12/12鹿港有活動嗎？另外彰化市有全素的店嗎 → 鹿港 events, 彰化市 全素 shops)
    mine_areas, their_areas = townships_in(mine), townships_in(theirs)
    area = mine_areas[0] if mine_areas else (their_areas[0] if their_areas else "")
    their_area = their_areas[0] if their_areas else area
    if area and not mine_areas:
        mine = f"{area} {mine}"
    if first == "events":
        diet, unrecorded = diets.read_diet(theirs)
        keep = diet not in (None, "any") and not is_generic_diet(theirs, diet, unrecorded)
        return mine, first, (f"also_places:{their_area}/{diet if keep else ''}",)
    return mine, first, (f"also_events:{their_area}/{_date_words(theirs)}",)


#: The conditions an ask of each kind sets, by the name its search (and its postback) uses.
_ASK_CONDITIONS = {"events": ("area", "date", "keyword"), "places": ("area", "dietary_type")}
#: An area said as the whole county (全彰化): a condition of its own, unlike an area left unsaid.
_ALL_AREAS = "*"
#: The most asks of one kind offered as buttons beside the one searched.
SECOND_ASKS_MAX = 2


def _date_words(text: str) -> str:
    """The date of ``text`` as a note carries it for a button's postback: its boundary encoding
    (shared.turn.datespec), or empty when the text names none."""
    spec = read_date(text)
    return spec.encode() if spec is not None else ""


def second_ask(note: str) -> tuple[str, dict[str, Any]] | None:
    """A ``second_events:`` / ``second_places:`` note → (kind, {condition: value}), its ``date`` a
    DateSpec; None for other notes."""
    kind, _, query = note.partition(":")
    if kind not in ("second_events", "second_places"):
        return None
    pairs = (pair.partition("=") for pair in query.split("&") if pair)
    said: dict[str, Any] = {name: value for name, _, value in pairs if value}
    if "date" in said:
        said["date"] = date_arg(said["date"])
    return kind.removeprefix("second_"), said


def _ask_conditions(text: str, kind: str, *, picker: bool = False) -> dict[str, str] | None:
    """The conditions one ask sets on its own (``area`` ``*`` for 全彰化), or None when its words are no
    plain search of that kind (a limit, an unreadable date; a township picker unless ``picker``)."""
    proposal = _search(text, ())
    searched = proposal.tool == f"search_local_{kind}" or (
        picker and proposal.tool == "needs_area" and proposal.args.get("kind", "places") == kind)
    if not searched or isinstance(proposal.args.get("date"), Unreadable):
        return None
    said = {name: str(encoded(proposal.args[name])) for name in _ASK_CONDITIONS[kind] if proposal.args.get(name)}
    if kind == "places" and said.get("dietary_type") == "any":
        said.pop("dietary_type")
    if not said.get("area") and (COUNTY in text or WHOLE_COUNTY_SAID.search(text)):
        said["area"] = _ALL_AREAS
    return said


def _same_kind_asks(clauses: list[str], kinds: list[str | None]) -> tuple[str, str, tuple[str, ...]] | None:
    """Two asks of one kind, each with conditions of its own (聖誕節員林有活動嗎？還有12/5到12/7全彰化的市集;
    員林有全素的店嗎？還有鹿港的蛋奶素): the first is searched on its own words, each later one is the note
    ``second_events:<query>`` / ``second_places:<query>`` (``area=…&date=…&keyword=…`` /
    ``area=…&diet=…``, the router's own values, read back by ``second_ask``; no ``area``: every
    township), offered as a button. Their conditions
    are never merged: a condition a later ask leaves open is the first's (還有鹿港的呢 keeps the date);
    one the first leaves open is not filled from a later one.

    Returns:
        (text of the first ask, its kind, the notes), or None when the message is one ask: a later clause
        that only adds a condition (週六有活動嗎？有親子的嗎) or only names another township (聖誕節員林有
        活動嗎？還有鹿港的呢: ``other_areas``, whose button keeps the date and topic) refines the first.
    Source: trial 8 finding F3.
    """
    groups: list[tuple[str, list[str]]] = []  # (kind, clauses): an ask with the clauses that follow it
    for clause, kind in zip(clauses, kinds):
        if kind and (not groups or groups[-1][0]):
            groups.append((kind, [clause]))
        elif groups:
            groups[-1][1].append(clause)
            groups[-1] = (groups[-1][0] or kind or "", groups[-1][1])
        else:
            groups.append((kind or "", [clause]))
    asks = [(kind, " ".join(words)) for kind, words in groups if kind]
    if len(asks) < 2 or len({kind for kind, _ in asks}) != 1:
        return None
    kind = asks[0][0]
    first = _ask_conditions(asks[0][1], kind, picker=True)  # 有全素的店嗎？還有鹿港的蛋奶素: the picker first
    if first is None:
        return None
    mine, notes = [asks[0][1]], list[str]()
    for _, text in asks[1:]:
        later = _ask_conditions(text, kind)
        if later is None:
            mine.append(text)
            continue
        differ = {name for name in later if name in first and later[name] != first[name]}
        adds = {name for name in later if name not in first}
        if not differ or (differ == {"area"} and not adds and _ALL_AREAS not in (first["area"], later["area"])):
            mine.append(text)  # a refinement, or another township (other_areas keeps the rest)
            continue
        if len(notes) == SECOND_ASKS_MAX:
            continue
        asked = {**first, **later}
        query = {("diet" if name == "dietary_type" else name): asked[name] for name in _ASK_CONDITIONS[kind]
                 if asked.get(name) and asked[name] != _ALL_AREAS}
        notes.append(f"second_{kind}:" + "&".join(f"{name}={value}" for name, value in query.items()))
    if not notes:
        return None
    return " ".join(mine), kind, tuple(notes)


#: Words that make a date a span (過年期間, 連假期間): part of the date, not a question (trial 7 F7).
_DATE_SPAN_WORD = re.compile(r"期間|這段時間|那段時間|前後")
#: Tools whose reply can say what the data does not record beside what it found (trial 5).
_DETAIL_TOOLS = ("search_local_events", "search_local_places", "find_place", "needs_area")
#: Stands where a limit's phrase was (要怎麼去, 要自己帶): its clause is answered by the limit.
_LIMIT_MARK = "〓"
#: Notes whose words the reply already says (a title hint, a kind of restaurant, a finer diet, a shop).
_WORDS_NOTES = ("title:", "unrecorded_kind:", "unrecorded_diet:", "other_places:", "unknown_area:", "other_areas:")
#: Details a side limit already says (trial 4 finding 3, 8): the limit's sentence stays, no second one.
_SAID_BY_LIMIT = {"detail:pets": "no_pets", "detail:bring": "no_bring"}
#: Details only an event has (a shop has hours, not an end time, an age range or an organiser).
_EVENT_ONLY_DETAILS = ("detail:end_time", "detail:age", "detail:suitability", "detail:organiser", "detail:bring")


def _with_details(t: str, proposal: Proposal) -> Proposal:
    """``proposal`` with notes for the questions it does not answer (shared.turn.details).

    Named details (要帶水嗎, 可以刷卡嗎, 狗可以去嗎, 小孩幾歲可以, 會不會很多人, 有椅子坐嗎) are said beside a
    search, a limit or alone; any other question clause is said only beside a search (有沒有報佳音).
    A suitability question (老人家可以去嗎) is not a 長輩 filter when the search has another condition.
    掛號 is said as a booking LOCAL cannot make, not as a question about an illness.
    Source: trial 5 findings 1, 2, 7, 8, 14, 15 and the minors 掛號 and 報佳音; DESIGN §5.
    """
    tool, args = proposal.tool, dict(proposal.args)
    notes = tuple(note for note in proposal.notes if not note.startswith(("detail:", "unasked:")))
    kinds = list(args.get("kinds") or [])
    if tool == "show_limits" and ({"crisis", "emergency"} & set(kinds)):
        return proposal
    if APPOINTMENT.search(t) and (tool in ("show_limits", "show_local_help") or (
            not any(word in t for word in EVENT_WORDS) and diets.read_diet(t)[0] is None and not places_named_in(t))):
        # 可以幫我掛號嗎 彰基, 幫我預約明天看診: no booking of a doctor; an illness said too keeps the medical line
        ill = "medical" in _limits(APPOINTMENT.sub("｜", t), LIMITS)
        kinds = [kind for kind in kinds if kind not in ("medical", "no_booking")]
        return Proposal("show_limits", {"kinds": (["medical"] if ill else []) + kinds + ["no_appointment"]},
                        proposal.source)
    if "medical" in notes and APPOINTMENT.search(t) and "medical" not in _limits(APPOINTMENT.sub("｜", t), LIMITS):
        notes = tuple("no_appointment" if note == "medical" else note for note in notes)  # …順便幫我掛號
    if tool not in _DETAIL_TOOLS + ("show_limits", "show_local_help", "greeting", "thanks") or "新需求" in t:
        return proposal
    plain = t
    for pattern in (NO_PUNGENT, NO_DAIRY, OTHER_FOOD, NO_EGG, ASKER, GOER, WHOLE_COUNTY_SAID, _DATE_SPAN_WORD):
        plain = pattern.sub("｜", plain)
    for pattern in (PARKING, TRAVEL, APPOINTMENT, BRING, DISTANCE):
        plain = pattern.sub(_LIMIT_MARK, plain)  # a limit said here: its clause is answered
    named = places_named_in(t)
    words = all_words() + tuple(spelling for place in named for spelling in place_aliases(place["name"]))
    plain = without_names(plain, named) if named else plain
    said_words = tuple(word for note in notes if note.startswith(_WORDS_NOTES)
                       for word in re.split(r"[,、/|\s]+", note.partition(":")[2]) if word)
    if tool in ("search_local_events", "needs_area"):  # 龍舟賽是哪一天: the event's name is what was searched
        said_words += tuple(word for word in re.split(r"[|\s]+", f"{args.get('keyword') or ''} {event_named(t) or ''}")
                            if word)
    found = read_details(plain, words + said_words, read_date,
                         lambda clause: _LIMIT_MARK in clause or bool(_limits(clause, SIDE_LIMITS) or _hard_limits(clause)))
    said = set(notes) | set(kinds)  # no_pets / no_bring (trial 4) already say it: never twice
    found = tuple(note for note in found if _SAID_BY_LIMIT.get(note) not in said)
    places = tool in ("search_local_places", "find_place") or args.get("kind") == "places"
    if places and "detail:end_time" in found:  # 開到幾點 at a shop is its hours
        notes += () if "no_hours" in notes else ("no_hours",)
    if places:  # an event's details (70歲的阿嬤想找素食: no age line about a shop)
        found = tuple(note for note in found if not note.startswith(_EVENT_ONLY_DETAILS))
    if tool != "search_local_events":  # 要多久 beside a bus or a shop is the transport or hours limit
        found = tuple(note for note in found if note != "detail:end_time")
    if tool not in _DETAIL_TOOLS or "no_booking" in notes or any(note.startswith("unknown_area:") for note in notes):
        found = tuple(note for note in found if note.startswith("detail:"))  # the limit or the picker answers it
    who = suitability_people(t)
    if tool == "search_local_events" and who and args.get("keyword"):
        topic = _SUIT_TOPIC.get(who)
        terms = args["keyword"].split(" ")
        rest = [term for term in terms if term != topic]
        if topic and len(rest) < len(terms) and (rest or args.get("date") or args.get("area")):
            args["keyword"] = " ".join(rest) or None  # 一月九號 花壇市集 老人家可以去嗎: the market, not 市集 AND 長輩
    if not found and args == proposal.args and notes == proposal.notes:
        return proposal
    if tool in ("show_local_help", "greeting", "thanks"):  # 你好 可以帶狗嗎: the detail, and the menu
        return Proposal("show_limits", {"kinds": []}, proposal.source, notes + found) if found else proposal
    return Proposal(tool, args, proposal.source, notes + found)
