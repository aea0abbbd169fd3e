"""The reader of references to a listed item (shared.turn.rules.items) and its place in the router:
positions, the end of the list, pointers and naming words in many phrasings, and the messages that
are no reference and keep the reading they had (第一次去員林 有什麼活動 stays an events search)."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shared.text import reading_form
from shared.turn.ask import ItemDetail, ItemRef
from shared.turn.router import route
from shared.turn.rules.items import ITEM_TOOL, read_item_ref

W, T, E, P, PR, R = (ItemDetail.WHERE, ItemDetail.WHEN, ItemDetail.END_TIME, ItemDetail.PHONE, ItemDetail.PRICE,
                     ItemDetail.REGISTRATION)


def _ref(text: str) -> ItemRef | None:
    proposal = route(text)
    return proposal.args["ref"] if proposal.tool == ITEM_TOOL else None


@pytest.mark.parametrize("text, position, details", [
    ("第三個在哪裡集合", 3, (W,)),
    ("第一個幾點", 1, (T,)),
    ("最後一個要錢嗎", -1, (PR,)),
    ("第2家電話幾號", 2, (P,)),
    ("第２家電話幾號？", 2, (P,)),  # full width
    ("第三个在哪里集合", 3, (W,)),  # Simplified
    ("第5家", 5, ()),
    ("第一場幾點結束", 1, (E,)),
    ("第二場幾點開始 在哪裡", 2, (T, W)),
    ("倒數第二個幾點開始", -2, (T,)),
    ("請問第三家地址", 3, (W,)),
    ("那第二家呢", 2, ()),
    ("第二家的地址", 2, (W,)),
    ("第3間在哪裡", 3, (W,)),
    ("第十二個", 12, ()),
    ("第二個活動是什麼", 2, ()),
    ("第一個要報名嗎", 1, (R,)),
    ("最後那家有開嗎", -1, (T,)),
    ("第2個的電話", 2, (P,)),
    ("第三個市集在哪", 3, (W,)),
])
def test_positions(text, position, details):
    assert _ref(text) == ItemRef(position, None, details)


@pytest.mark.parametrize("text, word, details", [
    ("剛剛那家在哪", None, (W,)),
    ("剛才那個幾點", None, (T,)),
    ("上面那個要報名嗎", None, (R,)),
    ("你說的那間電話多少", None, (P,)),
    ("那家店叫什麼", None, ()),
    ("這家有開嗎", None, (T,)),
    ("那個在哪", None, (W,)),
    ("那個市集", "市集", ()),
    ("那個市集在哪", "市集", (W,)),
    ("那個健走幾點", "健走", (T,)),
    ("那個鹿港的活動幾點", "鹿港", (T,)),
])
def test_pointers_and_naming_words(text, word, details):
    assert _ref(text) == ItemRef(None, word, details)


@pytest.mark.parametrize("text, tool", [
    ("第一次去員林 有什麼活動", "search_local_events"),
    ("12月第一個週末有活動嗎", "search_local_events"),
    ("最後一天有活動嗎", None),
    ("那個 花壇有什麼活動", "search_local_events"),
    ("剛剛那個市集辦了沒", "search_local_events"),
    ("那間和米在哪", "find_place"),
    ("那家john電話", "find_place"),
    ("那個單幫我撤掉", "handoff_cancel_help"),
    ("員林第二家在哪", None),
    ("那個", None),
    ("想去死 第三個", "show_limits"),
])
def test_no_reference_keeps_the_reading_it_had(text, tool):
    proposal = route(text)
    assert proposal.tool != ITEM_TOOL
    assert tool is None or proposal.tool == tool


_LEADS = st.sampled_from(["", "請問", "那", "想問 ", "欸 ", "我想問"])
_NUMBERS = st.integers(min_value=1, max_value=12)
_COUNTERS = st.sampled_from(["個", "家", "間", "場", "項"])
_DETAILS = st.sampled_from([("在哪", W), ("在哪裡集合", W), ("地址", W), ("幾點", T), ("什麼時候", T), ("電話", P),
                            ("電話幾號", P), ("要錢嗎", PR), ("免費嗎", PR), ("要報名嗎", R), ("幾點結束", E), ("", None)])
_TAILS = st.sampled_from(["", "？", "呢", " ", "啊", "?"])
_DIGITS = "一二三四五六七八九十"


def _said(number: int, chinese: bool) -> str:
    if not chinese:
        return str(number)
    return _DIGITS[number - 1] if number <= 10 else "十" + _DIGITS[number - 11]


@settings(max_examples=200, deadline=None)
@given(_LEADS, _NUMBERS, st.booleans(), _COUNTERS, _DETAILS, _TAILS)
def test_any_position_phrasing_reads_its_position_and_detail(lead, number, chinese, counter, detail, tail):
    text = f"{lead}第{_said(number, chinese)}{counter}{detail[0]}{tail}"
    ref = read_item_ref(reading_form(text))
    assert ref is not None, text
    assert ref.position == number and ref.details == ((detail[1],) if detail[1] else ()), text


@settings(max_examples=100, deadline=None)
@given(st.sampled_from(["週末", "禮拜", "星期", "月", "天", "次", "年"]), _NUMBERS, _COUNTERS)
def test_a_time_after_a_position_is_no_reference(unit, number, counter):
    text = f"12月第{_said(number, True)}{counter if unit != '次' else ''}{unit}有什麼活動"
    assert read_item_ref(reading_form(text)) is None, text


_EARLIER = st.sampled_from(["剛剛", "剛才", "上面", "你說的", "你剛剛推薦的", ""])
_POINTED = st.sampled_from(["家", "間", "場", "個"])


@settings(max_examples=150, deadline=None)
@given(_LEADS, _EARLIER, st.sampled_from(["那", "這"]), _POINTED, _DETAILS.filter(lambda pair: pair[1] is not None), _TAILS)
def test_any_pointer_with_a_question_reads_its_detail(lead, earlier, pointer, counter, detail, tail):
    text = f"{lead}{earlier}{pointer}{counter}{detail[0]}{tail}"
    assert read_item_ref(reading_form(text)) == ItemRef(None, None, (detail[1],)), text


def test_no_eval_case_outside_the_items_group_reads_as_a_reference():
    from tools.eval import DEFAULT_CASES, load_cases

    inputs = [case["input"] for case in load_cases(DEFAULT_CASES) if case["group"] != "items"]
    assert len(inputs) > 700
    assert [text for text in inputs if route(text).tool == ITEM_TOOL] == []
