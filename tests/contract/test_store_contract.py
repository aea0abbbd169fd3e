"""One contract suite for the document store port, run against every adapter.

- sqlite: a real SQLite file in tmp_path.
- memory: ``shared.store.memory``, the in-memory adapter the unit tests use; every store a test makes
  shares one ``MemoryDatabase``, as the SQLite ones share one file.
- firestore: the real google-cloud-firestore client against Google's Firestore emulator on
  loopback (``FIRESTORE_EMULATOR_HOST`` if set, else one started for the session by
  ``firestore_emulator.py``), a fresh project id per test so tests share nothing. Where the
  emulator is not installed (Debian 13 image), the Firestore parametrizations skip and say why.
A scenario an adapter cannot show here skips and says why (``NOT_SHOWN``).
"""
from __future__ import annotations

import multiprocessing
import socket
import threading
import uuid

import pytest

from shared.store import RecordAlreadyExists, StoreUnavailable, TransactionConflict


def _sqlite(request, tmp_path):
    from shared.store.sqlite import SqliteStore

    return lambda **kwargs: SqliteStore(str(tmp_path / "contract.sqlite3"), deadline_seconds=5.0, **kwargs)


def _memory(request, tmp_path):
    from shared.store.memory import MemoryDatabase, MemoryStore

    database = MemoryDatabase()
    return lambda **kwargs: MemoryStore(database, deadline_seconds=5.0, **kwargs)


def _firestore(request, tmp_path):
    host = request.getfixturevalue("firestore_emulator_host")
    request.getfixturevalue("monkeypatch").setenv("FIRESTORE_EMULATOR_HOST", host)
    from shared.store.firestore import FirestoreStore

    project = f"test-{uuid.uuid4().hex[:12]}"
    return lambda **kwargs: FirestoreStore(project, deadline_seconds=5.0, **kwargs)


ADAPTERS = {"sqlite": _sqlite, "memory": _memory, "firestore": _firestore}

# (adapter, test) → why that scenario cannot be shown against it here.
NOT_SHOWN = {
    ("firestore", "test_store_transaction_rerun_on_conflict_applies_once"):
        "before_commit is SQLite's test seam; Firestore re-runs on a real race in "
        "test_firestore_store_racing_transactions_rerun_and_apply_once",
    ("firestore", "test_store_sixteen_threads_increment_without_failure"):
        "the Firestore emulator stalls every overlapping transaction on one document for its 2 s "
        "lock timeout and aborts most (firebase-tools#6758, #8300: not meant for parallel use), so "
        "16 racing increments cannot finish in 5 attempts there",
}


@pytest.fixture(params=sorted(ADAPTERS))
def make_store(request, tmp_path):
    reason = NOT_SHOWN.get((request.param, request.node.originalname))
    if reason:
        pytest.skip(reason)
    return ADAPTERS[request.param](request, tmp_path)


def test_store_create_then_get_roundtrips_unicode(make_store):
    store = make_store()
    store.create("things", "a", {"name": "和米素食 😀", "n": 1, "none": None})
    assert store.get("things", "a") == {"name": "和米素食 😀", "n": 1, "none": None}
    assert store.get("things", "missing") is None


def test_store_get_all_reads_each_ref_in_order_none_where_absent(make_store):
    store = make_store()
    store.create("things", "a", {"name": "和米素食 😀"})
    store.create("others", "a", {"v": 2})
    store.create("things", "b", {"v": 3})
    refs = [("others", "a"), ("things", "missing"), ("things", "a"), ("things", "b"), ("things", "a")]
    assert store.get_all(refs) == [{"v": 2}, None, {"name": "和米素食 😀"}, {"v": 3}, {"name": "和米素食 😀"}]
    assert store.get_all([]) == []
    reader = make_store(read_only=True)
    assert reader.get_all([("things", "b"), ("nowhere", "x")]) == [{"v": 3}, None]


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


def test_store_read_only_reads_and_refuses_writes(make_store):
    make_store().create("things", "a", {"v": 1})
    ro = make_store(read_only=True)
    assert ro.get("things", "a") == {"v": 1}
    with pytest.raises(StoreUnavailable):
        ro.create("things", "b", {"v": 2})
    with pytest.raises(StoreUnavailable):
        ro.run_transaction(lambda tx: tx.set("things", "a", {"v": 3}))
    assert make_store().get_all([("things", "a"), ("things", "b")]) == [{"v": 1}, None]


def test_memory_store_writer_held_past_deadline_is_unavailable_and_readers_never_wait():
    from shared.store.memory import MemoryDatabase, MemoryStore

    database = MemoryDatabase()
    MemoryStore(database).set("things", "a", {"v": 1})
    inside, release = threading.Event(), threading.Event()

    def slow(tx):
        tx.get("things", "a")
        inside.set()
        release.wait(30)
        tx.set("things", "a", {"v": 2})

    holder = threading.Thread(target=MemoryStore(database, deadline_seconds=30.0).run_transaction, args=(slow,))
    holder.start()
    try:
        assert inside.wait(30)
        late = MemoryStore(database, deadline_seconds=0.05)
        with pytest.raises(StoreUnavailable):
            late.set("things", "b", {"v": 1})
        assert late.get("things", "a") == {"v": 1}  # the open transaction's write is not seen
        assert late.get("things", "b") is None
    finally:
        release.set()
        holder.join(30)
    assert MemoryStore(database).get("things", "a") == {"v": 2}


def test_memory_store_named_database_is_shared_by_url_and_forgotten():
    from shared.store.memory import MemoryStore, forget_database

    name = f"contract-{uuid.uuid4().hex[:8]}"
    MemoryStore.from_url(f"memory://{name}").set("things", "a", {"v": 1})
    assert MemoryStore.from_url(f"memory://{name}", read_only=True).get("things", "a") == {"v": 1}
    forget_database(name)
    assert MemoryStore.from_url(f"memory://{name}").get("things", "a") is None
    forget_database(name)
    for bad in ("memory://", "memory://a/b", "sqlite:////x"):
        with pytest.raises(ValueError):
            MemoryStore.from_url(bad)


# Firestore only: behaviour SQLite shows through before_commit, id escaping, and error mapping.

@pytest.fixture
def firestore_store(firestore_emulator_host, monkeypatch):
    """A FirestoreStore on the emulator, in a fresh project of its own."""
    monkeypatch.setenv("FIRESTORE_EMULATOR_HOST", firestore_emulator_host)
    from shared.store.firestore import FirestoreStore

    return FirestoreStore(f"test-{uuid.uuid4().hex[:12]}", deadline_seconds=5.0)


def test_firestore_store_racing_transactions_rerun_and_apply_once(firestore_store):
    store = firestore_store
    store.set("counter", "c", {"n": 0})
    attempts = []
    both_read = threading.Barrier(2, timeout=10)
    errors = []

    def txn(tx):
        first = tx.get("counter", "c")
        attempts.append(1)
        if len(attempts) <= 2:  # both first attempts read before either writes: a real conflict
            both_read.wait()
        tx.set("counter", "c", {"n": first["n"] + 1})

    def run():
        try:
            store.run_transaction(txn)
        except Exception as exc:  # noqa: BLE001 - the assertion reports it
            errors.append(exc)

    threads = [threading.Thread(target=run) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert errors == []
    assert len(attempts) >= 3  # at least one transaction lost the race and was re-run
    assert store.get("counter", "c") == {"n": 2}


def test_firestore_store_ids_firestore_forbids_roundtrip_distinctly(firestore_store):
    ids = ["tenant:a/b", "tenant:a%2Fb", "tenant:a_b", ".", "..", "__x__", "%2E", "x" * 1600, "x" * 1601]
    for n, doc_id in enumerate(ids):
        firestore_store.create("things", doc_id, {"n": n})
    assert [firestore_store.get("things", doc_id) for doc_id in ids] == [{"n": n} for n in range(len(ids))]
    with pytest.raises(RecordAlreadyExists):
        firestore_store.create("things", "tenant:a/b", {"n": -1})


def test_firestore_store_query_matches_none_and_nested_values(firestore_store):
    firestore_store.set("rows", "a", {"user": None, "tags": ["x", {"k": 1.5}], "meta": {"ok": True}})
    firestore_store.set("rows", "b", {"user": "u1", "tags": [], "meta": {}})
    assert firestore_store.query("rows", {"user": None}) == [
        {"user": None, "tags": ["x", {"k": 1.5}], "meta": {"ok": True}}]


def test_firestore_store_unreachable_reads_unavailable_writes_unknown(monkeypatch):
    from shared.store import StoreTimeout
    from shared.store.firestore import FirestoreStore

    with socket.socket() as s:  # a loopback port nobody listens on
        s.bind(("127.0.0.1", 0))
        monkeypatch.setenv("FIRESTORE_EMULATOR_HOST", f"127.0.0.1:{s.getsockname()[1]}")
    store = FirestoreStore("test-unreachable", deadline_seconds=0.2)
    for read in (lambda: store.get("things", "a"), lambda: store.query("things", {"v": 1}),
                 lambda: store.run_transaction(lambda tx: tx.set("things", "a", {"v": 1}))):
        with pytest.raises(StoreUnavailable) as caught:
            read()
        assert not isinstance(caught.value, StoreTimeout)  # nothing was sent: Begin failed
    for write in (lambda: store.create("things", "a", {"v": 1}), lambda: store.set("things", "a", {"v": 1})):
        with pytest.raises(StoreTimeout):
            write()
    read_only = FirestoreStore("test-unreachable", deadline_seconds=0.2, read_only=True)
    with pytest.raises(StoreUnavailable) as caught:
        read_only.set("things", "a", {"v": 1})
    assert not isinstance(caught.value, StoreTimeout)  # refused before anything was sent


def test_firestore_store_wiring_opens_url_without_connecting():
    from shared.config import Settings
    from shared.wiring import open_store

    settings = Settings.from_env({"LOCAL_STORE_URL": "firestore://demo-project/sandbox",
                                  "LOCAL_STORE_DEADLINE_SECONDS": "0.7"})
    store = open_store(settings, read_only=True)
    assert (type(store).__name__, store.project, store.database) == ("FirestoreStore", "demo-project", "sandbox")
    assert (store.deadline_seconds, store.read_only, store._client) == (0.7, True, None)
    default = open_store(Settings.from_env({"LOCAL_STORE_URL": "firestore://demo-project"}))
    assert default.database == "(default)"
    with pytest.raises(ValueError):
        open_store(Settings.from_env({"LOCAL_STORE_URL": "firestore:///sandbox"}))


def test_store_expire_at_roundtrips_as_an_aware_instant(make_store):
    from datetime import datetime, timedelta, timezone

    from shared.store import TTL_FIELD, expire_at

    store = make_store()
    taipei = timezone(timedelta(hours=8))
    until = expire_at(datetime(2026, 12, 1, 9, 30, 15, 250000, tzinfo=taipei))
    store.set("kept", "a", {"v": 1, TTL_FIELD: until})
    got = store.get("kept", "a")[TTL_FIELD]
    assert isinstance(got, datetime) and got.utcoffset() == timedelta(0) and got == until
    # A read-modify-write inside a transaction keeps it an instant (the webhook inbox does this).
    store.run_transaction(lambda tx: tx.set("kept", "a", {**tx.get("kept", "a"), "v": 2}))
    again = store.get("kept", "a")
    assert again["v"] == 2 and isinstance(again[TTL_FIELD], datetime) and again[TTL_FIELD] == until
    assert [doc[TTL_FIELD] for doc in store.query("kept", {"v": 2})] == [until]
    with pytest.raises(ValueError):
        expire_at(datetime(2026, 12, 1, 9, 30))  # naive: LOCAL never guesses a zone


def test_firestore_store_expire_at_is_a_timestamp_for_ttl(firestore_store):
    # Firestore TTL deletes only on a Timestamp value; a string would be ignored for ever.
    from datetime import datetime, timezone

    from shared.store import expire_at

    firestore_store.set("kept", "a", {"expire_at": expire_at(datetime(2027, 1, 1, tzinfo=timezone.utc))})
    value = firestore_store._db().collection("kept").document("a").get().get("expire_at")
    assert type(value).__name__ == "DatetimeWithNanoseconds"  # the library's Timestamp type


def test_firestore_store_private_transaction_seam_is_pinned():
    """shared/store/firestore.py re-sends BeginTransaction, Commit and Rollback with the store's
    deadline by overriding the library's private ``Transaction._begin/_commit/_rollback`` (the
    public API has no timeout for them). Those bodies follow google-cloud-firestore 2.34.1; an
    upgrade must re-read them, so this test names the version and the shape it relies on."""
    import inspect

    from google.cloud import firestore
    from google.cloud.firestore_v1 import transaction as library

    from tests.conftest import REPO

    assert firestore.__version__ == "2.34.1"
    assert "google-cloud-firestore==2.34.1" in (REPO / "requirements.lock").read_text()
    for name in ("_begin", "_commit", "_rollback", "_clean_up", "_options_protobuf", "in_progress"):
        assert hasattr(library.Transaction, name), name
    driver = inspect.getsource(library._Transactional)
    assert "transaction._begin(retry_id=self.retry_id)" in driver
    assert "transaction._commit()" in driver and "transaction._rollback()" in driver


def test_store_increment_creates_then_adds_and_keeps_other_fields(make_store):
    store = make_store()
    store.increment("counts", "t:2026-12", {"pushes": 1, "pushes_receipt": 1}, {"tenant_id": "t", "month": "2026-12"})
    store.increment("counts", "t:2026-12", {"pushes": 2}, {"tenant_id": "t", "month": "2026-12"})
    assert store.get("counts", "t:2026-12") == {"tenant_id": "t", "month": "2026-12", "pushes": 3, "pushes_receipt": 1}
    store.run_transaction(lambda tx: tx.set("counts", "t:2026-12", {**tx.get("counts", "t:2026-12"), "note": "x"}))
    store.increment("counts", "t:2026-12", {"pushes_receipt": 5}, {"tenant_id": "t"})
    assert store.get("counts", "t:2026-12") == {"tenant_id": "t", "month": "2026-12", "pushes": 3,
                                                "pushes_receipt": 6, "note": "x"}


def test_store_increment_from_eight_threads_counts_each_once(make_store):
    store = make_store()
    barrier = threading.Barrier(8)

    def bump():
        barrier.wait()
        store.increment("counts", "c", {"n": 1}, {})

    threads = [threading.Thread(target=bump) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert store.get("counts", "c") == {"n": 8}


def test_store_increment_on_read_only_store_is_refused(make_store):
    with pytest.raises(StoreUnavailable):
        make_store(read_only=True).increment("counts", "c", {"n": 1}, {})


def test_store_transaction_get_all_reads_each_ref_in_order_then_refuses_after_a_write(make_store):
    store = make_store()
    store.create("things", "a", {"v": 1})
    store.create("other", "b", {"v": 2})

    def txn(tx):
        found = tx.get_all([("other", "b"), ("things", "missing"), ("things", "a")])
        tx.set("things", "c", {"v": 3})
        with pytest.raises(RuntimeError):
            tx.get_all([("things", "a")])
        return found

    assert store.run_transaction(txn) == [{"v": 2}, None, {"v": 1}]
    assert store.get("things", "c") == {"v": 3}
