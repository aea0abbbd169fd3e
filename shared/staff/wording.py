"""What the resident and the staff read about staff actions (zh-TW, short lines).

The resident is told each change once, in plain words, without promising an outcome or a time
(never 「馬上」, 「一定」, 「已解決」): taken, waiting again, completed, declined, each with the help menu.
Requests are named by their number as people read it (``A7K-3QF``, ``shared.handoff.codes.label``).
Staff are told who holds a request by a short label, never by a resident's id. Source: docs/design.md §10.
"""
from __future__ import annotations

from datetime import tzinfo

from linebot.v3.messaging import MessageAction, QuickReply, QuickReplyItem, TextMessage

from shared.clock import TAIPEI
from shared.handoff import codes, staff_outbox
from shared.handoff.wording import STATUS_ENTRY
from shared.replies.menu import HELP_CHOICES, MENU_CHOICES
from shared.staff import access, audit
from shared.staff.cards import BUTTONS, LABELS


def _menu_quick_reply(*first: str) -> QuickReply:
    """``first``, then the help menu (查活動, 查蔬食, 留下服務詢問, 查看原本服務單): a notice never ends the chat."""
    return QuickReply(items=[QuickReplyItem(action=MessageAction(label=label, text=label))
                             for label in dict.fromkeys(first + HELP_CHOICES)])


def shown_number(request: dict, tz: tzinfo = TAIPEI) -> str:
    """A request's number as people read it: ``A7K-3QF``, or when it was made (``codes.label``)."""
    return codes.label(request, tz)


def resident_message(purpose: str, shown: str | None) -> TextMessage:
    """The resident's notice for one staff change (``accepted``, ``returned``, ``completed`` or ``declined``).

    Args:
        shown: the request's number as people read it (``shown_number``), or None.
    Raises:
        KeyError: another purpose.
    """
    number = f"（單號：{shown}）" if shown else ""
    if purpose == staff_outbox.ACCEPTED:
        return TextMessage(text=(f"已有專人接手你的服務詢問{number}。\n"
                                 f"想知道目前狀態，可以輸入「{STATUS_ENTRY}」。"), quick_reply=_menu_quick_reply(STATUS_ENTRY))
    if purpose == staff_outbox.RETURNED:
        return TextMessage(text=(f"你的服務詢問{number}改回等待工作人員接手，還在排隊，沒有被取消。\n"
                                 f"想知道目前狀態，可以輸入「{STATUS_ENTRY}」。"), quick_reply=_menu_quick_reply(STATUS_ENTRY))
    if purpose == staff_outbox.COMPLETED:
        return TextMessage(text=(f"工作人員已將你的服務詢問{number}標示為處理結束。\n"
                                 "如果還需要幫忙，可以再留下新的服務詢問。"), quick_reply=_menu_quick_reply(MENU_CHOICES[2]))
    if purpose == staff_outbox.DECLINED:
        # not only 查活動 and 找蔬食: the resident may want the request or a new one
        # a next step the resident can take: a clearer request, or the counter (there is no phone directory)
        return TextMessage(text=(f"很抱歉，工作人員這次無法處理你的服務詢問{number}。\n"
                                 f"可以點「{MENU_CHOICES[2]}」，把事情寫得更詳細再留一則；"
                                 "也可以到公所服務台當面詢問。"),
                           quick_reply=_menu_quick_reply(MENU_CHOICES[2], STATUS_ENTRY))
    raise KeyError(purpose)


def applied_message(op: str, staff: access.StaffMember, request: dict, *, notified: bool,
                    tz: tzinfo = TAIPEI) -> TextMessage:
    """The staff tapper's answer after their action applied.

    Args:
        notified: True only when this transition wrote the resident's notice (the staff outbox entry of
            ``transitions.apply``). Without one (a request taken, returned and taken again: the resident
            is told each outcome once) the answer never says the resident was told now; it says the
            earlier notice stands and nothing was sent this time.
        tz: the wall clock of a request's number when it has no code.
    """
    rid = shown_number(request, tz)
    if notified:
        texts = {
            "take": f"{staff.label} 已接手 {rid}，已通知詢問者「已有專人接手」。處理結束後請按「{LABELS['done']}」。",
            "decline": f"{staff.label} 已將 {rid} 標示為無法處理，並已通知詢問者。",
            "done": f"{staff.label} 已將 {rid} 標示為已完成，並已通知詢問者。",
            "back": f"{staff.label} 已將 {rid} 轉回待處理，其他工作人員可以接手；已通知詢問者「改回等待接手」。",
        }
    else:
        unchanged = "這次沒有再通知詢問者（同一筆服務詢問的每種結果只通知一次，先前已通知過）。"
        texts = {
            "take": f"{staff.label} 已接手 {rid}。{unchanged}處理結束後請按「{LABELS['done']}」。",
            "decline": f"{staff.label} 已將 {rid} 標示為無法處理。{unchanged}",
            "done": f"{staff.label} 已將 {rid} 標示為已完成。{unchanged}",
            "back": f"{staff.label} 已將 {rid} 轉回待處理，其他工作人員可以接手。{unchanged}",
        }
    return TextMessage(text=texts[op])


def already_applied_message(staff: access.StaffMember, request: dict, tz: tzinfo = TAIPEI) -> TextMessage:
    """The same member tapped the same button again: nothing changed."""
    return TextMessage(text=f"{staff.label}，這個動作剛才已經完成了（{shown_number(request, tz)}），沒有重複處理。")


def stale_message(staff: access.StaffMember, request: dict, tz: tzinfo = TAIPEI) -> TextMessage:
    """A tap on a card of an older revision (or a state the request left): nothing changed.

    Every answer says first that this card is not the latest and nothing was changed, then where the
    request is now: still with the tapper (and not completed: a tap of 已完成 on an old card never reads
    as done), with another member (「工作人員 #ab12」), closed, or waiting; the current card follows
    (shared.staff.flow) while its state still has buttons.

    Args:
        staff: the verified tapper.
        request: the request document as it is now (``transitions.TransitionResult.request``).
        tz: the wall clock of a request's number when it has no code.
    Source: docs/design.md §10. It says the card is old, not only 「已由 你 接手，這次沒有變更」.
    """
    rid = shown_number(request, tz)
    head = f"這張卡片已不是 {rid} 的最新狀態，這次沒有任何變更。"
    state = request.get("human_state") or staff_outbox.AWAITING
    holder = request.get("accepted_by")
    if state == staff_outbox.ACCEPTED and holder:
        if holder == staff.hashed:
            return TextMessage(text=f"{head}這筆仍由你接手，還沒有標示為完成。請用下面最新的卡片操作。")
        return TextMessage(text=f"{head}目前由 {audit.staff_label(holder)} 接手。最新的卡片在下面。")
    closed = request.get("closed_by")
    if state in (staff_outbox.COMPLETED, staff_outbox.DECLINED) and closed:
        words = "標示為完成" if state == staff_outbox.COMPLETED else "標示為無法處理"
        return TextMessage(text=f"{head}這筆已由 {audit.staff_label(closed)} {words}。")
    if state == staff_outbox.AWAITING:
        return TextMessage(text=f"{head}這筆目前待處理，還沒有人接手。最新的卡片在下面。")
    return TextMessage(text=head + ("最新的卡片在下面。" if state in BUTTONS else ""))


def refused_message(reason: str) -> TextMessage:
    """A staff button that may not act here, or a card LOCAL cannot read: nothing changed."""
    texts = {
        access.NO_STAFF_GROUP: "工作人員群組還沒有設定，所以這個按鈕不能使用，沒有任何變更。",
        access.NOT_STAFF_GROUP: "這個按鈕只能在工作人員群組裡使用，所以沒有任何變更。",
        access.NO_USER: "沒辦法辨識是哪一位工作人員按的，所以沒有任何變更。",
        access.NOT_ALLOWED: "你不在可以處理服務詢問的工作人員名單中，所以沒有任何變更。如有需要，請洽管理者。",
        "not_found": "找不到這筆服務詢問，所以沒有任何變更。",
    }
    return TextMessage(text=texts.get(reason, "這張工作人員卡片無法辨識（可能已失效），所以沒有任何變更。"))


def busy_message() -> TextMessage:
    """The store did not answer: the tapper may tap again (a repeat is safe)."""
    return TextMessage(text="抱歉，剛才系統忙碌，不確定有沒有變更成功。請稍後再按一次同一個按鈕，不會重複處理。")


def group_help_message(*, resident_word: bool) -> TextMessage:
    """A recognized word typed in the staff group (新需求, 選單, 說明 …): what staff can do there.

    Args:
        resident_word: the word is a resident's (新需求：…, 查看原本服務單, 幫我記住 …): say first that those
            are done by the resident in the one-to-one chat, never here.
    Source: docs/design.md §10 (新需求 in the staff group gets this, never silence).
    """
    lead = ("服務詢問和飲食偏好由居民自己在和我的一對一聊天裡送出，這個群組裡不會建立或查詢。\n"
            if resident_word else "")
    return TextMessage(text=(
        f"{lead}這個群組是工作人員處理服務詢問的地方，我只回應卡片上的按鈕：\n"
        f"・新的服務詢問會以卡片出現，請按「{LABELS['take']}」或「{LABELS['decline']}」。\n"
        f"・接手後，卡片上有「{LABELS['done']}」和「{LABELS['back']}」。\n"
        "大家在群組裡的一般聊天，我不會回應。"))



def button_word_message(label: str) -> TextMessage:
    """A card button's label typed as text in the staff group (「我來處理」): one line saying that the
    card's button does it and that typing changes nothing.

    Args:
        label: one of ``LABELS``' values.
    Source: docs/staff.md (staff act with the card's buttons).
    """
    return TextMessage(text=f"要「{label}」請按服務詢問卡片上的「{label}」按鈕；在群組打字不會改變服務詢問。")


def quota_warning_message(used: int, limit: int, month: str) -> TextMessage:
    """The staff group's warning, once a month, that LINE's pushes for the month run short.

    Args:
        used, limit: messages LINE counted this month and the month's limit (``shared.line.Quota``).
        month: ``YYYY-MM`` (Asia/Taipei).
    Source: docs/delivery.md#push-quota (replies are free; pushes are counted).
    """
    share = used * 100 // limit if limit > 0 else 100
    month_number = int(month.split("-")[1])
    return TextMessage(text=(
        f"提醒：這個月（{month_number}月）主動傳給大家的訊息已用 {used} 則，上限 {limit} 則（約 {share}%）。\n"
        "用完之後，服務詢問的進度通知會送不出去，要請工作人員另外告知詢問者；直接回覆居民的訊息不受影響。\n"
        "額度每月 1 日重新計算。需要更多，請到 LINE 官方帳號的管理後台調整方案。"))
