"""Two asks in one message: an events ask and a shop ask (週末彰化市有活動嗎？順便推薦附近的素食店), or two asks
of one kind, each with conditions of its own (聖誕節員林有活動嗎？還有12/5到12/7全彰化的市集). The first is
searched on its own words; each other one is a note the reply offers as a button: it never filters the
first. Rule: ``two_asks``."""
from __future__ import annotations

import re
from typing import TYPE_CHECKING

from shared.areas import COUNTY, townships_in
from shared.diets import read_diet
from shared.turn.ask import EventsSearch, PlacesSearch, SecondAsk
from shared.turn.dates import read_date
from shared.turn.datespec import Unreadable, date_arg, encoded
from shared.turn.proposal import Proposal
from shared.turn.rules.clauses import ASK_BREAK, clauses_read
from shared.turn.rules.events import event_topics
from shared.turn.rules.places import WHOLE_COUNTY_SAID, is_generic_diet
from shared.turn.rules.search import search
from shared.turn.rules.titles import EventTitles
from shared.turn.vocabulary.events import EVENT_WORDS

if TYPE_CHECKING:
    from shared.turn.rules.message import Message

#: A part of a message that asks something (used to split two asks said with a space between).
_ASKS = re.compile(r"有|嗎|呢|哪|什麼|啥|推薦|幾點|[?？]")
#: Words of a shop ask (besides diet words): a shop, a meal, a recommendation to eat.
_SHOP_ASK = re.compile(r"店|餐廳|小吃|料理|便當|吃(?:什麼|飯|的)|推薦.{0,4}吃")
#: The conditions an ask of each kind sets, by the name its search (and its postback) uses.
_ASK_CONDITIONS = {"events": ("area", "date", "keyword"), "places": ("area", "dietary_type")}
#: An area said as the whole county (全彰化): a condition of its own, unlike an area left unsaid.
_ALL_AREAS = "*"
#: The most asks of one kind offered as buttons beside the one searched.
SECOND_ASKS_MAX = 2

#: (text of the first ask, its kind ``events`` / ``places``, a ``SecondAsk`` per other ask).
Split = tuple[str, str, tuple[SecondAsk, ...]]


def _clauses(t: str) -> list[str] | None:
    """The clauses of ``t`` (sentence ends, 順便 / 另外 / 還有 …), or its parts between spaces when each of
    two or more asks something (员林有没有纯素的店 周末有活动吗; not 花壇 素食 活動); None for one clause."""
    clauses = [clause for clause in ASK_BREAK.split(t) if clause and clause.strip()]
    if len(clauses) < 2:
        clauses = [clause for clause in t.split() if clause]
        if len(clauses) < 2 or sum(1 for clause in clauses if _ASKS.search(clause)) < 2:
            return None
    return clauses_read(clauses)


def _kind_of(clause: str) -> str | None:
    """``events``, ``places`` or None (a clause that asks neither: it belongs to the ask before it)."""
    if any(word in clause for word in EVENT_WORDS):
        return "events"
    if read_diet(clause)[0] not in (None, "any") or _SHOP_ASK.search(clause) is not None:
        return "places"
    if read_date(clause) is not None or event_topics(clause, with_diet=False):
        return "events"  # 週日想帶孩子去玩: a day and a topic, no event word
    return None


def _each_township(mine: str, theirs: str) -> tuple[str, str | None]:
    """(the first ask's words, with the other's township when it names none; the other's township, or
    the first's): each ask keeps its own township, one said only once serves both (12/12鹿港有活動嗎？
    另外彰化市有全素的店嗎 → 鹿港 events, 彰化市 全素 shops)."""
    mine_areas, their_areas = townships_in(mine), townships_in(theirs)
    area = mine_areas[0] if mine_areas else (their_areas[0] if their_areas else None)
    if area and not mine_areas:
        mine = f"{area} {mine}"
    return mine, their_areas[0] if their_areas else area


def _events_and_shops(clauses: list[str], kinds: list[str | None]) -> Split:
    """An events ask and a shop ask: the first searched, the other a ``SecondAsk`` of the other kind, in
    its township (``_each_township``), with a shop ask's diet (not a plain 素食) or an events ask's date."""
    first = next(kind for kind in kinds if kind)
    their_text = " ".join(clause for clause, kind in zip(clauses, kinds) if kind not in (first, None))
    mine, their_area = _each_township(
        " ".join(clause for clause, kind in zip(clauses, kinds) if kind in (first, None)), their_text)
    if first == "places":
        return mine, first, (SecondAsk(EventsSearch(their_area, read_date(their_text))),)
    diet, unrecorded = read_diet(their_text)
    keep = diet not in (None, "any") and not is_generic_diet(their_text, diet, unrecorded)
    return mine, first, (SecondAsk(PlacesSearch(their_area, diet if keep else None)),)


def _ask_conditions(text: str, kind: str, titles: EventTitles, *, picker: bool = False) -> dict[str, str] | None:
    """The conditions one ask sets on its own (``area`` ``*`` for 全彰化), or None when its words are no
    plain search of that kind (a limit, an unreadable date; a township picker unless ``picker``)."""
    proposal = search(text, (), titles)
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


def _asks(clauses: list[str], kinds: list[str | None]) -> list[tuple[str, str]]:
    """(kind, text) of each ask: a clause of a kind with the clauses of none that follow it."""
    groups: list[tuple[str, list[str]]] = []
    for clause, kind in zip(clauses, kinds):
        if kind and (not groups or groups[-1][0]):
            groups.append((kind, [clause]))
        elif groups:
            groups[-1][1].append(clause)
            groups[-1] = (groups[-1][0] or kind or "", groups[-1][1])
        else:
            groups.append((kind or "", [clause]))
    return [(kind, " ".join(words)) for kind, words in groups if kind]


def _refines(first: dict[str, str], later: dict[str, str]) -> bool:
    """True when a later ask only refines the first: it sets no condition otherwise, or only another
    township (``other_areas`` keeps the rest; 聖誕節員林有活動嗎？還有鹿港的呢)."""
    differ = {name for name in later if name in first and later[name] != first[name]}
    adds = {name for name in later if name not in first}
    return not differ or (differ == {"area"} and not adds and _ALL_AREAS not in (first["area"], later["area"]))


def _second_note(kind: str, first: dict[str, str], later: dict[str, str]) -> SecondAsk:
    """The later ask's conditions, the first's where it leaves one open (no ``area``: every township)."""
    asked = {**first, **later}
    query = {("diet" if name == "dietary_type" else name): asked[name] for name in _ASK_CONDITIONS[kind]
             if asked.get(name) and asked[name] != _ALL_AREAS}
    if kind == "events":
        return SecondAsk(EventsSearch(query.get("area"), date_arg(query.get("date")), query.get("keyword")))
    return SecondAsk(PlacesSearch(query.get("area"), query.get("diet")))


def _same_kind_asks(clauses: list[str], kinds: list[str | None], titles: EventTitles) -> Split | None:
    """Two asks of one kind, each with conditions of its own (員林有全素的店嗎？還有鹿港的蛋奶素): the first
    is searched on its own words, each later one (at most SECOND_ASKS_MAX) is a ``SecondAsk`` with every
    condition it sets. Their conditions
    are never merged: a condition a later ask leaves open is the first's; one the first leaves open is
    not filled from a later one. None when the message is one ask: a later clause that only adds a
    condition (週六有活動嗎？有親子的嗎) or names another township refines the first."""
    asks = _asks(clauses, kinds)
    if len(asks) < 2 or len({kind for kind, _ in asks}) != 1:
        return None
    kind = asks[0][0]
    first = _ask_conditions(asks[0][1], kind, titles, picker=True)  # 有全素的店嗎？還有鹿港的蛋奶素: the picker first
    if first is None:
        return None
    mine, notes = [asks[0][1]], list[SecondAsk]()
    for _, text in asks[1:]:
        later = _ask_conditions(text, kind, titles)
        if later is None or _refines(first, later):
            mine.append(text)
        elif len(notes) < SECOND_ASKS_MAX:
            notes.append(_second_note(kind, first, later))
    return (" ".join(mine), kind, tuple(notes)) if notes else None


def split_asks(t: str, titles: EventTitles) -> Split | None:
    """The first ask of ``t`` and the notes for the others, or None when ``t`` holds one ask."""
    clauses = _clauses(t)
    if clauses is None:
        return None
    kinds = [_kind_of(clause) for clause in clauses]
    if "events" not in kinds or "places" not in kinds:
        return _same_kind_asks(clauses, kinds, titles)
    return _events_and_shops(clauses, kinds)


def two_asks(m: Message) -> Proposal | None:
    """The first ask searched on its own words, with the notes for the others; only when that search is
    of the first ask's kind (else the message is searched whole)."""
    split = split_asks(m.text, m.titles)
    if split is None:
        return None
    first_text, kind, seconds = split
    proposal = search(first_text, m.side, m.titles)
    if proposal.tool in ("search_local_events", "search_local_places", "needs_area") and \
            (proposal.tool != "needs_area" or proposal.args.get("kind", "places") == kind):
        return proposal.with_notes(*seconds)
    return None
