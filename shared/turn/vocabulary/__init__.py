"""The offline router's vocabulary, as data: the words it reads, by ask family (events, places, limits,
small talk), and the date and holiday words (shared.turn.vocabulary.dates)."""
from __future__ import annotations

import functools

from shared.areas import COUNTY, TOWNSHIPS
from shared.diets import DIET_WORDS, UNRECORDED_DIETS
from shared.turn.vocabulary.events import EVENT_DIET_TOPICS, EVENT_TOPICS, EVENT_WORDS
from shared.turn.vocabulary.limits import LIMITS, SIDE_LIMITS
from shared.turn.vocabulary.places import ELSEWHERE, PLACE_WORDS
from shared.turn.vocabulary.talk import GREETINGS, MORE_THANKS, PEOPLE, THANKS


@functools.cache
def all_words() -> tuple[str, ...]:
    """Every word the router reads (townships, diet, event, topic, place, limit and small-talk words)."""
    names = list(TOWNSHIPS) + [name[:-1] for name in TOWNSHIPS if len(name) > 2] + [COUNTY, "彰化", "縣"]
    diets = [word for word, _ in DIET_WORDS] + [word for word, _ in UNRECORDED_DIETS] + ["素"]
    topics = [word for word, _ in EVENT_TOPICS + EVENT_DIET_TOPICS]
    limits = [word for _, words in LIMITS + SIDE_LIMITS for word in words]
    return tuple(names + diets + topics + list(EVENT_WORDS) + list(PLACE_WORDS) + limits + PEOPLE.split("|")
                 + list(GREETINGS + THANKS + MORE_THANKS) + list(ELSEWHERE))
