"""Dietary conditions a consent card may store; their words come from shared.diets (one table).

Source: DESIGN §5 (dietary types), §6 (one dietary condition per account).
"""
from __future__ import annotations

from shared.diets import DIET_LABELS, diet_label

__all__ = ["DIET_LABELS", "SAVABLE_DIETS", "diet_label"]

#: Types that can be remembered. ``any`` (不限) is not a preference: it is what "nothing
#: remembered" already means, so it is never stored.
SAVABLE_DIETS: tuple[str, ...] = ("vegetarian", "vegan", "ovo_lacto", "lacto")
