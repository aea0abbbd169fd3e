"""Fixed reply templates for every consented-memory outcome, in plain zh-TW for people on a phone.

Each says what happened and what did not, and how to go on; none claims more than is known
(an unknown outcome says so). Source: docs/design.md §6.
"""
from __future__ import annotations

import re

from linebot.v3.messaging import MessageAction, QuickReply, QuickReplyItem, TextMessage

from shared.context import RESTATED_HEAD, Reply
from shared.memory.diet import SAVABLE_DIETS, diet_label
from shared.memory.port import (
    ALREADY_APPLIED,
    DECLINED_MEMORY_CARD,
    EXPIRED_MEMORY_CARD,
    INVALID_MEMORY_CARD,
    MEMORY_DECLINED,
    MEMORY_FORGOTTEN,
    MEMORY_SAVED,
    STALE_MEMORY_CARD,
    MemoryResult,
)
from shared.replies.menu import MENU_CHOICES

#: 「蔬食、全素、蛋奶素或奶素」, from the one label table (shared.diets).
_SAVABLE_WORDS = "、".join(diet_label(d) for d in SAVABLE_DIETS[:-1]) + f"或{diet_label(SAVABLE_DIETS[-1])}"

_HOW_TO_REMEMBER = "想記住的話，請再說一次，例如「以後都找蔬食，幫我記住」，我會給你一張新的確認卡。"


def _quick(*labels: str) -> QuickReply:
    return QuickReply(items=[QuickReplyItem(action=MessageAction(label=label, text=label)) for label in labels])


def _reply(text: str, *labels: str, outcome: bool = False) -> Reply:
    """A memory text with its own buttons, then the menu: never a dead end (先不要
    included).

    With ``outcome`` (what functions/memory decided: saved, forgotten, cancelled, refused) the Reply
    also carries its ``follow_up``: the same words after ``shared.context.RESTATED_HEAD``, pushed once should the
    reply's outcome be unknown (docs/design.md §11). They state what is now remembered, so reading
    them twice is harmless."""
    quick = _quick(*dict.fromkeys(labels + MENU_CHOICES))
    follow_up = [TextMessage(text=f"{RESTATED_HEAD}\n{text}", quick_reply=quick)] if outcome else None
    return Reply([TextMessage(text=text, quick_reply=quick)], follow_up=follow_up)


def _current(result: MemoryResult) -> str:
    if result.dietary_type:
        return f"目前記住的是「{diet_label(result.dietary_type)}」。"
    return "目前沒有記住任何飲食偏好。"


def _saved(result: MemoryResult) -> Reply:
    return _reply(f"好的，已經記住你的飲食偏好：{diet_label(result.dietary_type)}。\n"
                  "之後查店家時，如果你沒有說素別，就會依這個偏好幫你找；你當次說的條件一定優先。\n"
                  "想查看或更正，請說「我的偏好」；想停止使用，請說「忘記我的飲食偏好」。", "我的偏好", outcome=True)


def _forgotten(result: MemoryResult) -> Reply:
    return _reply("已經忘記你的飲食偏好。之後查店家不會再套用，記錄裡也不留飲食內容；"
                  "之前還沒按的確認卡都不能再用了。\n（已經傳到聊天室的舊訊息不會因此消失。）", *MENU_CHOICES, outcome=True)


def nothing_to_forget_reply() -> Reply:
    """忘記 when no value was stored: say so; cards still waiting for 同意 were cancelled all the same."""
    return _reply("目前沒有記住任何飲食偏好，所以沒有東西要忘記；之前還沒按的確認卡也都不能再用了。", *MENU_CHOICES, outcome=True)


def _declined(result: MemoryResult) -> Reply:
    return _reply(f"好的，這次先不記住，這張確認卡已取消。你的飲食偏好沒有改變：{_current(result)}", outcome=True)


def _already(result: MemoryResult) -> Reply:
    if result.operation == "forget":
        return _reply(f"這個按鈕已經處理過了，不會重複處理。{_current(result)}", outcome=True)
    if result.operation == "decline":
        return _reply(f"這張確認卡之前已經同意過了，所以已經記住，不會取消。{_current(result)}\n"
                      "想停止使用，請說「忘記我的飲食偏好」。", outcome=True)
    return _reply(f"這張確認卡已經處理過了，不會重複保存，你的偏好也沒有改變。{_current(result)}", "我的偏好", outcome=True)


def _stale(result: MemoryResult) -> Reply:
    return _reply("這張確認卡已經失效：在它之後，你的飲食偏好有更正或忘記過，所以舊卡不能再用，"
                  f"這次什麼都沒有改變。{_current(result)}\n{_HOW_TO_REMEMBER}", "我的偏好", outcome=True)


def _expired(result: MemoryResult) -> Reply:
    if result.operation == "forget":
        return _reply("這個「忘記」按鈕已經超過有效時間，這次沒有做任何變更。"
                      "以下是你目前的偏好，附上新的按鈕；也可以直接輸入「忘記我的飲食偏好」。", "忘記我的飲食偏好", outcome=True)
    return _reply(f"這張確認卡已經超過有效時間，所以沒有保存任何東西。{_current(result)}\n{_HOW_TO_REMEMBER}", outcome=True)


def _refused_declined(result: MemoryResult) -> Reply:
    return _reply("這張確認卡你已經按過「先不要」，已經取消了，所以這次不會記住。"
                  f"{_current(result)}\n{_HOW_TO_REMEMBER}", outcome=True)


def _invalid(result: MemoryResult) -> Reply:
    return _reply("這張確認卡無法使用：它可能已經失效、不是發給這個 LINE 帳號的，或內容不完整。這次什麼都沒有保存或改變。\n"
                  "想記住自己的飲食偏好，請自己說，例如「以後都找蔬食，幫我記住」。", outcome=True)


_OUTCOME_REPLIES = {
    MEMORY_SAVED: _saved,
    MEMORY_FORGOTTEN: _forgotten,
    MEMORY_DECLINED: _declined,
    ALREADY_APPLIED: _already,
    STALE_MEMORY_CARD: _stale,
    EXPIRED_MEMORY_CARD: _expired,
    DECLINED_MEMORY_CARD: _refused_declined,
    INVALID_MEMORY_CARD: _invalid,
}


def outcome_reply(result: MemoryResult) -> Reply:
    """The fixed reply for one functions/memory outcome.

    Raises:
        KeyError: an outcome that is not one of shared.memory.port.OUTCOMES.
    """
    return _OUTCOME_REPLIES[result.outcome](result)


_VERB = {"save": "保存", "forget": "忘記", "decline": "取消"}


def unavailable_reply(operation: str) -> Reply:
    """functions/memory could not be reached, or answered before writing: nothing changed."""
    retry = "請稍後再說一次「忘記我的飲食偏好」。" if operation == "forget" else "請稍後再按一次，或再試一次。"
    return _reply(f"抱歉，這次沒有{_VERB.get(operation, '處理')}成功，你的飲食偏好沒有改變。{retry}")


def outcome_unknown_reply(operation: str) -> Reply:
    """The call was sent but no answer came in time: say we do not know yet."""
    return _reply(f"抱歉，連線有點慢，我還不確定這次有沒有{_VERB.get(operation, '處理')}成功。"
                  "請過一下說「我的偏好」查看；再按一次同一個按鈕也不會重複處理。", "我的偏好")


def not_configured_reply() -> Reply:
    """LOCAL_SIGNING_KEY or MEMORY_FUNCTION_URL is missing: the feature is off; nothing stored."""
    return _reply("記住飲食偏好的功能目前沒有開啟，這次沒有保存任何東西。"
                  "查店家時，請直接說素別，例如「花壇的蛋奶素店家」。")


def rejected_reply(operation: str) -> Reply:
    """functions/memory refused the call itself (a configuration fault on our side)."""
    return _reply(f"抱歉，這次沒有{_VERB.get(operation, '處理')}成功（我們這邊的設定有問題，會儘快處理）。"
                  "你的飲食偏好沒有改變。")


#: Health conditions, allergies and medical diets a resident may ask to be remembered: LOCAL keeps
#: one dietary condition only (docs/design.md §6), never these (幫我記住我有糖尿病，對花生過敏 stores
#: nothing).
_HEALTH_WORDS = re.compile(r"糖尿病|血糖|高血壓|血壓|過敏|痛風|尿酸|洗腎|腎臟|心臟病|膽固醇|中風|懷孕|吞嚥|"
                           r"低鹽|少鹽|低糖|無糖|忌口|慢性病|吃藥|藥物")


def names_health(text: str) -> bool:
    """Whether ``text`` names a health condition, allergy or medical diet (``_HEALTH_WORDS``)."""
    return bool(_HEALTH_WORDS.search(text or ""))


def ask_which_diet_reply(*, health_said: bool = False) -> Reply:
    """A remember request that names no diet: say what can be remembered.

    Args:
        health_said: the request named a health condition or allergy (``names_health``): the reply
            first says that such facts are neither kept nor used, then offers the diets.
    """
    labels = [f"以後都找{diet_label(d)}，幫我記住" for d in SAVABLE_DIETS]
    health = ("健康狀況、過敏和忌口（例如糖尿病、花生過敏）我不會記住，這次也沒有保存；"
              "查店家時，請直接向店家確認。\n") if health_said else ""
    return Reply([TextMessage(
        text=f"{health}我只能記住一項找店家用的飲食條件：{_SAVABLE_WORDS}。想記住哪一種呢？",
        quick_reply=QuickReply(items=[QuickReplyItem(action=MessageAction(label=f"記住：{diet_label(d)}", text=t))
                                      for d, t in zip(SAVABLE_DIETS, labels)]))])


def any_not_stored_reply() -> Reply:
    """不限 (or a negated diet, 我不吃素) asked to be remembered: nothing to store, no card."""
    return _reply(f"我只會記住一項用來篩選店家的飲食條件：{_SAVABLE_WORDS}。\n"
                  "不限素別（例如不吃素）不用記住：沒有記住偏好時，查店家本來就不限素別，這次也沒有保存任何東西。\n"
                  "如果想停止使用已記住的偏好，請說「忘記我的飲食偏好」。", "我的偏好")


def reported_speech_reply(dietary_type: str | None) -> Reply:
    """Someone else's habit (朋友說他吃素) with 幫我記住: no card; say what to type to be asked for one.

    Args:
        dietary_type: the diet the text named, or None; a savable one is put in the suggestion.
    Source: docs/design.md §6 (a card is offered only when not about someone else's habit).
    """
    head = "別人說的飲食習慣，我不會直接記成你的偏好，所以這次沒有給確認卡，也沒有保存任何東西。\n"
    if dietary_type in SAVABLE_DIETS:
        say = f"幫我記住找{diet_label(dietary_type)}"
        return _reply(f"{head}如果你之後查店家（自己吃或陪家人朋友）都要找{diet_label(dietary_type)}，"
                      f"想要我記住，請說：{say}", say)
    return _reply(f"{head}如果想要我記住你查店家時用的素別，請直接說，例如：幫我記住找蔬食")


def same_value_reply(dietary_type: str) -> Reply:
    """The value asked for is already the remembered one."""
    return _reply(f"目前記住的就是「{diet_label(dietary_type)}」，不用再記一次。", "我的偏好")


def unrecorded_message(word: str, dietary_type: str) -> TextMessage:
    """Before the card for a finer type the catalog does not record (我吃五辛素 幫我記住).

    Args:
        word: the finer word the user said (五辛素).
        dietary_type: the nearest recorded type the card offers (shared.diets.UNRECORDED_DIETS).
    The reply says the finer type is not recorded, never 「依你說的條件」, which would claim it was kept.
    """
    label = diet_label(dietary_type)
    return TextMessage(text=f"店家資料沒有「{word}」的分類，我記不住；最接近的是「{label}」。"
                            f"要記住「{label}」請按「同意記住」，不按就不保存。")


def diet_dropped_message(dietary_type: str) -> TextMessage:
    """我已經不吃素了 with a diet remembered: said before the preference view and its buttons; nothing changes
    until one is tapped."""
    return TextMessage(text=f"你說現在不吃素了，我還記著「{diet_label(dietary_type)}」。"
                            "要停用請按「忘記這個偏好」，要改請點「改成…」。")


def nothing_remembered_reply() -> Reply:
    """我已經不吃素了 with nothing remembered: one short line; no search is filtered by a diet."""
    return _reply("好的。我沒有記住你的飲食偏好，查店家時只用你當次說的條件。", *MENU_CHOICES)
