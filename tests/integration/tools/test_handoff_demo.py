"""``make demo``: the four fault scenarios of docs/design.md §4, reproduced through the real functions."""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.codes_support import SHOWN_CODE, shown_of
from tests.conftest import REPO

pytestmark = pytest.mark.slow(seconds=8)

#: Seed Day 10's four-case table (001_*.txt), restated as data: the first result the user saw, the
#: request rows when the answer timed out, the rows after the follow-up, and whether an id was shown.
SEED_TABLE = {
    "baseline": {"first_result": "request_created", "rows_at_timeout": 1, "final_rows": 1, "has_request_id": True},
    "after_commit": {"first_result": "pending_verification", "rows_at_timeout": 1, "final_rows": 1,
                     "has_request_id": True},
    "before_write": {"first_result": "pending_verification", "rows_at_timeout": 0, "final_rows": 1,
                     "has_request_id": True},
    "lookup_unavailable": {"first_result": "pending_verification", "rows_at_timeout": 1, "final_rows": 1,
                           "has_request_id": False},
}


def test_handoff_demo_report_matches_seed_table(tmp_path):
    out = tmp_path / "demo"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LINE_", "LOCAL_"))}
    run = subprocess.run(["make", "-s", "-o", ".venv/.installed", "demo", f"OUT={out}"], cwd=REPO, env=env,
                         capture_output=True, text=True, timeout=180)
    assert run.returncode == 0, run.stderr[-3000:]
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    expected = SEED_TABLE
    assert list(expected) == ["baseline", "after_commit", "before_write", "lookup_unavailable"]
    assert [row["case"] for row in report["rows"]] == list(expected)
    for row in report["rows"]:
        assert set(row) == {"case", "first_result", "rows_at_timeout", "action", "final_rows", "request_id"}
        want = expected[row["case"]]
        assert row["first_result"] == want["first_result"], row
        assert row["rows_at_timeout"] == want["rows_at_timeout"], row
        assert row["final_rows"] == want["final_rows"], row
        assert (row["request_id"] is not None) == want["has_request_id"], row
        if row["request_id"]:
            assert SHOWN_CODE.fullmatch(row["request_id"])  # the number the resident was told
        assert row["action"]

        # The counts come from the snapshot files the report links to.
        snapshots = report["cases"][row["case"]]["snapshots"]
        by_label = {s["label"]: json.loads((out / s["file"]).read_text(encoding="utf-8")) for s in snapshots}
        timeout_docs = by_label["first-answer"]["documents"].get("handoff_requests", [])
        final_docs = by_label["settled"]["documents"].get("handoff_requests", [])
        assert len(timeout_docs) == row["rows_at_timeout"] and len(final_docs) == row["final_rows"]
        if row["request_id"]:
            assert [shown_of(d) for d in final_docs] == [row["request_id"]]  # the stored, original request
    followups = json.loads((out / "lookup_unavailable" / "step-03-settled.json").read_text(encoding="utf-8"))
    assert [d["status"] for d in followups["documents"]["handoff_followups"]] == ["needs_human_followup"]
    html = (out / "REPORT.html").read_text(encoding="utf-8")
    for row in report["rows"]:
        for snapshot in report["cases"][row["case"]]["snapshots"]:
            assert f'href="{snapshot["file"]}"' in html
            assert Path(out / snapshot["file"]).exists()
