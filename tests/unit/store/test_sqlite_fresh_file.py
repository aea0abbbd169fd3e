"""Opening a fresh SQLite file from several threads at once (shared/sqlite_file.ConnectionPerThread).

Connections that set up a new file together (``journal_mode=WAL``, the schema) can get "database is
locked" at once, without SQLite's busy handler: seen once under load when the embedded queue and the
store opened one new file in two threads. Each set-up that finds the file locked is tried again
until the connection's timeout; a lock held past it, or any other error, still raises.
"""
from __future__ import annotations

import sqlite3
import threading

import pytest

from shared.sqlite_file import ConnectionPerThread
from shared.store.sqlite import SqliteStore

SCHEMA = ("CREATE TABLE IF NOT EXISTS documents (collection TEXT NOT NULL, id TEXT NOT NULL, "
          "data TEXT NOT NULL, PRIMARY KEY (collection, id))",
          "CREATE TABLE IF NOT EXISTS tasks (name TEXT PRIMARY KEY, body TEXT NOT NULL)")


def _open_together(openers: list, threads_per_file: int) -> list[BaseException]:
    """Run each ``opener()`` in ``threads_per_file`` threads released together; the errors raised."""
    errors: list[BaseException] = []
    for opener in openers:
        barrier = threading.Barrier(threads_per_file)

        def run(opener=opener, barrier=barrier) -> None:
            barrier.wait()
            try:
                opener()
            except BaseException as exc:  # counted below
                errors.append(exc)

        workers = [threading.Thread(target=run) for _ in range(threads_per_file)]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()
    return errors


def test_locked_set_up_is_tried_again_until_it_opens(tmp_path, monkeypatch):
    # The race made deterministic: the first two set-ups find the file locked at once.
    real_open = ConnectionPerThread._open
    calls: list[int] = []

    def open_locked_twice(self):
        calls.append(1)
        if len(calls) <= 2:
            raise sqlite3.OperationalError("database is locked")
        return real_open(self)

    monkeypatch.setattr(ConnectionPerThread, "_open", open_locked_twice)
    files = ConnectionPerThread(str(tmp_path / "x.sqlite3"), timeout_seconds=10.0, schema=SCHEMA)
    conn = files.get()
    assert len(calls) == 3
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert files.get() is conn  # kept for the thread: no set-up again


def test_fresh_file_opened_by_four_threads_at_once_never_fails(tmp_path):
    # The real race, as seen under load: on the old code most runs of this test failed here.
    files = [ConnectionPerThread(str(tmp_path / f"{i}.sqlite3"), timeout_seconds=10.0, schema=SCHEMA)
             for i in range(40)]
    errors = _open_together([f.get for f in files], threads_per_file=4)
    assert errors == []
    for f in files:
        assert f.get().execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_fresh_file_store_first_writes_from_threads_at_once_all_land(tmp_path):
    # Through the store: each thread's first write opens its connection on the new file.
    stores = [SqliteStore(str(tmp_path / f"s{i}.sqlite3"), deadline_seconds=10.0) for i in range(15)]
    names = iter(range(10**6))
    lock = threading.Lock()

    def first_write(store: SqliteStore) -> None:
        with lock:
            name = f"t{next(names)}"
        store.create("things", name, {"name": name})

    errors = _open_together([lambda s=s: first_write(s) for s in stores], threads_per_file=4)
    assert errors == []
    assert [len(s.query("things")) for s in stores] == [4] * len(stores)


def test_lock_held_past_the_timeout_still_raises(tmp_path):
    path = str(tmp_path / "held.sqlite3")
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")  # a fresh file, locked by another connection
    try:
        with pytest.raises(sqlite3.OperationalError, match="locked"):
            ConnectionPerThread(path, timeout_seconds=0.1, schema=SCHEMA).get()
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert ConnectionPerThread(path, timeout_seconds=0.3, schema=SCHEMA).get() is not None


def test_other_open_errors_are_not_retried(tmp_path):
    missing_dir = tmp_path / "no-such-dir" / "x.sqlite3"
    with pytest.raises(sqlite3.OperationalError, match="unable to open"):
        ConnectionPerThread(str(missing_dir), timeout_seconds=30.0, schema=SCHEMA).get()
