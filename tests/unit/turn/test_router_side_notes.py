"""Side notes of the router (shared.turn.router, offline): side limits, weather, the not-saved note,
phone questions, status phrasings, title hints, the county as no second place, kin diets, shop kinds,
events beside a shop, no-match replies, whole-county words, taxi, privacy, distance and cancel phrasings.

Examples of each kind are also cases in tests/eval/cases/; this file checks the rules where they
could over-fire and the taps a single case cannot show. Clock: 2026-12-01 10:00 Asia/Taipei, a Tuesday.
"""
from __future__ import annotations

from datetime import datetime, timezone
from urllib.parse import parse_qs

import pytest

from shared.turn.ask import Limit, PrivacyTopic, SecondAsk, TitleHint, UnrecordedKind
from shared.turn.router import route
from tests.conftest import FixedClock, all_text, postback_event, reply_messages, text_event
from tests.memory_support import postbacks, webhook_with_memory

PINNED = datetime(2026, 12, 1, 2, 0, tzinfo=timezone.utc)  # 2026-12-01 10:00 Asia/Taipei


@pytest.fixture
def service(base_env):
    return webhook_with_memory(base_env, FixedClock(PINNED))


def _query(data: str) -> dict[str, str]:
    return {key: values[0] for key, values in parse_qs(data.partition(":")[2]).items()}


# --- side limits: pets (3), what to bring (8), distance (minor) ----------------------------------------

@pytest.mark.parametrize("text, note", [
    ("花壇和米素食禮拜一有開嗎 可以帶狗嗎", "no_pets"), ("週末鹿港的活動可以帶狗去嗎", "no_pets"),
    ("冬季蔬果市集要帶什麼 幾點到比較好", "no_bring"), ("寫春聯的活動要自己帶毛筆嗎", "no_bring"),
    ("溪湖有素食嗎 最近的是哪間", "no_distance"), ("彰化市哪間素食離車站最近", "no_distance"),
])
def test_router_side_limit_is_noted(text, note):
    assert note in route(text).notes


@pytest.mark.parametrize("text", ["帶小朋友去的活動", "最近有什麼活動", "週末帶阿嬤去走走 有什麼活動", "花壇有素食嗎"])
def test_router_side_limits_do_not_over_fire(text):
    assert not {"no_pets", "no_bring", "no_distance"} & set(route(text).notes)


def test_router_coat_is_the_weather_not_what_to_bring():
    assert route("要帶外套嗎").args["kinds"] == ["weather"]


# --- weather said without a weather noun (4) --------------------------------------------------------------

@pytest.mark.parametrize("text", ["禮拜六去花壇 會不會很冷 要帶外套嗎", "週末彰化市很冷嗎", "鹿港明天幾度"])
def test_router_weather_phrasing_is_the_weather_limit(text):
    proposal = route(text)
    assert proposal.tool == "show_limits" and proposal.args["kinds"] == ["weather"]


# --- 不用記 beside a search (5) ---------------------------------------------------------------------------

@pytest.mark.parametrize("text", ["花壇有素食嗎", "以後都找全素 彰化市有嗎"])
def test_router_a_search_without_a_refusal_has_no_not_saved_note(text):
    assert "not_saved" not in route(text).notes


# --- privacy (6, 15) and status (7) -----------------------------------------------------------------------

@pytest.mark.parametrize("text, tool", [
    ("彰化縣政府電話幾號", "show_limits"), ("和米素食電話", "find_place"), ("你們的電話幾號", "show_limits"),
])
def test_router_phone_questions_that_are_not_about_sharing(text, tool):
    proposal = route(text)
    assert proposal.tool == tool and proposal.args.get("topic") != PrivacyTopic.WHO_SEES_MY_DATA


@pytest.mark.parametrize("text, tool", [
    ("我想報名的那個活動", "search_local_events"), ("有人可以幫我嗎", "handoff_info"), ("我們報名的人多嗎", "search_local_events"),
])
def test_router_status_phrasing_does_not_over_fire(text, tool):
    assert route(text).tool == tool


# --- a title said before the kind (8) -----------------------------------------------------------------------

@pytest.mark.parametrize("text, hint", [("冬季蔬果市集要帶什麼", "冬季蔬果"), ("八卦山健走還有沒有", "八卦山")])
def test_router_title_hint_is_noted(text, hint):
    assert TitleHint(hint) in route(text).notes


@pytest.mark.parametrize("text", ["彰化市市集", "週末市集", "有什麼市集", "假日市集", "花壇的市集", "蔬食市集"])
def test_router_no_title_hint_from_places_dates_or_fillers(text):
    assert not any(isinstance(note, TitleHint) for note in route(text).notes)


def test_webhook_title_hint_narrows_and_next_steps_keep_the_users_keyword(service, line_standin):
    messages = reply_messages(service, line_standin, text_event("冬季蔬果市集要帶什麼 幾點到比較好"))
    words = all_text(messages)
    assert "冬季蔬果與手作市集" in words and "週末蔬食小農市集" not in words
    assert _query(postbacks(messages)["彰化市"]) == {"area": "彰化市", "keyword": "市集"}


def test_webhook_ended_event_is_named_as_ended_never_listed_as_coming(service, line_standin):
    words = all_text(reply_messages(service, line_standin, text_event("八卦山健走還有沒有")))
    assert "八卦山步道晨間健走（2026/11/22，已結束）" in words and "沒有找到" in words


# --- a bare 彰化 beside a township (9) ----------------------------------------------------------------------

@pytest.mark.parametrize("text", ["彰化花壇有素食嗎", "彰化縣花壇有素食嗎", "彰化的員林有活動嗎", "彰化市有素食嗎", "花壇有素食嗎",
                                  "我住彰化 想找花壇的素食", "我是彰化人 員林有活動嗎"])
def test_router_changhua_as_the_county_or_absent_is_not_a_second_place(text):
    assert "changhua_as_city" not in route(text).notes


# --- someone else's diet in Taiwanese kin words (10) ----------------------------------------------------------

@pytest.mark.parametrize("text", ["我阿母吃早齋 花壇有素食店嗎", "阿爸吃全素 彰化市有店嗎", "我阿嬸吃奶素 花壇有嗎"])
def test_router_taiwanese_kin_diet_is_someone_elses(text):
    assert "diet_of_other" in route(text).notes


@pytest.mark.parametrize("text", ["我吃早齋 花壇有素食店嗎", "我跟阿母都吃素 花壇有嗎"])
def test_router_own_diet_is_not_someone_elses(text):
    assert "diet_of_other" not in route(text).notes


# --- a kind of restaurant the catalog does not record (12) ----------------------------------------------------

@pytest.mark.parametrize("text", ["花壇有素食嗎", "彰化市有什麼素食餐廳", "彰化市有便利商店嗎"])
def test_router_no_shop_kind_note_without_a_kind(text):
    assert not any(isinstance(note, UnrecordedKind) for note in route(text).notes)


# --- an events ask beside a named shop (14) -----------------------------------------------------------------

def test_webhook_events_ask_beside_a_shop_is_offered_with_its_date(service, line_standin):
    messages = reply_messages(service, line_standin, text_event("和米禮拜天有開嗎？順便問花壇這禮拜天有活動嗎"))
    assert "活動請點下方「花壇鄉的活動」" in all_text(messages)
    again = reply_messages(service, line_standin, postback_event(postbacks(messages)["花壇鄉的活動"]))
    assert "花壇鄉，2026/12/6（日）" in all_text(again)


@pytest.mark.parametrize("text", ["和米素食有全素嗎", "john手作蔬食電話多少", "和米素食幾點開"])
def test_router_a_shop_question_alone_has_no_events_note(text):
    assert not any(isinstance(note, SecondAsk) for note in route(text).notes)


# --- minors ---------------------------------------------------------------------------------------------------

def test_webhook_no_match_other_townships_keep_the_date(service, line_standin):
    messages = reply_messages(service, line_standin, text_event("阿伯想問下禮拜三員林有啥活動沒"))
    assert _query(postbacks(messages)["彰化市"]) == {"area": "彰化市", "date": "2026-12-09"}


def test_webhook_no_match_where_there_are_no_events_offers_no_wider_search(service, line_standin):
    messages = reply_messages(service, line_standin, text_event("後天和美有活動嗎"))
    assert "沒有和美鎮的活動" in all_text(messages) and "不限日期" not in postbacks(messages)


@pytest.mark.parametrize("text", ["下禮拜有什麼活動 全彰化都可以", "整個彰化這週末有活動嗎"])
def test_router_whole_county_words_search_every_township(text):
    proposal = route(text)
    assert proposal.tool == "search_local_events" and proposal.args["area"] is None


def test_router_taxi_is_its_own_limit_and_bus_stays_transport():
    assert route("可以幫我叫一台計程車到和米素食嗎").notes == ("taxi",)
    assert route("員林客運幾點有車").args["kinds"] == ["transport"]


# --- more phrasings of the same kinds ----------------------------------------------------

@pytest.mark.parametrize("text, tool, note", [
    ("你們有我的電話嗎", "privacy_info", PrivacyTopic.WHO_SEES_MY_DATA),
    ("我的電話你們有嗎", "privacy_info", PrivacyTopic.WHO_SEES_MY_DATA),
    ("你們會不會賣我的資料", "privacy_info", PrivacyTopic.WHO_SEES_MY_DATA),
    ("最近的素食店 彰化市", "search_local_places", Limit.DISTANCE),
])
def test_router_more_privacy_and_distance_phrasings(text, tool, note):
    proposal = route(text)
    assert proposal.tool == tool and note in proposal.notes + (proposal.args.get("topic"),)


@pytest.mark.parametrize("text", ["我要撤銷", "幫我把服務單刪了"])
def test_router_more_cancel_phrasings(text):
    assert route(text).tool == "handoff_cancel_help"


def test_memory_removing_the_remembered_diet_is_no_remember_request():
    from shared.memory.phrases import read_memory_request

    assert read_memory_request("把記住的偏好拿掉") is None
    assert route("把記住的偏好拿掉").args == {"topic": PrivacyTopic.FORGET_MY_DIET}
