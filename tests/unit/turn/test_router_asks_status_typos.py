"""The router (shared.turn.router, offline) on several asks, privacy remarks, status by subject, township
typos, 記住 beside a shop name, 新需求→, and a greeting before a question.

Examples of each kind are also cases in tests/eval/cases/ (run through the webhook use case by
test_eval_cases.py and by ``make eval``). This file checks the rules with more inputs, the negatives
where a rule could over-fire, and the flows a single case cannot show.
Clock: 2026-12-01 10:00 Asia/Taipei, a Tuesday.
"""
from __future__ import annotations

from datetime import datetime, timezone

import pytest

from shared.handoff.drafts import request_text_of
from shared.places.search import areas_with_places
from shared.text import reading_form
from shared.turn.ask import EventsSearch, Flag, OtherAreas, PlacesSearch, SecondAsk, Unasked
from shared.turn.datespec import Week, Weekday
from shared.turn.router import route, township_typo
from tests.codes_support import shown_in
from tests.conftest import FixedClock, all_text, postback_event, reply_messages, text_event
from tests.memory_support import postbacks, preference_of, webhook_with_memory

PINNED = datetime(2026, 12, 1, 2, 0, tzinfo=timezone.utc)  # 2026-12-01 10:00 Asia/Taipei


@pytest.fixture
def service(base_env):
    return webhook_with_memory(base_env, FixedClock(PINNED))


def _labels(messages: list[dict]) -> list[str]:
    """The quick-reply labels of the reply, in order."""
    return [item["action"].get("label") for message in messages
            for item in ((message.get("quickReply") or {}).get("items") or [])]


def _texts(messages: list[dict]) -> dict[str, str]:
    """{label: text} of the message actions in the quick replies."""
    return {item["action"]["label"]: item["action"]["text"] for message in messages
            for item in ((message.get("quickReply") or {}).get("items") or []) if item["action"]["type"] == "message"}


# --- two asks said with a space; a township without shop data -------------------------------

@pytest.mark.parametrize("text, tool, note", [
    ("员林有没有纯素的店 周末有活动吗", "search_local_places", EventsSearch("員林市", Week(0, weekend=True))),
    ("員林有沒有純素的店 週末有活動嗎", "search_local_places", EventsSearch("員林市", Week(0, weekend=True))),
    ("週末員林有活動嗎 有沒有全素的店", "search_local_events", PlacesSearch("員林市", "vegan")),
    ("鹿港有素食店嗎 週六有什麼活動", "search_local_places", EventsSearch("鹿港鎮", Weekday(5))),
    ("花壇這週末有活動嗎 附近有吃素的店嗎", "search_local_events", PlacesSearch("花壇鄉")),
])
def test_router_two_asks_with_a_space_answers_one_and_notes_the_other(text, tool, note):
    proposal = route(text)
    assert proposal.tool == tool and SecondAsk(note) in proposal.notes


@pytest.mark.parametrize("text", ["花壇 素食 活動", "週末 彰化市 有蔬食的市集嗎", "彰化市 吃素", "鹿港 週末 活動"])
def test_router_words_split_by_spaces_without_two_questions_stay_one_ask(text):
    assert not any(isinstance(note, SecondAsk) for note in route(text).notes)


def test_places_areas_with_places_lists_the_catalog_townships():
    assert areas_with_places() == ["彰化市", "花壇鄉"]


def test_webhook_shop_ask_beside_events_in_a_township_without_shops_says_so_and_offers_shops(service, line_standin):
    messages = reply_messages(service, line_standin, text_event("週末員林有活動嗎 有沒有全素的店"))
    words, buttons = all_text(messages), postbacks(messages)
    assert "員林市沒有店家資料" in words
    assert "員林市的店家" not in buttons  # no dead-end button
    assert buttons["花壇鄉的店家"].startswith("places:") and "area=花壇鄉" in buttons["花壇鄉的店家"]
    assert "vegan" in buttons["彰化市的店家"]  # the diet asked rides on the button


def test_webhook_shop_ask_first_offers_the_weekend_events_with_their_dates(service, line_standin):
    messages = reply_messages(service, line_standin, text_event("员林有没有纯素的店 周末有活动吗"))
    assert "這份資料目前沒有員林市的店家" in all_text(messages)
    again = reply_messages(service, line_standin, postback_event(postbacks(messages)["員林市的活動"]))
    assert "員林市，2026/12/5（六）～2026/12/6（日）" in all_text(again)


# --- a privacy or no-memory remark beside a search -----------------------------------------

@pytest.mark.parametrize("text, tool, note", [
    ("我吃奶素 但不要存我的資料喔 彰化市有嗎", "search_local_places", "not_saved"),
    ("我吃全素，不要記錄我的個資，花壇有店嗎", "search_local_places", "not_saved"),
    ("不要存我的資料 週末鹿港有活動嗎", "search_local_events", "not_saved"),
    ("我吃奶素 不用記 john有嗎", "find_place", "not_saved"),
    ("你們會存我的個資嗎 花壇有素食嗎", "search_local_places", "privacy_asked"),
    ("我的資料會存嗎 鹿港週末有活動嗎", "search_local_events", "privacy_asked"),
])
def test_router_privacy_remark_beside_a_search_keeps_the_search(text, tool, note):
    proposal = route(text)
    assert proposal.tool == tool and note in proposal.notes


@pytest.mark.parametrize("text, tool", [
    ("我的資料", "privacy_info"), ("刪除我的資料", "privacy_info"), ("你們會記得我嗎", "privacy_info"),
    ("不用記我吃素", "ack"), ("不要記住我吃素，只是今天想吃", "ack"), ("不用記起來", "ack"),
])
def test_router_privacy_remark_alone_is_still_answered_as_before(text, tool):
    assert route(text).tool == tool


def test_router_my_preference_beside_a_search_is_no_privacy_question():
    proposal = route("用我的偏好 花壇有素食嗎")
    assert proposal.tool == "search_local_places" and Flag.PRIVACY_ASKED not in proposal.notes


def test_webhook_do_not_keep_my_data_beside_a_search_lists_shops_and_stores_nothing(service, line_standin):
    messages = reply_messages(service, line_standin, text_event("我吃奶素 但不要存我的資料喔 彰化市有嗎"))
    words = all_text(messages)
    assert "John手作蔬食" in words and "不會幫你記" in words
    assert not any(label.startswith("記住") for label in _labels(messages))
    assert "只保存" not in words and "詳細說明" not in words  # no privacy notice over the answer
    assert preference_of(service.store).dietary_type is None


# --- status phrasing by the request's subject ----------------------------------------------

@pytest.mark.parametrize("text", ["剛剛那個水溝蓋的 處理了沒", "我報的路燈修好了沒", "上次那件有人看了沒", "我剛剛反映的坑洞 好了沒",
                                  "上次那個路燈的事 怎麼樣了", "昨天那個有下文嗎", "我剛剛說的那個 有人處理了嗎"])
def test_router_own_request_by_subject_with_a_progress_word_is_status(text):
    assert route(text).tool == "handoff_status"


@pytest.mark.parametrize("text", ["剛剛那個活動幾點", "上次那家店好吃嗎", "之前那間店怎麼樣了", "剛剛那個市集辦了沒",
                                  "上次那個市集好玩嗎", "好了沒", "剛剛那個john手作有開嗎"])
def test_router_earlier_thing_that_is_no_request_is_not_status(text):
    assert route(text).tool != "handoff_status"


def test_webhook_status_by_subject_after_a_request_shows_that_request(service, line_standin):
    card = reply_messages(service, line_standin, text_event("新需求 我家巷口的水溝蓋破了 很危險"))
    receipt = all_text(reply_messages(service, line_standin, postback_event(postbacks(card)["確認送出"])))
    [request_id] = shown_in(receipt)  # the request's number as the resident reads it
    words = all_text(reply_messages(service, line_standin, text_event("剛剛那個水溝蓋的 處理了沒")))
    assert request_id in words and "水溝蓋" in words and "我認得的是鄉鎮名稱" not in words


# --- a misspelt township --------------------------------------------------------------------

@pytest.mark.parametrize("text, typed, first", [
    ("溪胡還是員林有素食餐廳", "溪胡", "溪湖鎮"), ("員林或花潭有素食嗎", "花潭", "花壇鄉"), ("鹿巷跟和美有活動嗎", "鹿巷", "鹿港鎮"),
    ("田尾跟北豆週末有活動嗎", "北豆", "北斗鎮"), ("溪胡鎮有素食嗎", "溪胡", "溪湖鎮"), ("員林、二休有活動嗎", "二休", "二水鄉"),
    ("員琳禮拜六有啥活動", "員琳", "員林市"), ("員琳這週末", "員琳", "員林市"), ("溪胡明天有活動嗎", "溪胡", "溪湖鎮"),
    ("鹿巷禮拜天", "鹿巷", "鹿港鎮"), ("花台下禮拜", "花臺", "花壇鄉"), ("鹿巷星期六有什麼活動", "鹿巷", "鹿港鎮"),
])
def test_router_township_typo_is_asked_about(text, typed, first):
    found = township_typo(reading_form(text))
    assert found is not None and found[0] == typed and found[2][0] == first
    proposal = route(text)
    assert proposal.tool == "did_you_mean" and proposal.args["name"] == first


@pytest.mark.parametrize("text", ["員林還是社區有活動", "員林跟朋友去吃素", "鹿港和北部有活動嗎", "溪湖還是員林有素食餐廳",
                                  "二林夜市有素食嗎", "員林跟大家一起吃素", "花壇或附近有素食嗎", "彰化市跟田中有活動嗎",
                                  "員林市場有素食嗎", "我回鄉下 花壇有活動嗎"])
def test_router_township_typo_does_not_over_fire(text):
    assert township_typo(reading_form(text)) is None and route(text).tool != "did_you_mean"


@pytest.mark.parametrize("text", ["員琳禮拜六有啥活動", "鹿巷禮拜天有活動嗎", "報佳音禮拜六有嗎", "我們禮拜六有啥活動"])
def test_router_details_never_keep_half_of_a_week_word(text):
    proposal = route(text)
    words = " ".join(note.words for note in proposal.notes if isinstance(note, Unasked))
    assert "禮" not in words and "拜" not in words


@pytest.mark.parametrize("text, right", [("員琳禮拜六有啥活動", "員林禮拜六有啥活動"), ("鹿巷禮拜天", "鹿港禮拜天"),
                                         ("花台下禮拜", "花壇下禮拜")])
def test_webhook_township_typo_before_a_date_asks_did_you_mean(service, line_standin, text, right):
    messages = reply_messages(service, line_standin, text_event(text))
    words = all_text(messages)
    assert "你是說" in words and "禮」" not in words and "示範活動" not in words
    assert right in _texts(messages).values()


def test_router_township_typo_with_two_close_townships_names_both():
    proposal = route("溪胡還是員林有素食餐廳")
    assert [name for name, _ in proposal.args["choices"]] == ["溪湖鎮", "溪州鄉"]


def test_webhook_township_typo_button_asks_again_with_the_right_name(service, line_standin):
    messages = reply_messages(service, line_standin, text_event("溪胡還是員林有素食餐廳"))
    assert "你是說溪湖鎮，還是溪州鄉？" in all_text(messages)
    again_text = _texts(messages)["是，溪湖鎮"]
    assert again_text == "溪湖還是員林有素食餐廳"
    proposal = route(again_text)
    assert proposal.args["area"] == "溪湖鎮" and OtherAreas(("員林市",)) in proposal.notes


# --- minors ---------------------------------------------------------------------------------------------

def test_webhook_diet_said_beside_a_shop_name_is_offered_to_remember(service, line_standin):
    messages = reply_messages(service, line_standin, text_event("我吃全素 彰化市john那間有嗎 電話給我"))
    assert "記住：全素" in _labels(messages) and "04-7284398" in all_text(messages)


@pytest.mark.parametrize("text", ["我媽吃全素 john那間有嗎", "我吃奶素 不用記 john有嗎", "john手作蔬食在哪"])
def test_webhook_shop_name_without_the_users_own_diet_offers_no_remember(service, line_standin, text):
    messages = reply_messages(service, line_standin, text_event(text))
    assert "John手作蔬食" in all_text(messages)
    assert not any(label.startswith("記住") for label in _labels(messages))


def test_webhook_diet_beside_a_shop_name_already_remembered_is_not_offered_again(service, line_standin):
    card = reply_messages(service, line_standin, text_event("以後都找全素，幫我記住"))
    assert "已經記住" in all_text(reply_messages(service, line_standin, postback_event(postbacks(card)["同意記住"])))
    messages = reply_messages(service, line_standin, text_event("我吃全素 john那間有嗎"))
    assert "John手作蔬食" in all_text(messages) and "記住：全素" not in _labels(messages)


@pytest.mark.parametrize("text, request_text", [
    ("新需求→想找志工陪我去看醫生", "想找志工陪我去看醫生"), ("新需求 -> 巷口路燈壞了", "巷口路燈壞了"),
    ("新需求=>社區公告看不懂", "社區公告看不懂"), ("新需求：➜ 想借輪椅", "想借輪椅"), ("【新需求】→想借輪椅", "想借輪椅"),
    ("新需求：想參加走讀", "想參加走讀"),
])
def test_drafts_request_text_of_strips_arrows_after_the_prefix(text, request_text):
    assert request_text_of(text) == request_text


def test_drafts_request_text_of_keeps_an_arrow_inside_the_request():
    assert request_text_of("新需求：彰化→鹿港的路燈壞了") == "彰化→鹿港的路燈壞了"


@pytest.mark.parametrize("text", ["早上好 今天有什么活动", "你好，花壇有素食嗎", "hi 鹿港週末有活動嗎", "哈囉~ 員林有活動嗎",
                                  "嗨 請問john手作蔬食電話", "您好請問花壇有素食嗎"])
def test_router_greeting_before_a_question_answers_it_with_a_greeting_note(text):
    proposal = route(text)
    assert proposal.tool in ("search_local_events", "search_local_places", "find_place") and "greeted" in proposal.notes


@pytest.mark.parametrize("text", ["早上有活動嗎", "花壇有素食嗎", "早餐店 花壇", "hight 鹿港有活動嗎"])
def test_router_no_greeting_first_gets_no_greeting_note(text):
    assert "greeted" not in route(text).notes


@pytest.mark.parametrize("text", ["早上好", "晚上好", "大家好"])
def test_router_greeting_alone_is_a_greeting(text):
    assert route(text).tool == "greeting"


def test_webhook_greeting_before_a_question_opens_with_hello_and_answers(service, line_standin):
    words = all_text(reply_messages(service, line_standin, text_event("你好，花壇有素食嗎")))
    assert words.startswith("你好！") and "和米素食" in words
