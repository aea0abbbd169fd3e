"""What a resident reads in a reply, as ``make eval`` scores it (tests/eval/README.md): the words, the
buttons' labels, the number of messages, and what a search reply says it searched and listed.

A search reply opens with a heading that names what was searched, as the resident reads it:

* events: ``示範活動 2 筆：週末蔬食小農市集、親子繪本共讀午後（彰化市，2026/12/5（六）～2026/12/6（日））``,
  or none found: ``示範資料裡沒有找到符合「員林市，2026/12/25（五）、2026/12/31（四）」的活動。``; a topic
  is ``，關鍵字「市集」`` (``「市集」或「親子」`` for either, read as ``市集|親子``), every township ``彰化縣各鄉鎮``, every date ``近期``;
* shops: ``蔬食店家 1 家：John手作蔬食（彰化市，全素）``, or ``沒有找到符合「花壇鄉、蛋奶素」的店家。``, or
  ``這份資料目前沒有鹿港鎮的店家。`` (a township with no shops at all);
* a date LOCAL cannot read: ``我看不懂這個日期…``.

``searched`` reads that heading back into calendar days (``2026-12-05``, ``2026-12-05..2026-12-06``
inclusive, a list for dates asked apart, ``any`` for every date, ``unreadable``) and township words;
``listed`` gives the names the heading lists. Pure functions of the LINE JSON; no LOCAL imports.
"""
from __future__ import annotations

import re
from datetime import date
from typing import Any

from tools.line_messages import _walk as walk
from tools.line_messages import all_text

_EVENTS_FOUND = re.compile(r"^示範活動 \d+ 筆：(?P<rest>.*)$")
_SHOPS_FOUND = re.compile(r"^蔬食店家 \d+ 家：(?P<rest>.*)$")
_EVENTS_NONE = re.compile(r"沒有找到符合「(?P<cond>.*)」的活動。")
_SHOPS_NONE = re.compile(r"沒有找到符合「(?P<cond>.*)」的店家。")
#: A township with no shops at all is said once, without the conditions: the township searched.
_SHOPS_NO_DATA = re.compile(r"^這份資料目前沒有(?P<cond>[^「」、，。]+?)的店家。")
#: The diet a search used, as the reply says it (the no-data line above names no diet).
_DIET_SAID = re.compile(r"依你(?:說的條件|同意記住的偏好)：(?P<diet>[^。；]+)[。；]")
_DAY = re.compile(r"^(\d{4})/(\d{1,2})/(\d{1,2})（.）$")
UNREADABLE_DATE = "我看不懂這個日期"
#: How a reply names every township and every date.
WHOLE_COUNTY_WORDS = "彰化縣各鄉鎮"
EVERY_DATE_WORDS = "近期"
_OPEN, _CLOSE = "（「", "）」"


def button_labels(node: Any) -> list[str]:
    """Every action's label inside the messages (quick replies, buttons, Flex), in order, once each."""
    found: list[str] = []

    def visit(value: dict) -> bool:
        if value.get("type") in ("postback", "message", "uri", "datetimepicker") and isinstance(value.get("label"), str):
            found.append(value["label"])
        return False  # look inside it too

    walk(node, visit)
    return list(dict.fromkeys(found))


def _split_top(text: str, sep: str) -> list[str]:
    """``text`` split at ``sep`` outside （…） and 「…」."""
    parts, depth, current = [], 0, ""
    for char in text:
        depth += (char in _OPEN) - (char in _CLOSE)
        if char == sep and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += char
    return parts + [current]


def _last_group(line: str) -> tuple[str, str] | None:
    """``listing（conditions）`` → (listing, conditions): the last balanced （…） that ends the line."""
    if not line.endswith("）"):
        return None
    depth = 0
    for index in range(len(line) - 1, -1, -1):
        depth += (line[index] == "）") - (line[index] == "（")
        if depth == 0:
            return line[:index], line[index + 1:-1]
    return None


def _day(words: str) -> date | None:
    found = _DAY.match(words.strip())
    return date(int(found[1]), int(found[2]), int(found[3])) if found else None


def days_of(words: str) -> str | list[str] | None:
    """``2026/12/5（六）～2026/12/6（日）`` → ``2026-12-05..2026-12-06``; ``A、B`` → a list of two;
    ``近期`` → ``any``; None when the words are no dates."""
    if words == EVERY_DATE_WORDS:
        return "any"
    spans: list[str] = []
    for piece in words.split("、"):
        ends = [_day(end) for end in piece.split("～")]
        if not ends or None in ends or len(ends) > 2:
            return None
        spans.append("..".join(day.isoformat() for day in ends if day is not None))
    return spans[0] if len(spans) == 1 else spans


def _events_conditions(cond: str) -> dict[str, Any]:
    parts = _split_top(cond, "，")
    if parts[0].endswith(EVERY_DATE_WORDS):  # 「田尾鄉近期」: the township and every date
        parts = [parts[0].removesuffix(EVERY_DATE_WORDS), EVERY_DATE_WORDS, *parts[1:]]
    said: dict[str, Any] = {"what": "events", "township": _township(parts[0])}
    if len(parts) > 1:
        said["days"] = days_of(parts[1])
    topics = [part[len("關鍵字「"):-1].replace("」或「", "|") for part in parts[2:]
              if part.startswith("關鍵字「") and part.endswith("」")]  # 「市集」或「親子」: either
    if topics:
        said["topic"] = topics[0]
    return said


def _shops_conditions(cond: str, sep: str) -> dict[str, Any]:
    area, _, diet = cond.partition(sep)
    said: dict[str, Any] = {"what": "shops", "township": _township(area)}
    if diet:
        said["diet"] = diet
    return said


def _township(words: str) -> str:
    return "全彰化" if words == WHOLE_COUNTY_WORDS else words


def _heading(lines: list[str]) -> tuple[dict[str, Any], list[str]] | None:
    """The first search heading → (what it says was searched, the names it lists)."""
    for line in lines:
        for pattern, what in ((_EVENTS_FOUND, "events"), (_SHOPS_FOUND, "shops")):
            found = pattern.match(line)
            split = _last_group(found["rest"]) if found else None
            if split is not None:
                listing, cond = split
                said = _events_conditions(cond) if what == "events" else _shops_conditions(cond, "，")
                return said, [name for name in _split_top(listing, "、") if name]
        for pattern, what in ((_EVENTS_NONE, "events"), (_SHOPS_NONE, "shops"), (_SHOPS_NO_DATA, "shops")):
            found = pattern.search(line)
            if found:
                said = _events_conditions(found["cond"]) if what == "events" else \
                    _shops_conditions(found["cond"], "、")
                diet = next((m["diet"] for other in lines if (m := _DIET_SAID.search(other))), None)
                if pattern is _SHOPS_NO_DATA and diet:
                    said["diet"] = diet
                return said, []
    return None


def searched(messages: list[dict]) -> dict[str, Any] | None:
    """What the reply says it searched: ``{"what": "events" | "shops", "township", "days", "topic",
    "diet"}`` (the keys it names), ``{"what": "events", "days": "unreadable"}`` when it asks for the
    date again, or None when it is no search reply."""
    lines = all_text(messages).split("\n")
    heading = _heading(lines)
    if heading is not None:
        return heading[0]
    if any(UNREADABLE_DATE in line for line in lines):
        return {"what": "events", "days": "unreadable"}
    return None


def listed(messages: list[dict]) -> list[str]:
    """The names a search reply's heading lists (an ended event as ``title（已結束）``); [] for none."""
    heading = _heading(all_text(messages).split("\n"))
    return heading[1] if heading is not None else []
