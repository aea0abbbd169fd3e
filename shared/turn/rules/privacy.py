"""Privacy and memory: asking to forget the remembered diet, never having asked to be remembered, not to be
remembered, what is kept and who sees it, each alone or beside a search; and a statement of one's own
diet (the township picker may offer to remember it)."""
from __future__ import annotations

import re
from typing import TYPE_CHECKING

from shared.diets import NOT_ASKED_TO_REMEMBER
from shared.turn.ask import Flag, PrivacyTopic
from shared.turn.dates import read_date
from shared.turn.proposal import SEARCH_TOOLS, Proposal
from shared.turn.rules.clauses import LIMIT_CLAUSE_BREAK
from shared.turn.rules.talk import ack_only

if TYPE_CHECKING:
    from shared.turn.rules.message import Message

#: Asking to forget what was remembered, in any phrasing (以後不用記吃素的事了，刪掉; 把我吃奶素的紀錄忘掉;
#: 不要再記我吃素): the forget offer (privacy_info with 忘記我的飲食偏好), never a thanks or a shop search.
_MEMORY_NOUN = r"(?:記住|記錄|紀錄|偏好|設定|素別|(?:我|你)(?:記|存)(?:住)?的)"
_DIET_NOUN = r"(?:飲食|吃素|素食|素的|全素|奶素|蛋奶素|蔬食)"
FORGET = re.compile(
    rf"(?:刪掉|刪除|刪了|忘掉|忘記|忘了|清掉|清除|移除|拿掉)[^，。？?]{{0,6}}(?:{_MEMORY_NOUN}|{_DIET_NOUN})"
    rf"|(?:取消|撤銷|停用|停止使用|(?:不要|別|不用|不必)再(?:用|套用?|幫我用))[^，。？?]{{0,4}}{_MEMORY_NOUN}"
    # 我記的那個素別不要用了, 記住的偏好別再套了
    rf"|{_MEMORY_NOUN}[^，。？?]{{0,6}}(?:不要|別|不用|不必)再?(?:用|套用?)了?"
    rf"|{_MEMORY_NOUN}[^，。？?]{{0,8}}(?:刪掉|刪除|刪了|忘掉|忘記|忘了|清掉|清除|移除|拿掉|取消|不要了|不用了|別記了)"
    rf"|{_DIET_NOUN}[^，。？?]{{0,6}}(?:刪掉|刪除|清掉|清除|忘掉)"
    r"|(?:以後|之後|從今以後|往後|現在起)?(?:都)?(?:不要|不用|別|不必|不需要)再?(?:幫我|替我|你)?(?:記|存|套用|用我的)"
    r"[^，。？?]{0,8}(?:了|啦|囉)|(?:以後|之後|往後|從今以後|現在起)(?:都)?(?:不要|不用|別|不必|不需要)再?(?:幫我|替我|你)?(?:記|存)"
    r"|(?:不要|不用|別|不必)再(?:幫我|替我|你)?(?:記|存)|不想(?:再)?(?:被)?(?:你)?(?:記住|記錄|記)|(?:刪掉|刪除|清掉|忘掉)(?:吧|啦|好了)?$")
#: Not about the remembered diet: the user's request (取消服務單) or a search (不用記 員林有素食嗎 stays a search).
FORGET_EXCEPT = re.compile(r"服務單|需求|申請|單子|留言|(?:別|不要|不能|不可以|記得|不准)忘")
#: Asking not to be remembered, on its own (不用記我吃素): nothing is stored, so it is acknowledged.
NO_MEMORY = re.compile(r"(?:不要|不用|別|不必|先不要)(?:幫我|替我|你)?(?:記|存)")
PRIVACY = re.compile(r"我的偏好|偏好是什麼|記住了什麼|忘記我|刪除我|刪掉我|清除我|我的資料|我的個資|個資|隱私|刪除資料|刪除紀錄|聊天紀錄|對話紀錄|"
                     r"我說的話|你(?:們)?(?:會)?(?:記得|知道|存了|保存|記錄|紀錄)(?:我|了)"
                     # 我的飲食習慣你們還有存著嗎
                     r"|(?:你|你們)[^，。？?]{0,4}(?:存著|存了|還存|有存|保存|留著|記著|還記得)"
                     r"|(?:飲食習慣|飲食偏好|我吃什麼素)[^，。？?]{0,6}(?:存|留|記錄|紀錄)(?:著|了|起來)?")
#: Asking whether the user's data goes to others (你們會不會把我的電話跟資料給別人): the privacy answer,
#: which says who sees a request.
SHARING = re.compile(r"(?:資料|電話|號碼|名字|個資|飲食習慣|飲食偏好)[^，。？?]{0,6}"
                     r"(?:給別人|給其他人|給別的|外流|洩漏|外洩|賣給|賣掉|分享給|公開|給誰|被誰看|誰看得到)"
                     r"|(?:賣|外流|洩漏|外洩|分享|交給別人)[^，。？?]{0,4}(?:我的)?(?:資料|個資|電話)"
                     # whether LOCAL has the user's phone (你們有我的電話嗎): it keeps none
                     r"|(?:你們|你)(?:有|存了?|知道|記得)(?:我的)(?:電話|手機)|我的(?:電話|手機)(?:號碼)?(?:你們|你)(?:有|存|知道)")
#: A privacy remark asked as a question (你們會存我的資料嗎): the search reply also says what is kept.
QUESTION = re.compile(r"[嗎?？]|會不會|有沒有|是不是|什麼|哪些")
#: A short statement of one's own diet and nothing else (我吃素, 我吃全素, 我是素食者, 我是吃素的喔): it
#: says something about the user, so the picker may offer to remember it (``own_diet`` note); a bare
#: word (素食, 全素, 蛋奶素) states nothing about the user and never does. Read on the compact
#: reading form. Source: docs/design.md §6.
OWN_DIET_STATEMENT = re.compile(
    r"^(?:我們家|我們|我家|我自己|我本身|我)(?:是|都是|都|也|也是|平常都?|一直都?|現在都?|有在|固定|本身)?(?:吃)?"
    r"(?:素食|蔬食|全素|純素|蛋奶素|奶蛋素|奶素|素|vegan)(?:的)?(?:人|者)?"
    r"(?:喔|哦|啦|耶|唷|欸|呢|啊|嘿|捏)?[。.!！~～]*$", re.IGNORECASE)


def search_beside_privacy(m: Message) -> Proposal | None:
    """A privacy or no-memory remark beside a search (我吃奶素 但不要存我的資料喔 彰化市有嗎; 你們會存我的個資嗎
    花壇有素食嗎; 我吃奶素 不用記 john有嗎): the message without the remark's words, routed on its own, with the
    note ``not_saved`` (no 記住 button; the reply says nothing is kept without consent) or ``privacy_asked``
    (the reply says what is kept); None when what is left asks for no search."""
    t = m.text
    not_saved = bool(NO_MEMORY.search(t) or NOT_ASKED_TO_REMEMBER.search(t))
    rest = t
    for pattern in (NOT_ASKED_TO_REMEMBER, NO_MEMORY, PRIVACY):
        rest = pattern.sub("｜", rest)
    if not re.sub(r"[｜\W_]+", "", rest):
        return None
    proposal = m.rules(rest)
    if proposal.tool not in SEARCH_TOOLS or proposal.tool == "needs_area":  # 不用記我吃素: no search asked
        return None
    if not_saved:
        note: Flag = Flag.NOT_SAVED
    elif any(PRIVACY.search(clause) and QUESTION.search(clause) for clause in LIMIT_CLAUSE_BREAK.split(t)):
        note = Flag.PRIVACY_ASKED
    else:
        return proposal
    return proposal.with_notes(*((note,) if note not in proposal.notes else ()))


def forget(m: Message) -> Proposal | None:
    """以後不用記了，刪掉 / 把我吃奶素的紀錄忘掉: the privacy reply led by the 忘記我的飲食偏好 button (words
    alone delete nothing); not about the user's request (取消服務單)."""
    if FORGET.search(m.text) and not FORGET_EXCEPT.search(m.text):
        return Proposal("privacy_info", {"topic": PrivacyTopic.FORGET_MY_DIET})
    return None


def never_asked(m: Message) -> Proposal | None:
    """我又沒說要你記住: nothing is kept without 同意記住 (no township or date: not beside a search)."""
    if NOT_ASKED_TO_REMEMBER.search(m.text) and not m.townships and read_date(m.text) is None:
        return Proposal("ack", notes=(Flag.NOT_SAVED,))
    return None


def search_beside_no_memory(m: Message) -> Proposal | None:
    """我吃奶素 不用記 john有嗎: the shop or search, and nothing is kept."""
    if NO_MEMORY.search(m.text) and not m.townships and not ack_only(m.text):
        return search_beside_privacy(m)
    return None


def no_memory_or_ok(m: Message) -> Proposal | None:
    """ok / 收到 alone, or 不用記我吃素 with no township: acknowledged (and nothing is kept)."""
    no_memory = NO_MEMORY.search(m.text) is not None
    if ack_only(m.text) or (no_memory and not m.townships):
        return Proposal("ack", notes=(Flag.NOT_SAVED,) if no_memory else ())
    return None


def sharing(m: Message) -> Proposal | None:
    """會不會把我的電話跟資料給別人: the privacy reply, which says who sees a request."""
    return Proposal("privacy_info", {"topic": PrivacyTopic.WHO_SEES_MY_DATA}) if SHARING.search(m.text) else None


def privacy(m: Message) -> Proposal | None:
    """What LOCAL keeps about the user (我的資料, 忘記我): the privacy reply, or the search asked beside it."""
    if not PRIVACY.search(m.text):
        return None
    return search_beside_privacy(m) or Proposal("privacy_info")
