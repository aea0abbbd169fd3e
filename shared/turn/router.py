"""The offline router: reads free text with fixed rules when no model is configured, and as
the fallback when the model fails. It only proposes a read-only tool call; it never writes.

Rules (DESIGN §5, §7; issue 2):
- event words → ``search_local_events`` (area optional; a vague area asks which township);
- a diet word, a place word (店 / 吃 / 餐廳 …) or a township alone → ``search_local_places``;
  a vague or missing area there → ``needs_area`` with township choices;
- anything else → ``show_local_help``.
"""
from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from typing import Any

from shared.areas import match_area

#: Diet words, longest first so that 蛋奶素 is not read as 奶素 or 素. Source: DESIGN §5.
DIET_WORDS: tuple[tuple[str, str], ...] = (
    ("蛋奶素", "ovo_lacto"),
    ("全素", "vegan"),
    ("純素", "vegan"),
    ("奶素", "lacto"),
    ("不限", "any"),
    ("蔬食", "vegetarian"),
    ("素食", "vegetarian"),
    ("吃素", "vegetarian"),
    ("素", "vegetarian"),
)
EVENT_WORDS: tuple[str, ...] = ("活動", "市集", "展覽", "講座", "走讀", "表演", "節目", "課程")
PLACE_WORDS: tuple[str, ...] = ("店", "吃", "餐廳", "餐", "小吃", "料理")


@dataclass(frozen=True)
class Proposal:
    """A proposed read-only tool call.

    Attributes:
        tool: ``search_local_places``, ``search_local_events``, ``needs_area`` or ``show_local_help``.
        args: the tool's arguments (strings or None); ``needs_area`` carries ``kind``.
        source: ``offline_router`` (or ``model`` when the agent proposed it).
    """

    tool: str
    args: dict[str, Any] = field(default_factory=dict)
    source: str = "offline_router"


def diet_in(text: str) -> str | None:
    """The dietary type this text states, or None. 不限 gives ``any``."""
    for word, diet in DIET_WORDS:
        if word in text:
            return diet
    return None


def date_in(text: str) -> str | None:
    """A date keyword the events search understands: ``today``, ``tomorrow``, ``weekend`` or None."""
    if "週末" in text or "周末" in text or "禮拜六" in text or "星期六" in text:
        return "weekend"
    if "明天" in text:
        return "tomorrow"
    if "今天" in text or "今日" in text:
        return "today"
    return None


def route(text: str) -> Proposal:
    """Propose one read-only tool call for a free-text message.

    Args:
        text: the user's message; not stored or logged.
    Returns:
        A Proposal; the caller validates and runs it.
    """
    area = match_area(text)
    township = area.township if area.kind == "township" else None
    if any(word in text for word in EVENT_WORDS):
        if area.kind == "vague":
            return Proposal("needs_area", {"kind": "events"})
        return Proposal("search_local_events", {"area": township, "date": date_in(text), "keyword": None})
    diet = diet_in(text)
    wants_place = diet is not None or any(word in text for word in PLACE_WORDS)
    if wants_place or area.kind == "township":
        if township is None:
            return Proposal("needs_area", {"kind": "places", "dietary_type": diet})
        return Proposal("search_local_places", {"area": township, "dietary_type": diet, "keyword": None})
    if area.kind == "vague":
        return Proposal("needs_area", {"kind": "places", "dietary_type": None})
    return Proposal("show_local_help")
