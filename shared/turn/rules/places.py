"""Places: townships said (the whole county, a bare 彰化, a misspelt or unknown place, a follow-up), the
diet said (someone else's, a plain 素食), shop names taken out, and a subject LOCAL has no data on.
Rules: ``township_misspelt`` (溪胡還是員林 → 「你是說溪湖鎮嗎？」), ``follow_up`` (那鹿港呢 → events or
shops?), and the finishing step ``every_township`` (全彰化 → every township, no picker)."""
from __future__ import annotations

import re
from typing import TYPE_CHECKING

from shared.areas import COUNTY, TOWNSHIPS, WHOLE_COUNTY, townships_in
from shared.diets import ALL_DIET_WORDS, DIET_WORDS, has_word, read_diet, unnegated
from shared.places.search import place_aliases
from shared.turn.ask import Flag
from shared.turn.dates import read_date
from shared.turn.proposal import Proposal
from shared.turn.rules.titles import EventTitles, in_a_title
from shared.turn.rules.townships import short_name, strip_townships
from shared.turn.vocabulary.events import EVENT_TOPICS, EVENT_WORDS
from shared.turn.vocabulary.limits import SIDE_LIMITS
from shared.turn.vocabulary.places import NOT_PLACES, NOT_TOWNSHIP_TYPOS, PLACE_WORDS
from shared.turn.vocabulary.talk import ACK, ASK_FILLER, GREETINGS, PEOPLE, THANKS

if TYPE_CHECKING:
    from shared.turn.rules.message import Message

#: The whole county said without 彰化縣 (全彰化都可以, 整個彰化): every township, no picker .
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
    type on purpose: a remembered finer type (全素) then fills it (docs/design.md §7)."""
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
            # name, not a diet asked)
            t = re.sub(re.escape(spelling) + _NAME_TAIL, "｜", t)
    return t


#: Generic words that may follow a shop's short name as part of how it is said (手作蔬食, 手做素食館).
_NAME_TAIL = r"(?:手[作做]|[蔬素]食|館|坊|餐廳|小館|料理)*"
_SUBJECT_NOISE = re.compile(r"[\s\d\W_]+")


def unknown_subject(text: str) -> str | None:
    """The subject of a question that is neither a township, a date, a diet, an event nor a limit
    (鹿港天后宮幾點開 → 天后宮, 花壇鄉長是誰 → 鄉長, 彰化縣長是誰 → 縣長), or None.

    Used only where no shop, diet, event or date word was read: the reply says LOCAL has no such
    data, instead of listing shops.
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
_SPELLINGS = "|".join(sorted({*TOWNSHIPS, *(short_name(name) for name in TOWNSHIPS)}, key=len, reverse=True))
#: Where a place is clearly meant: two Han characters joined to a real township by 還是 / 或 / 跟 / 和 / 、
#: (a, b), two followed by 鄉 / 鎮 / 市 (c), or a word first and then when (d: 鹿巷這禮拜有活動嗎, 員琳禮拜六,
#: 溪胡明天).
_TYPED_PLACE = re.compile(
    rf"(?P<a>[\u4e00-\u9fff]{{2}})(?={PLACE_JOIN}(?:{_SPELLINGS}))|(?:{_SPELLINGS}){PLACE_JOIN}(?P<b>[\u4e00-\u9fff]{{2}})"
    r"|(?P<c>[\u4e00-\u9fff]{2})(?P<suffix>[鄉鎮市])"
    r"|^(?:請問|想問|我想查|想查|查)?(?P<d>[\u4e00-\u9fff]{2})(?=(?:這|今|明|下|本)(?:個)?(?:禮拜|星期|週|周|月|天)"
    r"|(?:禮拜|礼拜|星期|週|周)[一二三四五六日天末1-7])")
#: Words of LOCAL's vocabulary that are never a misspelt township (社區, 北部, 市集 …).
_NOT_TYPOS = tuple([w for w, _ in EVENT_TOPICS] + list(EVENT_WORDS) + [w for w, _ in DIET_WORDS] + list(NOT_PLACES)
                   + list(NOT_TOWNSHIP_TYPOS))


def _townships_near(typed: str, near_of: dict[str, list[str]]) -> list[str]:
    """The townships whose short name is one character from ``typed`` (none for a vocabulary word, a
    township or a date); ``near_of`` keeps each word's (a message may repeat it thousands of times)."""
    if typed not in near_of:
        vocabulary = townships_in(typed) or any(k in typed or typed in k for k in _NOT_TYPOS) \
            or read_date(typed) is not None
        near_of[typed] = [] if vocabulary else [name for name in TOWNSHIPS if one_apart(typed, name)]
    return list(near_of[typed])


def _no_typo(t: str, typed: str, found: re.Match[str], said_townships: list[str], titles: EventTitles) -> bool:
    """True when the word found is no misspelt township after all: part of a real name said with its
    suffix, a market (花卉市集, 魚市場: not 花卉市), or a word of an event's title beside a real township."""
    suffix = found.group("suffix")
    if suffix and townships_in(t[found.start():found.end() + 1]):
        return True
    if suffix == "市" and t[found.end():found.end() + 1] in ("集", "場", "區"):
        return True
    return bool(said_townships) and in_a_title(typed, titles)


#: At most this many characters after the word make a bare date (員琳這週末, 鹿巷禮拜天呢): the date is the ask.
_BARE_DATE_TAIL = 6


def _asked_or_bare_date(t: str, found: re.Match[str]) -> bool:
    """True when the word first and then when (``found``'s group d) comes with an event, place or diet ask,
    or with nothing but a short date after it (花台下禮拜: an event search by that date)."""
    if any(word in t for word in EVENT_WORDS + PLACE_WORDS) or read_diet(t)[0] is not None:
        return True
    tail = t[found.end():].strip()
    return len(tail) <= _BARE_DATE_TAIL and read_date(tail) is not None


def township_typo(t: str, titles: EventTitles) -> tuple[str, str, list[str]] | None:
    """A misspelt township where a place is clearly meant, and the townships it may be, or None.

    A place is clearly meant where two Han characters are joined to a real township by 還是 / 或 / 跟 / 和
    / 、 (溪胡還是員林, 員林或花潭), or are followed by 鄉 / 鎮 / 市 (溪胡鎮), or come first before when
    (鹿巷這禮拜有活動嗎, 員琳禮拜六有啥活動, with an ask or with only a short date after: 花台下禮拜). They must differ from a township's short name in exactly one
    character (溪胡 / 溪湖; never by sound, which the router cannot read) and be no word of LOCAL's
    vocabulary (社區, 北部, 市集 …). Several townships may be that close (溪胡: 溪湖鎮 and 溪州鄉): all are
    returned, a same suffix (溪胡鎮 → 溪湖鎮) first. The caller asks 「你是說…嗎？」; it never searches a guess.

    Returns:
        (the characters as typed, the 鄉 / 鎮 / 市 typed after them or "", [full township names, best
        first]) or None.
    """
    said_townships = townships_in(t)  # once, not per place-like word
    near_of: dict[str, list[str]] = {}
    for found in _TYPED_PLACE.finditer(t):
        typed = found.group("a") or found.group("b") or found.group("c") or found.group("d")
        if found.group("d") and not _asked_or_bare_date(t, found):
            continue  # a word before a date in a longer message with no ask is no place
        near = _townships_near(typed, near_of)
        if not near or _no_typo(t, typed, found, said_townships, titles):
            continue
        suffix = found.group("suffix")
        near.sort(key=lambda name: 0 if suffix and name.endswith(suffix) else 1)
        return typed, suffix or "", near
    return None


def township_misspelt(m: Message) -> Proposal | None:
    """溪胡還是員林有素食餐廳: 「你是說溪湖鎮嗎？」 with a button per close township that sends the message
    again spelt right; never silently only 員林."""
    typo = township_typo(m.text, m.titles)
    if typo is None:
        return None
    typed, suffix, names = typo
    choices = [[name, m.text.replace(typed + suffix, name if suffix else short_name(name), 1)] for name in names]
    return Proposal("did_you_mean", {"name": names[0], "area": names[0], "text": choices[0][1],
                                     "choices": choices, "typed": typed})


def follow_up(m: Message) -> Proposal | None:
    """那鹿港呢: a township in a bare follow-up: events or shops? (the router keeps no state; the engine's
    buttons keep the conditions of the resident's last search)."""
    if m.townships and FOLLOW_UP.fullmatch(strip_townships(m.text)):
        return Proposal("ask_search_kind", {"area": m.townships[0]})
    return None


def every_township(m: Message, proposal: Proposal) -> Proposal:
    """A shop ask for the whole county (全彰化有全素的店嗎, 整個彰化哪裡有素食) → the places search in every
    township (area 全彰化), never the township picker; a bare 彰化 or 彰化縣 still asks which township."""
    if proposal.tool != "needs_area" or proposal.args.get("kind") == "events" or not WHOLE_COUNTY_SAID.search(m.text):
        return proposal
    return Proposal("search_local_places", {"area": WHOLE_COUNTY, "dietary_type": proposal.args.get("dietary_type"),
                                            "keyword": None}, proposal.source,
                    tuple(note for note in proposal.notes if note != Flag.OWN_DIET))
