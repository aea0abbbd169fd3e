"""The offline router: reads a resident's free text with fixed rules, deterministically and without a
model. It is the embedded default and the model's fallback. It only proposes; it never writes.

``route(text, titles)`` → ``Proposal``: the text is read in its reading form (shared.text: NFKC
width, OpenCC Simplified → Traditional, case-folded Latin, English township names in Chinese), then
``RULES`` in order, the first that answers; then ``FINISHING`` adds what the reply must also say. The
rules of each ask family are in shared.turn.rules.*, their words in shared.turn.vocabulary.*, dates in
shared.turn.dates, diets in shared.diets. Source: docs/design.md §5, §7.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable

from shared import diets
from shared.text import reading_form
from shared.turn.dates import read_date
from shared.turn.datespec import DateSpec
from shared.turn.proposal import Proposal
from shared.turn.rules import (
    details,
    follow_ups,
    handoff,
    items,
    limits,
    places,
    privacy,
    problems,
    shops,
    talk,
    two_asks,
)
from shared.turn.rules.limits import is_emergency, is_fraud
from shared.turn.rules.message import Message
from shared.turn.rules.search import search
from shared.turn.rules.titles import EventTitles, demo_titles, titles_of
from shared.turn.rules.townships import english_places

__all__ = ["FINISHING", "RULES", "Proposal", "date_in", "diet_in", "is_emergency", "is_fraud", "read_diet", "route",
           "township_typo"]

Rule = Callable[[Message], "Proposal | None"]


def _nothing_said(m: Message) -> Proposal | None:
    return Proposal("show_local_help") if not m.text else None


def _search(m: Message) -> Proposal:
    return search(m.text, m.side, m.titles)


def _follow_up(m: Message) -> Proposal | None:
    """A follow-up or a correction (shared.turn.rules.follow_ups), with the message as the other rules
    read it (``alone``: the answer when there is no conversation to follow)."""
    follow_up = follow_ups.follow_up_in(m)
    if follow_up is None:
        return None
    return Proposal(follow_ups.FOLLOW_UP_TOOL, {"follow_up": follow_up,
                                                "alone": _route(m.text, m.titles, read_follow_ups=False)})


#: The rules, in order: the first that answers is the proposal.
RULES: tuple[tuple[str, Rule], ...] = (
    ("nothing said → the menu", _nothing_said),
    ("crisis or emergency (想去死, 跌倒了起不來) → the safety reply, before anything", limits.safety),
    ("a likely scam (有人打電話說我中獎要先匯錢) → the 165 warning, before any directory", limits.fraud),
    ("an item of the last list (第三個在哪裡集合, 剛剛那家在哪) → that item's record", items.item_ref),
    ("a follow-up or a correction (那下禮拜呢, 不是啦 我是說鹿港) → the last search, changed", _follow_up),
    ("thanks alone → thanks", talk.thanks_alone),
    ("a greeting alone → greeting", talk.greeting_alone),
    ("forget my diet (以後不用記了，刪掉) → privacy, led by the forget button", privacy.forget),
    ("never asked to be remembered (我又沒說要你記住) → ack, nothing kept", privacy.never_asked),
    ("a search beside 不用記 → the search, nothing kept", privacy.search_beside_no_memory),
    ("ok, or 不用記 alone → ack", privacy.no_memory_or_ok),
    ("what LOCAL is (你們是誰) → greeting", talk.about),
    ("a request to create one (幫我建立服務單：…) → the 新需求 form", handoff.request_draft),
    ("a town-hall problem inside another question (…順便問一下 水溝堵住了要找誰) → that question",
     problems.problem_beside_question),
    ("my request's status or cancelling it → status / how to cancel", handoff.request_status),
    ("a town-hall problem said alone (垃圾車都不來, 隔壁工廠噪音很大) → the 新需求 form", problems.problem_alone),
    ("who sees my data → privacy (sharing)", privacy.sharing),
    ("what LOCAL keeps (我的資料) → privacy, or the search beside it", privacy.privacy),
    ("health, transport, parking, weather … → the limits, or the search beside them", limits.hard_limit),
    ("outside Changhua County (台中) → elsewhere", limits.elsewhere),
    ("politics or religion (該投誰, 哪個宗教比較好) → no side taken", limits.stance),
    ("writing, chatting, general knowledge (幫我寫一首詩) → what LOCAL answers", limits.off_topic),
    ("a shop by name (和米) → its card", shops.shop_named),
    ("a misspelt shop (合米素食) → did you mean", shops.shop_misspelt),
    ("asking a person to act (請人打電話給我) → the 新需求 form", handoff.person_asked),
    ("an office, phone or address (彰化縣政府電話幾號) → no directory", limits.directory),
    ("a misspelt township (溪胡還是員林) → did you mean", places.township_misspelt),
    ("a bare follow-up (那鹿港呢) → events or shops?", places.follow_up),
    ("two asks (週末彰化市有活動嗎？順便推薦附近的素食店) → the first, the other as a button", two_asks.two_asks),
    ("events or places (or what is left) → the search", _search),
)

#: After the rules, in order: the questions left unanswered (要帶水嗎), the whole county as every
#: township (全彰化有全素的店嗎), and a greeting that opened the message (早上好 今天有什麼活動).
FINISHING: tuple[Callable[[Message, Proposal], Proposal], ...] = (
    details.with_details, places.every_township, talk.greeted)


def _message(text: str, titles: EventTitles) -> Message:
    return Message(english_places(reading_form(text)), titles,
                   route=lambda again: _route(again, titles), rules=lambda again: _rules(again, titles))


def _first(m: Message, *, read_follow_ups: bool = True) -> Proposal:
    """The first proposal of RULES (without the follow-up row when ``read_follow_ups`` is False)."""
    return next(proposal for _, rule in RULES if (read_follow_ups or rule is not _follow_up)
                and (proposal := rule(m)) is not None)


def _rules(text: str, titles: EventTitles) -> Proposal:
    return _first(_message(text, titles))


def _route(text: str, titles: EventTitles, *, read_follow_ups: bool = True) -> Proposal:
    m = _message(text, titles)
    proposal = _first(m, read_follow_ups=read_follow_ups)
    if proposal.tool == follow_ups.FOLLOW_UP_TOOL:  # its ``alone`` reading was finished already
        return proposal
    for finish in FINISHING:
        proposal = finish(m, proposal)
    return proposal


def route(text: str, titles: Iterable[str] | None = None) -> Proposal:
    """Propose one action for a free-text message.

    Args:
        text: the user's message as typed (any width or script); not stored or logged.
        titles: the current events snapshot's titles, as recorded, that named events are read against
            (鹿港龍舟賽 → 龍舟賽 of 鹿港慶端陽龍舟賽); None: the demo snapshot's.
    Returns:
        A Proposal (RULES, then FINISHING); the caller validates and runs it.
    """
    return _route(text, demo_titles() if titles is None else titles_of(tuple(titles)))


def township_typo(t: str, titles: Iterable[str] | None = None) -> tuple[str, str, list[str]] | None:
    """shared.turn.rules.places.township_typo on ``t`` (reading form); titles as for ``route``."""
    return places.township_typo(t, demo_titles() if titles is None else titles_of(tuple(titles)))


def read_diet(text: str) -> tuple[str | None, str | None]:
    """shared.diets.read_diet on the reading form of ``text`` (a message as typed)."""
    return diets.read_diet(reading_form(text))


def diet_in(text: str) -> str | None:
    """shared.diets.diet_in on the reading form of ``text`` (a message as typed)."""
    return diets.diet_in(reading_form(text))


def date_in(text: str) -> DateSpec | None:
    """The date a message asks about (shared.turn.dates.read_date on its reading form)."""
    return read_date(reading_form(text))
