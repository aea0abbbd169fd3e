"""A conversation over real HTTP: signed bodies to one functions-framework webhook process (its clock
pinned to Tuesday 2026-12-01 10:00 Asia/Taipei by pinned_clock_webhook.py), the replies read from the
LINE stand-in. A follow-up keeps what it does not change, a correction replaces what it names, and
another member of a group does not continue someone else's conversation (shared.turn.follow_up)."""
from __future__ import annotations

import pytest

from tests.integration.functions.pinned_webhook_support import pinned_webhook_process, say_over_http

RESIDENT = "U" + "c" * 32
NEIGHBOUR = "U" + "d" * 32
GROUP = "C" + "e" * 32


@pytest.fixture(scope="module")
def pinned_webhook(tmp_path_factory):
    with pinned_webhook_process(tmp_path_factory.mktemp("follow-ups")) as pinned:
        yield pinned


def _say(pinned_webhook, text: str, user_id: str = RESIDENT, group_id: str | None = None) -> str:
    return say_over_http(pinned_webhook, text, user_id=user_id, group_id=group_id)


@pytest.mark.slow(seconds=3)
def test_follow_ups_http_keep_the_township_then_the_days_and_correct_the_township(pinned_webhook):
    assert "員林市，2026/12/5（六）" in _say(pinned_webhook, "員林這禮拜六有什麼活動")
    words = _say(pinned_webhook, "那下禮拜呢")
    assert words.startswith("改查下禮拜，員林市的活動：") and "員林市，2026/12/7（一）～2026/12/13（日）" in words
    words = _say(pinned_webhook, "那溪湖呢")
    assert words.startswith("改查溪湖鎮，12/7（一）～12/13（日）的活動：")
    words = _say(pinned_webhook, "不是啦 我是說鹿港")
    assert words.startswith("好的，改查鹿港鎮，12/7（一）～12/13（日）的活動：") and "沒有資料可以回答" not in words


@pytest.mark.slow(seconds=3)
def test_follow_ups_http_shops_keep_the_diet_and_a_group_member_starts_afresh(pinned_webhook):
    _say(pinned_webhook, "彰化市有素食嗎", group_id=GROUP)
    words = _say(pinned_webhook, "那全素的呢", group_id=GROUP)
    assert words.startswith("改查全素，彰化市的店家：")
    words = _say(pinned_webhook, "換成花壇", group_id=GROUP)
    assert words.startswith("改查花壇鄉，全素的店家：")
    words = _say(pinned_webhook, "換成花壇", user_id=NEIGHBOUR, group_id=GROUP)  # not their conversation
    assert "改查" not in words
