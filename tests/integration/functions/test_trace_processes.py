"""One LINE event followed by its trace through processes (shared/trace.py, docs/runbook.md): the
webhook and the agent as functions-framework processes, the embedded queue in the store's SQLite
file, the recording LINE stand-in and the Gemini stand-in. The trace LINE's delivery came with is on
the webhook's lines for that event, in the queued task's stored headers, and on the agent's lines
that answer it, under the task's own span; an event that came with no trace header gets a fresh one,
followed the same way, and the two never mix."""
from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
import requests

from shared.store.sqlite import path_from_url
from shared.trace import TraceContext, parse_traceparent
from tests.conftest import case_bytes, line_body, postback_event, recorded_replies, sign
from tests.handoff_support import USER, wait_for
from tests.integration.functions.test_agent_processes import fresh_text, gemini, start_model  # noqa: F401
from tests.integration.functions.test_delivery_processes import answers_to, queues_settled
from tests.memory_support import USER_A, postbacks

pytestmark = pytest.mark.slow
TRACE, SPAN, SAMPLED = "logging.googleapis.com/trace", "logging.googleapis.com/spanId", \
    "logging.googleapis.com/trace_sampled"


def _lines(log_path: Path) -> list[dict]:
    return [json.loads(line) for line in log_path.read_text().splitlines() if line.startswith("{")]


def _post(url: str, event: dict | bytes, headers: dict[str, str]) -> requests.Response:
    body = event if isinstance(event, bytes) else line_body(event)
    return requests.post(url, data=body, timeout=30, headers={
        "Content-Type": "application/json", "X-Line-Signature": sign(body), **headers})


def _task_traces(store_url: str) -> dict[str, TraceContext]:
    """``{task name: the trace it is sent with}`` of the queued-event queue, read from the store's file."""
    with sqlite3.connect(path_from_url(store_url)) as conn:
        rows = conn.execute("SELECT t.name, t.traceparent FROM queue_task_traces t JOIN queue_tasks q"
                            " ON q.name = t.name WHERE q.queue = 'queued-events'").fetchall()
    return {name: parse_traceparent(value) for name, value in rows}


def test_trace_one_events_trace_is_on_the_webhooks_lines_the_task_and_the_agents_lines(
        start_function, base_env, line_standin, gemini):  # noqa: F811 - the stand-in fixture
    webhook, agent = start_model(start_function, base_env, gemini)
    gemini.script([{"function_call": {"name": "search_local_places", "args": {"area": "花壇鄉"}}},
                   {"function_call": {"name": "search_local_places", "args": {"area": "鹿港鎮"}}}])
    line = TraceContext.fresh().child()  # as Cloud Run's front end would send it
    line = TraceContext(line.trace_id, line.span_id, True)
    traced_event, plain_event = fresh_text("花壇那邊有什麼好吃的？"), fresh_text("鹿港那邊有什麼好吃的？")
    assert _post(webhook.url, traced_event, {"traceparent": line.traceparent()}).json()["events"] == ["queued"]
    assert _post(webhook.url, plain_event, {"traceparent": "00-not-a-trace"}).json()["events"] == ["queued"]
    for event in (traced_event, plain_event):
        wait_for(lambda event=event: answers_to(line_standin, USER, {event["replyToken"]}), 60, "the answer")
    wait_for(lambda: queues_settled(base_env["LOCAL_STORE_URL"]), 30, "the queue to settle")

    # The webhook: every line about each event carries that event's trace, under the span LINE's call had.
    webhook_lines = _lines(webhook.log_path)
    by_event = {event["webhookEventId"]: [entry for entry in webhook_lines
                                          if entry.get("webhook_event_id") == event["webhookEventId"]]
                for event in (traced_event, plain_event)}
    about_traced, about_plain = by_event[traced_event["webhookEventId"]], by_event[plain_event["webhookEventId"]]
    assert {"event queued"} <= {entry["message"] for entry in about_traced}
    assert {(entry[TRACE], entry[SPAN], entry[SAMPLED]) for entry in about_traced} == {
        (line.trace_id, line.span_id, True)}  # no project configured: the bare trace id (docs/delivery.md)
    [fresh] = {entry[TRACE] for entry in about_plain}  # a malformed header: one fresh trace for the event
    assert fresh != line.trace_id and len(fresh) == 32
    handled = [entry for entry in webhook_lines if entry["message"] == "webhook handled"]
    assert sorted(entry[TRACE] for entry in handled) == sorted([line.trace_id, fresh])

    # The queued tasks: each sent with its event's trace and a span of its own.
    tasks = _task_traces(base_env["LOCAL_STORE_URL"])
    assert sorted(task.trace_id for task in tasks.values()) == sorted([line.trace_id, fresh])
    [traced_task] = [task for task in tasks.values() if task.trace_id == line.trace_id]
    assert traced_task.span_id != line.span_id and traced_task.sampled

    # The agent: its lines for the task carry the same trace, under the span the task's header named.
    agent_lines = _lines(agent.log_path)
    answered = [entry for entry in agent_lines if entry["message"] == "queued event answered"]
    assert sorted(entry[TRACE] for entry in answered) == sorted([line.trace_id, fresh])
    of_traced = [entry for entry in agent_lines if entry.get(TRACE) == line.trace_id]
    assert {entry[SPAN] for entry in of_traced} == {traced_task.span_id}
    assert {"turn", "queued event answered"} <= {entry["message"] for entry in of_traced}
    assert all(entry.get(TRACE) != line.trace_id for entry in agent_lines if entry not in of_traced)


def test_trace_a_consent_taps_call_to_functions_memory_carries_the_webhooks_trace(
        start_function, base_env, line_standin):
    memory = start_function("memory", base_env)
    webhook = start_function("webhook", {**base_env, "MEMORY_FUNCTION_URL": memory.url})
    remember = case_bytes("text-remember-vegetarian.json")
    assert _post(webhook.url, remember, {}).status_code == 200
    [card] = recorded_replies(line_standin, json.loads(remember)["events"][0]["replyToken"])
    approve = postbacks(card["body"]["messages"])["同意記住"]
    # Google's older header this time: the span in decimal, o=1 sampled.
    tap = postback_event(approve, user_id=USER_A)
    cloud = TraceContext.fresh()
    response = _post(webhook.url, tap, {"X-Cloud-Trace-Context": f"{cloud.trace_id}/{int(cloud.span_id, 16)};o=1"})
    assert response.status_code == 200
    assert "已經記住" in json.dumps(recorded_replies(line_standin, tap["replyToken"]), ensure_ascii=False)

    tapped = [entry for entry in _lines(webhook.log_path) if entry.get("webhook_event_id") == tap["webhookEventId"]]
    assert tapped and {(entry[TRACE], entry[SPAN], entry[SAMPLED]) for entry in tapped} == {
        (cloud.trace_id, cloud.span_id, True)}
    [applied] = [entry for entry in _lines(memory.log_path) if entry["message"] == "memory card applied"]
    assert applied[TRACE] == cloud.trace_id and applied[SAMPLED] is True
    assert applied[SPAN] != cloud.span_id  # the call's own span
