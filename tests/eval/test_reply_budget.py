"""The budget of an answer (tools/reply_budget.py, docs/design.md §7, Wording) over every reply kind the eval
produces: each case of tests/eval/cases/ through the offline router, and a sample of every group through the
model path (the Gemini stand-in fed each case's scripted call), the reply read as LINE JSON."""
from __future__ import annotations

from tests.eval.test_eval_cases import _model_sample
from tools import reply_budget
from tools.eval import DEFAULT_CASES, load_cases


def _text(text: str, quick: bool = False) -> dict:
    return {"type": "text", "text": text}


def _card(*notes: str) -> dict:
    body = [{"type": "text", "text": "和米素食"}, {"type": "separator"}] + [{"type": "text", "text": n} for n in notes]
    return {"type": "flex", "altText": "蔬食店家 1 家", "contents": {"type": "bubble", "body": {
        "type": "box", "layout": "vertical", "contents": body}}}


def test_reply_budget_accepts_a_short_text_then_a_card():
    assert reply_budget.problems([_text("資料來源：彰化縣政府蔬食節名單，2026/9/27 查閱"), _card("點餐前請先問店家")]) == []


def test_reply_budget_refuses_three_messages_a_text_after_a_card_and_a_long_text_before_it():
    assert reply_budget.problems([_text("a"), _card(), _text("b")])[0].startswith("3 messages")
    assert "text then a card" in reply_budget.problems([_card(), _text("好")])[0]
    assert "characters" in reply_budget.problems([_text("很" * 61), _card()])[0]


def test_reply_budget_refuses_more_than_three_card_notes_and_long_notes():
    assert "4 notes" in reply_budget.problems([_card("一", "二", "三", "四")])[0]
    assert "note of 41" in reply_budget.problems([_card("長" * 41)])[0]


def test_reply_budget_refuses_jargon_internal_ids_english_and_a_source_said_twice():
    said = reply_budget.problems([_text("店家資料版本 places-2026-09-27.1；這份快照由 LOCAL 提供")])
    assert any("快照" in problem for problem in said) and any("places-2026-09-27.1" in problem for problem in said)
    assert any("LOCAL" in problem for problem in said)
    assert reply_budget.problems([_text("來源：名單"), _card("來源：菜單")]) == ["names its source 2 times, once at most"]
    assert reply_budget.problems([_text("John手作蔬食")], names=reply_budget.data_names()) == []
    assert reply_budget.problems([_text("你說的「ok」")], said="ok") == []


def test_reply_budget_reads_a_request_number_as_a_number_whatever_letters_it_draws():
    assert reply_budget.problems([_text("單號：TDX-4KF，等待工作人員受理")]) == []
    assert reply_budget.problems([_text("單號：A7K-3QF")]) == []
    assert any("TDX" in problem for problem in reply_budget.problems([_text("資料來自 TDX，單號：A7K-3QF")]))


def test_reply_budget_holds_for_every_reply_kind_of_the_eval():
    over = reply_budget.over_budget(load_cases(DEFAULT_CASES))
    assert not over, (len(over), dict(list(over.items())[:8]))


def test_reply_budget_holds_for_a_sample_of_every_group_on_the_model_reader():
    from tools.gemini_standin import GeminiStandin

    with GeminiStandin() as standin:
        over = reply_budget.over_budget(_model_sample(), "model", standin)
    assert not over, over
