"""The crisis reader (shared.turn.crisis) on how older residents speak of not wanting to live: asking
why one still lives, having lived enough or waiting to be taken, wishing to join the dead (given up:
算了), and being useless with age; each with negatives that must stay ordinary questions.
"""
from __future__ import annotations

import pytest

from shared.text import reading_form
from shared.turn.crisis import is_crisis
from shared.turn.router import route

TRIAL5 = ["老伴走了以後 我每天都不知道為什麼還要活著", "老了沒路用 早點去找老伴算了"]


@pytest.mark.parametrize("text", TRIAL5 + [
    # why one still lives
    "我還活著幹嘛", "為何還要活下去", "不知道自己為什麼要活著", "繼續活著有什麼意思",
    # having lived enough, waiting to be taken
    "活夠了 不想拖累孩子", "每天都在等死", "閻羅王怎麼還不來收我", "老天爺怎麼不把我帶走", "怎麼還不死",
    # joining the dead, given up
    "跟著我先生走算了", "想去陪我媽算了", "乾脆去找他算了",
    # useless with age (Taiwanese 沒路用 / 無路用), a waste of living
    "我無路用了", "人老了就是沒路用", "活著只是浪費糧食", "我是個廢物",
    # Simplified and spaced forms are read the same way
    "老伴走了 不知道为什么还要活着", "活 夠 了",
])
def test_crisis_older_residents_phrasings_get_the_crisis_reply_first(text):
    assert is_crisis(reading_form(text)), text
    proposal = route(text)
    assert proposal.tool == "show_limits" and proposal.args["kinds"][0] == "crisis", proposal


@pytest.mark.parametrize("text", [
    "為什麼還要活動", "幹嘛還要活動中心", "為什麼要活到老學到老", "為什麼活動取消",
    "去找老伴吃飯", "去找老伴算帳", "跟她去好了", "跟他一起去市集好了", "找我媽媽一起去好了",
    "明天早點走 避開車潮", "我們早點去比較好", "早點走也好",
    "等死人了 排隊好久", "老天爺保佑", "菩薩保佑我", "這個東西沒路用",
])
def test_crisis_everyday_phrasings_beside_those_words_are_not_a_crisis(text):
    assert not is_crisis(reading_form(text)), text
