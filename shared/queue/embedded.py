"""Embedded task queue: Cloud Tasks semantics in the store's SQLite file, no extra process.

Tasks live in their own table (``queue_tasks``) of the same SQLite file as the document store
(``LOCAL_STORE_URL``), so they survive restarts. Every process that uses the queue may
dispatch: a due task is claimed under a lease in one ``BEGIN IMMEDIATE`` transaction, so two
dispatchers (threads or processes) never run one task at once, and a task whose dispatcher died
becomes due again when its lease expires. Delivery is an HTTP POST with Cloud Tasks' headers,
made outside any transaction.

Retry policy (Cloud Tasks ``RetryConfig``): ``min_backoff_seconds``, ``max_backoff_seconds``,
``max_doublings`` and ``max_attempts`` (attempts include the first; ``max_retry_duration`` is not
implemented). A 2xx ends the task; any other status, a timeout or a connection error is a failed
attempt, retried after ``backoff_seconds(retries so far)`` until ``max_attempts`` attempts, then
the task is ``failed`` and kept. Names are reserved forever (Cloud Tasks keeps them for a while
after a task ends), so re-enqueueing a finished operation creates nothing. A lease that expires
(dispatcher killed mid-delivery) counts as an attempt without an answer; the task is due again at
once, or ``failed`` if that was its last attempt. A delivery's result that finds the file locked
by another writer is written again, with backoff, for up to the lease margin: a brief lock does
not leave a delivered task waiting out its whole lease to be delivered once more.

Headers, as Cloud Tasks sends them: ``X-CloudTasks-TaskRetryCount`` = attempts before this one
(0 on the first); ``X-CloudTasks-TaskExecutionCount`` = earlier attempts that got an answer other
than 5xx; ``X-CloudTasks-TaskETA`` = this attempt's schedule time, epoch seconds as a decimal;
``X-CloudTasks-TaskPreviousResponse`` = the last status, when there was one. Every task of a queue
goes to the queue's ``target_url`` (queue-level routing; the URL is not stored with the task).

Trace: a task enqueued while a request is handled keeps that request's trace with a span of its
own (``shared.trace``; stored in ``queue_task_traces``, a table of its own so that a file made
before it needs no migration), sends it on every attempt as ``traceparent`` and
``X-Cloud-Trace-Context`` (as a Cloud Tasks task carries the headers it was created with), and the
dispatcher's lines about the task carry it too, whatever thread delivers it and whenever.

Threads: ``start()`` runs one daemon dispatcher per process (idempotent; it notices a fork). It
alone claims tasks; with ``max_concurrent_dispatches`` above 1 it hands each claimed task to a
short-lived daemon thread and goes on claiming while a slot is free.
gunicorn (functions-framework) imports ``main.py`` in its master and then forks the worker, so a
serving function starts it in the worker through ``shared.queue.background.BackgroundStart``:
``os.register_at_fork(after_in_child=background.after_fork)`` at import plus
``background.ensure_started()`` on the first request. Never at import time in a process that serves.

Source: docs/design.md §1 (embedded default), §4, §9; Cloud Tasks docs, "Create HTTP target tasks"
(X-CloudTasks-* headers) and the RetryConfig reference; sqlite.org/lang_transaction.html.
"""
from __future__ import annotations

import json
import os
import secrets
import socket
import sqlite3
import threading
import time
import urllib.parse
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Callable

from shared import trace
from shared.clock import Clock, require_aware, to_iso, utc_now
from shared.logs import log
from shared.queue.port import (
    EnqueueResult,
    QueueUnavailable,
    encode_payload,
    validate_delay,
    validate_task_name,
)
from shared.sqlite_file import ConnectionPerThread, LockNotHad, write_immediately, write_lock

#: ``http(url, body, headers, timeout_seconds) -> status``; raises OSError when no answer came.
HttpPost = Callable[[str, bytes, dict[str, str], float], int]

STATES = ("pending", "running", "succeeded", "failed")

_SCHEMA = (
    """
    CREATE TABLE IF NOT EXISTS queue_tasks (
        name TEXT PRIMARY KEY,
        queue TEXT NOT NULL,
        payload TEXT NOT NULL,
        state TEXT NOT NULL,
        attempts INTEGER NOT NULL DEFAULT 0,
        execution_count INTEGER NOT NULL DEFAULT 0,
        schedule_at REAL NOT NULL,
        lease_until REAL,
        lease_owner TEXT,
        last_status INTEGER,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
    ) WITHOUT ROWID
    """,
    "CREATE INDEX IF NOT EXISTS queue_tasks_due ON queue_tasks(queue, state, schedule_at)",
    # The trace a task was created in (a W3C traceparent with the task's own span), when it was.
    "CREATE TABLE IF NOT EXISTS queue_task_traces (name TEXT PRIMARY KEY, traceparent TEXT NOT NULL) WITHOUT ROWID",
)
# Columns: attempts = dispatches started (its value before a dispatch is that dispatch's
# X-CloudTasks-TaskRetryCount); execution_count = answers that were not 5xx (the next dispatch's
# X-CloudTasks-TaskExecutionCount); schedule_at and lease_until are UTC epoch seconds;
# last_status is the last HTTP status, NULL when no answer came.


@dataclass(frozen=True)
class TaskRecord:
    """One stored task, for inspection (tests, the demo). Times are aware UTC datetimes."""

    name: str
    queue: str
    payload: dict[str, Any]
    state: str
    attempts: int
    execution_count: int
    schedule_at: datetime
    lease_until: datetime | None
    last_status: int | None


@dataclass(frozen=True)
class _Claim:
    name: str
    body: bytes
    retry_count: int
    execution_count: int
    eta_epoch: float
    owner: str
    previous_status: int | None
    trace: trace.TraceContext | None = None


def backoff_seconds(retry_index: int, *, min_backoff_seconds: float, max_backoff_seconds: float,
                    max_doublings: int = 16) -> float:
    """Delay before the next attempt, after ``retry_index + 1`` failed attempts.

    The interval starts at ``min_backoff_seconds``, doubles ``max_doublings`` times, then grows
    linearly by ``min * 2**max_doublings``, capped at ``max_backoff_seconds``.

    Args:
        retry_index: retries made before the failed attempt (0 after the first attempt fails).
    Returns:
        seconds ≥ 0. With the default 16 doublings: min, 2·min, 4·min, … capped at max.
    Source: Cloud Tasks RetryConfig (min 10 s, max 300 s, 3 doublings → 10, 20, 40, 80, 160, 240, 300).
    """
    k = max(0, int(retry_index))
    if k <= max_doublings:
        delay = min_backoff_seconds * (2 ** k)
    else:
        delay = min_backoff_seconds * (2 ** max_doublings) * (k - max_doublings + 1)
    return float(min(max_backoff_seconds, delay))


#: Most of an answer's body read before it is dropped (the status is all that counts).
_ANSWER_READ_BYTES = 65536


def http_post(url: str, body: bytes, headers: dict[str, str], timeout_seconds: float) -> int:
    """POST with requests (header names sent as given, no proxies, no redirects followed).

    ``requests`` is imported on first use: the webhook's cold start does not pay for it.

    Returns:
        the HTTP status of the answer.
    Raises:
        OSError: no answer (connection refused or reset, timeout, a malformed answer); the attempt
            got no response. requests' ``RequestException`` is an OSError.
        ValueError: the URL is not http(s)://host[:port]/path.
    """
    import requests

    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError("target_url must be http(s)://host[:port]/path")
    with requests.Session() as session:
        session.trust_env = False  # loopback or the configured target: never a proxy from the environment
        try:
            with session.post(url, data=body, headers=headers, timeout=timeout_seconds, allow_redirects=False,
                              stream=True) as response:
                response.raw.read(_ANSWER_READ_BYTES)
                return int(response.status_code)
        except requests.RequestException as exc:
            raise ConnectionError(f"no HTTP answer: {exc.__class__.__name__}") from exc


def _keep_trace(conn: sqlite3.Connection, name: str) -> None:
    """Store the current request's trace, with a new span, for the task ``name`` just inserted."""
    current = trace.current()
    if current is not None:
        conn.execute("INSERT OR REPLACE INTO queue_task_traces(name, traceparent) VALUES (?,?)",
                     (name, current.child().traceparent()))


def _stored_trace(conn: sqlite3.Connection, name: str) -> trace.TraceContext | None:
    """The trace stored with the task ``name`` (``_keep_trace``), or None."""
    row = conn.execute("SELECT traceparent FROM queue_task_traces WHERE name=?", (name,)).fetchone()
    return trace.parse_traceparent(row[0]) if row is not None else None


def _epoch(value: datetime) -> float:
    return require_aware(value).timestamp()


def _from_epoch(value: float | None) -> datetime | None:
    return None if value is None else datetime.fromtimestamp(value, timezone.utc)


class EmbeddedQueue:
    """The default ``TaskQueue``: durable in SQLite, dispatched over HTTP by any process using it.

    Args:
        path: the SQLite file (the store's, from ``LOCAL_STORE_URL``); its table is created on first use.
        queue_name: sent as ``X-CloudTasks-QueueName``; a queue only dispatches its own tasks.
        target_url: where every task of this queue is POSTed (``RECONCILE_FUNCTION_URL``).
        auth_token: sent as ``Authorization: Bearer <token>`` (``LOCAL_INTERNAL_TOKEN``); never logged.
        min_backoff_seconds, max_backoff_seconds, max_doublings, max_attempts: RetryConfig (see module).
        dispatch_deadline_seconds: HTTP timeout per attempt; the lease is this plus ``lease_margin_seconds``.
        clock: aware-UTC clock for schedules and leases.
        poll_interval_seconds: how often the dispatcher thread looks for due tasks.
        http: POST function (``http_post`` by default); a test seam.
        lock_timeout_seconds: SQLite busy_timeout per call, in seconds.
        max_concurrent_dispatches: deliveries the dispatcher thread keeps in flight at once, each
            on its own short-lived thread (Cloud Tasks ``maxConcurrentDispatches``); 1 delivers
            one task after another.
    Raises:
        ValueError: inconsistent retry or deadline settings.
    """

    def __init__(self, path: str, *, queue_name: str, target_url: str, auth_token: str | None,
                 min_backoff_seconds: float = 1.0, max_backoff_seconds: float = 60.0,
                 max_attempts: int = 5, max_doublings: int = 16, dispatch_deadline_seconds: float = 10.0,
                 clock: Clock = utc_now, poll_interval_seconds: float = 0.2, http: HttpPost | None = None,
                 lease_margin_seconds: float = 5.0, lock_timeout_seconds: float = 1.0,
                 max_concurrent_dispatches: int = 1):
        if not (0 <= min_backoff_seconds <= max_backoff_seconds):
            raise ValueError("need 0 <= min_backoff_seconds <= max_backoff_seconds")
        if max_attempts < 1 or max_doublings < 0:
            raise ValueError("max_attempts must be >= 1 and max_doublings >= 0")
        if dispatch_deadline_seconds <= 0 or lease_margin_seconds < 0:
            raise ValueError("dispatch_deadline_seconds must be positive, lease_margin_seconds >= 0")
        if max_concurrent_dispatches < 1:
            raise ValueError("max_concurrent_dispatches must be >= 1")
        self.path = path
        self.queue_name = queue_name
        self.target_url = target_url
        self._auth_token = auth_token
        self.min_backoff_seconds = float(min_backoff_seconds)
        self.max_backoff_seconds = float(max_backoff_seconds)
        self.max_attempts = int(max_attempts)
        self.max_doublings = int(max_doublings)
        self.dispatch_deadline_seconds = float(dispatch_deadline_seconds)
        self.lease_margin_seconds = float(lease_margin_seconds)
        self.lease_seconds = float(dispatch_deadline_seconds) + self.lease_margin_seconds
        self.poll_interval_seconds = float(poll_interval_seconds)
        self.lock_timeout_seconds = float(lock_timeout_seconds)
        self.max_concurrent_dispatches = int(max_concurrent_dispatches)
        self._clock = clock
        self._http = http or http_post
        self._connections = ConnectionPerThread(path, timeout_seconds=self.lock_timeout_seconds, schema=_SCHEMA)
        self._thread_lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._thread_pid: int | None = None
        self._stop = threading.Event()
        self._wake = threading.Event()

    # ---- connections -------------------------------------------------------------------

    def _conn(self) -> sqlite3.Connection:
        """This thread's connection (shared.sqlite_file). Raises QueueUnavailable."""
        try:
            return self._connections.get()
        except sqlite3.Error as exc:
            raise QueueUnavailable(f"cannot open queue: {exc.__class__.__name__}") from exc

    def close(self) -> None:
        """Close this thread's connection, if any."""
        self._connections.close()

    def _write(self, fn: Callable[[sqlite3.Connection], Any]) -> Any:
        """Run ``fn(conn)`` inside ``BEGIN IMMEDIATE`` … ``COMMIT``. Raises QueueUnavailable."""
        try:
            return write_immediately(self._conn(), fn, lock=write_lock(self._connections.path),
                                     timeout_seconds=self.lock_timeout_seconds)
        except LockNotHad as exc:
            raise QueueUnavailable(f"queue busy: {exc}") from exc
        except sqlite3.Error as exc:
            raise QueueUnavailable(f"queue write failed: {exc.__class__.__name__}") from exc

    # ---- the port ----------------------------------------------------------------------

    def enqueue(self, name: str, payload: dict[str, Any], *, delay_seconds: float = 0.0) -> EnqueueResult:
        """Insert the task unless its name exists (in any state). See ``TaskQueue.enqueue``.

        Raises:
            InvalidTask: bad name, payload or delay.
            QueueUnavailable: the file was locked past ``lock_timeout_seconds`` or unreadable;
                nothing was written.
        """
        validate_task_name(name)
        body = encode_payload(payload)
        delay = validate_delay(delay_seconds)
        now = self._clock()
        stamp = to_iso(now)

        def insert(conn: sqlite3.Connection) -> bool:
            cursor = conn.execute(
                "INSERT INTO queue_tasks(name, queue, payload, state, schedule_at, created_at, updated_at)"
                " VALUES (?,?,?,'pending',?,?,?) ON CONFLICT(name) DO NOTHING",
                (name, self.queue_name, body.decode("utf-8"), _epoch(now) + delay, stamp, stamp))
            if cursor.rowcount != 1:
                return False
            _keep_trace(conn, name)
            return True

        created = self._write(insert)
        log("INFO", "queue task enqueued" if created else "queue task already known",
            queue=self.queue_name, task=name, created=created, delay_seconds=delay)
        if created and delay == 0:
            self._wake.set()
        return EnqueueResult(name=name, created=created)

    def enqueue_many(self, tasks: list[tuple[str, dict[str, Any]]]) -> list[EnqueueResult]:
        """Insert several tasks (due now) in one transaction; names already known are skipped.

        Args:
            tasks: ``(name, payload)`` pairs, as for ``enqueue``.
        Returns:
            One EnqueueResult per task, in order.
        Raises:
            InvalidTask: a bad name or payload; nothing was written.
            QueueUnavailable: the file was locked past ``lock_timeout_seconds``; nothing was written.
        """
        rows = [(validate_task_name(name), encode_payload(payload).decode("utf-8")) for name, payload in tasks]
        now = self._clock()
        stamp = to_iso(now)

        def insert(conn: sqlite3.Connection) -> list[bool]:
            created = [conn.execute(
                "INSERT INTO queue_tasks(name, queue, payload, state, schedule_at, created_at, updated_at)"
                " VALUES (?,?,?,'pending',?,?,?) ON CONFLICT(name) DO NOTHING",
                (name, self.queue_name, body, _epoch(now), stamp, stamp)).rowcount == 1 for name, body in rows]
            for (name, _), new in zip(rows, created):
                if new:
                    _keep_trace(conn, name)
            return created

        created = self._write(insert)
        log("INFO", "queue tasks enqueued", queue=self.queue_name, tasks=len(rows), created=sum(created))
        if any(created):
            self._wake.set()
        return [EnqueueResult(name=name, created=c) for (name, _), c in zip(rows, created)]

    # ---- inspection ----------------------------------------------------------------------

    def task(self, name: str) -> TaskRecord | None:
        """The stored task by name, or None. Raises QueueUnavailable."""
        try:
            row = self._conn().execute(
                "SELECT name, queue, payload, state, attempts, execution_count, schedule_at, lease_until,"
                " last_status FROM queue_tasks WHERE name=?", (name,)).fetchone()
        except sqlite3.Error as exc:
            raise QueueUnavailable(f"queue read failed: {exc.__class__.__name__}") from exc
        if row is None:
            return None
        return TaskRecord(name=row[0], queue=row[1], payload=json.loads(row[2]), state=row[3],
                          attempts=row[4], execution_count=row[5], schedule_at=_from_epoch(row[6]),
                          lease_until=_from_epoch(row[7]), last_status=row[8])

    def counts(self) -> dict[str, int]:
        """Tasks of this queue per state, e.g. ``{"pending": 1, "running": 0, …}``. Raises QueueUnavailable."""
        try:
            rows = self._conn().execute(
                "SELECT state, COUNT(*) FROM queue_tasks WHERE queue=? GROUP BY state",
                (self.queue_name,)).fetchall()
        except sqlite3.Error as exc:
            raise QueueUnavailable(f"queue read failed: {exc.__class__.__name__}") from exc
        found = dict.fromkeys(STATES, 0)
        found.update({state: count for state, count in rows})
        return found

    # ---- dispatch ------------------------------------------------------------------------

    def dispatch_due(self, now: datetime | None = None, limit: int = 100) -> int:
        """Claim and deliver due tasks one by one, synchronously, until none is due or ``limit``.

        Args:
            now: the instant to use for every claim and reschedule (aware); the clock when None.
            limit: most deliveries in this pass.
        Returns:
            how many HTTP deliveries were attempted.
        Raises:
            QueueUnavailable: the file stayed locked; deliveries already made are recorded.
        """
        if now is not None:
            require_aware(now)
        delivered = 0
        while delivered < limit:
            claim = self._claim(now or self._clock())
            if claim is None:
                break
            with trace.active(claim.trace):
                status = self._deliver(claim)
                self._record_retrying(claim, status, now)
            delivered += 1
        return delivered

    def _record_retrying(self, claim: _Claim, status: int | None, now: datetime | None) -> None:
        """``_record``, tried again while the file is briefly locked, for up to ``lease_margin_seconds``
        (real time, backing off from 0.05 s to 0.5 s).

        The delivery has happened: a result lost to a lock held a moment by another writer would
        leave the task ``running`` until its lease ends (the dispatch deadline plus the margin) and
        then deliver it once more, which the target absorbs but which delays everything queued
        behind it by the whole lease. Raises QueueUnavailable when the margin is spent; the lease
        then decides, as for a dispatcher that died."""
        give_up_at = time.monotonic() + self.lease_margin_seconds
        pause = 0.05
        while True:
            try:
                self._record(claim, status, now or self._clock())
                return
            except QueueUnavailable:
                if time.monotonic() + pause > give_up_at:
                    raise
                log("WARNING", "queue task result not recorded yet; trying again", queue=self.queue_name,
                    task=claim.name, status=status)
                time.sleep(pause)
                pause = min(pause * 2, 0.5)

    def _claim(self, now: datetime) -> _Claim | None:
        now_epoch = _epoch(now)
        owner = f"{socket.gethostname()}:{os.getpid()}:{threading.get_ident()}:{secrets.token_hex(4)}"
        expired: list[tuple[str, int, bool]] = []  # (name, attempts, failed) for leases found expired

        def claim(conn: sqlite3.Connection) -> _Claim | None:
            expired.clear()
            while True:
                row = conn.execute(
                    "SELECT name, payload, state, attempts, execution_count, schedule_at, last_status"
                    " FROM queue_tasks WHERE queue=? AND ((state='pending' AND schedule_at<=?)"
                    " OR (state='running' AND lease_until<=?)) ORDER BY schedule_at, name LIMIT 1",
                    (self.queue_name, now_epoch, now_epoch)).fetchone()
                if row is None:
                    return None
                name, payload, state, attempts, execution_count, schedule_at, last_status = row
                if state == "running":
                    # The dispatcher that held the lease died or overran: that attempt got no answer.
                    exhausted = attempts >= self.max_attempts
                    expired.append((name, attempts, exhausted))
                    if exhausted:
                        conn.execute(
                            "UPDATE queue_tasks SET state='failed', lease_until=NULL, lease_owner=NULL,"
                            " last_status=NULL, updated_at=? WHERE name=?", (to_iso(now), name))
                        continue
                conn.execute(
                    "UPDATE queue_tasks SET state='running', attempts=attempts+1, lease_until=?,"
                    " lease_owner=?, updated_at=? WHERE name=?",
                    (now_epoch + self.lease_seconds, owner, to_iso(now), name))
                return _Claim(name=name, body=payload.encode("utf-8"), retry_count=attempts,
                              execution_count=execution_count, eta_epoch=schedule_at, owner=owner,
                              previous_status=last_status, trace=_stored_trace(conn, name))

        claimed = self._write(claim)
        for name, attempts, exhausted in expired:
            log("ERROR" if exhausted else "WARNING",
                "queue task failed: lease expired on its last attempt" if exhausted
                else "queue task lease expired; dispatching again",
                queue=self.queue_name, task=name, attempts=attempts)
        return claimed

    def _headers(self, claim: _Claim) -> dict[str, str]:
        headers = {
            "Content-Type": "application/json",
            "User-Agent": "LOCAL-embedded-queue",
            "X-CloudTasks-QueueName": self.queue_name,
            "X-CloudTasks-TaskName": claim.name,
            "X-CloudTasks-TaskRetryCount": str(claim.retry_count),
            "X-CloudTasks-TaskExecutionCount": str(claim.execution_count),
            "X-CloudTasks-TaskETA": f"{claim.eta_epoch:.6f}",
        }
        if claim.previous_status is not None:
            headers["X-CloudTasks-TaskPreviousResponse"] = str(claim.previous_status)
        if self._auth_token:
            headers["Authorization"] = f"Bearer {self._auth_token}"
        if claim.trace is not None:
            headers.update(claim.trace.headers())
        return headers

    def _deliver(self, claim: _Claim) -> int | None:
        """POST the task; the status, or None when no answer came. Never raises for HTTP trouble."""
        try:
            return self._http(self.target_url, claim.body, self._headers(claim), self.dispatch_deadline_seconds)
        except (OSError, ValueError) as exc:  # URLError, timeouts, refused; ValueError: malformed URL
            log("WARNING", "queue delivery got no answer", queue=self.queue_name, task=claim.name,
                retry_count=claim.retry_count, error=exc.__class__.__name__)
            return None

    def _record(self, claim: _Claim, status: int | None, now: datetime) -> None:
        now_epoch = _epoch(now)
        succeeded = status is not None and 200 <= status < 300

        def record(conn: sqlite3.Connection) -> str | None:
            row = conn.execute("SELECT state, lease_owner, attempts FROM queue_tasks WHERE name=?",
                               (claim.name,)).fetchone()
            if row is None or row[0] != "running" or row[1] != claim.owner:
                return None
            attempts = row[2]
            answered = 1 if status is not None and status < 500 else 0
            if succeeded:
                state, schedule_at = "succeeded", None
            elif attempts >= self.max_attempts:
                state, schedule_at = "failed", None
            else:
                delay = backoff_seconds(attempts - 1, min_backoff_seconds=self.min_backoff_seconds,
                                        max_backoff_seconds=self.max_backoff_seconds,
                                        max_doublings=self.max_doublings)
                state, schedule_at = "pending", now_epoch + delay
            conn.execute(
                "UPDATE queue_tasks SET state=?, execution_count=execution_count+?,"
                " schedule_at=COALESCE(?, schedule_at), lease_until=NULL, lease_owner=NULL,"
                " last_status=?, updated_at=? WHERE name=?",
                (state, answered, schedule_at, status, to_iso(now), claim.name))
            return state

        state = self._write(record)
        fields = dict(queue=self.queue_name, task=claim.name, status=status, retry_count=claim.retry_count)
        if state is None:
            log("WARNING", "queue task lease lost before the result was recorded", **fields)
        elif state == "failed":
            log("ERROR", "queue task failed: attempts exhausted", attempts=claim.retry_count + 1, **fields)
        elif state == "pending":
            log("WARNING", "queue task will be retried", **fields)
        else:
            log("INFO", "queue task delivered", **fields)

    # ---- the dispatcher thread -------------------------------------------------------------

    def start(self) -> bool:
        """Start this process's dispatcher thread unless it runs. Idempotent; fork-aware.

        Call it in the serving process (the gunicorn worker), never at import in the master.
        Returns:
            True when a thread was started by this call.
        """
        with self._thread_lock:
            pid = os.getpid()
            if self._thread is not None and self._thread_pid == pid and self._thread.is_alive():
                return False
            self._stop = threading.Event()
            self._wake = threading.Event()
            self._thread = threading.Thread(target=self._run, args=(self._stop, self._wake),
                                            name=f"queue-dispatch-{self.queue_name}", daemon=True)
            self._thread_pid = pid
            self._thread.start()
        log("INFO", "queue dispatcher started", queue=self.queue_name, pid=pid)
        return True

    def _dispatch_concurrently(self, slots: threading.BoundedSemaphore, stop: threading.Event) -> None:
        """Claim due tasks while a delivery slot is free, each delivered and recorded on a daemon
        thread of its own, until none is due. Only this (the dispatcher) thread claims, so an idle
        queue costs one claim per poll however many slots it has. Raises QueueUnavailable (claim)."""
        while not stop.is_set():
            if not slots.acquire(timeout=self.poll_interval_seconds):
                continue  # every slot busy: look again (or stop)
            try:
                claim = self._claim(self._clock())
            except BaseException:
                slots.release()
                raise
            if claim is None:
                slots.release()
                return
            threading.Thread(target=self._deliver_in_slot, args=(claim, slots), daemon=True,
                             name=f"queue-delivery-{self.queue_name}").start()

    def _deliver_in_slot(self, claim: _Claim, slots: threading.BoundedSemaphore) -> None:
        with trace.active(claim.trace):
            self._deliver_and_record(claim, slots)

    def _deliver_and_record(self, claim: _Claim, slots: threading.BoundedSemaphore) -> None:
        try:
            self._record_retrying(claim, self._deliver(claim), None)
        except QueueUnavailable as exc:
            log("WARNING", "queue task result not recorded; its lease decides", queue=self.queue_name,
                task=claim.name, error=str(exc))
        except Exception:  # noqa: BLE001 - a delivery thread must not die silently
            log("ERROR", "queue delivery crashed", queue=self.queue_name, task=claim.name, exc_info=True)
        finally:
            self.close()  # this thread's connection
            slots.release()

    def stop(self, timeout_seconds: float = 5.0) -> None:
        """Ask the dispatcher thread to stop and wait up to ``timeout_seconds`` for it."""
        with self._thread_lock:
            thread, stop, wake = self._thread, self._stop, self._wake
            self._thread = None
        stop.set()
        wake.set()
        if thread is not None and thread.is_alive() and thread is not threading.current_thread():
            thread.join(timeout_seconds)

    def _run(self, stop: threading.Event, wake: threading.Event) -> None:
        slots = threading.BoundedSemaphore(self.max_concurrent_dispatches)
        while not stop.is_set():
            try:
                if self.max_concurrent_dispatches == 1:
                    self.dispatch_due()
                else:
                    self._dispatch_concurrently(slots, stop)
            except QueueUnavailable as exc:
                log("WARNING", "queue dispatch pass skipped", queue=self.queue_name, error=str(exc))
            except Exception:  # noqa: BLE001 - the thread must survive a bad pass; it is logged
                log("ERROR", "queue dispatch pass crashed", queue=self.queue_name, exc_info=True)
            wake.wait(self.poll_interval_seconds)
            wake.clear()
        self.close()
