"""Fixed replies: the menu, help, welcome and guidance texts (no model, no store)."""
from __future__ import annotations

from linebot.v3.messaging import MessageAction, QuickReply, QuickReplyItem, TextMessage

from shared.context import EventContext, Reply

MENU_CHOICES = ("查活動", "查蔬食", "留下服務詢問")


def _menu_quick_reply() -> QuickReply:
    return QuickReply(items=[QuickReplyItem(action=MessageAction(label=label, text=label))
                             for label in MENU_CHOICES])


def menu_reply(ctx: EventContext | None = None) -> Reply:
    """我要預約 → what LOCAL can do, as three quick replies."""
    return Reply([TextMessage(
        text="想做什麼呢？請點下面一個選項：\n・查活動：看各鄉鎮的活動（示範資料）\n"
             "・查蔬食：找有素食的店家\n・留下服務詢問：請真人幫忙",
        quick_reply=_menu_quick_reply())])


def help_reply(note: str | None = None) -> Reply:
    """Free text the offline router could not read → the menu, saying how to ask."""
    text = ("我目前是離線查詢模式，看得懂鄉鎮名稱、素食和活動這類關鍵字，例如「花壇有素食店嗎？」"
            "或「這週末鹿港有什麼活動？」。也可以點下面的選項。")
    return Reply([TextMessage(text=(note + "\n" if note else "") + text, quick_reply=_menu_quick_reply())])


def welcome_reply() -> Reply:
    """A follow event → a welcome and the menu."""
    return Reply([TextMessage(
        text="歡迎加入 LOCAL！我可以幫你查彰化的活動和素食店家，也可以把需求轉給真人。請點選項開始：",
        quick_reply=_menu_quick_reply())])


def non_text_reply() -> Reply:
    """Stickers, images, locations… → a short fixed answer and the menu."""
    return Reply([TextMessage(text="收到了！不過我目前只看得懂文字訊息，請打字問我，或點下面的選項。",
                              quick_reply=_menu_quick_reply())])


def no_user_reply() -> Reply:
    """Events with no ``userId`` (some group or room events): guidance, and no writes (DESIGN §2)."""
    return Reply([TextMessage(text="我沒辦法辨識是哪一位在問，所以這裡不能查詢或登記。"
                                   "請加我為好友，在一對一聊天中使用。")])


def expired_button_reply() -> Reply:
    """A postback LOCAL cannot read (unknown, too long or tampered data)."""
    return Reply([TextMessage(text="這個按鈕已經失效或無法辨識，請從選單重新開始。",
                              quick_reply=_menu_quick_reply())])


def handoff_info_reply(ctx: EventContext | None = None) -> Reply:
    """留下服務詢問 → how to leave a request for a person."""
    return Reply([TextMessage(
        text="想請真人幫忙，請用一則訊息寫下需求，開頭加上「新需求：」，例如：\n"
             "新需求：想參加週六的社區走讀，需要輪椅協助\n"
             "我會先給你確認，你按下「確認送出」後才會登記，並轉給工作人員。")])
