"""SQLite adapter of the document store: one file, WAL, one JSON document per row.

Writes run under ``BEGIN IMMEDIATE`` with a ``busy_timeout`` equal to the call's deadline, so
concurrent writers queue instead of failing (sqlite.org/lang_transaction.html). Connections
are opened lazily, one per thread, never at import time (docs/design.md §9).
"""
from __future__ import annotations

import os
import sqlite3
from typing import Any, Callable, Sequence, TypeVar

from shared.sqlite_file import ConnectionPerThread, LockNotHad, group_commit, write_immediately
from shared.store.documents import WritesThroughTransactions
from shared.store.documents import dumps as _dumps
from shared.store.documents import field_name as _field
from shared.store.documents import loads as _loads
from shared.store.port import (
    Doc,
    RecordAlreadyExists,
    StoreUnavailable,
    TransactionConflict,
)

T = TypeVar("T")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS documents (
    collection TEXT NOT NULL,
    id TEXT NOT NULL,
    data TEXT NOT NULL,
    PRIMARY KEY (collection, id)
) WITHOUT ROWID
"""


def path_from_url(url: str) -> str:
    """``sqlite:////abs/path.sqlite3`` → ``/abs/path.sqlite3``.

    Raises:
        ValueError: not an absolute sqlite URL.
    """
    prefix = "sqlite:///"
    if not url.startswith(prefix + "/"):
        raise ValueError("expected sqlite:////absolute/path.sqlite3")
    return url[len(prefix):]


def file_missing(url: str | None) -> bool:
    """True when ``url`` is a ``sqlite:`` store URL whose file does not exist yet (read-only tools
    then report an empty store instead of creating one); False for any other store."""
    if not url or not url.startswith("sqlite:"):
        return False
    return not os.path.exists(path_from_url(url))


class _SqliteTransaction:
    """One attempt's view: reads go to the open transaction, writes are buffered."""

    def __init__(self, conn: sqlite3.Connection):
        self._conn = conn
        self.writes: list[tuple[str, str, str, Doc | None]] = []

    def get(self, collection: str, doc_id: str) -> Doc | None:
        """Read inside the transaction. Raises RuntimeError after a buffered write."""
        if self.writes:
            raise RuntimeError("transaction reads must come before writes (Firestore rule)")
        row = self._conn.execute(
            "SELECT data FROM documents WHERE collection=? AND id=?", (collection, doc_id)
        ).fetchone()
        return _loads(row[0]) if row else None

    def get_all(self, refs: Sequence[tuple[str, str]]) -> list[Doc | None]:
        """Read several documents inside the transaction (``get`` for each). Raises RuntimeError after a write."""
        return [self.get(collection, doc_id) for collection, doc_id in refs]

    def create(self, collection: str, doc_id: str, data: Doc) -> None:
        """Buffer a create-if-absent."""
        self.writes.append(("create", collection, doc_id, dict(data)))

    def set(self, collection: str, doc_id: str, data: Doc) -> None:
        """Buffer a replace."""
        self.writes.append(("set", collection, doc_id, dict(data)))

    def delete(self, collection: str, doc_id: str) -> None:
        """Buffer a delete."""
        self.writes.append(("delete", collection, doc_id, None))


class SqliteStore(WritesThroughTransactions):
    """Document store over one SQLite file.

    Args:
        path: absolute file path; created with its table on first use unless read_only.
        deadline_seconds: lock wait per call (busy_timeout), in seconds.
        read_only: open with ``mode=ro`` (reconcile's lookup, docs/design.md §4); writes then fail.
        before_commit: test seam, called with the attempt number (1-based) after the
            transaction function ran and before COMMIT; raising TransactionConflict there
            makes the store roll back and re-run the function, as Firestore does on contention.
    """

    def __init__(self, path: str, *, deadline_seconds: float = 0.5, read_only: bool = False,
                 before_commit: Callable[[int], None] | None = None):
        self.path = path
        self.deadline_seconds = deadline_seconds
        self.read_only = read_only
        self._before_commit = before_commit
        self._connections = ConnectionPerThread(path, timeout_seconds=deadline_seconds, read_only=read_only,
                                                schema=(_SCHEMA,))

    @classmethod
    def from_url(cls, url: str, **kwargs: Any) -> "SqliteStore":
        """Build from ``LOCAL_STORE_URL``. Raises ValueError for a malformed URL."""
        return cls(path_from_url(url), **kwargs)

    def _conn(self) -> sqlite3.Connection:
        try:
            return self._connections.get()
        except sqlite3.Error as exc:
            raise StoreUnavailable(f"cannot open store: {exc.__class__.__name__}") from exc

    def close(self) -> None:
        """Close this thread's connection, if any."""
        self._connections.close()

    def get(self, collection: str, doc_id: str) -> Doc | None:
        """Read one document, or None. Raises StoreUnavailable."""
        try:
            row = self._conn().execute(
                "SELECT data FROM documents WHERE collection=? AND id=?", (collection, doc_id)
            ).fetchone()
        except sqlite3.Error as exc:
            raise StoreUnavailable(f"read failed: {exc.__class__.__name__}") from exc
        return _loads(row[0]) if row else None

    def get_all(self, refs: Sequence[tuple[str, str]]) -> list[Doc | None]:
        """Read several documents in one statement (one snapshot); None where absent. Raises StoreUnavailable."""
        if not refs:
            return []
        sql = " UNION ALL ".join(["SELECT ?, data FROM documents WHERE collection=? AND id=?"] * len(refs))
        args: list[Any] = []
        for i, (collection, doc_id) in enumerate(refs):
            args += [i, collection, doc_id]
        try:
            rows = self._conn().execute(sql, args).fetchall()
        except sqlite3.Error as exc:
            raise StoreUnavailable(f"read failed: {exc.__class__.__name__}") from exc
        found = {i: data for i, data in rows}
        return [_loads(found[i]) if i in found else None for i in range(len(refs))]

    def query(self, collection: str, where: dict[str, Any] | None = None,
              order_by: str | None = None, descending: bool = False,
              limit: int | None = None) -> list[Doc]:
        """Equality filters on top-level fields; optional order and limit. Raises StoreUnavailable."""
        sql = ["SELECT data FROM documents WHERE collection=?"]
        args: list[Any] = [collection]
        for name, value in (where or {}).items():
            if value is None:
                sql.append(f"AND json_extract(data, '$.{_field(name)}') IS NULL")
            else:
                sql.append(f"AND json_extract(data, '$.{_field(name)}') = ?")
                args.append(int(value) if isinstance(value, bool) else value)
        if order_by:
            sql.append(f"ORDER BY json_extract(data, '$.{_field(order_by)}') {'DESC' if descending else 'ASC'}")
        if limit is not None:
            sql.append("LIMIT ?")
            args.append(int(limit))
        try:
            rows = self._conn().execute(" ".join(sql), args).fetchall()
        except sqlite3.Error as exc:
            raise StoreUnavailable(f"query failed: {exc.__class__.__name__}") from exc
        return [_loads(r[0]) for r in rows]

    def run_transaction(self, fn: Callable[[Any], T], *, max_attempts: int = 5, durable: bool = True) -> T:
        """Run ``fn(tx)`` atomically; re-run it on TransactionConflict.

        The writers of this process commit together (``shared.sqlite_file.GroupCommit``): ``fn`` runs
        in a shared ``BEGIN IMMEDIATE`` transaction, maybe on another caller's thread, and its
        buffered writes are applied so that a failure leaves none of them (one write undoes itself,
        more take a savepoint); this call returns only after the ``COMMIT`` that holds its writes (on
        disk: ``synchronous=FULL``). With ``durable=False`` that commit may skip its fsync
        (``GroupCommit.run``): a power loss or OS crash before the next durable commit may lose it.

        Raises:
            RecordAlreadyExists: a buffered create hit an existing id; nothing written.
            TransactionConflict: still conflicting after ``max_attempts``.
            StoreUnavailable: the lock was not had within the deadline; nothing written.
        """
        def body(conn: sqlite3.Connection) -> T:
            # A body that raises leaves nothing written (GroupCommit's rule): ``fn`` only reads and
            # buffers, one write undoes itself when it fails, and more than one take a savepoint.
            if self._before_commit is None:  # nothing here raises a conflict: one attempt
                tx = _SqliteTransaction(conn)
                result = fn(tx)
                if len(tx.writes) <= 1:
                    self._apply(conn, tx.writes)
                    return result
                conn.execute("SAVEPOINT store_writes")
                try:
                    self._apply(conn, tx.writes)
                except BaseException:
                    _undo_savepoint(conn, "store_writes")
                    raise
                conn.execute("RELEASE store_writes")
                return result
            for attempt in range(1, max_attempts + 1):
                conn.execute("SAVEPOINT store_attempt")
                try:
                    tx = _SqliteTransaction(conn)
                    result = fn(tx)
                    self._apply(conn, tx.writes)
                    self._before_commit(attempt)
                except TransactionConflict:
                    _undo_savepoint(conn, "store_attempt")
                    if attempt == max_attempts:
                        raise
                    continue
                except BaseException:
                    _undo_savepoint(conn, "store_attempt")
                    raise
                conn.execute("RELEASE store_attempt")
                return result
            raise TransactionConflict("transaction did not commit")  # pragma: no cover

        try:
            if self.read_only:  # never joins the writers' group: its writes fail on their own
                return write_immediately(self._conn(), body)
            return group_commit(self.path).run(self._connections.get, body, timeout_seconds=self.deadline_seconds,
                                               durable=durable)
        except LockNotHad as exc:
            raise StoreUnavailable(f"store busy: {exc}") from exc
        except sqlite3.Error as exc:
            raise StoreUnavailable(f"write failed: {exc.__class__.__name__}") from exc

    @staticmethod
    def _apply(conn: sqlite3.Connection, writes: list[tuple[str, str, str, Doc | None]]) -> None:
        for op, collection, doc_id, data in writes:
            if op == "create":
                try:
                    conn.execute("INSERT INTO documents(collection, id, data) VALUES (?,?,?)",
                                 (collection, doc_id, _dumps(data or {})))
                except sqlite3.IntegrityError as exc:
                    raise RecordAlreadyExists(f"{collection}/{doc_id} exists") from exc
            elif op == "set":
                conn.execute("INSERT OR REPLACE INTO documents(collection, id, data) VALUES (?,?,?)",
                             (collection, doc_id, _dumps(data or {})))
            else:
                conn.execute("DELETE FROM documents WHERE collection=? AND id=?", (collection, doc_id))


def _undo_savepoint(conn: sqlite3.Connection, name: str) -> None:
    """Roll back to savepoint ``name`` and release it; quiet when SQLite already ended the
    transaction (an I/O error, a full disk): ``GroupCommit`` then fails the whole batch."""
    try:
        conn.execute(f"ROLLBACK TO {name}")
        conn.execute(f"RELEASE {name}")
    except sqlite3.Error:
        pass

