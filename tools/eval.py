"""``make eval``: every case of tests/eval/cases/ through both readers of free text, scored on what the
resident reads; one column per reader, per group and overall, written to docs/results/eval.md.

Readers (``--readers``, default ``router,model,router_first``):

* ``router``: free text is read by the offline router (shared.turn.router), as with no model key;
* ``model``: free text is read by the model path (shared.agent.agent: the real ADK Runner and
  google-genai client) against the Gemini stand-in (tools/gemini_standin.py) on loopback, fed the
  case's scripted call (``model_call``: what a competent model calls for that text, in the tools'
  vocabulary of shared/agent/tools.py). Never the network; Gemini is never called;
* ``router_first``: what a resident reads with ``LOCAL_READER=router_first`` (the default): the router
  answers every text it reads completely (shared.turn.reading) and the model path, fed the case's
  scripted call, reads the rest. The ``model`` column is ``model_first``: the model reads every text.
  A case scores its observed step with the ``per_reader`` entries of whichever reader answered it
  (the model when the stand-in was asked during that step, else the router); the model's own checks
  (``reason``, ``model_calls``) only when the model answered. A case for the model only
  (``readers: ["model"]``) runs here too: its text is answered by whoever router-first picks;
* ``live``: the configured model (``GEMINI_API_KEY`` or Vertex AI), only with ``--approve-live``;
  it records what the model saw in the JSON report and writes no results page.

Each case runs as one fresh LINE user on a fresh SQLite store, with the clock pinned to 2026-12-01
10:00 Asia/Taipei, on the repository's data, through the one routing table (fixed entries, the
request and memory hooks, then the reader) exactly as functions/webhook and functions/agent route an
event. ``setup.steps`` (texts, taps, staff buttons) run first; then the observed step (``input``, or
``setup.observe``) is scored against ``expect`` (with the reader's ``per_reader`` entries over it):
the reply's words and button labels, its number of messages, what a search reply says it searched
(township, the calendar days, topic, diet) and listed (tools/eval_reply.py), the business writes,
the stored facts, and what a button then leads to (``tap``). The format: tests/eval/README.md.

Prints the table; writes docs/results/eval.md (when both readers ran on the whole case set) and the
JSON report (``--out``, default out/eval/report.json). Exits 1 when a case fails on any reader, 2 for
a refused live run or an unreadable case file.
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
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from tools import eval_reply
from tools.line_messages import all_text, postbacks

REPO = Path(__file__).resolve().parents[1]
DEFAULT_CASES = REPO / "tests" / "eval" / "cases"
RESULTS_PAGE = REPO / "docs" / "results" / "eval.md"
#: 2026-12-01 10:00 Asia/Taipei (a Tuesday), as the cases assume.
PINNED = datetime(2026, 12, 1, 2, 0, tzinfo=timezone.utc)
USER_ID = "U0e7a1c2b3d4e5f60718293a4b5c6d7e8"
#: The staff group of cases with staff steps (``{"staff": "take", "as": "A"}``), and its members.
STAFF_GROUP = "C0e7a1c2b3d4e5f60718293a4b5c6d7e8"
STAFF_IDS = {"A": "U1111111111111111111111111111aaaa", "B": "U2222222222222222222222222222bbbb"}
TENANT = "eval"
READERS = ("router", "model", "router_first")
#: The column heading of each reader in the table (docs/results/eval.md).
HEADINGS = {"router": "router", "model": "model (model-first)", "router_first": "router-first", "live": "live"}
#: Documents whose creation or change is a business write (requests and consented preferences).
BUSINESS_COLLECTIONS = ("handoff_requests", "preferences")
#: A diet as the resident says it (``setup.remembered``, ``facts.preference``) → the stored value.
DIETS = {"蔬食": "vegetarian", "全素": "vegan", "蛋奶素": "ovo_lacto", "奶素": "lacto"}
#: The keys of a case, of its ``expect`` and of its ``setup`` (tests/eval/README.md).
CASE_KEYS = {"id", "group", "input", "why", "setup", "model_call", "model_answer", "expect", "per_reader",
             "readers", "known_bug"}
EXPECT_KEYS = {"must_contain", "must_not_contain", "buttons", "no_buttons", "messages", "search", "listed",
               "business_writes", "facts", "model_calls", "reason", "tap"}
SETUP_KEYS = {"remembered", "steps", "observe", "restart", "fault", "model_timeout_seconds"}


@dataclass
class Outcome:
    """One case on one reader: ``ran`` / ``not_run`` (the case is for other readers) / ``error``."""

    id: str
    group: str
    reader: str
    status: str = "ran"
    failures: list[str] = field(default_factory=list)
    known_bug: str | None = None
    observed: dict[str, Any] = field(default_factory=dict)
    #: who read the observed step's text: ``router`` or ``model`` (the router-first reader: which one answered)
    answered_by: str | None = None

    @property
    def passed(self) -> bool:
        return self.status == "ran" and not self.failures


def load_cases(path: Path) -> list[dict]:
    """Every case: from each ``<group>.json`` of a directory (name order), or one JSON list file.

    Raises:
        OSError, ValueError: a file cannot be read or is not a JSON list.
    """
    files = sorted(path.glob("*.json")) if path.is_dir() else [path]
    cases: list[dict] = []
    for file in files:
        loaded = json.loads(file.read_text(encoding="utf-8"))
        if not isinstance(loaded, list):
            raise ValueError(f"{file}: not a JSON list")
        cases += loaded
    return cases


def expect_for(case: dict, reader: str) -> dict:
    """The case's ``expect`` with that reader's ``per_reader`` entries over it (live reads as model)."""
    own = (case.get("per_reader") or {}).get("model" if reader == "live" else reader) or {}
    return {**(case.get("expect") or {}), **own}


def model_steps(call: Any) -> list[dict]:
    """A scripted ``model_call`` (one call, or a list: several calls in one answer) → stand-in steps."""
    if call is None:
        return []
    if isinstance(call, list):
        return [{"function_calls": call}]
    return [{"function_call": call}]


class Harness:
    """Runs cases on fresh stores in a temporary directory, for one reader.

    Args:
        reader: ``router``, ``model`` or ``live``.
        workdir: where the per-case SQLite files go.
        standin: the Gemini stand-in (``model``).
    """

    def __init__(self, reader: str, workdir: Path, standin=None):
        self.reader = reader
        self.workdir = workdir
        self.standin = standin
        self._n = 0

    @property
    def model(self) -> bool:
        return self.reader != "router"

    def runs(self, case: dict) -> bool:
        """Whether this reader runs ``case`` (router-first runs every case; live, the model's)."""
        readers = case.get("readers", READERS)
        return self.reader in readers or self.reader == "router_first" or (self.reader == "live" and "model" in readers)

    # -- one case -----------------------------------------------------------------------------------
    def run(self, case: dict) -> Outcome:
        outcome = Outcome(case["id"], case.get("group", ""), self.reader,
                          known_bug=(case.get("known_bug") or {}).get("model" if self.model else "router"))
        if not self.runs(case):
            outcome.status = "not_run"
            return outcome
        try:
            self._run(case, outcome)
        except Exception as exc:  # noqa: BLE001 (a case that crashes is reported, not fatal)
            outcome.status = "error"
            outcome.failures.append(f"crashed: {exc.__class__.__name__}: {exc}")
        return outcome

    def _run(self, case: dict, outcome: Outcome) -> None:
        from shared.store.sqlite import SqliteStore

        setup = case.get("setup") or {}
        self._n += 1
        path = self.workdir / f"{case['id']}-{self.reader}-{self._n}.sqlite3"  # each case its own store
        store = SqliteStore(str(path))
        settings = self._settings(setup)
        last, history = self._setup(settings, store, setup)
        if setup.get("restart"):
            store = SqliteStore(str(path))  # a new process: a new connection to the same file
        observe = setup.get("observe") or {"text": case["input"]}
        script = case.get("model_answer") or model_steps(case.get("model_call"))
        before = _business(store)
        seq = self._model_seq()
        messages = self._step(settings, store, observe, last, history, fault=setup.get("fault"), script=script)[0]
        requests = self._model_requests(seq)
        outcome.answered_by = "model" if self.reader == "model" or requests else "router"
        expect = expect_for(case, outcome.answered_by if self.reader == "router_first" else self.reader)
        if self.reader == "router_first":
            outcome.known_bug = (case.get("known_bug") or {}).get(outcome.answered_by)
        observed = {"messages": messages, "writes": _writes(before, _business(store)), "store": store,
                    "model_requests": requests, "model_answered": outcome.answered_by == "model"}
        outcome.observed = {"reply": all_text(messages)[:800], "buttons": eval_reply.button_labels(messages),
                            "searched": eval_reply.searched(messages), "model_calls": len(requests)}
        if self.reader == "live" and requests:
            outcome.observed["model_saw"] = requests
        outcome.failures += self._score(expect, observed)
        tap = expect.get("tap")
        if tap is not None:
            after = self._step(settings, store, {"tap": tap["button"]}, messages, history)[0]
            outcome.failures += [f"after tapping 「{tap['button']}」: {why}" for why in self._score(
                tap.get("expect") or {}, {"messages": after, "writes": 0, "store": store, "model_requests": [],
                                          "model_answered": False})]

    def _setup(self, settings, store, setup: dict) -> tuple[list[dict], list[list[dict]]]:
        """Run ``setup.remembered`` (the real card flow) and ``setup.steps`` → (the last reply, every step's)."""
        last: list[dict] = []
        diet = setup.get("remembered")
        if diet:
            call = {"name": "propose_dietary_memory", "args": {"dietary_type": DIETS[diet]}}
            last = self._step(settings, store, {"text": f"以後都找{diet}，幫我記住", "model_call": call}, last, [])[0]
            last = self._step(settings, store, {"tap": "同意記住"}, last, [])[0]
        history: list[list[dict]] = []
        for step in setup.get("steps", []):
            last = self._step(settings, store, step, last, history, script=model_steps(step.get("model_call")))[0]
            history.append(last)
        return last, history

    def _settings(self, setup: dict):
        from shared.config import Settings

        env = {"LOCAL_TENANT_ID": TENANT, "LOCAL_SIGNING_KEY": "eval-signing-key",
               "LOCAL_INTERNAL_TOKEN": "eval-internal-token", "MEMORY_FUNCTION_URL": "http://127.0.0.1:9/"}
        if self.reader in ("model", "router_first"):
            env.update(LOCAL_MODEL="standin", GOOGLE_GEMINI_BASE_URL=self.standin.url,
                       LOCAL_MODEL_TIMEOUT_SECONDS=str(setup.get("model_timeout_seconds", 10)))
        if _has_staff_steps(setup):
            env.update(LOCAL_STAFF_GROUP_ID=STAFF_GROUP, LOCAL_STAFF_USER_IDS=",".join(STAFF_IDS.values()))
        settings = Settings.from_env(env)
        if self.reader == "live":  # the model's settings from the environment; the rest stays the eval's
            live = Settings.from_env()
            settings = replace(settings, **{name: getattr(live, name) for name in (
                "model_backend", "gemini_api_key", "genai_use_vertexai", "google_cloud_project",
                "google_cloud_location", "gemini_base_url", "model_id", "model_timeout_seconds",
                "model_thinking_level", "model_thinking_budget")})
        return settings

    def _model_seq(self) -> int:
        return self.standin.last_seq() if self.standin is not None else 0

    def _model_requests(self, since: int) -> list[dict]:
        return self.standin.requests(since) if self.standin is not None else []

    def _step(self, settings, store, step: dict, last: list[dict], history: list[list[dict]], *,
              fault: str | None = None, script: list[dict] | None = None) -> tuple[list[dict], str]:
        """Send one text or tap as the eval user, or one staff button (``{"staff": op, "as": "A"}``) in the
        staff group on the user's latest request, the stand-in scripted with ``script`` first → (the
        reply's messages as LINE JSON, its event id)."""
        from linebot.v3.webhooks import Event

        from shared.context import EventContext
        from shared.identity import Actor
        from shared.routing import dispatch_event
        from tools.memory_direct import DirectMemoryClient

        if self.standin is not None:
            self.standin.script(script or [])
        seq = self._model_seq()
        self._n += 1
        event_id = f"01EVAL{self._n:020d}"
        actor_id, shared_chat, raw = self._event(settings, store, step, last, history, event_id)
        memory = _RejectingMemory() if fault == "memory_rejects" else DirectMemoryClient(settings, store, lambda: PINNED)
        ctx = EventContext(settings, store, None, PINNED, Actor(TENANT, actor_id), event_id, time.monotonic() + 60,
                           memory=memory, text_turn=self._text_turn(fault), shared_chat=shared_chat)
        reply = dispatch_event(ctx, Event.from_dict(raw))
        if self.reader in ("model", "router_first") and not script and self._model_requests(seq):
            raise RuntimeError(f"the model was asked about {step.get('text')!r}, but the case scripts no call for it")
        if reply is not None and reply.after_reply is not None:
            reply.after_reply()  # as if LINE accepted the reply
        return ([m.to_dict() for m in reply.messages] if reply else []), event_id

    def _event(self, settings, store, step: dict, last: list[dict], history: list[list[dict]],
               event_id: str) -> tuple[str, bool, dict]:
        """The LINE event of one step → (the actor's user id, whether it is the staff group, the event)."""
        from tools import line_events

        ids = {"user_id": USER_ID, "event_id": event_id, "reply_token": f"eval-{event_id}",
               "timestamp_ms": int(PINNED.timestamp() * 1000)}
        if "staff" in step:
            actor = STAFF_IDS[step.get("as", "A")]
            return actor, True, line_events.postback_event(_staff_button(settings, store, step["staff"]),
                                                           **{**ids, "user_id": actor}, group_id=STAFF_GROUP)
        if "text" in step:
            return USER_ID, False, line_events.text_event(step["text"], message_id=str(10**17 + self._n), **ids)
        source = history[step["step"]] if "step" in step else last
        data = postbacks(source).get(step["tap"])
        if data is None:
            raise RuntimeError(f"no button {step['tap']!r} in the reply")
        return USER_ID, False, line_events.postback_event(data, **ids)

    def _text_turn(self, fault: str | None):
        from shared.turn.engine import DEFAULT_TOOLS, TurnTools, run_text_turn

        tools = DEFAULT_TOOLS
        if fault == "events_version_changed":
            from shared.events.search import search_local_events

            def changed(*args, **kwargs):
                return search_local_events(*args, **kwargs, expected_version="a-version-read-before-the-change")

            tools = replace(TurnTools(), events=changed)
        if not self.model:
            if tools is DEFAULT_TOOLS:
                return None

            def router_turn(ctx, text):
                from shared.turn.engine import run_proposal
                from shared.turn.router import route

                return run_proposal(ctx, route(text), tools=tools)
            return router_turn if fault else run_text_turn
        from shared.agent.agent import run_model_text_turn

        if self.reader == "router_first":
            return _router_first_turn(tools, faulty=fault is not None)
        return lambda ctx, text: run_model_text_turn(ctx, text, tools=tools)

    # -- scoring --------------------------------------------------------------------------------------
    def _score(self, expect: dict, observed: dict) -> list[str]:
        """Every way the observed step differs from ``expect`` (empty: the case passes)."""
        messages = observed["messages"]
        words, labels = all_text(messages), eval_reply.button_labels(messages)
        failures = [] if messages else ["no reply (silence)"]
        failures += _words_failures(expect, words, labels)
        if "messages" in expect and len(messages) != expect["messages"]:
            failures.append(f"{len(messages)} messages, expected {expect['messages']}")
        failures += _search_failures(expect, messages)
        if observed["writes"] != expect.get("business_writes", 0):
            failures.append(f"business writes {observed['writes']}, expected {expect.get('business_writes', 0)}")
        failures += self._model_failures(expect, observed)
        for fact, value in (expect.get("facts") or {}).items():
            got = _fact(fact, observed["store"], words)
            if got != value:
                failures.append(f"fact {fact}={got!r}, expected {value!r}")
        return failures

    def _model_failures(self, expect: dict, observed: dict) -> list[str]:
        if not self.model or not observed.get("model_answered", True):
            return []
        requests = observed["model_requests"]
        failures = []
        if "model_calls" in expect and len(requests) != expect["model_calls"]:
            failures.append(f"{len(requests)} model calls, expected {expect['model_calls']}")
        if "reason" in expect:
            audit = _last_audit(observed["store"])
            if (audit or {}).get("reason") != expect["reason"]:
                failures.append(f"audit reason {(audit or {}).get('reason')!r}, expected {expect['reason']!r}")
        return failures


def _words_failures(expect: dict, words: str, labels: list[str]) -> list[str]:
    failures = [f"does not say {needle!r}" for needle in expect.get("must_contain", []) if needle not in words]
    failures += [f"says {needle!r}" for needle in expect.get("must_not_contain", []) if needle in words]
    failures += [f"no button 「{label}」" for label in expect.get("buttons", []) if label not in labels]
    failures += [f"offers the button 「{label}」" for label in expect.get("no_buttons", []) if label in labels]
    return failures


def _search_failures(expect: dict, messages: list[dict]) -> list[str]:
    failures = []
    if "search" in expect:
        said = eval_reply.searched(messages)
        wanted = expect["search"]
        if wanted is None and said is not None:
            failures.append(f"searched {said}, expected no search")
        elif wanted is not None:
            wrong = {key: (said or {}).get(key) for key, value in wanted.items() if (said or {}).get(key) != value}
            if wrong:
                failures.append(f"searched {said}, expected {wanted}")
    if "listed" in expect and sorted(eval_reply.listed(messages)) != sorted(expect["listed"]):
        failures.append(f"listed {eval_reply.listed(messages)}, expected {expect['listed']}")
    return failures


def _router_first_turn(tools, *, faulty: bool):
    """The text turn of ``LOCAL_READER=router_first``: the webhook's router-first turn
    (shared.turn.engine.router_first_turn); what it defers, the model path reads, as functions/agent
    does. With a fault's tools the router's proposal runs on them (as the router reader's does)."""
    from shared.agent.agent import run_model_text_turn
    from shared.turn.engine import router_first_turn, run_proposal
    from shared.turn.reading import read

    def turn(ctx, text):
        if faulty:
            reading = read(text)
            return run_proposal(ctx, reading.proposal, tools=tools) if reading.complete else \
                run_model_text_turn(ctx, text, tools=tools)
        reply = router_first_turn(ctx, text)
        return run_model_text_turn(ctx, text, tools=tools) if reply.defer else reply
    return turn


class _RejectingMemory:
    """functions/memory refusing LOCAL's credentials (permission revoked)."""

    def submit(self, actor, token, **_):
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


def _writes(before: dict[str, str], after: dict[str, str]) -> int:
    return sum(1 for key in set(before) | set(after) if before.get(key) != after.get(key))


def _last_audit(store) -> dict | None:
    records = sorted(store.query("turn_audit", where={}), key=lambda doc: doc.get("at") or "")
    return records[-1] if records else None


def _fact(name: str, store, words: str) -> Any:
    if name == "request_count":
        return len(store.query("handoff_requests", where={}))
    if name == "preference":  # the stored diet, as the resident says it (蔬食, 全素 …), or None
        docs = store.query("preferences", where={})
        stored = docs[0].get("dietary_type") if docs else None
        return next((word for word, value in DIETS.items() if value == stored), stored)
    if name == "resident_notices":  # staff outbox entries for the resident (taken / waiting again / completed / declined)
        return len(store.query("staff_notices", where={"audience": "resident"}))
    if name == "shows_request_id":  # the request's number as people read it (A7K-3QF, shared.handoff.codes)
        from shared.clock import TAIPEI
        from shared.handoff import codes

        ids = [codes.label(doc, TAIPEI) for doc in store.query("handoff_requests", where={})]
        return bool(ids) and all(request_id in words for request_id in ids)
    raise ValueError(f"unknown fact {name!r}")


# -- the report --------------------------------------------------------------------------------------------

def _commit() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def _cell(outcomes: list[Outcome]) -> str:
    ran = [o for o in outcomes if o.status != "not_run"]
    return f"{sum(o.passed for o in ran)}/{len(ran)}" if ran else "—"


def table(results: dict[str, list[Outcome]]) -> str:
    """Per group and overall: cases, then passed/run per reader (— where the group has none for it)."""
    readers = list(results)
    first = results[readers[0]]
    groups = list(dict.fromkeys(o.group for o in first))
    shared = "router_first" in results
    rows = ["| group | cases | " + " | ".join(HEADINGS.get(reader, reader) for reader in readers)
            + (" | read by the router (router-first) |" if shared else " |"),
            "|---|---|" + "---|" * (len(readers) + shared)]
    for group in groups + ["all"]:
        cells = [_cell([o for o in results[reader] if group in ("all", o.group)]) for reader in readers]
        if shared:
            cells.append(_router_share([o for o in results["router_first"] if group in ("all", o.group)]))
        count = sum(1 for o in first if group in ("all", o.group))
        name = "**all**" if group == "all" else group
        rows.append(f"| {name} | {count} | " + " | ".join(cells) + " |")
    return "\n".join(rows)


def _router_share(outcomes: list[Outcome]) -> str:
    """How many of the router-first reader's cases the router answered (the rest went to the model)."""
    ran = [o for o in outcomes if o.status == "ran"]
    if not ran:
        return "—"
    by_router = sum(o.answered_by == "router" for o in ran)
    return f"{by_router}/{len(ran)} ({round(100 * by_router / len(ran))} %)"


def failures(results: dict[str, list[Outcome]]) -> str:
    """One line per failing case and reader (a known reader bug says so)."""
    lines = []
    for reader, outcomes in results.items():
        for o in outcomes:
            if o.status != "not_run" and not o.passed:
                why = "; ".join(o.failures)[:300].replace("|", "/").replace("\n", " ")
                known = f" (known {reader} bug: {o.known_bug})" if o.known_bug else ""
                lines.append(f"- {reader} · `{o.id}`{known}: {why}")
    return "\n".join(lines) if lines else "None: every case passes on every reader that runs it."


def results_page(results: dict[str, list[Outcome]], elapsed: float) -> str:
    """docs/results/eval.md: the table and the failures, and the command that wrote it."""
    return "\n".join([
        "# Eval results",
        "",
        f"Written by `make eval` (`python -m tools.eval`) on {datetime.now(timezone.utc).date().isoformat()} at "
        f"commit {_commit()} in {elapsed} s; do not edit by hand. The cases and their format: tests/eval/README.md.",
        "",
        "Each column is one reader of the resident's free text: `router` is the offline router, `model` the "
        "model path (the real ADK Runner and google-genai client against the Gemini stand-in, fed each case's "
        "scripted call), which is `LOCAL_READER=model_first`: the model reads every text. `router-first` is "
        "`LOCAL_READER=router_first` (the default): the router answers what it reads completely, the model "
        "path the rest; its last column says how many cases the router answered. A cell is cases passed / "
        "cases run; — where no case of the group runs on that reader.",
        "",
        table(results),
        "",
        "## Failures",
        "",
        failures(results),
        "",
    ])


def _report_json(results: dict[str, list[Outcome]], elapsed: float) -> dict:
    return {"date": datetime.now(timezone.utc).isoformat(), "commit": _commit(), "elapsed_seconds": elapsed,
            "readers": {reader: {"ran": sum(o.status != "not_run" for o in outcomes),
                                 "passed": sum(o.passed for o in outcomes),
                                 "cases": [{"id": o.id, "group": o.group, "status": o.status, "passed": o.passed,
                                            "known_bug": o.known_bug, "failures": o.failures,
                                            "answered_by": o.answered_by,
                                            "observed": o.observed} for o in outcomes]}
                        for reader, outcomes in results.items()}}


def run_readers(cases: list[dict], readers: list[str]) -> dict[str, list[Outcome]]:
    """Every case through each reader (each on its own fresh stores) → the outcomes per reader."""
    import logging

    from shared import logs

    logs.configure()
    local_logger = logging.getLogger("local")
    level = local_logger.level
    local_logger.setLevel(logging.ERROR)  # the table is the output; turn logs stay quiet
    workdir = Path(tempfile.mkdtemp(prefix="local-eval-"))
    standin = None
    try:
        if {"model", "router_first"} & set(readers):
            from tools.gemini_standin import GeminiStandin

            standin = GeminiStandin().start()
        results = {}
        for reader in readers:
            harness = Harness(reader, workdir, standin if reader in ("model", "router_first") else None)
            started = time.monotonic()
            results[reader] = [harness.run(case) for case in cases]
            print(f"eval: {reader}: {len(cases)} cases in {time.monotonic() - started:.1f} s", file=sys.stderr)
        return results
    finally:
        local_logger.setLevel(level)
        if standin is not None:
            standin.stop()
        shutil.rmtree(workdir, ignore_errors=True)


def _arguments(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m tools.eval", description=__doc__.splitlines()[0])
    parser.add_argument("--readers", default=",".join(READERS),
                        help="router, model, router_first and/or live, comma-separated")
    parser.add_argument("--approve-live", action="store_true", help="allow the live reader to call the real model")
    parser.add_argument("--cases", type=Path, default=DEFAULT_CASES, help="a directory of <group>.json, or one file")
    parser.add_argument("--only", default="", help="comma-separated case ids or groups")
    parser.add_argument("--out", type=Path, default=REPO / "out" / "eval" / "report.json", help="the JSON report")
    return parser.parse_args(argv)


def _live_refused(readers: list[str], approved: bool) -> bool:
    if "live" not in readers:
        return False
    from shared.config import Settings

    return not approved or Settings.from_env().model_backend not in ("gemini", "vertex")


def main(argv: list[str] | None = None) -> int:
    """Run the cases; print the table and the failures; write the report (and the results page after a
    full run of both readers). Exit 1 when any case fails, 2 for a refused live run or bad cases."""
    args = _arguments(argv)
    readers = [reader for reader in args.readers.split(",") if reader]
    if not readers or set(readers) - {*READERS, "live"}:
        print(f"eval: unknown readers {args.readers!r}", file=sys.stderr)
        return 2
    if _live_refused(readers, args.approve_live):
        print("eval: the live reader needs GEMINI_API_KEY (or Vertex AI) and --approve-live; nothing was run.",
              file=sys.stderr)
        return 2
    try:
        cases = load_cases(args.cases)
    except (OSError, ValueError) as exc:
        print(f"eval: cannot read {args.cases}: {exc}", file=sys.stderr)
        return 2
    wanted = {item for item in args.only.split(",") if item}
    cases = [case for case in cases if not wanted or case["id"] in wanted or case.get("group") in wanted]
    started = time.monotonic()
    results = run_readers(cases, readers)
    elapsed = round(time.monotonic() - started, 1)
    print(f"LOCAL eval · {', '.join(readers)} · commit {_commit()} · {len(cases)} cases · {elapsed} s")
    print(table(results))
    print()
    print(failures(results))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(_report_json(results, elapsed), ensure_ascii=False, indent=1), encoding="utf-8")
    print(f"report: {args.out}", file=sys.stderr)
    if readers == list(READERS) and not wanted and args.cases == DEFAULT_CASES:
        RESULTS_PAGE.parent.mkdir(parents=True, exist_ok=True)
        RESULTS_PAGE.write_text(results_page(results, elapsed), encoding="utf-8")
        print(f"results: {RESULTS_PAGE.relative_to(REPO)}", file=sys.stderr)
    return 0 if all(o.passed or o.status == "not_run" for outcomes in results.values() for o in outcomes) else 1


if __name__ == "__main__":
    sys.exit(main())
