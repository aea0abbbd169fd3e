"""Items by position or reference: 第三個在哪裡集合, 第2家電話幾號, 最後一個要錢嗎, 剛剛那家在哪, 那個市集.

Rule: ``item_ref``. A message that is only a reference to one item of the last answer's list, and
the details asked about it, is an ``ItemRef`` (shared.turn.ask); the turn engine resolves it against
the conversation's listed items and answers from that item's own record (shared.turn.item_answer).

A reference is one of:
- a position: 第三個, 第2家, 第一場 (a counter: 個 家 間 場 項 攤 檔 筆); not 第一次, 第二個週末, 第三天;
- the end of the list: 最後一個, 最後那家, 倒數第二個;
- a pointer: 剛剛那家, 剛才那個, 上面那個, 你說的那間, 那家, 那間, 那場; bare 那個 / 這個 only before a
  question about it (那個在哪), since residents also say 那個 as a pause;
- a pointer with a word naming the item: 那個市集, 那家john (matched against the listed items);
- a shop pointer (那家, 這家, 那間, 剛剛那家) with a question of its own about it: 那家有賣便當嗎 (a detail
  no record holds: ``ItemDetail.OTHER``, said once as not recorded), 這家有全素嗎 (its diets);
The message holds nothing else but fillers (請問, 那, 呢, 嗎) and the questions read (ItemDetail): a
message with another condition (員林第二家, 那個 花壇有什麼活動) is left to the other rules, so the
router's reading of every message that is no reference is the one it was.

Pure text in (the reading form), a Proposal out: no store, no clock, no list here. Source:
docs/design.md §7 (the turn), docs/conversation.md (items by position).
"""
from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING

from shared.diets import read_diet
from shared.places.search import places_named_in
from shared.turn.ask import ItemDetail, ItemRef
from shared.turn.dates import read_date
from shared.turn.proposal import Proposal
from shared.turn.rules.titles import in_a_title
from shared.turn.rules.townships import strip_townships
from shared.turn.vocabulary.events import EVENT_TOPICS, EVENT_WORDS

if TYPE_CHECKING:
    from shared.turn.rules.message import Message

__all__ = ["ITEM_TOOL", "bare_detail_ref", "item_ref", "read_item_ref"]

#: The proposal's tool: one listed item, answered from its record.
ITEM_TOOL = "item_detail"

_NUMBER = r"\d{1,2}|[一二三四五六七八九十兩]{1,3}"
#: The counters a position takes (第三個, 第2家, 第一場 …); 傢 is 家 as OpenCC writes it before 什麼 (傢什).
_COUNTER = r"[個家傢間場項攤檔筆]"
#: What a position must not be followed by: a time (第一個週末, 第二個禮拜, 第三個月) or a count of times.
_NOT_AN_ITEM = r"(?!週|周|禮拜|星期|月|年|日|天|小時|鐘頭|晚|早|假|連假|學期|季)"
#: Said before a pointer (剛剛那家, 你說的那間, 上面那個).
_EARLIER = r"(?:剛剛|剛才|方才|上面|前面|你剛剛|你剛才|你|妳)?(?:說|講|提|列|推薦|介紹)?(?:的|到的)?"
_REFERENCE = re.compile(
    rf"(?P<from_end>倒數)?第(?P<number>{_NUMBER})(?P<counter>{_COUNTER}){_NOT_AN_ITEM}"
    rf"|(?P<last>最後(?:面)?(?:的)?(?:一|那|這)?(?:一)?){_COUNTER}{_NOT_AN_ITEM}"
    rf"|(?P<earlier>{_EARLIER})(?P<pointer>[那這])(?:一)?(?P<pointed>{_COUNTER}){_NOT_AN_ITEM}")

#: The questions about one item, in the order they are tried (電話幾號 is the phone, not a day).
_DETAILS: tuple[tuple[ItemDetail | None, re.Pattern[str]], ...] = (
    (ItemDetail.PHONE, re.compile(r"(?:的)?電話(?:號碼)?(?:是)?(?:幾號|多少|幾)?|聯絡(?:方式|電話)?|連絡(?:方式|電話)?|號碼|怎麼聯絡")),
    (ItemDetail.END_TIME, re.compile(r"幾點結束|結束時間|到幾點|開到幾點|幾點散|(?:什麼|甚麼|啥)時候結束|何時結束|多久|要多久")),
    (ItemDetail.WHEN, re.compile(r"幾點(?:開始|開)?|(?:什麼|甚麼|啥)時(?:候|間)(?:開始)?|何時|哪(?:一)?天|幾月幾號|幾號|日期|時間"
                                 r"|禮拜幾|星期幾|週幾|營業時間|有開嗎|有沒有開")),
    (ItemDetail.WHERE, re.compile(r"在哪(?:裡|邊|兒)?(?:集合)?|哪裡集合|(?:在)?哪裡|地址|地點|位置|(?:集合)(?:地點|點|地方)?"
                                  r"|(?:在)?(?:什麼|甚麼|啥)地方")),
    (ItemDetail.PRICE, re.compile(r"要不要錢|要錢|收費|費用|免費|多少錢|價錢|價格|門票|票價|花錢|付費|要付錢|貴不貴|貴嗎")),
    (ItemDetail.REGISTRATION, re.compile(r"(?:要|需要|可以|怎麼|如何)?報名|(?:要|需要)?登記|(?:要|需要)?預約|名額|訂位")),
    (None, re.compile(r"是什麼|是甚麼|是啥|叫什麼|叫甚麼|叫啥|(?:的)?名字|店名|詳細(?:資料|資訊|內容)?|介紹一下|資訊|資料")),
)
#: Said before the reference (請問第三個…, 那第2家…).
_LEAD = re.compile(r"^(?:請問|想問|我想問|問一下|再問|那|那麼|還有|然後|另外|啊|欸|嗯|喔|好|好的|所以|對了|我要問|我想知道)*")
#: Said around the questions: particles and small words that carry no condition.
_FILL = re.compile(r"^(?:的|是|要|會|有|在|也|還|就|大概|請問|呢|嗎|啊|呀|喔|哦|啦|吧|咧|嘛|勒|耶|那|這|呀|可以|能|在哪|\?)*$")
#: Words that only say what kind of item it is (那家店, 第二個活動): no name.
_KIND_WORDS = re.compile(r"^(?:的)?(?:素食店|蔬食店|素食|蔬食|店家|店|餐廳|活動|那家|那間|那個)?(?:的)?$")
#: The longest word that names an item (那個冬季蔬果市集): a longer run is a sentence of its own.
_NAME_MAX = 10
#: Text taken out before the reading: spaces and punctuation.
_SPACES = re.compile(r"[\s\W_]+")


def _number(said: str) -> int | None:
    """第三 → 3, 第12 → 12, 第二十 → 20 (cn2an, loaded only when a position is said)."""
    if said.isdigit():
        return int(said)
    import cn2an

    try:
        return int(cn2an.cn2an(said.replace("兩", "二"), "smart"))
    except (ValueError, KeyError):
        return None


def _position(found: re.Match[str]) -> int | None:
    """The position said, 1-based; negative from the end (-1 the last); None for a pointer."""
    if found.group("number"):
        number = _number(found.group("number"))
        if number is None or number == 0:
            return None
        return -number if found.group("from_end") else number
    return -1 if found.group("last") is not None else None


def _details(rest: str) -> tuple[tuple[ItemDetail, ...], list[str]]:
    """The questions asked in ``rest`` (in order, each once) and the runs of text left around them (a card
    question such as 叫什麼 is taken out too, and asks for no detail)."""
    found: list[tuple[int, ItemDetail]] = []
    marked = rest
    for detail, pattern in _DETAILS:
        found += [(match.start(), detail) for match in pattern.finditer(marked) if detail is not None]
        marked = pattern.sub(lambda match: "|" * len(match.group(0)), marked)
    return tuple(dict.fromkeys(detail for _, detail in sorted(found, key=lambda pair: pair[0]))), marked.split("|")


def _name_word(name: str) -> str | None:
    """The word that names the item (那個市集 → 市集), without the kind words and particles around it;
    None when only a kind is said (那家店, 第二個活動)."""
    if _KIND_WORDS.fullmatch(name) or _FILL.fullmatch(name):
        return None
    word = re.sub(r"(?:素食店|蔬食店|店家|店|餐廳|活動)$", "", name) or name
    return re.sub(r"^(?:的|是)+|(?:的|是|要|會|有|在|也|還|就|呢|嗎)+$", "", word) or None


#: A question said of a shop pointed at (那家有賣便當嗎, 這間可以內用嗎): a question word or mark.
_QUESTION = re.compile(r"嗎|呢|麻|有沒有|可不可以|能不能|會不會|是不是|要不要|\?")
#: What is cut around the words of such a question to name it (有賣便當嗎 → 有賣便當).
_QUESTION_EDGES = re.compile(r"^(?:的|那|也|還|就|請問)+|(?:嗎|呢|麻|吧|啊|喔|\?)+$")
#: The resident's words are named in the reply only when short and plain.
_PLAIN_WORDS = re.compile(r"[\u4e00-\u9fff]{2,8}")


def _shop_question(found: re.Match[str], runs: list[str]) -> tuple[ItemDetail, str | None] | None:
    """A question of its own about a shop pointed at (那家有賣便當嗎 → (OTHER, 有賣便當); 這家有全素嗎 → (DIET,
    None)), or None: not a shop pointer (家 間), no question, or another condition in it (a township, an
    event, a date, a shop's name: a new ask)."""
    if found.group("pointed") not in ("家", "傢", "間"):
        return None
    said = "".join(run for run in runs if not _FILL.fullmatch(run))
    if not said or not _QUESTION.search(said) or strip_townships(said) != said or places_named_in(said) \
            or any(word in said for word in EVENT_WORDS) or read_date(said) is not None:
        return None
    if read_diet(said)[0] not in (None, "any"):
        return ItemDetail.DIET, None
    words = _QUESTION_EDGES.sub("", said)
    return ItemDetail.OTHER, words if _PLAIN_WORDS.fullmatch(words) else None


def _with_question(found: re.Match[str], details: tuple[ItemDetail, ...], runs: list[str]) -> ItemRef | None:
    """The pointer with a question of its own about the shop (``_shop_question``) beside the details read."""
    question = _shop_question(found, runs)
    if question is None:
        return None
    return ItemRef(None, None, tuple(dict.fromkeys(details + (question[0],))), question[1])


def read_item_ref(text: str, names_item: Callable[[str], bool] = lambda word: False) -> ItemRef | None:
    """The reference a message makes to one listed item, or None when it makes none (see the module).

    Args:
        text: the message in its reading form (shared.text.reading_form); never logged.
        names_item: True for a word that can name a listed item (an event topic, a piece of an event
            title, a township, a shop's name): any other word after a pointer is an ask of its own.
    Returns:
        The ItemRef: its position (or None), the word naming it (or None) and the details asked.
    """
    compact = _SPACES.sub("", text)
    found = _REFERENCE.search(compact)
    if found is None or _LEAD.sub("", compact[:found.start()]):
        return None
    details, runs = _details(compact[found.end():])
    position = _position(found)
    asked = _with_question(found, details, runs) if position is None and found.group("pointer") else None
    if asked is not None:
        return asked
    return _plain_ref(found, position, details, runs, names_item)


def _plain_ref(found: re.Match[str], position: int | None, details: tuple[ItemDetail, ...], runs: list[str],
               names_item: Callable[[str], bool]) -> ItemRef | None:
    """The reference with only the details read and a word naming the item around it, or None."""
    if any(not _FILL.fullmatch(run) for run in runs[1:]):
        return None  # something more is asked beside the questions about the item
    if found.group("number") and position is None:
        return None
    word = _name_word(runs[0])
    if word is not None and (len(word) > _NAME_MAX or not names_item(word)):
        return None  # 那個 花壇有什麼活動: a new ask after a pause, not an item
    if found.group("pointed") == "個" and not found.group("earlier") and word is None and not details:
        return None  # 那個 alone is a pause as often as a pointer: only with a question or a name
    return ItemRef(position, None if position is not None else word, details)


def bare_detail_ref(text: str) -> ItemRef | None:
    """A bare question about an item with no reference and nothing else asked (幾點開始, 要錢嗎, 在哪裡),
    as a pointer alone (``ItemRef(None, None, details)``), or None.

    Only the turn engine uses it, and only when the conversation state lists items: the question then
    refers to the item last asked about (shared.turn.item_answer); without a state the router's own
    reading stays. Args: ``text`` in its reading form (never logged).
    """
    compact = _LEAD.sub("", _SPACES.sub("", text))
    if not compact:
        return None
    details, runs = _details(compact)
    if not details or any(not _FILL.fullmatch(run) for run in runs):
        return None
    return ItemRef(None, None, details)


#: Words of an event's kind or topic a name may be made of (市集, 健走, 活動).
_TOPIC_WORDS = tuple(sorted({word for word, _ in EVENT_TOPICS} | set(EVENT_WORDS), key=len, reverse=True))


def _names_item(m: Message) -> Callable[[str], bool]:
    """Whether a word can name a listed item: a piece of an event title (健走), or made only of event topics
    (市集) and townships (鹿港), or a word in Latin letters (john). 市集辦了沒 is not: it asks more."""
    def names(word: str) -> bool:
        if in_a_title(word, m.titles) or re.fullmatch(r"[a-z0-9]+", word):
            return True
        rest = strip_townships(word)
        for topic in _TOPIC_WORDS:
            rest = rest.replace(topic, "")
        return len(rest.replace("的", "")) == 0
    return names


def item_ref(m: Message) -> Proposal | None:
    """A reference to one listed item → ``item_detail`` with the ItemRef (``ref``); None for a message that
    is more than a reference, and for a shop named by its name (和米在哪: its card, shared.turn.rules.shops)."""
    ref = read_item_ref(m.text, _names_item(m))
    if ref is None or (ref.name_word is not None and places_named_in(ref.name_word)):
        return None
    return Proposal(ITEM_TOOL, {"ref": ref})
