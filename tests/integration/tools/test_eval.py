"""make eval (tools/eval.py): one column per reader (the router, the model path through the Gemini
stand-in fed the case's scripted call, which is model-first, and router-first: the router where it reads
a text completely, else the model path), scored on what the resident reads; a failing case on any
reader makes it exit 1; the live reader is refused without approval and a key."""
from __future__ import annotations

import json

import pytest

from tools import eval as local_eval
from tools import eval_reply

PLACES_CALL = {"name": "search_local_places", "args": {"area": "花壇鄉", "dietary_type": "vegetarian"}}
CASES = [
    {"id": "places-huatan", "group": "places", "input": "花壇有推薦的蔬食店嗎？", "why": "a plain search",
     "model_call": PLACES_CALL,
     "expect": {"must_contain": ["和米素食"], "search": {"what": "shops", "township": "花壇鄉", "diet": "蔬食"},
                "listed": ["和米素食"]}},
    {"id": "places-wrong", "group": "places", "input": "花壇有推薦的蔬食店嗎？", "why": "expects a shop that is not there",
     "model_call": PLACES_CALL, "expect": {"must_contain": ["不存在的店"], "must_not_contain": ["和米素食"]}},
    {"id": "model-failures-503", "group": "model-failures", "input": "查花壇的活動", "why": "model only",
     "readers": ["model"], "model_answer": [{"error": 503}, {"error": 503}],  # the client retries a 503 once
     "expect": {"reason": "upstream_unavailable", "must_not_contain": ["這次暫時查不了"],
                "search": {"what": "events", "township": "花壇鄉"}}},
    {"id": "handoff-confirm-twice", "group": "handoff", "input": "（確認送出按兩次）", "why": "a flow",
     "setup": {"steps": [{"text": "新需求：想借輪椅"}, {"tap": "確認送出"}], "observe": {"tap": "確認送出", "step": 0}},
     "expect": {"facts": {"request_count": 1, "shows_request_id": True}, "model_calls": 0}},
]


def _run(tmp_path, capsys, cases, *args):
    path = tmp_path / "cases.json"
    path.write_text(json.dumps(cases, ensure_ascii=False), encoding="utf-8")
    out = tmp_path / "report.json"
    code = local_eval.main(["--cases", str(path), "--out", str(out), *args])
    return code, capsys.readouterr().out, json.loads(out.read_text(encoding="utf-8")) if out.exists() else None


def test_eval_reports_each_reader_per_group_and_fails_on_a_failing_case(tmp_path, capsys):
    code, printed, report = _run(tmp_path, capsys, CASES)
    assert code == 1
    assert "| group | cases | router | model (model-first) | router-first | read by the router (router-first) |" \
        in printed
    assert "| places | 2 | 1/2 | 1/2 | 1/2 | 2/2 (100 %) |" in printed
    assert "| model-failures | 1 | — | 1/1 | 1/1 | 1/1 (100 %) |" in printed
    assert "| **all** | 4 | 2/3 | 3/4 | 3/4 | 4/4 (100 %) |" in printed
    for reader in ("router", "model", "router_first"):
        by_id = {case["id"]: case for case in report["readers"][reader]["cases"]}
        assert by_id["places-huatan"]["passed"] and by_id["handoff-confirm-twice"]["passed"]
        assert any("不存在的店" in why for why in by_id["places-wrong"]["failures"])
        assert any("和米素食" in why for why in by_id["places-wrong"]["failures"])
    assert report["readers"]["router"]["cases"][2]["status"] == "not_run"


def test_eval_router_first_asks_the_model_only_about_what_the_router_does_not_read(tmp_path, capsys):
    unread = {**CASES[0], "id": "places-unread", "input": "笑死 花壇有推薦的蔬食店嗎？"}
    code, _, report = _run(tmp_path, capsys, [CASES[0], unread])
    by_id = {case["id"]: case for case in report["readers"]["router_first"]["cases"]}
    assert code == 0 and by_id["places-huatan"]["passed"] and by_id["places-unread"]["passed"]
    assert (by_id["places-huatan"]["answered_by"], by_id["places-huatan"]["observed"]["model_calls"]) == ("router", 0)
    assert (by_id["places-unread"]["answered_by"], by_id["places-unread"]["observed"]["model_calls"]) == ("model", 1)


def test_eval_exits_zero_when_every_case_passes(tmp_path, capsys):
    code, _, report = _run(tmp_path, capsys, [CASES[0], CASES[2]])
    assert code == 0
    assert report["readers"]["model"]["cases"][0]["observed"]["model_calls"] == 1


def test_eval_model_reader_fails_a_text_the_case_scripts_no_call_for(tmp_path, capsys):
    unscripted = {**CASES[0], "id": "places-unscripted"}
    unscripted.pop("model_call")
    code, _, report = _run(tmp_path, capsys, [unscripted])
    [model] = report["readers"]["model"]["cases"]
    assert code == 1 and report["readers"]["router"]["cases"][0]["passed"]
    assert "scripts no call" in model["failures"][0]


def test_eval_live_is_refused_without_approval_and_key(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    monkeypatch.delenv("GOOGLE_GENAI_USE_VERTEXAI", raising=False)
    code, _, report = _run(tmp_path, capsys, CASES, "--readers", "live", "--approve-live")
    assert code == 2 and report is None
    monkeypatch.setenv("GEMINI_API_KEY", "not-a-real-key")
    code, _, report = _run(tmp_path, capsys, CASES, "--readers", "live")
    assert code == 2 and report is None


@pytest.mark.parametrize(("line", "searched", "listed"), [
    ("示範活動 2 筆：週末蔬食小農市集、親子繪本共讀午後（彰化市，2026/12/5（六）～2026/12/6（日））",
     {"what": "events", "township": "彰化市", "days": "2026-12-05..2026-12-06"}, ["週末蔬食小農市集", "親子繪本共讀午後"]),
    ("示範資料裡沒有找到符合「員林市，2026/12/25（五）、2026/12/31（四）」的活動。",
     {"what": "events", "township": "員林市", "days": ["2026-12-25", "2026-12-31"]}, []),
    ("示範活動 1 筆：八卦山步道晨間健走（已結束）（彰化縣各鄉鎮近期，關鍵字「市集」或「親子」）",
     {"what": "events", "township": "全彰化", "days": "any", "topic": "市集|親子"}, ["八卦山步道晨間健走（已結束）"]),
    ("蔬食店家 1 家：John手作蔬食（彰化市，全素）", {"what": "shops", "township": "彰化市", "diet": "全素"}, ["John手作蔬食"]),
    ("店家資料裡沒有找到符合「花壇鄉、蛋奶素」的店家。",
     {"what": "shops", "township": "花壇鄉", "diet": "蛋奶素"}, []),
    ("我看不懂這個日期。可以說「今天」", {"what": "events", "days": "unreadable"}, []),
    ("你好！我可以幫你", None, []),
])
def test_eval_reply_reads_the_search_heading_as_calendar_days(line, searched, listed):
    messages = [{"type": "text", "text": f"前一行\n{line}"}]
    assert eval_reply.searched(messages) == searched
    assert eval_reply.listed(messages) == listed
