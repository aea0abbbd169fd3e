"""The offline router: reads free text with fixed rules when no model is configured, and as
the fallback when the model fails. It only proposes a read-only tool call; it never writes.

Rules (DESIGN §5, §7; issue 2):
- event words → ``search_local_events`` (area optional; a vague area asks which township);
- a diet word, a place word (店 / 吃 / 餐廳 …) or a township alone → ``search_local_places``;
  a vague or missing area there → ``needs_area`` with township choices;
- a written calendar date alone (12月12號) → ``search_local_events`` on that day, every township;
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


#: A negated diet word (不吃素, 沒有吃素, 不是吃素, 不吃全素, 非素食, 不用素, 不想吃蔬食 …): a negation,
#: at most one helper word, at most one verb, then the diet word. Source: issue 4 follow-up.
_NEGATED_DIET = re.compile(
    r"(?:不|沒有|沒|非|別|無須|無需|毋須)"
    r"(?:一定要|一定|需要|是|要|用|想|會|再|在|必|太|曾)?"
    r"(?:吃|找|用|食)?"
    r"(?:" + "|".join(re.escape(word) for word, diet in DIET_WORDS if diet != "any") + r")")


def _unnegated(text: str) -> tuple[str, bool]:
    """``text`` with negated diet words blanked out, and whether there was one.

    An A-not-A question (有沒有素食, 是不是素食, 要不要吃素) asks about the diet: it is not a negation.
    """
    kept, negated, at = [], False, 0
    for match in _NEGATED_DIET.finditer(text):
        start = match.start()
        if 0 < start < len(text) - 1 and text[start - 1] == text[start + 1]:
            continue  # X不X / X沒X
        kept.append(text[at:start])
        kept.append("｜")
        negated, at = True, match.end()
    kept.append(text[at:])
    return "".join(kept), negated


def diet_in(text: str) -> str | None:
    """The dietary type this text states, or None when it names none.

    不限 gives ``any``. A negated diet word is not that diet: 「我不吃素」 means the diet is not
    restricted, so it gives ``any`` (a stated condition: it overrides a remembered preference for
    this turn, and ``any`` is never stored) unless another, non-negated diet word is stated too
    (「我不吃全素，蛋奶素就好」 → ``ovo_lacto``). Diet words are matched longest first.

    Args:
        text: the user's message (never logged).
    Returns:
        ``vegetarian``, ``vegan``, ``ovo_lacto``, ``lacto``, ``any`` or None.
    Source: DESIGN §5 (dietary types), §6 (不限 is never stored); issue 4 follow-up (negation).
    """
    plain, negated = _unnegated(text)
    for word, diet in DIET_WORDS:
        if word in plain:
            return diet
    return "any" if negated else None


#: Date keywords ``date_in`` may return, besides ``md:MM-DD`` and ``YYYY-MM-DD``; the engine
#: (shared.turn.engine.resolve_date) turns each into an Asia/Taipei range with the clock.
DATE_KEYWORDS: tuple[str, ...] = (
    "today", "tomorrow", "weekend", "next_weekend", "saturday", "sunday", "next_saturday", "next_sunday",
    "this_month", "next_month",
)
#: Week words: 週六 / 周六 / 禮拜六 / 星期六 / 拜六 (colloquial).
_WEEK = r"(?:週|周|禮拜|礼拜|星期|拜)"
#: A written date with a year (2026年12月12日, 民國115年12月12號, 2026/12/12, 115/12/12).
_YMD_WORDS = re.compile(r"(?<!\d)(\d{2,4})\s*年\s*(\d{1,2})\s*月\s*(\d{1,2})(?!\d)")
_YMD_SLASH = re.compile(r"(?<![\d/])(\d{2,4})/(\d{1,2})/(\d{1,2})(?![\d/])")
#: A month and day (12月12日, 12月12號, 12月12); not 12月3場 / 12月5人 (a count, not a day).
_MD_WORDS = re.compile(r"(?<!\d)(\d{1,2})\s*月\s*(\d{1,2})(?:\s*[日號号]|(?![\d個个場场人位次天點点時时分歲岁]))")
_MD_SLASH = re.compile(r"(?<![\d/])(\d{1,2})/(\d{1,2})(?![\d/])")
#: 上週… (last week) and 下下週… (the week after next) are not read, rather than misread as this week.
_OTHER_WEEK = re.compile(rf"(?:(?<![早晚])上|下下)一?[個个]?\s*{_WEEK}")
_NEXT_WEEK = re.compile(rf"下一?[個个]?\s*{_WEEK}")
_SATURDAY = re.compile(rf"{_WEEK}\s*六")
_SUNDAY = re.compile(rf"{_WEEK}\s*[日天]")
_SATURDAY_AND_SUNDAY = re.compile(r"六\s*[、,和跟與与及或/]?\s*日")
_WEEKEND = re.compile(r"[週周]末")
_NEXT_MONTH = re.compile(r"下一?[個个]?\s*月")
_THIS_MONTH = re.compile(r"(?:這|这|本)一?[個个]?\s*月")


def explicit_date_in(text: str) -> str | None:
    """A calendar date written in the text, or None. Pure: no clock, no validity check.

    Args:
        text: the user's message; full-width digits and slashes are read too (NFKC).
    Returns:
        ``YYYY-MM-DD`` when a year is written (a 2–3 digit year is 民國: 115 → 2026);
        ``md:MM-DD`` for a month and day alone (the engine picks the year); or None.
        An impossible date (2月30日 → ``md:02-30``) is returned as written: the engine answers kindly.
    """
    text = unicodedata.normalize("NFKC", text)
    for pattern in (_YMD_WORDS, _YMD_SLASH):
        found = pattern.search(text)
        if found:
            year, month, day = (int(group) for group in found.groups())
            year += 1911 if year < 1000 else 0
            return f"{year:04d}-{month:02d}-{day:02d}"
    for pattern in (_MD_WORDS, _MD_SLASH):
        found = pattern.search(text)
        if found:
            month, day = (int(group) for group in found.groups())
            return f"md:{month:02d}-{day:02d}"
    return None


def date_in(text: str) -> str | None:
    """The date a message asks about, as a keyword resolved later with the clock; or None.

    Pure (no clock). shared.turn.engine.resolve_date turns the keyword into an Asia/Taipei range,
    end exclusive. Weeks start on Monday.

    - ``YYYY-MM-DD`` / ``md:MM-DD``: a written date (see explicit_date_in); 12月12日, 12/12.
    - ``next_saturday`` / ``next_sunday``: 下週六, 下禮拜六, 下星期日, 下禮拜天 — that day of next week.
    - ``saturday`` / ``sunday``: 週六, 禮拜六, 星期六 / 週日, 星期日, 禮拜天, 禮拜日 — the coming one
      (today when today is that day).
    - ``next_weekend``: 下週末, 下個週末, 下週六日. ``weekend``: 週末, 這週末, 週六日 (unchanged).
    - ``tomorrow``: 明天. ``today``: 今天, 今日 (unchanged).
    - ``next_month``: 下個月, 下月. ``this_month``: 這個月, 本月.

    The most specific phrase wins, in the order above (下週末 before 週末, 下禮拜六 before 禮拜六, a
    written date before 這個月); a weekend word still wins over 明天/今天, as before.
    Not read (None, so every date is listed rather than a wrong one): 上週…, 下下週…, a week
    without a day (下週), other weekdays, a month name alone (12月), ranges (12/1到12/5).

    Args:
        text: the user's message; not stored or logged.
    Returns:
        A keyword of DATE_KEYWORDS, ``md:MM-DD``, ``YYYY-MM-DD``, or None.
    """
    written = explicit_date_in(text)
    if written is not None:
        return written
    text = unicodedata.normalize("NFKC", text)
    if not _OTHER_WEEK.search(text):
        prefix = "next_" if _NEXT_WEEK.search(text) else ""
        saturday, sunday = _SATURDAY.search(text), _SUNDAY.search(text)
        if saturday and (sunday or _SATURDAY_AND_SUNDAY.search(text)):
            return prefix + "weekend"
        if saturday:
            return prefix + "saturday"
        if sunday:
            return prefix + "sunday"
        if _WEEKEND.search(text):
            return prefix + "weekend"
    if "明天" in text:
        return "tomorrow"
    if "今天" in text or "今日" in text:
        return "today"
    if _NEXT_MONTH.search(text):
        return "next_month"
    if _THIS_MONTH.search(text):
        return "this_month"
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
    written = explicit_date_in(text)
    if written is not None:  # 「12月12號」 alone: events are the only dated data
        return Proposal("search_local_events", {"area": None, "date": written, "keyword": None})
    return Proposal("show_local_help")
