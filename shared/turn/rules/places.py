"""Places: townships said (the whole county, a bare 彰化, a misspelt or unknown place, a follow-up), the
diet said (someone else's, a plain 素食), shop names taken out, and a subject LOCAL has no data on."""
from __future__ import annotations

import re

from shared.areas import COUNTY, TOWNSHIPS, townships_in
from shared.diets import ALL_DIET_WORDS, DIET_WORDS, has_word, unnegated
from shared.places.search import place_aliases
from shared.turn.dates import read_date
from shared.turn.rules.townships import short_name
from shared.turn.vocabulary.events import EVENT_TOPICS, EVENT_WORDS
from shared.turn.vocabulary.limits import SIDE_LIMITS
from shared.turn.vocabulary.places import NOT_PLACES
from shared.turn.vocabulary.talk import ACK, ASK_FILLER, GREETINGS, PEOPLE, THANKS

#: The whole county said without 彰化縣 (全彰化都可以, 整個彰化): every township, no picker (trial 4 minor).
WHOLE_COUNTY_SAID = re.compile(r"全彰化|整個彰化|彰化(?:全部|各地|各鄉鎮|全縣|都可以|都行|哪裡都)")


#: A bare 彰化 beside another township (花壇 彰化 哪裡有全素): also asked, read as 彰化市; not 彰化縣 or 全彰化.
CHANGHUA_ALSO = re.compile(r"(?<![全個住在從自到離])彰化(?![市縣人])")  # not 我住彰化, 從彰化, 彰化人


#: 彰化 said before a township is the county it is in (彰化花壇, 彰化的花壇), not a second place.
CHANGHUA_BEFORE_TOWNSHIP = re.compile(
    r"彰化(?:縣)?\s*(?:的)?\s*(?:" + "|".join(sorted({name for name in TOWNSHIPS if name != "彰化市"} |
                                                   {name[:-1] for name in TOWNSHIPS if name != "彰化市"},
                                                   key=len, reverse=True)) + ")")


#: Between two places: 還是 / 或 / 跟 / 和 / 、.
PLACE_JOIN = r"\s*(?:還是|或是|或者|或|跟|和|與|及|、|/|,|，)\s*"


def one_apart(typed: str, township: str) -> bool:
    """True when ``typed`` and the township's short name have the same length and differ in exactly one
    character (溪胡 / 溪湖, 花潭 / 花壇)."""
    short = short_name(township)
    return len(typed) == len(short) and sum(a != b for a, b in zip(typed, short)) == 1


#: Another person's diet (我媽媽吃全素, 朋友說他吃素, 幫我爸找全素): searched, never offered as the
#: user's own memory. The user with them (我跟我媽都吃素, 我們全家吃素) is the user's own.
_OTHERS_DIET = re.compile(
    rf"(?:{PEOPLE}|他們|她們|他|她|客人|客戶|男友|女友|男朋友|女朋友|哥哥|姊姊|姐姐|弟弟|妹妹|岳母|岳父|另一半|室友|同學|親戚)"
    r"(?:們)?(?:也|都|是|有在|只|只能|平常|現在|一直|要|想|固定|習慣|吃的是|說)*(?:吃)?"
    r"(?:全素|純素|蛋奶素|奶蛋素|奶素|素食|蔬食|早齋|鍋邊素|方便素|五辛素|初一十五|齋|素|vegan)"
    rf"|(?:幫|替|給|帶)(?:我)?(?:的)?(?:{PEOPLE}|他|她)")


_WITH_ME = re.compile(rf"我(?:和|跟|與|同|還有|以及)(?:我)?(?:的)?(?:{PEOPLE})|我們|我家|全家|一家")


def diet_of_other(t: str) -> bool:
    """True when the diet said is someone else's, not the user's (see _OTHERS_DIET)."""
    return bool(_OTHERS_DIET.search(t)) and not _WITH_ME.search(t)


#: Words that name no finer type than 蔬食.
_GENERIC_DIET_WORDS = frozenset({"蔬食", "素食", "吃素", "素", "vegetarian", "veggie"})


#: Choosing the broad type on purpose (素食就好, 一般素食, 不用全素): then it is this turn's condition.
_BROAD_ON_PURPOSE = re.compile(r"就好|就可以|都可以|都行|一般|只要|隨便|不一定|不用.{0,2}(?:全素|純素|蛋奶|奶素)")


def is_generic_diet(t: str, diet: str, unrecorded: str | None) -> bool:
    """True when the diet is a plain 素食 / 蔬食 that names no finer type and does not choose the broad
    type on purpose: a remembered finer type (全素) then fills it (trial 1 finding 9; DESIGN §7)."""
    if diet != "vegetarian" or unrecorded:
        return False
    plain, negated = unnegated(t)
    if negated or _BROAD_ON_PURPOSE.search(t):
        return False
    word = next((w for w, _, _ in ALL_DIET_WORDS if has_word(plain, w)), None)
    return word in _GENERIC_DIET_WORDS


def without_names(t: str, named: list[dict[str, str]]) -> str:
    """``t`` without the shop names it mentions (和米素食 names a shop, not a diet)."""
    for place in named:
        for spelling in place_aliases(place["name"]):
            # with the generic words said after a short name, spelt any way (JOHN手做蔬食: 手做蔬食 is the
            # name, not a diet asked; trial 2, minor finding)
            t = re.sub(re.escape(spelling) + _NAME_TAIL, "｜", t)
    return t


#: Generic words that may follow a shop's short name as part of how it is said (手作蔬食, 手做素食館).
_NAME_TAIL = r"(?:手[作做]|[蔬素]食|館|坊|餐廳|小館|料理)*"


_SUBJECT_NOISE = re.compile(r"[\s\d\W_]+")


def unknown_subject(text: str) -> str | None:
    """The subject of a question that is neither a township, a date, a diet, an event nor a limit
    (鹿港天后宮幾點開 → 天后宮, 花壇鄉長是誰 → 鄉長, 彰化縣長是誰 → 縣長), or None.

    Used only where no shop, diet, event or date word was read: the reply says LOCAL has no such
    data, instead of listing shops. Source: newcomer trial 1 finding 7.
    """
    rest = text
    for spelling in sorted(list(TOWNSHIPS) + [name[:-1] for name in TOWNSHIPS if len(name) > 2]
                           + ["集合點附近", "這附近", "附近", "這裡", "這邊", COUNTY, "彰化"], key=len, reverse=True):
        rest = rest.replace(spelling, " ")
    for _, words in SIDE_LIMITS:
        for word in words:
            rest = rest.replace(word, " ")
    for word in GREETINGS + THANKS + ACK:
        if word not in rest:
            continue  # neither replacement below can change the text
        rest = re.sub(rf"(?<![a-z]){re.escape(word)}(?![a-z])", " ", rest) if word.isascii() else rest.replace(word, " ")
    rest = _SUBJECT_NOISE.sub("", ASK_FILLER.sub(" ", rest))
    return rest or None


#: A short word right before 活動 / 素食 that may be a misspelt place (鹿巷活動, 花潭有素食嗎).
_PLACE_BEFORE_ASK = re.compile(r"^(?:請問|我想查|我想找|想查|想找|查|找)?(?P<word>[\u4e00-\u9fff]{2,3}?)"
                               r"(?:的|有什麼|有沒有|有哪些|有)?(?:活動|素食|蔬食|吃素)")


def unknown_place(text: str) -> str | None:
    """A place-like word before 活動 / 素食 that is no Changhua township (鹿巷活動 → 鹿巷), or None.

    Place-like: 2–3 Han characters sharing a character with a township name, and not a date, topic,
    diet or event word. The caller says it was not recognised and offers the townships.
    Source: issue 9 follow-up item 7.
    """
    match = _PLACE_BEFORE_ASK.match(re.sub(r"\s+", "", text))
    if match is None:
        return None
    word = match.group("word")
    known = [w for w, _ in EVENT_TOPICS] + list(EVENT_WORDS) + [w for w, _ in DIET_WORDS] + list(NOT_PLACES)
    if any(k in word or word in k for k in known) or read_date(word) is not None or townships_in(word):
        return None
    names = {name[:-1] for name in TOWNSHIPS} | set(TOWNSHIPS)
    return word if any(ch in name for name in names for ch in word) else None


#: What is left of a follow-up about another township (那鹿港呢, 還有員林嗎): no conversation state
#: is kept offline, so the reply asks whether events or shops are meant.
FOLLOW_UP = re.compile(r"(?:那|那麼|那如果|還有|換)\s*(?:呢|咧|勒|嗎|的呢)?[\s?？!！。.~～]*|(?:呢|咧|勒)[\s?？!！。.~～]*")
