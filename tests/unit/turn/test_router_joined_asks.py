"""Joined asks (shared.turn.router and shared.turn.dates, offline): calendar-named days, two dates joined,
topics joined as alternatives, every diet condition kept, a search beside a limit, cancel help, memory
complaints and the forget offer.

Examples of each kind are also cases in tests/eval/cases/ (run through the webhook use case by
test_eval_cases.py and by ``make eval``). This file checks the rules with more inputs, what must *not*
change (negatives where a rule could over-fire), and the taps a single case cannot show.
Clock: 2026-12-01 10:00 Asia/Taipei, a Tuesday.
"""
from __future__ import annotations

from datetime import date, datetime, timezone
from urllib.parse import parse_qs

import pytest

from shared.memory.phrases import read_memory_request
from shared.turn.ask import PrivacyTopic
from shared.turn.datespec import DateSpec
from shared.turn.router import read_diet, route
from tests.conftest import FixedClock, all_text, postback_event, reply_messages, text_event
from tests.memory_support import postbacks, webhook_with_memory
from tests.unit.turn.date_support import NOT_READ, asked, span

PINNED = datetime(2026, 12, 1, 2, 0, tzinfo=timezone.utc)  # 2026-12-01 10:00 Asia/Taipei
TODAY = date(2026, 12, 1)


@pytest.fixture
def service(base_env):
    return webhook_with_memory(base_env, FixedClock(PINNED))


def _range(text: str) -> tuple[date, date] | str | None:
    return asked(text, TODAY)


def _query(data: str) -> dict[str, str]:
    return {key: values[0] for key, values in parse_qs(data.partition(":")[2]).items()}


# --- a named day is read from the calendar, or unreadable --------------------------------

@pytest.mark.parametrize("text, start", [
    ("行憲紀念日員林有沒有活動", date(2026, 12, 25)), ("植樹節有什麼活動", date(2027, 3, 12)),
    ("婦女節有活動嗎", date(2027, 3, 8)), ("開國紀念日花壇有活動嗎", date(2027, 1, 1)),
    ("軍人節", date(2026, 9, 3)), ("佛陀誕辰紀念日", date(2027, 5, 13)), ("國父誕辰紀念日", date(2026, 11, 12)),
    ("青年節鹿港", date(2027, 3, 29)), ("行憲日", date(2026, 12, 25)),
])
def test_dates_calendar_named_day_is_read(text, start):
    assert _range(text)[0] == start


@pytest.mark.parametrize("text", ["護士節鹿港有活動嗎", "結婚紀念日", "世界地球日有活動嗎", "七夕情人節", "誕辰紀念日"])
def test_dates_named_day_not_in_the_calendar_is_unreadable(text):
    assert _range(text) == NOT_READ


@pytest.mark.parametrize("text", ["音樂節有什麼", "蔬食節有活動嗎", "這個季節", "有什麼節目", "節慶活動", "茉莉花節"])
def test_dates_festival_and_other_jie_words_are_no_date(text):
    assert _range(text) is None


def test_dates_valentines_day_alone_is_still_february():
    assert _range("情人節有活動嗎") == span(date(2027, 2, 14))


# --- two dates joined are both read --------------------------------------------------------

@pytest.mark.parametrize("text, expected", [
    ("後天跟大後天 花壇有活動嗎", (date(2026, 12, 3), date(2026, 12, 5))),
    ("明天或週六 彰化市", (date(2026, 12, 2), date(2026, 12, 6))),
    ("這週末跟下週末鹿港", (date(2026, 12, 5), date(2026, 12, 14))),
    ("聖誕節跟跨年", (date(2026, 12, 25), date(2027, 1, 1))),
    ("1月和2月有活動嗎", (date(2027, 1, 1), date(2027, 3, 1))),
    ("大後天", (date(2026, 12, 4), date(2026, 12, 5))), ("大前天", (date(2026, 11, 28), date(2026, 11, 29))),
])
def test_dates_two_dates_joined_cover_both(text, expected):
    assert _range(text) == expected


@pytest.mark.parametrize("text, value", [
    ("明天和美有活動嗎", span(date(2026, 12, 2))),  # 和美 is a township, not 和 + a date
    ("週六到鹿港走走", span(date(2026, 12, 5))), ("我明天跟朋友去鹿港", span(date(2026, 12, 2))),
    ("12/5、12/6", (date(2026, 12, 5), date(2026, 12, 7))),
])
def test_dates_a_joiner_without_a_second_date_reads_one(text, value):
    assert _range(text) == value


def test_dates_pair_with_an_unread_side_is_unreadable():
    assert _range("冬至跟聖誕節有活動嗎") == NOT_READ


# --- topics joined by 跟 / 或 are either ----------------------------------------------------

@pytest.mark.parametrize("text, keyword", [
    ("12/5、12/6 彰化市 市集 跟 親子 活動", "市集|親子"), ("有沒有市集或親子活動", "市集|親子"),
    ("員林有講座或展覽嗎", "講座|展覽"), ("市集和手作活動", "市集|手作"),
])
def test_router_topics_joined_are_alternatives(text, keyword):
    assert route(text).args["keyword"] == keyword


@pytest.mark.parametrize("text, keyword", [
    ("長輩跟小孩都可以參加的活動", "親子 長輩"), ("親子 市集", "市集 親子"), ("有布袋戲表演嗎", "表演 戲劇"),
])
def test_router_topics_not_joined_by_or_stay_and(text, keyword):
    assert route(text).args["keyword"] == keyword


def test_events_search_alternatives_match_either():
    from shared.events.search import search_local_events

    found = search_local_events("2026-12-05/2026-12-07", "彰化市", "市集|親子", now=PINNED)
    assert {event["id"] for event in found["events"]} == {"demo-ev-003", "demo-ev-004"}
    both = search_local_events("2026-12-05/2026-12-07", "彰化市", "市集 親子", now=PINNED)
    assert both["status"] == "no_match"


# --- every diet condition is applied or named ------------------------------------------------

@pytest.mark.parametrize("text, expected", [
    ("我吃鍋邊素 不吃蔥蒜 花壇那邊有沒有", ("vegetarian", "鍋邊素、不吃蔥蒜")),
    ("素食 不喝牛奶", ("vegetarian", "不喝牛奶")), ("吃素 不吃蛋也不喝奶", ("vegan", None)),
    ("素食 不吃奶蛋", ("vegan", None)), ("全素 不喝牛奶", ("vegan", None)),
    ("花壇素食 不吃辣", ("vegetarian", "不吃辣")), ("我對花生過敏 鹿港有素食嗎", ("vegetarian", "對花生過敏")),
    ("鍋邊素 不吃蛋", ("lacto", "鍋邊素")), ("我阿母吃早齋 花壇有素食店嗎", ("vegetarian", "早齋")),
])
def test_read_diet_every_condition_is_kept(text, expected):
    assert read_diet(text) == expected


@pytest.mark.parametrize("text, expected", [
    ("奶蛋素", ("ovo_lacto", None)), ("不吃蛋素", ("lacto", None)), ("我不吃奶素", ("any", None)),
    ("彰化市有蔥油餅嗎", (None, None)), ("不吃辣 花壇有什麼吃的", (None, None)), ("花壇有素食嗎", ("vegetarian", None)),
])
def test_read_diet_conditions_do_not_over_fire(text, expected):
    assert read_diet(text) == expected


def test_webhook_two_unrecorded_conditions_are_both_named(service, line_standin):
    words = all_text(reply_messages(service, line_standin, text_event("我吃鍋邊素 不吃蔥蒜 花壇那邊有沒有")))
    assert "沒有「鍋邊素」" in words and "「不吃蔥蒜」" in words and "依你說的條件" not in words


# --- every condition survives a tap ------------------------------------------------------------

def test_webhook_picker_then_next_township_keeps_date_and_topic(service, line_standin):
    picker = postbacks(reply_messages(service, line_standin, text_event("這個月彰化有沒有帶小朋友去的活動？")))
    assert _query(picker["彰化市"])["keyword"] == "親子"
    result = reply_messages(service, line_standin, postback_event(picker["彰化市"]))
    assert "親子繪本共讀午後" in all_text(result) and "週末蔬食小農市集" not in all_text(result)
    nxt = postbacks(result)
    for label in ("員林市", "全部鄉鎮"):
        assert _query(nxt[label]) | {"area": None, "scope": None} == {
            "area": None, "scope": None, "date": "2026-12-01/2027-01-01", "keyword": "親子"}


def test_webhook_unreadable_date_choices_keep_the_topic(service, line_standin):
    choices = postbacks(reply_messages(service, line_standin, text_event("冬至 親子活動 彰化市")))
    query = _query(choices["這週末"])
    assert query.pop("date") and query == {"area": "彰化市", "keyword": "親子"}
    assert DateSpec.parse(_query(choices["這週末"])["date"]).resolve(TODAY) == span(date(2026, 12, 5), 2)


def test_webhook_places_picker_keeps_the_unrecorded_diet(service, line_standin):
    picker = postbacks(reply_messages(service, line_standin, text_event("我吃鍋邊素 不吃蔥蒜")))
    assert _query(picker["花壇鄉"]) == {"area": "花壇鄉", "diet": "vegetarian", "said": "鍋邊素、不吃蔥蒜"}
    result = reply_messages(service, line_standin, postback_event(picker["花壇鄉"]))
    words = all_text(result)
    assert "沒有「鍋邊素」" in words and "依你說的條件" not in words and "記住：" not in words
    assert _query(postbacks(result)["彰化市"])["said"] == "鍋邊素、不吃蔥蒜"


def test_webhook_places_postback_with_forged_said_quotes_nothing(service, line_standin):
    words = all_text(reply_messages(service, line_standin, postback_event(
        "places:area=花壇鄉&diet=vegetarian&said=%E9%9A%A8%E4%BE%BF%E5%AF%AB")))  # 隨便寫
    assert "隨便寫" not in words and "依你說的條件：蔬食" in words


# --- a limit beside an answerable ask ---------------------------------------------------------

@pytest.mark.parametrize("text, tool, area, limit", [
    ("鹿港有素食店嗎？那邊停車方便嗎", "search_local_places", "鹿港鎮", "parking"),
    ("去鹿港要坐什麼車？那邊有素食嗎", "search_local_places", "鹿港鎮", "transport"),
    ("12/31晚上彰化市有跨年晚會嗎 要怎麼去比較好停車", "search_local_events", "彰化市", "parking"),
    ("週末鹿港有活動嗎 有接駁車嗎", "search_local_events", "鹿港鎮", "shuttle"),
    ("我糖尿病，花壇有素食嗎", "search_local_places", "花壇鄉", "medical"),
])
def test_router_search_beside_a_limit_runs_and_says_the_limit(text, tool, area, limit):
    proposal = route(text)
    assert (proposal.tool, proposal.args["area"]) == (tool, area) and limit in proposal.notes


@pytest.mark.parametrize("text", [
    "彰化到鹿港的公車", "我頭很痛要吃什麼藥", "員林客運幾點有車", "鹿港 停車", "彰化市哪裡好停車",
    "禮拜六去花壇 會不會很冷 要帶外套嗎", "我頭很痛 要吃什麼藥",
])
def test_router_only_limits_or_context_stay_a_limits_reply(text):
    assert route(text).tool == "show_limits"


def test_webhook_shop_ask_beside_parking_lists_and_says_parking(service, line_standin):
    words = all_text(reply_messages(service, line_standin, text_event("花壇有素食嗎 附近好停車嗎")))
    assert "和米素食" in words and "停車場" in words


# --- cancel phrasing ------------------------------------------------------------------------

@pytest.mark.parametrize("text", ["算了 那個單幫我撤掉", "取消那個單", "服務單不要了", "我的申請撤回", "那張單可以作廢嗎",
                                  "刪掉我的服務單"])
def test_router_cancel_phrasing_gets_cancel_help(text):
    assert route(text).tool == "handoff_cancel_help"


@pytest.mark.parametrize("text, tool", [
    ("我不是要取消服務單，只是想看進度", "handoff_status"), ("菜單", "show_local_help"), ("那個單位", "show_local_help"),
    ("名單", "show_local_help"), ("取消訂位", "show_limits"),
])
def test_router_cancel_words_elsewhere_are_not_cancel(text, tool):
    assert route(text).tool == tool


# --- a complaint about 記住 is no request -------------------------------------------------------

@pytest.mark.parametrize("text", ["我又沒說要你記住 幹嘛一直問", "誰叫你記住的", "我沒有要你記啦", "不是要你幫我記住吃素"])
def test_memory_complaint_is_no_request_and_is_acknowledged(text):
    assert read_memory_request(text) is None
    proposal = route(text)
    assert proposal.tool == "ack" and "not_saved" in proposal.notes


@pytest.mark.parametrize("text, kind", [("幫我記住我吃全素", "remember"), ("以後都找蛋奶素，幫我記住", "remember")])
def test_memory_requests_still_read(text, kind):
    request = read_memory_request(text)
    assert request is not None and request.kind == kind


def test_memory_i_recall_is_no_request():
    assert read_memory_request("我記得那個素食店在花壇") is None


def test_webhook_complaint_gets_no_card_and_no_remember_picker(service, line_standin):
    messages = reply_messages(service, line_standin, text_event("我又沒說要你記住 幹嘛一直問"))
    words = all_text(messages)
    assert "不會幫你記" in words and "同意記住" not in words and "想記住哪一種" not in words
    assert "記住：" not in words


def test_webhook_not_to_be_remembered_beside_a_search_offers_no_remember_button(service, line_standin):
    messages = reply_messages(service, line_standin, text_event("我吃素但是不用記起來 花壇有嗎"))
    assert "和米素食" in all_text(messages) and "記住：" not in all_text(messages)


# --- forget phrasing -----------------------------------------------------------------------------

@pytest.mark.parametrize("text", ["以後不要再用我記的那個素別了", "別再套用我存的飲食設定", "我記的那個素別不要用了",
                                  "不要再套我的素食偏好了"])
def test_router_stop_using_my_diet_gets_the_forget_offer(text):
    proposal = route(text)
    assert proposal.tool == "privacy_info" and proposal.args["topic"] == PrivacyTopic.FORGET_MY_DIET


@pytest.mark.parametrize("text", ["不要再用塑膠袋", "我記得那個素食店在花壇", "不要再用全素找了 改蔬食"])
def test_router_forget_does_not_over_fire(text):
    assert route(text).args.get("topic") != PrivacyTopic.FORGET_MY_DIET


def test_webhook_two_dates_apart_leave_out_the_days_between(service, line_standin):
    messages = reply_messages(service, line_standin, text_event("這週六跟下週六彰化市有活動嗎"))
    words = all_text(messages)
    assert "週末蔬食小農市集" in words and "親子繪本共讀午後" not in words  # 12/5 kept, 12/6 between left out
    assert "中間日子的活動沒有列出" in words
    assert _query(postbacks(messages)["員林市"])["date"] == "both:this_weekday:5|next_saturday"
