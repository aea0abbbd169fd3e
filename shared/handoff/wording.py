"""What the user reads about a handoff request (zh-TW, short lines, for older residents on a phone).

Honest by construction: a receipt says the request is *registered and waiting for a person*;
nothing here says it is arranged or handled (never 已安排好 / 處理好了). When the outcome is not
known, the words say it is being checked. Source: docs/design.md §4 (a request created is
not a request a person has handled).
"""
from __future__ import annotations

from linebot.v3.messaging import MessageAction, QuickReply, QuickReplyItem, TextMessage

from shared.clock import wall_clock_text
from shared.config import Settings
from shared.context import RESTATED_HEAD
from shared.handoff import codes
from shared.handoff.requests import Receipt
from shared.signing import NOT_CONFIGURED

#: Human lifecycle (docs/design.md §4, §10: awaiting_acceptance → accepted → completed, or declined), in plain words.
HUMAN_STATES = {
    "awaiting_acceptance": "已登記，等待工作人員受理（還沒有人開始處理）",
    "accepted": "工作人員已受理，正在處理中",
    "completed": "工作人員已標示這筆服務詢問結束",
    "declined": "工作人員這次無法處理這筆服務詢問",
}

STATUS_ENTRY = "查看原本服務單"
HOW_TO_ASK = "新需求：…"


def _status_quick_reply() -> QuickReply:
    return QuickReply(items=[QuickReplyItem(action=MessageAction(label=STATUS_ENTRY, text=STATUS_ENTRY))])


def local_time(settings: Settings, iso_text: str) -> str:
    """ISO UTC text → ``MM/DD HH:MM`` on the configured wall clock (Asia/Taipei)."""
    return wall_clock_text(iso_text, settings.tz, "%m/%d %H:%M")


def number(settings: Settings, request: dict) -> str:
    """The request's number as people read it: ``A7K-3QF`` (``shared.handoff.codes``), or for a request
    made before codes, 「12/02 10:15 登記的那筆」."""
    return codes.label(request, settings.tz)


def human_state_words(state: str | None) -> str:
    """The plain words for a ``human_state``; an unknown state is named as unknown, not guessed."""
    return HUMAN_STATES.get(state or "", "狀態未知，請洽工作人員")


def receipt_message(settings: Settings, receipt: Receipt, *, variant: str = "created") -> TextMessage:
    """The receipt: registered, its number, and that it waits for a person.

    Args:
        variant: "created" (first answer to the confirmation), "repeat" (the card was tapped
            again: same request, not registered twice), "after_check" (pushed after the user
            was told "checking") or "restated" (pushed after a reply of unknown outcome that
            carried the receipt: the user may be reading it a second time, so it restates it).
    """
    head = {
        "after_check": "通知：剛才確認中的服務詢問，已查證「有登記成功」。",
        "repeat": "這筆服務詢問先前已經登記過了，不會重複登記。",
        "restated": f"{RESTATED_HEAD}你的服務詢問已登記，不會重複登記。",
    }.get(variant, "已登記你的服務詢問。")
    return TextMessage(text=(
        f"{head}\n單號：{number(settings, receipt.number_fields())}\n登記時間：{local_time(settings, receipt.created_at)}\n"
        f"目前狀態：{human_state_words(receipt.human_state)}。\n"
        f"之後可以輸入「{STATUS_ENTRY}」查詢進度。"), quick_reply=_status_quick_reply())


def same_request_note(settings: Settings, request_doc: dict) -> TextMessage:
    """Before a new card whose text equals an open request's: that one is already registered, so the
    same matter needs no second request; another one is made only if the card below is confirmed.

    Args:
        request_doc: the open request (``display_code``, ``created_at`` ISO UTC, ``human_state``).
    """
    return TextMessage(text=(
        f"提醒：你在 {local_time(settings, request_doc['created_at'])} 已經送出一樣的內容"
        f"（單號：{number(settings, request_doc)}，目前狀態：{human_state_words(request_doc.get('human_state'))}）。\n"
        "同一件事不用再送，下面的卡片不用按；要另外再登記一筆，才按卡片的「確認送出」。"))


#: Said before a new card that replaced one the resident could still confirm.
REPLACED_CARD_LINE = "前一張確認卡已換成這一張。"


def card_notes(settings: Settings, *, replaced: bool, same_request: dict | None) -> TextMessage | None:
    """The one message before a new confirmation card, or None: that it replaced the previous card, and the
    note about an open request with the same text (``same_request_note``), in one message."""
    lines = [REPLACED_CARD_LINE] if replaced else []
    if same_request is not None:
        lines.append(same_request_note(settings, same_request).text)
    return TextMessage(text="\n".join(lines)) if lines else None


def pending_message(*, will_check: bool) -> TextMessage:
    """The unknown outcome: say it is being checked, claim nothing (reply_state pending_verification)."""
    if will_check:
        return TextMessage(text=(
            "正在確認是否已登記…\n剛才系統回應太慢，我們還不確定這筆服務詢問有沒有登記成功。"
            "系統會用同一筆確認自動查證，查到結果會再通知你；請不要重新送出。"))
    return TextMessage(text=(
        "正在確認是否已登記…\n剛才系統回應太慢，我們還不確定這筆服務詢問有沒有登記成功，"
        f"目前也沒辦法自動查證。請稍後輸入「{STATUS_ENTRY}」查詢；查不到的話，"
        "可以再按一次同一張卡片的「確認送出」，不會重複登記。"), quick_reply=_status_quick_reply())


def followup_message(*, recorded: bool) -> TextMessage:
    """After the last reconcile attempt: the outcome stays unknown; say so honestly."""
    if recorded:
        return TextMessage(text=(
            "抱歉，我們一直沒辦法查證你剛才的服務詢問是否已登記。已留下紀錄，請工作人員人工確認；"
            f"請不要重複送出。你也可以稍後輸入「{STATUS_ENTRY}」查詢。"), quick_reply=_status_quick_reply())
    return TextMessage(text=(
        "抱歉，我們一直沒辦法查證你剛才的服務詢問是否已登記。"
        f"請稍後輸入「{STATUS_ENTRY}」查詢；查不到的話，請重新輸入「{HOW_TO_ASK}」。"),
        quick_reply=_status_quick_reply())


_NOT_CREATED_REASONS = {
    "expired": "確認卡片已超過有效時間",
    "superseded": "你後來又建立了新的服務詢問",
    "unconfirmed_operation": "這筆詢問已取消或找不到",
    "withdrawn": "你已經收回那則訊息",
}


def not_created_message(reason: str) -> TextMessage:
    """Reconcile found nothing and the consent is no longer valid: nothing was registered.

    ``cancelled_by_user`` (「取消」 tapped while it was being checked) gets a short line matching
    what the user did, not a request to resubmit.
    """
    if reason == "cancelled_by_user":
        return TextMessage(text="查證結果：你已取消這筆服務詢問，沒有送出。")
    if reason == "withdrawn":
        return TextMessage(text="查證結果：你已經收回那則訊息，這筆服務詢問沒有送出，內容也已刪除。")
    why = _NOT_CREATED_REASONS.get(reason, "確認已經失效")
    return TextMessage(text=(
        f"查證結果：你剛才的服務詢問「沒有登記」（{why}）。"
        f"如果還需要幫忙，請重新輸入「{HOW_TO_ASK}」，再按一次「確認送出」。"))


def refusal_message(status: str) -> TextMessage:
    """A confirmation that creates nothing (expired / superseded / cancelled / conflict / wrong actor)."""
    texts = {
        "expired": f"這張確認卡片已經過期，所以沒有送出。需要的話，請重新輸入「{HOW_TO_ASK}」。",
        "superseded": "這張確認卡片已經被你後來的新詢問取代，所以沒有送出。請用最新的那張卡片確認。",
        "unconfirmed_operation": f"這筆詢問已經取消或找不到，所以沒有送出。需要的話，請重新輸入「{HOW_TO_ASK}」。",
        "idempotency_conflict": f"這張卡片的內容和登記資料對不上，所以沒有送出。請重新輸入「{HOW_TO_ASK}」。",
        "wrong_actor": "這張確認卡片不是你的，所以沒有送出。",
        "withdrawn": (f"這則訊息已經收回，所以這筆服務詢問沒有送出，內容也已刪除。"
                      f"需要的話，請重新輸入「{HOW_TO_ASK}」。"),
    }
    return TextMessage(text=texts.get(status, f"這張確認卡片已經失效，沒有送出。請重新輸入「{HOW_TO_ASK}」。"))


def card_refused_message(reason: str) -> TextMessage:
    """A tampered, foreign or unreadable card, or no signing key configured."""
    if reason == NOT_CONFIGURED:
        return TextMessage(text="抱歉，服務詢問功能目前還沒設定好，這次沒有送出任何資料。請稍後再試。")
    return TextMessage(text=f"這張確認卡片無法辨識（可能已失效或不是給你的），所以沒有送出任何資料。"
                            f"需要的話，請重新輸入「{HOW_TO_ASK}」。")


def draft_refused_message(status: str, *, length: int = 0, limit: int = 0) -> TextMessage:
    """A ``新需求：`` message that does not become a card."""
    if status == "text_too_long":
        return TextMessage(text=(f"這則需求有 {length} 個字，超過 {limit} 字的上限，所以還沒有建立。"
                                 f"請精簡成 {limit} 字以內，開頭一樣加上「新需求：」再傳一次。"))
    if status == "daily_cap_reached":
        return TextMessage(text=(f"今天已經登記 {limit} 筆服務詢問，達到每天的上限，所以這則還沒有建立。"
                                 f"請明天再留言，或輸入「{STATUS_ENTRY}」查看已登記的詢問。"))
    return TextMessage(text="請在「新需求：」後面寫下想請工作人員幫忙的事，例如：\n"
                            "新需求：想參加週六的社區走讀，需要輪椅協助")


def store_busy_message() -> TextMessage:
    """A draft could not be stored: no card was shown, nothing can be confirmed."""
    return TextMessage(text="抱歉，剛才系統忙碌，這則需求還沒有建立確認卡片。請稍後再傳一次。")


def cancel_message(status: str, shown_number: str | None = None) -> TextMessage:
    """The card's 「取消」.

    Args:
        shown_number: the confirmed request's number as people read it (``number``), for
            ``already_confirmed``.
    """
    registered = f"（單號：{shown_number}）" if shown_number else ""
    texts = {
        "cancelled": "已取消，這筆需求沒有送出。",
        "already_cancelled": "這筆需求先前已經取消，沒有送出。",
        "already_confirmed": (f"這筆服務詢問已經登記{registered}，沒辦法從這張卡片取消。"
                              f"需要補充或更改的話，請再傳一則「{HOW_TO_ASK}」說明。"),
        "superseded": "這張卡片已經被你後來的新詢問取代，舊的這筆沒有送出。",
        "expired": "這張卡片已經過期，這筆需求沒有送出。",
        "withdrawn": "這則訊息已經收回，這筆需求沒有送出，內容也已刪除。",
    }
    return TextMessage(text=texts.get(status, "找不到這筆需求，沒有送出任何資料。"))


def store_busy_status_message() -> TextMessage:
    """查看原本服務單 could not read the store."""
    return TextMessage(text=f"抱歉，現在暫時查不到服務單，請稍後再輸入「{STATUS_ENTRY}」。")


def store_busy_cancel_message() -> TextMessage:
    """The card's 「取消」 could not be recorded."""
    return TextMessage(text="抱歉，剛才系統忙碌，還沒有取消成功。請稍後再按一次「取消」。")


#: The quick reply under the answer to cancelling a registered request: it drafts the cancel as a new
#: request (``新需求：請取消服務單 A7K-3QF``), which the resident still confirms on its card.
CANCEL_REQUEST_LABEL = "請公所取消這筆"


def cancel_registered_message(shown_number: str | None) -> TextMessage:
    """Cancelling after 確認送出 (算了 right after the receipt, 不要了 取消, 我要撤回服務單): a registered
    request cannot be withdrawn here; how to ask for it (docs/handoff.md, cancel in words).

    Args:
        shown_number: the open request's number (``number``), or None when there is none to name (no
            open request, or a group chat): then the words say how, without a button.
    """
    if shown_number is None:
        return TextMessage(text=(
            "還沒按「確認送出」的不會送出。已經送出的服務詢問，我這裡沒辦法撤回。\n"
            f"想撤回，請傳「{DRAFT_CANCEL_HEAD}」加上單號，我會先給你確認；也可以直接告訴公所工作人員。"),
            quick_reply=_status_quick_reply())
    return TextMessage(
        text=(f"服務詢問（單號：{shown_number}）已經送出，我這裡沒辦法撤回。\n"
              f"想撤回，請點「{CANCEL_REQUEST_LABEL}」，確認後會轉給工作人員；也可以直接告訴公所工作人員。"),
        quick_reply=QuickReply(items=[
            QuickReplyItem(action=MessageAction(label=CANCEL_REQUEST_LABEL,
                                                text=cancel_request_text(shown_number))),
            QuickReplyItem(action=MessageAction(label=STATUS_ENTRY, text=STATUS_ENTRY))]))


#: The words a cancel request is drafted from (its number follows).
DRAFT_CANCEL_HEAD = "新需求：請取消服務單"


def cancel_request_text(shown_number: str) -> str:
    """The text of the request that asks staff to cancel one: ``新需求：請取消服務單 A7K-3QF``."""
    return f"{DRAFT_CANCEL_HEAD} {shown_number}"


def request_not_left_message() -> TextMessage:
    """算了 right after the prompt to leave a request: nothing was left, nothing is sent."""
    return TextMessage(text="好的，這次沒有留下需求，也沒有送出任何資料。")


def cancelled_in_words_message() -> TextMessage:
    """算了 / 不用了 / 取消 said while a confirmation card is open: that card is cancelled (as its 「取消」)."""
    return TextMessage(text="好的，剛才那張確認卡已經取消，這筆需求沒有送出。")


#: The quick reply that offers a problem said inside another question as a request (its text is the
#: problem's words after 新需求：, which opens the confirmation card).
PROBLEM_OFFER_LABEL = "把這件事留給公所"


def problem_alone_line(words: str) -> str:
    """A problem said alone (路燈壞了): heard, and how to leave it for the town hall's staff, truthfully."""
    return (f"你提到「{words}」。想請公所處理，可以點「{PROBLEM_OFFER_LABEL}」，"
            "我會先給你確認，按「確認送出」後才轉給公所工作人員。")


def problem_offer_line(words: str) -> str:
    """Said beside the answer to the other question: the problem heard, and how to leave it as a request."""
    return f"你提到「{words}」：想請公所處理，可以點「{PROBLEM_OFFER_LABEL}」，我會先給你確認。"
