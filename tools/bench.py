"""``make bench``: LOCAL measured against what a developer would pick instead.

Every figure is a ratio against a baseline that does the same job the plain way, measured in the
same invocation, interleaved A/B (the order alternates each repeat, so a noisy neighbour on a
shared machine hits both sides), with min/median/max over the repeats. The baselines are small
files in ``bench/``:

* P1 cold start: ``bench/echo_bot.py`` (line-bot-sdk v3 echo function) vs the webhook, each a fresh
  functions-framework process: time from spawn to the first 200 on a fixed-entry event, peak RSS.
* P2 steady state: the same two processes at 16 keep-alive connections, distinct signed events:
  throughput and p99 latency.
* P3 handoff create: ``create_request`` vs plain SQLite INSERTs of the same documents, same file;
  plus 32 threads confirming one card (rows, outcomes).
* P4 reconcile drain: relay reconciliations (receipt already delivered by the reply, the common
  case) vs plain read-only lookups by key.
* P5 approvals: 50 concurrent approvals of one consent card vs 50 plain single-row UPDATEs.
* P6 memory growth: the webhook's RSS after 10,000 events vs after 1,000 (from the P2 traffic).
* Burst knee: the largest burst of distinct events answered with p99 < 1.5 s and none over 2 s,
  for the default workers and for the variants in ``KNEE_VARIANTS``.
* P3 and P5 again on Google's Firestore emulator where it is installed (emulator figures: they
  say nothing about production latency).
* R1 reading cost: the offline router's time per message at 100, 1,000 and 5,000 UTF-16 units of
  three shapes of hostile text (``tools/hostile_text.py``), the baseline the same router on 1,000
  units: the ratio 5,000 / 1,000 is about 5 when the cost is linear.
* R2 long message: the webhook's 200 for a signed 5,000-unit message of each shape, against its 200
  for a fixed entry (選單) in the same process.

Prints a table, writes every raw value to ``out/bench.json`` (``--out``) and the table, with the
commit, the machine and its load, to ``docs/results/bench.md`` (``--results``; a ``--tiny`` run writes
its page beside ``--out`` instead, so a smoke run never replaces the published one). No figure is
asserted anywhere; the smoke test (tests/integration/tools/test_bench_runs.py) runs ``--tiny`` and checks only
that each figure exists.
"""
from __future__ import annotations

import argparse
import functools
import hashlib
import json
import logging
import os
import platform
import signal
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass, replace
from datetime import timedelta
from pathlib import Path
from typing import Any, Callable

from bench import plain
from tools import bench_load, line_events
from tools.function_process import free_port, start_module

REPO = Path(__file__).resolve().parents[1]
SECRET = "bench-channel-secret"
TOKEN = "bench-access-token"
TENANT = "bench"
#: A fixed entry (the menu word): answered by the webhook with no model and no handoff write.
FIXED_TEXT = "選單"
#: Worker settings whose burst knee is reported next to the default (functions-framework reads
#: ``WORKERS`` and ``THREADS``; its defaults are 1 worker and 4 threads per core).
KNEE_VARIANTS = ({"WORKERS": "2"}, {"THREADS": "16"})


@dataclass(frozen=True)
class Sizes:
    """How much each figure runs. ``FULL`` is ``make bench``; ``TINY`` is the smoke test's."""

    cold_repeats: int = 6
    steady_requests: int = 5000
    steady_rounds: int = 5
    connections: int = 16
    warmup: int = 1000
    rss_late: int = 10000
    creates: int = 400
    create_threads: int = 8
    create_rounds: int = 3
    one_card_threads: int = 32
    drain: int = 1000
    drain_rounds: int = 3
    approvals: int = 50
    approval_rounds: int = 3
    burst_start: int = 200
    burst_max: int = 1600
    emulator_creates: int = 50
    emulator_rounds: int = 2
    #: R1: routes timed per shape and length (interleaved); R2: long messages posted per shape.
    router_repeats: int = 7
    long_posts: int = 3
    #: Fork P2's and the knee's servers from the preloaded fork server (tools/function_process.py)
    #: instead of a new interpreter each. Only the smoke test, whose point is that every figure is
    #: produced: a new interpreter's imports cost about 2 s of CPU a server. P1 always starts one.
    forked_servers: bool = False


FULL = Sizes()
TINY = Sizes(cold_repeats=1, steady_requests=40, steady_rounds=2, connections=4, warmup=20, rss_late=60,
             creates=8, create_threads=2, create_rounds=1, one_card_threads=4, drain=10, drain_rounds=1,
             approvals=4, approval_rounds=1, burst_start=4, burst_max=8, emulator_creates=3, emulator_rounds=1,
             router_repeats=1, long_posts=1, forked_servers=True)


# ---- small helpers ---------------------------------------------------------------------------------

def spread(values: list[float]) -> dict[str, float]:
    """``{"min", "median", "max"}`` of the values."""
    return {"min": min(values), "median": statistics.median(values), "max": max(values)}


def figure(name: str, measure: str, unit: str, local: list[float], baseline: list[float] | None, *,
           goal: str | None = None, goal_met: Callable[[float], bool] | None = None, baseline_name: str = "",
           note: str = "", lower_is_better: bool = True, extra: dict | None = None) -> dict:
    """One row of the table. The ratio is taken per interleaved pair (local_i / baseline_i); the goal is
    judged on the median ratio (or the median value when there is no baseline)."""
    row: dict[str, Any] = {"name": name, "measure": measure, "unit": unit, "local": spread(local),
                           "local_raw": local, "baseline_name": baseline_name, "goal": goal, "note": note}
    judged = statistics.median(local)
    if baseline:
        ratios = [a / b for a, b in zip(local, baseline) if b > 0]
        row.update(baseline=spread(baseline), baseline_raw=baseline, ratio=spread(ratios) if ratios else None)
        judged = statistics.median(ratios) if ratios else float("nan")
    row["goal_met"] = bool(goal_met(judged)) if goal_met is not None else None
    row.update(extra or {})
    return row


_TEMPLATE: dict | None = None


def delivery(text: str = FIXED_TEXT) -> tuple[bytes, str]:
    """A distinct signed one-event delivery (new webhookEventId, reply token, message id; one of 997
    users). The event is line_events' (line-bot-sdk models) with its ids replaced, so thousands are
    made in milliseconds."""
    global _TEMPLATE
    if _TEMPLATE is None:
        _TEMPLATE = line_events.text_event(FIXED_TEXT, user_id="U" + "0" * 32)
    n = next(_SEQ)
    event = {**_TEMPLATE, "webhookEventId": line_events.new_webhook_event_id(),
             "replyToken": line_events.new_reply_token(), "timestamp": int(time.time() * 1000),
             "source": {**_TEMPLATE["source"], "userId": "U" + hashlib.md5(str(n % 997).encode()).hexdigest()},
             "message": {**_TEMPLATE["message"], "id": line_events.new_message_id(), "text": text}}
    body = line_events.webhook_body([event], "U" + "f" * 32)
    return body, line_events.sign(body, SECRET)


_SEQ = iter(range(1, 10**9))


def requests_for(port: int, count: int, *, keep_alive: bool = True) -> list[bytes]:
    return [bench_load.request_bytes(port, *delivery(), keep_alive=keep_alive) for _ in range(count)]


def group_rss_kib(pid: int, field: str) -> int:
    """Largest ``VmHWM`` or ``VmRSS`` (KiB) among the processes of ``pid``'s process group (gunicorn's
    master and worker; the worker holds the request-time memory)."""
    best = 0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
            pgrp = int(stat.rsplit(")", 1)[1].split()[2])
            if pgrp != pid:
                continue
            for line in Path(f"/proc/{entry}/status").read_text().splitlines():
                if line.startswith(field + ":"):
                    best = max(best, int(line.split()[1]))
        except (OSError, ValueError, IndexError):
            continue
    return best


def group_cpu_seconds(pid: int) -> float:
    """User + system CPU seconds used so far by the processes of ``pid``'s process group."""
    ticks = 0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
            if int(fields[2]) == pid:
                ticks += int(fields[11]) + int(fields[12])
        except (OSError, ValueError, IndexError):
            continue
    return ticks / os.sysconf("SC_CLK_TCK")


class Server:
    """One functions-framework process (LOCAL's webhook or the echo bot) on a free loopback port."""

    def __init__(self, kind: str, env: dict[str, str], log_dir: Path, *, extra_env: dict[str, str] | None = None,
                 forked: bool = False):
        self.kind = kind
        self.port = free_port()
        source, target = ("functions/webhook/main.py", "webhook") if kind == "local" else ("bench/echo_bot.py", "echo")
        args = ["--source", source, "--target", target, "--host", "127.0.0.1", "--port", str(self.port)]
        self.log_path = log_dir / f"{kind}-{self.port}.log"
        self.started = time.perf_counter()
        # Sizes.forked_servers: the same command, forked from the preloaded fork server
        self.process: Any = start_module("functions_framework", args, {**env, **(extra_env or {})}, REPO,
                                         self.log_path, preloaded=forked)

    def first_200(self, timeout_seconds: float = 60.0) -> float:
        """Post fixed-entry deliveries until one is answered 200; seconds since spawn."""
        import http.client

        deadline = time.monotonic() + timeout_seconds
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise SystemExit(f"bench: {self.kind} exited while starting; see {self.log_path}")
            body, signature = delivery()
            try:
                conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
                conn.request("POST", "/", body, {"Content-Type": "application/json", "X-Line-Signature": signature})
                status = conn.getresponse().status
                conn.close()
                if status == 200:
                    return time.perf_counter() - self.started
            except OSError:
                time.sleep(0.01)
        raise SystemExit(f"bench: {self.kind} gave no 200 within {timeout_seconds:.0f} s; see {self.log_path}")

    def rss_kib(self, field: str = "VmRSS") -> int:
        return group_rss_kib(self.process.pid, field)

    def stop(self) -> None:
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        self.process.wait()


def alternate(repeat: int, a: Callable[[], Any], b: Callable[[], Any]) -> tuple[Any, Any]:
    """Run a then b on even repeats, b then a on odd ones; returns (a's result, b's result)."""
    if repeat % 2 == 0:
        ra = a()
        rb = b()
    else:
        rb = b()
        ra = a()
    return ra, rb


# ---- the process figures: P1, P2, P6, burst knee -------------------------------------------------

def cold_start(sizes: Sizes, env: dict[str, str], tmp: Path, say: Callable[[str], None]) -> list[dict]:
    """P1: spawn → first 200 on a fixed-entry event, and peak RSS, echo bot vs webhook (fresh store each)."""
    times: dict[str, list[float]] = {"local": [], "echo": []}
    cpu: dict[str, list[float]] = {"local": [], "echo": []}
    rss: dict[str, list[float]] = {"local": [], "echo": []}

    def one(kind: str) -> None:
        store = tmp / f"cold-{time.monotonic_ns()}.sqlite3"
        server = Server(kind, {**env, "LOCAL_STORE_URL": f"sqlite:///{store}"}, tmp)
        try:
            times[kind].append(server.first_200())
            cpu[kind].append(group_cpu_seconds(server.process.pid))
            rss[kind].append(server.rss_kib("VmHWM") / 1024)
        finally:
            server.stop()

    for r in range(sizes.cold_repeats):
        alternate(r, lambda: one("local"), lambda: one("echo"))
        say(f"P1 cold start {r + 1}/{sizes.cold_repeats}: webhook {times['local'][-1]:.2f} s, "
            f"echo {times['echo'][-1]:.2f} s")
    return [
        figure("P1", "cold start to first 200", "s", times["local"], times["echo"], goal="≤ 1.3×",
               goal_met=lambda r: r <= 1.3, baseline_name="line-bot-sdk v3 echo function (bench/echo_bot.py)",
               note="fresh functions-framework process, fixed-entry text event, fresh SQLite store"),
        figure("P1", "CPU seconds to first 200", "s", cpu["local"], cpu["echo"],
               baseline_name="line-bot-sdk v3 echo function",
               note="user + system CPU of the gunicorn group: the part of the cold start that a busy "
                    "neighbour on a shared machine does not stretch"),
        figure("P1", "peak RSS at first 200", "MiB", rss["local"], rss["echo"],
               baseline_name="line-bot-sdk v3 echo function",
               note="VmHWM, largest process of the gunicorn group"),
    ]


def steady_and_memory(sizes: Sizes, env: dict[str, str], tmp: Path, say: Callable[[str], None]) -> list[dict]:
    """P2 (throughput, p99) at ``connections`` keep-alive connections, and P6 (RSS growth) from the same traffic.

    Each side gets ``steady_requests`` distinct events in ``steady_rounds`` interleaved chunks; the
    figures' min/median/max are over the chunks, and the pooled p99 over every request is kept too.
    """
    local = Server("local", env, tmp, forked=sizes.forked_servers)
    echo = Server("echo", env, tmp, forked=sizes.forked_servers)
    chunk = max(1, sizes.steady_requests // sizes.steady_rounds)
    try:
        local.first_200()
        echo.first_200()
        counts = {"local": 1, "echo": 1}
        rss_early: dict[str, float] = {}
        rss_late: dict[str, tuple[int, float]] = {}
        bad = {"local": 0, "echo": 0}

        cpu_ms: dict[str, list[float]] = {"local": [], "echo": []}

        def run(server: Server, count: int) -> bench_load.LoadResult:
            load = requests_for(server.port, count)
            cpu_before = group_cpu_seconds(server.process.pid)
            result = bench_load.steady(server.port, load, connections=sizes.connections)
            cpu_ms[server.kind].append((group_cpu_seconds(server.process.pid) - cpu_before) * 1000 / count)
            counts[server.kind] += count
            bad[server.kind] += result.non_200
            if server.kind not in rss_late and counts[server.kind] >= sizes.rss_late:
                rss_late[server.kind] = (counts[server.kind], server.rss_kib() / 1024)
            return result

        for server in (local, echo):  # warm-up, then RSS after the first `warmup` events
            run(server, sizes.warmup - 1)
            rss_early[server.kind] = server.rss_kib() / 1024
        cpu_ms = {"local": [], "echo": []}  # the measured chunks only
        results: dict[str, list[bench_load.LoadResult]] = {"local": [], "echo": []}
        for r in range(sizes.steady_rounds):
            a, b = alternate(r, lambda: run(local, chunk), lambda: run(echo, chunk))
            results["local"].append(a)
            results["echo"].append(b)
            say(f"P2 chunk {r + 1}/{sizes.steady_rounds} ({chunk} requests each): webhook {a.throughput:.0f}/s "
                f"p99 {a.percentile(0.99) * 1000:.0f} ms, echo {b.throughput:.0f}/s p99 {b.percentile(0.99) * 1000:.0f} ms")
        chunk_cpu_ms = {k: list(v) for k, v in cpu_ms.items()}
        for server in (local, echo):  # top up to the late checkpoint
            if server.kind not in rss_late:
                run(server, sizes.rss_late - counts[server.kind])
        say(f"P6: webhook RSS {rss_early['local']:.1f} MiB after {sizes.warmup} events, "
            f"{rss_late['local'][1]:.1f} MiB after {rss_late['local'][0]}")
    finally:
        local.stop()
        echo.stop()
    return _steady_figures(sizes, chunk, results, chunk_cpu_ms, bad, rss_early, rss_late)


def _steady_figures(sizes: Sizes, chunk: int, results: dict[str, list[bench_load.LoadResult]],
                    chunk_cpu_ms: dict[str, list[float]], bad: dict[str, int], rss_early: dict[str, float],
                    rss_late: dict[str, tuple[int, float]]) -> list[dict]:
    """P2's rows (throughput, p99, p50, CPU per request) and P6's (RSS growth) from ``steady_and_memory``'s
    measures, each keyed "local" (the webhook) and "echo": the load of each ``chunk``, CPU ms per request of
    each chunk, non-200 answers, RSS in MiB after ``sizes.warmup`` events and (events, MiB) late."""
    lt, et = [x.throughput for x in results["local"]], [x.throughput for x in results["echo"]]
    lp, ep = ([x.percentile(0.99) * 1000 for x in results[k]] for k in ("local", "echo"))
    l50, e50 = ([x.percentile(0.50) * 1000 for x in results[k]] for k in ("local", "echo"))
    pooled = {k: bench_load.LoadResult([t for x in results[k] for t in x.latencies]) for k in ("local", "echo")}
    pooled_p99 = {k: round(v.percentile(0.99) * 1000, 1) for k, v in pooled.items()}
    n_local, rss_local = rss_late["local"]
    n_echo, rss_echo = rss_late["echo"]
    common = (f"{chunk * sizes.steady_rounds} distinct signed events each, {sizes.connections} keep-alive connections, "
              f"{sizes.steady_rounds} interleaved chunks")
    return [
        figure("P2", "throughput", "req/s", lt, et, goal="≥ 0.7×", goal_met=lambda r: r >= 0.7,
               baseline_name="echo function", note=common, lower_is_better=False,
               extra={"non_200": bad}),
        figure("P2", "p99 latency", "ms", lp, ep, goal="≤ 3×", goal_met=lambda r: r <= 3.0,
               baseline_name="echo function", note=common + f"; pooled p99 webhook {pooled_p99['local']} ms, "
                                                          f"echo {pooled_p99['echo']} ms",
               extra={"pooled_p99_ms": pooled_p99}),
        figure("P2", "p50 latency", "ms", l50, e50, baseline_name="echo function", note=common),
        figure("P2", "CPU per request", "ms", chunk_cpu_ms["local"], chunk_cpu_ms["echo"],
               baseline_name="echo function",
               note=common + "; user + system CPU of the gunicorn group over each chunk: the work per request, "
                             "which a busy neighbour on a shared machine does not stretch"),
        figure("P6", f"RSS after {n_local} events / after {sizes.warmup}", "×", [rss_local / rss_early["local"]],
               [rss_echo / rss_early["echo"]], goal="webhook ≤ 1.1×", goal_met=None,
               baseline_name="echo function's own growth",
               note=f"webhook {rss_early['local']:.1f} → {rss_local:.1f} MiB; echo {rss_early['echo']:.1f} → "
                    f"{rss_echo:.1f} MiB after {n_echo}",
               extra={"goal_met": rss_local / rss_early["local"] <= 1.1,
                      "rss_mib": {"local": [rss_early["local"], rss_local], "echo": [rss_early["echo"], rss_echo]}}),
    ]


def burst_knee(sizes: Sizes, env: dict[str, str], tmp: Path, say: Callable[[str], None]) -> list[dict]:
    """The largest burst with p99 < 1.5 s, none over 2 s and every answer 200, for the default workers and
    each of ``KNEE_VARIANTS``: doubling from ``burst_start`` up to ``burst_max``, then halving the gap once."""
    rows = []
    for variant in ({}, *KNEE_VARIANTS):
        label = ", ".join(f"{k}={v}" for k, v in variant.items()) or "default (1 worker, 4 threads per core)"
        good, tried = _knee_of(sizes, env, tmp, variant, label, say)
        rows.append(figure("knee", f"burst knee [{label}]", "events", [float(good)], None,
                           note=f"largest burst answered with p99 < 1.5 s, none over 2 s, all 200 (searched "
                                f"{sizes.burst_start}..{sizes.burst_max}; 0: even the first failed)",
                           extra={"variant": variant, "bursts": tried}))
    return rows


def _knee_of(sizes: Sizes, env: dict[str, str], tmp: Path, variant: dict[str, str], label: str,
             say: Callable[[str], None]) -> tuple[int, dict[int, dict]]:
    server = Server("local", env, tmp, extra_env=variant, forked=sizes.forked_servers)
    tried: dict[int, dict] = {}
    try:
        server.first_200()
        bench_load.steady(server.port, requests_for(server.port, 50), connections=4)  # warm

        def passes(n: int) -> bool:
            result = bench_load.burst(server.port, requests_for(server.port, n, keep_alive=False))
            p99, worst = result.percentile(0.99), max(result.latencies)
            ok = p99 < 1.5 and worst <= 2.0 and result.non_200 == 0
            tried[n] = {"p99_ms": round(p99 * 1000), "max_ms": round(worst * 1000), "non_200": result.non_200,
                        "over_2s": sum(1 for x in result.latencies if x > 2.0), "passed": ok}
            say(f"burst {n} [{label}]: p99 {p99 * 1000:.0f} ms, max {worst * 1000:.0f} ms, "
                f"non-200 {result.non_200}: {'pass' if ok else 'fail'}")
            time.sleep(0.3)
            return ok

        good, n = 0, sizes.burst_start
        while n <= sizes.burst_max and passes(n):
            good, n = n, n * 2
        if good and n <= sizes.burst_max and n - good > 1 and passes((good + n) // 2):
            good = (good + n) // 2
    finally:
        server.stop()
    return good, tried


# ---- the in-process figures: P3, P4, P5 ----------------------------------------------------------

def _settings(store_url: str, standin_url: str = "http://127.0.0.1:9"):
    from shared.config import Settings

    return Settings.from_env({"LINE_CHANNEL_SECRET": SECRET, "LINE_CHANNEL_ACCESS_TOKEN": TOKEN,
                              "LINE_API_BASE_URL": standin_url, "LOCAL_STORE_URL": store_url,
                              "LOCAL_SIGNING_KEY": "bench-signing-key", "LOCAL_TENANT_ID": TENANT,
                              "LOCAL_MODEL": "offline"})


def _drafts(store, settings, count: int, now) -> list:
    """``count`` open drafts of distinct users (the daily cap is per user)."""
    from shared.handoff import drafts
    from shared.identity import Actor

    out = []
    for _ in range(count):
        user = "U" + os.urandom(16).hex()
        result = drafts.create_draft(store, Actor(TENANT, user), "請幫我確認週末的活動還有沒有名額", now=now,
                                     settings=settings)
        out.append(result.draft)
    return out


def _in_threads(threads: int, items: list, fn: Callable[[Any], Any]) -> tuple[float, list]:
    """Run ``fn`` over ``items`` on ``threads`` threads, released together; (wall seconds, results or exceptions)."""
    chunks = [items[i::threads] for i in range(threads)]
    results: list = []
    lock = threading.Lock()
    barrier = threading.Barrier(threads + 1)

    def work(chunk: list) -> None:
        barrier.wait()
        for item in chunk:
            try:
                out = fn(item)
            except Exception as exc:  # noqa: BLE001 - counted, not raised: a figure reports errors
                out = exc
            with lock:
                results.append(out)

    workers = [threading.Thread(target=work, args=(c,)) for c in chunks]
    for w in workers:
        w.start()
    barrier.wait()
    started = time.perf_counter()
    for w in workers:
        w.join()
    return time.perf_counter() - started, results


def handoff_create(sizes: Sizes, store, settings, plain_write: Callable[[list], None], label: str,
                   say: Callable[[str], None]) -> list[dict]:
    """P3: distinct ``create_request`` calls vs plain writes of the same documents; 32 threads on one card."""
    from shared.clock import utc_now
    from shared.handoff import codes, records
    from shared.handoff.requests import REQUEST_CREATED, create_request
    from shared.outbox import reply_owner

    now = utc_now()

    def create(draft) -> str:
        return create_request(store, draft.operation, draft.content_hash, now=now, tz=settings.tz, source="webhook",
                              notice_owner=reply_owner(line_events.new_webhook_event_id()), lease_seconds=30.0,
                              event_id=None).status

    template = _drafts(store, settings, 1, now)[0]
    create(template)
    doc_id = template.operation.doc_id
    code = codes.of_request(store.get(records.REQUESTS, doc_id) or {})
    code_doc = [(codes.CODES, codes.code_doc_id(settings.tenant_id, code))] if code else []
    documents = [(c, d, store.get(c, d)) for c, d in ((records.REQUESTS, doc_id), (records.OPERATIONS, doc_id),
                                                      (records.DRAFTS, doc_id),
                                                      (records.ACTORS, records.actor_doc_id(template.operation.actor)),
                                                      *code_doc)]

    def plain_batch(i: int) -> list:
        key = f"{i:08d}" + os.urandom(24).hex()
        return [(c, f"{d[:-40]}{key}"[-64:], data) for c, d, data in documents]

    local_rates, plain_rates, errors = [], [], Counter()
    n, t = sizes.creates, sizes.create_threads
    for r in range(sizes.create_rounds):
        pending = _drafts(store, settings, n, now)

        def run_local(pending: list = pending) -> float:
            wall, results = _in_threads(t, pending, create)
            errors.update(x if isinstance(x, str) else type(x).__name__ for x in results)
            return n / wall

        def run_plain() -> float:
            batches = [plain_batch(i) for i in range(n)]
            wall, results = _in_threads(t, batches, plain_write)
            errors.update(f"plain:{type(x).__name__}" for x in results if isinstance(x, Exception))
            return n / wall

        a, b = alternate(r, run_local, run_plain)
        local_rates.append(a)
        plain_rates.append(b)
        say(f"P3{label} round {r + 1}/{sizes.create_rounds}: create_request {a:.0f}/s, plain {b:.0f}/s")

    # 32 threads confirm one card at once: one row, one request_created.
    card = _drafts(store, settings, 1, now)[0]
    wall, results = _in_threads(sizes.one_card_threads, [card] * sizes.one_card_threads, create)
    outcomes = Counter(x if isinstance(x, str) else type(x).__name__ for x in results)
    rows = 1 if store.get(records.REQUESTS, card.operation.doc_id) else 0
    say(f"P3{label} one card × {sizes.one_card_threads}: rows {rows}, outcomes {dict(outcomes)}")
    return [
        figure("P3" + label, f"distinct creates ({t} threads)", "creates/s", local_rates, plain_rates,
               goal="≥ 0.5×", goal_met=lambda r: r >= 0.5, lower_is_better=False,
               baseline_name="plain writes of the same 4 documents, one transaction each" + (
                   "" if label else ", same SQLite file"),
               extra={"outcomes": dict(errors)}),
        figure("P3" + label, f"{sizes.one_card_threads} threads confirm one card", "rows", [float(rows)], None,
               goal="1 row, 1 request_created, 0 errors",
               goal_met=lambda v: v == 1 and outcomes.get(REQUEST_CREATED) == 1 and sum(
                   v for k, v in outcomes.items() if k not in ("request_created", "already_created")) == 0,
               extra={"outcomes": dict(outcomes), "wall_seconds": wall}),
    ]


def reconcile_drain(sizes: Sizes, store_path: Path, standin_url: str, say: Callable[[str], None]) -> list[dict]:
    """P4: relay reconciliations whose receipt the reply delivered vs plain read-only lookups by key."""
    from shared.clock import utc_now
    from shared.handoff import records
    from shared.handoff.reconcile import ReconcileService
    from shared.store.sqlite import SqliteStore
    from shared.wiring import line_gateway
    from tools.bench_round_trips import created_and_told

    settings = _settings(f"sqlite:///{store_path}", standin_url)
    store = SqliteStore(str(store_path))
    now = utc_now()

    _, drafts_made = _in_threads(8, list(range(sizes.drain)), lambda _i: _drafts(store, settings, 1, now)[0])
    _, tasks = _in_threads(8, drafts_made, lambda draft: created_and_told(store, settings, draft, now))
    service = ReconcileService(settings, store, SqliteStore(str(store_path), read_only=True), line_gateway(settings),
                               clock=lambda: now + timedelta(seconds=31))
    ro = plain.read_only(str(store_path))
    outcomes: Counter = Counter()

    def drain() -> float:
        started = time.perf_counter()
        for task in tasks:
            result = service.run(task, retry_count=0)
            outcomes[f"{result.outcome}/{result.detail.get('notice')}"] += 1
        return time.perf_counter() - started

    def lookups() -> float:
        started = time.perf_counter()
        for task in tasks:
            plain.lookup(ro, "documents", records.REQUESTS, task.operation.doc_id)
        return time.perf_counter() - started

    local, base = [], []
    for r in range(sizes.drain_rounds):
        a, b = alternate(r, drain, lookups)
        local.append(a)
        base.append(b)
        say(f"P4 round {r + 1}/{sizes.drain_rounds}: drain {a * 1000:.0f} ms, lookups {b * 1000:.0f} ms")
    ro.close()
    return [figure("P4", f"drain {sizes.drain} pending reconciliations", "s", local, base, goal="≤ 2×",
                   goal_met=lambda r: r <= 2.0, baseline_name=f"{sizes.drain} plain read-only lookups by key",
                   note="relay tasks of created requests whose receipt the reply delivered; sequential",
                   extra={"outcomes": dict(outcomes)})]


def approvals(sizes: Sizes, store, settings, plain_updates: Callable[[int], Any], label: str,
              say: Callable[[str], None]) -> list[dict]:
    """P5: ``approvals`` threads approve one consent card at once vs as many plain single-row UPDATEs."""
    from shared.clock import utc_now
    from shared.identity import Actor
    from shared.memory.service import submit_card
    from shared.memory.store import read_preference
    from shared.memory.tokens import issue_card, signing_keys

    keys = signing_keys(settings)
    outcomes: Counter = Counter()
    local, base, saved_each = [], [], []
    for r in range(sizes.approval_rounds):
        actor = Actor(TENANT, "U" + os.urandom(16).hex())
        revision = read_preference(store, actor).revision
        _, token = issue_card(keys, actor, revision=revision, dietary_type="vegan", operation="save",
                              now=utc_now(), ttl_seconds=300)

        def run_local(token: str = token, actor: Actor = actor) -> float:
            wall, results = _in_threads(sizes.approvals, [token] * sizes.approvals,
                                        lambda t: submit_card(settings, store, actor, t).outcome)
            round_outcomes = Counter(x if isinstance(x, str) else type(x).__name__ for x in results)
            outcomes.update(round_outcomes)
            saved_each.append(round_outcomes.get("memory_saved", 0))
            return wall

        def run_plain() -> float:
            started = time.perf_counter()
            plain_updates(sizes.approvals)
            return time.perf_counter() - started

        a, b = alternate(r, run_local, run_plain)
        local.append(a)
        base.append(b)
        say(f"P5{label} round {r + 1}/{sizes.approval_rounds}: approvals {a * 1000:.0f} ms, "
            f"plain updates {b * 1000:.0f} ms")
    rounds = sizes.approval_rounds
    expected = {"memory_saved": rounds, "already_applied": rounds * (sizes.approvals - 1)}
    return [figure("P5" + label, f"{sizes.approvals} concurrent approvals of one card", "s", local, base,
                   baseline_name=f"{sizes.approvals} plain single-row UPDATE transactions, concurrent",
                   goal=f"1 memory_saved, {sizes.approvals - 1} already_applied, 0 errors per round",
                   goal_met=lambda _r: dict(outcomes) == expected,
                   extra={"outcomes": dict(outcomes)})]


# ---- reading cost: R1, R2 ------------------------------------------------------------------------

#: The lengths R1 times the router at, in UTF-16 units (LINE's 5,000 limit is the last).
ROUTER_LENGTHS = (100, 1000, 5000)


def fresh_text(shape: str, length: int, repeat: int) -> str:
    """``hostile_text(shape, length)`` ending in the repeat's number instead (still ``length`` units): a
    text the process has not read before, so no answer remembered for a whole message is reused."""
    from tools.hostile_text import hostile_text

    tag = f"{repeat:03d}"
    return hostile_text(shape, length - len(tag)) + tag


def router_cost(sizes: Sizes, say: Callable[[str], None]) -> list[dict]:
    """R1: ``shared.turn.router.route`` on each of ``hostile_text.BENCH_SHAPES`` at ROUTER_LENGTHS, in
    this process (the demo events snapshot's titles): ms per message; the ratio is 5,000 units against
    1,000 units of the same shape, per interleaved repeat."""
    from shared.turn.router import route
    from tools.hostile_text import BENCH_SHAPES, DESCRIPTIONS, hostile_text

    for shape in BENCH_SHAPES:  # load what a process loads once (vocabulary, calendar, titles)
        route(hostile_text(shape, 100))
    rows = []
    for shape in BENCH_SHAPES:
        times: dict[int, list[float]] = {length: [] for length in ROUTER_LENGTHS}
        for r in range(sizes.router_repeats):
            for length in (ROUTER_LENGTHS if r % 2 == 0 else ROUTER_LENGTHS[::-1]):
                text = fresh_text(shape, length, r)
                started = time.perf_counter()
                route(text)
                times[length].append((time.perf_counter() - started) * 1000)
        medians = {length: statistics.median(values) for length, values in times.items()}
        say(f"R1 {shape}: " + ", ".join(f"{length} units {ms:.1f} ms" for length, ms in medians.items()))
        rows.append(figure("R1", f"router per message, {DESCRIPTIONS[shape]}: 5,000 units", "ms", times[5000],
                           times[1000], goal="≤ 6×", goal_met=lambda r: r <= 6.0,
                           baseline_name="the same router on 1,000 units of the same text",
                           note="median ms per message: " + ", ".join(
                               f"{length:,} units {ms:.1f}" for length, ms in medians.items()),
                           extra={"ms_by_units": {str(length): values for length, values in times.items()}}))
    return rows


def long_message(sizes: Sizes, env: dict[str, str], tmp: Path, say: Callable[[str], None]) -> list[dict]:
    """R2: seconds to the webhook's 200 for a signed 5,000-unit message of each shape, interleaved with
    a fixed entry (選單) on the same server; the goal is LINE's 2 s for the slowest."""
    import http.client

    from tools.hostile_text import BENCH_SHAPES, hostile_text

    server = Server("local", env, tmp, forked=sizes.forked_servers)

    def post(text: str) -> float:
        body, signature = delivery(text)
        started = time.perf_counter()
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=60)
        conn.request("POST", "/", body, {"Content-Type": "application/json", "X-Line-Signature": signature})
        status = conn.getresponse().status
        conn.close()
        if status != 200:
            raise SystemExit(f"bench: the webhook answered {status} to a long message; see {server.log_path}")
        return time.perf_counter() - started

    rows = []
    try:
        server.first_200()
        for shape in BENCH_SHAPES:
            post(hostile_text(shape, 5000))  # the first read of a shape loads what it needs once
            local, base = [], []
            for r in range(sizes.long_posts):
                text = fresh_text(shape, 5000, r)
                a, b = alternate(r, functools.partial(post, text), lambda: post(FIXED_TEXT))
                local.append(a)
                base.append(b)
            say(f"R2 {shape}: 5,000 units {statistics.median(local) * 1000:.0f} ms, "
                f"選單 {statistics.median(base) * 1000:.0f} ms")
            rows.append(figure("R2", f"webhook 200 for a 5,000-unit message ({shape})", "s", local, base,
                               goal="≤ 2 s (LINE's wait)", baseline_name="the fixed entry 選單, same server",
                               note="signed delivery of one text event, one connection each",
                               extra={"goal_met": max(local) <= 2.0}))
    finally:
        server.stop()
    return rows


def reading_cost(only: set[str], sizes: Sizes, env: dict[str, str], tmp: Path,
                 say: Callable[[str], None]) -> list[dict]:
    """R1 and R2, those of them in ``only``."""
    return ((router_cost(sizes, say) if "R1" in only else [])
            + (long_message(sizes, env, tmp, say) if "R2" in only else []))


# ---- the run -------------------------------------------------------------------------------------

def machine() -> dict:
    """The facts a reader needs to judge the figures."""
    return {"cores": os.cpu_count(), "python": platform.python_version(), "sqlite": sqlite3.sqlite_version,
            "platform": platform.platform(), "machine": platform.machine(),
            "loadavg_start": list(os.getloadavg())}


def _fmt(value: float | None, unit: str) -> str:
    if value is None:
        return "-"
    if unit in ("s",):
        return f"{value:.3f}"
    if abs(value) >= 100:
        return f"{value:.0f}"
    return f"{value:.2f}"


def table(figures: list[dict]) -> str:
    """Markdown: figure, measure, LOCAL median [min–max], baseline median, ratio median [min–max], goal, met."""
    lines = ["| figure | measure | LOCAL median [min–max] | baseline median [min–max] | ratio median [min–max] | goal | met |",
             "|---|---|---|---|---|---|---|"]
    for f in figures:
        u = f["unit"]
        loc = f"{_fmt(f['local']['median'], u)} [{_fmt(f['local']['min'], u)}–{_fmt(f['local']['max'], u)}] {u}"
        if f.get("baseline"):
            b = f["baseline"]
            base = f"{_fmt(b['median'], u)} [{_fmt(b['min'], u)}–{_fmt(b['max'], u)}] {u}"
            ra = f["ratio"]
            ratio = f"{ra['median']:.2f}× [{ra['min']:.2f}–{ra['max']:.2f}]" if ra else "-"
        else:
            base = ratio = "-"
        met = {True: "yes", False: "**no**", None: "-"}[f.get("goal_met")]
        lines.append(f"| {f['name']} | {f['measure']} | {loc} | {base} | {ratio} | {f.get('goal') or '-'} | {met} |")
    return "\n".join(lines)


def _commit() -> str:
    """The checkout's short commit, marked when the work tree has changes; "unknown" outside git."""
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True,
                              text=True, check=True, timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=REPO,
                               capture_output=True, text=True, check=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return f"{head} (with uncommitted changes)" if dirty else head


def _shown(path: Path) -> str:
    """``path`` relative to the checkout when it is inside it (as a reader would find it), else as given."""
    try:
        return str(path.resolve().relative_to(REPO))
    except ValueError:
        return str(path)


def results_page(document: dict, command: str, commit: str, written_at: str, json_path: str) -> str:
    """The Markdown page of one run: who wrote it, on what, under which load, then the table.

    Args:
        document: what ``main`` writes to the JSON (``machine``, ``figures``, ``firestore_emulator``).
        command: the command line that ran, as a reader would type it.
        commit: the checkout's commit (``_commit``).
        written_at: the run's end, UTC.
        json_path: where the run's raw values went (``--out``).
    """
    facts = document["machine"]
    names = sorted({f["name"] for f in document["figures"]})
    lines = ["# `make bench` results", "",
             f"Written by `{command}` (what `make bench` runs; tools/bench.py). Do not edit by hand: run it again. What each figure "
             "measures and its goal: docs/benchmarks.md.", "",
             f"- commit {commit}, finished {written_at}, {facts['bench_seconds']} s",
             f"- {facts['cores']} cores {facts['machine']}, {facts['platform']}, Python {facts['python']}, "
             f"SQLite {facts['sqlite']}",
             f"- load average {facts['loadavg_start'][0]:.1f} at the start, {facts['loadavg_end'][0]:.1f} at the end "
             "(ratios compare two sides of one run; absolute times depend on the load)",
             f"- figures run: {', '.join(names)}; Firestore emulator: {document['firestore_emulator']}",
             f"- raw values: `{json_path}` ({'tiny sizes' if document['tiny'] else 'full sizes'})", "",
             table(document["figures"]), "", extra_tables(document), ""]
    return "\n".join(lines)


def extra_tables(document: dict) -> str:
    """The count tables (no times, no baselines): LINE pushes per resident action (``pushes``) and
    Firestore round trips per operation (``rpcs``); each says why it is missing when it did not run."""
    from tools import bench_pushes, bench_round_trips

    parts = ["## LINE pushes per action", ""]
    pushes = document.get("pushes_per_action")
    parts.append(bench_pushes.table(pushes) if pushes is not None else "Not measured in this run (`--only pushes`).")
    parts += ["", "## Firestore round trips per operation", ""]
    trips = document.get("store_round_trips")
    parts.append(bench_round_trips.table(trips) if trips is not None else
                 f"Not measured in this run (Firestore emulator: {document.get('firestore_emulator')}).")
    return "\n".join(parts)


def _quiet_logs(path: Path) -> None:
    """LOCAL's structured logs of the in-process figures go to a file (their cost stays in the figures)."""
    from shared import keys, logs

    handler = logging.FileHandler(path)
    handler.setFormatter(logs.JsonFormatter())
    logger = logging.getLogger("local")
    logger.handlers[:] = [handler]
    logger.setLevel(logging.INFO)
    logger.propagate = False
    logs.use_user_hasher(keys.UserHasher.from_keys(keys.SigningKeys(b"bench-signing-key", 1)))


def _firestore(sizes: Sizes, say: Callable[[str], None],
               only: set[str]) -> tuple[list[dict], str | None, list[dict] | None]:
    """On the Firestore emulator (FIRESTORE_EMULATOR_HOST, or one started here): P3 and P5 (``emulator``
    in ``only``) and the round trips per operation (``rpcs``); (rows, why none ran, round-trip rows or None)."""
    host = os.environ.get("FIRESTORE_EMULATOR_HOST")
    emulator = None
    if not host:
        try:
            from tests.contract import firestore_emulator  # standard library only; shared with the tests
        except ImportError:
            return [], "tests/contract/firestore_emulator.py not found", None
        gcloud = firestore_emulator.find_gcloud()
        if gcloud is None:
            return [], firestore_emulator.NOT_INSTALLED, None
        emulator = firestore_emulator.Emulator(gcloud)
        try:
            host = emulator.start()
        except firestore_emulator.EmulatorError as exc:
            return [], f"emulator did not start: {str(exc).splitlines()[0]}", None
        say(f"Firestore emulator on {host} (started in {emulator.started_seconds:.1f} s)")
    os.environ["FIRESTORE_EMULATOR_HOST"] = host
    try:
        trips = None
        if "rpcs" in only:
            from tools.bench_round_trips import measure

            with tempfile.TemporaryDirectory(prefix="local-bench-rpcs-") as rpc_tmp:
                trips = measure(Path(rpc_tmp), say)
        if "emulator" not in only:
            return [], None, trips
        from google.cloud import firestore

        from shared.store.firestore import FirestoreStore

        project = f"bench-{os.getpid()}-{time.monotonic_ns()}"
        store = FirestoreStore(project, deadline_seconds=5.0)
        client = firestore.Client(project=project)
        settings = _settings(f"firestore://{project}")
        fs_sizes = replace(sizes, creates=sizes.emulator_creates, create_rounds=sizes.emulator_rounds,
                           approval_rounds=1)
        rows = handoff_create(fs_sizes, store, settings, lambda docs: plain.firestore_batch(client, docs),
                              " (emulator)", say)
        rows += approvals(fs_sizes, store, settings,
                          lambda n: plain.firestore_concurrent_updates(client, "plain_counter", "one", n),
                          " (emulator)", say)
        for row in rows:
            row["note"] = ("Firestore EMULATOR figure: says nothing about production latency. " + row["note"]).strip()
        return rows, None, trips
    finally:
        if emulator is not None:
            stopping = time.perf_counter()
            emulator.stop()
            say(f"Firestore emulator stopped in {time.perf_counter() - stopping:.1f} s")


def _start_standin(tmp: Path, *, forked: bool) -> tuple[Any, str]:
    """``python -m tools.line_standin --port PORT`` as its own process, in its own session (forked
    from the preloaded fork server when ``forked``, as the servers are): (process handle, base URL).

    Raises:
        SystemExit: it exited, or did not listen within 60 s.
    """
    port = free_port()
    args, env, log_path = ["--port", str(port)], {**os.environ, "PYTHONUNBUFFERED": "1"}, tmp / "line-standin.log"
    process: Any = start_module("tools.line_standin", args, env, REPO, log_path, preloaded=forked)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and process.poll() is None:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return process, f"http://127.0.0.1:{port}"
        except OSError:
            time.sleep(0.05)
    _stop(process)
    raise SystemExit(f"bench: the LINE stand-in did not start; see {log_path}")


def _stop(process: Any) -> None:
    """SIGTERM, then SIGKILL after 5 s; reaped either way."""
    for signum in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.kill(process.pid, signum)
        except ProcessLookupError:
            pass
        try:
            process.wait(timeout=5)
            return
        except subprocess.TimeoutExpired:
            continue


#: The figures run when ``--only`` is not given (``--tiny`` skips pushes, which has no tiny size).
ALL_FIGURES = "P1,P2,P3,P4,P5,knee,R1,R2,emulator,pushes,rpcs"
TINY_FIGURES = "P1,P2,P3,P4,P5,knee,R1,R2,emulator,rpcs"


def _arguments(argv: list[str] | None) -> argparse.Namespace:
    """``main``'s command line parsed (see ``main``). Raises SystemExit (argparse) on a bad one."""
    parser = argparse.ArgumentParser(prog="python -m tools.bench")
    parser.add_argument("--tiny", action="store_true")
    parser.add_argument("--out", type=Path, default=REPO / "out" / "bench.json")
    parser.add_argument("--results", type=Path, default=None)
    parser.add_argument("--no-emulator", action="store_true")
    parser.add_argument("--only", default=None,
                        help="a subset of P1,P2,P3,P4,P5,knee,R1,R2,emulator,pushes,rpcs (default: all; "
                             "with --tiny all but pushes, which has no tiny size)")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    """Run every figure, print the table, write the JSON; returns 0.

    Args:
        argv: ``--tiny`` (the smoke test's sizes), ``--out PATH`` (default out/bench.json),
            ``--results PATH`` (the Markdown page; default docs/results/bench.md, or beside ``--out``
            with ``--tiny``), ``--no-emulator`` (skip the Firestore emulator figures),
            ``--only P1,P2,…,R1,R2`` (a subset).
    """
    args = _arguments(argv)
    sizes = TINY if args.tiny else FULL
    only = set((args.only or (TINY_FIGURES if args.tiny else ALL_FIGURES)).split(","))
    started = time.perf_counter()

    def say(text: str) -> None:
        print(f"[{time.perf_counter() - started:6.1f} s] {text}", file=sys.stderr, flush=True)

    facts = machine()
    pushes: list[dict] | None = None
    with tempfile.TemporaryDirectory(prefix="local-bench-") as tmp_name:
        tmp = Path(tmp_name)
        _quiet_logs(tmp / "in-process.log")
        # The figures that send to LINE (the emulator's use cases do not) get the stand-in, a process of its own.
        standin, standin_url = (_start_standin(tmp, forked=sizes.forked_servers)
                                if only & {"P1", "P2", "P4", "knee", "R2"}
                                else (None, "http://127.0.0.1:9"))
        try:
            figures = _local_figures(sizes, only, tmp, standin_url, say)
            if "pushes" in only:
                from tools.bench_pushes import pushes_per_action

                pushes = pushes_per_action(say)
            rows, emulator_note, round_trips = _emulator_figures(sizes, only, args.no_emulator, say)
            figures += rows
        finally:
            if standin is not None:
                _stop(standin)
    facts["loadavg_end"] = list(os.getloadavg())
    facts["bench_seconds"] = round(time.perf_counter() - started, 1)
    document = {"machine": facts, "sizes": sizes.__dict__, "tiny": args.tiny, "figures": figures,
                "firestore_emulator": emulator_note or ("ran" if only & {"emulator", "rpcs"} else "not asked (--only)"),
                "pushes_per_action": pushes, "store_round_trips": round_trips}
    results = _write_outputs(document, args, argv)
    _print_summary(document, emulator_note, args.out, results)
    return 0


def _bench_env(tmp: Path, standin_url: str) -> dict[str, str]:
    """The servers' environment: this process's, without its LINE_/LOCAL_/GEMINI_ settings, plus the
    bench's own (the stand-in at ``standin_url``, a SQLite store under ``tmp``, the offline model)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LINE_", "LOCAL_", "GEMINI_"))}
    env.update({"LINE_CHANNEL_SECRET": SECRET, "LINE_CHANNEL_ACCESS_TOKEN": TOKEN,
                "LINE_API_BASE_URL": standin_url, "LOCAL_STORE_URL": f"sqlite:///{tmp}/webhook.sqlite3",
                "LOCAL_SIGNING_KEY": "bench-signing-key", "LOCAL_TENANT_ID": TENANT,
                "LOCAL_MODEL": "offline", "LOCAL_INTERNAL_TOKEN": "bench-internal-token"})
    return env


def _local_figures(sizes: Sizes, only: set[str], tmp: Path, standin_url: str,
                   say: Callable[[str], None]) -> list[dict]:
    """The figures on this machine's SQLite and servers, those of them in ``only``, in the table's
    order: P1, P2, P3, P5, P4, knee, R1, R2 (rows as ``table`` reads them)."""
    env = _bench_env(tmp, standin_url)
    figures: list[dict] = []
    if "P1" in only:
        figures += cold_start(sizes, env, tmp, say)
    if "P2" in only:
        figures += steady_and_memory(sizes, env, tmp, say)
    if "P3" in only or "P5" in only:
        figures += _sqlite_use_cases(sizes, only, tmp / "usecases.sqlite3", say)
    if "P4" in only:
        figures += reconcile_drain(sizes, tmp / "reconcile.sqlite3", standin_url, say)
    if "knee" in only:
        figures += burst_knee(sizes, env, tmp, say)
    return figures + reading_cost(only, sizes, env, tmp, say)


def _sqlite_use_cases(sizes: Sizes, only: set[str], path: Path, say: Callable[[str], None]) -> list[dict]:
    """P3 (handoff create) and P5 (approvals), those in ``only``, on a SQLite store at ``path``, each
    beside the same writes made with plain SQLite (one connection per thread)."""
    from shared.store.sqlite import SqliteStore

    settings = _settings(f"sqlite:///{path}")
    store = SqliteStore(str(path), deadline_seconds=settings.store_deadline_seconds)
    local_plain = threading.local()

    def plain_write(docs: list) -> None:
        conn = getattr(local_plain, "conn", None)
        if conn is None:
            conn = local_plain.conn = plain.connect(str(path))
        plain.insert_documents(conn, docs)

    figures: list[dict] = []
    if "P3" in only:
        figures += handoff_create(sizes, store, settings, plain_write, "", say)
    if "P5" in only:
        figures += approvals(sizes, store, settings, lambda n: plain.concurrent_updates(str(path), n), "", say)
    return figures


def _emulator_figures(sizes: Sizes, only: set[str], no_emulator: bool,
                      say: Callable[[str], None]) -> tuple[list[dict], str | None, list[dict] | None]:
    """The Firestore emulator's figures when ``only`` asks for them (``emulator``, ``rpcs``) and
    ``--no-emulator`` was not given: (rows, why none ran or None, round-trip rows or None)."""
    asked = only & {"emulator", "rpcs"}
    if asked and not no_emulator:
        return _firestore(sizes, say, only)
    return [], ("skipped (--no-emulator)" if asked else None), None


def _write_outputs(document: dict, args: argparse.Namespace, argv: list[str] | None) -> Path:
    """Write the run's JSON (``--out``) and its Markdown page; returns the page's path (``--results``,
    else beside ``--out`` with ``--tiny``, else docs/results/bench.md)."""
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(document, ensure_ascii=False, indent=2) + "\n")
    results = args.results or (args.out.with_suffix(".md") if args.tiny else REPO / "docs" / "results" / "bench.md")
    command = " ".join(["python -m tools.bench", *(argv if argv is not None else sys.argv[1:])])
    results.parent.mkdir(parents=True, exist_ok=True)
    results.write_text(results_page(document, command, _commit(),
                                    time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), _shown(args.out)),
                       encoding="utf-8")
    return results


def _print_summary(document: dict, emulator_note: str | None, out: Path, results: Path) -> None:
    """Print the machine line, the tables, why the emulator figures did not run (if so) and the
    files written, on stdout."""
    facts = document["machine"]
    print(f"LOCAL bench — {facts['cores']} cores, Python {facts['python']}, SQLite {facts['sqlite']}, "
          f"{facts['platform']}; load average {facts['loadavg_start'][0]:.1f} → {facts['loadavg_end'][0]:.1f}; "
          f"{facts['bench_seconds']} s")
    print(table(document["figures"]))
    print(extra_tables(document))
    if emulator_note:
        print(f"Firestore emulator figures: {emulator_note}")
    print(f"written: {out}, {results}")


if __name__ == "__main__":
    raise SystemExit(main())
