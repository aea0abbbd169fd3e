"""Every case of tests/eval/cases.json, through the router and through the webhook use case.

Each case is checked twice: the offline router's proposal (tool, arguments, notes), and the whole
turn as LINE delivers it — a signed body into WebhookService (dispatch, fixed entries, the request
and memory hooks, the turn engine, the in-memory store, the LINE stand-in over loopback HTTP,
functions/memory's use case in-process) — against the reply words, the audit status and the
result ids. The store and the stand-in serve the whole module; each case is its own LINE user. The clock is pinned to 2026-12-01 10:00 Asia/Taipei. Format: tests/eval/README.md.
"""
from __future__ import annotations

import hashlib
import json
import uuid
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path

import pytest

from shared.config import WEBHOOK_REQUIRED, Settings
from shared.store.memory import forget_database
from shared.turn.audit import COLLECTION as AUDIT
from shared.turn.datespec import date_arg
from shared.turn.router import route, second_ask
from shared.webhook.service import WebhookService
from shared.wiring import line_gateway, open_store
from tests.conftest import (
    TEST_TOKEN,
    TEST_USER,
    FixedClock,
    all_text,
    function_env,
    postback_event,
    reply_messages,
    text_event,
)
from tests.memory_support import DirectMemoryClient, postbacks
from tools.eval import asked_dates
from tools.line_standin import LineStandin

CASES_PATH = Path(__file__).resolve().with_name("cases.json")
CASES = json.loads(CASES_PATH.read_text(encoding="utf-8"))
#: 2026-12-01 10:00 Asia/Taipei (a Tuesday), as the cases' examples assume.
PINNED = datetime(2026, 12, 1, 2, 0, tzinfo=timezone.utc)
#: Cases this test can drive: one message, answered without a model. ``make eval`` (tools/eval.py)
#: runs the rest too: flows (``setup.steps`` / ``observe`` / ``fault``), model-only cases, and cases
#: marked ``router_fails`` (a known limit of the router, reported by make eval, not hidden).
_WEBHOOK_CASES = [case for case in CASES if case["expect"].get("handled_by", "router") not in ("model", "flow")
                  and set(case.get("setup") or {}) <= {"remembered", "script"} and "router_fails" not in case]
_ROUTER_CASES = [case for case in _WEBHOOK_CASES if case["expect"].get("handled_by", "router") == "router"
                 and "tool" in case["expect"]]


def _ids(cases):
    return [case["id"] for case in cases]


@pytest.fixture(scope="module")
def eval_standin():
    """One recording LINE stand-in for the module's cases (each reads only its own reply token)."""
    with LineStandin(access_token=TEST_TOKEN) as standin:
        yield standin


#: The module's in-memory database (``memory://NAME``; shared.store.memory).
DATABASE = f"eval-cases-{uuid.uuid4().hex}"


@pytest.fixture(scope="module")
def pinned_service(eval_standin):
    """One WebhookService on one in-memory store for every case of the module. Each case speaks as
    its own LINE user (``_case_user``), so none sees another's memory, draft or follow-up; a fresh
    store and stand-in per case cost more than the 700 turns themselves."""
    clock = FixedClock(PINNED)
    env = function_env(f"memory://{DATABASE}", eval_standin.url)
    # The claim is each case's reply, not the 2 s budget nor LINE's 1 s reply timeout (tests/unit/webhook's
    # budget tests): on a loaded machine a case must not be left to the queue because its first turn ran
    # slowly, nor its reply counted unknown because the stand-in answered late.
    settings = replace(Settings.from_env(env, required=WEBHOOK_REQUIRED), webhook_budget_seconds=60.0,
                       line_timeout_seconds=30.0)
    store = open_store(settings)
    memory = DirectMemoryClient(settings, open_store(settings), clock)
    yield WebhookService(settings, store, line_gateway(settings), clock=clock, memory=memory)
    forget_database(DATABASE)


def _case_user(case_id: str) -> str:
    """A LINE user id (``U`` + 32 hex digits) of the case's own."""
    return "U" + hashlib.sha256(case_id.encode()).hexdigest()[:32]


_send = reply_messages  # tests/conftest.py


def _remember(service, standin, diet_words: str, user: str = TEST_USER) -> None:
    messages = _send(service, standin, text_event(f"以後都找{diet_words}，幫我記住", user_id=user))
    words = all_text(_send(service, standin, postback_event(postbacks(messages)["同意記住"], user_id=user)))
    assert "已經記住" in words


_DIET_WORDS = {"vegetarian": "蔬食", "vegan": "全素", "ovo_lacto": "蛋奶素", "lacto": "奶素"}


def test_eval_cases_file_is_one_list_with_unique_ids_and_known_fields():
    assert isinstance(CASES, list) and len(CASES) >= 100
    assert len(set(_ids(CASES))) == len(CASES)
    known = {"tool", "arguments", "notes", "statuses", "result_ids", "must_contain", "must_not_contain", "handled_by",
             # make eval's fields (tests/eval/README.md)
             "model_tool", "model_arguments", "model_must_contain", "reason", "business_writes", "model_calls", "facts"}
    for case in CASES:
        assert set(case) <= {"id", "input", "expect", "notes", "kind", "setup", "router_fails"}, case["id"]
        assert isinstance(case["input"], str) and set(case["expect"]) <= known, case["id"]


def _dates_words(spec) -> str:
    """A date inside a note, as a case writes it: its days (asked_dates), two dates joined by a comma."""
    words = asked_dates(spec)
    return ",".join(words) if isinstance(words, list) else words or ""


def _with_days(note: str) -> str:
    """A note whose date is carried for a button (``also_events:<township>/<date>``,
    ``second_events:…&date=<date>…``), with that date written as the days it asks on the pinned day."""
    kind, _, value = note.partition(":")
    if kind == "also_events":
        area, _, when = value.partition("/")
        return f"{kind}:{area}/{_dates_words(date_arg(when))}"
    said = second_ask(note)
    if said is None or "date" not in said[1]:
        return note
    pairs = (pair.partition("=") for pair in value.split("&"))
    return f"{kind}:" + "&".join(f"{name}={_dates_words(said[1]['date']) if name == 'date' else word}"
                                 for name, _, word in pairs)


@pytest.mark.parametrize("case", _ROUTER_CASES, ids=_ids(_ROUTER_CASES))
def test_eval_case_router_proposes_the_expected_tool(case):
    expect = case["expect"]
    proposal = route(case["input"])
    assert proposal.tool == expect["tool"], case["notes"]
    for name, value in (expect.get("arguments") or {}).items():
        got = asked_dates(proposal.args.get(name)) if name == "date" else proposal.args.get(name)
        assert got == value, (name, proposal.args)
    assert set(expect.get("notes", [])) <= {_with_days(note) for note in proposal.notes}, proposal.notes


@pytest.mark.parametrize("case", _WEBHOOK_CASES, ids=_ids(_WEBHOOK_CASES))
def test_eval_case_through_the_webhook_replies_as_expected(case, pinned_service, eval_standin):
    expect = case["expect"]
    user = _case_user(case["id"])
    remembered = (case.get("setup") or {}).get("remembered")
    if remembered:
        _remember(pinned_service, eval_standin, _DIET_WORDS[remembered], user)
    event = text_event(case["input"], user_id=user)
    messages = _send(pinned_service, eval_standin, event)
    words = all_text(messages)
    for needle in expect.get("must_contain", []):
        assert needle in words, (needle, words)
    for needle in expect.get("must_not_contain", []):
        assert needle not in words, (needle, words)
    audit = pinned_service.store.get(AUDIT, f"test-tenant:{event['webhookEventId']}")
    if "statuses" in expect:
        assert audit is not None and audit["status"] in expect["statuses"], audit
    if "result_ids" in expect:
        assert sorted(audit["result_ids"]) == sorted(expect["result_ids"]), audit["result_ids"]


def test_eval_other_township_button_keeps_the_asked_dates(pinned_service, eval_standin):
    user = _case_user("other-township-button")
    messages = _send(pinned_service, eval_standin, text_event("花壇跟員林週末有活動嗎", user_id=user))
    buttons = postbacks(messages)
    assert buttons["員林市"] == "events:area=員林市&date=2026-12-05/2026-12-07"
    again = _send(pinned_service, eval_standin, postback_event(buttons["員林市"], user_id=user))
    assert "員林市，2026/12/5（六）～2026/12/6（日）" in all_text(again)
