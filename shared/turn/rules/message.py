"""A message as the router's rules read it (``Message``): its reading form, the events snapshot's titles,
and the readings several rules share, each made once per message."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property

from shared.areas import townships_in
from shared.turn.ask import Limit
from shared.turn.proposal import Proposal
from shared.turn.rules.events import event_topics
from shared.turn.rules.limits import hard_limits, side_limits
from shared.turn.rules.titles import EventTitles


@dataclass(frozen=True)
class Message:
    """A message as the rules read it.

    Attributes:
        text: its reading form (shared.text), English township names written in Chinese; never logged.
        titles: the events snapshot's titles that named events are read against.
        route: routes another text with the same titles (the whole router).
        rules: routes another text with the same titles through the ordered rules only (no finishing).
    """

    text: str
    titles: EventTitles
    route: Callable[[str], Proposal] = field(compare=False, repr=False)
    rules: Callable[[str], Proposal] = field(compare=False, repr=False)

    @cached_property
    def townships(self) -> list[str]:
        """The townships said, in order (shared.areas.townships_in)."""
        return townships_in(self.text)

    @cached_property
    def hard(self) -> list[Limit]:
        """The limits no search can answer (shared.turn.rules.limits.hard_limits); the weather alone beside
        an events topic is none (下雨天有室內活動嗎: an events question, the weather said beside it)."""
        hard = hard_limits(self.text)
        return [] if self._weather_beside_topic(hard) else hard

    @cached_property
    def side(self) -> tuple[Limit, ...]:
        """The limits said beside a search (SIDE_LIMITS, what to bring, distance, the evening), and the
        weather beside an events topic."""
        weather = (Limit.WEATHER,) if self._weather_beside_topic(hard_limits(self.text)) else ()
        return tuple(side_limits(self.text)) + weather

    def _weather_beside_topic(self, hard: list[Limit]) -> bool:
        return hard == [Limit.WEATHER] and bool(event_topics(self.text, with_diet=False))
