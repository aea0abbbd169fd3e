"""``make bench``'s push table: LINE pushes per resident action, for each flow, measured.

Replies are free and pushes count against the LINE plan's monthly messages (docs/delivery.md#push-quota),
so the figure that matters is how many pushes one thing a resident (or a staff member) does costs.
It is measured, not typed: the real functions as processes (webhook, agent, reconcile, memory:
functions-framework, the embedded queues in one SQLite file), signed webhook bodies, the LINE
stand-in (``tools.line_standin``) and the Gemini stand-in for the model. For each action the pushes
LINE accepted are counted from the stand-in's record once the queues are settled, split by who
received them (the resident, the staff group: LINE counts a group push once per member), and set
beside what LOCAL's own counter (``line_push_counts``, ``shared.push_count``) added.
"""
from __future__ import annotations

import os
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import requests

from tools.function_process import FunctionProcess, prepare_sqlite_file, queues_settled
from tools.gemini_standin import GeminiStandin
from tools.line_events import postback_event, sign, text_event, webhook_body
from tools.line_messages import postbacks
from tools.line_standin import PUSH_PATH, REPLY_PATH, LineStandin

SECRET, TOKEN, TENANT = "bench-channel-secret", "bench-access-token", "bench"
RESIDENT = "U" + "1" * 32
STAFF = "U" + "5" * 32
GROUP = "C" + "9" * 32
FAST_QUEUE = {"LOCAL_QUEUE_MIN_BACKOFF_SECONDS": "0.2", "LOCAL_QUEUE_MAX_BACKOFF_SECONDS": "1",
              "LOCAL_QUEUE_MAX_ATTEMPTS": "3", "LOCAL_RECONCILE_DELAY_SECONDS": "0.3"}
#: How long one action may take to settle, in seconds (a cold model turn is the slowest).
SETTLE_SECONDS = 60.0


@dataclass(frozen=True)
class Action:
    """One row: ``flow`` (what happened), ``action`` (what the person did), and the measurement."""

    flow: str
    action: str
    to_resident: int
    to_group: int
    replies: int
    counted: int

    def row(self) -> dict:
        """The JSON row of ``out/bench.json``."""
        return {"flow": self.flow, "action": self.action, "pushes_to_resident": self.to_resident,
                "pushes_to_staff_group": self.to_group, "replies": self.replies, "counted": self.counted}


class Deployment:
    """The functions wired together on one SQLite store, with the two stand-ins."""

    def __init__(self, tmp: Path, line: LineStandin, gemini: GeminiStandin):
        self.line = line
        self.store_url = f"sqlite:///{tmp / 'pushes.sqlite3'}"
        prepare_sqlite_file(self.store_url)
        base = {"LINE_CHANNEL_SECRET": SECRET, "LINE_CHANNEL_ACCESS_TOKEN": TOKEN, "LINE_API_BASE_URL": line.url,
                "LOCAL_STORE_URL": self.store_url, "LOCAL_TENANT_ID": TENANT, "LOCAL_SIGNING_KEY": "bench-signing-key",
                "LOCAL_INTERNAL_TOKEN": "bench-internal-token", "LOCAL_STAFF_GROUP_ID": GROUP,
                "LOCAL_STAFF_USER_IDS": STAFF, "LOCAL_MODEL": "standin", "GOOGLE_GEMINI_BASE_URL": gemini.url,
                **FAST_QUEUE}
        self.processes: list[FunctionProcess] = []
        memory = self._start("memory", base, tmp)
        reconcile = self._start("reconcile", base, tmp)
        wired = {**base, "MEMORY_FUNCTION_URL": memory.url, "RECONCILE_FUNCTION_URL": reconcile.url}
        agent = self._start("agent", wired, tmp)
        wired["AGENT_FUNCTION_URL"] = agent.url
        self.router_first = self._start("webhook", {**wired, "LOCAL_READER": "router_first"}, tmp).url
        self.model_first = self._start("webhook", {**wired, "LOCAL_READER": "model_first"}, tmp).url

    def _start(self, name: str, env: dict[str, str], tmp: Path) -> FunctionProcess:
        full = {k: v for k, v in os.environ.items() if not k.startswith(("LINE_", "LOCAL_", "GEMINI_"))}
        process = FunctionProcess(name, {**full, **env}, tmp / f"{name}-{len(self.processes)}.log", preloaded=True)
        self.processes.append(process)
        return process

    def stop(self) -> None:
        for process in self.processes:
            process.stop()

    def post(self, url: str, event: dict) -> None:
        body = webhook_body([event], "U" + "0" * 32)
        response = requests.post(url, data=body, timeout=30, headers={"Content-Type": "application/json",
                                                                      "X-Line-Signature": sign(body, SECRET)})
        if response.status_code != 200:
            raise SystemExit(f"bench: the webhook answered {response.status_code} to a {event['type']} event")

    def settled(self) -> bool:
        """Every task of both embedded queues has finished."""
        return queues_settled(self.store_url)

    def counted(self) -> int:
        """LOCAL's own count of pushes this month (``line_push_counts``)."""
        from shared.clock import utc_now
        from shared.push_count import PushCounter
        from shared.store.sqlite import SqliteStore, path_from_url

        store = SqliteStore(path_from_url(self.store_url), read_only=True)
        try:
            return PushCounter(store, TENANT, utc_now).this_month().pushes
        finally:
            store.close()


def _wait(predicate: Callable[[], object], what: str) -> object:
    deadline = time.monotonic() + SETTLE_SECONDS
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.05)
    raise SystemExit(f"bench: timed out waiting for {what}")


def _answered(line: LineStandin, event: dict, since: int) -> list[dict]:
    """Accepted replies to the event's token and pushes to its sender, after ``since``."""
    user = event["source"].get("userId")
    return line.calls(since, lambda c: c["status"] == 200 and (
        (c["path"] == REPLY_PATH and (c["body"] or {}).get("replyToken") == event["replyToken"])
        or (c["path"] == PUSH_PATH and (c["body"] or {}).get("to") == user)))


def measure(deployment: Deployment, flow: str, action: str, url: str, event: dict) -> tuple[Action, list[dict]]:
    """Post one event, wait for its answer and for the queues to settle, and count what LINE accepted.

    Returns:
        (the row, the accepted replies to the event's token: the next step's buttons are in them).
    """
    line = deployment.line
    since = line.calls()[-1]["seq"] if line.calls() else 0
    counted = deployment.counted()
    deployment.post(url, event)
    _wait(lambda: _answered(line, event, since), f"the answer of {flow}")
    time.sleep(0.3)  # a task queued by the answer's own transaction is in the queue by now
    _wait(deployment.settled, f"the queues after {flow}")
    accepted = line.calls(since, lambda c: c["status"] == 200)
    pushes = [c for c in accepted if c["path"] == PUSH_PATH]
    replies = [c for c in accepted if c["path"] == REPLY_PATH and c["body"]["replyToken"] == event["replyToken"]]
    row = Action(flow, action, sum(c["body"]["to"] != GROUP for c in pushes),
                 sum(c["body"]["to"] == GROUP for c in pushes), len(replies), deployment.counted() - counted)
    return row, replies


def _stale(event: dict) -> dict:
    """The same event, two minutes old: its reply token is past LOCAL_REPLY_TOKEN_FRESH_SECONDS when
    the worker answers (as when the model takes longer than the token lasts)."""
    event["timestamp"] = int((time.time() - 120) * 1000)
    return event


def _buttons(calls: list[dict]) -> dict[str, str]:
    return postbacks([message for call in calls for message in call["body"]["messages"]])


def flows(deployment: Deployment) -> list[Action]:
    """Every flow once, in order (each step's buttons come from the answer before it)."""
    rows = []
    row, _ = measure(deployment, "search answer", "asks 花壇有素食店嗎？", deployment.router_first,
                     text_event("花壇有素食店嗎？", user_id=RESIDENT))
    rows.append(row)
    row, _ = measure(deployment, "queued model answer (token fresh)", "asks 這週末彰化市有什麼活動？",
                     deployment.model_first, text_event("這週末彰化市有什麼活動？", user_id=RESIDENT))
    rows.append(row)
    row, _ = measure(deployment, "queued model answer (token stale: the model took over 50 s)",
                     "asks 這週末彰化市有什麼活動？", deployment.model_first,
                     _stale(text_event("這週末彰化市有什麼活動？", user_id=RESIDENT)))
    rows.append(row)
    row, card = measure(deployment, "handoff draft", "types 新需求：…", deployment.router_first,
                        text_event("新需求：想參加週六的社區走讀，需要輪椅協助", user_id=RESIDENT))
    rows.append(row)
    row, _ = measure(deployment, "handoff create", "taps 確認送出", deployment.router_first,
                     postback_event(_buttons(card)["確認送出"], user_id=RESIDENT))
    rows.append(row)
    group_card = deployment.line.calls(0, lambda c: c["status"] == 200 and c["path"] == PUSH_PATH
                                       and c["body"]["to"] == GROUP)
    row, tapped = measure(deployment, "staff take notice", "staff tap 我來處理", deployment.router_first,
                          postback_event(_buttons(group_card)["我來處理"], user_id=STAFF, group_id=GROUP))
    rows.append(row)
    row, _ = measure(deployment, "staff complete notice", "staff tap 已完成", deployment.router_first,
                     postback_event(_buttons(tapped)["已完成"], user_id=STAFF, group_id=GROUP))
    rows.append(row)
    row, consent = measure(deployment, "consent card", "types 長輩吃素，以後優先找蔬食，幫我記住",
                           deployment.router_first, text_event("長輩吃素，以後優先找蔬食，幫我記住", user_id=RESIDENT))
    rows.append(row)
    row, _ = measure(deployment, "memory outcome", "taps 同意記住", deployment.router_first,
                     postback_event(_buttons(consent)["同意記住"], user_id=RESIDENT))
    rows.append(row)
    return rows


def pushes_per_action(say: Callable[[str], None]) -> list[dict]:
    """The push table's rows (``Action.row``), measured once (counts, not times: one run is the figure)."""
    with tempfile.TemporaryDirectory(prefix="local-bench-pushes-") as tmp_name, \
            LineStandin(access_token=TOKEN) as line, GeminiStandin() as gemini:
        started = time.perf_counter()
        deployment = Deployment(Path(tmp_name), line, gemini)
        try:
            rows = [action.row() for action in flows(deployment)]
        finally:
            deployment.stop()
        say(f"pushes per action: {len(rows)} flows in {time.perf_counter() - started:.1f} s")
        return rows


def table(rows: list[dict]) -> str:
    """Markdown: flow, action, pushes to the resident, to the staff group, replies, LOCAL's own count."""
    lines = ["| flow | the person | pushes to the resident | pushes to the staff group (× members) | replies | "
             "counted (`line_push_counts`) |", "|---|---|---|---|---|---|"]
    lines += [f"| {r['flow']} | {r['action']} | {r['pushes_to_resident']} | {r['pushes_to_staff_group']} | "
              f"{r['replies']} | {r['counted']} |" for r in rows]
    return "\n".join(lines)
