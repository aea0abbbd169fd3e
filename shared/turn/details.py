"""Details a question asks about that LOCAL's data does not hold (docs/design.md §5: replies name what a
snapshot does not record, in people's words).

The offline router answers what it can (a township, a date, a topic, a diet, a shop name); a
question clause about anything else (要帶水嗎, 可以刷卡嗎, 狗可以去嗎, 小孩幾歲可以, 會不會很多人,
有沒有報佳音) must not be skipped without a word. ``read_details`` finds them:

- named details (``NotRecorded``, worded by shared.turn.wording.detail_line): what to bring,
  payment, pets, age, crowds, seating, accessibility, toilets, suitability for elders or children,
  when an event ends;
- any other question clause whose subject is left once every word the router reads is taken out
  (``Unasked``), named in the user's words when short and plain (≤ 6 letters, no digits or
  symbols), else as 「你問的其他細節」.

Pure text in, typed notes (shared.turn.ask) out: no store, no clock, no LINE types. The words become reply text only;
they are never logged or stored (the audit record keeps the tool's arguments, not the notes).
"""
from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Iterable

from shared.turn.ask import DetailKind, NotRecorded, Unasked
from shared.turn.dates import COLLOQUIAL_DATE_WORDS
from shared.turn.datespec import DateSpec

__all__ = ["read_details", "suitability_people"]

#: Named details: kind → the words that ask for it. Order is the order they are said in.
_DETAILS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("bring", re.compile(
        r"(?:要|需要|該|得|必須|可以|能|應該)?(?:帶|準備|攜帶)(?:什麼|甚麼|啥|哪些|東西)|(?:攜帶|自備)[\u4e00-\u9fff]{0,3}?(?=嗎|呢|\s|$|[？?，,])|攜帶|自備"
        r"|(?:要|需要|該|得|必須|應該|可以|能)(?:自己)?帶(?:水|水壺|毛巾|餐具|環保[杯袋餐]\S?|便當|午餐|零錢|證件|身分證|健保卡"
        r"|椅子|板凳|墊子|野餐墊|帽子|筆|工具|材料|手套|袋子|購物袋)")),
    ("payment", re.compile(r"刷卡|信用卡|付款|付現|現金|行動支付|電子支付|line ?pay|街口|悠遊卡|一卡通|apple ?pay|轉帳|收卡")),
    ("pets", re.compile(r"(?:帶)?(?:寵物|毛小孩|毛孩|狗狗?|貓咪?)(?:進去|進場|入場|入內|一起)?")),
    ("age", re.compile(r"幾歲|(?:限制|規定)?年齡(?:限制|規定|要求)?|年紀|限齡|幾年級|(?:\d{1,2}|[一二兩三四五六七八九十]{1,3})\s*歲")),
    ("crowd", re.compile(r"人(?:會|潮)?(?:很|太|比較|會不會)?多|很多人|多少人|人潮|擠|排隊|爆滿|人山人海")),
    ("seating", re.compile(r"(?<!輪)椅子?|座位|坐的地方|位子坐|位置坐|可以坐(?!車|公車|客運|火車|高鐵|捷運)|板凳")),
    ("access", re.compile(r"無障礙|(?:坐|推)?輪椅|坡道|電梯|行動不便|拐杖|助行器|嬰兒車|娃娃車|推車|進得去|進不去|方便進出")),
    ("toilet", re.compile(r"廁所|洗手間|化妝室|尿布台|哺乳室")),
    ("organiser", re.compile(r"誰(?:主|舉)?辦|主辦(?:單位|人|者)?是誰|哪個單位(?:主|舉)?辦|主辦單位是")),
    ("end_time", re.compile(r"幾點結束|結束時間|幾點散|到幾點|多久|幾個小時|多長時間|多長"
                            r"|(?:什麼|啥)時(?:候|間)?結束|何時結束|哪(?:一)?天結束|結束(?:嗎|了嗎|了沒)")),
)
#: The people a suitability question names (老人家可以去嗎, 小孩能參加嗎, 適合長輩嗎).
_SUIT_PEOPLE = ("老人家", "老人", "長輩", "長者", "阿公", "阿嬤", "銀髮族", "小孩", "小朋友", "孩子", "兒童", "小孩子",
                "嬰兒", "寶寶", "孕婦", "身障者")
_PEOPLE_RE = "|".join(sorted(_SUIT_PEOPLE, key=len, reverse=True))
#: A yes/no question about who may come (老人家可以去嗎, 小孩能參加嗎, 適不適合小孩): never a filter, and not
#: a relative clause (小孩可以去的活動: that one is a search for such events, a topic).
_SUITABILITY = re.compile(
    rf"(?P<who>{_PEOPLE_RE})(?:們)?(?:也|都)?(?:可以|能|適合|可不可以|能不能|適不適合|方便)(?:去|參加|玩|來|帶去|一起去|走)?"
    r"(?:嗎|不|呢|吧|\s*$|\s*[？?，,])"
    rf"|(?:適合|適不適合|方便)(?:帶)?(?P<who2>{_PEOPLE_RE})(?:去|參加|玩)?(?:嗎|不|呢|\s*$|\s*[？?，,])"
    rf"|(?:可以|能|可不可以|能不能)帶(?P<who3>{_PEOPLE_RE})(?:一起)?(?:去|參加|來|玩)?(?:嗎|不|呢|\s*$|\s*[？?，,])")

#: A question clause: one of these, or a question mark after it.
_QUESTION = re.compile(r"嗎|呢|幾|要不要|可不可以|會不會|有沒有|能不能|是不是|怎麼|怎樣|如何|什麼|甚麼|啥|哪|多少|多久|麻|[？?]")
#: Where a clause ends (the question mark stays with its clause).
_CLAUSE = re.compile(r"[^，,。；;！!\s\n？?]+[？?]*")
#: Words the router or the reply answers (the time, the place, a phone number, whether there are
#: events), and words that only carry a question: taken out before the subject is looked for.
_ANSWERED = re.compile(
    r"幾點|時間|什麼時候|哪天|哪一天|幾號|日期|在哪裡?|在哪邊|哪裡|地點|地址|位置|集合點?|電話|聯絡|來源|舉辦|開始|有辦|還有辦|照常"
    r"|還有沒有|沒有|要不要|可不可以|會不會|有沒有|能不能|是不是|好不好|對不對|怎麼樣|怎樣|如何|多少|請問|想問|想知道|問一下|確認|了解|查詢|告訴我|跟我說"
    r"|有哪些|有什麼|有啥|什麼|甚麼|啥|哪些|哪個|哪家|哪間|推薦|介紹|看看|資訊|資料|好吃|好玩|好喝|不錯|有名|熱門|最近|附近"
    r"|一起|參加|出席|報名|帶孩子|帶小孩|順便|另外|然後|還有|或是|還是|是否|大概|一下|一點|有空|可以去|能去|去玩|去看"
    r"|那天|當天|那邊|這邊|那裡|這裡|那個|這個|這些|那些|哪一|以後|之後|之前|當日|全部|所有|其他|別的|適合|人家"
    r"|超大型|大型|小型|熱鬧|有趣|特別|比較"
    r"|運動|健康|閱讀|節慶|休閒|藝文|旅遊|參觀|逛逛|逛街|走走|出去|出門"
    r"|進去|進場|入場|入內|休息|公休|營業|方便|早上|上午|中午|下午|傍晚|晚上|白天|晚間|清晨|半天|整天")
_FILLER_CHARS = re.compile(r"[嗎呢吧啊呀喔哦啦耶欸嘛麻的了在去有是找查我你妳們好請幾個間家些一都也要想跟和與及或誰哪會能可以"
                           r"嗯恩囉唷咧勒那這就還再又很太才只已到從給把被讓叫說問看過來得著地之其該需用做辦開場次位點號日月週周年天]")
_NOISE = re.compile(r"[\s\d\W_a-z]+")
#: Filler said before or after the subject (有報佳音嗎 → 報佳音).
_EDGE_FILLER = re.compile(r"^[嗎呢吧啊呀喔哦啦耶欸嘛麻的了在有是要會能可以去都也還就那這]+|[嗎呢吧啊呀喔哦啦耶欸嘛麻的了在有是要會能可以去都也還就]+$")
#: What may stay of a date once its shortest reading part is cut (行憲|紀念日, 聖誕|夜).
_DATE_TAIL = re.compile(r"^(?:紀念日|紀念|節日|節|夜|晚上|晚|當天|那天|連假)+|(?:紀念日|紀念|節日|節|當天|那天|前後|左右)+$")
#: A whole week or weekday word (禮拜六, 這個星期天, 週末): cut whole from a question, never half of it (員林禮|拜六).
_WEEK_WORD = re.compile(r"(?:這|下|上|本)?(?:個)?(?:禮拜|礼拜|星期|週|周)[一二三四五六日天末1-7]?")
#: A user's words may be named in the reply only when short and plain.
_PLAIN = re.compile(r"[\u4e00-\u9fff]{2,6}")
#: The answered and filler words, for a reader that asks what else of a message is left (shared.turn.reading).
ANSWERED_WORDS, FILLER_CHARS = _ANSWERED, _FILLER_CHARS
#: The patterns of the named details and of a suitability question (what read_details reads).
DETAIL_PATTERNS = tuple(pattern for _, pattern in _DETAILS) + (_SUITABILITY,)


def suitability_people(text: str) -> str | None:
    """The people a yes/no suitability question names (老人家可以去嗎 → 老人家), or None."""
    found = _SUITABILITY.search(text)
    if found is None:
        return None
    return found.group("who") or found.group("who2") or found.group("who3")


def _named(text: str) -> list[str]:
    """The named details ``text`` asks about, in the order they are said."""
    found = [(match.start(), kind) for kind, pattern in _DETAILS + (("suitability", _SUITABILITY),)
             for match in [pattern.search(text)] if match]
    return [kind for _, kind in sorted(found)]


#: The most question clauses of one message looked at for a subject the router does not answer:
#: a resident asks a few; the notes name only the first such subject anyway. It bounds the work per
#: message (each clause is checked against the limits and read for dates) whatever the text.
QUESTION_CLAUSES_MAX = 32


def read_details(text: str, consumed: Iterable[str], date_of: Callable[[str], DateSpec | None],
                 answered: Callable[[str], bool] = lambda clause: False) -> tuple[NotRecorded | Unasked, ...]:
    """The notes for question clauses the router does not answer.

    Args:
        text: the message in its reading form (shared.text.reading_form); never logged.
        consumed: the words the router reads (townships, shop names, diet, event, topic and limit
            words), taken out before a clause's subject is looked for.
        date_of: the date a run of text reads as, or None (shared.turn.dates.read_date).
        answered: True for a clause a limit already answers (要怎麼去, 要自己帶毛筆嗎): no other note from it.
    Returns:
        Notes in the order asked, each once: ``NotRecorded(kind)`` (``NotRecorded(SUITABILITY, who)``
        for a suitability question), then at most one ``Unasked(words)`` (``Unasked("")`` when the
        words are not short and plain): the first question clause's, among the first
        QUESTION_CLAUSES_MAX. Empty when every question is answered.
    Cost: the named details are one scan each of the text; then per question clause (at most
    QUESTION_CLAUSES_MAX, each distinct one once) the checks, and only the consumed words the text
    holds are taken out of it. Linear in ``len(text)``.
    Source: docs/design.md §5.
    """
    # only words the text holds can be in a clause (taking words out only leaves ｜ behind)
    words = sorted({word for word in consumed if word and (word in text or "｜" in word or "〓" in word)},
                   key=len, reverse=True)
    named = tuple(NotRecorded(DetailKind(kind), suitability_people(text) if kind == "suitability" else None)
                  for kind in _named(text))
    unasked = _first_unasked(text, words, date_of, answered)
    return named + ((unasked,) if unasked is not None else ())


def _first_unasked(text: str, words: list[str], date_of: Callable[[str], DateSpec | None],
                   answered: Callable[[str], bool]) -> Unasked | None:
    """The first question clause (of the first QUESTION_CLAUSES_MAX, each distinct one once) that no named
    detail or limit answers and whose subject is left once ``words`` and dates are taken out."""
    questions = (clause for clause in dict.fromkeys(match.group(0) for match in _CLAUSE.finditer(text))
                 if _QUESTION.search(clause))
    for clause in itertools.islice(questions, QUESTION_CLAUSES_MAX):
        if _named(clause) or answered(clause):
            continue  # said already (once is enough)
        words_said = _unasked(clause, words, date_of)
        if words_said is not None:
            return Unasked(words_said if _PLAIN.fullmatch(words_said) else "")
    return None


def _unasked(clause: str, words: list[str], date_of: Callable[[str], DateSpec | None]) -> str | None:
    """The words of a question clause's subject once the details, ``words`` and dates are taken out,
    as said; None when fewer than two of its letters are left."""
    rest = _SUITABILITY.sub("｜", clause)
    for _, pattern in _DETAILS:
        rest = pattern.sub("｜", rest)
    for word in words:
        rest = rest.replace(word, "｜")
    runs = [run for run in re.split(r"[｜〓\s]+", rest) if run]
    left = [part for run in runs for part in _leftover(run, date_of)]
    if len("".join(core for core, _ in left)) >= 2:
        return "".join(said for core, said in left if core)
    return None


def _leftover(run: str, date_of: Callable[[str], DateSpec | None]) -> list[tuple[str, str]]:
    """What is left of a run once its date part, the answered words and the filler are taken out:
    (the subject's letters, the words as said around them), one pair per part."""
    value = date_of(run) if len(run) <= 24 else None
    if value is not None:
        return _cut_date(run, value, date_of)
    said = _EDGE_FILLER.sub("", _NOISE.sub("", _ANSWERED.sub("", _DATE_TAIL.sub("", run))))
    return [(_FILLER_CHARS.sub("", said), said)]


def _cut_date(run: str, value: DateSpec, date_of: Callable[[str], DateSpec | None]) -> list[tuple[str, str]]:
    """``run`` without its shortest part that reads as the same date (聖誕夜報佳音 → 報佳音); a Taiwanese
    date word or a week word goes whole (明仔載有啥物 → 有啥物, not 載有啥物 after 明仔; 員琳禮拜六 → 員琳,
    not 員琳禮 after 拜六)."""
    for word in (*COLLOQUIAL_DATE_WORDS.finditer(run), *_WEEK_WORD.finditer(run)):
        if date_of(word.group(0)) == value:
            return [pair for part in (run[:word.start()], run[word.end():]) if part
                    for pair in _leftover(part, date_of)]
    for size in range(1, len(run) + 1):
        for start in range(0, len(run) - size + 1):
            if date_of(run[start:start + size]) == value:
                return [pair for part in (run[:start], run[start + size:]) if part
                        for pair in _leftover(part, date_of)]
    return []

