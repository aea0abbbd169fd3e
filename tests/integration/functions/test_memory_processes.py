"""Six separate OS processes in sequence, sharing only the store file (docs/design.md §6):
approve; search; correct and approve; search; forget; search. The approvals go through a real
functions/memory process. The effective diets are read from the turn audit records (before the
forget, which scrubs the remembered ones)."""
from __future__ import annotations

import json
import os

import pytest

from shared.store.sqlite import SqliteStore, path_from_url
from tests.conftest import REPO
from tests.memory_support import place_audits, preference_of
from tools.function_process import run_preloaded

pytestmark = pytest.mark.slow

STEPS = ("approve", "search", "correct", "search", "forget", "search")


def run_step(step: str, env: dict) -> dict:
    full = {k: v for k, v in os.environ.items() if not k.startswith(("LINE_", "LOCAL_", "MEMORY_"))}
    full.update(env)
    # its own OS process (a new pid, nothing shared but the store file), forked from the preloaded server
    out = run_preloaded("tests/integration/functions/memory_step_process.py", [step], full, cwd=REPO, timeout_seconds=60)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_memory_processes_six_steps_apply_then_stop_using_memory(start_function, base_env, store_url, line_standin):
    memory = start_function("memory", base_env)
    env = {**base_env, "MEMORY_FUNCTION_URL": memory.url}
    results = [run_step(step, env) for step in STEPS[:4]]
    store = SqliteStore(path_from_url(store_url))
    before_forget = place_audits(store)
    results += [run_step(step, env) for step in STEPS[4:]]
    assert len({r["pid"] for r in results}) == 6

    assert "已經記住" in results[0]["replies"][-1] and "已經記住" in results[2]["replies"][-1]
    assert "已經忘記" in results[4]["replies"][-1]

    assert [(a["effective_args"]["dietary_type"], a["origin"]) for a in before_forget] == [
        ("vegetarian", "consented_memory"), ("ovo_lacto", "consented_memory")]
    audits = place_audits(store)
    # the forget scrubbed the remembered diets from the records; the records themselves stay
    assert [(a["effective_args"]["dietary_type"], a["origin"]) for a in audits] == [
        (None, "consented_memory"), (None, "consented_memory"), ("any", "none")]
    assert [a["proposed_args"]["dietary_type"] for a in audits] == [None, None, None]
    assert [a["revision"] for a in audits] == [1, 2, 3]
    assert "和米素食" not in results[3]["replies"][0]  # ovo_lacto: no evidence for 和米素食
    snapshot = preference_of(store)
    assert (snapshot.dietary_type, snapshot.revision) == (None, 3)
