"""Read a request to remember or correct a dietary preference from free text, without the model.

Rules (DESIGN §6; seed 002_d5c18bd8b8d888e9.txt — 「今天想吃素」 is not 「以後幫我記住」):
- negated (不要記住, 別記, 不用幫我記, 以後不要…) → nothing;
- correct: 改成 / 改為 / 換成 / 更正為 followed by a diet word (改成蛋奶素) → ``correct``;
- remember needs a cue for later:
  - an explicit request to LOCAL: 記住 / 記下 / 幫我記, or a "from now on" word followed by an
    instruction (以後都幫我…, 以後優先…, 之後請…);
  - or a "from now on" habit (以後都吃素, 每次都…);
- reported speech about someone else's habit (朋友說他吃素, 她說以後都吃素) is not a request,
  unless the user also explicitly asks LOCAL to remember: the preference then belongs to the LINE
  account that asked, even when the diet is a companion's (長輩吃素，以後優先找蔬食，幫我記住);
- a one-off condition (今天想吃素) has no cue for later and is left to the place search.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from shared.turn.router import diet_in

_NEGATED = re.compile(r"(不要|不用|別|不必|不需要|無須|毋須|免|先不要)(幫我|替我|再|先|你)?(記|存|保存)"
                      r"|(以後|之後|往後|今後)(都)?(不要|別|不用)")
_CORRECT = re.compile(r"(改成|改為|改吃|換成|更正為|更正成|更改為)")
_EXPLICIT = re.compile(r"記住|記下|幫我記"
                       r"|(以後|之後|往後|今後|每次)(都|也|就|一律)?(要)?(幫我|請|給我|優先|一律|只找|只要)")
_HABIT = re.compile(r"(以後|之後|往後|今後|每次)(都|也都|一律|一樣|只)")
_REPORTED = re.compile(r"聽說|說(他|她)|(他|她)(們)?說|(他|她)(們)?(以後|之後|平常|現在|一直|都|也)")


@dataclass(frozen=True)
class MemoryRequest:
    """A request about the remembered diet.

    Attributes:
        kind: ``remember`` or ``correct``.
        dietary_type: the diet the text names (``any`` for 不限), or None when it names none.
    """

    kind: str
    dietary_type: str | None


def read_memory_request(text: str) -> MemoryRequest | None:
    """Tell whether ``text`` asks LOCAL to remember (or correct) a dietary condition for later.

    Args:
        text: the user's message (never logged).
    Returns:
        MemoryRequest, or None when the text is not such a request (negated, reported, one-off).
    Source: DESIGN §6; seed 002_d5c18bd8b8d888e9.txt.
    """
    compact = re.sub(r"\s+", "", text or "")
    if not compact or _NEGATED.search(compact):
        return None
    correct = _CORRECT.search(compact)
    if correct:
        diet = diet_in(compact[correct.end():])
        if diet is not None:
            return MemoryRequest("correct", diet)
    explicit = _EXPLICIT.search(compact)
    if not explicit and not _HABIT.search(compact):
        return None
    if _REPORTED.search(compact) and not explicit:
        return None
    diet = diet_in(compact)
    if diet is None and not explicit:
        return None  # 「以後都有活動嗎」: a habit word without a diet is not about memory
    return MemoryRequest("remember", diet)
