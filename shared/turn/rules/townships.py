"""Townships as a message says them: English names written in Chinese, township spellings taken out,
the short name residents say."""
from __future__ import annotations

import re

from shared.areas import townships_in
from shared.turn.vocabulary.places import ENGLISH_TOWNSHIPS

_ENGLISH_PLACE = re.compile(
    r"(?<![a-z])(" + "|".join(re.escape(name) for name, _ in ENGLISH_TOWNSHIPS) + r")"
    r"(?:\s+(?:city|township|town))?(?![a-z])")
_ENGLISH_NAMES = dict(ENGLISH_TOWNSHIPS)


def english_places(t: str) -> str:
    """``t`` with English township names written in Chinese (changhua city → 彰化市, Lukang → 鹿港鎮)."""
    if not _ENGLISH_PLACE.search(t):
        return t
    return _ENGLISH_PLACE.sub(lambda found: f" {_ENGLISH_NAMES[found.group(1)]} ", t).strip()


def strip_townships(text: str) -> str:
    """``text`` without its township spellings (full names and aliases)."""
    for name in sorted(townships_in(text), key=len, reverse=True):
        text = text.replace(name, "")
        short = name[:-1]
        text = text.replace(short, "") if len(short) >= 2 else text
    return text


def short_name(township: str) -> str:
    """溪湖鎮 → 溪湖 (the name residents say); a two-character name stays whole."""
    return township[:-1] if len(township) > 2 else township
