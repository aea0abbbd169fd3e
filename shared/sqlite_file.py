"""One SQLite file shared by the embedded adapters (document store and task queue).

Connections are opened lazily, one per thread, and a connection inherited across ``fork``
(gunicorn imports in its master, then forks the worker) is never reused in the child. Writes run
under ``BEGIN IMMEDIATE`` with a ``busy_timeout``, so writers queue instead of failing
(sqlite.org/lang_transaction.html, sqlite.org/wal.html). Adapters translate ``sqlite3.Error``
into their own port's errors.

Writers of one process first queue on a per-file ``threading.Lock`` (``write_lock``), and only the
holder asks SQLite for the file lock. SQLite's busy handler polls a held lock by sleeping 1, 2, 5,
10 … 100 ms between tries and never wakes on release, so eight request threads polling one file
left the lock idle while they slept: that sleep was the webhook's p99. A Python lock
hands over at release. The busy handler still arbitrates between processes (reconcile, the CLI
tools). Durability is unchanged: ``synchronous=FULL`` and WAL, every commit on disk before it returns,
except a write whose caller asks for none (``GroupCommit.run(durable=False)``: the finish of a reply
that carries nothing, docs/data.md, SQLite settings).
"""
from __future__ import annotations

import os
import sqlite3
import threading
import time
from typing import Any, Callable, Sequence, TypeVar

T = TypeVar("T")


class ConnectionPerThread:
    """Lazily opened, fork-aware connections to one SQLite file.

    Args:
        path: absolute file path.
        timeout_seconds: how long a call waits for the file's lock (``busy_timeout``), in seconds.
        read_only: open with ``mode=ro`` (no schema, no pragmas that write).
        schema: statements run once per connection (``CREATE TABLE IF NOT EXISTS …``).
    """

    def __init__(self, path: str, *, timeout_seconds: float, read_only: bool = False,
                 schema: Sequence[str] = ()):
        self.path = path
        self.timeout_seconds = float(timeout_seconds)
        self.read_only = read_only
        self._schema = tuple(schema)
        self._local = threading.local()

    def get(self) -> sqlite3.Connection:
        """This thread's connection in autocommit mode. Raises sqlite3.Error when it cannot be opened
        within ``timeout_seconds``.

        Several connections setting up a fresh file at once (``journal_mode=WAL``, the schema) can get
        "database is locked" at once, without SQLite's busy handler being called (a lock upgrade it
        refuses to wait for, to avoid a deadlock: sqlite.org/c3ref/busy_handler.html), so a locked
        set-up is tried again with a short backoff (tenacity, imported only then) until the timeout."""
        known = getattr(self._local, "conn", None)
        if known is not None and getattr(self._local, "pid", None) == os.getpid():
            return known
        conn: sqlite3.Connection
        try:
            conn = self._open()
        except sqlite3.OperationalError as exc:
            if not _is_locked(exc):
                raise
            from tenacity import Retrying, retry_if_exception, stop_after_delay, wait_exponential

            for attempt in Retrying(retry=retry_if_exception(_is_locked), reraise=True,
                                    stop=stop_after_delay(self.timeout_seconds),
                                    wait=wait_exponential(multiplier=0.005, max=0.2)):
                with attempt:
                    conn = self._open()
        self._local.conn, self._local.pid = conn, os.getpid()
        return conn

    def _open(self) -> sqlite3.Connection:
        conn = None
        try:
            if self.read_only:
                conn = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True, timeout=self.timeout_seconds,
                                       isolation_level=None)
            else:
                conn = sqlite3.connect(self.path, timeout=self.timeout_seconds, isolation_level=None,
                                       factory=_Connection)
                conn.execute("PRAGMA journal_mode=WAL")
                conn.execute("PRAGMA synchronous=FULL")
                for statement in self._schema:
                    conn.execute(statement)
            conn.execute(f"PRAGMA busy_timeout={int(self.timeout_seconds * 1000)}")
        except sqlite3.Error:
            if conn is not None:
                conn.close()
            raise
        return conn

    def write(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """``write_immediately`` on this thread's connection under the file's in-process ``write_lock``,
        waiting at most ``timeout_seconds`` for it. Raises as ``write_immediately``, or sqlite3.Error
        when no connection could be opened."""
        return write_immediately(self.get(), fn, lock=write_lock(self.path), timeout_seconds=self.timeout_seconds)

    def close(self) -> None:
        """Close this thread's connection, if this process opened it."""
        conn = getattr(self._local, "conn", None)
        if conn is not None and getattr(self._local, "pid", None) == os.getpid():
            conn.close()
        self._local.conn = None


class _Connection(sqlite3.Connection):
    """A connection that remembers its ``PRAGMA synchronous`` level (``FULL`` when opened), so that
    a write sets it only when it must change (``_set_synchronous``)."""

    synchronous = "FULL"


def _set_synchronous(conn: sqlite3.Connection, level: str) -> None:
    """Make ``conn`` commit with ``PRAGMA synchronous=level`` ("FULL" or "NORMAL"); outside a
    transaction only (SQLite refuses the change inside one). A connection that does not remember
    its level (not opened here) is only ever written with its own setting, so only FULL is asked of it."""
    current = getattr(conn, "synchronous", None)
    if current == level or (current is None and level == "FULL"):
        return
    conn.execute(f"PRAGMA synchronous={level}")
    conn.synchronous = level  # type: ignore[attr-defined]


def _is_locked(exc: BaseException) -> bool:
    """SQLITE_BUSY / SQLITE_LOCKED as the sqlite3 module raises them."""
    return isinstance(exc, sqlite3.OperationalError) and ("locked" in str(exc) or "busy" in str(exc))


_WRITE_LOCKS: dict[str, threading.Lock] = {}
_GROUPS: dict[str, "GroupCommit"] = {}
_WRITE_LOCKS_GUARD = threading.Lock()


def write_lock(path: str) -> threading.Lock:
    """The one in-process lock of writers to the SQLite file at ``path`` (shared by every adapter and
    connection of this process). A child after ``fork`` starts with fresh, unheld locks."""
    lock = _WRITE_LOCKS.get(path)
    if lock is not None:
        return lock
    with _WRITE_LOCKS_GUARD:
        key = os.path.realpath(path)
        lock = _WRITE_LOCKS.get(key)
        if lock is None:
            lock = _WRITE_LOCKS[key] = threading.Lock()
        _WRITE_LOCKS[path] = lock
        return lock


def group_commit(path: str) -> "GroupCommit":
    """The process's ``GroupCommit`` of the SQLite file at ``path`` (one per file, fresh after ``fork``)."""
    group = _GROUPS.get(path)
    if group is not None:
        return group
    lock = write_lock(path)
    with _WRITE_LOCKS_GUARD:
        for known in _GROUPS.values():
            if known.lock is lock:
                group = known
                break
        else:
            group = GroupCommit(lock)
        _GROUPS[path] = group
        return group


def _forget_locks_in_child() -> None:
    global _WRITE_LOCKS_GUARD
    _WRITE_LOCKS_GUARD = threading.Lock()  # a thread of the parent may have held it at fork
    _WRITE_LOCKS.clear()
    _GROUPS.clear()


os.register_at_fork(after_in_child=_forget_locks_in_child)


class LockNotHad(Exception):
    """``BEGIN IMMEDIATE`` did not get the write lock in time: nothing was written."""


def write_immediately(conn: sqlite3.Connection, fn: Callable[[sqlite3.Connection], T], *,
                      lock: threading.Lock | None = None, timeout_seconds: float = 0.0) -> T:
    """Run ``fn(conn)`` between ``BEGIN IMMEDIATE`` and ``COMMIT``; roll back on any error.

    Args:
        lock: the file's in-process ``write_lock``, taken first (waiting at most ``timeout_seconds``)
            and held until the commit or rollback; None: only SQLite's lock.
    Raises:
        LockNotHad: a lock was not had in time (the in-process one, or SQLite's within the busy timeout).
        Whatever ``fn`` raises, or the ``sqlite3.Error`` of the commit, after the rollback.
    """
    if lock is not None and not lock.acquire(timeout=max(0.0, timeout_seconds)):
        raise LockNotHad("in-process writer lock")
    try:
        try:
            _set_synchronous(conn, "FULL")
            conn.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as exc:
            raise LockNotHad(exc.__class__.__name__) from exc
        try:
            result = fn(conn)
            conn.execute("COMMIT")
            return result
        except BaseException:
            rollback_quietly(conn)
            raise
    finally:
        if lock is not None:
            lock.release()


def rollback_quietly(conn: sqlite3.Connection) -> None:
    """Roll back if a transaction is open; a failure here must not hide the original error."""
    try:
        conn.execute("ROLLBACK")
    except sqlite3.Error:
        pass





class _Job:
    """One caller's transaction body waiting in a ``GroupCommit``."""

    __slots__ = ("fn", "deadline", "durable", "wake", "lead", "finished", "result", "error")

    def __init__(self, fn: Callable[[sqlite3.Connection], Any], deadline: float, durable: bool = True):
        self.fn = fn
        self.deadline = deadline
        self.durable = durable
        self.wake = threading.Event()
        self.lead = False
        self.finished = False
        self.result: Any = None
        self.error: BaseException | None = None


class GroupCommit:
    """Group commit: the writers of one file in this process share one transaction and one fsync.

    Each caller's body runs in one ``BEGIN IMMEDIATE`` … ``COMMIT`` with the others, in arrival
    order, so it sees the writes of the bodies before it (serial order, as if committed one by one).
    A body that raises must leave no write of its own behind: a body of one statement gets that from
    SQLite (a failing statement undoes its own changes, and the transaction goes on), a body of more
    takes its own ``SAVEPOINT`` (``SqliteStore`` does). The others' writes are then committed; if
    SQLite itself ended the transaction (an I/O error, a full disk), every body of the batch fails
    with that error and nothing is written. No savepoint per body: a ``SAVEPOINT`` and a ``RELEASE``
    are two statements more per body, and each statement lets the other threads take the GIL (profiled:
    fewer statements, fewer context switches). One caller leads: it takes
    every waiting body, runs the transaction on its own connection under the file's ``write_lock``,
    wakes the others, and hands the lead to the next waiting caller. Nobody returns before the
    ``COMMIT`` that holds its writes returned, so with ``synchronous=FULL`` each write is on disk when
    its caller hears of it, exactly as with one commit each; only the fsyncs are shared. Bodies run
    on the leader's thread: they must only read and write through the connection (the store port's
    rule: no side effects inside a transaction function).

    Source: the group commit of database logs (a commit returns after the log flush that covers it);
    sqlite.org/lang_savepoint.html, sqlite.org/pragma.html#pragma_synchronous.
    """

    def __init__(self, lock: threading.Lock):
        self.lock = lock
        self._mutex = threading.Lock()
        self._pending: list[_Job] = []
        self._leading = False

    def waiting(self) -> int:
        """How many bodies wait for a transaction to take them (diagnostics and tests)."""
        with self._mutex:
            return len(self._pending)

    def run(self, connect: Callable[[], sqlite3.Connection], fn: Callable[[sqlite3.Connection], T], *,
            timeout_seconds: float, durable: bool = True) -> T:
        """Run ``fn(conn)`` in the next group transaction and return its result once committed.

        Args:
            connect: this thread's connection to the file, used if this caller leads.
            fn: the body; it runs in a transaction shared with other bodies, maybe on another
                caller's thread, and if it raises it must have written nothing (see the class).
            timeout_seconds: how long to wait for a transaction to take the body (and for the locks).
            durable: True (the rule): the commit that holds the body's writes is fsynced before this
                returns (``synchronous=FULL``). False: the caller accepts that a power loss or an OS
                crash before the next durable commit of this file loses them (a process crash does
                not: they are in the log); a batch is committed with ``synchronous=NORMAL`` (no
                fsync) only when none of its bodies is durable. WAL frames are appended in commit
                order and a durable commit's fsync of the log covers every frame before it, and a
                checkpoint syncs the log first: what survives is always a prefix of the commits.
        Raises:
            LockNotHad: no transaction took the body in time, or none got the file's lock: nothing written.
            Whatever ``fn`` raised (its writes rolled back), or the ``sqlite3.Error`` of the commit
            (nothing written) or of opening the leader's connection.
        """
        deadline = time.monotonic() + timeout_seconds
        job = _Job(fn, deadline, durable)
        with self._mutex:
            self._pending.append(job)
            if not self._leading:
                self._leading = job.lead = True
        while not job.finished:
            if job.lead:
                self._lead(connect)
                continue
            if job.wake.wait(timeout=max(0.0, deadline - time.monotonic())):
                continue
            with self._mutex:
                if job.finished or job.lead:
                    continue
                if job in self._pending:  # no transaction took it: nothing written
                    self._pending.remove(job)
                    raise LockNotHad("group commit queue")
            job.wake.wait()  # a running transaction holds it: its outcome comes with that commit
        if job.error is not None:
            raise job.error
        return job.result

    def _lead(self, connect: Callable[[], sqlite3.Connection]) -> None:
        with self._mutex:
            batch, self._pending = self._pending, []
        # The lock is waited for as long as the most patient body may wait: a caller promoted to lead
        # after waiting most of its own deadline must not fail the others' writes for its haste.
        deadline = max(job.deadline for job in batch)
        try:
            self._commit(connect, batch, deadline)
        finally:
            with self._mutex:
                for job in batch:
                    job.finished = True
                if self._pending:
                    successor = self._pending[0]
                    successor.lead = True
                    successor.wake.set()
                else:
                    self._leading = False
            for job in batch:
                job.wake.set()

    def _commit(self, connect: Callable[[], sqlite3.Connection], batch: list[_Job], deadline: float) -> None:
        def fail_all(error: BaseException) -> None:
            for job in batch:
                if job.error is None:
                    job.result, job.error = None, error

        try:
            conn = connect()
        except sqlite3.Error as exc:
            fail_all(exc)
            return
        if not self.lock.acquire(timeout=max(0.0, deadline - time.monotonic())):
            fail_all(LockNotHad("in-process writer lock"))
            return
        try:
            try:
                _set_synchronous(conn, "FULL" if any(job.durable for job in batch) else "NORMAL")
                conn.execute("BEGIN IMMEDIATE")
            except sqlite3.Error as exc:
                fail_all(LockNotHad(exc.__class__.__name__))
                return
            try:
                if len(batch) == 1:  # alone: its own transaction
                    try:
                        batch[0].result = batch[0].fn(conn)
                    except BaseException as exc:  # noqa: BLE001 - handed to its caller
                        batch[0].error = exc
                        conn.execute("ROLLBACK")
                        return
                else:
                    for job in batch:
                        try:
                            job.result = job.fn(conn)
                        except BaseException as exc:  # noqa: BLE001 - handed to its caller
                            job.error = exc
                            if not conn.in_transaction:  # SQLite ended it (I/O error, full disk): all lost
                                fail_all(exc)
                                return
                conn.execute("COMMIT")
            except sqlite3.Error as exc:  # the transaction itself failed: nothing of the batch is written
                rollback_quietly(conn)
                fail_all(exc)
        finally:
            self.lock.release()
