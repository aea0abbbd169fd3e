"""Trace context (shared/trace.py) and the trace fields of log lines (shared/logs.py): headers read as
W3C and Google document them, anything else a fresh trace and never an error, and one request's
trace never seen by another running at the same time on another thread, nor by the next request a
pooled thread serves."""
from __future__ import annotations

import re
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from werkzeug.test import EnvironBuilder

from shared import logs, trace
from shared.config import Settings
from shared.http_body import _Watchdog
from shared.logs import log
from shared.trace import TraceContext, from_headers, parse_cloud_trace_context, parse_traceparent

#: The example of the W3C recommendation, "traceparent Header".
W3C_EXAMPLE = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
TRACE_FIELD, SPAN_FIELD, SAMPLED_FIELD = ("logging.googleapis.com/trace", "logging.googleapis.com/spanId",
                                          "logging.googleapis.com/trace_sampled")


def _valid(context: TraceContext) -> bool:
    return (re.fullmatch(r"[0-9a-f]{32}", context.trace_id) is not None and context.trace_id.strip("0") != ""
            and re.fullmatch(r"[0-9a-f]{16}", context.span_id) is not None and context.span_id.strip("0") != "")


def _request(headers: dict[str, str]):
    """A real werkzeug request (what functions-framework hands a handler) with these headers."""
    return EnvironBuilder(method="POST", path="/", headers=headers).get_request()


def test_trace_traceparent_is_read_as_w3c_writes_it():
    found = parse_traceparent(W3C_EXAMPLE)
    assert found == TraceContext("4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7", True)
    assert parse_traceparent(W3C_EXAMPLE[:-2] + "00").sampled is False
    assert parse_traceparent(W3C_EXAMPLE[:-2] + "03").sampled is True  # only the sampled bit counts
    # A later version may append fields; version 00 may not.
    assert parse_traceparent("cc" + W3C_EXAMPLE[2:] + "-what-comes-later").trace_id == found.trace_id
    assert parse_traceparent(W3C_EXAMPLE + "-later") is None


@pytest.mark.parametrize("value", [
    "", "00", W3C_EXAMPLE.upper(), "ff" + W3C_EXAMPLE[2:], W3C_EXAMPLE.replace("4bf92f3577b34da6a3ce929d0e0e4736", "0" * 32),
    W3C_EXAMPLE.replace("00f067aa0ba902b7", "0" * 16), W3C_EXAMPLE[:-1], W3C_EXAMPLE.replace("-", "_"),
    W3C_EXAMPLE + "0" * 600, "00-4bf92f3577b34da6a3ce929d0e0e473g-00f067aa0ba902b7-01", None, 7,
])
def test_trace_malformed_traceparent_is_no_trace(value):
    assert parse_traceparent(value) is None


def test_trace_cloud_trace_context_span_is_decimal_and_o_1_is_sampled():
    found = parse_cloud_trace_context("105445AA7843BC8BF206B12000100000/1;o=1")
    assert found == TraceContext("105445aa7843bc8bf206b12000100000", "0000000000000001", True)
    big = parse_cloud_trace_context(f"105445aa7843bc8bf206b12000100000/{2 ** 64 - 1};o=0")
    assert big.span_id == "f" * 16 and big.sampled is False
    bare = parse_cloud_trace_context("105445aa7843bc8bf206b12000100000")
    assert bare.trace_id == "105445aa7843bc8bf206b12000100000" and _valid(bare) and not bare.sampled
    for bad in ("105445aa7843bc8bf206b12000100000/0;o=1", f"105445aa7843bc8bf206b12000100000/{2 ** 64}",
                "0" * 32 + "/1;o=1", "105445aa/1;o=1", "105445aa7843bc8bf206b12000100000/-1", "x" * 600):
        assert parse_cloud_trace_context(bad) is None, bad


def test_trace_headers_prefer_traceparent_then_cloud_trace_then_a_fresh_trace():
    cloud = "105445aa7843bc8bf206b12000100000/1;o=1"
    assert from_headers(_request({"traceparent": W3C_EXAMPLE, "X-Cloud-Trace-Context": cloud}).headers) \
        == parse_traceparent(W3C_EXAMPLE)
    assert from_headers(_request({"traceparent": "garbage", "X-Cloud-Trace-Context": cloud}).headers) \
        == parse_cloud_trace_context(cloud)
    assert from_headers({"x-cloud-trace-context": cloud}) == parse_cloud_trace_context(cloud)
    first, second = from_headers(_request({}).headers), from_headers(None)
    assert _valid(first) and _valid(second) and first.trace_id != second.trace_id and not first.sampled


def test_trace_what_is_sent_on_is_the_same_trace_with_a_new_span():
    context = parse_traceparent(W3C_EXAMPLE)
    child = context.child()
    assert (child.trace_id, child.sampled) == (context.trace_id, True) and child.span_id != context.span_id
    sent = child.headers()
    assert parse_traceparent(sent["traceparent"]) == child
    assert parse_cloud_trace_context(sent["X-Cloud-Trace-Context"]) == child
    assert trace.outgoing_headers() == {}  # outside any request: nothing to pass on
    with trace.active(context):
        assert parse_traceparent(trace.outgoing_headers()["traceparent"]).trace_id == context.trace_id


@settings(max_examples=60, deadline=None)
@given(traceparent=st.one_of(st.none(), st.text(max_size=80), st.from_regex(
           r"[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}(-.{0,8})?", fullmatch=True)),
       cloud=st.one_of(st.none(), st.text(max_size=80), st.from_regex(
           r"[0-9a-fA-F]{32}(/[0-9]{1,21})?(;o=[0-9]{1,2})?", fullmatch=True)))
def test_trace_any_header_strings_give_a_valid_trace_never_an_error(traceparent, cloud):
    headers = {name: value for name, value in (("traceparent", traceparent), ("X-Cloud-Trace-Context", cloud))
               if value is not None}
    found = from_headers(headers)
    assert _valid(found)
    parsed = parse_traceparent(traceparent)
    if parsed is not None:  # a valid header is what the request goes on with, and round-trips
        assert found == parsed and parse_traceparent(parsed.traceparent()) == parsed
        assert traceparent.startswith(f"{traceparent[:2]}-{found.trace_id}-{found.span_id}-")
    elif parse_cloud_trace_context(cloud) is not None:
        assert found.trace_id == cloud[:32].lower()


def test_trace_log_lines_carry_the_trace_under_the_configured_project(json_lines):
    context = parse_traceparent(W3C_EXAMPLE)
    logs.use_trace_project(Settings.from_env({"LOCAL_STORE_URL": "firestore://local-prod/db2"}).trace_project)
    with trace.active(context):
        log("INFO", "webhook handled", events=1)
    logs.use_trace_project(None)
    with trace.active(context):
        log("INFO", "event finished")
    log("INFO", "queue dispatch pass skipped")
    under_project, bare, outside = json_lines()
    assert under_project[TRACE_FIELD] == "projects/local-prod/traces/4bf92f3577b34da6a3ce929d0e0e4736"
    assert (under_project[SPAN_FIELD], under_project[SAMPLED_FIELD]) == ("00f067aa0ba902b7", True)
    assert under_project["events"] == 1 and under_project["message"] == "webhook handled"
    assert bare[TRACE_FIELD] == "4bf92f3577b34da6a3ce929d0e0e4736"  # no project known: the id itself
    assert not {TRACE_FIELD, SPAN_FIELD, SAMPLED_FIELD} & set(outside)  # outside any request: none


def test_trace_project_comes_from_google_cloud_project_then_the_firestore_url():
    assert Settings.from_env({"GOOGLE_CLOUD_PROJECT": "p1", "LOCAL_STORE_URL": "firestore://p2"}).trace_project == "p1"
    assert Settings.from_env({"LOCAL_STORE_URL": "firestore://p2"}).trace_project == "p2"
    assert Settings.from_env({"LOCAL_STORE_URL": "sqlite:////tmp/x.sqlite3"}).trace_project is None


def test_trace_concurrent_requests_on_pooled_threads_never_see_each_others_trace(json_lines):
    barrier = threading.Barrier(4)

    @trace.traced
    def handler(request):
        barrier.wait(10)  # four requests inside their handlers at once
        seen = trace.current()
        log("INFO", "webhook handled", events=1)
        barrier.wait(10)
        return seen

    sent = [TraceContext.fresh() for _ in range(8)]
    with ThreadPoolExecutor(max_workers=4) as pool:  # as gunicorn's gthread worker: threads serve in turn
        seen = list(pool.map(lambda c: handler(_request({"traceparent": c.traceparent()})), sent))
        after = list(pool.map(lambda _: trace.current(), range(8)))
    assert seen == sent
    assert after == [None] * 8  # a thread that served a request carries nothing into the next
    written = sorted(line[TRACE_FIELD] for line in json_lines())
    assert written == sorted(c.trace_id for c in sent)


def test_trace_a_watchdog_alarm_logs_under_the_trace_it_was_scheduled_in():
    contexts = [TraceContext.fresh(), TraceContext.fresh(), None]  # the last scheduled outside any request
    seen: dict[int, TraceContext | None] = {}
    done = [threading.Event() for _ in contexts]
    watchdog = _Watchdog(linger_seconds=0.05)

    def alarm(index: int):
        seen[index] = trace.current()
        done[index].set()

    for index, context in enumerate(contexts):
        with trace.active(context):
            watchdog.schedule(0.0, lambda index=index: alarm(index))
    assert all(event.wait(10) for event in done)
    assert [seen[index] for index in range(3)] == contexts
