"""Items by position on the model path (shared.agent.tools ``ask_about_listed_item``): through the signed
webhook with LOCAL_MODEL=standin, the scripted Gemini stand-in reads a search, then 第一個在哪裡集合 /
第1家電話幾號 as a call about a listed item, and the resident reads that item's own record, as on the
router path (tests/unit/turn/test_item_answer.py). Demo data; Gemini is never called."""
from __future__ import annotations

import pytest

from tests.unit.agent.test_agent_webhook import NO_DATA, answers, fresh_event

#: The embedded task queue the model turn runs through lives in the store's SQLite file.
pytestmark = pytest.mark.sqlite


def _turn(pair, gemini, line_standin, clock, text: str, name: str, **args) -> tuple[str, dict | None]:
    gemini.script([{"function_call": {"name": name, "args": args}, "when": text}])
    event = fresh_event(text, clock)
    assert pair.post(event) == 200
    pair.drain()
    [answer] = answers(line_standin, event)
    assert gemini.pending_steps() == 0
    return answer, pair.audit(event)


@pytest.mark.parametrize("search, search_args, text, item_args, said", [
    ("彰化市這週末有什麼活動", {"name": "search_local_events", "area": "彰化市", "date_from": "2026-12-05",
                                "date_to": "2026-12-06"},
     "第一個在哪裡集合", {"position": 1, "details": ["where"]}, ("第 1 個：「週末蔬食小農市集」", "集合地點：市集服務台")),
    ("彰化市這週末有什麼活動", {"name": "search_local_events", "area": "彰化市", "date_from": "2026-12-05",
                                "date_to": "2026-12-06"},
     "最後一個要錢嗎", {"position": -1, "details": ["price"]}, ("「親子繪本共讀午後」", "活動資料沒有記錄要不要錢")),
    ("花壇有素食嗎", {"name": "search_local_places", "area": "花壇鄉"},
     "第1家電話幾號", {"position": 1, "details": ["phone"]}, ("第 1 家：「和米素食」", "電話：04-7864678")),
    ("花壇有素食嗎", {"name": "search_local_places", "area": "花壇鄉"},
     "第5家", {"position": 5}, ("剛剛列了 1 家，沒有第 5 家",)),
], ids=["first-event-where", "last-event-price", "shop-phone", "beyond"])
def test_agent_listed_item_answers_from_the_items_record(pair, gemini, line_standin, clock, search, search_args,
                                                         text, item_args, said):
    name = search_args.pop("name")
    _turn(pair, gemini, line_standin, clock, search, name, **search_args)
    answer, audit = _turn(pair, gemini, line_standin, clock, text, "ask_about_listed_item", **item_args)
    assert all(words in answer for words in said), answer
    assert NO_DATA not in answer and "這次暫時查不了" not in answer
    assert audit is not None and (audit["source"], audit["tool"]) == ("model", "item_detail")


def test_agent_listed_item_with_no_list_says_so(pair, gemini, line_standin, clock):
    answer, audit = _turn(pair, gemini, line_standin, clock, "那個市集在哪", "ask_about_listed_item",
                          name_word="市集", details=["where"])
    assert "沒有剛剛列出的清單" in answer and "看不太懂" not in answer
    assert audit is not None and audit["status"] == "no_list"
    assert audit["proposed_args"] == {"ref": {"position": None, "named": True, "details": ["where"]}}


def test_agent_listed_item_call_is_checked_against_its_schema():
    from shared.agent.tools import schema_problem

    assert schema_problem("ask_about_listed_item", {"position": 3.0, "details": ["where"]}) is None
    assert schema_problem("ask_about_listed_item", {"position": 99}) is not None
    assert schema_problem("ask_about_listed_item", {"details": ["opening_hours"]}) is not None


def test_agent_listed_item_bare_question_on_a_model_failure_is_about_the_listed_item(pair, gemini, line_standin,
                                                                                     clock):
    """The model fails (429) on 幾點開始 after a one-item list: the router's fallback reads it as the webhook's
    own turn does, about that item, never as a shop's hours."""
    _turn(pair, gemini, line_standin, clock, "花壇有素食嗎", "search_local_places", area="花壇鄉")
    gemini.script([{"error": 429, "when": "幾點開始"}])
    event = fresh_event("幾點開始", clock)
    assert pair.post(event) == 200
    pair.drain()
    [answer] = answers(line_standin, event)
    assert "「和米素食」" in answer and "看不太懂" not in answer, answer
    audit = pair.audit(event)
    assert audit is not None and (audit["tool"], audit["reason"]) == ("item_detail", "quota")
