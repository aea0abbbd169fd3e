"""`make bench` runs on a fresh checkout: a smoke run with few requests (no figure is asserted)."""
from __future__ import annotations

import json
import os
import subprocess
import sys

from tests.conftest import REPO


def test_bench_small_run_prints_every_ratio():
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LINE_", "LOCAL_"))}
    out = subprocess.run([sys.executable, "-m", "tools.bench", "--requests", "4", "--runs", "1"], cwd=REPO,
                         env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    figures = json.loads(out.stdout)
    assert {"cold_start_webhook_process_vs_bare_interpreter", "max_rss_webhook_vs_bare_interpreter",
            "handle_p50_vs_signature_check", "handle_p95_vs_signature_check"} <= set(figures)
    assert all(value > 0 for value in figures.values())
