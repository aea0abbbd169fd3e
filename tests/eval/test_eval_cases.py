"""The eval cases (tests/eval/cases/, format in tests/eval/README.md) in the suite: every case through the
offline router, and a sample of every group through the model path (the real ADK Runner and google-genai
client against the Gemini stand-in fed the case's scripted call), scored by make eval's own harness
(tools/eval.py) on what the resident reads. The clock is pinned to 2026-12-01 10:00 Asia/Taipei.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tools import eval as harness
from tools.eval import CASE_KEYS, DEFAULT_CASES, EXPECT_KEYS, SETUP_KEYS, Harness, load_cases

CASES = load_cases(DEFAULT_CASES)
#: Per group, how many cases the suite also runs on the model reader (make eval runs them all).
MODEL_SAMPLE_PER_GROUP = 1
#: Words of internal encodings that no expectation may hold: tool names, note codes, result ids.
INTERNAL = re.compile(r"search_local_|find_place|show_limits|needs_area|demo-ev-|vegfest\d|second_events|"
                      r"also_places|also_events|other_areas|unrecorded_diet|diet_of_other|not_saved|detail:")


def _runs_on(case: dict, reader: str) -> bool:
    return reader in case.get("readers", harness.READERS)


def _model_sample() -> list[dict]:
    by_group: dict[str, list[dict]] = {}
    for case in CASES:
        if _runs_on(case, "model"):
            by_group.setdefault(case["group"], []).append(case)
    return [case for cases in by_group.values() for case in cases[:MODEL_SAMPLE_PER_GROUP]]


def _expected(case: dict, reader: str):
    bug = (case.get("known_bug") or {}).get(reader)
    return pytest.param(case, marks=pytest.mark.xfail(reason=bug, strict=True)) if bug else case


ROUTER_IDS = [case["id"] for case in CASES if _runs_on(case, "router")]
ROUTER_CASES = [_expected(case, "router") for case in CASES if _runs_on(case, "router")]
MODEL_IDS = [case["id"] for case in _model_sample()]
MODEL_CASES = [_expected(case, "model") for case in _model_sample()]


def test_eval_cases_have_unique_ids_named_after_their_group_and_only_known_fields():
    assert len(CASES) >= 700
    assert len({case["id"] for case in CASES}) == len(CASES)
    for file in sorted(DEFAULT_CASES.glob("*.json")):
        for case in json.loads(file.read_text(encoding="utf-8")):
            assert case["group"] == file.stem and case["id"].startswith(f"{file.stem}-"), case["id"]
            assert set(case) <= CASE_KEYS and set(case.get("setup") or {}) <= SETUP_KEYS, case["id"]
            expects = [case["expect"], *(case.get("per_reader") or {}).values()]
            assert all(set(expect) <= EXPECT_KEYS for expect in expects), case["id"]
            assert isinstance(case["input"], str) and case["why"], case["id"]


def test_eval_cases_assert_no_internal_encoding():
    for case in CASES:
        said = json.dumps([case["expect"], case.get("per_reader")], ensure_ascii=False)
        assert not INTERNAL.search(said), (case["id"], INTERNAL.search(said))


def test_eval_scripted_model_calls_fit_the_tools_schema():
    from shared.agent.tools import schema_problem

    for case in CASES:
        steps = [case, *(case.get("setup") or {}).get("steps", [])]
        for call in [step["model_call"] for step in steps if "model_call" in step]:
            for one in call if isinstance(call, list) else [call]:
                assert schema_problem(one["name"], one["args"]) is None, (case["id"], one)


@pytest.fixture(scope="module")
def workdir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("eval")


@pytest.fixture(scope="module")
def gemini():
    from tools.gemini_standin import GeminiStandin

    with GeminiStandin() as standin:
        yield standin


@pytest.mark.parametrize("case", ROUTER_CASES, ids=ROUTER_IDS)
def test_eval_case_on_the_router(case, workdir):
    outcome = Harness("router", workdir).run(case)
    assert outcome.passed, (case["why"], outcome.failures, outcome.observed.get("reply"))


@pytest.mark.parametrize("case", MODEL_CASES, ids=MODEL_IDS)
def test_eval_case_on_the_model(case, workdir, gemini):
    outcome = Harness("model", workdir, gemini).run(case)
    assert outcome.passed, (case["why"], outcome.failures, outcome.observed.get("reply"))
