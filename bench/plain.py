"""Baselines for P3, P4 and P5 of ``make bench``: the same job done the plain way, no LOCAL code.

* P3: one plain SQLite transaction per create, inserting the same four documents a handoff create
  writes (request, operation, draft, actor) as JSON rows, in the same file as LOCAL's store.
* P4: plain read-only lookups by key (``mode=ro``, one ``SELECT`` by primary key, ``json.loads``).
* P5: plain single-row ``UPDATE`` transactions, one per thread, on one row.
* P3/P5 on the Firestore emulator: plain batched writes of the same documents; plain
  ``update`` calls on one document.

Durability is the same as LOCAL's on both sides (WAL, ``synchronous=FULL``: each commit is on disk
before it returns), so a ratio measures the work, not a setting. Standard library only, except
``google.cloud.firestore`` for the emulator baselines.
"""
from __future__ import annotations

import json
import sqlite3
import threading
from typing import Any

PLAIN_TABLE = "plain_documents"


def connect(path: str, *, timeout_seconds: float = 5.0) -> sqlite3.Connection:
    """A plain connection in autocommit mode, WAL, ``synchronous=FULL``, with the plain table."""
    conn = sqlite3.connect(path, timeout=timeout_seconds, isolation_level=None, check_same_thread=False)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=FULL")
    conn.execute(f"CREATE TABLE IF NOT EXISTS {PLAIN_TABLE} (collection TEXT NOT NULL, id TEXT NOT NULL, "
                 "data TEXT NOT NULL, PRIMARY KEY (collection, id)) WITHOUT ROWID")
    return conn


def insert_documents(conn: sqlite3.Connection, documents: list[tuple[str, str, dict]]) -> None:
    """One transaction: ``INSERT OR REPLACE`` each ``(collection, id, document)`` as JSON text."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        for collection, doc_id, data in documents:
            conn.execute(f"INSERT OR REPLACE INTO {PLAIN_TABLE}(collection, id, data) VALUES (?,?,?)",
                         (collection, doc_id, json.dumps(data, ensure_ascii=False, default=str)))
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise


def lookup(conn: sqlite3.Connection, table: str, collection: str, doc_id: str) -> dict | None:
    """One read by primary key on a read-only connection; the document or None."""
    row = conn.execute(f"SELECT data FROM {table} WHERE collection=? AND id=?", (collection, doc_id)).fetchone()
    return json.loads(row[0]) if row else None


def read_only(path: str) -> sqlite3.Connection:
    """A plain read-only connection (``mode=ro``)."""
    return sqlite3.connect(f"file:{path}?mode=ro", uri=True, isolation_level=None, check_same_thread=False)


def concurrent_updates(path: str, threads: int) -> int:
    """``threads`` threads, released together, each running one ``UPDATE`` transaction on one row.

    Returns:
        The row's counter afterwards (each thread adds 1).
    """
    setup = connect(path)
    setup.execute("CREATE TABLE IF NOT EXISTS plain_counter (id TEXT PRIMARY KEY, revision INTEGER NOT NULL)")
    setup.execute("INSERT OR IGNORE INTO plain_counter(id, revision) VALUES ('one', 0)")
    conns = [connect(path) for _ in range(threads)]
    barrier = threading.Barrier(threads)
    errors: list[BaseException] = []

    def run(conn: sqlite3.Connection) -> None:
        barrier.wait()
        try:
            conn.execute("BEGIN IMMEDIATE")
            conn.execute("UPDATE plain_counter SET revision = revision + 1 WHERE id = 'one'")
            conn.execute("COMMIT")
        except sqlite3.Error as exc:  # counted by the caller through the final value
            errors.append(exc)

    workers = [threading.Thread(target=run, args=(c,)) for c in conns]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    for c in conns:
        c.close()
    value = setup.execute("SELECT revision FROM plain_counter WHERE id='one'").fetchone()[0]
    setup.close()
    return int(value)


def firestore_batch(client: Any, documents: list[tuple[str, str, dict]]) -> None:
    """One plain batched write of ``(collection, id, document)`` to Firestore (the emulator)."""
    batch = client.batch()
    for collection, doc_id, data in documents:
        batch.set(client.collection(collection).document(doc_id), data)
    batch.commit()


def firestore_concurrent_updates(client: Any, collection: str, doc_id: str, threads: int) -> None:
    """``threads`` threads, released together, each one plain ``update`` (server-side increment)."""
    from google.cloud import firestore

    ref = client.collection(collection).document(doc_id)
    ref.set({"revision": 0})
    barrier = threading.Barrier(threads)

    def run() -> None:
        barrier.wait()
        ref.update({"revision": firestore.Increment(1)})

    workers = [threading.Thread(target=run) for _ in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
