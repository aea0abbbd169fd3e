"""`make bench` runs on a fresh checkout: every figure at a tiny size.

Only that each figure was produced is asserted: its values, baseline and ratio exist and are
numbers. No test asserts a time; the figures themselves belong to ``make bench``.
"""
from __future__ import annotations

import json
import math
import os
import subprocess
import sys

import pytest

from tests.conftest import REPO

#: (figure, measure prefix) of every row `make bench` must produce, with whether it has a baseline.
EXPECTED = [
    ("P1", "cold start to first 200", True), ("P1", "peak RSS at first 200", True),
    ("P2", "throughput", True), ("P2", "p99 latency", True), ("P2", "p50 latency", True),
    ("P6", "RSS after", True),
    ("P3", "distinct creates", True), ("P3", "4 threads confirm one card", False),
    ("P4", "drain", True),
    ("P5", "4 concurrent approvals of one card", True),
    ("knee", "burst knee [default", False), ("knee", "burst knee [WORKERS=2]", False),
    ("knee", "burst knee [THREADS=16]", False),
    ("R1", "router per message, one character repeated", True),
    ("R1", "router per message, a real question repeated", True),
    ("R1", "router per message, emoji mixed", True),
    ("R2", "webhook 200 for a 5,000-unit message (char)", True),
    ("R2", "webhook 200 for a 5,000-unit message (sentence)", True),
    ("R2", "webhook 200 for a 5,000-unit message (emoji)", True),
]


def _run_bench(tmp_path, *args: str, env_extra: dict[str, str] | None = None) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LINE_", "LOCAL_", "FIRESTORE_"))}
    env.update(env_extra or {})
    out = tmp_path / "bench.json"
    done = subprocess.run([sys.executable, "-m", "tools.bench", "--tiny", "--out", str(out), *args], cwd=REPO,
                          env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "| figure | measure |" in done.stdout  # the table was printed
    document = json.loads(out.read_text())
    page = (tmp_path / "bench.md").read_text(encoding="utf-8")  # a tiny run's page goes beside --out
    assert "Written by `python -m tools.bench --tiny" in page
    assert f"{document['machine']['cores']} cores" in page
    for figure in document["figures"]:  # every figure's row is on the page, as printed
        assert f"| {figure['name']} | {figure['measure']} |" in page
    return document


def _numbers(spread: dict) -> bool:
    return all(isinstance(spread[k], (int, float)) and math.isfinite(spread[k]) for k in ("min", "median", "max"))


def spread(values: list[float]) -> dict:
    return {"min": min(values), "median": sorted(values)[len(values) // 2], "max": max(values)}


def _row(figures: list[dict], name: str, measure: str) -> dict:
    rows = [f for f in figures if f["name"] == name and f["measure"].startswith(measure)]
    assert len(rows) == 1, (name, measure, [(f["name"], f["measure"]) for f in figures])
    return rows[0]


@pytest.mark.slow(seconds=26)
def test_bench_tiny_run_produces_every_figure_with_baseline_and_ratio(tmp_path):
    document = _run_bench(tmp_path, "--no-emulator")
    assert {"cores", "python", "sqlite"} <= set(document["machine"])
    for name, measure, has_baseline in EXPECTED:
        row = _row(document["figures"], name, measure)
        assert _numbers(row["local"])
        if has_baseline:
            assert row["baseline_name"]
            assert _numbers(row["baseline"]) and _numbers(row["ratio"])
    for row in (f for f in document["figures"] if f["name"] == "R1"):  # each length was timed
        assert set(row["ms_by_units"]) == {"100", "1000", "5000"}
        assert all(_numbers(spread(values)) for values in row["ms_by_units"].values())
    assert document["firestore_emulator"].startswith("skipped")
    assert document["pushes_per_action"] is None  # no tiny size: `make bench` (or --only pushes) measures it


@pytest.mark.slow(seconds=12)
def test_bench_tiny_run_on_firestore_emulator_produces_labelled_figures(tmp_path, firestore_emulator_host):
    document = _run_bench(tmp_path, "--only", "emulator,rpcs",
                          env_extra={"FIRESTORE_EMULATOR_HOST": firestore_emulator_host})
    assert document["firestore_emulator"] == "ran"
    trips = {row["operation"].split(" (")[0]: row for row in document["store_round_trips"]}
    assert set(trips) == {"webhook text answer", "handoff confirm", "reconcile of a settled task", "memory approval"}
    for row in trips.values():  # counted by method, never fewer than the minimum argued for it
        assert row["rpcs"] == sum(row["by_method"].values()) >= row["minimum"] >= 1
    assert "## Firestore round trips per operation" in (tmp_path / "bench.md").read_text(encoding="utf-8")
    for name, measure, has_baseline in [("P3 (emulator)", "distinct creates", True),
                                        ("P3 (emulator)", "4 threads confirm one card", False),
                                        ("P5 (emulator)", "4 concurrent approvals", True)]:
        row = _row(document["figures"], name, measure)
        assert _numbers(row["local"])
        assert "EMULATOR" in row["note"]
        if has_baseline:
            assert _numbers(row["baseline"]) and _numbers(row["ratio"])
