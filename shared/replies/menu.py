"""Fixed replies: the menu, help, welcome and guidance texts (no model, no store).

Every domain may offer the menu (its choices, ``with_menu``, the expired-button reply), so it sits
below the domains with the other reply builders (docs/design.md §7: every answer offers a next step).
"""
from __future__ import annotations

from linebot.v3.messaging import MessageAction, PostbackAction, QuickReply, QuickReplyItem, TextMessage, URIAction

from shared.config import DISPLAY_NAME_DEFAULT
from shared.context import EventContext, Reply
from shared.diets import diet_label
from shared.replies.area_picker import area_postback
from shared.replies.events import scope_words

MENU_CHOICES = ("查活動", "查蔬食", "留下服務詢問")
#: The first line of a limits reply that names no limit.
NO_DATA_LINE = "這個我沒有資料可以回答。"
#: A proposed call was refused by a context check: nothing was run.
REFUSED_TEXT = "這次暫時查不了，請再問一次，或點下面的選項。"
#: An event whose handling failed inside the webhook (shared.routing).
FAILED_TEXT = "抱歉，這次沒有處理成功，請稍後再試一次。"
#: The help's choices: the menu, and the status of the user's request.
HELP_CHOICES = (*MENU_CHOICES, "查看原本服務單")


def _menu_quick_reply(choices: tuple[str, ...] = MENU_CHOICES) -> QuickReply:
    return QuickReply(items=[QuickReplyItem(action=MessageAction(label=label, text=label))
                             for label in choices])


def with_menu(message: TextMessage, choices: tuple[str, ...] = MENU_CHOICES) -> TextMessage:
    """``message`` with the menu's quick replies, unless it already has some (no dead ends).

    Args:
        message: a text reply.
        choices: the labels, each sent as a text message when tapped (≤ 13, LINE's limit).
    Every fixed answer offers a next step (docs/design.md §7).
    """
    if message.quick_reply is not None:
        return message
    return TextMessage(text=message.text, quick_reply=_menu_quick_reply(choices))


_MENU_TEXT = "想做什麼呢？請點下面一個選項：\n・查活動：看各鄉鎮的活動\n・查蔬食：找有素食的店家\n・留下服務詢問：請真人幫忙"


def menu_reply(ctx: EventContext | None = None) -> Reply:
    """選單 → what LOCAL can do, as three quick replies."""
    return Reply([TextMessage(text=_MENU_TEXT, quick_reply=_menu_quick_reply())])


def booking_menu_reply(ctx: EventContext | None = None) -> Reply:
    """我要預約 (the rich menu's entry, also typed by someone who wants to book) → the menu, first saying
    that LOCAL books nothing and that a person is reached through 留下服務詢問."""
    return Reply([TextMessage(text="我沒辦法直接幫你預約或訂位；想請真人幫忙，請點「留下服務詢問」。\n" + _MENU_TEXT,
                              quick_reply=_menu_quick_reply())])


def help_reply(note: str | None = None) -> Reply:
    """Free text the offline router could not read → the menu, saying how to ask."""
    # plain words for residents (「離線查詢模式」 means nothing to them): what it reads, not how
    text = ("我認得的是鄉鎮名稱、素食和活動這類字，例如「花壇有素食店嗎？」"
            "或「這週末鹿港有什麼活動？」。也可以點下面的選項。")
    return Reply([TextMessage(text=(note + "\n" if note else "這句我看不太懂。") + text,
                              quick_reply=_menu_quick_reply(HELP_CHOICES))])


def welcome_reply(ctx: EventContext | None = None) -> Reply:
    """A follow event → a welcome naming the bot (``Settings.display_name``) and the menu."""
    return Reply([TextMessage(
        text=f"歡迎加入{display_name(ctx)}！我可以幫你查彰化的活動和素食店家，也可以把需求轉給真人。請點選項開始：",
        quick_reply=_menu_quick_reply())])


def non_text_reply() -> Reply:
    """Stickers, images, audio… → a short fixed answer and the menu (a location has its own answer:
    shared.turn.near_me)."""
    return Reply([TextMessage(text="收到了！不過我目前只看得懂文字訊息，請打字問我，或點下面的選項。",
                              quick_reply=_menu_quick_reply())])


def no_user_reply() -> Reply:
    """Events with no ``userId`` (some group or room events): guidance, and no writes (docs/design.md §2)."""
    return Reply([TextMessage(text="我沒辦法辨識是哪一位在問，所以這裡不能查詢或登記。"
                                   "請加我為好友，在一對一聊天中使用。")])


def expired_button_reply() -> Reply:
    """A postback LOCAL cannot read (unknown, too long or tampered data)."""
    return Reply([TextMessage(text="這個按鈕已經失效或無法辨識，請從選單重新開始。",
                              quick_reply=_menu_quick_reply())])


def handoff_info_reply(ctx: EventContext | None = None) -> Reply:
    """留下服務詢問, 我要找里長, 可以找真人嗎 → how to leave a request for a person, truthfully: no call
    is connected; a written request goes to the town hall's staff (docs/handoff.md)."""
    return Reply([TextMessage(
        text="我沒辦法幫你轉接電話，但可以把你寫下的需求轉給公所工作人員。\n"
             "請用一則訊息寫下需求，開頭加上「新需求：」，例如：新需求：門口的路燈壞了\n"
             "我會先給你確認，按「確認送出」才會送出。",
        quick_reply=_menu_quick_reply(("查看原本服務單", "查活動", "查蔬食")))])


def handoff_prompt_reply() -> Reply:
    """留下服務詢問 when the next message is awaited (shared.handoff.awaiting): the resident just types the
    request, no 「新需求：」 needed; the same truthful first line as ``handoff_info_reply``."""
    return Reply([TextMessage(
        text="我沒辦法幫你轉接電話，但可以把你寫下的需求轉給公所工作人員。\n"
             "請直接打字說要請他們幫什麼忙，例如：門口的路燈壞了\n"
             "我會先給你確認，按「確認送出」才會送出。",
        quick_reply=_menu_quick_reply(("查看原本服務單", "查活動", "查蔬食")))])


#: What LOCAL can do, said after a greeting, a thanks or a limit.
#: The menus do not say 示範: whether events come from demo data is said by the events reply itself
#: (shared.replies.events, from the snapshot it really read).
_CAN_DO = "我可以幫你：查彰化各鄉鎮的活動、找有素食的店家，或把需求轉給真人（開頭寫「新需求：」）。"


def greeting_reply() -> Reply:
    """你好 / hi → a greeting and the menu (not the offline-mode notice)."""
    return Reply([TextMessage(text=f"你好！{_CAN_DO}請點下面的選項，或直接問我，例如「花壇有素食店嗎？」。",
                              quick_reply=_menu_quick_reply(HELP_CHOICES))])


def thanks_reply() -> Reply:
    """謝謝 / 好 謝啦 → you're welcome and the menu."""
    return Reply([TextMessage(text="不客氣！還有需要的話，隨時點下面的選項或直接問我。",
                              quick_reply=_menu_quick_reply(HELP_CHOICES))])


def ack_reply() -> Reply:
    """ok / 好 / 收到 → a short answer and the menu (not the offline-mode notice)."""
    return Reply([TextMessage(text="好的！還有需要的話，隨時點下面的選項或直接問我。",
                              quick_reply=_menu_quick_reply(HELP_CHOICES))])


def not_saved_reply() -> Reply:
    """不用記 / 我又沒說要你記住 → nothing is kept unless the card's consent was tapped; no card, no
    remember button (and not the words 同意記住, which name the card's button).

    True whatever is stored: it says how memory works and where to look (我的偏好), not what is kept.
    Source: docs/design.md §6 (a card only on a request).
    """
    return Reply([TextMessage(
        text="好的，不會幫你記。只有在你看到確認卡、自己按下同意之後，我才會保存一項飲食偏好；沒按就什麼都不存。"
             "想確認目前記住了什麼，請點「我的偏好」。",
        quick_reply=_menu_quick_reply(("我的偏好", "查活動", "查蔬食")))])


#: What each limit says (LOCAL has no such data or tool).
LIMIT_WORDS: dict[str, str] = {
    "crisis": "聽到你這麼說，我很在意你的安全。如果你有傷害自己或不想活的念頭，請現在就打 1925 安心專線"
              "（24 小時、免付費），有人會陪你說說話。如果已經有危險，請立刻打 119；遇到人身危險可打 110。"
              "你不是一個人。",
    # low mood, loneliness or pressure with no risk said: gentle and short, no talk of suicide
    "distress": "聽起來你最近心裡不太好受。想找人說說話，可以打 1925 安心專線（24 小時、免付費），會有人陪你聊聊。",
    # a likely scam: never said as the directory text (the words 電話, 警察 or 銀行 are no office asked)
    "fraud": "這聽起來很像詐騙：請不要匯款、不要去領錢，也不要給帳號密碼。請先打 165 反詐騙專線查證；有危險請打 110。",
    "emergency": "如果是緊急狀況（有人昏倒、跌倒起不來、呼吸困難），請立刻打 119 叫救護車；遇到人身危險請打 110。",
    "medical": "我沒有醫療資料，不能判斷病情或建議用藥。身體不舒服請找醫師或藥師；緊急狀況請立刻打 119。",
    "transport": "我沒有公車、客運或火車的路線和班次資料，查不到幾點有車；請看客運公司或車站的公告。",
    "parking": "我沒有停車場或車位的資料。",
    "shuttle": "我沒有接駁車的資料。",
    "taxi": "我沒辦法幫你叫車，請打給計程車行。",
    "weather": "我沒有天氣資料；請看中央氣象署的預報。活動會不會因天氣取消，請以主辦單位公告為準。",
    "elsewhere": "我只有彰化縣各鄉鎮的資料，其他縣市的店家和活動查不到。",
    "politics": "選舉、政治和宗教的事，我不表示立場，也不推薦人選或信仰。",
    "off_topic": "寫詩、聊天或一般知識我沒辦法回答；我能查彰化的活動、素食店家，也能幫你把需求轉給公所。",
    "no_data": "這個我沒有資料可以回答：我只有彰化各鄉鎮的活動和素食店家名單，沒有景點、機關、其他商店或生活資訊。",
    "directory": "我沒有政府機關、公所、學校或其他單位的電話、地址這類通訊錄資料，查不到；請看該單位的官方網站或公告。"
                 "（素食店家的地址和電話，我可以幫你查。）",
    "no_booking": "我不能幫你訂位或報名，請直接聯絡對方。",
    "no_hours": "沒有營業時間資料，出發前請先打電話問。",
    # beside shop cards that show hours a source records (shared.turn.wording): not 「沒有」, and not 「有開」
    "hours_on_card": "卡片上的營業時間是資料寫的，不代表今天有開，出發前請先打電話問。",
    "no_price": "我沒有價格或菜單，請直接問店家。",
    # the same limit beside an events answer: an event has a fee or tickets, not a menu
    "no_price_event": "活動資料沒有記錄費用或門票價格，請以主辦單位公告為準。",
    # beside an events answer only (shared.turn.engine): a day's list, start times only
    "evening": "活動資料只有開始時間，晚上還有沒有，請先問主辦單位。",
    "no_registration": "活動資料沒有報名方式，請看主辦單位公告。",
    "no_pets": "能不能帶寵物沒有記錄，請先問。",
    "no_bring": "要帶什麼沒有記錄，請看主辦單位公告。",
    "no_distance": "店家資料沒有地圖定位和距離，沒辦法排出哪一間最近；請看地址，或先打電話問店家。",
    # 可以幫我掛號嗎 彰基 is a booking LOCAL cannot make, not a question about an illness
    "no_appointment": "我沒辦法幫你掛號或預約看診；請直接打電話給醫院或診所，或用它們的網路掛號。"
                      "身體不舒服請找醫師；緊急狀況請立刻打 119。",
}


#: Limits whose line is the whole answer: no list of what LOCAL can do after it (safety first; a scam
#: warning stands alone; the off-topic line already says what LOCAL answers).
_ALONE_LIMITS = frozenset({"crisis", "distress", "emergency", "fraud", "off_topic"})

#: Under a safety reply, the numbers to call as buttons (LINE opens the phone app for a ``tel:`` URI
#: action: https://developers.line.biz/en/docs/messaging-api/actions/#uri-action), never the search
#: menu: no 查活動 or 查蔬食 under a crisis answer.
_CALL_1925 = QuickReplyItem(action=URIAction(label="打 1925 安心專線", uri="tel:1925"))
_CALL_119 = QuickReplyItem(action=URIAction(label="打 119", uri="tel:119"))
_SAFETY_CALLS: tuple[tuple[str, tuple[QuickReplyItem, ...]], ...] = (
    ("crisis", (_CALL_1925, _CALL_119)), ("emergency", (_CALL_119,)), ("distress", (_CALL_1925,)))


def safety_calls(kinds: list[str] | tuple[str, ...]) -> QuickReply | None:
    """The call buttons for the safety limits among ``kinds`` (crisis: 1925 and 119; an emergency: 119;
    distress: 1925), each once; None when no safety limit is said."""
    items = {id(item): item for kind, calls in _SAFETY_CALLS if kind in kinds for item in calls}
    return QuickReply(items=list(items.values())) if items else None

#: Limits said only beside an events answer (``limit_lines(beside_events=True)``).
EVENTS_ONLY_LIMITS = frozenset({"evening", "no_price_event"})


def limit_lines(kinds: list[str] | tuple[str, ...], *, beside_events: bool = False) -> list[str]:
    """The sentences for each limit, in order, each once (emergency folded into medical).

    Args:
        kinds: ``LIMIT_WORDS`` keys, as the router noted them.
        beside_events: the limits go with an events answer: a price asked is an event's fee
            (``no_price_event``); otherwise ``EVENTS_ONLY_LIMITS`` are not said.
    """
    if beside_events:
        kinds = ["no_price_event" if kind == "no_price" else kind for kind in kinds]
    else:
        kinds = [kind for kind in kinds if kind not in EVENTS_ONLY_LIMITS]
    if "medical" in kinds and "emergency" in kinds:
        kinds = [kind for kind in kinds if kind != "emergency"]
    return [LIMIT_WORDS[kind] for kind in dict.fromkeys(kinds) if kind in LIMIT_WORDS]


def limits_reply(kinds: list[str] | tuple[str, ...]) -> Reply:
    """Something LOCAL has no data or tool for → say so plainly, and offer what it can do.

    Args:
        kinds: keys of LIMIT_WORDS (unknown ones are skipped).
    Returns:
        One text with the menu as quick replies (under a safety reply, the numbers to call instead:
        ``safety_calls``); never a search.
    """
    lines = limit_lines(kinds) or [NO_DATA_LINE]
    if _ALONE_LIMITS.intersection(kinds):  # safety first, a scam warning, the off-topic line: nothing after
        calls = safety_calls(kinds)
        return Reply([TextMessage(text="\n".join(lines), quick_reply=calls or _menu_quick_reply(HELP_CHOICES))])
    return Reply([TextMessage(text="\n".join(lines) + "\n" + _CAN_DO, quick_reply=_menu_quick_reply(HELP_CHOICES))])


#: The model backends that send the resident's words to Google's Gemini (``Settings.model_backend``).
_MODEL_BACKENDS = ("gemini", "vertex")


def display_name(ctx: EventContext | None) -> str:
    """The bot's name as residents read it (``Settings.display_name``, docs/configuration.md)."""
    return getattr(getattr(ctx, "settings", None), "display_name", None) or DISPLAY_NAME_DEFAULT


def _model_on(ctx: EventContext | None) -> bool:
    return ctx is not None and getattr(ctx.settings, "model_backend", None) in _MODEL_BACKENDS


#: The postback of the 「詳細說明」 button under a short privacy answer (shared.routing MENU_POSTBACKS).
PRIVACY_MORE_DATA = "menu:privacy_more"


def _privacy_buttons(*labels: str) -> QuickReply:
    items = [QuickReplyItem(action=PostbackAction(label="詳細說明", data=PRIVACY_MORE_DATA, display_text="詳細說明"))]
    items += [QuickReplyItem(action=MessageAction(label=label, text=label)) for label in labels]
    return QuickReply(items=items)


def privacy_reply(ctx: EventContext | None = None, *, forget: bool = False, sharing: bool = False) -> Reply:
    """我的資料 / 忘記我 / 刪除我的資料 / 你們會記錄我打的字嗎 → what is kept, in at most five short lines,
    and a 「詳細說明」 button for every item with its period (``privacy_more_reply``).

    What it says is what the store holds (``make user-data`` lists each of these): a message's text
    only until it is answered (``shared.inbox.finished``); each event's bookkeeping for about 7 days
    (``shared.inbox.RETENTION``); each search's conditions for 30 days (``shared.audit``); the last search and what it
    listed for 30 minutes, deleted by a forget too (``shared.conversation_store``); the
    consented diet; sent requests. No LINE profile is ever fetched, so no display name or picture is kept.

    Args:
        ctx: its ``settings.display_name`` names the bot; when the model is on (``model_backend``
            gemini / vertex), the reply also says the words typed are read by Google.
        forget: the user asked to forget the remembered diet in words (以後不用記了，刪掉): the reply
            names the one button that does it. Nothing is deleted by words alone: the tap on
            「忘記我的飲食偏好」 does it (docs/design.md §6).
        sharing: the user asked whether their data goes to others (你們會不會把我的電話跟資料給別人): no
            phone number is taken from LINE nor asked for; one written into a request is kept with it and
            goes only to the staff who handle it (docs/design.md §10).
    Returns:
        One text of at most five lines, with 「詳細說明」 (postback ``menu:privacy_more``) and the
        preference buttons as quick replies.
    Source: docs/design.md §2, §4, §6, §7, §9 (what is stored); tools/user_data.py (the privacy
    answer must equal the store).
    """
    name = display_name(ctx)
    typed = ("你傳來的訊息會交給 Google 讀懂意思，我回覆你之後就把內容刪掉" if _model_on(ctx)
             else "你傳來的訊息，我回覆你之後就把內容刪掉")
    if forget:
        lines = ["要忘記飲食偏好，請點下面的「忘記我的飲食偏好」，點了才會刪除。",
                 "服務單或其他資料想刪除，請傳「新需求：請刪除我的資料」。"]
    elif sharing:
        lines = [f"{name}不會向 LINE 拿你的電話，也不會跟你要；也看不到你的 LINE 名字和大頭貼。",
                 "寫進服務詢問的電話會和詢問一起保存，只給處理的工作人員看。"]
    else:
        lines = [f"{name}只保存：你按「同意記住」的一項飲食偏好、你送出的服務詢問，",
                 "和查詢條件 30 天、訊息編號和時間 7 天。"]
    lines += [f"{typed}。", "其他保存的資料和期限，請點「詳細說明」。"]
    return Reply([TextMessage(text="\n".join(lines),
                              quick_reply=_privacy_buttons("我的偏好", "忘記我的飲食偏好", "查看原本服務單"))])


def privacy_more_reply(ctx: EventContext | None = None) -> Reply:
    """「詳細說明」 under a privacy answer → every kind of data kept, with its period (the same store facts
    as ``privacy_reply``: an answered message's text is dropped; an event's id, time, state and LINE
    user id about 7 days; a search's conditions and result ids 30 days; a draft's text until it is
    cancelled or superseded, ``shared.handoff.drafts``; bookkeeping without content).
    Source: docs/design.md §2, §4, §6, §9."""
    name = display_name(ctx)
    lines = [
        f"{name}保存的資料和期限：",
        "・你傳來的訊息：我回覆你之後就把內容刪掉。每則訊息只留編號、時間、狀態和代表你的 LINE 編號，約 7 天。",
        "・每次查詢的條件和結果編號：保留 30 天。",
        "・最後一次查詢的條件和列出的項目，和你分享的位置：30 分鐘內讓你接著問，之後刪除；忘記飲食偏好時也一起刪除。",
        "・飲食偏好：只有你按了「同意記住」才保存，可以隨時忘記。",
        "・服務詢問：送出的內容和編號交給工作人員；還沒送出的，按「取消」或改留新的一筆，內容就刪掉。",
    ]
    if _model_on(ctx):
        lines.append(f"・你傳來的訊息會交給 Google 的電腦讀懂意思，再由{name}查資料回覆。")
    lines += [f"{name}不讀你的 LINE 名字和大頭貼。其他資料想刪除，請傳「新需求：請刪除我的資料」。"]
    return Reply([TextMessage(text="\n".join(lines),
                              quick_reply=_menu_quick_reply(("我的偏好", "忘記我的飲食偏好", "查看原本服務單")))])


def did_you_mean_reply(name: str, text: str, *, choices: list[list[str]] | None = None,
                       typed: str | None = None) -> Reply:
    """A shop name typed with a typo (合米素食有全素嗎) → 「你是說「和米素食」嗎？」 with a button that sends
    the message again with the catalog's spelling, and the menu. A misspelt township (溪胡還是員林):
    「「溪胡」不是彰化縣的鄉鎮名稱。你是說溪湖鎮，還是溪州鄉？」 with one button per township.

    Args:
        name: the catalog name of the close match (a shop).
        text: the user's message with the typo replaced by the catalog's spelling (≤ 300 characters).
        choices: for a township: [[full township name, the message spelt with it]], best first.
        typed: for a township: the characters as typed.
    Source: LINE message action text ≤ 300 characters.
    """
    if choices:
        items = [QuickReplyItem(action=MessageAction(label=f"是，{township}"[:20], text=again[:300]))
                 for township, again in choices]
        items += [QuickReplyItem(action=MessageAction(label=choice, text=choice)) for choice in MENU_CHOICES]
        names = [township for township, _ in choices]
        which = f"{names[0]}嗎？" if len(names) == 1 else "，還是".join(names) + "？"
        return Reply([TextMessage(
            text=f"「{typed}」不是彰化縣的鄉鎮名稱。你是說{which}請點下面的「是，…」，我就用正確的鄉鎮名稱再查一次；"
                 "都不是的話，可以換個說法，或點下面的選項。",
            quick_reply=QuickReply(items=items[:13]))])
    label = f"是，{name}"
    items = [QuickReplyItem(action=MessageAction(label=label[:20], text=text[:300]))]
    items += [QuickReplyItem(action=MessageAction(label=choice, text=choice)) for choice in MENU_CHOICES]
    return Reply([TextMessage(
        text=f"你是說「{name}」嗎？是的話請點「{label[:20]}」，我就查這家店的資料；不是的話，可以換個說法，或點下面的選項。",
        quick_reply=QuickReply(items=items))])


def unreadable_date_reply(choices: QuickReply | None = None) -> Reply:
    """A date LOCAL cannot read (12/32, 下下週三) → say so, with date choices (never "all dates")."""
    return Reply([TextMessage(
        text="我看不懂這個日期。可以說「今天」、「明天」、「這週末」、「下週末」、「12月12日」或「12/12」，"
             "也可以點下面的選項。",
        quick_reply=choices or _menu_quick_reply(HELP_CHOICES))])


def ask_search_kind_reply(township: str, *, no_data: bool = False, diet: str | None = None,
                          date: str | None = None, keyword: str | None = None) -> Reply:
    """那鹿港呢 → ask whether events or shops are meant (the offline router keeps no conversation state).

    Args:
        township: a full township name.
        no_data: the message asked about something LOCAL has no data on (鹿港天后宮幾點開): say so first.
        diet: the diet said in the resident's last shop search (shared.turn.follow_up), kept on the
            店家 button; a 不限素別 button is offered beside it.
        date: the range ("YYYY-MM-DD" or "start/end") of the last events search, kept on the 活動 button.
        keyword: the topic terms of the last events search, kept on the 活動 button.
    Returns:
        One text with postback quick replies (``events:area=…[&date=…][&keyword=…]`` /
        ``places:area=…[&diet=…]``), saying which earlier conditions the buttons keep.
    A follow-up keeps the previous search's diet.
    """
    lead = LIMIT_WORDS["no_data"] + "\n" if no_data else ""
    kept = []
    if date or keyword:
        kept.append("活動接著用你剛才問的條件：" + scope_words({"area": None, "date": date, "keyword": keyword})
                    .removeprefix("彰化縣各鄉鎮近期，").removeprefix("彰化縣各鄉鎮，"))
    if diet:
        kept.append(f"店家接著用你剛才說的條件：{diet_label(diet)}；想不限素別，請點「{township}不限素別」。")
    shops = f"{diet_label(diet)}店家" if diet else "蔬食店家"
    items = [QuickReplyItem(action=area_postback("events", township, label=f"{township}的活動", date=date,
                                                 keyword=keyword)),
             QuickReplyItem(action=area_postback("places", township, diet=diet,
                                                 label=f"{township}的{shops if diet else '店家'}"))]
    if diet:
        items.append(QuickReplyItem(action=area_postback("places", township, diet="any", label=f"{township}不限素別")))
    return Reply([TextMessage(text=f"{lead}想查{township}的活動，還是{shops}？請點一個：" +
                              "".join(f"\n（{line}）" for line in kept),
                              quick_reply=QuickReply(items=items))])
