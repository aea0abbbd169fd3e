"""Shops by name: a shop named by its catalog name or alias (John手作蔬食, 和米), or misspelt (合米素食, jonh手作).
Rules: ``shop_named`` (its card, with a diet asked checked per shop and an events ask beside it offered
as a button) and ``shop_misspelt`` (「你是說「和米素食」嗎？」 with a button that asks again, spelt right)."""
from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from shared.areas import townships_in
from shared.diets import NOT_ASKED_TO_REMEMBER, read_diet
from shared.places.search import place_close_to, places_named_in
from shared.turn.ask import DietCheck, EventsSearch, Flag, Limit, Note, OtherPlace, SecondAsk
from shared.turn.dates import read_date
from shared.turn.proposal import Proposal
from shared.turn.rules.clauses import ASK_BREAK, clauses_read
from shared.turn.rules.places import diet_of_other, without_names
from shared.turn.rules.privacy import NO_MEMORY
from shared.turn.vocabulary.events import EVENT_WORDS

if TYPE_CHECKING:
    from shared.turn.rules.message import Message

#: A shop's hours asked (幾點, 有開嗎): not in the catalog.
_HOURS = re.compile(r"幾點|時間|休息|開嗎|有開")


def _diet_asked(t: str, named: list[dict[str, str]]) -> tuple[Note, ...]:
    """A diet asked about the named shops (哪間有全素: ``DietCheck``, the reply says per shop what
    the catalog lists), offered to remember like a search's unless it is someone else's or the user
    said not to remember."""
    asked = read_diet(without_names(t, named))[0]
    check: tuple[Note, ...] = (DietCheck(asked),) if asked is not None and asked != "any" else ()
    return check + ((Flag.DIET_OF_OTHER,) if check and diet_of_other(t) else ()) + \
        ((Flag.NOT_SAVED,) if NO_MEMORY.search(t) or NOT_ASKED_TO_REMEMBER.search(t) else ())


def _events_beside_shop(t: str, named: list[dict[str, str]]) -> tuple[SecondAsk, ...]:
    """An events ask in another clause than a named shop's (和米禮拜天有開嗎？順便問花壇這禮拜天有活動嗎) →
    a ``SecondAsk`` of events in that township on its date (offered as a button), or nothing."""
    for clause in clauses_read(ASK_BREAK.split(t)):
        if not clause or not any(word in clause for word in EVENT_WORDS) or places_named_in(clause):
            continue
        areas = townships_in(clause)
        return (SecondAsk(EventsSearch(areas[0] if areas else named[0]["area"], read_date(clause))),)
    return ()


def shop_named(m: Message) -> Proposal | None:
    """A shop named: its card (``find_place``), with the limits beside it, its hours not recorded, the
    diet asked, the other shops named (``OtherPlace``) and an events ask beside it."""
    named = places_named_in(m.text)
    if not named:
        return None
    side = m.side + ((Limit.HOURS,) if Limit.HOURS not in m.side and _HOURS.search(m.text) else ())
    first = first_shop(named, m.townships)
    others = tuple(OtherPlace(name) for name in dict.fromkeys(place["name"] for place in named) if name != first["name"])
    return Proposal("find_place", {"name": first["name"], "area": first["area"]},
                    notes=side + _diet_asked(m.text, named) + others + _events_beside_shop(m.text, named))


def first_shop(named: list[dict[str, str]], townships: tuple[str, ...] | list[str]) -> dict[str, Any]:
    """The first shop named. A name several shops share (a chain in 員林 and 彰化市): the one in a
    township the message names, else no township, so find_place lists every one of them."""
    namesakes = [place for place in named if place["name"] == named[0]["name"]]
    if len(namesakes) == 1:
        return named[0]
    said = [place for place in namesakes if place["area"] in townships]
    return said[0] if said else {**named[0], "area": None}


def shop_misspelt(m: Message) -> Proposal | None:
    """合米素食有全素嗎: 「你是說「和米素食」嗎？」; a shop of another township than one said is not what was
    meant (有糙米素食嗎 彰化市), nor a shop named after the township said (員林有素食嗎 is not 員林素食館:
    what made them alike is the township, and its search lists that shop too)."""
    close = place_close_to(m.text)
    if close is None or (m.townships and close["area"] not in m.townships):
        return None
    if close["area"] in m.townships and close["area"] in townships_in(close["spelling"]):
        return None
    return Proposal("did_you_mean", {"name": close["name"], "area": close["area"],
                                     "text": m.text.replace(close["typed"], close["spelling"], 1)}, notes=m.side)
