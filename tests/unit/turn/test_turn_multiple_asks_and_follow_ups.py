"""Turn-level rules through a signed webhook body: two asks of one kind, a follow-up that keeps the
previous search's conditions, the status list of open requests, stale cards and staff outcomes that
offer the menu, words in the staff group, and the vague-area note.

Examples are also cases in tests/eval/cases/ (run through the webhook use case by
test_eval_cases.py and by ``make eval``). This file checks the rules with more inputs and the negatives
where a rule could over-fire. Clock: 2026-12-01 10:00 Asia/Taipei, a Tuesday.
"""
from __future__ import annotations

import re
from datetime import date, datetime, timedelta, timezone
from urllib.parse import parse_qs

import pytest

from shared.audit import COLLECTION as AUDIT
from shared.conversation_store import TTL as FOLLOW_UP_WINDOW
from shared.handoff.records import REQUESTS, Operation
from shared.handoff.status import OPEN_LISTED_MAX
from shared.identity import Actor
from shared.line import limits
from shared.turn.ask import EventsSearch, OtherAreas, PlacesSearch, SecondAsk
from shared.turn.router import route
from tests.codes_support import SHOWN_CODE, shown_of
from tests.conftest import FixedClock, all_text, postback_event, reply_messages, text_event
from tests.memory_support import postbacks, webhook_with_memory
from tests.unit.turn.date_support import span

PINNED = datetime(2026, 12, 1, 2, 0, tzinfo=timezone.utc)  # 2026-12-01 10:00 Asia/Taipei


@pytest.fixture
def pinned():
    return FixedClock(PINNED)


@pytest.fixture
def service(base_env, pinned):
    return webhook_with_memory(base_env, pinned)


def _audit(service, event):
    return service.store.get(AUDIT, f"test-tenant:{event['webhookEventId']}")


def _quick_labels(messages):
    return [item["action"]["label"] for message in messages
            for item in (message.get("quickReply") or {}).get("items", [])]


# -- two asks of one kind are never merged into one search -------------------------------------

#: The pinned day every date below is resolved against.
TODAY = PINNED.date()
CHRISTMAS, DEC_5, TOMORROW, SATURDAY = (span(date(2026, 12, day)) for day in (25, 5, 2, 5))
WEEKEND, NEXT_WEEKEND = span(date(2026, 12, 5), 2), span(date(2026, 12, 12), 2)


def _days(said: dict) -> dict:
    """Conditions with their date as the days it asks on the pinned day."""
    return {name: value.resolve(TODAY) if name == "date" else value for name, value in said.items()}


def _second_of_kind(proposal, kind: type) -> list[dict]:
    """The other asks of ``kind`` the proposal offers, each as the conditions it sets."""
    return [{name: value for name, value in vars(note.ask).items() if value is not None}
            for note in proposal.notes if isinstance(note, SecondAsk) and isinstance(note.ask, kind)]


@pytest.mark.parametrize("text, first, second", [
    # the reported example: Christmas in 員林; markets county-wide 12/5–12/7
    ("聖誕節員林有活動嗎？還有12/5到12/7全彰化的市集",
     {"area": "員林市", "date": CHRISTMAS, "keyword": None}, {"date": span(date(2026, 12, 5), 3), "keyword": "市集"}),
    ("聖誕節員林有活動嗎 12/5全彰化有市集嗎",  # said with a space between
     {"area": "員林市", "date": CHRISTMAS, "keyword": None}, {"date": DEC_5, "keyword": "市集"}),
    # a condition the later ask leaves open is the first's: 全彰化 markets on Christmas
    ("聖誕節員林有活動嗎？還有全彰化的市集",
     {"area": "員林市", "date": CHRISTMAS, "keyword": None}, {"date": CHRISTMAS, "keyword": "市集"}),
    ("這週末員林有活動嗎？鹿港下週末有市集嗎",
     {"area": "員林市", "date": WEEKEND, "keyword": None},
     {"area": "鹿港鎮", "date": NEXT_WEEKEND, "keyword": "市集"}),
    ("12/5員林有市集嗎？還有親子活動嗎",  # two topics asked apart: never ANDed
     {"area": "員林市", "date": DEC_5, "keyword": "市集"}, {"area": "員林市", "date": DEC_5, "keyword": "親子"}),
    ("明天有活動嗎？週六呢",  # two days asked apart: neither dropped
     {"area": None, "date": TOMORROW, "keyword": None}, {"date": SATURDAY}),
])
def test_two_asks_of_events_are_two_searches(text, first, second):
    proposal = route(text)
    assert proposal.tool == "search_local_events"
    assert _days({name: proposal.args[name] for name in first}) == first
    [said] = _second_of_kind(proposal, EventsSearch)
    assert _days(said) == second


@pytest.mark.parametrize("text, first, second", [
    ("員林有全素的店嗎？還有鹿港的蛋奶素", ("search_local_places", "員林市", "vegan"),
     {"area": "鹿港鎮", "diet": "ovo_lacto"}),
    ("有全素的店嗎？還有鹿港的蛋奶素", ("needs_area", None, "vegan"), {"area": "鹿港鎮", "diet": "ovo_lacto"}),
])
def test_two_asks_of_shops_keep_their_own_diets(text, first, second):
    proposal = route(text)
    assert (proposal.tool, proposal.args.get("area"), proposal.args["dietary_type"]) == first
    assert _second_of_kind(proposal, PlacesSearch) == [second]


@pytest.mark.parametrize("text, args, notes", [
    ("週六有活動嗎？有親子的嗎", {"date": SATURDAY, "keyword": "親子"}, ()),  # a refinement of the one ask
    ("聖誕節員林有活動嗎？還有鹿港的呢", {"area": "員林市", "date": CHRISTMAS}, (OtherAreas(("鹿港鎮",)),)),
    ("員林有全素的店嗎？鹿港呢", {"area": "員林市", "dietary_type": "vegan"}, (OtherAreas(("鹿港鎮",)),)),
    ("聖誕節員林有活動嗎", {"area": "員林市", "date": CHRISTMAS}, ()),
    ("週末彰化市有活動嗎？順便推薦附近的素食店", {"area": "彰化市", "date": WEEKEND}, (SecondAsk(PlacesSearch("彰化市")),)),
    ("後天跟大後天有活動嗎", {"date": span(date(2026, 12, 3), 2)}, ()),
    ("這禮拜六日有啥活動 阿嬤想帶孫子去", {"date": WEEKEND, "keyword": None}, ()),
])
def test_two_asks_rule_leaves_one_ask_unchanged(text, args, notes):
    proposal = route(text)
    assert _days({name: proposal.args.get(name) for name in args}) == args
    assert all(note in proposal.notes for note in notes)
    events = proposal.tool == "search_local_events"
    assert not _second_of_kind(proposal, EventsSearch if events else PlacesSearch)


def test_two_asks_reply_says_which_ask_it_answered_and_offers_the_other(service, line_standin):
    event = text_event("聖誕節員林有活動嗎？還有12/5到12/7全彰化的市集")
    messages = reply_messages(service, line_standin, event)
    words = all_text(messages)
    assert "你問了兩件事，先查第一件" in words
    assert "員林市，2026/12/25（五）" in words  # the ask answered, named
    assert "「12/5～12/7全彰化市集」請點下方按鈕" in words  # the other, named by its button
    audit = _audit(service, event)
    assert audit["effective_args"] == {"area": "員林市", "date": "2026-12-25", "keyword": None}
    buttons = postbacks(messages)
    [label] = [label for label in buttons if "市集" in label]
    assert limits.units(label) <= limits.ACTION_LABEL and _quick_labels(messages)[0] == label
    data = buttons[label]
    assert data.startswith("events:scope=all&")
    assert parse_qs(data.partition("&")[2]) == {"date": ["2026-12-05/2026-12-08"], "keyword": ["市集"]}
    # the button runs the other search on its own conditions, county-wide
    tap = postback_event(data)
    after = all_text(reply_messages(service, line_standin, tap))
    assert "員林市" not in _audit(service, tap)["effective_args"].values()
    assert _audit(service, tap)["effective_args"] == {"area": None, "date": "2026-12-05/2026-12-08", "keyword": "市集"}
    assert "你問了" not in after


def test_two_asks_shop_ask_beside_another_keeps_each_diet(service, line_standin):
    event = text_event("員林有全素的店嗎？還有鹿港的蛋奶素")
    messages = reply_messages(service, line_standin, event)
    words = all_text(messages)
    assert _audit(service, event)["effective_args"]["dietary_type"] == "vegan"
    assert "「鹿港蛋奶素店家」請點下方按鈕" in words
    buttons = postbacks(messages)
    assert buttons["鹿港蛋奶素店家"] == "places:area=鹿港鎮&diet=ovo_lacto"


# -- a bare follow-up (那彰化市呢) keeps the previous search's conditions ----------------------
# (the conversation state: shared.turn.follow_up; more in tests/unit/turn/test_follow_ups.py)

def _follow_up(service, line_standin, first: str, follow: str):
    reply_messages(service, line_standin, text_event(first))
    event = text_event(follow)
    return reply_messages(service, line_standin, event), _audit(service, event)


@pytest.mark.parametrize("first, follow, diet", [
    ("花壇有全素的店嗎", "那彰化市呢", "vegan"),  # the reported example: 全素 in another township
    ("花壇鄉有沒有純素的", "彰化市呢", "vegan"),
    ("花壇有不吃蛋的素食嗎", "換彰化市", "lacto"),
])
def test_follow_up_keeps_the_diet_of_the_previous_search(service, line_standin, first, follow, diet):
    messages, audit = _follow_up(service, line_standin, first, follow)
    assert audit["effective_args"]["area"] == "彰化市" and audit["effective_args"]["dietary_type"] == diet
    words = all_text(messages)
    assert words.startswith("改查彰化市，") and "依你說的條件" in words


def test_follow_up_keeps_the_events_conditions(service, line_standin):
    messages, audit = _follow_up(service, line_standin, "鹿港這週末有市集嗎", "那彰化市呢")
    assert audit["effective_args"] == {"area": "彰化市", "date": "2026-12-05/2026-12-07", "keyword": "市集"}
    assert all_text(messages).startswith("改查彰化市，12/5（六）～12/6（日）的「市集」活動：")


@pytest.mark.parametrize("first, diet", [
    ("花壇有什麼店", "any"),  # no diet said: nothing to keep
    ("花壇不限素別的店", "any"),
])
def test_follow_up_without_a_diet_stays_plain(service, line_standin, first, diet):
    messages, audit = _follow_up(service, line_standin, first, "那彰化市呢")
    assert audit["effective_args"]["dietary_type"] == diet and audit["origin"] != "consented_memory"
    assert all_text(messages).startswith("改查彰化市的店家：")


def test_follow_up_without_an_earlier_search_asks_events_or_shops(service, line_standin):
    messages = reply_messages(service, line_standin, text_event("那彰化市呢"))
    buttons = postbacks(messages)
    assert buttons["彰化市的店家"] == "places:area=彰化市" and "剛才" not in all_text(messages)
    assert "彰化市不限素別" not in buttons


def test_follow_up_remembered_diet_is_not_carried_as_said(service, line_standin):
    card = reply_messages(service, line_standin, text_event("以後都找全素，幫我記住"))
    saved = reply_messages(service, line_standin, postback_event(postbacks(card)["同意記住"]))
    assert "已經記住" in all_text(saved)
    messages, audit = _follow_up(service, line_standin, "花壇有素食店嗎", "那彰化市呢")
    assert audit["origin"] == "consented_memory"  # the memory fills it again on its own, and says so
    assert "依你同意記住的偏好：全素" in all_text(messages) and "這次依你說的條件" not in all_text(messages)


def test_follow_up_old_search_is_none(base_env, line_standin):
    clock = FixedClock(PINNED)
    service = webhook_with_memory(base_env, clock)
    reply_messages(service, line_standin, text_event("花壇有全素的店嗎"))
    clock.at = PINNED + FOLLOW_UP_WINDOW + timedelta(minutes=1)
    messages = reply_messages(service, line_standin, text_event("那彰化市呢"))
    assert postbacks(messages)["彰化市的店家"] == "places:area=彰化市"


def test_follow_up_in_a_group_never_shows_a_one_to_one_diet(service, line_standin):
    reply_messages(service, line_standin, text_event("花壇有全素的店嗎"))
    group = "C" + "1" * 32
    messages = reply_messages(service, line_standin, text_event("那彰化市呢", group_id=group))
    assert "diet=" not in " ".join(postbacks(messages).values()) and "全素" not in all_text(messages)


# -- the status answer lists each open request ----------------------------------------------

def _request(service, line_standin, text: str, clock: FixedClock | None = None) -> str:
    if clock is not None:
        clock.at += timedelta(minutes=1)  # one request after another, as a resident sends them
    card = reply_messages(service, line_standin, text_event(f"新需求：{text}"))[0]
    confirm = {b["action"]["label"]: b["action"]["data"] for b in card["contents"]["footer"]["contents"]}["確認送出"]
    [request_id] = re.findall(SHOWN_CODE,
                              all_text(reply_messages(service, line_standin, postback_event(confirm))))
    return request_id


def _close(service, request_id: str, state: str) -> None:
    [doc] = [doc for doc in service.store.query(REQUESTS) if shown_of(doc) == request_id]
    operation = Operation(Actor(doc["tenant_id"], doc["user_id"]), doc["idempotency_key"])
    service.store.set(REQUESTS, operation.doc_id, {**doc, "human_state": state})  # as a staff transition leaves it


@pytest.mark.parametrize("ask", ["查看原本服務單", "我的服務單呢", "我報的那件有人看了沒"])
def test_status_lists_every_open_request(service, line_standin, ask):
    ids = [_request(service, line_standin, text) for text in ("路燈壞了", "水溝蓋破了")]
    words = all_text(reply_messages(service, line_standin, text_event(ask)))
    assert all(request_id in words for request_id in ids)
    assert "2 筆服務詢問還沒結束" in words and "水溝蓋破了" in words and "路燈壞了" in words


def test_status_many_open_requests_are_bounded_and_counted(service, line_standin, pinned):
    ids = [_request(service, line_standin, f"第{n}件事", pinned) for n in range(1, 6)]
    words = all_text(reply_messages(service, line_standin, text_event("查看原本服務單")))
    assert "5 筆服務詢問還沒結束" in words and f"先列最近的 {OPEN_LISTED_MAX} 筆" in words
    assert words.count("內容：") == OPEN_LISTED_MAX and "第5件事" in words and "第1件事" not in words  # newest first
    assert words.index("第5件事") < words.index("第4件事") < words.index("第3件事")
    assert all(request_id in words for request_id in ids)  # the earlier ones by number
    assert limits.units(words) <= limits.TEXT


def test_status_closed_latest_request_is_shown_beside_the_open_ones(service, line_standin, pinned):
    open_id = _request(service, line_standin, "路燈壞了", pinned)
    done_id = _request(service, line_standin, "水溝蓋破了", pinned)
    _close(service, done_id, "completed")
    words = all_text(reply_messages(service, line_standin, text_event("查看原本服務單")))
    assert done_id in words and "標示這筆服務詢問結束" in words
    assert open_id in words and "1 筆服務詢問還沒結束" in words
    assert words.index(done_id) < words.index(open_id)  # the latest first, then the open one


@pytest.mark.parametrize("closed", ["completed", "declined"])
def test_status_one_request_reads_as_before(service, line_standin, closed):
    first = _request(service, line_standin, "路燈壞了")
    words = all_text(reply_messages(service, line_standin, text_event("查看原本服務單")))
    assert "你最近一筆服務詢問" in words and first in words and "還沒結束" not in words
    _close(service, first, closed)
    words = all_text(reply_messages(service, line_standin, text_event("查看原本服務單")))
    assert first in words and "還沒結束" not in words  # a closed request is no open one


def test_status_another_residents_requests_are_not_listed(service, line_standin):
    mine = _request(service, line_standin, "路燈壞了")
    other = "U" + "9" * 32
    card = reply_messages(service, line_standin, text_event("新需求：別人的事", user_id=other))[0]
    confirm = {b["action"]["label"]: b["action"]["data"] for b in card["contents"]["footer"]["contents"]}["確認送出"]
    reply_messages(service, line_standin, postback_event(confirm, user_id=other))
    words = all_text(reply_messages(service, line_standin, text_event("查看原本服務單")))
    assert mine in words and "別人的事" not in words and "還沒結束" not in words


# -- every card outcome and every staff outcome offers the menu --------------------------

_HELP = {"查活動", "查蔬食", "留下服務詢問", "查看原本服務單"}


def _card(service, line_standin, text="新需求：路燈壞了"):
    return postbacks(reply_messages(service, line_standin, text_event(text)))


def test_stale_card_expired_answers_with_the_menu(service, line_standin, pinned):
    buttons = _card(service, line_standin)
    pinned.at += timedelta(seconds=service.settings.draft_ttl_seconds + 1)
    tapped_ms = int(pinned.at.timestamp() * 1000)  # the tap itself is late, not only its processing
    for label in ("確認送出", "取消"):
        messages = reply_messages(service, line_standin, postback_event(buttons[label], timestamp_ms=tapped_ms))
        assert "過期" in all_text(messages) and _HELP <= set(_quick_labels(messages)), label
    assert service.store.query(REQUESTS) == []


def test_stale_card_cancelled_then_confirmed_answers_with_the_menu(service, line_standin):
    buttons = _card(service, line_standin)
    reply_messages(service, line_standin, postback_event(buttons["取消"]))
    messages = reply_messages(service, line_standin, postback_event(buttons["確認送出"]))
    assert "已經取消" in all_text(messages) and _HELP <= set(_quick_labels(messages))
    assert service.store.query(REQUESTS) == []


def test_stale_card_superseded_or_unreadable_answers_with_the_menu(service, line_standin):
    old = _card(service, line_standin)
    _card(service, line_standin, "新需求：水溝蓋破了")
    messages = reply_messages(service, line_standin, postback_event(old["確認送出"]))
    assert "取代" in all_text(messages) and _HELP <= set(_quick_labels(messages))
    tampered = old["確認送出"][:-4] + "AAAA"
    messages = reply_messages(service, line_standin, postback_event(tampered))
    assert "沒有送出" in all_text(messages) and _HELP <= set(_quick_labels(messages))
    assert service.store.query(REQUESTS) == []


def test_confirmed_card_keeps_its_receipt_buttons(service, line_standin):
    buttons = _card(service, line_standin)
    messages = reply_messages(service, line_standin, postback_event(buttons["確認送出"]))
    assert _quick_labels(messages) == ["查看原本服務單"]  # negative: the receipt is unchanged


@pytest.mark.parametrize("purpose, first", [("declined", "留下服務詢問"), ("completed", "留下服務詢問"),
                                            ("accepted", "查看原本服務單")])
def test_staff_outcome_tells_the_resident_with_the_menu(purpose, first):
    from shared.staff.wording import resident_message

    message = resident_message(purpose, "req-20261201-0123456789abcdef").to_dict()
    labels = [item["action"]["label"] for item in message["quickReply"]["items"]]
    assert set(labels) == _HELP and labels[0] == first
    if purpose == "declined":  # the words name a next step and its button, not only 查活動 / 找蔬食
        assert "留下服務詢問" in message["text"] and "更詳細" in message["text"]


@pytest.mark.parametrize("taps, purpose", [([("decline", "A")], "declined"),
                                           ([("take", "A"), ("done", "A")], "completed")])
def test_staff_outcome_pushed_notice_offers_the_menu(base_env, line_standin, taps, purpose):
    # the whole path: the resident's card, the staff group's taps (signed bodies), then the relay's push
    from shared.handoff.staff_outbox import NOTICES, notice_id
    from shared.staff.relay import StaffRelay
    from shared.wiring import line_gateway
    from tests.unit.staff import test_staff_claims as staff

    env = {**base_env, "LOCAL_STAFF_GROUP_ID": staff.GROUP, "LOCAL_STAFF_USER_IDS": ",".join(staff.STAFF.values())}
    service = webhook_with_memory(env, FixedClock(PINNED))
    doc_id = staff.confirmed_request(service, line_standin)
    for op, who in taps:
        staff.staff_tap(service, line_standin, doc_id, op, who)
    assert service.store.get(NOTICES, notice_id(doc_id, purpose)) is not None
    relay = StaffRelay(service.settings, service.store, line_gateway(service.settings), FixedClock(PINNED))
    assert relay.deliver(notice_id(doc_id, purpose), last=True).http_status == 200
    [push] = [call for call in line_standin.calls() if call["path"] == "/v2/bot/message/push"
              and call["body"]["to"] == staff.USER and call["status"] == 200]
    assert _HELP <= set(_quick_labels(push["body"]["messages"]))


# -- a recognized word in the staff group gets the group's help, staff chat gets nothing --------

@pytest.fixture
def staff_service(base_env, pinned):
    from tests.unit.staff import test_staff_claims as staff

    env = {**base_env, "LOCAL_STAFF_GROUP_ID": staff.GROUP, "LOCAL_STAFF_USER_IDS": ",".join(staff.STAFF.values())}
    return webhook_with_memory(env, pinned)


def _in_staff_group(text: str, who: str = "A") -> dict:
    from tests.unit.staff import test_staff_claims as staff

    return text_event(text, user_id=staff.STAFF[who], group_id=staff.GROUP)


@pytest.mark.parametrize("text, resident", [
    ("新需求", True),  # the reported example
    ("新需求：路燈壞了", True),
    ("查看原本服務單", True),
    ("選單", True),
    ("查活動", True),
    ("幫我記住全素", True),
    ("說明", False),
    ("help", False),
    ("ＨＥＬＰ", False),
    ("怎麼用", False),
])
def test_staff_group_recognized_word_gets_the_help(staff_service, line_standin, text, resident):
    messages = reply_messages(staff_service, line_standin, _in_staff_group(text))
    words = all_text(messages)
    assert "我來處理" in words and "無法處理" in words and "一般聊天，我不會回應" in words
    assert ("一對一聊天" in words) is resident
    # nothing a resident's word would do happens here: no card, no request, no search, no memory card
    assert staff_service.store.query("handoff_drafts") == [] and staff_service.store.query(REQUESTS) == []
    assert staff_service.store.query(AUDIT) == [] and "同意記住" not in words and "確認送出" not in words


@pytest.mark.parametrize("text, label", [("我來處理", "我來處理"), (" 已完成 ", "已完成"), ("無法處理", "無法處理"),
                                         ("轉回待處理", "轉回待處理")])
def test_staff_group_a_buttons_label_typed_gets_one_line_pointing_to_the_button(staff_service, line_standin,
                                                                                  text, label):
    [message] = reply_messages(staff_service, line_standin, _in_staff_group(text))

    assert message["type"] == "text" and "\n" not in message["text"]  # one short line
    assert f"「{label}」按鈕" in message["text"] and "卡片" in message["text"] and "不會改變" in message["text"]
    # typing it acted on nothing: no request, no staff action
    assert staff_service.store.query(REQUESTS) == [] and staff_service.store.query("staff_audit") == []


@pytest.mark.parametrize("text", ["今天誰值班？", "我來處理這件", "路燈那件我去看了", "謝謝大家", "好", "今天新需求好多",
                                  "說明一下剛剛那件", "有人要吃飯嗎"])
def test_staff_group_staff_talk_gets_no_answer(staff_service, line_standin, text):
    from tests.conftest import line_body, replies_to, sign

    event = _in_staff_group(text)
    body = line_body(event)
    assert staff_service.handle(body.decode(), sign(body)).status == 200
    assert replies_to(line_standin, event["replyToken"]) == []


def test_other_groups_keep_the_one_to_one_guidance(staff_service, line_standin):
    other_group = "C" + "2" * 32
    words = all_text(reply_messages(staff_service, line_standin, text_event("新需求", group_id=other_group)))
    assert "一對一聊天" in words and "我來處理" not in words


# -- the picker explains only the vague words said -----------------------------------------

@pytest.mark.parametrize("text, said, not_said", [
    ("彰化縣有素食嗎", ["「彰化縣」是整個縣"], ["附近", "只說「彰化」"]),  # the reported example
    ("附近有素食嗎", ["依「附近」"], ["彰化縣", "只說「彰化」"]),
    ("這邊有什麼好吃的素食", ["依「這邊」"], ["附近", "彰化縣"]),
    ("彰化有素食店嗎", ["只說「彰化」"], ["附近", "「彰化縣」"]),
    ("vegan in changhua", ["只說「彰化」"], ["附近"]),
    ("附近有什麼活動", ["依「附近」"], ["只說「彰化」"]),
    ("彰化附近有什麼活動", ["依「附近」", "只說「彰化」"], ["「彰化縣」"]),
])
def test_vague_area_note_names_only_the_words_said(service, line_standin, text, said, not_said):
    words = all_text(reply_messages(service, line_standin, text_event(text)))
    assert "想找哪個鄉鎮" in words or "想查哪個鄉鎮" in words
    for needle in said:
        assert needle in words, (needle, words)
    for needle in not_said:
        assert needle not in words, (needle, words)


def test_vague_area_menu_tap_explains_no_vague_word(service, line_standin):
    words = all_text(reply_messages(service, line_standin, postback_event("menu:places")))
    assert "想找哪個鄉鎮" in words  # the picker itself
    assert "附近" not in words and "只說「彰化」" not in words
