"""Long messages of the shapes that stress a reader's cost (docs/conversation.md, "Reading cost is linear"): one
repeated character, a repeated township name, a repeated holiday suffix, emoji mixed with the
router's words, a repeated real sentence and random Han characters. A reader whose work grows
faster than the text shows it on these.

Used by ``make bench`` (the router-cost figure), by the router's shape test and by the webhook's
process test, so the three measure the same texts. Every text is deterministic (a fixed seed) and
exactly ``units`` UTF-16 code units long, the way LINE counts a text message's 5,000 limit
(``shared.line.limits.units``).
"""
from __future__ import annotations

import random

from shared.line.limits import units as utf16_units

#: Pieces repeated by each shape, in order. ``random`` draws Han characters instead.
_PIECES: dict[str, tuple[str, ...]] = {
    "char": ("啊",),
    "township": ("花壇",),
    "holiday": ("節日夕",),
    "emoji": ("😀", "花壇", "🙏", "？", "12/5", "活動", "👍", " ", "聖誕節", "❤️", "素食", "鹿港"),
    "sentence": ("這週末彰化市有什麼活動嗎我想去看看",),
}
#: Every shape, in the order figures and tests list them.
SHAPES: tuple[str, ...] = ("char", "township", "holiday", "emoji", "sentence", "random")
#: The three shapes of the bench figure and the webhook's process test.
BENCH_SHAPES: tuple[str, ...] = ("char", "sentence", "emoji")
#: What each shape is, in the bench table's words.
DESCRIPTIONS: dict[str, str] = {
    "char": "one character repeated (啊啊啊…)",
    "township": "a township name repeated (花壇花壇…)",
    "holiday": "a holiday suffix repeated (節日夕…)",
    "emoji": "emoji mixed with township, date and event words",
    "sentence": "a real question repeated (這週末彰化市有什麼活動嗎我想去看看…)",
    "random": "random Han characters",
}


def hostile_text(shape: str, units: int) -> str:
    """A text of ``shape`` (one of SHAPES) exactly ``units`` UTF-16 code units long.

    A piece that would pass the length is cut off; an emoji (2 units) that does not fit is
    replaced by 。 so the length is exact.

    Raises:
        KeyError: an unknown shape.
    """
    if shape == "random":
        rnd = random.Random(units)
        return "".join(chr(rnd.randint(0x4E00, 0x9FA5)) for _ in range(units))
    pieces, out, size, at = _PIECES[shape], [], 0, 0
    while size < units:
        for char in pieces[at % len(pieces)]:
            cost = utf16_units(char)
            if size + cost > units:
                char, cost = "。", 1
            out.append(char)
            size += cost
            if size == units:
                break
        at += 1
    return "".join(out)
