"""Read an HTTP request body with a byte cap and a read deadline, however it arrives.

A public endpoint must not let a client decide how much it reads or how long a thread waits:

* **Cap.** Flask's per-request ``max_content_length`` makes werkzeug refuse a ``Content-Length``
  over the cap before reading anything, and wrap a body of unknown length (``Transfer-Encoding:
  chunked``; gunicorn sets ``wsgi.input_terminated``) in a ``LimitedStream`` that stops at the cap.
  We read at most ``max_bytes + 1`` bytes (the one byte more tells an over-long body), so
  nothing further is ever read.
* **Deadline.** functions-framework serves through gunicorn's ``gthread`` worker: one thread per
  request, and the thread blocks in ``recv`` while the body trickles in (gunicorn only bounds the
  wait for a connection's *first* bytes). ``SlowClientGate.watch`` arms a timer on the request's
  socket (``environ["gunicorn.socket"]``): a body not complete after ``prompt_seconds`` needs one
  of a few slow-client slots to keep waiting, up to ``timeout_seconds`` in all; without a slot, or
  at the deadline, the socket's read side is shut (``shutdown(SHUT_RD)``), which ends the blocked
  read at once, and the caller answers 408 and closes the connection. So slow clients hold at most
  ``slots`` threads for at most ``timeout_seconds`` each, and every other thread stays free.
  The timers of every guarded read are kept by one watchdog thread per process (``_Watchdog``),
  not a ``threading.Timer`` thread per request: starting a thread for each request cost the webhook
  about 0.4 ms of CPU per request under load (measured by profiling), for a timer that almost never fires.

* **JSON.** ``read_json`` is how the internal functions read their bodies: capped, then parsed by
  ``shared.bounded_json.loads`` (UTF-8, a nesting depth, no lone surrogates), so any body that is
  not the JSON they read is a ``MalformedBody`` (400), never an exception that escapes as a 500.

functions-framework's after-request hook reads "the entire request" again (``get_data``); the
stream is replaced by the bytes already read, so that hook never touches the socket.

Without a socket (``create_app(...).test_client()``, where the body is already in memory) there is
nothing to wait for and no timer is armed.

Source: werkzeug ``get_input_stream`` / ``LimitedStream`` (``RequestEntityTooLarge``,
``ClientDisconnected``); Flask 3.1 ``Request.max_content_length`` (settable per request);
gunicorn ``gthread`` worker and ``environ["gunicorn.socket"]``; ``socket.shutdown`` (Linux wakes a
blocked ``recv`` with end-of-file); RFC 9110 §15.5.9 (408) and §15.5.14 (413).
"""
from __future__ import annotations

import contextvars
import io
import os
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from werkzeug.exceptions import ClientDisconnected, RequestEntityTooLarge

from shared import bounded_json
from shared.logs import log

#: How long a body may take before its request counts as a slow client (seconds). A LINE delivery
#: sends its body with its headers, so it is read well within this.
PROMPT_SECONDS = 0.25
#: Largest body an internal function reads (bytes): its task or call bodies are well under 2 KiB.
INTERNAL_MAX_BODY_BYTES = 64 * 1024
#: Deepest JSON nesting an internal function reads: its bodies are flat objects.
INTERNAL_MAX_DEPTH = 8


class BodyError(Exception):
    """The body could not be read; ``status`` is the HTTP answer and the connection is closed."""

    status = 400


class BodyTooLarge(BodyError):
    """More than the cap was sent (or announced); nothing past the cap was read. Not retryable."""

    status = 413


class BodyIncomplete(BodyError):
    """The body did not arrive in time, or the client stopped sending. Not retryable as sent."""

    status = 408


class MalformedBody(BodyError):
    """The body is not the JSON the endpoint reads (``reason``: see ``shared.bounded_json``). Not retryable."""

    status = 400

    def __init__(self, reason: str):
        self.reason = reason
        super().__init__(f"malformed body: {reason}")


class SlowClientGate:
    """Bounds the threads that wait on slow request bodies (one gate per process).

    Args:
        slots: how many requests may wait past ``prompt_seconds`` at once; others are cut at once.
        timeout_seconds: the longest any body read may take in all (seconds).
        prompt_seconds: a body read that ends within this never needs a slot (seconds).
    """

    def __init__(self, slots: int, timeout_seconds: float, prompt_seconds: float = PROMPT_SECONDS):
        if slots < 0 or timeout_seconds <= 0:
            raise ValueError("slots must be >= 0 and timeout_seconds > 0")
        self.timeout_seconds = timeout_seconds
        self.prompt_seconds = min(prompt_seconds, timeout_seconds)
        self._slots = threading.BoundedSemaphore(slots) if slots else None
        self._watchdog = _Watchdog(linger_seconds=self.prompt_seconds)

    @contextmanager
    def watch(self, sock: Any) -> Iterator[_Watch]:
        """Guard one body read on ``sock`` (a socket, or None when there is none to guard).

        Yields:
            a ``_Watch`` whose ``cut`` is True once the read side was shut by the deadline.
        """
        watch = _Watch(self, sock)
        try:
            watch.arm()
            yield watch
        finally:
            watch.disarm()

    def _try_slot(self) -> bool:
        return self._slots is not None and self._slots.acquire(blocking=False)

    def _release_slot(self) -> None:
        if self._slots is not None:
            self._slots.release()


class _Alarm:
    """One pending call of a ``_Watchdog``: ``fn`` at ``due`` (monotonic seconds) unless cancelled,
    run in the context it was scheduled in (so its log lines carry that request's trace)."""

    __slots__ = ("due", "fn", "context")

    def __init__(self, due: float, fn: Callable[[], None]):
        self.due = due
        self.fn = fn
        self.context = contextvars.copy_context()


class _Watchdog:
    """One daemon thread that calls each scheduled function at its time, unless it was cancelled.

    The thread starts on the first ``schedule`` in a process (gunicorn forks its worker after the
    import: a thread of the master would not exist in the worker, so a new one is started there).
    Pending alarms are only the reads in progress (each is cancelled when its read ends), so a list
    is enough. The thread is woken by ``schedule`` only when it would otherwise sleep past the new
    alarm; while idle it lingers ``linger_seconds`` before sleeping without a timeout, so steady
    traffic wakes it a few times a second, not once per request.

    Args:
        linger_seconds: how long the thread waits with nothing pending before it sleeps until woken.
    """

    def __init__(self, linger_seconds: float):
        self._linger_seconds = linger_seconds
        self._cond = threading.Condition(threading.Lock())
        self._alarms: list[_Alarm] = []
        self._wake_at = float("inf")  # when the thread wakes on its own (monotonic seconds)
        self._pid: int | None = None

    def schedule(self, seconds: float, fn: Callable[[], None]) -> _Alarm:
        """Call ``fn()`` on the watchdog thread in ``seconds`` (unless ``cancel`` comes first)."""
        alarm = _Alarm(time.monotonic() + seconds, fn)
        with self._cond:
            if self._pid != os.getpid():
                self._alarms = []
                self._wake_at = float("inf")
                self._pid = os.getpid()
                threading.Thread(target=self._run, name="http-body-watchdog", daemon=True).start()
            self._alarms.append(alarm)
            if alarm.due < self._wake_at:
                self._wake_at = alarm.due
                self._cond.notify()
        return alarm

    def cancel(self, alarm: _Alarm) -> None:
        """Forget ``alarm`` (no effect once it has fired)."""
        with self._cond:
            try:
                self._alarms.remove(alarm)
            except ValueError:
                pass

    def _run(self) -> None:
        lingered = False
        while True:
            with self._cond:
                now = time.monotonic()
                due = [a for a in self._alarms if a.due <= now]
                if due:
                    self._alarms = [a for a in self._alarms if a.due > now]
                else:
                    if self._alarms:
                        self._wake_at, lingered = min(a.due for a in self._alarms), False
                    elif not lingered:  # idle: a read may start any moment, wait a little first
                        self._wake_at, lingered = now + self._linger_seconds, True
                    else:
                        self._wake_at = float("inf")
                    self._cond.wait(None if self._wake_at == float("inf") else self._wake_at - now)
                    continue
            for alarm in due:
                try:
                    alarm.context.run(alarm.fn)
                except Exception as exc:  # noqa: BLE001 - one failing alarm must not stop the others'
                    log("WARNING", "body watchdog alarm failed", error=exc.__class__.__name__)


class _Watch:
    """The timers of one guarded read (internal to ``SlowClientGate``)."""

    def __init__(self, gate: SlowClientGate, sock: Any):
        self._gate = gate
        self._sock = sock
        self._lock = threading.Lock()
        self._done = False
        self._slot = False
        self._alarm: _Alarm | None = None
        self.cut = False

    def arm(self) -> None:
        if self._sock is None:
            return
        self._start(self._gate.prompt_seconds, self._on_prompt)

    def _start(self, seconds: float, fn) -> None:
        self._alarm = self._gate._watchdog.schedule(seconds, fn)

    def _on_prompt(self) -> None:
        with self._lock:
            if self._done:
                return
            rest = self._gate.timeout_seconds - self._gate.prompt_seconds
            if rest > 0 and self._gate._try_slot():
                self._slot = True
                self._start(rest, self._on_deadline)
                return
            self._cut()

    def _on_deadline(self) -> None:
        with self._lock:
            if not self._done:
                self._cut()

    def _cut(self) -> None:
        self.cut = True
        _shut_read(self._sock)

    def disarm(self) -> None:
        with self._lock:
            self._done = True
            if self._alarm is not None:
                self._gate._watchdog.cancel(self._alarm)
            if self._slot:
                self._slot = False
                self._gate._release_slot()


def read_body(request: Any, *, max_bytes: int, gate: SlowClientGate | None = None) -> bytes:
    """The whole body of a Flask request, at most ``max_bytes``, within the gate's deadline.

    Args:
        request: the ``flask.Request`` (functions-framework's HTTP argument).
        max_bytes: the cap in bytes; a longer body, announced or streamed, is refused.
        gate: the process's slow-client gate, or None to read without a deadline.
    Returns:
        The raw body bytes (never decoded or re-serialised).
    Raises:
        BodyTooLarge: ``Content-Length`` over the cap, or more than the cap streamed.
        BodyIncomplete: the client stopped sending, or the deadline cut the read.
    """
    # One byte over the cap tells "more than the cap" from "exactly the cap" without reading on.
    request.max_content_length = max_bytes + 1
    sock = request.environ.get("gunicorn.socket")
    try:
        data = _read_capped(request, max_bytes, gate, sock)
    except BodyError:
        # Nothing more is read from this client: functions-framework's after-request hook
        # (``read_request``, which reads "the entire request") gets an empty stream, the server's
        # keep-alive drain sees end-of-file, and the connection closes after the answer.
        request.stream = io.BytesIO()  # werkzeug's cached_property: setting it replaces the stream
        if sock is not None:
            _shut_read(sock)
        raise
    request.stream = io.BytesIO(data)  # what was read, and nothing more, for any later reader
    return data


def read_json(request: Any, *, max_bytes: int = INTERNAL_MAX_BODY_BYTES,
              max_depth: int = INTERNAL_MAX_DEPTH) -> Any:
    """The body of a Flask request as JSON: at most ``max_bytes`` (``read_body``, no deadline), UTF-8,
    nested at most ``max_depth`` deep, every string Unicode text (``shared.bounded_json.loads``).

    Returns:
        The parsed value, of any JSON type (the caller checks its shape).
    Raises:
        BodyTooLarge, BodyIncomplete: see ``read_body``.
        MalformedBody: not UTF-8, not JSON, too deep, or a string with a lone surrogate (400).
    """
    data = read_body(request, max_bytes=max_bytes)
    try:
        return bounded_json.loads(data, max_depth=max_depth)
    except bounded_json.MalformedJSON as exc:
        raise MalformedBody(exc.reason) from None


def _read_capped(request: Any, max_bytes: int, gate: SlowClientGate | None, sock: Any) -> bytes:
    watch_ctx = gate.watch(sock) if gate is not None else _no_watch()
    with watch_ctx as watch:
        try:
            data = request.stream.read(max_bytes + 1)
        except RequestEntityTooLarge as exc:
            raise BodyTooLarge("body over the cap") from exc
        except ClientDisconnected as exc:
            raise BodyIncomplete("body ended early") from exc
        except (OSError, ValueError) as exc:  # e.g. gunicorn's NoMoreData (an OSError)
            raise BodyIncomplete("body could not be read") from exc
    if watch is not None and watch.cut:
        raise BodyIncomplete("body did not arrive in time")
    if len(data) > max_bytes:
        raise BodyTooLarge("body over the cap")
    return data


def _shut_read(sock: Any) -> None:
    try:
        sock.shutdown(socket.SHUT_RD)
    except OSError:
        pass  # already closed by the client


@contextmanager
def _no_watch() -> Iterator[None]:
    yield None
