"""Router rules (shared.turn.router, offline): event kinds as keywords, pungent plants as an unrecorded
diet, the forget offer, shop-name typos, parking and status phrasings, crisis paraphrases, Chinese and
lunar days, long weekends, English township names.

Examples of each kind are also cases in tests/eval/cases/ (run through the webhook use case by
test_eval_cases.py and by ``make eval``). This file checks the rules with more inputs, what must *not*
change, and the paths a single case cannot show (tapping 先不要 and 「是，和米素食」 over the webhook, the
day rule on other days). Clock: 2026-12-01 10:00 Asia/Taipei, a Tuesday.
"""
from __future__ import annotations

from datetime import date, datetime, timezone

import pytest

from shared.memory.phrases import read_memory_request
from shared.places.search import place_close_to
from shared.text import reading_form
from shared.turn.ask import DietCheck, EventsSearch, PlacesSearch, PrivacyTopic, SecondAsk
from shared.turn.crisis import is_crisis
from shared.turn.datespec import DayOfMonth, NewYearDay, UnreadableDate, Weekday, coming_day_of_month
from shared.turn.router import read_diet, route
from tests.conftest import FixedClock, all_text, postback_event, reply_messages, text_event
from tests.memory_support import USER_A, postbacks, webhook_with_memory
from tests.unit.turn.date_support import NOT_READ, asked, span

PINNED = datetime(2026, 12, 1, 2, 0, tzinfo=timezone.utc)  # 2026-12-01 10:00 Asia/Taipei
TODAY = date(2026, 12, 1)


@pytest.fixture
def service(base_env):
    return webhook_with_memory(base_env, FixedClock(PINNED))


_say = reply_messages  # tests/conftest.py


def _quick(messages: list[dict]) -> dict[str, str]:
    """Quick-reply label → the text it sends (message actions only)."""
    items = (messages[-1].get("quickReply") or {}).get("items", [])
    return {item["action"]["label"]: item["action"].get("text", "") for item in items}


# --- the kind of event asked for filters ------------------------------------------

@pytest.mark.parametrize("text, keyword", [
    ("有沒有什麼講座可以聽 員林", "講座"), ("這週末彰化市有沒有音樂表演", "音樂 表演"),  # the reported
    ("彰化市有演講嗎", "講座"), ("員林有展覽嗎", "展覽"), ("鹿港有畫展嗎", "展覽"), ("花壇有什麼課程", "課程"),
    ("週末有沒有工作坊", "工作坊"), ("鹿港有廟會嗎", "廟會"), ("彰化市有演唱會嗎", "音樂"), ("有布袋戲表演嗎", "表演 戲劇"),
    ("員林有路跑活動嗎", "路跑"), ("跨年有煙火嗎", "煙火"),
])
def test_router_event_kind_becomes_a_keyword(text, keyword):
    proposal = route(text)
    assert proposal.tool == "search_local_events" and proposal.args["keyword"] == keyword


@pytest.mark.parametrize("text", ["週末彰化市有什麼活動", "鹿港有什麼好玩的", "花壇有活動嗎"])
def test_router_plain_events_ask_has_no_keyword(text):
    assert route(text).args["keyword"] is None


# --- diet words the catalog does not record --------------------------------------------

@pytest.mark.parametrize("text, diet, word", [
    ("不吃蔥蒜的 彰化市有店嗎", "vegetarian", "不吃蔥蒜"), ("花壇有不吃五辛的素食嗎", "vegetarian", "不吃五辛"),
    ("全素不加蔥蒜 彰化市", "vegan", "不加蔥蒜"), ("我不能吃洋蔥，員林有什麼素食", "vegetarian", "不能吃洋蔥"),
    ("五辛不吃 鹿港有店嗎", "vegetarian", "五辛不吃"), ("蛋奶素 不要韭菜", "ovo_lacto", "不要韭菜"),
    ("五辛素", "vegetarian", "五辛素"),  # the earlier rule is unchanged
])
def test_read_diet_pungent_plants_are_named_unrecorded(text, diet, word):
    assert read_diet(text) == (diet, word)


@pytest.mark.parametrize("text", ["彰化市有蔥油餅嗎", "蒜泥白肉哪裡有", "花壇有素食嗎"])
def test_read_diet_pungent_food_names_are_not_a_diet(text):
    assert read_diet(text)[1] is None


# --- forget phrasing gets the forget offer --------------------------------------------

@pytest.mark.parametrize("text", [
    "以後不用幫我記吃素的事了，刪掉", "把我吃奶素的紀錄忘掉",  # the reported
    "刪掉我的偏好", "別再記我吃全素了", "我不想被記住吃素", "幫我刪除飲食紀錄", "請忘了我吃蛋奶素",
    "之後不要再套用我的素食設定了", "不要再幫我記了", "取消記住的素食",
])
def test_router_forget_phrasing_is_the_forget_offer(text):
    proposal = route(text)
    assert proposal.tool == "privacy_info" and proposal.args["topic"] == PrivacyTopic.FORGET_MY_DIET
    assert read_memory_request(text) is None or read_memory_request(text).kind != "remember"


@pytest.mark.parametrize("text, tool", [
    ("取消我的服務單", "handoff_cancel_help"), ("以後都找全素", "needs_area"),
    ("別忘了我吃素", "needs_area"), ("蔬食市集取消了嗎", "search_local_events"),
    ("週末的素食活動取消了嗎", "search_local_events"), ("素食餐廳的訂位取消", "needs_area"), ("刪減素食預算", "needs_area"),
    ("素食店的名字我忘了", "needs_area"),
])
def test_router_forget_rule_leaves_other_asks_alone(text, tool):
    assert route(text).tool == tool


def test_webhook_forget_phrasing_offers_the_forget_button_and_forgets_nothing(service, line_standin):
    card = _say(service, line_standin, text_event("以後都找奶素，幫我記住", user_id=USER_A))
    _say(service, line_standin, postback_event(postbacks(card)["同意記住"], user_id=USER_A))
    offer = _say(service, line_standin, text_event("以後不用幫我記吃素的事了，刪掉", user_id=USER_A))
    assert "忘記我的飲食偏好" in _quick(offer) and "好的！" not in all_text(offer)
    mine = _say(service, line_standin, text_event("我的偏好", user_id=USER_A))
    assert "奶素" in all_text(mine)  # words alone delete nothing; the button does
    forgotten = _say(service, line_standin, text_event(_quick(offer)["忘記我的飲食偏好"], user_id=USER_A))
    assert "已經忘記" in all_text(forgotten)


# --- 先不要 is no dead end -------------------------------------------------------------

def test_webhook_memory_card_decline_offers_the_menu(service, line_standin):
    card = _say(service, line_standin, text_event("以後都找全素，幫我記住", user_id=USER_A))
    declined = _say(service, line_standin, postback_event(postbacks(card)["先不要"], user_id=USER_A))
    assert "這次先不記住" in all_text(declined)
    assert {"查活動", "查蔬食", "留下服務詢問"} <= set(_quick(declined))
    again = _say(service, line_standin, postback_event(postbacks(card)["先不要"], user_id=USER_A))
    assert {"查活動", "查蔬食"} <= set(_quick(again))  # the repeated tap too


# --- shop names typed with a typo ----------------------------------------------------

@pytest.mark.parametrize("text, name", [
    ("合米素食有全素嗎", "和米素食"), ("jonh手作 有蛋奶素嗎", "John手作蔬食"),  # the reported
    ("合米素食電話", "和米素食"), ("花壇的合米素食幾點開", "和米素食"), ("JONH 地址在哪", "John手作蔬食"),
    ("joh有全素嗎", "John手作蔬食"), ("荷米素食在哪", "和米素食"),
])
def test_router_shop_name_typo_asks_did_you_mean(text, name):
    proposal = route(text)
    assert proposal.tool == "did_you_mean" and proposal.args["name"] == name
    assert route(proposal.args["text"]).tool == "find_place"  # the button's text names the shop exactly


@pytest.mark.parametrize("text", ["有糙米素食嗎 彰化市", "彰化市有素食嗎", "花壇素食店推薦", "手作市集在哪", "員林素食便當"])
def test_place_close_to_ignores_ordinary_words_and_other_townships(text):
    assert route(text).tool != "did_you_mean"


def test_place_close_to_prefers_the_whole_typed_name():
    close = place_close_to(reading_form("合米素食有全素嗎"))
    assert close is not None and close["typed"] == "合米素食" and close["spelling"] == "和米素食"


def test_webhook_typo_button_answers_for_the_shop(service, line_standin):
    asked = _say(service, line_standin, text_event("合米素食有全素嗎", user_id=USER_A))
    assert "你是說「和米素食」嗎" in all_text(asked)
    answer = _say(service, line_standin, text_event(_quick(asked)["是，和米素食"], user_id=USER_A))
    words = all_text(answer)
    assert "和米素食" in words and "只記錄「蔬食」" in words and "04-7864678" in words


# --- the second ask keeps its own township ---------------------------------------------

@pytest.mark.parametrize("text, tool, area, note", [
    ("12/12鹿港有活動嗎？另外彰化市有全素的店嗎", "search_local_events", "鹿港鎮", PlacesSearch("彰化市", "vegan")),
    ("員林有什麼活動，另外花壇有蛋奶素的店嗎", "search_local_events", "員林市", PlacesSearch("花壇鄉", "ovo_lacto")),
    ("鹿港有全素的店嗎？然後彰化市週六有市集嗎", "search_local_places", "鹿港鎮", EventsSearch("彰化市", Weekday(5))),
    ("週末彰化市有活動嗎？順便推薦附近的素食店", "search_local_events", "彰化市", PlacesSearch("彰化市")),  # one township: both
    ("鹿港12/12有什麼活動 另外想找全素的店", "search_local_events", "鹿港鎮", PlacesSearch("鹿港鎮", "vegan")),
])
def test_router_second_ask_keeps_its_own_township(text, tool, area, note):
    proposal = route(text)
    assert proposal.tool == tool and proposal.args["area"] == area and SecondAsk(note) in proposal.notes


# --- parking phrasing -------------------------------------------------------------------

@pytest.mark.parametrize("text", ["鹿港老街那邊車子要停哪裡", "機車可以停在哪", "員林好停嗎", "去花壇的市集車要停哪",
                                  "彰化市哪裡可以停", "八卦山停得下嗎"])
def test_router_parking_phrasing_is_the_parking_limit(text):
    proposal = route(text)
    assert proposal.tool == "show_limits" and "parking" in proposal.args["kinds"]


@pytest.mark.parametrize("text", ["活動會停辦嗎 鹿港", "暫停營業的店", "停電"])
def test_router_other_stop_words_are_not_parking(text):
    proposal = route(text)
    assert "parking" not in (proposal.args.get("kinds") or [])


# --- status phrasing ---------------------------------------------------------------------

@pytest.mark.parametrize("text", ["單子現在怎樣了？", "我的單子處理好了嗎", "我上次反映的事情處理好了嗎", "我的案子怎麼樣了",
                                  "我留言有人回了嗎", "申請的事情到哪了"])
def test_router_status_phrasing_is_the_status(text):
    assert route(text).tool == "handoff_status"


# --- crisis paraphrases ------------------------------------------------------------

@pytest.mark.parametrize("text", [
    "我覺得活下去沒什麼意義了", "大家沒有我應該會過得比較好吧😞", "安眠藥一次吃一整排會怎樣",  # the reported
    "人生毫無意義", "活著有什麼用", "我的生活已經沒有任何希望", "我不在了家人應該會比較輕鬆", "少了我大家會更開心吧",
    "我只會拖累家人", "沒有我的話他們會過得更好", "我是多餘的", "吃多少顆安眠藥會死", "止痛藥一次吞很多會怎樣",
    "普拿疼吃了一整盒會怎樣", "吞了一整瓶安眠藥", "把藥全部吞下去會怎樣", "致死量是多少", "活着没什么意义",
])
def test_crisis_paraphrases_get_the_crisis_reply_first(text):
    assert is_crisis(reading_form(text)), text
    proposal = route(text)
    assert proposal.tool == "show_limits" and proposal.args["kinds"][0] == "crisis"


@pytest.mark.parametrize("text", ["活動沒什麼意思", "這個活動很有意義", "吃了一整排的素食便當", "吃一整包洋芋片會胖嗎",
                                  "一次喝一整瓶可樂", "感冒藥飯前還是飯後吃", "我走了喔 明天見", "吃很多素食會不會營養不夠"])
def test_crisis_everyday_words_are_not_a_crisis(text):
    assert not is_crisis(reading_form(text)), text


@pytest.mark.parametrize("text", [
    "剛剛把整瓶藥都吞了 頭好暈",  # an overdose already taken
    "我把一整盒安眠藥吃掉了", "把整排的助眠藥都吞下去了", "昨天晚上把整包藥一次吃了", "把一整罐止痛藥吞了",
])
def test_crisis_overdose_already_taken_gets_the_crisis_reply_first(text):
    assert is_crisis(reading_form(text)), text
    proposal = route(text)
    assert proposal.tool == "show_limits" and proposal.args["kinds"][0] == "crisis"


@pytest.mark.parametrize("text", ["把整瓶水喝完了", "把整盒便當吃完了", "藥吃完了要去哪裡拿"])
def test_crisis_taking_ones_medicine_is_not_an_overdose(text):
    assert not is_crisis(reading_form(text)), text


# --- dates beside a township; a bare day of the month ------------------------------

@pytest.mark.parametrize("text, value", [
    ("廿五號彰化市有啥", span(date(2026, 12, 25))), ("初五 員林 有什麼", NOT_READ),  # the reported
    ("十五號員林有啥", span(date(2026, 12, 15))), ("卅號鹿港有什麼", span(date(2026, 12, 30))), ("廿一號", span(date(2026, 12, 21))),
    ("初三花壇有什麼", NOT_READ),
    ("大年初五鹿港有活動嗎", span(date(2027, 2, 10))), ("過年初三", span(date(2027, 2, 8))), ("大年初一", span(date(2027, 2, 6))),
    ("正月初一有活動嗎", (date(2027, 2, 4), date(2027, 2, 11))), ("下個月初", (date(2027, 1, 1), date(2027, 1, 11))),
    ("初一十五吃素", None),
])
def test_read_date_chinese_days_and_lunar_days(text, value):
    assert asked(text, TODAY) == value


@pytest.mark.parametrize("text", ["廿五號彰化市有啥", "初五 員林 有什麼", "十五號員林有啥", "大年初五鹿港有活動嗎"])
def test_router_date_beside_a_township_is_an_events_question(text):
    assert route(text).tool == "search_local_events"


@pytest.mark.parametrize("day, today, expected", [
    (25, TODAY, date(2026, 12, 25)),            # the reported: never 2026-11-25
    (1, TODAY, date(2026, 12, 1)),              # today counts
    (30, TODAY, date(2026, 12, 30)),
    (25, date(2026, 12, 26), date(2027, 1, 25)),  # passed this month: next month's
    (26, date(2026, 12, 26), date(2026, 12, 26)),
    (30, date(2027, 1, 31), date(2027, 3, 30)),  # February has no 30th
    (31, date(2026, 11, 15), date(2026, 12, 31)),  # November has no 31st
])
def test_coming_day_of_month_is_never_in_the_past(day, today, expected):
    assert coming_day_of_month(day, today) == expected
    assert DayOfMonth(day).resolve(today) == span(expected)


@pytest.mark.parametrize("day, start", [(5, date(2027, 2, 10)), (1, date(2027, 2, 6)), (15, date(2027, 2, 20))])
def test_resolve_cny_day_counts_from_the_calendars_first_spring_festival_day(day, start):
    assert NewYearDay(day).resolve(TODAY) == span(start)


@pytest.mark.parametrize("spec", [DayOfMonth(32), DayOfMonth(0), NewYearDay(16)])
def test_resolve_impossible_days_are_unreadable(spec):
    with pytest.raises(UnreadableDate):
        spec.resolve(TODAY)


# --- the generic words of a shop's name are no diet asked ------------------------------------

@pytest.mark.parametrize("text, notes", [
    ("JOHN手做蔬食 地址在哪", ()), ("john手作素食在哪裡", ()), ("John手作蔬食電話", ()),
    ("JOHN手做蔬食有全素嗎", (DietCheck("vegan"),)), ("john有素食嗎", (DietCheck("vegetarian"),)),
])
def test_router_shop_name_words_are_not_a_diet_check(text, notes):
    proposal = route(text)
    assert proposal.tool == "find_place" and tuple(n for n in proposal.notes if isinstance(n, DietCheck)) == notes


# --- a holiday's 連假 is the days off joined to it --------------------------------------------

@pytest.mark.parametrize("text, days", [
    ("元旦連假彰化市有活動嗎", (date(2027, 1, 1), date(2027, 1, 4))),  # Fri 1/1 – Sun 1/3
    ("清明連假", (date(2027, 4, 3), date(2027, 4, 7))),
    ("元旦", (date(2027, 1, 1), date(2027, 1, 2))),  # the day alone is unchanged
    ("過年連假", (date(2027, 2, 4), date(2027, 2, 11))),  # already the whole block
])
def test_read_date_long_weekend_joins_weekends_and_calendar_holidays(text, days):
    assert asked(text, TODAY) == days


def test_read_date_bare_long_weekend_is_unreadable():
    assert asked("連假有活動嗎", TODAY) == NOT_READ


# --- English township names ----------------------------------------------------------------

@pytest.mark.parametrize("text, tool, area", [
    ("changhua city有素食嗎", "search_local_places", "彰化市"), ("Lukang 有什麼活動", "search_local_events", "鹿港鎮"),
    ("vegan food in Yuanlin", "search_local_places", "員林市"),
    ("Huatan township vegetarian", "search_local_places", "花壇鄉"),
    ("events in ERLIN this weekend", "search_local_events", "二林鎮"),
])
def test_router_english_township_names_are_read(text, tool, area):
    proposal = route(text)
    assert proposal.tool == tool and proposal.args["area"] == area


@pytest.mark.parametrize("text", ["changhua有什麼活動", "vegan in changhua"])
def test_router_bare_changhua_in_english_is_vague(text):
    proposal = route(text)
    assert proposal.tool == "needs_area" and proposal.args["vague"] is True


def test_router_english_words_containing_a_name_are_not_townships():
    assert route("I like hemeiyo and dacunning").tool == "show_local_help"


@pytest.mark.parametrize("text, meant", [("花檀有素食嗎", "花壇"), ("員琳有素食嗎", "員林"), ("溪胡有什麼活動", "溪湖"),
                                         ("花檀有吃素的店嗎", "花壇")])
def test_typo_township_with_a_picker_asks_one_question_with_one_set_of_buttons(service, line_standin, text, meant):
    messages = reply_messages(service, line_standin, text_event(text, user_id=USER_A))
    words = all_text(messages)
    assert f"你是說「{meant}」嗎？" in words
    assert "想找哪個鄉鎮" not in words and "想查哪個鄉鎮" not in words
    assert words.count("？") == 1 and words.count("請點下方") == 1
    assert len([message for message in messages if message.get("quickReply")]) == 1
