"""A problem for the town hall said inside another question (花壇有素食店嗎 順便問一下 我們巷子的水溝堵住了要找誰):
the question is answered on its own (``problem_beside_question``) and the reply offers to leave a request
with the problem's words only (``problem_said``; the offer: shared.turn.problem_offer). Words are in
shared.turn.vocabulary.problems."""
from __future__ import annotations

from typing import TYPE_CHECKING

from shared.diets import read_diet
from shared.handoff.drafts import request_text_of
from shared.text import reading_form
from shared.turn.ask import Limit
from shared.turn.proposal import SEARCH_TOOLS, Proposal
from shared.turn.rules.clauses import CLAUSES_MAX
from shared.turn.rules.handoff import CANCEL_REQUEST, STATUS, STATUS_BY_SUBJECT
from shared.turn.vocabulary.events import EVENT_WORDS
from shared.turn.vocabulary.places import PLACE_WORDS
from shared.turn.vocabulary.problems import ASKED_ABOUT, CLAUSE_BREAK, LEAD, PROBLEM

if TYPE_CHECKING:
    from shared.turn.rules.message import Message

#: The most characters of a problem offered as a request's text (a clause, not a letter).
PROBLEM_MAX_CHARS = 60
#: The longest clause read for a problem's words (characters): its words and the question after them.
_CLAUSE_MAX_CHARS = 2 * PROBLEM_MAX_CHARS


def _asks_a_search(clause: str) -> bool:
    return bool(any(word in clause for word in EVENT_WORDS) or any(word in clause for word in PLACE_WORDS)
                or read_diet(clause)[0] not in (None, "any"))


def _is_problem(clause: str) -> bool:
    """A clause (as typed) that tells of a problem and asks no search, read on its reading form."""
    form = reading_form(clause)
    return bool(PROBLEM.search(form)) and not _asks_a_search(form)


def _split(text: str) -> tuple[str | None, str]:
    """(the first problem's words as said, the clauses that are no problem joined by a space) of ``text``
    (as typed, or its reading form); (None, ``text``) when no clause is a problem on its own, or when the
    message has more than CLAUSES_MAX clauses (a resident's message has a few: each is read on its own).
    What is left holds no problem clause, so routing it never comes back here."""
    clauses = [clause for clause in CLAUSE_BREAK.split(text) if clause and clause.strip()]
    if len(clauses) > CLAUSES_MAX:
        return None, text
    problems = [_is_problem(clause) for clause in clauses]
    if not any(problems):
        return None, text
    problem = clauses[problems.index(True)].strip()
    rest = " ".join(clause for clause, is_problem in zip(clauses, problems) if not is_problem)
    if len(problem) > _CLAUSE_MAX_CHARS:
        return None, rest
    words = ASKED_ABOUT.sub("", LEAD.sub("", problem))
    return (words if 0 < len(words) <= PROBLEM_MAX_CHARS else None), rest


def problem_said(text: str) -> str | None:
    """The words of a problem for the town hall said in ``text`` (as typed: the words are the resident's
    own), without the question around it (我們巷子的水溝堵住了要找誰 → 我們巷子的水溝堵住了), or None: no such
    problem, a request already written (新需求：…, 報修：…), or a question about a request already left
    (我報的路燈壞了 處理了沒) or cancelling one."""
    return _problem_split(text)[0]


def _problem_split(text: str) -> tuple[str | None, str]:
    """``_split(text)``, or (None, ``text``) when ``text`` says no problem or is about a request
    (problem_said)."""
    form = reading_form(text)
    if not PROBLEM.search(form):
        return None, text
    if (request_text_of(text) is not None or "新需求" in form or STATUS.search(form) or STATUS_BY_SUBJECT.search(form)
            or CANCEL_REQUEST.search(form)):
        return None, text
    return _split(text)


def without_problem(text: str) -> str:
    """``text`` (reading form) without the clause of a problem for the town hall (problem_said), which is
    offered as a request, not a question left unanswered; ``text`` itself when it says none."""
    words, rest = _problem_split(text)
    return rest if words is not None else text


def problem_beside_question(m: Message) -> Proposal | None:
    """今天鹿港有活動嗎 順便問一下 我們巷子的水溝堵住了要找誰: the other question routed on its own (a search or
    a limit); the offer to leave the problem as a request is added to its reply (shared.routing). A
    problem alone is left to the next rules (the 新需求 form)."""
    words, rest = _problem_split(m.text)
    if words is None:
        return None
    if not LEAD.sub("", rest).strip():
        return None
    proposal = m.route(rest)
    return proposal if proposal.tool in SEARCH_TOOLS or proposal.tool == "show_limits" else None


#: Limits about health: a problem said beside one (樹倒了 壓到人受傷) is left to the health limits.
_HEALTH = frozenset({Limit.MEDICAL, Limit.EMERGENCY})


def problem_alone(m: Message) -> Proposal | None:
    """我們巷口的垃圾車都不來 已經一個禮拜了 / 隔壁工廠噪音很大 / 路面有個大洞: a problem for the town hall said
    with no other question (problem_beside_question answers one) → the 新需求 form, with the offer to
    leave the problem as a request added to it (shared.routing). Never the directory, the weather or
    the menu; a health limit said with it (受傷) is left to the limits rule. Source: docs/design.md §4
    (a request is drafted, then confirmed) and §7 (the rules in order)."""
    if problem_said(m.text) is None or set(m.hard) & _HEALTH:
        return None
    return Proposal("handoff_info")
