"""Newcomer trial 7 (offline router and the request hook): F6 a create sentence, F2 who goes is no
topic, F10 two dates apart are named apart.

The trial's examples and our variants are cases in tests/eval/cases.json (``kind`` ``trial7-N``, run
through the webhook use case by test_eval_cases.py and by ``make eval``). This file checks the rules
with more inputs and the negatives where a rule could over-fire.
Clock: 2026-12-01 10:00 Asia/Taipei, a Tuesday.
"""
from __future__ import annotations

from datetime import datetime, timezone

import pytest

from shared.handoff import records as handoff_records
from shared.handoff.drafts import request_text_of
from shared.turn.router import route
from tests.conftest import FixedClock, all_text, reply_messages, text_event
from tests.memory_support import webhook_with_memory

PINNED = datetime(2026, 12, 1, 2, 0, tzinfo=timezone.utc)  # 2026-12-01 10:00 Asia/Taipei


@pytest.fixture
def service(base_env):
    return webhook_with_memory(base_env, FixedClock(PINNED))


# -- F6: a create sentence is a request, never a status question ------------------------------------

@pytest.mark.parametrize("text, request_text", [
    ("幫我建立服務單：路燈壞了", "路燈壞了"),  # the trial's example
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
def test_trial7_f6_create_sentence_gives_the_request_text(text, request_text):
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
def test_trial7_f6_status_and_cancel_questions_are_no_request(text, tool):
    assert request_text_of(text) is None
    assert route(text).tool == tool


@pytest.mark.parametrize("text", ["我想開單車去鹿港", "我要申請單車", "我要填單據", "我要登記參加週六的走讀",
                                  "我要報名週六的活動", "開單位的門要找誰", "鹿港有素食嗎", "我要留言給你們"])
def test_trial7_f6_other_sentences_make_no_request(text):
    assert request_text_of(text) is None


def test_trial7_f6_the_card_shows_the_text_and_stores_only_a_draft(service, line_standin):
    messages = reply_messages(service, line_standin, text_event("幫我建立服務單：路燈壞了"))
    words = all_text(messages)
    assert "確認送出" in words and "路燈壞了" in words and "目前查不到" not in words
    [draft] = service.store.query("handoff_drafts")
    assert draft["text"] == "路燈壞了"
    assert service.store.query(handoff_records.REQUESTS) == []  # nothing created before 確認送出


def test_trial7_f6_bare_create_shows_the_form(service, line_standin):
    words = all_text(reply_messages(service, line_standin, text_event("我要建單")))
    assert "新需求：" in words and "目前查不到" not in words and "確認送出" not in words
    assert service.store.query("handoff_drafts") == []
