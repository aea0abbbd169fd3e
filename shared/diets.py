"""Dietary types: the one table of their words, for people and for the offline router.

Every reply that names a dietary type (place results, the turn engine's origin note, consent cards,
the preference view) takes its label from ``DIET_LABELS`` through ``diet_label``, so 蔬食 never reads
素食 in one reply and 蔬食 in the next. The router reads diet words with ``DIET_WORDS``.

Source: docs/design.md §5 (dietary types: vegetarian, vegan, ovo_lacto, lacto, any), §6
(「依你同意記住的偏好：蔬食」). One diet-label table, here, so every reply names a type the same way; the
words are the ones residents use.
"""
from __future__ import annotations

#: The label of each canonical type, as every reply says it.
DIET_LABELS: dict[str, str] = {
    "vegetarian": "蔬食",
    "vegan": "全素",
    "ovo_lacto": "蛋奶素",
    "lacto": "奶素",
    "any": "不限素別",
}
#: Every canonical type (a search's ``dietary_type``), and those a consent card may remember:
#: ``any`` (不限) is what "nothing remembered" already means, so it is never stored.
DIET_TYPES: tuple[str, ...] = tuple(DIET_LABELS)
SAVABLE_DIETS: tuple[str, ...] = tuple(kind for kind in DIET_TYPES if kind != "any")

#: Words residents type for each type, matched longest first on text that is NFKC-normalised,
#: converted to Traditional and case-folded (so VEGAN, Vegan and vegan are one word).
#: A phrase goes before any word it contains (不吃蛋的素 before 素, 蛋奶素 before 奶素).
DIET_WORDS: tuple[tuple[str, str], ...] = (
    ("不吃蛋的素", "lacto"),
    ("不吃蛋素", "lacto"),
    ("蛋奶素", "ovo_lacto"),
    ("奶蛋素", "ovo_lacto"),
    ("ovo-lacto", "ovo_lacto"),
    ("lacto-ovo", "ovo_lacto"),
    ("全素", "vegan"),
    ("純素", "vegan"),
    ("vegan", "vegan"),
    ("奶素", "lacto"),
    ("不限", "any"),
    ("蔬食", "vegetarian"),
    ("素食", "vegetarian"),
    ("吃素", "vegetarian"),
    ("vegetarian", "vegetarian"),
    ("veggie", "vegetarian"),
    ("素", "vegetarian"),
)

#: Finer types that the catalog does not record. One rule for all of them:
#: the search, and a remembered preference, use 蔬食 (``vegetarian``: shops with any vegetarian dish,
#: the broadest recorded vegetarian type, which still serves every finer kind of 素), and the reply
#: names the finer word and says it is not recorded; it never says 「依你說的條件」 about it.
#: Matched before DIET_WORDS.
UNRECORDED_DIETS: tuple[tuple[str, str], ...] = (
    ("五辛素", "vegetarian"),   # vegetarian that eats the five pungent plants
    ("方便素", "vegetarian"),   # eats the vegetables of any dish
    ("鍋邊素", "vegetarian"),   # same as 方便素
    ("肉邊素", "vegetarian"),
    ("蛋素", "vegetarian"),     # eggs but no dairy
    ("可以吃蛋", "vegetarian"),  # same: eggs are fine, dairy not said
    ("早齋", "vegetarian"),     # vegetarian in the morning only
    ("初一十五", "vegetarian"),  # vegetarian on the 1st and 15th of the lunar month
)


def diet_label(dietary_type: str | None) -> str:
    """The words for a canonical type.

    Args:
        dietary_type: a canonical type, or None (left open).
    Returns:
        「蔬食」 for ``vegetarian``, …; 「不限素別」 for ``any`` or None; an unknown value unchanged.
    """
    return DIET_LABELS.get(dietary_type or "any", dietary_type or DIET_LABELS["any"])
