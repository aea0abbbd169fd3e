"""One SQLite file shared by the embedded adapters (document store and task queue).

Connections are opened lazily, one per thread, and a connection inherited across ``fork``
(gunicorn imports in its master, then forks the worker) is never reused in the child. Writes run
under ``BEGIN IMMEDIATE`` with a ``busy_timeout``, so writers queue instead of failing
(sqlite.org/lang_transaction.html, sqlite.org/wal.html). Adapters translate ``sqlite3.Error``
into their own port's errors.
"""
from __future__ import annotations

import os
import sqlite3
import threading
from typing import Callable, Sequence, TypeVar

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
        """This thread's connection in autocommit mode. Raises sqlite3.Error when it cannot be opened."""
        conn = getattr(self._local, "conn", None)
        if conn is not None and getattr(self._local, "pid", None) == os.getpid():
            return conn
        conn = None
        try:
            if self.read_only:
                conn = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True, timeout=self.timeout_seconds,
                                       isolation_level=None)
            else:
                conn = sqlite3.connect(self.path, timeout=self.timeout_seconds, isolation_level=None)
                conn.execute("PRAGMA journal_mode=WAL")
                conn.execute("PRAGMA synchronous=FULL")
                for statement in self._schema:
                    conn.execute(statement)
            conn.execute(f"PRAGMA busy_timeout={int(self.timeout_seconds * 1000)}")
        except sqlite3.Error:
            if conn is not None:
                conn.close()
            raise
        self._local.conn, self._local.pid = conn, os.getpid()
        return conn

    def close(self) -> None:
        """Close this thread's connection, if this process opened it."""
        conn = getattr(self._local, "conn", None)
        if conn is not None and getattr(self._local, "pid", None) == os.getpid():
            conn.close()
        self._local.conn = None


class LockNotHad(Exception):
    """``BEGIN IMMEDIATE`` did not get the write lock in time: nothing was written."""


def write_immediately(conn: sqlite3.Connection, fn: Callable[[sqlite3.Connection], T]) -> T:
    """Run ``fn(conn)`` between ``BEGIN IMMEDIATE`` and ``COMMIT``; roll back on any error.

    Raises:
        LockNotHad: the lock was not had within the busy timeout (from the ``sqlite3.Error``).
        Whatever ``fn`` raises, or the ``sqlite3.Error`` of the commit, after the rollback.
    """
    try:
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


def rollback_quietly(conn: sqlite3.Connection) -> None:
    """Roll back if a transaction is open; a failure here must not hide the original error."""
    try:
        conn.execute("ROLLBACK")
    except sqlite3.Error:
        pass



