"""Township resolution for Changhua County: full names, short aliases and vague areas.

The 26 townships and their aliases are loaded once, at import, from ``data/townships.json``
(a small file in the repository; deploy bundles copy ``data/`` next to ``shared/``).

Source: docs/design.md §5 (Areas: 附近 and the bare 彰化 ask for a township).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Literal, Mapping

DATA_DIR = Path(__file__).resolve().parents[1] / "data"
TOWNSHIPS_PATH = DATA_DIR / "townships.json"

COUNTY = "彰化縣"
#: Every township of the county, as a search's area (全彰化): places and events are searched in all of them.
#: Source: docs/design.md §5 (Areas); the events search's area None already means every township.
WHOLE_COUNTY = "全彰化"

#: Words for "near here": no township search can read them; a location the resident shares can
#: (shared.turn.near_me), and the township picker offers LINE's location button for it.
NEAR_WORDS: tuple[str, ...] = ("集合點附近", "這附近", "附近", "這裡", "這邊")
# Words that name a place without naming a township. "彰化" alone may be the county or the city;
# "彰化市" never reaches this list because township names are matched first.
VAGUE_WORDS: tuple[str, ...] = (*NEAR_WORDS, COUNTY, "彰化")


class UnknownArea(ValueError):
    """The value is not a Changhua township name or alias (includes vague words such as 附近, 彰化)."""


@dataclass(frozen=True)
class AreaMatch:
    """Where a piece of text points.

    Attributes:
        kind: "township" (one township found), "vague" (a place word that names no township,
            e.g. 附近 or the bare 彰化) or "none" (no place word at all).
        township: the township's full name (e.g. "花壇鄉") when kind is "township", else None.
    """

    kind: Literal["township", "vague", "none"]
    township: str | None = None


def _load_townships(path: Path) -> tuple[tuple[str, ...], Mapping[str, str], Mapping[str, str], Mapping[str, str]]:
    """Read the township list.

    Args:
        path: JSON file shaped like data/townships.json:
            {"townships": [{"name", "alias", "postal_code", "former_name"?}]}.
    Returns:
        (full names in file order, {alias: full name}, {3-digit postal code: full name},
        {former full name: full name}).
    """
    rows = json.loads(path.read_text(encoding="utf-8"))["townships"]
    names = tuple(row["name"] for row in rows)
    aliases = {row["alias"]: row["name"] for row in rows if row["alias"]}
    codes = {row["postal_code"]: row["name"] for row in rows if row.get("postal_code")}
    former = {row["former_name"]: row["name"] for row in rows if row.get("former_name")}
    return names, MappingProxyType(aliases), MappingProxyType(codes), MappingProxyType(former)


#: TOWNSHIPS: the 26 full names; ALIASES: {short alias: full name}; POSTAL_CODES: {"510": "員林市"},
#: the first three digits of a postal code (Chunghwa Post's list, named in data/townships.json);
#: FORMER_NAMES: {"員林鎮": "員林市"}, full names older addresses still carry (read by shared.address).
TOWNSHIPS, ALIASES, POSTAL_CODES, FORMER_NAMES = _load_townships(TOWNSHIPS_PATH)

# Every spelling that names exactly one township, longest first, so that 員林市 wins over 員林.
_SPELLINGS: Mapping[str, str] = MappingProxyType({**{name: name for name in TOWNSHIPS}, **ALIASES})
_LONGEST_FIRST: tuple[str, ...] = tuple(sorted(_SPELLINGS, key=len, reverse=True))


def match_area(text: str) -> AreaMatch:
    """Find the township a free-text message points at.

    The earliest township spelling in the text wins; at one position the longest spelling wins
    (員林市 before 員林). A township found anywhere beats vague words (花壇集合點附近 → 花壇鄉), so
    only text that names no township can be vague.

    Args:
        text: user text or a tool argument, any length; it is neither stored nor logged.
    Returns:
        AreaMatch("township", full name), AreaMatch("vague") for 附近 / 這附近 / 集合點附近 / 彰化 /
        彰化縣 without a township, or AreaMatch("none").
    Source: docs/design.md §5 (Areas); data/townships.json note (longest name first, bare 彰化 is ambiguous).
    """
    hits = [
        (text.find(spelling), -len(spelling), _SPELLINGS[spelling])
        for spelling in _LONGEST_FIRST
        if spelling in text
    ]
    if hits:
        return AreaMatch("township", min(hits)[2])
    if any(word in text for word in VAGUE_WORDS):
        return AreaMatch("vague")
    return AreaMatch("none")


def vague_words_in(text: str) -> tuple[str, ...]:
    """The vague area words a message says, as a reply names them, in this order: the near word
    (附近 for 這附近 and 集合點附近; 這裡, 這邊 as said), 彰化縣, and the bare 彰化 (not the one in 彰化縣).

    Args:
        text: user text in its reading form that names no township (``match_area`` says vague).
    Returns:
        E.g. ("附近",) for 附近有素食嗎, ("彰化縣",) for 彰化縣有素食嗎, ("附近", "彰化") for 彰化附近呢;
        () when it says none.
    The reply explains the word the resident actually used: 彰化縣有素食嗎 is never told why 附近
    cannot be searched.
    """
    near = next((word for word in NEAR_WORDS if word in text), None)
    words = ["附近" if near and "附近" in near else near] if near else []
    if COUNTY in text:
        words.append(COUNTY)
    if "彰化" in text.replace(COUNTY, ""):
        words.append("彰化")
    return tuple(words)


#: Every spelling as one alternation, longest first: at a position the first alternative that
#: matches is the longest spelling there (員林市 before 員林), and the scan goes on after it.
_ANY_SPELLING = re.compile("|".join(re.escape(spelling) for spelling in _LONGEST_FIRST))


def townships_in(text: str) -> list[str]:
    """Every township a message names, in the order written, each once.

    At one position the longest spelling wins (員林市 before 員林), and spellings do not overlap.
    Cost: one scan of ``text`` by a precompiled alternation of the spellings (linear in its length;
    the alternatives are plain words, so nothing backtracks), then one step per spelling found.

    Args:
        text: user text, any length; neither stored nor logged.
    Returns:
        Full township names, e.g. ["花壇鄉", "彰化市"] for 「花壇跟彰化市有素食嗎」; [] when none.
    Several townships in one message are all read, none silently dropped.
    """
    return list(dict.fromkeys(_SPELLINGS[spelling] for spelling in _ANY_SPELLING.findall(text)))


def normalize_area(value: str) -> str:
    """Validate an area argument and return the township's full name.

    Accepts a full name (花壇鄉), an alias (花壇), either with the county prefix (彰化縣花壇鄉), and
    surrounding whitespace. Free text is not accepted: use match_area for that.

    Args:
        value: a proposed area, e.g. a model's tool argument.
    Returns:
        The full township name, e.g. "花壇鄉".
    Raises:
        UnknownArea: not a township name or alias; this includes the vague 附近 and the bare 彰化,
            which callers should turn into a question (needs_area) before calling this.
    Source: docs/design.md §5 (Areas).
    """
    cleaned = value.strip()
    if cleaned.startswith(COUNTY) and cleaned != COUNTY:
        cleaned = cleaned.removeprefix(COUNTY).strip()
    try:
        return _SPELLINGS[cleaned]
    except KeyError:
        raise UnknownArea(f"not a Changhua township: {value!r}") from None


def is_vague_area(value: str) -> bool:
    """Tell whether an area argument names a place too vaguely to search.

    Args:
        value: a proposed area argument.
    Returns:
        True when match_area(value) is "vague": 附近, 這附近, 集合點附近, 彰化 or 彰化縣 with no
        township named. Blank text is "none", not vague.
    Source: docs/design.md §5 (vague areas → needs_area).
    """
    return match_area(value).kind == "vague"
