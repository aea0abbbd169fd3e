"""Events: the topics asked for, and the people who ask or go (who are no topic)."""
from __future__ import annotations

import re

from shared.diets import DIET_WORDS
from shared.turn.dates import read_date
from shared.turn.rules.titles import NOT_TITLE
from shared.turn.rules.townships import strip_townships
from shared.turn.vocabulary.events import EVENT_DIET_TOPICS, EVENT_TOPICS, EVENT_WORDS
from shared.turn.vocabulary.talk import PEOPLE

#: Between two topics, a word that makes them alternatives (市集跟親子活動, 講座或展覽): either one.
#: Not when both must hold (長輩跟小孩都可以參加).
_TOPIC_OR = re.compile(r"^[\s的]*(?:跟|和|與|及|或是|或者|或|還是|、|/|,|，)[\s]*$")
_TOPIC_BOTH = re.compile(r"都|一起|同時|一同|皆")
#: A topic found: (where it starts, where it ends, the topic).
_Found = tuple[int, int, str]


def _topics_found(text: str, with_diet: bool) -> list[_Found]:
    """Each topic ``text`` says, at its first word found in the table's order; a topic inside one already
    found is not another (長輩 in 長輩健康操)."""
    found: list[_Found] = []
    for word, topic in EVENT_TOPICS + (EVENT_DIET_TOPICS if with_diet else ()):
        at = text.find(word)
        if at < 0 or any(topic == other or topic in other for _, _, other in found):
            continue
        found.append((at, at + len(word), topic))
    return found


def event_topics(text: str, with_diet: bool) -> list[str]:
    """The event topics of ``text``, in order: each a keyword term; two joined by 跟 / 或 / 和 / 、
    are one term of alternatives (``市集|親子``), unless 都 / 一起 says both must hold."""
    found = _topics_found(text, with_diet)
    order = {topic: index for index, (_, _, topic) in enumerate(found)}  # the table's order
    groups: list[list[_Found]] = []
    either = not _TOPIC_BOTH.search(text)
    for entry in sorted(found):
        last = groups[-1][-1] if groups else None
        if last is not None and either and last[1] <= entry[0] and _TOPIC_OR.match(text[last[1]:entry[0]]):
            groups[-1].append(entry)
        else:
            groups.append([entry])
    groups.sort(key=lambda group: min(order[topic] for _, _, topic in group))
    return ["|".join(topic for _, _, topic in group) for group in groups]


ASKER = re.compile(rf"(?:{PEOPLE})(?:們)?(?:想|要|有|在|剛剛|一直)?(?:叫我|要我|請我|託我|讓我)?(?:問|知道|打聽|說)")
#: Someone who goes, not what the event is about (阿嬤想帶孫子去, 想帶爸媽去, 帶小孩去玩, 阿公要去, 阿嬤想看):
#: no event topic when said after the events question (``without_goers``), like who asks, nor anywhere
#: in a message that names an event or another topic (阿公想去看龍舟: the boats, not 長輩 events only).
#: Not a topic asked for (有長輩的活動嗎, 親子活動, 適合小孩的活動 still filter).
_GOERS = rf"(?:{PEOPLE}|爸媽|父母|孫|小朋友|長者|老人|家裡的人)(?:們)?"
GOER = re.compile(rf"(?<!適合)(?<!給)(?<!的)(?:{_GOERS}(?:也|都)?(?:想要?|要|會|打算|準備)?"
                  rf"(?:帶|陪)(?:我的?|著)?(?:{_GOERS})?|(?:想要?|要|會|打算|準備)?(?:帶|陪)(?:我的?|著)?{_GOERS}"
                  rf"|{_GOERS}(?:也|都)?(?:想要?|要|會|打算|準備))"
                  r"(?:一起|出)?(?:去|來|出門|參加|過去|玩|走走|看|逛)")


def without_goers(text: str) -> str:
    """``text`` without who goes, said after the events question (這禮拜六日有啥活動 阿嬤想帶孫子去).

    Only after the first event word: a party said before it may describe the event asked for
    (帶小朋友去的活動, 阿嬤想去走走 鹿港這個月有什麼活動) and without an event word the people may be
    the only cue of an events ask (週日想帶孩子去玩), so those keep their topic as before.
    """
    ends = [at + len(word) for word in EVENT_WORDS if (at := text.find(word)) >= 0]
    if not ends:
        return text
    cut = min(ends)
    return text[:cut] + GOER.sub("｜", text[cut:])


def title_hint(t: str) -> str | None:
    """Words said right before an event kind that may be part of one event's title (冬季蔬果市集要帶什麼
    → 冬季蔬果; 八卦山健走 → 八卦山), or None. The engine narrows with it only when a title holds it."""
    known = [w for w, _ in EVENT_TOPICS] + list(EVENT_WORDS) + [w for w, _ in DIET_WORDS]
    for word, _ in EVENT_TOPICS:
        at = t.find(word)
        if at <= 0:
            continue
        before = re.search(r"[\u4e00-\u9fff]{2,6}$", strip_townships(t[:at]))
        if before is None:
            continue
        hint = NOT_TITLE.split(before.group(0))[-1]
        if len(hint) >= 2 and not any(hint in k or k in hint for k in known) and read_date(hint) is None:
            return hint
    return None
