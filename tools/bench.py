"""Benchmarks for the webhook's hot and cold paths (``make bench``).

Figures are printed as ratios against baselines measured in the same run, on the same machine,
so they compare across machines: a fresh interpreter (cold start, memory) and a bare signature
check (per-request work). Nothing here is a test; no figure is asserted.
"""
from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tools import line_events

REPO = Path(__file__).resolve().parents[1]
SECRET = "bench-channel-secret"

_COLD = r"""
import time
t0 = time.perf_counter()
{body}
elapsed = time.perf_counter() - t0
# VmHWM (peak RSS) starts afresh at exec; ru_maxrss would carry the forking parent's peak.
hwm = [line.split()[1] for line in open("/proc/self/status") if line.startswith("VmHWM")][0]
print(elapsed, hwm)
"""
_WEBHOOK_IMPORT = ("import importlib.util\n"
                   "spec = importlib.util.spec_from_file_location('m', 'functions/webhook/main.py')\n"
                   "m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)")


def _fresh(body: str, env: dict[str, str], runs: int = 5) -> tuple[float, float]:
    """Median wall seconds of a fresh interpreter running ``body``, and its median max-RSS (KiB)."""
    times, rss = [], []
    for _ in range(runs):
        started = time.perf_counter()
        out = subprocess.run([sys.executable, "-c", _COLD.format(body=body)], cwd=REPO, env=env,
                             capture_output=True, text=True)
        if out.returncode != 0:
            raise SystemExit(f"bench: a fresh interpreter failed:\n{out.stderr[-1500:]}")
        times.append(time.perf_counter() - started)  # whole process: interpreter start + body
        rss.append(float(out.stdout.split()[1]))
    return statistics.median(times), statistics.median(rss)


def _body(text: str, n: int) -> bytes:
    event = line_events.text_event(text, user_id="U" + "0" * 32, event_id=f"01BENCH{n:019d}")
    return line_events.webhook_body([event], "U" + "0" * 32)


def main(argv: list[str] | None = None) -> int:
    """Print the ratios as one JSON document; returns 0.

    Args:
        argv: ``--requests N`` (default 200) and ``--runs K`` fresh interpreters per figure (default 5).
    """
    import argparse

    parser = argparse.ArgumentParser(prog="python -m tools.bench")
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args(argv)
    import logging

    from linebot.v3.webhook import SignatureValidator

    from shared import logs
    from shared.config import WEBHOOK_REQUIRED, Settings
    from shared.webhook.service import WebhookService
    from shared.wiring import line_gateway, open_store
    from tools.line_standin import LineStandin

    logs.configure()
    logging.getLogger("local").setLevel(logging.WARNING)  # per-request INFO lines would drown the figures
    with tempfile.TemporaryDirectory() as tmp, LineStandin(access_token="bench-token") as standin:
        env = {**os.environ, "LINE_CHANNEL_SECRET": SECRET, "LINE_CHANNEL_ACCESS_TOKEN": "bench-token",
               "LINE_API_BASE_URL": standin.url, "LOCAL_STORE_URL": f"sqlite:///{tmp}/bench.sqlite3",
               "LOCAL_SIGNING_KEY": "bench-signing-key"}
        base_t, base_rss = _fresh("pass", env, args.runs)
        hook_t, hook_rss = _fresh(_WEBHOOK_IMPORT, env, args.runs)

        settings = Settings.from_env(env, required=WEBHOOK_REQUIRED)
        service = WebhookService(settings, open_store(settings), line_gateway(settings))
        validator = SignatureValidator(SECRET)
        n = args.requests
        bodies = [_body("我要預約" if i % 2 else "花壇有素食店嗎？", i) for i in range(n)]
        sigs = [base64.b64encode(hmac.new(SECRET.encode(), b, hashlib.sha256).digest()).decode() for b in bodies]

        t0 = time.perf_counter()
        for b, s in zip(bodies, sigs):
            validator.validate(b.decode(), s)
        verify_each = (time.perf_counter() - t0) / n

        latencies = []
        for b, s in zip(bodies, sigs):
            t = time.perf_counter()
            result = service.handle(b.decode(), s)
            latencies.append(time.perf_counter() - t)
            assert result.status == 200, result
        latencies.sort()
        p50, p95 = latencies[n // 2], latencies[int(n * 0.95)]

    print(json.dumps({
        "cold_start_webhook_process_vs_bare_interpreter": round(hook_t / max(base_t, 1e-9), 1),
        "max_rss_webhook_vs_bare_interpreter": round(hook_rss / base_rss, 2),
        "handle_p50_vs_signature_check": round(p50 / verify_each, 1),
        "handle_p95_vs_signature_check": round(p95 / verify_each, 1),
        "handle_p95_share_of_2s_budget": round(p95 / 2.0, 4),
        "requests": n,
    }, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
