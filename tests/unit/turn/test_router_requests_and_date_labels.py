"""The request hook and date labels (offline router): a create sentence gives the request text, who goes
is no topic, and two dates apart are named apart.

Examples are also cases in tests/eval/cases/ (run through the webhook use case by
test_eval_cases.py and by ``make eval``). This file checks the rules with more inputs and the negatives
where a rule could over-fire. Clock: 2026-12-01 10:00 Asia/Taipei, a Tuesday.
"""
from __future__ import annotations

from datetime import date, datetime, timezone

import pytest

from shared.handoff import records as handoff_records
from shared.handoff.drafts import request_text_of
from shared.turn.router import route
from tests.conftest import FixedClock, all_text, reply_messages, text_event
from tests.memory_support import webhook_with_memory
from tests.unit.turn.date_support import span

PINNED = datetime(2026, 12, 1, 2, 0, tzinfo=timezone.utc)  # 2026-12-01 10:00 Asia/Taipei


@pytest.fixture
def service(base_env):
    return webhook_with_memory(base_env, FixedClock(PINNED))


# -- a create sentence is a request, never a status question ------------------------------------

@pytest.mark.parametrize("text, request_text", [
    ("幫我建立服務單：路燈壞了", "路燈壞了"),  # the reported example
    ("幫我開一張單：家門口的水溝堵住了", "家門口的水溝堵住了"),
    ("我要建單 公園的路燈不亮", "公園的路燈不亮"),
    ("幫我登記：社區活動中心的冷氣壞了", "社區活動中心的冷氣壞了"),
    ("請幫我填單：巷口的號誌不亮", "巷口的號誌不亮"),
    ("我需要開單，路燈壞了", "路燈壞了"),
    ("麻煩你幫我新增一筆需求：想借輪椅", "想借輪椅"),
    ("報修：路燈壞了", "路燈壞了"),
    ("帮我建立服务单：路灯坏了", "路灯坏了"),  # Simplified, kept as typed
    ("我要建單", ""),  # no text: the caller shows the 新需求 form
    ("幫我開一張單", ""),
])
def test_request_create_sentence_gives_the_request_text(text, request_text):
    assert request_text_of(text) == request_text
    assert route(text).tool == "handoff_info"  # never handoff_status


@pytest.mark.parametrize("text, tool", [
    ("我的服務單呢", "handoff_status"),
    ("單子現在怎樣了", "handoff_status"),
    ("我上次開的單呢", "handoff_status"),
    ("幫我開的單處理了沒", "handoff_status"),
    ("幫我登記了嗎", "handoff_status"),
    ("我建立的服務單有人看了嗎", "handoff_status"),
    ("幫我取消服務單", "handoff_cancel_help"),
    ("服務單不要了", "handoff_cancel_help"),
])
def test_request_status_and_cancel_questions_are_no_request(text, tool):
    assert request_text_of(text) is None
    assert route(text).tool == tool


@pytest.mark.parametrize("text", ["我想開單車去鹿港", "我要申請單車", "我要填單據", "我要登記參加週六的走讀",
                                  "我要報名週六的活動", "開單位的門要找誰", "鹿港有素食嗎", "我要留言給你們"])
def test_request_other_sentences_make_no_request(text):
    assert request_text_of(text) is None


def test_request_card_shows_the_text_and_stores_only_a_draft(service, line_standin):
    messages = reply_messages(service, line_standin, text_event("幫我建立服務單：路燈壞了"))
    words = all_text(messages)
    assert "確認送出" in words and "路燈壞了" in words and "目前查不到" not in words
    [draft] = service.store.query("handoff_drafts")
    assert draft["text"] == "路燈壞了"
    assert service.store.query(handoff_records.REQUESTS) == []  # nothing created before 確認送出


def test_request_bare_create_shows_the_form(service, line_standin):
    words = all_text(reply_messages(service, line_standin, text_event("我要建單")))
    assert "新需求：" in words and "目前查不到" not in words and "確認送出" not in words
    assert service.store.query("handoff_drafts") == []


# -- who goes is no event topic ---------------------------------------------------------------

@pytest.mark.parametrize("text, days", [
    ("這禮拜六日有啥活動 阿嬤想帶孫子去", (date(2026, 12, 5), date(2026, 12, 7))),  # the reported example
    ("週末有活動嗎 想帶爸媽去", (date(2026, 12, 5), date(2026, 12, 7))),
    ("週六有什麼活動 帶小孩去玩", span(date(2026, 12, 5))),
    ("這週末有活動嗎 阿公要去", (date(2026, 12, 5), date(2026, 12, 7))),
    ("週六有活動嗎 我要帶阿嬤一起去", span(date(2026, 12, 5))),
    ("週末有什麼活動 我想陪我媽出去走走", (date(2026, 12, 5), date(2026, 12, 7))),
    ("明天有活動嗎 孫子也要去", span(date(2026, 12, 2))),
])
def test_router_who_goes_is_no_topic(text, days):
    proposal = route(text)
    assert proposal.tool == "search_local_events"
    assert proposal.args["date"].resolve(PINNED.date()) == days and proposal.args["keyword"] is None


@pytest.mark.parametrize("text, keyword", [
    ("有長輩的活動嗎", "長輩"),
    ("親子活動", "親子"),
    ("週六有親子活動嗎 想帶孫子去", "親子"),
    ("週六有適合小孩的活動嗎", "親子"),
    ("週末有長輩可以參加的活動嗎", "長輩"),
    ("有給長輩去的活動嗎", "長輩"),
    ("鹿港週六有市集嗎 阿嬤想去", "市集"),
    ("老人家可以去嗎", "長輩"),  # a suitability question keeps its reading (test_router_details.py)
    # said before the events question, the party may describe the event asked for: as before
    ("這個月彰化有沒有帶小朋友去的活動？", "親子"),
    ("阿嬤想去走走 鹿港這個月有什麼活動", "長輩"),
    ("週日想帶孩子去玩 順便吃素", "親子"),  # no event word: the people are the events cue
])
def test_router_a_topic_asked_still_filters(text, keyword):
    assert route(text).args["keyword"] == keyword


# -- two dates apart are named apart, in the match and the no-match reply ----------------------

@pytest.mark.parametrize("text, label, not_label", [
    ("明天或週六田尾有活動嗎", "2026/12/2（三）、2026/12/5（六）", "2026/12/2（三）～2026/12/5（六）"),  # no match
    ("明天或週六有活動嗎", "2026/12/2（三）、2026/12/5（六）", "2026/12/2（三）～2026/12/5（六）"),  # a match
    ("週三跟週日鹿港有什麼活動", "2026/12/2（三）、2026/12/6（日）", "2026/12/2（三）～2026/12/6（日）"),
    ("明天和這週末有活動嗎", "2026/12/2（三）、2026/12/5（六）～2026/12/6（日）", "2026/12/2（三）～2026/12/6（日）"),
])
def test_date_labels_two_dates_apart_are_named_apart(service, line_standin, text, label, not_label):
    words = all_text(reply_messages(service, line_standin, text_event(text)))
    assert label in words and not_label not in words


@pytest.mark.parametrize("text, label", [
    ("後天跟大後天有活動嗎", "2026/12/3（四）～2026/12/4（五）"),  # touching: one range, as asked
    ("這週末田尾有活動嗎", "2026/12/5（六）～2026/12/6（日）"),
    ("週六有活動嗎", "2026/12/5（六）"),
])
def test_date_labels_one_range_keeps_its_label(service, line_standin, text, label):
    words = all_text(reply_messages(service, line_standin, text_event(text)))
    assert label in words and "、2026/" not in words and "中間日子" not in words
