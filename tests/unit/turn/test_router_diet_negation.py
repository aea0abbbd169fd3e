"""Negated diet words are not read as that diet (docs/design.md §5, §6).

「我不吃素」 states that the diet is not restricted: for a place search that is ``any``, never
``vegetarian``. An A-not-A question (有沒有素食, 是不是素食) is not a negation.
"""
from __future__ import annotations

import pytest

from shared.turn.router import diet_in, route


@pytest.mark.parametrize("text", [
    "我不吃素", "幫我記住我不吃素", "我沒有吃素", "我不是吃素的", "非素食也可以", "不用素的", "我沒在吃素",
    "我不吃全素", "今天不想吃蔬食", "不一定要吃素",
])
def test_diet_in_negated_mention_is_any(text):
    assert diet_in(text) == "any"


@pytest.mark.parametrize("text, diet", [
    ("花壇有沒有素食", "vegetarian"),
    ("這家是不是素食", "vegetarian"),
    ("你要不要吃素", "vegetarian"),
    ("員林有沒有全素的店", "vegan"),
    ("可不可以找蛋奶素", "ovo_lacto"),
])
def test_diet_in_a_not_a_question_keeps_the_diet(text, diet):
    assert diet_in(text) == diet


@pytest.mark.parametrize("text, diet", [
    ("我不吃全素，蛋奶素就好", "ovo_lacto"),
    ("我不是吃全素，找蔬食", "vegetarian"),
    ("不吃蛋奶素，吃全素", "vegan"),
])
def test_diet_in_negated_mention_does_not_hide_a_stated_one(text, diet):
    assert diet_in(text) == diet


@pytest.mark.parametrize("text, diet", [("花壇 不限", "any"), ("不限素別", "any"), ("我吃素", "vegetarian"),
                                        ("素食", "vegetarian"), ("附近", None)])
def test_diet_in_plain_words_unchanged(text, diet):
    assert diet_in(text) == diet


def test_router_negated_vegetarian_searches_places_without_a_diet_filter():
    proposal = route("我不吃素，花壇有什麼好吃的")
    assert proposal.tool == "search_local_places"
    assert proposal.args["area"] == "花壇鄉" and proposal.args["dietary_type"] == "any"
