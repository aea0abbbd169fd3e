"""Dietary conditions a consent card may store; their words come from shared.diets (one table).

Source: docs/design.md §5 (dietary types), §6 (one dietary condition per account).
"""
from __future__ import annotations

from shared.diets import DIET_LABELS, SAVABLE_DIETS, diet_label

#: ``SAVABLE_DIETS``: the types that can be remembered (every type but ``any``, which is what
#: "nothing remembered" already means).
__all__ = ["DIET_LABELS", "SAVABLE_DIETS", "diet_label"]
