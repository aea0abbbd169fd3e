"""Details: the questions a proposal does not answer (shared.turn.details reads them), said beside it.

Named details (要帶水嗎, 可以刷卡嗎, 狗可以去嗎, 小孩幾歲可以, 會不會很多人, 有椅子坐嗎) are said beside a
search, a limit or alone; any other question clause is said only beside a search (有沒有報佳音). A
suitability question (老人家可以去嗎) is not a 長輩 filter when the search has another condition. 掛號 is
said as a booking LOCAL cannot make, not as a question about an illness. Finishing step: ``with_details``.
"""
from __future__ import annotations

import re
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from shared.diets import NO_DAIRY, NO_EGG, NO_PUNGENT, NOT_ASKED_TO_REMEMBER, OTHER_FOOD, read_diet
from shared.places.search import place_aliases, places_named_in
from shared.turn.ask import EVENT_ONLY_DETAILS, DetailKind, Limit, Note, NotRecorded, Unasked, UnknownTownship, words_of
from shared.turn.dates import read_date
from shared.turn.details import read_details, suitability_people
from shared.turn.proposal import Proposal
from shared.turn.rules.clauses import LIMIT_CLAUSE_BREAK
from shared.turn.rules.events import ASKER, GOER
from shared.turn.rules.limits import APPOINTMENT, BRING, DISTANCE, PARKING, TRAVEL, hard_limits, limits, side_limits
from shared.turn.rules.places import WHOLE_COUNTY_SAID, without_names
from shared.turn.rules.privacy import NO_MEMORY, PRIVACY, SHARING
from shared.turn.rules.problems import without_problem
from shared.turn.rules.titles import event_named
from shared.turn.vocabulary import all_words
from shared.turn.vocabulary.events import EVENT_WORDS, SUITABILITY_TOPICS
from shared.turn.vocabulary.limits import LIMITS

if TYPE_CHECKING:
    from shared.turn.rules.message import Message

#: Words that make a date a span (過年期間, 連假期間): part of the date, not a question.
_DATE_SPAN_WORD = re.compile(r"期間|這段時間|那段時間|前後")
#: Tools whose reply can say what the data does not record beside what it found.
_DETAIL_TOOLS = ("search_local_events", "search_local_places", "find_place", "needs_area")
#: Replies with no search beside which a named detail is still said (你好 可以帶狗嗎: the detail, and the menu).
_SMALL_TALK = ("show_local_help", "greeting", "thanks")
#: Stands where a limit's phrase was (要怎麼去, 要自己帶): its clause is answered by the limit.
_LIMIT_MARK = "〓"
#: Taken out before the questions are read: food conditions, who asks or goes, the whole county, a span.
_NOT_QUESTIONS = (NO_PUNGENT, NO_DAIRY, OTHER_FOOD, NO_EGG, ASKER, GOER, WHOLE_COUNTY_SAID, _DATE_SPAN_WORD)
#: A clause about what LOCAL keeps or remembers: answered by the privacy line, never a detail.
_KEPT_DATA_WORDS = (PRIVACY, SHARING, NO_MEMORY, NOT_ASKED_TO_REMEMBER)
#: Limit phrases: their clause is answered by the limit.
_LIMIT_PHRASES = (PARKING, TRAVEL, APPOINTMENT, BRING, DISTANCE)
#: Details a side limit already says: the limit's sentence stays, no second one.
_SAID_BY_LIMIT: dict[Note, Limit] = {NotRecorded(DetailKind.PETS): Limit.PETS, NotRecorded(DetailKind.BRING): Limit.BRING}


def _appointment(t: str, proposal: Proposal, kinds: list[Limit]) -> Proposal | None:
    """可以幫我掛號嗎 彰基, 幫我預約明天看診: no booking of a doctor (an illness said too keeps the medical
    line), when nothing else is asked."""
    if not APPOINTMENT.search(t) or not (proposal.tool in ("show_limits", "show_local_help") or (
            not any(word in t for word in EVENT_WORDS) and read_diet(t)[0] is None and not places_named_in(t))):
        return None
    ill = Limit.MEDICAL in limits(APPOINTMENT.sub("｜", t), LIMITS)
    kinds = [kind for kind in kinds if kind not in (Limit.MEDICAL, Limit.BOOKING)]
    return Proposal("show_limits", {"kinds": ([Limit.MEDICAL] if ill else []) + kinds + [Limit.APPOINTMENT]},
                    proposal.source)


def _appointment_note(t: str, notes: tuple[Note, ...]) -> tuple[Note, ...]:
    """…順便幫我掛號: the medical note beside a search is the booking LOCAL cannot make, when no illness is said."""
    if Limit.MEDICAL in notes and APPOINTMENT.search(t) and Limit.MEDICAL not in limits(APPOINTMENT.sub("｜", t), LIMITS):
        return tuple(Limit.APPOINTMENT if note == Limit.MEDICAL else note for note in notes)
    return notes


def _without_privacy(t: str) -> str:
    """``t`` without its clauses about what LOCAL keeps (你們會存我的個資嗎, 不用記): the reply's privacy line
    answers them (shared.turn.rules.privacy), so they are no detail the data does not record."""
    clauses = [clause for clause in LIMIT_CLAUSE_BREAK.split(t) if clause]
    kept = [clause for clause in clauses if not any(pattern.search(clause) for pattern in _KEPT_DATA_WORDS)]
    return " ".join(kept) if len(kept) < len(clauses) else t


def _questions_of(t: str, named: list[dict[str, str]]) -> str:
    """``t`` without what is no question (food conditions, who asks or goes, the whole county, a span,
    shop names, a clause about the data kept) and with each limit phrase marked (its clause is answered
    by the limit)."""
    plain = _without_privacy(t)
    for pattern in _NOT_QUESTIONS:
        plain = pattern.sub("｜", plain)
    for pattern in _LIMIT_PHRASES:
        plain = pattern.sub(_LIMIT_MARK, plain)
    return without_names(plain, named) if named else plain


def _words_said(m: Message, tool: str, args: dict[str, Any], notes: tuple[Note, ...]) -> tuple[str, ...]:
    """The words the notes already say, and for events the keyword and the event named (龍舟賽是哪一天:
    the event's name is what was searched)."""
    said = tuple(part for note in notes for word in words_of(note) for part in re.split(r"[,、/|\s]+", word) if part)
    if tool not in ("search_local_events", "needs_area"):
        return said
    return said + tuple(word for word in re.split(
        r"[|\s]+", f"{args.get('keyword') or ''} {event_named(m.text, m.titles) or ''}") if word)


def _answered(clause: str) -> bool:
    """A clause a limit answers (要怎麼去, 要自己帶毛筆嗎)."""
    return _LIMIT_MARK in clause or bool(side_limits(clause) or hard_limits(clause))


def _found(m: Message, tool: str, args: dict[str, Any], notes: tuple[Note, ...]) -> tuple[Note, ...]:
    """The detail and unasked notes of ``m``, once the words the router read and the notes' words are
    taken out."""
    named = places_named_in(m.text)
    words = all_words() + tuple(spelling for place in named for spelling in place_aliases(place["name"]))
    return read_details(_questions_of(m.text, named), words + _words_said(m, tool, args, notes), read_date, _answered)


def _for_places(notes: tuple[Note, ...], found: tuple[Note, ...]) -> tuple[tuple[Note, ...], tuple[Note, ...]]:
    """Beside a shop: 開到幾點 is its hours, and no event-only detail (70歲的阿嬤想找素食: no age line)."""
    if NotRecorded(DetailKind.END_TIME) in found and Limit.HOURS not in notes:
        notes += (Limit.HOURS,)
    return notes, tuple(note for note in found if not (isinstance(note, NotRecorded) and note.kind in EVENT_ONLY_DETAILS))


def _kept(tool: str, args: dict[str, Any], notes: tuple[Note, ...], kinds: list[Limit],
          found: tuple[Note, ...]) -> tuple[tuple[Note, ...], tuple[Note, ...]]:
    """(notes, details found) as said for this tool: no detail a limit already says, the shop's rules
    (``_for_places``), an end time only of events (要多久 beside a bus or a shop is the transport or hours
    limit), and beside a limit, a booking or a picker only the named details."""
    said: set[Note] = set(notes) | set(kinds)
    found = tuple(note for note in found if _SAID_BY_LIMIT.get(note) not in said)
    if tool in ("search_local_places", "find_place") or args.get("kind") == "places":
        notes, found = _for_places(notes, found)
    if tool != "search_local_events":
        found = tuple(note for note in found if note != NotRecorded(DetailKind.END_TIME))
    if tool not in _DETAIL_TOOLS or Limit.BOOKING in notes or any(isinstance(note, UnknownTownship) for note in notes):
        found = tuple(note for note in found if isinstance(note, NotRecorded))
    return notes, found


def _suitability_unfiltered(t: str, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    """一月九號 花壇市集 老人家可以去嗎: the market, not 市集 AND 長輩 (a suitability question is no filter
    when the search has another condition)."""
    who = suitability_people(t)
    if tool != "search_local_events" or not who or not args.get("keyword"):
        return args
    topic = SUITABILITY_TOPICS.get(who)
    terms = args["keyword"].split(" ")
    rest = [term for term in terms if term != topic]
    if topic and len(rest) < len(terms) and (rest or args.get("date") or args.get("area")):
        return {**args, "keyword": " ".join(rest) or None}
    return args


def with_details(m: Message, proposal: Proposal) -> Proposal:
    """``proposal`` with notes for the questions it does not answer (see the module docstring); the safety
    reply and the scam warning stay alone. A problem for the town hall said beside the question is no question left
    (shared.turn.rules.problems: it is offered as a request)."""
    t, tool, kinds = without_problem(m.text), proposal.tool, list(proposal.args.get("kinds") or [])
    m = replace(m, text=t) if t != m.text else m
    if tool == "show_limits" and ({Limit.CRISIS, Limit.DISTRESS, Limit.EMERGENCY, Limit.FRAUD} & set(kinds)):
        return proposal
    appointment = _appointment(t, proposal, kinds)
    if appointment is not None:
        return appointment
    notes = _appointment_note(t, tuple(note for note in proposal.notes if not isinstance(note, (NotRecorded, Unasked))))
    if tool not in _DETAIL_TOOLS + ("show_limits",) + _SMALL_TALK or "新需求" in t:
        return proposal
    args = dict(proposal.args)
    notes, found = _kept(tool, args, notes, kinds, _found(m, tool, args, notes))
    args = _suitability_unfiltered(t, tool, args)
    if not found and args == proposal.args and notes == proposal.notes:
        return proposal
    if tool in _SMALL_TALK:
        return Proposal("show_limits", {"kinds": []}, proposal.source, notes + found) if found else proposal
    return Proposal(tool, args, proposal.source, notes + found)
