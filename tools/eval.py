"""``make eval``: every case of tests/eval/cases.json through the offline router, the scripted model
or (only when approved) the live model; safety and completeness scored apart (issue 10, Build 6).

Modes (``--model``):

* ``router`` (default): free text goes through the offline router, as with no key;
* ``scripted``: through the real ADK Runner and google-genai client to the Gemini stand-in
  (tools/gemini_standin.py) on loopback; a case's ``setup.script`` is what the "model" answers. A
  case that would reach the model but has no script is listed as ``no-script`` (nothing to score);
  fixed entries and hooks still run (they must not call the model). Never the network;
* ``live``: the configured model (``GEMINI_API_KEY`` or Vertex AI), only with ``--approve-live``;
  it records what it saw in the JSON report.

Each case runs as one fresh LINE user on a fresh SQLite store, with the clock pinned to 2026-12-01
10:00 Asia/Taipei, on the repository's data, through the one routing table (fixed entries, the
request and memory hooks, then the router or the model) exactly as functions/webhook and
functions/agent route an event. ``setup.steps`` (texts and taps) run first; then the observed step
(``input``, or ``setup.observe``) is scored:

* **safety**: business writes during the observed step (``handoff_requests`` and ``preferences``
  documents; expected 0 unless ``expect.business_writes`` says otherwise), ``must_not_contain``,
  a reply was given (never silence), and for model modes that no refused call ran anything;
* **completeness**: the tool (``expect.tool``; for a model ``expect.model_tool`` when it differs:
  a model's call is audited as the router's proposal for the same ask), its arguments, the audit status, the result ids, ``must_contain``, the failure
  reason, and ``facts`` (request count, the stored preference, the request id shown).

Cases the router cannot pass are reported as failures, not hidden (a case marked ``router_fails``
says why in its row); cases that only a model path
can exercise (``expect.handled_by: "model"``: upstream errors, timeouts) are listed as ``model-only``
in router mode. The format is documented in tests/eval/README.md.

Prints the table on stdout and writes the JSON report (``--out``, default ``out/eval/<mode>.json``).
"""
from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field, replace
from datetime import date, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from shared.turn.datespec import Both, DateSpec, UnreadableDate, date_arg
from tools.line_messages import all_text, postbacks

REPO = Path(__file__).resolve().parents[1]
DEFAULT_CASES = REPO / "tests" / "eval" / "cases.json"
#: 2026-12-01 10:00 Asia/Taipei (a Tuesday), as the case file assumes.
PINNED = datetime(2026, 12, 1, 2, 0, tzinfo=timezone.utc)
USER_ID = "U0e7a1c2b3d4e5f60718293a4b5c6d7e8"
#: The staff group of cases with staff steps (``{"staff": "take", "as": "A"}``), and its members.
STAFF_GROUP = "C0e7a1c2b3d4e5f60718293a4b5c6d7e8"
STAFF_IDS = {"A": "U1111111111111111111111111111aaaa", "B": "U2222222222222222222222222222bbbb"}
TENANT = "eval"
#: Documents whose creation or change is a business write (the seed's requests and consented preferences).
BUSINESS_COLLECTIONS = ("handoff_requests", "preferences")
#: Statuses of cases that were not run in a mode: a router cannot exercise model failures; a scripted
#: run has nothing to score where no script says what the model answers.
NOT_RUN = ("model-only", "no-script")
DIET_WORDS = {"vegetarian": "蔬食", "vegan": "全素", "ovo_lacto": "蛋奶素", "lacto": "奶素"}


@dataclass
class Outcome:
    """One case's result: the two scores, why each failed, and what was observed."""

    id: str
    kind: str
    mode: str
    status: str = "ran"  # ran | model-only | error
    known: str | None = None  # the case's ``router_fails`` mark (router mode): a failure reported, not hidden
    safety: list[str] = field(default_factory=list)        # failed safety checks (empty: pass)
    completeness: list[str] = field(default_factory=list)  # failed completeness checks (empty: pass)
    observed: dict[str, Any] = field(default_factory=dict)

    @property
    def safe(self) -> bool:
        return self.status == "ran" and not self.safety

    @property
    def complete(self) -> bool:
        return self.status == "ran" and not self.completeness


class Harness:
    """Runs cases on fresh stores in a temporary directory, with an optional model behind the turn.

    Args:
        mode: ``router``, ``scripted`` or ``live``.
        workdir: where the per-case SQLite files go.
        standin: the Gemini stand-in (scripted mode).
    """

    def __init__(self, mode: str, workdir: Path, standin=None):
        self.mode = mode
        self.workdir = workdir
        self.standin = standin
        self._n = 0

    # -- one case -----------------------------------------------------------------------------------
    def run(self, case: dict) -> Outcome:
        expect, setup = case.get("expect") or {}, case.get("setup") or {}
        outcome = Outcome(case["id"], case.get("kind", ""), self.mode)
        if self.mode == "router":
            outcome.known = case.get("router_fails")
        if self.mode == "router" and expect.get("handled_by") == "model":
            outcome.status = "model-only"
            return outcome
        if self.mode == "scripted" and "script" not in setup and \
                expect.get("handled_by", "router") in ("router", "any", "model"):
            outcome.status = "no-script"  # what the model answers is not written down: nothing to score
            return outcome
        try:
            self._run(case, expect, setup, outcome)
        except Exception as exc:  # noqa: BLE001 (a case that crashes is reported, not fatal)
            outcome.status = "error"
            outcome.safety.append(f"crashed: {exc.__class__.__name__}: {exc}")
        return outcome

    def _run(self, case: dict, expect: dict, setup: dict, outcome: Outcome) -> None:
        from shared.store.sqlite import SqliteStore

        self._n += 1
        path = self.workdir / f"case-{self._n}.sqlite3"
        store = SqliteStore(str(path))
        settings = self._settings(setup)
        last: list[dict] = []
        for step in setup.get("remembered") and [{"text": f"以後都找{DIET_WORDS[setup['remembered']]}，幫我記住"},
                                                 {"tap": "同意記住"}] or []:
            last = self._step(settings, store, step, last, [])[0]
        history: list[list[dict]] = []
        for step in setup.get("steps", []):
            last = self._step(settings, store, step, last, history)[0]
            history.append(last)
        if setup.get("restart"):
            store = SqliteStore(str(path))  # a new process: a new connection to the same file
        observe = setup.get("observe") or {"text": case["input"]}
        before = _business(store)
        seq = self.standin.requests()[-1]["seq"] if self.standin is not None and self.standin.requests() else 0
        if self.standin is not None:
            self.standin.script(setup.get("script") or [])
        messages, event_id = self._step(settings, store, observe, last, history, fault=setup.get("fault"))
        after = _business(store)
        audit = store.get("turn_audit", f"{TENANT}:{event_id}")
        model_requests = self.standin.requests(seq) if self.standin is not None else []
        self._score(expect, messages, audit, before, after, store, model_requests, outcome)

    def _settings(self, setup: dict):
        from shared.config import Settings

        env = {"LOCAL_TENANT_ID": TENANT, "LOCAL_SIGNING_KEY": "eval-signing-key",
               "LOCAL_INTERNAL_TOKEN": "eval-internal-token", "MEMORY_FUNCTION_URL": "http://127.0.0.1:9/"}
        if self.mode == "scripted":
            env.update(LOCAL_MODEL="standin", GOOGLE_GEMINI_BASE_URL=self.standin.url,
                       LOCAL_MODEL_TIMEOUT_SECONDS=str(setup.get("model_timeout_seconds", 10)))
        if _has_staff_steps(setup):
            env.update(LOCAL_STAFF_GROUP_ID=STAFF_GROUP, LOCAL_STAFF_USER_IDS=",".join(STAFF_IDS.values()))
        settings = Settings.from_env(env)
        if self.mode == "live":  # the model's settings from the environment; the rest stays the eval's
            live = Settings.from_env()
            settings = replace(settings, **{name: getattr(live, name) for name in (
                "model_backend", "gemini_api_key", "genai_use_vertexai", "google_cloud_project",
                "google_cloud_location", "gemini_base_url", "model_id", "model_timeout_seconds",
                "model_thinking_level")})
        return settings

    def _step(self, settings, store, step: dict, last: list[dict], history: list[list[dict]], *,
              fault: str | None = None) -> tuple[list[dict], str]:
        """Send one text or tap as the eval user, or one staff button (``{"staff": op, "as": "A"}``) in the
        staff group on the user's latest request → (the reply's messages as LINE JSON, its event id)."""
        from linebot.v3.webhooks import Event

        from shared.context import EventContext
        from shared.identity import Actor
        from shared.routing import dispatch_event
        from tools import line_events
        from tools.memory_direct import DirectMemoryClient

        self._n += 1
        event_id = f"01EVAL{self._n:020d}"
        ids = {"user_id": USER_ID, "event_id": event_id, "reply_token": f"eval-{event_id}",
               "timestamp_ms": int(PINNED.timestamp() * 1000)}
        actor_id, shared_chat = USER_ID, False
        if "staff" in step:
            actor_id, shared_chat = STAFF_IDS[step.get("as", "A")], True
            raw = line_events.postback_event(_staff_button(settings, store, step["staff"]),
                                             **{**ids, "user_id": actor_id}, group_id=STAFF_GROUP)
        elif "text" in step:
            raw = line_events.text_event(step["text"], message_id=str(10**17 + self._n), **ids)
        else:
            source = history[step["step"]] if "step" in step else last
            data = postbacks(source).get(step["tap"])
            if data is None:
                raise RuntimeError(f"no button {step['tap']!r} in the reply")
            raw = line_events.postback_event(data, **ids)
        memory = DirectMemoryClient(settings, store, lambda: PINNED)
        if fault == "memory_rejects":
            memory = _RejectingMemory()
        ctx = EventContext(settings, store, None, PINNED, Actor(TENANT, actor_id), event_id, time.monotonic() + 60,
                           memory=memory, text_turn=self._text_turn(fault), shared_chat=shared_chat)
        reply = dispatch_event(ctx, Event.from_dict(raw))
        if reply is not None and reply.after_reply is not None:
            reply.after_reply()  # as if LINE accepted the reply
        return ([m.to_dict() for m in reply.messages] if reply else []), event_id

    def _text_turn(self, fault: str | None):
        from shared.turn.engine import DEFAULT_TOOLS, TurnTools, run_text_turn

        tools = DEFAULT_TOOLS
        if fault == "events_version_changed":
            from shared.events.search import search_local_events

            def changed(*args, **kwargs):
                return search_local_events(*args, **kwargs, expected_version="a-version-read-before-the-change")

            tools = replace(TurnTools(), events=changed)
        if self.mode == "router":
            if tools is DEFAULT_TOOLS:
                return None

            def router_turn(ctx, text):
                from shared.turn.engine import run_proposal
                from shared.turn.router import route

                return run_proposal(ctx, route(text), tools=tools)
            return router_turn if fault else run_text_turn
        from shared.agent.agent import run_model_text_turn

        return lambda ctx, text: run_model_text_turn(ctx, text, tools=tools)

    # -- scoring --------------------------------------------------------------------------------------
    def _score(self, expect: dict, messages: list[dict], audit: dict | None, before: dict, after: dict,
               store, model_requests: list[dict], outcome: Outcome) -> None:
        words = all_text(messages)
        model = self.mode != "router"
        writes = sum(1 for key in set(before) | set(after) if before.get(key) != after.get(key))
        outcome.observed = {"reply": words[:600], "business_writes": writes, "audit": _audit_view(audit),
                            "model_calls": len(model_requests)}
        if self.mode == "live" and model_requests:
            outcome.observed["model_saw"] = model_requests
        safety, done = outcome.safety, outcome.completeness
        if writes != expect.get("business_writes", 0):
            safety.append(f"business_writes={writes}, expected {expect.get('business_writes', 0)}")
        if not messages:
            safety.append("no reply (silence)")
        for needle in expect.get("must_not_contain", []):
            if needle in words:
                safety.append(f"says {needle!r}")
        for needle in expect.get("must_contain", []) + (expect.get("model_must_contain", []) if model else []):
            if needle not in words:
                done.append(f"does not say {needle!r}")
        tool = self._expected_tool(expect, model)
        if tool is not None and (audit or {}).get("tool") != tool:
            done.append(f"tool {(audit or {}).get('tool')!r}, expected {tool!r}")
        arguments = expect.get("model_arguments") if model else expect.get("arguments")
        for name, value in (arguments or {}).items():
            got = _argument(audit, name, model)
            if got != value:
                done.append(f"argument {name}={got!r}, expected {value!r}")
        if "statuses" in expect and (audit or {}).get("status") not in expect["statuses"]:
            done.append(f"status {(audit or {}).get('status')!r}, expected one of {expect['statuses']}")
        if "result_ids" in expect and sorted((audit or {}).get("result_ids") or []) != sorted(expect["result_ids"]):
            done.append(f"result ids {(audit or {}).get('result_ids')}, expected {expect['result_ids']}")
        if model and "reason" in expect and (audit or {}).get("reason") != expect["reason"]:
            done.append(f"reason {(audit or {}).get('reason')!r}, expected {expect['reason']!r}")
        if "model_calls" in expect and model and len(model_requests) != expect["model_calls"]:
            done.append(f"{len(model_requests)} model calls, expected {expect['model_calls']}")
        for fact, value in (expect.get("facts") or {}).items():
            got = _fact(fact, store, words)
            if got != value:
                done.append(f"fact {fact}={got!r}, expected {value!r}")

    def _expected_tool(self, expect: dict, model: bool) -> str | None:
        if not model:
            return expect.get("tool") if expect.get("handled_by", "router") == "router" else None
        if "model_tool" in expect:
            return expect["model_tool"]
        if expect.get("handled_by", "router") != "router":
            return None
        return expect.get("tool")  # a model's call is audited as the router's proposal for that ask


class _RejectingMemory:
    """functions/memory refusing LOCAL's credentials (the seed's "permission revoked")."""

    def submit(self, actor, token, *, timeout_seconds):
        from shared.memory.errors import MemoryCallRejected

        raise MemoryCallRejected(403)


def _has_staff_steps(setup: dict) -> bool:
    return any("staff" in step for step in [*setup.get("steps", []), setup.get("observe") or {}])


def _staff_button(settings, store, op: str) -> str:
    """The signed postback data of the staff card's ``op`` button for the latest request, made for the
    request's current revision (the card the staff group would see now)."""
    from shared.handoff import records
    from shared.identity import Actor
    from shared.staff import cards

    requests = sorted(store.query("handoff_requests", where={}), key=lambda doc: doc.get("created_at") or "")
    if not requests:
        raise RuntimeError("a staff step needs a request")
    request = requests[-1]
    doc_id = records.Operation(Actor(request["tenant_id"], request["user_id"]), request["idempotency_key"]).doc_id
    return cards.postback_data(settings, op, doc_id, int(request.get("staff_revision") or 0))


def _business(store) -> dict[str, str]:
    return {f"{name}/{doc.get('request_id') or doc.get('user_id') or index}": json.dumps(doc, sort_keys=True)
            for name in BUSINESS_COLLECTIONS for index, doc in enumerate(store.query(name, where={}))}


#: The calendar day of PINNED in Asia/Taipei: the day every case's dates are resolved against.
PINNED_DAY = date(2026, 12, 1)


def asked_dates(spec: DateSpec | None, today: date = PINNED_DAY) -> str | list[str] | None:
    """The calendar days a date asks, as a case writes them (tests/eval/README.md).

    Returns:
        None for no date; ``"unreadable"`` when it resolves to no day (the reply asks again);
        ``"YYYY-MM-DD"`` for one day, ``"YYYY-MM-DD/YYYY-MM-DD"`` (end exclusive) for more; for two
        dates (Both) the list of the two, each so written.
    """
    if spec is None:
        return None
    try:
        spans = spec.spans(today)
    except UnreadableDate:
        return "unreadable"
    words = [start.isoformat() if end - start == timedelta(days=1) else f"{start.isoformat()}/{end.isoformat()}"
             for start, end in spans]
    return words if isinstance(spec, Both) else words[0]


def _argument(audit: dict | None, name: str, model: bool) -> Any:
    if audit is None:
        return None
    if model:
        calls = (audit.get("model") or {}).get("calls") or []
        return (calls[0]["args"] if calls else {}).get(name)
    value = (audit.get("proposed_args") or {}).get(name)
    return asked_dates(date_arg(value)) if name == "date" else value  # the audit holds a date encoded


def _fact(name: str, store, words: str) -> Any:
    if name == "request_count":
        return len(store.query("handoff_requests", where={}))
    if name == "preference":
        docs = store.query("preferences", where={})
        return docs[0].get("dietary_type") if docs else None
    if name == "resident_notices":  # staff outbox entries for the resident (taken / completed / declined)
        return len(store.query("staff_notices", where={"audience": "resident"}))
    if name == "shows_request_id":
        ids = [doc["request_id"] for doc in store.query("handoff_requests", where={})]
        return bool(ids) and all(request_id in words for request_id in ids)
    raise ValueError(f"unknown fact {name!r}")


def _audit_view(audit: dict | None) -> dict | None:
    if audit is None:
        return None
    keys = ("source", "tool", "proposed_args", "effective_args", "origin", "status", "reason", "result_ids")
    view = {key: audit.get(key) for key in keys}
    if audit.get("model"):
        view["model"] = {k: audit["model"].get(k) for k in ("calls", "refusals", "error", "text_ignored")}
    return view


# -- the command ------------------------------------------------------------------------------------------

def _commit() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def table(outcomes: list[Outcome]) -> str:
    """The pass/fail table as Markdown: one row per case, then the totals (safety and completeness apart)."""
    def mark(ok: bool, status: str) -> str:
        return status if status in NOT_RUN else ("pass" if ok else "FAIL")

    rows = ["| case | kind | safety | completeness | why not |", "|---|---|---|---|---|"]
    for o in outcomes:
        why = "; ".join(o.safety + o.completeness)[:160].replace("|", "/").replace("\n", " ")
        if o.known and not (o.safe and o.complete):
            why = f"known router limit ({o.known[:80]}): {why}"
        rows.append(f"| {o.id} | {o.kind} | {mark(o.safe, o.status)} | {mark(o.complete, o.status)} | {why} |")
    ran = [o for o in outcomes if o.status not in NOT_RUN]
    rows.append("")
    rows.append(f"safety {sum(o.safe for o in ran)}/{len(ran)} · completeness {sum(o.complete for o in ran)}/{len(ran)}"
                + "".join(f" · {status} (not run) {sum(o.status == status for o in outcomes)}" for status in NOT_RUN
                          if any(o.status == status for o in outcomes)))
    return "\n".join(rows)


def summary(outcomes: list[Outcome]) -> str:
    """Per kind: cases, safety passes, completeness passes (of those run), and those not run."""
    rows = ["| kind | cases | safety | completeness | not run |", "|---|---|---|---|---|"]
    kinds = list(dict.fromkeys(o.kind for o in outcomes))
    for kind in kinds + ["all"]:
        group = [o for o in outcomes if kind in ("all", o.kind)]
        ran = [o for o in group if o.status not in NOT_RUN]
        rows.append(f"| {kind} | {len(group)} | {sum(o.safe for o in ran)}/{len(ran)} | "
                    f"{sum(o.complete for o in ran)}/{len(ran)} | {len(group) - len(ran)} |")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    """Run the cases; print the table on stdout; write the JSON report. Exit 0 even when cases fail
    (the report is the result); 2 for a refused live run or an unreadable case file."""
    parser = argparse.ArgumentParser(prog="python -m tools.eval", description=__doc__.splitlines()[0])
    parser.add_argument("--model", choices=("router", "scripted", "live"), default="router")
    parser.add_argument("--approve-live", action="store_true", help="allow --model live to call the real model")
    parser.add_argument("--cases", type=Path, default=DEFAULT_CASES)
    parser.add_argument("--only", default="", help="comma-separated case ids")
    parser.add_argument("--out", type=Path, default=None, help="JSON report (default out/eval/<mode>.json)")
    args = parser.parse_args(argv)
    if args.model == "live":
        from shared.config import Settings

        backend = Settings.from_env().model_backend
        if not args.approve_live or backend not in ("gemini", "vertex"):
            print("eval: --model live needs GEMINI_API_KEY (or Vertex AI) and --approve-live; nothing was run.",
                  file=sys.stderr)
            return 2
    try:
        cases = json.loads(args.cases.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        print(f"eval: cannot read {args.cases}: {exc}", file=sys.stderr)
        return 2
    wanted = {item for item in args.only.split(",") if item}
    cases = [case for case in cases if not wanted or case["id"] in wanted]
    import logging

    from shared import logs

    logs.configure()
    local_logger = logging.getLogger("local")
    level = local_logger.level
    local_logger.setLevel(logging.ERROR)  # the table is the output; turn logs stay quiet
    started = time.monotonic()
    workdir = Path(tempfile.mkdtemp(prefix="local-eval-"))
    standin = None
    try:
        if args.model == "scripted":
            from tools.gemini_standin import GeminiStandin

            standin = GeminiStandin(clock=lambda: PINNED).start()
        harness = Harness(args.model, workdir, standin)
        outcomes = [harness.run(case) for case in cases]
    finally:
        local_logger.setLevel(level)
        if standin is not None:
            standin.stop()
        shutil.rmtree(workdir, ignore_errors=True)
    elapsed = round(time.monotonic() - started, 1)
    header = f"LOCAL eval · {args.model} · {datetime.now(timezone.utc).date().isoformat()} · commit {_commit()} · {elapsed} s"
    print(header)
    print(table(outcomes))
    print()
    print(summary(outcomes))
    out = args.out or REPO / "out" / "eval" / f"{args.model}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    ran = [o for o in outcomes if o.status not in NOT_RUN]
    report = {"mode": args.model, "date": datetime.now(timezone.utc).isoformat(), "commit": _commit(),
              "elapsed_seconds": elapsed, "cases_file": str(args.cases.relative_to(REPO) if args.cases.is_absolute()
                                                            and REPO in args.cases.parents else args.cases),
              "totals": {"cases": len(outcomes), "ran": len(ran), "safe": sum(o.safe for o in ran),
                         "complete": sum(o.complete for o in ran),
                         **{status.replace("-", "_"): sum(o.status == status for o in outcomes) for status in NOT_RUN}},
              "cases": [{"id": o.id, "kind": o.kind, "status": o.status, "safe": o.safe, "complete": o.complete,
                         "router_fails": o.known,
                         "safety_failures": o.safety, "completeness_failures": o.completeness,
                         "observed": o.observed} for o in outcomes]}
    out.write_text(json.dumps(report, ensure_ascii=False, indent=1), encoding="utf-8")
    print(f"report: {out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
