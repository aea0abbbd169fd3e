"""One contract suite for the document store port, run against every adapter.

The Firestore adapter joins this parametrization when it lands; an adapter that cannot start
here skips and says why.
"""
from __future__ import annotations

import multiprocessing
import threading

import pytest

from shared.store import RecordAlreadyExists, StoreUnavailable, TransactionConflict


def _sqlite(tmp_path, **kwargs):
    from shared.store.sqlite import SqliteStore

    return SqliteStore(str(tmp_path / "contract.sqlite3"), deadline_seconds=5.0, **kwargs)


ADAPTERS = {"sqlite": _sqlite}


@pytest.fixture(params=sorted(ADAPTERS))
def make_store(request, tmp_path):
    return lambda **kwargs: ADAPTERS[request.param](tmp_path, **kwargs)


def test_store_create_then_get_roundtrips_unicode(make_store):
    store = make_store()
    store.create("things", "a", {"name": "和米素食 😀", "n": 1, "none": None})
    assert store.get("things", "a") == {"name": "和米素食 😀", "n": 1, "none": None}
    assert store.get("things", "missing") is None


def test_store_create_existing_id_raises_and_keeps_first(make_store):
    store = make_store()
    store.create("things", "a", {"v": 1})
    with pytest.raises(RecordAlreadyExists):
        store.create("things", "a", {"v": 2})
    assert store.get("things", "a") == {"v": 1}


def test_store_query_filters_orders_and_limits(make_store):
    store = make_store()
    for i, user in enumerate(["u1", "u2", "u1", "u1"]):
        store.set("rows", f"r{i}", {"user": user, "i": i, "open": i % 2 == 0})
    rows = store.query("rows", {"user": "u1"}, order_by="i", descending=True, limit=2)
    assert [r["i"] for r in rows] == [3, 2]
    assert [r["i"] for r in store.query("rows", {"open": True}, order_by="i")] == [0, 2]


def test_store_transaction_failure_writes_nothing(make_store):
    store = make_store()
    store.create("things", "taken", {"v": 1})

    def txn(tx):
        tx.get("things", "taken")
        tx.set("things", "new", {"v": 2})
        tx.create("things", "taken", {"v": 3})

    with pytest.raises(RecordAlreadyExists):
        store.run_transaction(txn)
    assert store.get("things", "new") is None
    assert store.get("things", "taken") == {"v": 1}


def test_store_transaction_read_after_write_is_refused(make_store):
    store = make_store()

    def txn(tx):
        tx.set("things", "a", {"v": 1})
        tx.get("things", "a")

    with pytest.raises(RuntimeError):
        store.run_transaction(txn)
    assert store.get("things", "a") is None


def test_store_transaction_rerun_on_conflict_applies_once(make_store):
    attempts = []

    def conflict_once(attempt):
        if attempt == 1:
            raise TransactionConflict("forced")

    store = make_store(before_commit=conflict_once)
    store.set("counter", "c", {"n": 0})

    def txn(tx):
        attempts.append(1)
        doc = tx.get("counter", "c")
        tx.set("counter", "c", {"n": doc["n"] + 1})

    store.run_transaction(txn)
    assert len(attempts) == 2
    assert store.get("counter", "c") == {"n": 1}


def test_store_sixteen_threads_increment_without_failure(make_store):
    store = make_store()
    store.set("counter", "c", {"n": 0})
    errors = []
    barrier = threading.Barrier(16)

    def bump():
        barrier.wait()
        try:
            store.run_transaction(lambda tx: tx.set("counter", "c", {"n": tx.get("counter", "c")["n"] + 1}))
        except Exception as exc:  # noqa: BLE001 - the assertion reports it
            errors.append(exc)

    threads = [threading.Thread(target=bump) for _ in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert store.get("counter", "c") == {"n": 16}


def _bump_in_process(path: str, times: int) -> None:
    from shared.store.sqlite import SqliteStore

    store = SqliteStore(path, deadline_seconds=10.0)
    for _ in range(times):
        store.run_transaction(lambda tx: tx.set("counter", "c", {"n": tx.get("counter", "c")["n"] + 1}))


def test_sqlite_store_four_processes_increment_exactly(tmp_path):
    from shared.store.sqlite import SqliteStore

    path = str(tmp_path / "procs.sqlite3")
    SqliteStore(path).set("counter", "c", {"n": 0})
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_bump_in_process, args=(path, 25)) for _ in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
    assert [p.exitcode for p in procs] == [0, 0, 0, 0]
    assert SqliteStore(path).get("counter", "c") == {"n": 100}


def test_sqlite_store_read_only_cannot_write(tmp_path):
    from shared.store.sqlite import SqliteStore

    path = str(tmp_path / "ro.sqlite3")
    SqliteStore(path).create("things", "a", {"v": 1})
    ro = SqliteStore(path, read_only=True)
    assert ro.get("things", "a") == {"v": 1}
    with pytest.raises(StoreUnavailable):
        ro.create("things", "b", {"v": 2})
