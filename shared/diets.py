"""Dietary types: the one table of their words, for people and for the offline router.

Every reply that names a dietary type (place results, the turn engine's origin note, consent cards,
the preference view) takes its label from ``DIET_LABELS`` through ``diet_label``, so 蔬食 never reads
素食 in one reply and 蔬食 in the next. The router reads diet words with ``DIET_WORDS``.

Source: docs/design.md §5 (dietary types: vegetarian, vegan, ovo_lacto, lacto, any), §6
(「依你同意記住的偏好：蔬食」). One diet-label table, here, so every reply names a type the same way; the
words are the ones residents use.
"""
from __future__ import annotations

import re

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
    ("吃菜", "vegetarian"),     # Taiwanese 食菜 / 呷菜: eats vegetarian (呷 reads as 吃: shared.text)
    ("食菜", "vegetarian"),
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


# -- Reading the diet a message states: one reader for the offline router (shared.turn.router) and the
# memory phrases (shared.memory.phrases), on the message's reading form (shared.text). --------------

def has_word(text: str, word: str) -> bool:
    """``word`` in ``text``; a Latin word must stand alone (vegan in 彰化市vegan, not in vegans-only)."""
    if not word.isascii() or word not in text:  # the scan below only for a Latin word the text holds
        return word in text
    return re.search(rf"(?<![a-z]){re.escape(word)}(?![a-z])", text) is not None


#: A negated diet word (不吃素, 沒有吃素, 不是吃素, 不吃全素, 非素食, 不用素, 不想吃蔬食 …): a negation,
#: at most one helper word, at most one verb, then the diet word.
_NEGATED_DIET = re.compile(
    r"(?:不|沒有|沒|非|別|無須|無需|毋須)"
    r"(?:一定要|一定|需要|是|要|用|想|會|再|在|必|太|曾)?"
    r"(?:幫我|替我|給我|幫忙)?(?:再)?"
    r"(?:吃|找|用|食|查)?"
    r"(?:" + "|".join(re.escape(word) for word, diet in DIET_WORDS
                      if diet != "any" and not word.startswith("不") and not word.isascii()) + r")")

#: Every diet word, the finer unrecorded ones included, longest first (不吃蛋的素 before 素):
#: (word, dietary type, unrecorded).
ALL_DIET_WORDS: tuple[tuple[str, str, bool], ...] = tuple(sorted(
    [(word, diet, False) for word, diet in DIET_WORDS] + [(word, diet, True) for word, diet in UNRECORDED_DIETS],
    key=lambda entry: -len(entry[0])))


def unnegated(text: str) -> tuple[str, bool]:
    """``text`` with negated diet words blanked out (by ｜), and whether there was one.

    An A-not-A question (有沒有素食, 是不是素食, 要不要吃素) asks about the diet: it is not a negation.
    """
    kept, negated, at = [], False, 0
    for match in _NEGATED_DIET.finditer(text):
        start = match.start()
        if 0 < start < len(text) - 1 and text[start - 1] == text[start + 1]:
            continue  # X不X / X沒X
        kept.append(text[at:start])
        kept.append("｜")
        negated, at = True, match.end()
    kept.append(text[at:])
    return "".join(kept), negated


#: Saying eggs are out (不吃蛋, 不能吃蛋, 蛋不行, 對蛋過敏 …): beside a vegetarian ask it means 奶素
#: (lacto: no meat, no eggs).
NO_EGG = re.compile(r"(?:不|不能|不可以|不敢|沒辦法|無法)(?:吃|碰|要|加)(?:雞)?蛋|不要有蛋"
                    r"|蛋(?:不行|不能吃|不可以吃?|都不吃|不吃|會過敏|過敏)|對蛋過敏|不含蛋|無蛋|去蛋")
#: Leaving out the five pungent plants (不吃蔥蒜, 不吃五辛, 不加蔥蒜, 無五辛, 不要洋蔥): the catalog does
#: not record it. Beside a diet word it is that diet; alone it is a vegetarian ask (only 素 leaves
#: them out); either way the reply says the catalog does not record it.
NO_PUNGENT = re.compile(
    r"(?:不|不能|不可以|不敢|沒辦法|無法|不要|不想|忌|避開|避免|去|無|沒有|不含|不加|不放)(?:吃|加|放|碰|要|含|用)?(?:任何)?(?:的)?"
    r"(?P<plant>五辛|蔥蒜|蔥|蒜頭|大蒜|蒜|韭菜|韭|洋蔥|蕎頭|興渠)"
    r"|(?P<free>五辛|蔥蒜)(?:都)?(?:不吃|不行|不能吃|不要|不加|免|去掉)")
#: Leaving out dairy (不喝牛奶, 不吃奶製品, 乳糖不耐, 對奶過敏; not 不吃奶素, a negated diet): with no
#: eggs either it is 全素, applied; alone it is 蛋素, which the catalog does not record (named).
NO_DAIRY = re.compile(r"(?:不|不能|不可以|不敢|沒辦法|無法|不想)(?:吃|喝|碰|加|要)(?:牛)?(?:奶|乳)(?:蛋)?(?:製品|類)?(?!素)"
                      r"|(?:奶|乳)(?:類|製品)?(?:不行|不能吃|不吃|都不吃|會過敏|過敏)|乳糖不耐|對(?:牛)?奶過敏|不含奶|無奶|不要有奶")
#: Other food conditions beside a vegetarian ask (不吃辣, 對花生過敏, 無麩質): the catalog records none;
#: each is named as not recorded, never dropped.
OTHER_FOOD = re.compile(
    r"(?:不|不能|不可以|不敢|沒辦法|無法|不想)(?:吃|碰|加|要)(?:任何)?(?:的)?"
    r"(?:辣|花生|堅果|麩質|小麥|麵筋|黃豆|大豆|豆類|豆製品|菇類|香菇|菇|芋頭|香菜|芹菜|味精|油炸|炸的|甜|糖)"
    r"|(?:對)?(?:花生|堅果|麩質|小麥|黃豆|大豆|菇類|香菇|芒果|奇異果)(?:會)?過敏"
    r"|無麩質|不含麩質|低糖|無糖|少糖|低鹽|少鹽|少油|低油|低鈉|清淡")
#: Saying one never asked to be remembered, or complaining about the offer (我又沒說要你記住 幹嘛一直問,
#: 誰叫你記住的): never an offer to remember; the reply says nothing is kept without 同意記住.
#: The memory phrases read it as no request.
NOT_ASKED_TO_REMEMBER = re.compile(
    r"(?:沒|沒有|又沒|並沒有|不是|又不是)(?:說|叫|要|請|讓|拜託)(?:要|過)?(?:你|妳|你們)?(?:幫我)?(?:記|存)"
    r"|誰(?:叫|要|讓|請)(?:你|妳|你們)(?:幫我)?(?:記|存)|幹嘛(?:要|一直|又|老是)?(?:幫我)?(?:記|存)"
    r"|(?:幹嘛|為什麼|為何)(?:一直|又|老是)?(?:問|叫)我?(?:要不要)?(?:記|存)")


def _conditions(form: str) -> list[str]:
    """Every food condition said beside a diet that the catalog does not record, as said, in order."""
    found = [match for pattern in (NO_PUNGENT, NO_DAIRY, OTHER_FOOD) for match in pattern.finditer(form)]
    words: list[str] = []
    for match in sorted(found, key=lambda m: m.start()):
        if match.group(0) not in words and not any(match.group(0) in word for word in words):
            words.append(match.group(0))
    return words


def _joined(words: list[str]) -> str | None:
    """Words joined by 、, each once, or None when there are none."""
    return "、".join(dict.fromkeys(words)) or None


def _diet_said(word: str, diet: str, unrecorded: bool, conditions: list[str],
               no_egg: bool, no_dairy: bool) -> tuple[str, str | None]:
    """The diet of a diet word read, with the food conditions said beside it (see read_diet)."""
    if diet == "vegetarian" and no_egg and no_dairy:  # 吃素 不吃蛋也不喝奶: 全素
        return "vegan", _joined(([word] if unrecorded else []) + [w for w in conditions if not NO_DAIRY.fullmatch(w)])
    if diet == "vegetarian" and no_egg:  # 我媽不吃蛋，花壇有素食嗎: vegetarian without eggs
        return "lacto", _joined(([word] if unrecorded else []) + conditions)
    if unrecorded:
        return diet, "、".join([word] + [w for w in conditions if w != word])
    if diet == "vegan":  # 全素 has no dairy already: only the other conditions are named
        conditions = [w for w in conditions if not NO_DAIRY.fullmatch(w)]
    return diet, "、".join(conditions) or None


def read_diet(form: str) -> tuple[str | None, str | None]:
    """The dietary condition a message states, and the finer word the catalog does not record.

    Args:
        form: the message in its reading form (shared.text.reading_form: NFKC, Traditional,
            case-folded); never logged.
    Returns:
        (dietary_type or None, unrecorded word or None). 五辛素 → ("vegetarian", "五辛素");
        鍋邊素 → ("vegetarian", "鍋邊素") (UNRECORDED_DIETS); vegan → ("vegan", None); 奶蛋素 → ("ovo_lacto", None);
        不吃蛋的素 / 不吃蛋…素食 → ("lacto", None); a negated diet (我不吃素) → ("any", None) unless another one is
        stated too; no diet word → (None, None). Leaving out the pungent plants (不吃蔥蒜, 不吃五辛) is
        unrecorded: 不吃蔥蒜 → ("vegetarian", "不吃蔥蒜"); 全素不吃五辛 → ("vegan", "不吃五辛").
        Every condition said is kept: several unrecorded words are joined by 、
        (我吃鍋邊素 不吃蔥蒜 → ("vegetarian", "鍋邊素、不吃蔥蒜")); beside a vegetarian ask, no eggs and no
        dairy is 全素 (applied), no dairy alone is named (素食 不喝牛奶 → ("vegetarian", "不喝牛奶")), and other
        food conditions are named (素食 不吃辣 → ("vegetarian", "不吃辣")).
    Source: docs/design.md §5 (dietary types).
    """
    plain, negated = unnegated(form)
    # finer types said beside a recorded word (我阿母吃早齋 花壇有素食店嗎: 素食 is read, 早齋 is named too)
    spare = plain
    for word, _ in DIET_WORDS:  # 蛋素 inside 奶蛋素 / 不吃蛋素 is no second word
        spare = spare.replace(word, "｜") if len(word) >= 3 else spare
    conditions = [word for word, _ in UNRECORDED_DIETS if has_word(spare, word)] + _conditions(form)
    no_egg = NO_EGG.search(form) is not None or re.search(r"(?:奶|乳)蛋|蛋奶(?!素)", "".join(
        match.group(0) for match in NO_DAIRY.finditer(form))) is not None
    no_dairy = NO_DAIRY.search(form) is not None
    for word, diet, unrecorded in ALL_DIET_WORDS:
        if has_word(plain, word):
            return _diet_said(word, diet, unrecorded, conditions, no_egg, no_dairy)
    if NO_PUNGENT.search(form):  # 不吃蔥蒜的 彰化市有店嗎: a vegetarian ask the catalog cannot refine
        return "vegetarian", "、".join(conditions)
    return ("any" if negated else None), None


def diet_in(form: str) -> str | None:
    """The dietary type a message (reading form) states, or None when it names none (see read_diet).

    Returns:
        ``vegetarian``, ``vegan``, ``ovo_lacto``, ``lacto``, ``any`` or None.
    """
    return read_diet(form)[0]
