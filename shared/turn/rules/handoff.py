"""Handoff: the resident's own requests (status, cancelling), asking for a person, reporting something for
a person to fix. Rules: ``request_draft``, ``request_status``, ``person_asked``."""
from __future__ import annotations

import re
from typing import TYPE_CHECKING

from shared.handoff.codes import said_in as number_said_in
from shared.handoff.drafts import request_text_of
from shared.places.search import places_named_in
from shared.turn.proposal import Proposal
from shared.turn.vocabulary.events import EVENT_WORDS
from shared.turn.vocabulary.places import PLACE_WORDS

if TYPE_CHECKING:
    from shared.turn.rules.message import Message

#: Cancelling said alone (取消, 我要撤回).
_CANCEL_ALONE = re.compile(r"(?:我要|我想|幫我)?(?:取消|撤銷|撤回|撤掉)")

STATUS = re.compile(r"服務單|進度|我的需求|我的申請|申請(?:狀態|結果)|處理到哪|有人處理|受理了|登記了嗎"
                    # 單子現在怎樣了, 我反映的事情處理好了嗎, 我的案子怎麼樣了
                    r"|單子|我的單|(?:需求|申請|案子|案件|反映的?(?:事情?|問題)?|反應的?(?:事情?|問題)|留言|詢問)"
                    r"[^，。？?]{0,4}(?:怎樣|怎麼樣|如何|處理(?:好|了|完)|有(?:沒有)?(?:人)?(?:回|處理|看)|還沒|到哪|進行)"
                    r"|有(?:沒有)?人(?:回覆|回我|看到|接手)|(?:什麼時候|多久)(?:會)?(?:有人)?(?:處理|回覆|聯絡)"
                    # 我剛剛報的冷氣那件 有人看了沒
                    r"|(?:報|反映|反應|申請|登記|送出?|留)的[^，。？?]{0,8}(?:那件|那個|那筆|事情?)"
                    r"|有(?:沒有)?人(?:看了?|理|處理)(?:沒|嗎|了沒|了嗎)"
                    # 我上次開的單呢, 幫我開的單處理了沒
                    r"|(?:開|建立?|填|送|留)的(?:服務)?單(?![位車獨純身人點品據字])")
#: The user's own earlier request named by its subject or by when it was sent (剛剛那個水溝蓋的, 我報的路燈,
#: 上次那件, 路燈的事), then a progress word (處理了沒, 好了沒, 有人看了沒, 進度): the status reply.
_OWN_REQUEST_REF = (r"(?:(?:剛剛|剛才|稍早|上次|上回|之前|前幾天|前天|昨天|那天|早上)(?:我)?(?:(?:送|報|反映|反應|說|講|問|申請|登記|留)的?)?"
                    r"(?:那|這)?(?:個|件|筆|張|份|次)?"
                    r"|我(?:剛剛|剛才|之前|上次|昨天)?(?:報|反映|反應|申請|登記|送出?|留|說|講)(?:的|過的)"
                    r"|(?:那|這)(?:個|件|筆|張)[^，。？?]{0,8}(?:的事|的問題|的單)"
                    # 路燈的事處理好了沒, 水溝的問題解決了嗎: a subject's matter, then a progress word
                    r"|[^，。？?\s]{1,8}?的(?:事情?|問題|案子|單子?)(?:呢)?)")
_PROGRESS = (r"(?:處理|修理?|弄|辦|做|解決)(?:好|完|掉)?了?(?:沒有?|嗎|了沒|了嗎)|(?:好|修好|弄好)了?(?:沒有?|嗎)"
             r"|有(?:沒有)?人(?:看|理|處理|來|回|管)(?:過)?了?(?:沒有?|嗎)|進度|怎麼樣了|怎樣了|如何了|有下文|有消息|有回音"
             r"|結果(?:呢|如何)|還沒(?:好|處理|修|來)")
STATUS_BY_SUBJECT = re.compile(rf"{_OWN_REQUEST_REF}[^，。？?]{{0,12}}?(?:{_PROGRESS})")
_CANCEL_VERB = r"(?:取消|撤回|撤銷|撤掉|撤了|撤除|撤下|不要了|不用了|作廢|收回|抽回|刪掉|刪除|刪了|拿掉)"
CANCEL = re.compile(r"取消|撤回|不要了")
CANCEL_ANY = re.compile(_CANCEL_VERB)
#: The user's request, said without 服務單 (那個單, 我剛剛送出的需求, 我的申請).
_REQUEST_NOUN = (r"(?:服務單|單子|(?:那|這|我的|剛剛的|剛才的|之前的|上次的)(?:個|張|筆|份)?單(?![位車獨純身人點品])"
                 r"|需求|服務詢問|申請|登記|案子|案件|留言|送出)")
#: Cancelling a request in any phrasing (我想取消我剛剛送出的需求, 算了 那個單幫我撤掉, 服務單不要了).
CANCEL_REQUEST = re.compile(rf"{_CANCEL_VERB}[^，。？?]{{0,8}}{_REQUEST_NOUN}|{_REQUEST_NOUN}[^，。？?]{{0,8}}{_CANCEL_VERB}")
#: Not cancelling (我不是要取消服務單，只是想看進度): a status question.
NOT_CANCEL = re.compile(r"(?:不是要|不要|別|不用|沒有要|沒要|不想)(?:幫我)?(?:取消|撤)")
#: Asking for a person, said without the 新需求 form (我想留言給你們, 找真人).
HANDOFF_INFO = re.compile(r"留言|找真人|真人|客服|人工|聯絡你們|聯繫你們|工作人員|志工|找人|有人(?:可以|能)?幫|"
                          r"(?:需要|想要|想請|請)(?:人|你們|有人)?(?:幫忙|協助|幫我)|幫幫我|求助|求救|請人幫")
#: A person asked for by their role (我要找里長, 我要跟承辦人講, 可以幫我轉接嗎, 想跟公所的人說): LOCAL connects no
#: call, so it is the offer to leave a written request for the town hall's staff.
_PERSON_ROLE = r"(?:[里裡]長|村長|鄰長|承辦人?員?|公所的人|鄉公所的人|鎮公所的人|負責的人|負責人|主管|專員|課長|鄉長|鎮長|市長|真人)"
_PERSON_NAMED = (rf"找{_PERSON_ROLE}|(?:跟|和|與|給|同){_PERSON_ROLE}[^，。？?]{{0,3}}(?:講|說|談|聯絡|聯繫|反映|反應|通話)"
                 r"|轉接|接(?:給)?真人")
#: Asking for a person to act, or reporting something for a person to fix:
#: answered with the 新需求 form before any directory or search rule.
PERSON_ASK = re.compile(rf"{_PERSON_NAMED}|請人|專人|你們的人|(?:聯絡|聯繫|打給|打電話給|回電給?)我|回電|投訴|申訴|陳情|客訴|檢舉|報修"
                        r"|反映|坑洞|凹洞|(?:燈|路|水溝|水管|馬路|號誌|紅綠燈|樹)[^，。？?]{0,4}(?:壞|破|堵|斷|倒|不亮|積水)")


def request_draft(m: Message) -> Proposal | None:
    """幫我建立服務單：路燈壞了, 我要建單: a request to create one, never a status question; the request hook
    makes its card first, so this answers only where no hook ran (the 新需求 form)."""
    return Proposal("handoff_info") if request_text_of(m.text) is not None else None


#: What may be said around a request number alone (單號 A7K-3QF 呢？): still a status question.
_AROUND_NUMBER = re.compile(r"[\s\-，。、？?！!：:「」]|單號|編號|號碼|我的|請問|查詢?|一下|呢|嗎|的")
_PROGRESS_SAID = re.compile(_PROGRESS)


def _number_asked(t: str) -> Proposal | None:
    """A request number (shared.handoff.codes: A7K-3QF, a7k3qf, Ａ７Ｋ－３ＱＦ) with a status word, a
    progress word, or nothing else (單號 A7K-3QF 呢): the status of that request."""
    said = number_said_in(t)
    if said is None or (CANCEL_ANY.search(t) and not NOT_CANCEL.search(t)):
        return None
    code, rest = said
    if STATUS.search(t) or _PROGRESS_SAID.search(t) or not _AROUND_NUMBER.sub("", rest):
        return Proposal("handoff_status", {"code": code})
    return None


def request_status(m: Message) -> Proposal | None:
    """服務單進度, 我的服務單, 剛剛那個水溝蓋的 處理了沒 (not 上次那個市集辦了沒), A7K-3QF 處理到哪了: the
    status reply (of that request when its number is said); how to cancel one (我想取消我剛剛送出的需求,
    算了 那個單幫我撤掉) → how cancelling works."""
    t = m.text
    by_number = _number_asked(t)
    if by_number is not None:
        return by_number
    by_subject = STATUS_BY_SUBJECT.search(t) is not None and not any(word in t for word in EVENT_WORDS) \
        and not any(word in t for word in PLACE_WORDS) and not places_named_in(t)
    if not (STATUS.search(t) or by_subject or CANCEL_REQUEST.search(t) or _CANCEL_ALONE.fullmatch(t)):
        return None
    cancel = CANCEL_ANY.search(t) and not NOT_CANCEL.search(t)
    return Proposal("handoff_cancel_help" if cancel else "handoff_status")


def person_asked(m: Message) -> Proposal | None:
    """可以請人打電話給我嗎, 我要反映路燈壞了: the 新需求 form (not beside an events ask)."""
    if PERSON_ASK.search(m.text) and not any(word in m.text for word in EVENT_WORDS):
        return Proposal("handoff_info")
    return None
