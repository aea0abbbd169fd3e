"""Reading remember / correct requests without the model (docs/design.md §6)."""
from __future__ import annotations

import pytest

from shared.memory.phrases import MemoryRequest, read_memory_request


@pytest.mark.parametrize("text, expected", [
    ("長輩吃素，以後優先找蔬食，幫我記住", MemoryRequest("remember", "vegetarian")),
    ("幫我記住我吃素", MemoryRequest("remember", "vegetarian")),
    ("記住我吃全素", MemoryRequest("remember", "vegan")),
    ("以後都吃蛋奶素", MemoryRequest("remember", "ovo_lacto")),
    ("以後都幫我找奶素的店", MemoryRequest("remember", "lacto")),
    ("他以後都吃全素，幫我記住", MemoryRequest("remember", "vegan")),   # a companion's diet, asked by this account
    ("我跟她說我吃素，幫我記住", MemoryRequest("remember", "vegetarian")),  # told her: not reported speech
    ("改成蛋奶素", MemoryRequest("correct", "ovo_lacto")),
    ("把偏好換成全素", MemoryRequest("correct", "vegan")),
    ("幫我記住", MemoryRequest("remember", None)),
    ("以後都不限，幫我記住", MemoryRequest("remember", "any")),
])
def test_phrases_requests_for_later_are_read(text, expected):
    assert read_memory_request(text) == expected


@pytest.mark.parametrize("text", [
    "今天想吃素，花壇有什麼店？",     # one-off: this turn only
    "不要記住我吃素",                 # negated
    "別記，我只是今天吃素",
    "不用幫我記住素食",
    "以後不要再找素食",
    "朋友說他吃素",                   # reported speech about someone else's habit
    "朋友說他以後都吃素",
    "她說以後都吃全素",
    "他以後都吃全素",
    "花壇有推薦吃的嗎？",
    "我的偏好",
    "先不要",
    "以後都有活動嗎",                 # a 'from now on' word without a diet
    "",
])
def test_phrases_one_off_negated_or_reported_are_not_requests(text):
    assert read_memory_request(text) is None


@pytest.mark.parametrize("text", ["幫我記住我不吃素", "記住我沒有吃素", "以後都不是吃素，幫我記住", "幫我記住我非素食"])
def test_phrases_negated_diet_is_never_a_diet_to_store(text):
    # 「我不吃素」 means the diet is not restricted (any), which is never stored: never 蔬食.
    assert read_memory_request(text) == MemoryRequest("remember", "any")


@pytest.mark.parametrize("text, diet", [
    ("朋友說他吃素，幫我記住", "vegetarian"),
    ("我朋友說他吃全素，以後都幫我找全素", "vegan"),
    ("我媽說她吃全素，以後都幫我找全素", "vegan"),
    ("同事說他們都吃蛋奶素，記住", "ovo_lacto"),
    ("聽說他吃素，幫我記下來", "vegetarian"),
])
def test_phrases_reported_speech_with_a_request_is_reported_not_remember(text, diet):
    # docs/design.md §6: not about someone else's habit (朋友說他吃素), even with 幫我記住.
    assert read_memory_request(text) == MemoryRequest("reported", diet)
