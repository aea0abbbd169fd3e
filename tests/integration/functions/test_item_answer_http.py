"""Items by position over real HTTP (shared.turn.item_answer): signed bodies to one functions-framework
webhook process (its clock pinned to Tuesday 2026-12-01 10:00 Asia/Taipei by pinned_clock_webhook.py),
on the repository's demo events and places, the replies read from the LINE stand-in. A search lists
items; the next message names one by its position or a word and gets that item's own record."""
from __future__ import annotations

import pytest

from tests.integration.functions.pinned_webhook_support import pinned_webhook_process, say_over_http

#: One resident's turns each: (what is sent, what the reply must say, what it must not say).
CONVERSATIONS = {
    "events": (
        ("彰化市這週末有什麼活動", ("週末蔬食小農市集", "親子繪本共讀午後"), ()),
        ("第一個在哪裡集合", ("第 1 個：「週末蔬食小農市集」", "集合地點：市集服務台", "示範資料"), ("看不太懂",)),
        ("第二個在哪裡集合", ("第 2 個：「親子繪本共讀午後」", "活動資料沒有記錄集合地點"), ()),
        ("那個市集幾點", ("「週末蔬食小農市集」", "10:00 開始"), ()),
        ("最後一個要錢嗎", ("「親子繪本共讀午後」", "活動資料沒有記錄要不要錢"), ()),
        ("第3個", ("剛剛列了 2 個活動，沒有第 3 個",), ()),
    ),
    "shops": (
        ("花壇有素食嗎", ("和米素食",), ()),
        ("第1家電話幾號", ("第 1 家：「和米素食」", "電話：04-7864678", "資料來源：彰化縣政府蔬食節名單"),
         ("沒有資料可以回答",)),
        ("剛剛那家在哪", ("地址：彰化縣花壇鄉彰員路三段117號",), ("看不太懂",)),
        ("第2家", ("剛剛列了 1 家，沒有第 2 家",), ()),
    ),
    "shop by name": (
        ("和米素食在哪", ("和米素食",), ()),
        ("那家電話幾號", ("第 1 家：「和米素食」", "電話：04-7864678"), ("看不太懂",)),
    ),
    "past event": (
        ("查一下上禮拜的活動", ("茉莉花田散步導覽",), ()),
        ("第一個幾點", ("「茉莉花田散步導覽」（已結束）", "2026/11/29（日），09:30 開始"), ()),
    ),
    "no list": (
        ("第三個在哪裡集合", ("沒有剛剛列出的清單",), ("看不太懂",)),
    ),
}


@pytest.fixture(scope="module")
def pinned_webhook(tmp_path_factory):
    """One pinned-clock webhook process on a fresh SQLite file, and the LINE stand-in it replies to."""
    with pinned_webhook_process(tmp_path_factory.mktemp("items")) as pinned:
        yield pinned


@pytest.mark.slow(seconds=4)
@pytest.mark.parametrize("index, name", list(enumerate(CONVERSATIONS)), ids=list(CONVERSATIONS))
def test_webhook_http_items_by_position_answer_from_the_item_record(pinned_webhook, index, name):
    for text, says, never in CONVERSATIONS[name]:
        words = say_over_http(pinned_webhook, text, user_id=f"U{index + 0xA0:032x}")
        assert all(needle in words for needle in says), (text, words)
        assert not any(needle in words for needle in never), (text, words)
