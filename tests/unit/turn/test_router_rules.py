"""Router rules (shared.turn.router, offline): crisis paraphrases, who asks is no topic, a day inside a
relative month, a second ask offered never filtered, no directory, remember requests, generic and
someone else's diets, help requests, season greetings, subjects LOCAL has no data on.

Examples of each kind are also cases in tests/eval/cases/ (run through the webhook use case by
test_eval_cases.py). This file checks the rules themselves with many more inputs, the paths a single case
cannot show (the model turn, a request beside a crisis, a tapped button), and what must *not* change.
Clock: 2026-12-01 10:00 Asia/Taipei.
"""
from __future__ import annotations

import time
from dataclasses import replace
from datetime import date, datetime, timezone

import pytest

from shared.config import Settings
from shared.context import EventContext
from shared.identity import Actor
from shared.memory.phrases import read_memory_request
from shared.memory.store import PreferenceSnapshot
from shared.places.search import diet_listed
from shared.replies.menu import LIMIT_WORDS
from shared.routing import route_text
from shared.store.memory import MemoryStore
from shared.text import reading_form
from shared.turn.ask import EventsSearch, Flag, PlacesSearch, SecondAsk
from shared.turn.crisis import is_crisis
from shared.turn.datespec import DayOfMonth, Holiday, MonthDay, RelativeMonth, UnreadableDate, Week
from shared.turn.diet_origin import resolve_diet
from shared.turn.router import route
from tests.conftest import FixedClock, all_text, postback_event, reply_messages, text_event
from tests.memory_support import postbacks, webhook_with_memory
from tests.unit.turn.date_support import NOT_READ, asked, span

PINNED = datetime(2026, 12, 1, 2, 0, tzinfo=timezone.utc)  # 2026-12-01 10:00 Asia/Taipei, a Tuesday
TODAY = date(2026, 12, 1)
ALICE = Actor("test-tenant", "U7a1e5b0c2d3f4a5b6c7d8e9f0a1b2c3d")


# --- crisis paraphrases ------------------------------------------------------------

@pytest.mark.parametrize("text", [
    "活著好累 不想再撐了", "我真的想去死😭", "我想自我了斷",  # the reported
    "撐不下去了", "真的熬不下去了", "我不想再醒來", "好想消失", "乾脆死了算了", "我想去跳河", "人生沒有希望了",
    "活著有什麼意義", "一了百了", "我吞了整瓶安眠藥", "想結束自己的生命", "最近一直想自殘", "我想要去死一死",
    "I want to kill myself", "thinking about suicide", "i wanna die", "I don't want to live anymore",
    "no reason to live", "I can't go on", "我想自殺", "不想活了", "我好想死",
    "撑不下去了", "我想自杀",  # Simplified, read as Traditional
    "生無可戀", "阿公說他不想活了", "想跟這個世界說再見", "沒有人在乎我", "我只是大家的累贅", "我已經寫好遺書了",  # someone at risk: the numbers help the people around them too
])
def test_crisis_paraphrase_is_read_as_crisis(text):
    assert is_crisis(reading_form(text)), text
    assert route(text).tool == "show_limits" and route(text).args["kinds"][0] == "crisis"


@pytest.mark.parametrize("text, tool", [
    ("笑死 花壇有素食嗎", "search_local_places"),
    ("想死你了", "show_local_help"),
    ("熱死了 週末有什麼活動", "search_local_events"),
    ("餓死了 彰化市哪裡有素食", "search_local_places"),
    ("不想活動筋骨 有室內的活動嗎", "search_local_events"),
    ("活動好累喔 有輕鬆一點的嗎", "search_local_events"),
])
def test_crisis_hyperbole_and_activity_words_are_not_a_crisis(text, tool):
    assert not is_crisis(reading_form(text)), text
    assert route(text).tool == tool


@pytest.fixture
def pinned_service(base_env):
    return webhook_with_memory(base_env, FixedClock(PINNED))


_send = reply_messages  # tests/conftest.py


def test_route_text_crisis_is_answered_offline_never_by_the_model():
    def model_turn(ctx, text):
        raise AssertionError("a crisis must not wait for the model")

    settings = Settings.from_env({"LOCAL_TENANT_ID": "test-tenant"})
    ctx = EventContext(settings, MemoryStore(), None, PINNED, ALICE,
                       "01CRISIS0000000000000000001", time.monotonic() + 1.8, text_turn=model_turn)
    words = all_text([message.to_dict() for message in route_text(ctx, "我真的想去死").messages])
    assert "1925" in words and "119" in words and "110" in words
    with pytest.raises(AssertionError):  # the same context does go to the model for other text
        route_text(replace(ctx, webhook_event_id="01CRISIS0000000000000000002"), "花壇有素食嗎")


def test_webhook_crisis_inside_a_request_keeps_the_card_and_puts_the_numbers_first(pinned_service, line_standin):
    messages = _send(pinned_service, line_standin, text_event("新需求：我阿公最近一直說不想活了，想找人去關心他"))
    assert messages[0]["text"] == LIMIT_WORDS["crisis"]
    assert "確認送出" in postbacks(messages) and len(messages) <= 5


# --- who asks is not a topic ---------------------------------------------------------

@pytest.mark.parametrize("text, keyword", [
    ("阿嬤想問 元旦花壇有沒有什麼活動可以去", None),
    ("我阿公要我問 週末彰化市有什麼活動", None),
    ("媽媽想知道12/19員林有什麼活動", None),
    ("我朋友在問鹿港下週末有活動嗎", None),
    ("阿嬤想問有沒有適合長輩的活動", "長輩"),
    ("阿公可以參加的活動", "長輩"),
    ("有帶小孩可以去的活動嗎", "親子"),
])
def test_router_asker_is_not_an_event_keyword(text, keyword):
    proposal = route(text)
    assert proposal.tool == "search_local_events" and proposal.args["keyword"] == keyword


# --- a day inside a relative month --------------------------------------------------

@pytest.mark.parametrize("text, day", [
    ("上個月22號彰化市有什麼活動", date(2026, 11, 22)),
    ("下個月3號", date(2027, 1, 3)),
    ("這個月5日有活動嗎", date(2026, 12, 5)),
    ("本月12號", date(2026, 12, 12)),
    ("上個月二十九日", date(2026, 11, 29)),
    ("下一個月31號", date(2027, 1, 31)),
])
def test_dates_relative_month_day_is_that_one_day(text, day):
    assert asked(text, TODAY) == span(day)


def test_dates_relative_month_day_that_does_not_exist_is_unreadable():
    assert asked("下個月31號", date(2026, 10, 15)) == NOT_READ  # there is no 11/31
    with pytest.raises(UnreadableDate):
        DayOfMonth(31, RelativeMonth(1)).resolve(date(2026, 10, 15))


@pytest.mark.parametrize("text, value", [
    ("上上個月3號", NOT_READ), ("下下個月10號", NOT_READ),
    ("這個月12月12日有活動嗎", span(date(2026, 12, 12))), ("下個月3個活動", (date(2027, 1, 1), date(2027, 2, 1))),
    ("上個月", (date(2026, 11, 1), date(2026, 12, 1))),
])
def test_dates_relative_month_day_keeps_other_readings(text, value):
    assert asked(text, TODAY) == value


# --- a second ask is offered, never a filter ------------------------------------------

@pytest.mark.parametrize("text, tool, second", [
    ("週末彰化市有活動嗎？順便推薦附近的素食店", "search_local_events", PlacesSearch("彰化市")),
    ("鹿港12/12有什麼活動 另外想找全素的店", "search_local_events", PlacesSearch("鹿港鎮", "vegan")),
    ("花壇有素食店嗎？還有這週末有什麼活動", "search_local_places", EventsSearch("花壇鄉", Week(0, weekend=True))),
    ("員林有什麼素食可以吃，順便問下週末有活動嗎", "search_local_places", EventsSearch("員林市", Week(1, weekend=True))),
    ("週末有活動嗎？也想找吃素的地方", "search_local_events", PlacesSearch()),
])
def test_router_second_ask_is_a_note_not_a_filter(text, tool, second):
    proposal = route(text)
    assert proposal.tool == tool and SecondAsk(second) in proposal.notes
    if tool == "search_local_events":
        assert proposal.args["keyword"] is None


@pytest.mark.parametrize("text, keyword", [("有蔬食的市集嗎", "市集 蔬食"), ("週末彰化市有蔬食市集嗎", "市集 蔬食")])
def test_router_diet_inside_one_events_ask_still_filters(text, keyword):
    proposal = route(text)
    assert proposal.tool == "search_local_events" and not any(isinstance(n, SecondAsk) for n in proposal.notes)
    assert set(proposal.args["keyword"].split()) == set(keyword.split())


def test_webhook_second_ask_button_searches_the_shops(pinned_service, line_standin):
    messages = _send(pinned_service, line_standin, text_event("週末彰化市有活動嗎？順便推薦附近的素食店"))
    buttons = postbacks(messages)
    assert buttons["彰化市的店家"] == "places:area=彰化市"
    shops = all_text(_send(pinned_service, line_standin, postback_event(buttons["彰化市的店家"])))
    assert "John手作蔬食" in shops


def test_webhook_second_events_ask_button_keeps_its_dates(pinned_service, line_standin):
    messages = _send(pinned_service, line_standin, text_event("彰化市有素食店嗎？還有這週末有什麼活動"))
    data = postbacks(messages)["彰化市的活動"]
    assert data == "events:area=彰化市&date=weekend"
    events = all_text(_send(pinned_service, line_standin, postback_event(data)))
    assert "週末蔬食小農市集" in events and "親子繪本共讀午後" in events


# --- several shops compared on a diet ------------------------------------------------

def test_places_diet_listed_per_shop_from_the_catalog():
    assert diet_listed(["和米素食", "John手作蔬食"], "vegan") == [("和米素食", "not_recorded"), ("John手作蔬食", "listed")]
    assert diet_listed(["John手作蔬食", "沒有這家"], "lacto") == [("John手作蔬食", "listed")]
    assert diet_listed(["和米素食"], "vegetarian") == [("和米素食", "listed")]


def test_webhook_other_named_shop_is_a_button_that_finds_it(pinned_service, line_standin):
    messages = _send(pinned_service, line_standin, text_event("和米素食跟john手作 哪間有全素"))
    quick = [item["action"] for item in messages[-1]["quickReply"]["items"]]
    assert quick[0] == {"type": "message", "label": "John手作蔬食", "text": "John手作蔬食"}
    again = all_text(_send(pinned_service, line_standin, text_event(quick[0]["text"])))
    assert "彰化市華山路78號" in again


# --- no directory ---------------------------------------------------------------------

@pytest.mark.parametrize("text", ["請問彰化縣政府電話幾號", "花壇鄉公所在哪裡", "員林戶政事務所幾點開", "鹿港鎮清潔隊電話",
                                  "派出所的電話是多少", "彰化縣衛生所地址", "縣政府的官網是什麼"])
def test_router_directory_question_is_a_limit_not_a_shop_search(text):
    proposal = route(text)
    assert proposal.tool == "show_limits" and proposal.args["kinds"] == ["directory"]


@pytest.mark.parametrize("text, tool", [
    ("和米素食電話", "find_place"), ("花壇素食店電話", "search_local_places"),
    ("縣政府辦的活動有哪些", "search_local_events"), ("花壇的店家地址", "search_local_places"),
])
def test_router_directory_words_beside_a_shop_or_event_ask_still_search(text, tool):
    assert route(text).tool == tool


# --- 以後…都用 is a remember request ----------------------------------------------------

@pytest.mark.parametrize("text, diet", [
    ("以後找店都用蛋奶素就好", "ovo_lacto"), ("之後查餐廳一律全素", "vegan"), ("從現在開始都找奶素就好", "lacto"),
    ("預設用蔬食", "vegetarian"), ("設定成蛋奶素", "ovo_lacto"), ("以後搜尋都以全素為主", "vegan"),
    ("下次幫我直接找蛋奶素", "ovo_lacto"), ("下次都找全素", "vegan"), ("請把我的偏好設成全素", "vegan"),
    ("我的偏好是奶素", "lacto"), ("偏好改全素", "vegan"),
])
def test_memory_from_now_on_phrasing_is_a_remember_request(text, diet):
    request = read_memory_request(text)
    assert request is not None and (request.kind, request.dietary_type) == ("remember", diet)


@pytest.mark.parametrize("text", ["以後有活動都通知我", "以後找店不要用全素", "今天想吃素", "他以後都找全素",
                                  "以後不用幫我找全素了", "下次去花壇想吃素", "我的偏好是什麼"])
def test_memory_from_now_on_without_a_diet_or_negated_is_not_a_request(text):
    assert read_memory_request(text) is None


# --- a generic 素食 keeps a remembered finer type ------------------------------------

@pytest.mark.parametrize("remembered", ["vegan", "ovo_lacto", "lacto"])
def test_diet_origin_generic_vegetarian_keeps_a_finer_memory(remembered):
    diet = resolve_diet("vegetarian", PreferenceSnapshot(3, remembered), generic=True)
    assert (diet.dietary_type, diet.origin) == (remembered, "consented_memory")


@pytest.mark.parametrize("proposed, generic, expected", [
    ("vegetarian", False, ("vegetarian", "this_turn")),  # 素食就好: chosen on purpose
    ("vegan", True, ("vegan", "this_turn")),
    ("any", True, ("any", "this_turn")),
])
def test_diet_origin_stated_condition_still_wins(proposed, generic, expected):
    diet = resolve_diet(proposed, PreferenceSnapshot(3, "ovo_lacto"), generic=generic)
    assert (diet.dietary_type, diet.origin) == expected


@pytest.mark.parametrize("text, generic", [
    ("花壇有素食嗎", True), ("彰化市有蔬食店嗎", True), ("員林 吃素", True), ("花壇素食就好", False),
    ("花壇有素食嗎 不用全素", False), ("花壇 一般素食", False), ("花壇五辛素", False), ("花壇全素", False),
])
def test_router_generic_diet_note(text, generic):
    assert ("generic_diet" in route(text).notes) is generic


# --- someone else's diet is searched, never offered as the user's memory ------------

@pytest.mark.parametrize("text, other", [
    ("我媽媽吃全素 彰化市有店嗎", True), ("朋友說他吃蛋奶素，彰化市有推薦的店嗎", True), ("我老公吃奶素 彰化市哪裡可以吃", True),
    ("幫我爸找彰化市的全素店", True), ("阿嬤只吃素 花壇有店嗎", True),
    ("我吃全素 彰化市有店嗎", False), ("我跟我媽都吃全素 彰化市有店嗎", False), ("我們全家吃素 花壇有店嗎", False),
])
def test_router_diet_of_another_person_note(text, other):
    assert ("diet_of_other" in route(text).notes) is other


# --- asking for help --------------------------------------------------------------------

@pytest.mark.parametrize("text", ["我要找人幫忙", "有人可以幫我嗎", "我需要協助", "想請人幫忙處理門口的路燈", "幫幫我",
                                  "我想求助", "可以請人打電話給我嗎", "我想跟你們的人說話", "想要專人服務", "我要投訴",
                                  "路燈壞了", "家門口水溝堵住了", "花壇的路好多坑洞"])
def test_router_help_request_phrasing_is_handoff_info(text):
    assert route(text).tool == "handoff_info"


@pytest.mark.parametrize("text, tool", [("可以幫我查花壇的素食嗎", "search_local_places"),
                                        ("需要幫忙報名週末的活動", "search_local_events")])
def test_router_help_words_beside_a_search_still_search(text, tool):
    assert route(text).tool == tool


# --- extra: English holiday and day words --------------------------------------------------------

@pytest.mark.parametrize("text, value", [
    ("Xmas彰化市有啥活動", span(date(2026, 12, 25))), ("X'mas", span(date(2026, 12, 25))),
    ("x’mas 鹿港", span(date(2026, 12, 25))), ("CHRISTMAS", span(date(2026, 12, 25))),
    ("christmas eve", span(date(2026, 12, 24))), ("New Year's Eve", span(date(2026, 12, 31))),
    ("new year", span(date(2027, 1, 1))),
    ("Chinese New Year", (date(2027, 2, 4), date(2027, 2, 11))), ("CNY員林", (date(2027, 2, 4), date(2027, 2, 11))),
    ("valentine's day", span(date(2027, 2, 14))), ("mid-autumn festival", span(date(2026, 9, 25))),
    ("dragon boat", span(date(2026, 6, 19))),
    ("this weekend", (date(2026, 12, 5), date(2026, 12, 7))), ("tomorrow", span(date(2026, 12, 2))),
    ("tonight", span(date(2026, 12, 1))),
    ("元宵節", span(date(2027, 2, 20))), ("母親節", span(date(2027, 5, 9))), ("七夕", NOT_READ), ("重陽節", NOT_READ),
    ("寒假有活動嗎", NOT_READ), ("暑假活動", NOT_READ), ("easter活動", NOT_READ),
])
def test_dates_english_and_more_holiday_words(text, value):
    assert asked(text, TODAY) == value


@pytest.mark.parametrize("spec, day", [
    (Holiday("lantern"), date(2027, 2, 20)),        # lunar 1/15 of 2027: 春節 2027-02-06 + 14 days
    (Holiday("mothers_day"), date(2027, 5, 9)),     # the second Sunday of May 2027
    (MonthDay(12, 25), date(2026, 12, 25)),
])
def test_dates_computed_holidays_resolve_to_one_day(spec, day):
    assert spec.resolve(TODAY) == span(day)


def test_dates_lantern_is_fifteen_days_into_each_lunar_year():
    # 2026's 春節 began 2026-02-17 (the holidays package's Taiwan calendar): 元宵 was 2026-03-03
    assert Holiday("lantern").resolve(date(2026, 3, 1)) == (date(2026, 3, 3), date(2026, 3, 4))


# --- more of the same kinds --------------------------------------------------

@pytest.mark.parametrize("text", ["我好憂鬱", "心情不好 想找人聊聊", "壓力好大", "最近一直想哭", "好孤單 沒人陪我", "我快崩潰了",
                                  "心情不好", "最近心情很低落"])
def test_crisis_distress_gets_the_gentle_line_not_the_crisis_reply(text):
    assert route(text).args.get("kinds") == ["distress"]


@pytest.mark.parametrize("text", ["心情不好 不想活了", "好孤單 想去死", "壓力好大 想自殺", "我好絕望"])
def test_crisis_a_risk_word_beside_distress_is_the_crisis_reply(text):
    assert route(text).args.get("kinds", [None])[0] == "crisis"


@pytest.mark.parametrize("text, first, days", [
    ("下個月初有什麼活動", date(2027, 1, 1), 10), ("上個月底彰化市的活動", date(2026, 11, 21), 10),
    ("12月底有什麼活動", date(2026, 12, 21), 11), ("1月中旬鹿港", date(2027, 1, 11), 10),
    ("月底有活動嗎", date(2026, 12, 21), 11), ("年底有活動嗎", date(2026, 12, 1), 31),
])
def test_dates_part_of_a_month_is_that_third_of_it(text, first, days):
    assert asked(text, TODAY) == span(first, days)


@pytest.mark.parametrize("text, value", [("正月初一有活動嗎", (date(2027, 2, 4), date(2027, 2, 11))), ("上上個月底", NOT_READ),
                                         ("臘月底有活動嗎", NOT_READ)])
def test_dates_lunar_month_words_are_not_a_month_part(text, value):
    assert asked(text, TODAY) == value


@pytest.mark.parametrize("text", ["聖誕快樂", "Merry Christmas!", "新年快樂～", "恭喜發財", "Happy New Year", "中秋節快樂"])
def test_router_season_greeting_is_a_greeting_not_an_events_search(text):
    assert route(text).tool == "greeting"


def test_router_season_greeting_with_a_question_still_searches():
    proposal = route("聖誕快樂 彰化市有什麼活動")
    assert proposal.tool == "search_local_events" and proposal.args["date"].resolve(TODAY) == span(date(2026, 12, 25))


def test_router_someone_elses_plain_diet_is_not_filled_by_the_users_memory():
    notes = route("我媽說她想吃素 花壇有店嗎").notes
    assert Flag.DIET_OF_OTHER in notes and Flag.GENERIC_DIET not in notes


@pytest.mark.parametrize("text, area", [
    ("鹿港天后宮幾點開", "鹿港鎮"), ("彰化市人口多少", "彰化市"), ("員林有什麼景點", "員林市"), ("鹿港有沒有民宿", "鹿港鎮"),
    ("彰化市有加油站嗎", "彰化市"), ("花壇哪裡有便利商店", "花壇鄉"), ("員林有哪些廟", "員林市"), ("鹿港有飯店嗎", "鹿港鎮"),
])
def test_router_township_with_a_subject_local_has_no_data_on_is_not_a_shop_search(text, area):
    proposal = route(text)
    assert (proposal.tool, proposal.args, proposal.notes) == ("ask_search_kind", {"area": area, "no_data": True}, ())


@pytest.mark.parametrize("text", ["鹿港", "彰化市有什麼推薦的", "請問花壇有什麼", "花壇幾點開", "謝謝 花壇", "鹿港哪裡好",
                                  "員林晚上", "鹿港 ok", "花壇鄉？", "鹿港吃什麼"])
def test_router_township_with_only_question_words_still_searches_shops(text):
    assert route(text).tool == "search_local_places"


@pytest.mark.parametrize("text, kind", [("彰化縣長是誰", "directory"), ("花壇鄉長是誰", "directory"),
                                        ("哪裡可以換身分證", "directory"), ("彰化有什麼好玩的景點", None)])
def test_router_no_data_without_a_township_is_said_with_the_menu(text, kind):
    proposal = route(text)
    if kind:
        assert proposal.tool == "show_limits" and proposal.args["kinds"] == [kind]
    else:  # 好玩 is an event word: the events picker, not the shop picker
        assert proposal.args.get("kind") == "events"


def test_webhook_no_data_reply_says_so_and_offers_the_townships_searches(pinned_service, line_standin):
    messages = _send(pinned_service, line_standin, text_event("鹿港天后宮幾點開"))
    words = all_text(messages)
    assert LIMIT_WORDS["no_data"] in words and "蔬食店家 1 家" not in words
    assert set(postbacks(messages)) == {"鹿港鎮的活動", "鹿港鎮的店家"}


@pytest.mark.parametrize("text, day, keyword", [
    ("週日想帶孩子去玩 順便吃素", date(2026, 12, 6), "親子"),
    ("12/12鹿港？那邊有素食店嗎", date(2026, 12, 12), None),
])
def test_router_second_ask_beside_a_day_and_topic_without_an_event_word(text, day, keyword):
    proposal = route(text)
    assert proposal.tool == "search_local_events"
    assert (proposal.args["date"].resolve(TODAY), proposal.args["keyword"]) == (span(day), keyword)
    assert any(isinstance(note, SecondAsk) and isinstance(note.ask, PlacesSearch) for note in proposal.notes)


@pytest.mark.parametrize("text, diet", [("以後不用幫我找全素了", "any"), ("花壇不用幫我找全素", "any")])
def test_router_negated_diet_with_a_helper_is_not_that_diet(text, diet):
    assert route(text).args["dietary_type"] == diet


def test_router_asking_what_is_remembered_is_privacy_info():
    assert route("我的偏好是什麼").tool == "privacy_info"


def test_webhook_broad_diet_said_on_purpose_is_not_offered_over_a_finer_memory(pinned_service, line_standin):
    messages = _send(pinned_service, line_standin, text_event("以後都找全素，幫我記住"))
    assert "已經記住" in all_text(_send(pinned_service, line_standin, postback_event(postbacks(messages)["同意記住"])))
    words = all_text(_send(pinned_service, line_standin, text_event("找花壇的素食，不要全素")))
    assert "和米素食" in words and "依你說的條件：蔬食" in words and "記住：蔬食" not in words
    finer = all_text(_send(pinned_service, line_standin, text_event("彰化市 蛋奶素")))
    assert "記住：蛋奶素" in finer  # another finer type may still be offered (a correction through the card)


@pytest.mark.parametrize("text", ["the end it was fun", "happy new year", "weekend vegan"])
def test_crisis_english_everyday_words_are_not_a_crisis(text):
    assert not is_crisis(reading_form(text))
