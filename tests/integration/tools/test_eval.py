"""make eval (tools/eval.py): cases scored apart for safety and completeness, router by default,
the scripted model through the Gemini stand-in, live refused without approval."""
from __future__ import annotations

import json

from tools import eval as local_eval

CASES = [
    {"id": "t-places", "input": "花壇有推薦的蔬食店嗎？", "kind": "t", "notes": "a plain search",
     "expect": {"tool": "search_local_places", "model_tool": "search_local_places",
                "model_arguments": {"area": "花壇鄉"}, "statuses": ["ok"], "must_contain": ["和米素食"]},
     "setup": {"script": [{"function_call": {"name": "search_local_places",
                                             "args": {"area": "花壇鄉", "dietary_type": "vegetarian"}}}]}},
    {"id": "t-wrong-expectation", "input": "花壇有推薦的蔬食店嗎？", "kind": "t", "notes": "expects a shop that is not there",
     "expect": {"must_contain": ["不存在的店"], "must_not_contain": ["和米素食"]}},
    {"id": "t-503", "input": "查花壇的活動", "kind": "t", "notes": "model only",
     "expect": {"handled_by": "model", "reason": "upstream_unavailable", "must_contain": ["這次暫時查不了"]},
     "setup": {"script": [{"error": 503}]}},
    {"id": "t-duplicate-confirm", "input": "(tap twice)", "kind": "t", "notes": "a flow",
     "expect": {"handled_by": "flow", "facts": {"request_count": 1, "shows_request_id": True}},
     "setup": {"steps": [{"text": "新需求：想借輪椅"}, {"tap": "確認送出"}], "observe": {"tap": "確認送出", "step": 0}}},
]


def _run(tmp_path, capsys, *args):
    cases = tmp_path / "cases.json"
    cases.write_text(json.dumps(CASES, ensure_ascii=False), encoding="utf-8")
    out = tmp_path / "report.json"
    code = local_eval.main(["--cases", str(cases), "--out", str(out), *args])
    return code, capsys.readouterr().out, json.loads(out.read_text(encoding="utf-8")) if out.exists() else None


def test_eval_router_scores_safety_and_completeness_apart(tmp_path, capsys):
    code, table, report = _run(tmp_path, capsys)
    assert code == 0 and "| t-places | t | pass | pass |" in table
    by_id = {case["id"]: case for case in report["cases"]}
    wrong = by_id["t-wrong-expectation"]
    assert (wrong["safe"], wrong["complete"]) == (False, False)
    assert any("和米素食" in why for why in wrong["safety_failures"])
    assert any("不存在的店" in why for why in wrong["completeness_failures"])
    assert by_id["t-503"]["status"] == "model-only" and "| t-503 | t | model-only | model-only |" in table
    assert by_id["t-duplicate-confirm"]["complete"] and by_id["t-duplicate-confirm"]["observed"]["business_writes"] == 0
    assert report["totals"] == {"cases": 4, "ran": 3, "safe": 2, "complete": 2, "model_only": 1, "no_script": 0}


def test_eval_scripted_runs_the_model_path_through_the_standin(tmp_path, capsys):
    code, _, report = _run(tmp_path, capsys, "--model", "scripted", "--only", "t-places,t-503")
    by_id = {case["id"]: case for case in report["cases"]}
    assert code == 0 and set(by_id) == {"t-places", "t-503"}
    assert by_id["t-places"]["complete"] and by_id["t-places"]["observed"]["audit"]["source"] == "model"
    assert by_id["t-503"]["complete"] and by_id["t-503"]["observed"]["audit"]["reason"] == "upstream_unavailable"
    assert by_id["t-places"]["observed"]["model_calls"] == 1


def test_eval_live_is_refused_without_approval_and_key(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    monkeypatch.delenv("GOOGLE_GENAI_USE_VERTEXAI", raising=False)
    code, _, report = _run(tmp_path, capsys, "--model", "live", "--approve-live")
    assert code == 2 and report is None
    monkeypatch.setenv("GEMINI_API_KEY", "not-a-real-key")
    code, _, report = _run(tmp_path, capsys, "--model", "live")
    assert code == 2 and report is None
