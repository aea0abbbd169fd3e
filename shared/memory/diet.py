"""Dietary conditions a consent card may store, and their words for people.

Source: DESIGN §5 (dietary types), §6 (one dietary condition per account).
"""
from __future__ import annotations

#: Types that can be remembered. ``any`` (不限) is not a preference: it is what "nothing
#: remembered" already means, so it is never stored.
SAVABLE_DIETS: tuple[str, ...] = ("vegetarian", "vegan", "ovo_lacto", "lacto")

#: zh-TW words for each type, as the cards and the turn engine say them.
DIET_LABELS: dict[str, str] = {
    "vegetarian": "蔬食",
    "vegan": "全素",
    "ovo_lacto": "蛋奶素",
    "lacto": "奶素",
    "any": "不限素別",
}


def diet_label(dietary_type: str | None) -> str:
    """「蔬食」 for ``vegetarian``; 「不限素別」 for ``any`` or None."""
    return DIET_LABELS.get(dietary_type or "any", dietary_type or "不限素別")
