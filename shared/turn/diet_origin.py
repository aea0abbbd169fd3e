"""Which dietary condition a place search uses, and where it came from (docs/design.md §7).

Precedence: a diet stated in this turn (an explicit 不限 included, as ``any``) → ``this_turn``;
else the consented memory → ``consented_memory``; else ``any`` → ``none``. The stored value only
fills a condition the question leaves open; it never overrides what the user said.
Source: docs/design.md §7; seed 002_d5c18bd8b8d888e9.txt (「當次明示條件優先，長期偏好只補空缺」).
"""
from __future__ import annotations

from dataclasses import dataclass

from shared.memory.store import PreferenceSnapshot
from shared.places.search import normalize_dietary_type

THIS_TURN = "this_turn"
CONSENTED_MEMORY = "consented_memory"
NONE = "none"


@dataclass(frozen=True)
class EffectiveDiet:
    """The diet a search runs with: ``dietary_type`` (canonical, ``any`` when open) and ``origin``."""

    dietary_type: str
    origin: str


#: Remembered types finer than 蔬食 (``vegetarian``): a plain 素食 said this turn does not override them.
FINER_THAN_VEGETARIAN = frozenset({"vegan", "ovo_lacto", "lacto"})


def resolve_diet(proposed: str | None, snapshot: PreferenceSnapshot | None, *,
                 generic: bool = False) -> EffectiveDiet:
    """Apply the precedence to one proposed ``dietary_type``.

    Args:
        proposed: the diet argument the router or model proposed; None or "" means left open.
        snapshot: the preference read at the start of the turn, or None when it could not be read.
        generic: the proposed ``vegetarian`` came from a plain 素食 / 蔬食 that names no finer type
            (the router's ``generic_diet`` note). It leaves the finer type open, so a remembered
            全素 / 蛋奶素 / 奶素 fills it (``consented_memory``).
    Returns:
        EffectiveDiet.
    Raises:
        UnknownDietaryType: ``proposed`` is not a known type.
    """
    if proposed is not None and proposed.strip():
        stated = normalize_dietary_type(proposed)
        if generic and stated == "vegetarian" and snapshot is not None and \
                snapshot.dietary_type in FINER_THAN_VEGETARIAN:
            return EffectiveDiet(snapshot.dietary_type, CONSENTED_MEMORY)
        return EffectiveDiet(stated, THIS_TURN)
    if snapshot is not None and snapshot.dietary_type:
        return EffectiveDiet(snapshot.dietary_type, CONSENTED_MEMORY)
    return EffectiveDiet("any", NONE)
