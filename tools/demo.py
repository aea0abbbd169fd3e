"""``make demo OUT=DIR``: the four fault scenarios of a handoff, replayed through the real functions.

Each case (baseline, after_commit, before_write, lookup_unavailable: docs/design.md §4) gets its
own temporary SQLite store, its own LINE stand-in and its own two functions-framework processes
(``webhook`` and ``reconcile``), wired by the embedded queue with short backoff (min 0.2 s, max
1 s, 3 attempts). A resident sends ``新需求：…``, taps 「確認送出」 on the card, and the demo
records what the first answer was, how many request rows the store held right then, what the
reconcile function did, how many rows there were at the end, and which request id the user was
told (none where the outcome stays unknown). Faults come from ``LOCAL_FAULTS``: the webhook gets
AFTER_COMMIT or BEFORE_WRITE, reconcile gets LOOKUP_UNAVAILABLE.

Writes ``DIR/report.json`` (``{"rows": [{"case", "first_result", "rows_at_timeout", "action",
"final_rows", "request_id"}], ...}``), ``DIR/REPORT.html`` (a readable table linked to the
snapshots), and per case ``DIR/<case>/step-NN-<label>.json`` (every stored document and queue task
at that step) plus the two functions' logs. The cases run side by side; the whole run takes well
under 2 minutes. No variable is needed: the environment's LINE_* and LOCAL_* are ignored.

Run: ``python -m tools.demo --out out/demo``. Exit status 0 when every case settled, 1 otherwise.
Source: docs/design.md §4 (fault seam, demo: the four scenarios).
"""
from __future__ import annotations

import argparse
import html
import itertools
import json
import os
import secrets
import sqlite3
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

import requests

from shared.handoff.codes import SHOWN as SHOWN_CODE
from tools import line_events
from tools.chat import DEFAULT_DESTINATION
from tools.function_process import FunctionProcess
from tools.line_standin import LineStandin

REPO = Path(__file__).resolve().parents[1]
USER_ID = "U5eed0001a2b3c4d5e6f708192a3b4c5d"
REQUEST_TEXT = "新需求：想參加週六的社區走讀，長輩需要輪椅協助，請真人幫忙確認"
#: The request's number as the user reads it (``A7K-3QF``, shared.handoff.codes).
REQUEST_ID = SHOWN_CODE
CASE_TIMEOUT_SECONDS = 60.0
#: Short timings so every case settles in seconds.
DEMO_TIMINGS = {"LOCAL_QUEUE_MIN_BACKOFF_SECONDS": "0.2", "LOCAL_QUEUE_MAX_BACKOFF_SECONDS": "1",
                "LOCAL_QUEUE_MAX_ATTEMPTS": "3", "LOCAL_RECONCILE_DELAY_SECONDS": "0.5",
                "LOCAL_EVENT_LEASE_SECONDS": "1"}


@dataclass(frozen=True)
class Case:
    """One scenario of the table: faults for the webhook and for reconcile."""

    name: str
    webhook_faults: str
    reconcile_faults: str
    title: str


CASES = (
    Case("baseline", "", "", "正常送出"),
    Case("after_commit", "AFTER_COMMIT", "", "後端已提交，回條遺失"),
    Case("before_write", "BEFORE_WRITE", "", "寫入之前中斷"),
    Case("lookup_unavailable", "AFTER_COMMIT", "LOOKUP_UNAVAILABLE", "回條遺失，查回也受阻"),
)


def snapshot(store_path: Path) -> dict[str, Any]:
    """Every stored document, grouped by collection, and every queue task, read through a ``mode=ro``
    connection: the store's truth at one instant."""
    if not store_path.exists():
        return {"documents": {}, "counts": {}, "queue_tasks": []}
    conn = sqlite3.connect(f"file:{store_path}?mode=ro", uri=True, timeout=5)
    try:
        documents: dict[str, list] = {}
        for collection, doc_id, data in conn.execute(
                "SELECT collection, id, data FROM documents ORDER BY collection, id"):
            documents.setdefault(collection, []).append({"id": doc_id, **json.loads(data)})
        try:
            tasks = [dict(zip(("name", "state", "attempts", "last_status", "payload"), row[:4] + (json.loads(row[4]),)))
                     for row in conn.execute("SELECT name, state, attempts, last_status, payload FROM queue_tasks")]
        except sqlite3.OperationalError:
            tasks = []
    except sqlite3.OperationalError:
        documents, tasks = {}, []
    finally:
        conn.close()
    return {"documents": documents, "counts": {name: len(docs) for name, docs in documents.items()},
            "queue_tasks": tasks}


def wait_until(predicate: Callable[[], Any], timeout_s: float, interval_s: float = 0.05) -> Any:
    """Poll ``predicate`` until it returns something truthy (returned) or ``timeout_s`` passes (None)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval_s)
    return None


def describe_action(first_result: str, answers: list[dict]) -> str:
    """What happened after the first answer, in the words of the scenario table, from reconcile's answers."""
    outcomes = [a.get("outcome") for a in answers]
    if first_result == "request_created":
        note = "（之後的送達檢查只確認已告知，未再推播）" if outcomes else ""
        return f"保留回條：已直接告知單號，不需查回 keep the receipt{note}"
    if outcomes and outcomes[-1] == "needs_human_followup":
        retries = sum(1 for o in outcomes if o == "lookup_unavailable")
        return (f"保留待查證：查回受阻，依退避重試共 {len(outcomes)} 次（{retries} 次 503）後停止自動流程，"
                "標記 needs_human_followup，未建第二筆 stay pending_verification → needs_human_followup")
    if "created" in outcomes:
        return ("用原鍵查回：查無紀錄 → 以同鍵重送一次並建立，推播回條 "
                "reconcile: not_found → one create with the same key")
    if "found" in outcomes:
        return "用原鍵查回：找到原紀錄 → 推播原本的回條 reconcile: found → original receipt pushed"
    return "未完成：" + " → ".join(str(o) for o in outcomes)


class _CaseRun:
    """Everything one case needs: a store, a stand-in, two function processes, and its output folder."""

    def __init__(self, case: Case, out_dir: Path, work_dir: Path):
        self.case = case
        self.dir = out_dir / case.name
        self.dir.mkdir(parents=True, exist_ok=True)
        for old in self.dir.glob("step-*.json"):
            old.unlink()
        self.store_path = work_dir / "store.sqlite3"
        self.secret = "demo-channel-secret-" + secrets.token_hex(8)
        self.token = "demo-access-token-" + secrets.token_hex(8)
        self.snapshots: list[dict] = []

    def env(self, standin_url: str, faults: str, **extra: str) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("LINE_", "LOCAL_", "RECONCILE_", "MEMORY_"))}
        env.update({
            "LINE_CHANNEL_SECRET": self.secret, "LINE_CHANNEL_ACCESS_TOKEN": self.token,
            "LINE_API_BASE_URL": standin_url, "LOCAL_STORE_URL": f"sqlite:///{self.store_path}",
            "LOCAL_TENANT_ID": "demo", "LOCAL_TIMEZONE": "Asia/Taipei",
            "LOCAL_SIGNING_KEY": "demo-signing-key-" + self.secret[-16:],
            "LOCAL_INTERNAL_TOKEN": "demo-internal-token-" + self.token[-16:],
            "LOCAL_FAULTS": faults, "PYTHONUNBUFFERED": "1", **DEMO_TIMINGS, **extra,
        })
        return env

    def post(self, url: str, event: dict) -> int:
        body = line_events.webhook_body([event], DEFAULT_DESTINATION)
        response = requests.post(url, data=body, timeout=10, headers={
            "Content-Type": "application/json", "X-Line-Signature": line_events.sign(body, self.secret)})
        return response.status_code

    def snap(self, label: str) -> dict:
        taken = snapshot(self.store_path)
        step = {"case": self.case.name, "step": len(self.snapshots) + 1, "label": label,
                "taken_at": datetime.now(timezone.utc).isoformat(), **taken}
        name = f"step-{step['step']:02d}-{label}.json"
        (self.dir / name).write_text(json.dumps(step, ensure_ascii=False, indent=2), encoding="utf-8")
        self.snapshots.append({"label": label, "file": f"{self.case.name}/{name}",
                               "rows": taken["counts"].get("handoff_requests", 0)})
        return taken

    def run(self) -> dict:
        standin = LineStandin(access_token=self.token).start()
        functions: list[FunctionProcess] = []
        try:
            reconcile = FunctionProcess("reconcile", self.env(standin.url, self.case.reconcile_faults),
                                  self.dir / "reconcile.log", preloaded=True)
            functions.append(reconcile)
            webhook = FunctionProcess("webhook", self.env(standin.url, self.case.webhook_faults,
                                                    RECONCILE_FUNCTION_URL=reconcile.url), self.dir / "webhook.log",
                                      preloaded=True)
            functions.append(webhook)
            return self._replay(standin, webhook, reconcile)
        finally:
            with ThreadPoolExecutor(max_workers=2) as pool:
                list(pool.map(lambda function: function.stop(), functions))
            standin.stop()

    def _replay(self, standin: LineStandin, webhook: FunctionProcess, reconcile: FunctionProcess) -> dict:
        text_event = line_events.text_event(REQUEST_TEXT, user_id=USER_ID)
        # As LINE does with redelivery on: a busy answer (503, a loaded machine) is sent again, and
        # the card may come from the queued worker a moment after the 200.
        sends = itertools.chain([text_event], itertools.repeat({**text_event, "deliveryContext": {"isRedelivery": True}}))
        if not wait_until(lambda: self.post(webhook.url, next(sends)) == 200, 30, interval_s=0.5):
            raise RuntimeError("the webhook did not accept the request text")
        card_calls = wait_until(lambda: [c for c in standin.calls() if c["path"] == "/v2/bot/message/reply"
                                         and c["status"] == 200
                                         and c["body"]["replyToken"] == text_event["replyToken"]], 30)
        if not card_calls:
            raise RuntimeError("the confirmation card never came")
        [card_call] = card_calls
        footer = card_call["body"]["messages"][0]["contents"]["footer"]["contents"]
        confirm = next(b["action"]["data"] for b in footer if b["action"]["label"] == "確認送出")
        drafts = self.snap("card")["documents"].get("handoff_drafts", [])
        key = drafts[0]["idempotency_key"]

        tap = line_events.postback_event(confirm, user_id=USER_ID)
        if self.post(webhook.url, tap) != 200:
            raise RuntimeError("the webhook did not accept the confirmation")
        at_timeout = self.snap("first-answer")
        answered = wait_until(lambda: webhook.log_entries("handoff confirmation answered"), 5)
        first_result = answered[-1]["reply_state"] if answered else "unknown"

        def settled() -> bool:
            tasks = [t for t in snapshot(self.store_path)["queue_tasks"] if t["payload"].get("idempotency_key") == key]
            return bool(tasks) and all(t["state"] in ("succeeded", "failed") for t in tasks)

        done = wait_until(settled, CASE_TIMEOUT_SECONDS)
        final = self.snap("settled" if done else "timed-out")
        answers = reconcile.log_entries("reconcile answered")
        told = []
        for call in standin.calls():
            if call["status"] != 200:
                continue
            body = call.get("body") or {}
            if (call["path"] == "/v2/bot/message/reply" and body.get("replyToken") == tap["replyToken"]) or (
                    call["path"] == "/v2/bot/message/push" and body.get("to") == USER_ID):
                told += REQUEST_ID.findall(json.dumps(body, ensure_ascii=False))
        row = {
            "case": self.case.name,
            "first_result": first_result,
            "rows_at_timeout": at_timeout["counts"].get("handoff_requests", 0),
            "action": describe_action(first_result, answers),
            "final_rows": final["counts"].get("handoff_requests", 0),
            "request_id": told[0] if told else None,
        }
        detail = {"title": self.case.title, "settled": bool(done), "told_request_ids": told,
                  "reconcile_answers": [{k: a.get(k) for k in ("retry_count", "status", "outcome", "notice")}
                                        for a in answers],
                  "snapshots": self.snapshots,
                  "faults": {"webhook": self.case.webhook_faults, "reconcile": self.case.reconcile_faults}}
        return {"row": row, "detail": detail}


def run_case(case: Case, out_dir: Path) -> dict:
    """Replay one case in its own temporary folder (store, logs stay in ``out_dir/<case>``)."""
    with tempfile.TemporaryDirectory(prefix=f"local-demo-{case.name}-") as work:
        return _CaseRun(case, out_dir, Path(work)).run()


def render_html(report: dict) -> str:
    """REPORT.html: the four rows as a table, each linked to its snapshots."""
    esc = html.escape
    rows = []
    for row in report["rows"]:
        detail = report["cases"][row["case"]]
        links = " · ".join(f'<a href="{esc(s["file"])}">{esc(s["label"])} ({s["rows"]})</a>'
                           for s in detail["snapshots"])
        rows.append(
            "<tr>"
            f"<td><b>{esc(row['case'])}</b><br><small>{esc(detail['title'])}</small></td>"
            f"<td><code>{esc(row['first_result'])}</code></td>"
            f"<td class=n>{row['rows_at_timeout']}</td>"
            f"<td>{esc(row['action'])}</td>"
            f"<td class=n>{row['final_rows']}</td>"
            f"<td><code>{esc(row['request_id'] or '—（結果仍未知）')}</code></td>"
            f"<td>{links}<br><small><a href=\"{esc(row['case'])}/webhook.log\">webhook.log</a> · "
            f"<a href=\"{esc(row['case'])}/reconcile.log\">reconcile.log</a></small></td>"
            "</tr>")
    return f"""<!doctype html>
<html lang="zh-Hant"><head><meta charset="utf-8"><title>LOCAL handoff demo</title>
<style>body{{font-family:system-ui,sans-serif;margin:2em;max-width:80em}}table{{border-collapse:collapse}}
td,th{{border:1px solid #bbb;padding:.4em .6em;vertical-align:top}}th{{background:#f3f3f3}}td.n{{text-align:right}}
code{{font-size:.9em}}</style></head><body>
<h1>LOCAL：逾時之後，用原鍵查回（四種情境）</h1>
<p>Generated {esc(report['generated_at'])}. Each case ran the real <code>webhook</code> and <code>reconcile</code>
functions as separate processes, with its own SQLite store, the embedded queue (backoff 0.2–1 s, 3 attempts)
and a LINE stand-in. Row counts are <code>handoff_requests</code> documents in store snapshots taken right after
the first answer and after the queue settled. <code>request_id</code> is the request number the user was told (its display code); none where the
outcome stays unknown.</p>
<table><tr><th>情境 case</th><th>第一次的結果 first result</th><th>逾時當下筆數 rows at timeout</th>
<th>接著怎麼做 action</th><th>最後筆數 final rows</th><th>告知的單號 request id</th><th>快照 snapshots</th></tr>
{''.join(rows)}
</table>
<p>Machine-readable: <a href="report.json">report.json</a>.</p>
</body></html>
"""


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``python -m tools.demo`` (``make demo OUT=DIR``)."""
    parser = argparse.ArgumentParser(prog="python -m tools.demo", description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=REPO / "out" / "demo", help="output folder")
    args = parser.parse_args(argv)
    out_dir = args.out.resolve()
    out_dir.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    with ThreadPoolExecutor(max_workers=len(CASES)) as pool:
        results = list(pool.map(lambda case: run_case(case, out_dir), CASES))
    report = {"rows": [r["row"] for r in results],
              "cases": {r["row"]["case"]: r["detail"] for r in results},
              "generated_at": datetime.now(timezone.utc).isoformat(),
              "elapsed_seconds": round(time.monotonic() - started, 1)}
    (out_dir / "report.json").write_text(json.dumps(report, ensure_ascii=False, indent=2), encoding="utf-8")
    (out_dir / "REPORT.html").write_text(render_html(report), encoding="utf-8")
    print(json.dumps({"report": str(out_dir / "report.json"), "html": str(out_dir / "REPORT.html"),
                      "rows": report["rows"], "elapsed_seconds": report["elapsed_seconds"]}, ensure_ascii=False))
    return 0 if all(r["detail"]["settled"] for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
