"""Structured JSON logs on stderr, in Cloud Logging's field names.

Never log tokens, secrets, signatures or request text; user ids go through ``hash_user``, the
keyed hash of the ``shared.keys.UserHasher`` that the entry point installs (``use_user_hasher``):
someone who has a user id but not ``LOCAL_SIGNING_KEY`` cannot find that user's lines. An operator
who holds the key finds one resident's lines with ``make user-data`` (its ``log_user_hash``) and a
log query on ``jsonPayload.user`` (docs/delivery.md, "Logs").

A line written while a request is handled carries its trace (``shared.trace.current()``, taken when
``log`` is called, so in the thread that logs) in Cloud Logging's special fields, which it lifts
into the entry's ``trace``, ``spanId`` and ``traceSampled``
(https://cloud.google.com/logging/docs/structured-logging): ``logging.googleapis.com/trace`` is
``projects/<PROJECT>/traces/<TRACE_ID>`` with the project the entry point installs
(``use_trace_project``: ``Settings.trace_project``), or the bare 32-hex trace id when no project is
known (a local run: nothing there reads it as a resource name, and a reader still joins lines on
it); ``logging.googleapis.com/spanId`` is 16 hex digits; ``logging.googleapis.com/trace_sampled``
a boolean. A line outside any request (a dispatcher's idle pass) has none of the three.

Every line is bounded whatever its fields hold, in one place (``JsonFormatter``): a value may come
from a request (an unknown event type, an error's message, a header), so every string in a field,
at any depth, and the message, is cut at ``MAX_FIELD_CHARS`` characters with a marker that says how
long it was (``…[cut: 100000 chars]``); lists and objects keep ``MAX_FIELD_ITEMS`` items and
``MAX_FIELD_DEPTH`` levels; a traceback keeps its first and last ``MAX_TRACEBACK_CHARS // 2``
characters (its outer frames and its exception line). A line still longer than one ``write`` takes
(``PIPE_BUF``, see ``JsonLineHandler``) has its longest fields replaced by a marker with their size
until it fits, so only a line with a traceback is ever written in more than one ``write``.
"""
from __future__ import annotations

import itertools
import json
import logging
import os
import select
import sys
import threading
from datetime import UTC, datetime
from typing import Any, Callable

from shared import trace as _trace

_LOGGER = logging.getLogger("local")
#: Longest string a log line carries in its message or any field (characters); longer is cut.
MAX_FIELD_CHARS = 256
#: Most items of a list or object in a field, and its deepest nesting; the rest is cut.
MAX_FIELD_ITEMS, MAX_FIELD_DEPTH = 32, 4
#: Longest traceback in a line (characters): its start and its end are kept.
MAX_TRACEBACK_CHARS = 8192
#: Integers wider than this many bits are written as a marker (a huge one could not even be printed).
_MAX_INT_BITS = 64


def _cut(text: str, limit: int = MAX_FIELD_CHARS) -> str:
    """``text`` itself, or its first ``limit`` characters and a marker with its whole length."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}…[cut: {len(text)} chars]"


def bounded(value: Any, depth: int = 0) -> Any:
    """A JSON-ready copy of a field's value within the line's bounds (see the module docstring).

    Strings (and any other object, through ``str``) are cut at ``MAX_FIELD_CHARS``; a list, tuple,
    set or dict keeps ``MAX_FIELD_ITEMS`` items, the rest named by a marker, and nothing below
    ``MAX_FIELD_DEPTH`` levels; an int wider than 64 bits becomes a marker. Linear in what is kept.
    """
    if value is None or isinstance(value, (bool, float)):
        return value
    if isinstance(value, int):
        return value if value.bit_length() <= _MAX_INT_BITS else f"[int of {value.bit_length()} bits]"
    if isinstance(value, str):
        return _cut(value)
    if isinstance(value, (dict, list, tuple, set, frozenset)):
        if depth >= MAX_FIELD_DEPTH:
            return f"[{type(value).__name__} of {len(value)} items]"
        if isinstance(value, dict):
            kept = {_cut(str(key)): bounded(item, depth + 1)
                    for key, item in itertools.islice(value.items(), MAX_FIELD_ITEMS)}
            if len(value) > MAX_FIELD_ITEMS:
                kept["…"] = f"[cut: {len(value)} items]"
            return kept
        items = [bounded(item, depth + 1) for item in itertools.islice(value, MAX_FIELD_ITEMS)]
        if len(value) > MAX_FIELD_ITEMS:
            items.append(f"…[cut: {len(value)} items]")
        return items
    return _cut(str(value))


def _cut_traceback(text: str) -> str:
    if len(text) <= MAX_TRACEBACK_CHARS:
        return text
    half = MAX_TRACEBACK_CHARS // 2
    return f"{text[:half]}\n…[cut: {len(text)} chars]…\n{text[-half:]}"


class JsonFormatter(logging.Formatter):
    """One JSON object per line: ``severity``, ``message``, ``time`` (UTC) and the record's ``fields``,
    every value within the bounds of ``bounded`` and a traceback within ``MAX_TRACEBACK_CHARS``."""

    def format(self, record: logging.LogRecord) -> str:
        entry = {
            "severity": record.levelname,
            "message": _cut(record.getMessage()),
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(),
            "logger": record.name,
        }
        context = getattr(record, "trace", None)
        if context is not None:
            entry[TRACE_FIELD] = trace_name(context.trace_id)
            entry[SPAN_FIELD] = context.span_id
            entry[SAMPLED_FIELD] = context.sampled
        names = []
        for name, value in getattr(record, "fields", {}).items():
            name = name if type(name) is str and len(name) <= MAX_FIELD_CHARS else _cut(str(name))
            names.append(name)
            # the common case first: a short string or a plain value, as it is
            short = type(value) is str and len(value) <= MAX_FIELD_CHARS
            entry[name] = value if short or value is None or type(value) in (bool, float) else bounded(value)
        if record.exc_info:
            entry["exception"] = _cut_traceback(self.formatException(record.exc_info))
            return _json_line(entry)
        line = _json_line(entry)
        if _fits_one_write(line):
            return line
        # Still longer than one write takes: the longest fields give way to a marker, one by one.
        sizes = {name: len(_json_line(entry[name])) for name in names}
        for name in sorted(names, key=sizes.__getitem__, reverse=True):
            entry[name] = f"[cut: {sizes[name]} chars of JSON]"
            line = _json_line(entry)
            if _fits_one_write(line):
                break
        return line


def _json_line(value: Any) -> str:
    line = json.dumps(value, ensure_ascii=False)
    # A lone surrogate (from ASCII-escaped JSON) cannot be written as UTF-8: keep it escaped.
    return line.encode("utf-8", "backslashreplace").decode("utf-8")


def _fits_one_write(line: str) -> bool:
    """True when the line and its newline are at most ``PIPE_BUF`` bytes (``JsonLineHandler``)."""
    return len(line) < _ATOMIC_BYTES // 4 or len(line.encode("utf-8")) < _ATOMIC_BYTES


#: A write of at most this many bytes to a pipe is atomic (POSIX ``PIPE_BUF``, 4096 on Linux): it is
#: never split, nor mixed with another thread's or process's write.
_ATOMIC_BYTES = getattr(select, "PIPE_BUF", 512)


class JsonLineHandler(logging.Handler):
    """Writes each record as one line, in one ``os.write`` on the stream's file descriptor, with no lock.

    ``logging.StreamHandler`` holds the handler's lock through ``write`` and ``flush``, and the
    ``write`` system call lets other threads run: under load, every thread that logs meanwhile waits
    on that lock and is woken after it, two context switches each (profiled: two lines per
    webhook request cost 0.1-0.25 ms of CPU under 16 connections, against about 15 µs alone). A line
    of at most ``PIPE_BUF`` bytes (nearly all) is written with one ``write`` and no lock: a pipe
    takes it whole, never interleaved with another writer's (POSIX ``write``), and Linux writes it
    to a regular file whole as well. A longer line (a traceback) is written under a lock, all of it, in as many
    ``write`` calls as it takes. A stream without a file descriptor (a test's capture) is written
    through its ``write`` under the lock, as ``StreamHandler`` does.

    Args:
        stream: where lines go (``sys.stderr`` by default).
    """

    def __init__(self, stream: Any = None) -> None:
        super().__init__()
        self.stream = stream if stream is not None else sys.stderr
        try:
            self._fd: int | None = self.stream.fileno()
            self.stream.flush()  # what it buffered so far comes first
        except (AttributeError, OSError, ValueError):
            self._fd = None
        self._long_lock = threading.Lock()
        os.register_at_fork(after_in_child=self._long_lock._at_fork_reinit)  # type: ignore[attr-defined]

    def createLock(self) -> None:
        """No handler-wide lock (see the class docstring): ``emit`` serialises only long lines."""
        self.lock = None  # type: ignore[assignment]

    def emit(self, record: logging.LogRecord) -> None:
        """Write one formatted line, ``\\n``-terminated (UTF-8 on a file descriptor)."""
        try:
            line = self.format(record) + "\n"
            if self._fd is None:
                with self._long_lock:
                    self.stream.write(line)
                    self.stream.flush()
                return
            data = line.encode("utf-8", "backslashreplace")
            view = memoryview(data)
            if len(data) <= _ATOMIC_BYTES:
                view = view[os.write(self._fd, view):]  # all of it, unless a signal or a full disk cut it
                if not view:
                    return
            with self._long_lock:
                while view:
                    view = view[os.write(self._fd, view):]
        except Exception:  # noqa: BLE001 - logging's own rule: a failing handler reports, never raises
            self.handleError(record)


def configure() -> None:
    """Install the JSON handler on the ``local`` logger once (idempotent)."""
    if any(isinstance(h.formatter, JsonFormatter) for h in _LOGGER.handlers):
        return
    handler = JsonLineHandler(sys.stderr)
    handler.setFormatter(JsonFormatter())
    _LOGGER.addHandler(handler)
    _LOGGER.setLevel(logging.INFO)
    _LOGGER.propagate = False


#: Cloud Logging's special fields of a line's trace (https://cloud.google.com/logging/docs/structured-logging).
TRACE_FIELD = "logging.googleapis.com/trace"
SPAN_FIELD = "logging.googleapis.com/spanId"
SAMPLED_FIELD = "logging.googleapis.com/trace_sampled"

#: The Google Cloud project trace names are written under, installed by each entry point.
_trace_project: str | None = None


def use_trace_project(project: str | None) -> None:
    """Install the project of ``trace_name``: each function's entry point calls it once with
    ``Settings.trace_project``; None writes bare trace ids."""
    global _trace_project
    _trace_project = project


def trace_name(trace_id: str) -> str:
    """The ``logging.googleapis.com/trace`` value of a trace id: ``projects/<PROJECT>/traces/<TRACE_ID>``,
    or ``trace_id`` itself when no project is installed."""
    project = _trace_project
    return f"projects/{project}/traces/{trace_id}" if project else trace_id


#: The hasher of user ids in log lines, installed by each entry point (``use_user_hasher``).
_user_hasher: Callable[[str | None], str | None] | None = None


def use_user_hasher(hasher: Callable[[str | None], str | None] | None) -> None:
    """Install the hasher ``hash_user`` applies: each function's entry point calls it once with
    ``shared.wiring.user_hasher(settings)`` (a ``shared.keys.UserHasher``, keyed from
    ``LOCAL_SIGNING_KEY``); None removes it."""
    global _user_hasher
    _user_hasher = hasher


def hash_user(user_id: str | None) -> str | None:
    """The user field of a log line: the installed hasher's tag of ``user_id`` (16 hex digits).

    Returns:
        None for no user, and None when no hasher is installed (no ``LOCAL_SIGNING_KEY``): a line
        then has no user field rather than one no other process could match.
    """
    hasher = _user_hasher
    return hasher(user_id) if hasher is not None and user_id else None


def log(severity: str, message: str, *, exc_info: Any = False, **fields: Any) -> None:
    """Emit one structured entry. ``severity`` is a Cloud Logging level (INFO, WARNING, ERROR);
    ``exc_info`` is what ``logging`` takes (True inside an ``except`` block, or an exception). The
    current request's trace (``shared.trace.current()``) goes on the line (module docstring)."""
    configure()
    _LOGGER.log(logging.getLevelName(severity.upper()), message,
                extra={"fields": fields, "trace": _trace.current()}, exc_info=exc_info)
