"""Limits: what LOCAL has no data or tool for, or cannot help with. Said alone (``safety`` first of all:
crisis and emergency; then ``fraud``, a scam warning; ``elsewhere``; ``stance`` for politics and
religion; ``off_topic`` for writing, chatting and general knowledge; ``directory`` for offices only) or,
when another clause is a search, beside it (``hard_limit``: 鹿港有素食店嗎？那邊停車方便嗎 → the shops, and
the parking limit). Words are in shared.turn.vocabulary.limits; the
phrases read here (parking, travel, what to bring, the evening, distance, booking a doctor) are patterns."""
from __future__ import annotations

import re
from typing import TYPE_CHECKING

from shared.areas import townships_in
from shared.diets import NO_DAIRY, NO_EGG, OTHER_FOOD, has_word, read_diet
from shared.places.search import places_named_in
from shared.turn.ask import Limit
from shared.turn.crisis import is_crisis, is_distress
from shared.turn.dates import read_date
from shared.turn.proposal import SEARCH_TOOLS, Proposal
from shared.turn.rules.clauses import LIMIT_CLAUSE_BREAK, clauses_read
from shared.turn.rules.events import event_topics
from shared.turn.rules.handoff import PERSON_ASK
from shared.turn.rules.problems import problem_said
from shared.turn.rules.search import search
from shared.turn.rules.shops import first_shop
from shared.turn.rules.titles import event_named, names_event_kind
from shared.turn.vocabulary.events import EVENT_WORDS
from shared.turn.vocabulary.limits import (
    ACCOUNT_TROUBLE,
    CALLER,
    DEMAND,
    IMPERSONATION,
    KIDNAP,
    LIMITS,
    MISUSE,
    MONEY_ASKED,
    OFF_TOPIC,
    OFFICE_POSED,
    POLITICS,
    PROFIT,
    RELIGION,
    SCAM_SAID,
    SCAM_STORY,
    SCRIPT,
    SIDE_LIMITS,
    THREAT,
)
from shared.turn.vocabulary.places import DIRECTORY, ELSEWHERE, NOT_FOOD_SHOPS, PLACE_WORDS

if TYPE_CHECKING:
    from shared.turn.rules.message import Message

#: Parking said without 停車 (車子要停哪裡, 好停嗎, 機車可以停在哪).
PARKING = re.compile(r"(?:車子?|機車|摩托車|汽車|腳踏車|單車)[^，。？?]{0,4}停|停(?:在|去)?(?:哪|那)(?:裡|邊|兒)?"
                     r"|好不好停|好停|難停|停得(?:下|到)|停放|哪(?:裡|邊)(?:可以|能)停")
#: Getting somewhere, said without a transport word (去鹿港要坐什麼車, 開車要多久, 怎麼過去).
TRAVEL = re.compile(r"(?:坐|搭|開|騎|轉)[^，。？?]{0,3}車|怎麼(?:過去|前往|抵達)|車程|要開多久|多遠")
#: Asking what to bring or prepare for an event (要帶什麼, 要自己帶毛筆嗎): not in the data. Not bringing a
#: person or a pet (帶小朋友, 帶狗), nor a coat (the weather).
BRING = re.compile(r"(?:要|需要|得|該|要不要)(?:自己)?(?:帶|準備|自備)"
                   r"(?!小朋友|小孩|孩子|孫|狗|貓|寵物|長輩|阿公|阿嬤|爸|媽|家人|朋友|外套|傘|雨傘)"
                   r"|帶什麼|帶啥|準備什麼|準備啥|自備")
#: Asking about the evening (今晚有什麼活動, 明晚, 晚上): the events data has start times only, so a day's
#: list may hold events that are over by then; said beside an events answer .
#: Not 晚安 / 晚上好 (greetings) nor 昨晚 (the past).
EVENING = re.compile(r"今晚|明晚|今夜|晚上(?!好)|晚間|夜間|傍晚")
#: Asking for the nearest shop or a distance (最近的是哪間, 離我最近, 距離多遠): no map data.
DISTANCE = re.compile(r"最近的(?:是)?(?:哪|那|一)?(?:間|家|個)|最近的[^，。？?]{0,3}(?:店|餐廳)|離[^，。？?]{0,4}最近|距離|多近|最靠近")
#: Booking a doctor (可以幫我掛號嗎 彰基): LOCAL cannot; not a question about a drug or an illness.
APPOINTMENT = re.compile(r"掛號|看診|門診|預約(?:醫生|醫師|看病|看診|門診)|約診|回診")
#: Limits about health: never answered beside a shop's card or a named event.
_HEALTH = frozenset({Limit.MEDICAL, Limit.EMERGENCY})


def limits(text: str, table: tuple[tuple[str, tuple[str, ...]], ...]) -> list[Limit]:
    """The kinds of ``table`` whose words ``text`` (reading form) says."""
    return [Limit(kind) for kind, words in table if any(has_word(text, word) for word in words)]


def side_limits(text: str) -> list[Limit]:
    """The limits that may sit beside a search (SIDE_LIMITS), what to bring (``no_bring``), distance
    (``no_distance``) and the evening (``evening``)."""
    return limits(text, SIDE_LIMITS) + ([Limit.BRING] if BRING.search(text) else []) + \
        ([Limit.DISTANCE] if DISTANCE.search(text) else []) + ([Limit.EVENING] if EVENING.search(text) else [])


def hard_limits(text: str) -> list[Limit]:
    """The limits a text asks about that no search can answer (transport, parking, health, weather …).

    A food allergy beside a diet ask (我對花生過敏 花壇有素食嗎) is a food condition read_diet names, not
    a health question."""
    if read_diet(text)[0] not in (None, "any"):
        text = OTHER_FOOD.sub("｜", NO_DAIRY.sub("｜", NO_EGG.sub("｜", text)))
    hard = limits(text, LIMITS)
    if Limit.TRANSPORT not in hard and TRAVEL.search(text):
        hard.append(Limit.TRANSPORT)
    if Limit.PARKING not in hard and PARKING.search(text):
        hard.append(Limit.PARKING)
    return hard


def is_emergency(text: str) -> bool:
    """True when ``text`` (reading form) tells of an emergency (跌倒了起不來, 呼吸困難, 叫救護車): answered
    with 119 before anything else, and never left to the model (shared.routing)."""
    return bool(limits(text, LIMITS[:1]))


#: A scam's shapes that need nothing else said: named, posed, an account or card in trouble, a threat,
#: profit promised, a known script.
_SCAM_ALONE = (SCAM_SAID, IMPERSONATION, ACCOUNT_TROUBLE, THREAT, PROFIT, SCRIPT)


def _asks_of_a_shop_or_event(text: str) -> bool:
    """An event or an eating place is named (活動要轉帳報名嗎, 員林有素食店可以刷卡嗎): money asked of it
    is a question about paying there, not a scam's demand."""
    return any(word in text for word in EVENT_WORDS) or any(word in NOT_FOOD_SHOPS.sub("｜", text)
                                                           for word in PLACE_WORDS)


def is_fraud(text: str) -> bool:
    """True when ``text`` (reading form) tells of a likely scam, by the scam's shape rather than its
    sentence:

    - a scam or a suspicious call named (這是不是詐騙), someone posing as an official (自稱檢察官);
    - an account, a card or a number said to be misused or frozen (說我健保卡被盜用, 信用卡被盜刷);
    - a stranger, a caller, a message or a relative in trouble, with money asked (有人打電話說我中獎要先匯錢,
      我孫子打電話來說換號碼 要借錢, 網友說要寄包裹 要先付關稅);
    - someone telling the resident to pay, transfer, go to the ATM, buy game points or give a code (要我刷卡,
      叫我去ATM轉帳), unless a shop or an event is what is asked about (活動要轉帳報名嗎);
    - a threat: drugs in a parcel, a warrant or an arrest, a frozen account, laundering (有人說我的包裹有毒品);
    - profit promised (網路上有人說投資保證賺錢, 老師帶單, 飆股);
    - a known script by name (解除分期, 猜猜我是誰, 點數卡, 說我電話欠費);
    - a kidnapping told by a caller, or an office or a caller saying something is misused or putting the
      call through (有人打來說是健保局 說我的卡被盜用 要轉接檢察官).

    A transfer asked of a shop or an event alone (市集可以轉帳嗎) is not one, nor an event about scams
    (有防詐騙講座嗎), nor a parcel asked about (包裹什麼時候到).
    Source: 內政部警政署 165 全民防騙網, the common kinds (https://165.npa.gov.tw/): fake parcels and
    customs, fake investment, fake police and prosecutors, ATM 解除分期, fake health insurance, fake relatives,
    romance, fake shopping, gift cards and game points."""
    if any(word in text for word in EVENT_WORDS) and not (PROFIT.search(text) or DEMAND.search(text)):
        return False  # 防詐騙講座, 反毒宣導活動: an event
    told = CALLER.search(text) or OFFICE_POSED.search(text)
    return bool(any(pattern.search(text) for pattern in _SCAM_ALONE)
                or (DEMAND.search(text) and not _asks_of_a_shop_or_event(text))
                or (MONEY_ASKED.search(text) and SCAM_STORY.search(text))
                or (told and (KIDNAP.search(text) or MISUSE.search(text))))


def safety(m: Message) -> Proposal | None:
    """我想自殺 / 我跌倒了起不來: suicidal intent, self-harm or despair (shared.turn.crisis) or an
    emergency: the safety reply before anything else; distress with no risk said (心情不好) the gentle
    line with 1925; a likely scam said with it (我不想活了 有人要我匯錢) is warned of after it."""
    mood = [Limit.CRISIS] if is_crisis(m.text) else [Limit.DISTRESS] if is_distress(m.text) else []
    urgent = mood + limits(m.text, LIMITS[:1])
    if urgent and is_fraud(m.text):
        urgent.append(Limit.FRAUD)
    return Proposal("show_limits", {"kinds": urgent}) if urgent else None


def fraud(m: Message) -> Proposal | None:
    """有人打電話說我中獎要先匯錢 / 假冒健保局: it sounds like a scam, do not transfer, call 165 (before the
    directory, which the words 電話 or 警察 would otherwise reach)."""
    return Proposal("show_limits", {"kinds": [Limit.FRAUD]}) if is_fraud(m.text) else None


def _no_search_asked(m: Message) -> bool:
    """No township, search, person asked for or problem for the town hall in the message (幫我寫一封信給公所
    反映路燈壞了 is a request, not writing)."""
    return (not m.townships and not _asks_a_search(m.text, m) and not PERSON_ASK.search(m.text)
            and problem_said(m.text) is None)


def stance(m: Message) -> Proposal | None:
    """你支持哪個候選人 / 該投誰 / 哪個宗教比較好, with no search asked: LOCAL takes no side."""
    if (POLITICS.search(m.text) or RELIGION.search(m.text)) and _no_search_asked(m):
        return Proposal("show_limits", {"kinds": [Limit.POLITICS]})
    return None


def off_topic(m: Message) -> Proposal | None:
    """幫我寫一首詩 / 講個笑話 / 美國總統是誰, with no search asked: what LOCAL does answer instead."""
    if OFF_TOPIC.search(m.text) and _no_search_asked(m):
        return Proposal("show_limits", {"kinds": [Limit.OFF_TOPIC]})
    return None


def _clauses_beside_limits(m: Message) -> tuple[str, list[str]] | None:
    """(the clauses without a limit, joined; the clauses with one) when both are said and the first ask
    a search; else None."""
    clauses = clauses_read([clause for clause in LIMIT_CLAUSE_BREAK.split(m.text) if clause and clause.strip()])
    if len(clauses) < 2:
        return None
    rest = [clause for clause in clauses if not hard_limits(clause)]
    limited = [clause for clause in clauses if hard_limits(clause)]
    text = " ".join(rest)
    return (text, limited) if rest and limited and _asks_a_search(text, m) else None


def _ask_beside_limits(m: Message) -> Proposal | None:
    """A search asked beside a limit (鹿港有素食店嗎？那邊停車方便嗎; 12/31彰化市有跨年晚會嗎 要怎麼去):
    the clauses without a limit word, routed on their own, when they hold an event, shop or diet
    ask; None when every ask is a limit (彰化到鹿港的公車, 我頭很痛要吃什麼藥). A township said only in the
    limit's clause (去鹿港要坐什麼車？那邊有素食嗎) serves the search; so does a day said there (這禮拜六會不會
    下雨 員林的活動還有辦嗎: that day's events)."""
    split = _clauses_beside_limits(m)
    if split is None:
        return None
    text, limited = split
    if not townships_in(text):
        areas = [area for clause in limited for area in townships_in(clause)]
        text = f"{areas[0]} {text}" if areas else text
    proposal = m.route(text)
    said = next((value for clause in limited if (value := read_date(clause)) is not None), None)
    if said is not None and "date" in proposal.args and proposal.args["date"] is None:
        proposal = Proposal(proposal.tool, {**proposal.args, "date": said}, proposal.source, proposal.notes)
    return proposal if proposal.tool in SEARCH_TOOLS else None


def _asks_a_search(text: str, m: Message) -> bool:
    """An event, shop or diet ask: a township or a day alone is context (禮拜六去花壇 會不會很冷 asks about
    the weather only)."""
    return bool(any(word in text for word in EVENT_WORDS) or read_diet(text)[0] not in (None, "any")
                or any(word in NOT_FOOD_SHOPS.sub("｜", text) for word in PLACE_WORDS)
                or event_topics(text, with_diet=False) or places_named_in(text) or event_named(text, m.titles))


def _named_event_beside(m: Message) -> Proposal | None:
    """鹿港龍舟賽那邊好停車嗎: the event named with its kind, and the limit."""
    if not names_event_kind(m.text, m.titles) or set(m.hard) & _HEALTH or read_diet(m.text)[0] not in (None, "any"):
        return None
    proposal = search(m.text, tuple(side_limits(m.text)), m.titles)
    return proposal if proposal.tool in SEARCH_TOOLS else None


def hard_limit(m: Message) -> Proposal | None:
    """Health, transport, parking, shuttles, taxis or the weather: the limits alone, or the search asked
    in another clause with the limits as notes; a named shop's card beside them (叫一台計程車到和米素食),
    unless it is about health."""
    if not m.hard:
        return None
    said = m.hard + side_limits(m.text)
    shops = places_named_in(m.text)
    if shops and not set(m.hard) & _HEALTH:
        shop = first_shop(shops, m.townships)  # a chain's name with no township: every shop of that name
        return Proposal("find_place", {"name": shop["name"], "area": shop["area"]}, notes=tuple(said))
    beside = _ask_beside_limits(m) or _named_event_beside(m)
    if beside is None:
        return Proposal("show_limits", {"kinds": said})
    dropped = (Limit.HOURS,) if beside.tool == "search_local_events" else ()  # 幾點開始: the card says it
    return beside.with_notes(*(kind for kind in said if kind not in beside.notes and kind not in dropped))


def elsewhere(m: Message) -> Proposal | None:
    """A place outside Changhua County (台中有素食嗎) and no township: LOCAL has no data there."""
    if any(word in m.text for word in ELSEWHERE) and not m.townships:
        return Proposal("show_limits", {"kinds": [Limit.ELSEWHERE]})
    return None


def directory(m: Message) -> Proposal | None:
    """彰化縣政府電話幾號: a government office or other body, or a phone number, address or website, with
    no shop, diet or event word: LOCAL has no directory."""
    t = m.text
    if (DIRECTORY.search(t) and read_diet(t)[0] is None and not any(word in t for word in EVENT_WORDS)
            and not any(word in t for word in PLACE_WORDS)):
        return Proposal("show_limits", {"kinds": [Limit.DIRECTORY]})
    return None
