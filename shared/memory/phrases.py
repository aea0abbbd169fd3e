"""Read a request to remember or correct a dietary preference from free text, without the model.

Rules (docs/design.md §6: 「今天想吃素」 is not 「以後幫我記住」):
- negated (不要記住, 別記, 不用幫我記, 以後不要…, 不想被記住) or a deletion (刪掉, 忘掉) → nothing;
- correct: 改成 / 改為 / 換成 / 更正為 followed by a diet word (改成蛋奶素) → ``correct``;
- remember needs a cue for later:
  - an explicit request to LOCAL: 記住 / 記下 / 幫我記, or a "from now on" word followed by an
    instruction (以後都幫我…, 以後優先…, 之後請…);
  - or a "from now on" habit (以後都吃素, 每次都…), with a few words between (以後找店都用蛋奶素就好,
    之後查餐廳一律全素, 從現在開始都找奶素, 下次都找全素), a default (預設全素, 設成蛋奶素) or a
    preference stated as such (我的偏好是全素, 偏好改全素); a diet word is needed;
- reported speech about someone else's habit (朋友說他吃素, 她說以後都吃素) is never a request,
  even with 幫我記住 (朋友說他吃素，幫我記住 → ``reported``: no card, the caller says what to type);
  a companion's diet stated by the user is (長輩吃素，以後優先找蔬食，幫我記住): the preference belongs
  to the LINE account that asked, even when the diet is a companion's;
- a third person's habit without a request (他以後都吃全素) is not a request either;
- a negated diet word is not that diet (幫我記住我不吃素 → ``any``, which is never stored:
  shared.turn.router.diet_in);
- a one-off condition (今天想吃素) has no cue for later and is left to the place search; so are a bare
  diet word (素食, 全素) and a statement of one's own diet (我吃素, 我是吃素的喔): the router answers with
  the township picker for that diet, never a consent card alone;
- the text is read in shared.text.reading_form first (Simplified 帮我记住 = 幫我記住).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from shared.diets import NOT_ASKED_TO_REMEMBER, diet_in, read_diet
from shared.text import reading_form

_NEGATED = re.compile(r"(不要|不用|別|不必|不需要|無須|毋須|免|先不要)(幫我|替我|再|先|你){0,2}(記|存|保存)"
                      r"|(以後|之後|往後|今後)(都)?(不要|別|不用)"
                      # not wanting to be remembered, or asking to delete (我不想被記住吃素; 刪掉記住的素食):
                      # the router offers the forget button, never a card to remember
                      r"|不想(再)?(被)?(你)?(記|存)|刪掉|刪除|忘掉|清掉|清除|拿掉|移除|去掉|(取消|撤銷|停用)(記住|記錄|紀錄|偏好)")
_CORRECT = re.compile(r"(改成|改為|改吃|換成|更正為|更正成|更改為)")
_EXPLICIT = re.compile(r"記住|記下|記得|記一下|幫我記|請記"
                       r"|(以後|之後|往後|今後|每次|下次)(都|也|就|一律)?(要)?(幫我|請|給我|優先|一律|只找|只要)")
_HABIT = re.compile(r"(以後|之後|往後|今後|每次)(都|也都|一律|一樣|只)"
                    r"|(以後|之後|往後|今後|每次|下次起|從今以後|從現在(?:開始|起)|從今天(?:開始|起))[^，。,!?？]{0,6}?"
                    r"(?:(都|就|也|只)(用|找|查|以|選|要|設|是|搜|吃|幫我)|一律|固定)|預設|設定(?:成|為)|設為|設成"
                    r"|偏好(?:是|為|改|改成|改為|設|設成|換成|用)|下次(?:起)?(?:都|一律|也都)")
#: Reported speech about a third person: 朋友說他…, 她說…, 他們說… (not 跟她說 / 對他說: told her).
_REPORTED_SPEECH = re.compile(r"說(他|她|祂)(們)?|(?<![跟和對向])(他|她|祂)(們)?說")
#: A third person's habit or hearsay, without a request to LOCAL: 他以後都吃全素, 聽說….
_THIRD_PERSON = re.compile(r"聽說|(他|她)(們)?(以後|之後|平常|現在|一直|都|也)")


@dataclass(frozen=True)
class MemoryRequest:
    """A request about the remembered diet.

    Attributes:
        kind: ``remember``, ``correct``, or ``reported`` (a request to remember what someone else
            said of their own habit: no card). A bare diet word or a statement of one's own diet with
            no cue for later (素食, 我吃素) is no request: the router's picker answers it.
        dietary_type: the diet the text names (``any`` for 不限), or None when it names none.
        unrecorded: the finer word the catalog does not record (五辛素), whose nearest recorded type
            is ``dietary_type`` (shared.diets.UNRECORDED_DIETS); the reply must say it is not kept.
    """

    kind: str
    dietary_type: str | None
    unrecorded: str | None = None


def read_memory_request(text: str) -> MemoryRequest | None:
    """Tell whether ``text`` asks LOCAL to remember (or correct) a dietary condition for later.

    Args:
        text: the user's message (never logged).
    Returns:
        MemoryRequest (``reported`` for reported speech with a request), or None when the text is
        not such a request (negated, reported speech alone, a third person's habit, one-off).
    Source: docs/design.md §6 (a card only on a request to remember, not negated, not about someone else).
    """
    compact = re.sub(r"\s+", "", reading_form(text or ""))  # 帮我记住 → 幫我記住 (s2twp, as the router reads)
    if not compact or _NEGATED.search(compact) or NOT_ASKED_TO_REMEMBER.search(compact):
        return None  # 我又沒說要你記住: a complaint, not a request
    explicit = _EXPLICIT.search(compact)
    if explicit and explicit.group() == "記得" and (diet_in(compact) is None or re.search(r"[嗎吗?？]$", compact)
                                                   or compact[max(0, explicit.start() - 1):explicit.start()] == "我"):
        explicit = None  # 你記得我嗎 / 你記得我吃素嗎 / 我記得那家素食店在花壇: not a request to remember
    if _REPORTED_SPEECH.search(compact):
        return MemoryRequest("reported", diet_in(compact)) if explicit else None
    correct = _CORRECT.search(compact)
    if correct:
        diet, unrecorded = read_diet(compact[correct.end():])
        if diet is not None:
            return MemoryRequest("correct", diet, unrecorded)
    if not explicit and not _HABIT.search(compact):
        # 素食 / 我吃素 / 我是吃素的喔 ask for no memory: the router answers with the shop picker for that
        # diet, which offers to remember only a statement about oneself (router.OWN_DIET_STATEMENT)
        return None
    if _THIRD_PERSON.search(compact) and not explicit:
        return None
    diet, unrecorded = read_diet(compact)
    if diet is None and not explicit:
        return None  # 「以後都有活動嗎」: a habit word without a diet is not about memory
    return MemoryRequest("remember", diet, unrecorded)
