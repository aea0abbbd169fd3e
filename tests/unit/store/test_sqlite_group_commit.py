"""The SQLite store's group commit and in-process writer lock (shared/sqlite_file.py).

Writers of one process share one transaction and one fsync; a body that raises leaves none of its
writes (one write undoes itself, a body of more takes its own savepoint), later bodies see earlier
ones' writes, and a caller returns only after the commit that holds its writes. The batches here are made deterministic by
holding the first body inside its transaction until the others are waiting.
"""
from __future__ import annotations

import threading
import time

import pytest

from shared.sqlite_file import group_commit, write_lock
from shared.store import RecordAlreadyExists, StoreUnavailable
from shared.store.sqlite import SqliteStore


def _wait_until(predicate, what: str, timeout_s: float = 30.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.01)


class _Caller(threading.Thread):
    """One thread calling ``store.run_transaction(fn)``; keeps the result or the exception."""

    def __init__(self, store: SqliteStore, fn):
        super().__init__(daemon=True)
        self.store, self.fn = store, fn
        self.result = self.error = None
        self.thread_of_body: list[int] = []

    def run(self) -> None:
        def body(tx):
            self.thread_of_body.append(threading.get_ident())
            return self.fn(tx)

        try:
            self.result = self.store.run_transaction(body)
        except Exception as exc:  # noqa: BLE001 - the test reads it
            self.error = exc


def _hold_first_transaction(store: SqliteStore):
    """Start a caller whose body blocks until released; returns (caller, release event)."""
    inside, release = threading.Event(), threading.Event()

    def first(tx):
        tx.set("things", "first", {"v": 0})
        inside.set()
        release.wait(30)

    holder = _Caller(store, first)
    holder.start()
    assert inside.wait(30)
    return holder, release


def _run_queued(path, holder, release, callers) -> None:
    """Start the callers one at a time, each queued behind the held first transaction, then let that
    one commit and wait for all of them (the queued bodies then share one group transaction)."""
    for i, c in enumerate(callers):
        c.start()
        _wait_until(lambda n=i + 1: group_commit(path).waiting() == n, "the callers to queue")
    release.set()
    for c in (holder, *callers):
        c.join(30)


def test_sqlite_group_commit_failing_body_rolls_back_alone_others_commit(tmp_path):
    path = str(tmp_path / "group.sqlite3")
    store = SqliteStore(path, deadline_seconds=30.0)
    holder, release = _hold_first_transaction(store)

    def failing(tx):
        tx.set("things", "failing", {"v": 1})
        raise ValueError("this body fails")

    callers = [_Caller(store, failing), _Caller(store, lambda tx: tx.set("things", "kept", {"v": 2}))]
    _run_queued(path, holder, release, callers)
    assert isinstance(callers[0].error, ValueError)
    assert callers[1].error is None
    assert store.get("things", "failing") is None
    assert store.get("things", "kept") == {"v": 2}
    assert store.get("things", "first") == {"v": 0}
    # The two queued bodies ran in one transaction, on one thread.
    assert callers[0].thread_of_body == callers[1].thread_of_body


def test_sqlite_group_commit_body_failing_on_its_second_write_leaves_none_of_them(tmp_path):
    path = str(tmp_path / "group.sqlite3")
    store = SqliteStore(path, deadline_seconds=30.0)
    store.set("things", "taken", {"v": 0})
    holder, release = _hold_first_transaction(store)

    def two_writes(tx):  # its first write is applied before its second one fails
        tx.set("things", "half", {"v": 1})
        tx.create("things", "taken", {"v": 1})

    callers = [_Caller(store, lambda tx: tx.set("things", "before", {"v": 2})), _Caller(store, two_writes),
               _Caller(store, lambda tx: tx.set("things", "after", {"v": 3}))]
    _run_queued(path, holder, release, callers)
    assert isinstance(callers[1].error, RecordAlreadyExists)
    assert callers[0].error is None and callers[2].error is None
    assert store.get("things", "half") is None
    assert store.get("things", "taken") == {"v": 0}
    assert store.get("things", "before") == {"v": 2} and store.get("things", "after") == {"v": 3}
    assert callers[0].thread_of_body == callers[1].thread_of_body == callers[2].thread_of_body


def test_sqlite_group_commit_same_id_created_twice_in_one_batch_exactly_one_wins(tmp_path):
    path = str(tmp_path / "group.sqlite3")
    store = SqliteStore(path, deadline_seconds=30.0)
    holder, release = _hold_first_transaction(store)

    def create(value):
        return lambda tx: tx.create("things", "one", {"v": value})

    callers = [_Caller(store, create(i)) for i in range(4)]
    _run_queued(path, holder, release, callers)
    winners = [c for c in callers if c.error is None]
    assert len(winners) == 1
    assert all(isinstance(c.error, RecordAlreadyExists) for c in callers if c is not winners[0])
    assert store.get("things", "one") == {"v": callers.index(winners[0])}


def test_sqlite_group_commit_caller_not_taken_by_its_deadline_writes_nothing(tmp_path):
    path = str(tmp_path / "group.sqlite3")
    store = SqliteStore(path, deadline_seconds=30.0)
    impatient = SqliteStore(path, deadline_seconds=0.2)
    holder, release = _hold_first_transaction(store)
    late = _Caller(impatient, lambda tx: tx.set("things", "late", {"v": 1}))
    late.start()
    late.join(30)  # its deadline passes while the first transaction still holds the lead
    release.set()
    holder.join(30)
    assert isinstance(late.error, StoreUnavailable)
    assert store.get("things", "late") is None
    assert store.get("things", "first") == {"v": 0}


def test_sqlite_store_writer_lock_held_elsewhere_past_deadline_is_unavailable(tmp_path):
    path = str(tmp_path / "locked.sqlite3")
    store = SqliteStore(path, deadline_seconds=0.2)
    lock = write_lock(path)
    with lock:  # e.g. the embedded queue of this process in the middle of a write
        with pytest.raises(StoreUnavailable):
            store.set("things", "a", {"v": 1})
    assert store.get("things", "a") is None
    store.set("things", "a", {"v": 2})
    assert store.get("things", "a") == {"v": 2}


def test_sqlite_group_commit_skips_the_fsync_only_when_no_body_of_the_batch_is_durable(tmp_path):
    from shared.sqlite_file import ConnectionPerThread

    path = str(tmp_path / "sync.sqlite3")
    connections = ConnectionPerThread(path, timeout_seconds=30.0, schema=("CREATE TABLE IF NOT EXISTS t (x)",))
    group = group_commit(path)

    def level_inside(conn) -> int:  # the level the body's transaction commits with: 1 NORMAL, 2 FULL
        conn.execute("INSERT INTO t VALUES (1)")
        return conn.execute("PRAGMA synchronous").fetchone()[0]

    assert group.run(connections.get, level_inside, timeout_seconds=30.0, durable=False) == 1
    assert group.run(connections.get, level_inside, timeout_seconds=30.0) == 2  # fsynced again

    def batch(*durable: bool) -> list[int]:
        inside, release = threading.Event(), threading.Event()
        results: dict[int, int] = {}

        def first(conn):
            inside.set()
            release.wait(30)

        def run(i: int, fn, wants: bool) -> threading.Thread:
            def call() -> None:
                results[i] = group.run(connections.get, fn, timeout_seconds=30.0, durable=wants)

            thread = threading.Thread(target=call, daemon=True)
            thread.start()
            return thread

        threads = [run(-1, first, False)]
        assert inside.wait(30)
        for i, wants in enumerate(durable):
            threads.append(run(i, level_inside, wants))
            _wait_until(lambda n=i + 1: group.waiting() == n, "the callers to queue")
        release.set()
        for thread in threads:
            thread.join(30)
        return [results[i] for i in range(len(durable))]

    assert batch(False, True) == [2, 2]  # one durable body: the whole batch is fsynced
    assert batch(False, False) == [1, 1]
    assert batch(True, False) == [2, 2]
