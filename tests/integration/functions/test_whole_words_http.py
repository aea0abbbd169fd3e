"""A time word is read whole, over real HTTP: signed bodies to one functions-framework webhook process
(its clock pinned to Tuesday 2026-12-01 10:00 Asia/Taipei by tests/functions/pinned_clock_webhook.py),
the replies read from the LINE stand-in. 一下 (看一下, 問一下, 確認一下 …) is a word of its own: its 下
is never 下週 / 下個月, and the reply names the days the resident asked about (shared.turn.dates:
WHOLE_WORDS)."""
from __future__ import annotations

import pytest

from tests.integration.functions.pinned_webhook_support import pinned_webhook_process, say_over_http

#: (what the resident sends, what the reply must say, what it must not say).
WHOLE_WORD_CASES = (
    # this Saturday (12/5), not next week's (下星期六 would be 12/12); 想確認 is no question of its own
    ("想確認一下星期六花壇有沒有市集", ("花壇鄉，2026/12/5（六），關鍵字「市集」",), ("2026/12/12", "你問的「")),
    # this Sunday's event (12/6), not 12/13's
    ("看一下禮拜天有什麼活動", ("2026/12/6（日）", "親子繪本共讀午後"), ("2026/12/13",)),
    # 個月 says a month but not which: asked again, never January's events as if asked
    ("問一下個月有什麼活動", ("我看不懂這個日期",), ("2027/1",)),
    ("等一下週末有活動嗎", ("2026/12/5（六）～2026/12/6（日）", "週末蔬食小農市集"), ("2026/12/12",)),
    ("請問一下周日員林有市集嗎", ("員林市，2026/12/6（日），關鍵字「市集」",), ("2026/12/13",)),
    # 一下 then 下禮拜: next week, not the week after
    ("看一下下禮拜有活動嗎", ("2026/12/7（一）～2026/12/13（日）", "老街巷弄文化散步"), ("2026/12/14",)),
    # 一下 then 上禮拜: last week's days, not every date
    ("查一下上禮拜的活動", ("2026/11/23（一）～2026/11/29（日）", "茉莉花田散步導覽"), ("週末蔬食小農市集",)),
    ("馬上週末了 鹿港有什麼活動", ("鹿港鎮，2026/12/5（六）～2026/12/6（日）",), ("2026/11/28",)),
)


@pytest.fixture(scope="module")
def pinned_webhook(tmp_path_factory):
    """One pinned-clock webhook process on a fresh SQLite file, and the LINE stand-in it replies to."""
    with pinned_webhook_process(tmp_path_factory.mktemp("whole-words")) as pinned:
        yield pinned


@pytest.mark.slow(seconds=3)
@pytest.mark.parametrize("index, text, says, never", [(index, *case) for index, case in enumerate(WHOLE_WORD_CASES)],
                         ids=[case[0] for case in WHOLE_WORD_CASES])
def test_webhook_http_time_words_are_read_whole(pinned_webhook, index, text, says, never):
    words = say_over_http(pinned_webhook, text, user_id=f"U{index:032x}")
    assert all(needle in words for needle in says), words
    assert not any(needle in words for needle in never), words
