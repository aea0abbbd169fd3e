"""Read a resident's message the same way whatever its width, script or letter case.

``reading_form`` is what the offline router matches its vocabulary against; it is never shown or
stored (replies are written from fixed templates in Traditional Chinese).

- width and compatibility forms: ``unicodedata`` NFKC (１２／５ → 12/5, ＶＥＧＡＮ → VEGAN, ： → :);
- Simplified → Traditional (Taiwan phrases): OpenCC ``s2twp`` (员林有素食吗 → 員林有素食嗎);
- Latin letters: ``str.casefold`` (Vegan → vegan);
- Taiwanese written with Mandarin or zhuyin letters: 呷 is 吃 (呷菜, 呷素), ㄟ is 的 (呷菜ㄟ店).

Every layer reads text this way (the router, the memory phrases, the staff commands), so it sits in
the base layer. Source: https://github.com/BYVoid/OpenCC (s2twp: Simplified to Taiwan
Traditional with phrases); https://docs.python.org/3/library/unicodedata.html#unicodedata.normalize.
"""
from __future__ import annotations

import functools
import re
import unicodedata

import opencc


@functools.lru_cache(maxsize=1)
def _converter() -> opencc.OpenCC:
    """OpenCC's converter, built once per process (it loads its dictionaries)."""
    return opencc.OpenCC("s2twp")


#: Taiwanese spellings read as the Mandarin word the vocabulary holds (呷菜ㄟ店 → 吃菜的店).
_TAIWANESE = str.maketrans({"呷": "吃", "ㄟ": "的"})


def reading_form(text: str) -> str:
    """The text as the router reads it: NFKC, Traditional (Taiwan), case-folded, spaces collapsed.

    Args:
        text: the user's message, any script or width (never logged).
    Returns:
        The normalised text. Traditional input comes back unchanged apart from width, case and
        space; 台 becomes 臺 (OpenCC's Taiwan standard), so vocabulary lists both where it matters.
    """
    folded = unicodedata.normalize("NFKC", text or "")
    folded = _converter().convert(folded).translate(_TAIWANESE)
    return " ".join(folded.casefold().split())


#: Spaces and the marks people put around a short reply (，。！？~…).
_SPACES_AND_MARKS = re.compile(r"[\s，,。.！!？?~～…、]+")


def short_reply_form(text: str, max_chars: int) -> str | None:
    """A short whole message (算了吧！, 我已經不吃素了。) in its reading form with spaces and marks taken
    out, for a whole-message match; None when it is empty or longer than ``max_chars`` characters as
    typed (not read at all: the cost stays bounded)."""
    if not text or len(text) > max_chars:
        return None
    return _SPACES_AND_MARKS.sub("", reading_form(text))
