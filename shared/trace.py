"""Trace context of the request being handled: read from its headers, written on every log line,
passed on to every task and call it makes.

Each entry point (``functions/*/main.py``) wraps its handler in ``traced``: for the duration of one
request a context variable holds its ``TraceContext``, read from the W3C ``traceparent`` header
(preferred), else Google's older ``X-Cloud-Trace-Context`` (``TRACE_ID/SPAN_ID;o=1``), else a fresh
trace, so a request that came with no header (a local run, a test) can still be followed. A header
that is malformed is ignored as if absent: never an error. ``shared.logs`` writes the current trace
on every line (``logging.googleapis.com/trace``, ``…/spanId``, ``…/trace_sampled``, which Cloud
Logging lifts into the entry's ``trace``, ``spanId`` and ``traceSampled``), and the task queues and
the memory client send ``outgoing_headers()`` (the same trace, a new span) with what they create.

Work done on another thread for a request carries that request's trace explicitly: the embedded
queue stores it with the task (``shared.queue.embedded``), a watchdog alarm runs in the context it
was scheduled in (``shared.http_body``). A thread started with ``threading.Thread`` begins with no
trace (Python 3.11 threads start in an empty context), so a dispatcher started during a request
never carries that request's trace into later work.

The W3C parser is hand-written: it is a few lines of the format below, and the maintained
libraries that have one (opentelemetry-api / -sdk) are far heavier than the webhook's cold start
should pay for.

Sources: W3C Trace Context, "traceparent Header" (https://www.w3.org/TR/trace-context/#traceparent-header);
Cloud Trace, "Trace context" (https://cloud.google.com/trace/docs/trace-context: both headers, the
span id decimal in ``X-Cloud-Trace-Context``); Cloud Logging, "Structured logging", special JSON
fields (https://cloud.google.com/logging/docs/structured-logging).
"""
from __future__ import annotations

import contextvars
import functools
import re
import secrets
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Mapping

#: W3C ``traceparent``: version, trace-id, parent-id, flags, lowercase hex joined by ``-``. A future
#: version may append fields after another ``-``; version 00 may not.
_TRACEPARENT = re.compile(r"([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?", re.S)
#: ``X-Cloud-Trace-Context``: ``TRACE_ID[/SPAN_ID][;o=OPTIONS]``, the span id in decimal (64 bits).
_CLOUD_TRACE = re.compile(r"([0-9a-fA-F]{32})(?:/([0-9]{1,20}))?(?:;o=([0-9]{1,2}))?")
#: Headers longer than this are not read (a valid one is 55 characters; a future version a little more).
MAX_HEADER_CHARS = 512
_ZERO_TRACE, _ZERO_SPAN = "0" * 32, "0" * 16


@dataclass(frozen=True)
class TraceContext:
    """One request's place in a trace.

    ``trace_id``: 32 lowercase hex digits (128 bits, not all zero), shared by every request of one
    event; ``span_id``: 16 lowercase hex digits (64 bits, not all zero), this request's span as its
    caller named it (the ``parent-id`` it sent); ``sampled``: the caller's sampling decision
    (``traceparent`` flag 01, ``o=1``).
    """

    trace_id: str
    span_id: str
    sampled: bool = False

    @classmethod
    def fresh(cls) -> "TraceContext":
        """A new trace (random ids, not sampled): for a request that came without one."""
        return cls(_random_hex(16), _random_hex(8), False)

    def child(self) -> "TraceContext":
        """The same trace with a new span: what a task or call this request makes is sent with."""
        return TraceContext(self.trace_id, _random_hex(8), self.sampled)

    def traceparent(self) -> str:
        """This context as a W3C ``traceparent`` value, version 00 (55 characters)."""
        return f"00-{self.trace_id}-{self.span_id}-{'01' if self.sampled else '00'}"

    def cloud_trace_context(self) -> str:
        """This context as an ``X-Cloud-Trace-Context`` value (``TRACE_ID/DECIMAL_SPAN_ID;o=0|1``)."""
        return f"{self.trace_id}/{int(self.span_id, 16)};o={1 if self.sampled else 0}"

    def headers(self) -> dict[str, str]:
        """Both headers carrying this context: ``traceparent`` and ``X-Cloud-Trace-Context``."""
        return {"traceparent": self.traceparent(), "X-Cloud-Trace-Context": self.cloud_trace_context()}


def _random_hex(size: int) -> str:
    """``size`` random bytes as lowercase hex, never all zero (W3C: an all-zero id is invalid)."""
    while True:
        value = secrets.token_hex(size)
        if value.strip("0"):
            return value


def parse_traceparent(value: Any) -> TraceContext | None:
    """A W3C ``traceparent`` value → its TraceContext, or None when it is not a valid one.

    Invalid: not a string, longer than ``MAX_HEADER_CHARS``, not lowercase hex in the four fields,
    version ``ff``, version 00 with anything after the flags, an all-zero trace-id or parent-id.
    Never raises.
    """
    if not isinstance(value, str) or len(value) > MAX_HEADER_CHARS:
        return None
    match = _TRACEPARENT.fullmatch(value.strip(" \t"))
    if match is None:
        return None
    version, trace_id, span_id, flags, rest = match.groups()
    if version == "ff" or (version == "00" and rest is not None):
        return None
    if trace_id == _ZERO_TRACE or span_id == _ZERO_SPAN:
        return None
    return TraceContext(trace_id, span_id, bool(int(flags, 16) & 1))


def parse_cloud_trace_context(value: Any) -> TraceContext | None:
    """An ``X-Cloud-Trace-Context`` value (``TRACE_ID/SPAN_ID;o=1``) → its TraceContext, or None.

    The trace id is 32 hex digits (read in lowercase, not all zero); the span id, decimal, 1 to
    2**64 - 1, becomes 16 hex digits, and a missing one a fresh span id; ``o=1`` means sampled.
    Never raises.
    """
    if not isinstance(value, str) or len(value) > MAX_HEADER_CHARS:
        return None
    match = _CLOUD_TRACE.fullmatch(value.strip(" \t"))
    if match is None:
        return None
    raw_trace, raw_span, options = match.groups()
    trace_id = raw_trace.lower()
    if trace_id == _ZERO_TRACE:
        return None
    if raw_span is None:
        span_id = _random_hex(8)
    else:
        number = int(raw_span)
        if not 0 < number < 2 ** 64:
            return None
        span_id = f"{number:016x}"
    return TraceContext(trace_id, span_id, options is not None and int(options) & 1 == 1)


def from_headers(headers: Mapping[str, Any] | Any) -> TraceContext:
    """The trace a request's headers carry: ``traceparent`` if valid, else ``X-Cloud-Trace-Context``
    if valid, else a fresh one. ``headers`` has ``get(name)`` (case-insensitive for a flask request's
    headers; both spellings are tried otherwise), or is None. Never raises."""
    get = getattr(headers, "get", None)
    if get is None:
        return TraceContext.fresh()
    for name, parse in (("traceparent", parse_traceparent), ("X-Cloud-Trace-Context", parse_cloud_trace_context)):
        try:
            value = get(name)
            if value is None:
                value = get(name.lower())
        except Exception:  # noqa: BLE001 - an odd headers object is no trace, never an error
            value = None
        found = parse(value)
        if found is not None:
            return found
    return TraceContext.fresh()


_CURRENT: contextvars.ContextVar[TraceContext | None] = contextvars.ContextVar("local_trace", default=None)


def current() -> TraceContext | None:
    """The trace of the request this code runs for, or None outside any request."""
    return _CURRENT.get()


@contextmanager
def active(trace: TraceContext | None) -> Iterator[TraceContext | None]:
    """Make ``trace`` current for the ``with`` block (None: no trace), then restore the previous one."""
    token = _CURRENT.set(trace)
    try:
        yield trace
    finally:
        _CURRENT.reset(token)


def outgoing_headers() -> dict[str, str]:
    """Headers for a task or call made now: the current trace with a new span (``TraceContext.headers``),
    or ``{}`` outside any request (the receiver then starts a trace of its own)."""
    trace = _CURRENT.get()
    return trace.child().headers() if trace is not None else {}


def traced(handler: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """Wrap a functions-framework handler ``handler(request)``: the request's trace
    (``from_headers(request.headers)``) is current while it runs, and only then (a thread of the
    server's pool serves other requests afterwards). Put it under ``@functions_framework.http``."""

    @functools.wraps(handler)
    def wrapper(request: Any) -> Any:
        with active(from_headers(getattr(request, "headers", None))):
            return handler(request)

    return wrapper
