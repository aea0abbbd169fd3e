"""In-memory adapter of the document store, for tests and one-process tools: nothing outlives the process.

It keeps the port's contract as the SQLite adapter does (tests/contract/test_store_contract.py runs
the same suite over both): documents are held as JSON text (``shared.store.documents``, so the same
values are refused and a read returns a fresh object); transactions run one at a time under one
writer lock, waited for at most the call's deadline; readers see only committed documents and never
wait for a writer (as readers of SQLite's WAL do); a transaction's writes are applied all or none.

Several ``MemoryStore`` objects share documents through one ``MemoryDatabase``, as several SQLite
stores share one file; ``LOCAL_STORE_URL=memory://NAME`` names one database per process
(``database_named``), so every ``open_store`` of one settings object sees the same documents.
"""
from __future__ import annotations

import json
import threading
from typing import Any, Callable, Sequence, TypeVar

from shared.store.documents import WritesThroughTransactions, dumps, field_name, loads
from shared.store.port import Doc, RecordAlreadyExists, StoreUnavailable, TransactionConflict

T = TypeVar("T")

URL_PREFIX = "memory://"

#: A buffered write: (operation "create" | "set" | "delete", collection, id, JSON text or None).
_Write = tuple[str, str, str, str | None]


class MemoryDatabase:
    """The documents of one in-memory store: collection → id → JSON text, and its two locks.

    ``writer`` serialises transactions (held while a transaction function runs and commits);
    ``_committed`` guards the dictionaries only while a read copies out or a commit writes in."""

    def __init__(self) -> None:
        self.collections: dict[str, dict[str, str]] = {}
        self.writer = threading.Lock()
        self._committed = threading.Lock()

    def read(self, collection: str, doc_id: str) -> str | None:
        """The JSON text of one committed document, or None."""
        with self._committed:
            return self.collections.get(collection, {}).get(doc_id)

    def read_all(self, refs: Sequence[tuple[str, str]]) -> list[str | None]:
        """The JSON texts of several committed documents, read at one moment, in the order of ``refs``."""
        with self._committed:
            return [self.collections.get(collection, {}).get(doc_id) for collection, doc_id in refs]

    def scan(self, collection: str) -> list[tuple[str, str]]:
        """Every committed ``(id, JSON text)`` of one collection, in id order (SQLite's key order)."""
        with self._committed:
            return sorted(self.collections.get(collection, {}).items())

    def stage(self, writes: Sequence[_Write]) -> dict[tuple[str, str], str | None]:
        """The end state of each document ``writes`` touch (JSON text, or None: deleted); the caller
        holds ``writer``, so nothing else changes the documents until ``apply``.

        Raises:
            RecordAlreadyExists: a ``create`` met a document (committed, or written earlier in ``writes``).
        """
        staged: dict[tuple[str, str], str | None] = {}
        with self._committed:
            for op, collection, doc_id, text in writes:
                key = (collection, doc_id)
                exists = staged[key] is not None if key in staged else doc_id in self.collections.get(collection, {})
                if op == "create" and exists:
                    raise RecordAlreadyExists(f"{collection}/{doc_id} exists")
                staged[key] = text
        return staged

    def apply(self, staged: dict[tuple[str, str], str | None]) -> None:
        """Commit what ``stage`` returned, at one moment for readers."""
        with self._committed:
            for (collection, doc_id), text in staged.items():
                if text is None:
                    self.collections.get(collection, {}).pop(doc_id, None)
                else:
                    self.collections.setdefault(collection, {})[doc_id] = text


_NAMED: dict[str, MemoryDatabase] = {}
_NAMED_LOCK = threading.Lock()


def database_named(name: str) -> MemoryDatabase:
    """This process's database called ``name``, made empty on first use (``memory://NAME``)."""
    with _NAMED_LOCK:
        return _NAMED.setdefault(name, MemoryDatabase())


def forget_database(name: str) -> None:
    """Drop the database called ``name`` (a test's clean-up); the next ``database_named`` is empty."""
    with _NAMED_LOCK:
        _NAMED.pop(name, None)


def name_from_url(url: str) -> str:
    """``memory://NAME`` → ``NAME``.

    Raises:
        ValueError: not a ``memory://`` URL with a name.
    """
    name = url[len(URL_PREFIX):] if url.startswith(URL_PREFIX) else ""
    if not name or "/" in name:
        raise ValueError("expected memory://NAME")
    return name


class _MemoryTransaction:
    """One attempt's view: reads see committed documents, writes are buffered as JSON text (refused
    with StoreUnavailable on a read-only store, as Firestore's adapter refuses them)."""

    def __init__(self, database: MemoryDatabase, *, read_only: bool):
        self._database = database
        self._read_only = read_only
        self.writes: list[_Write] = []

    def get(self, collection: str, doc_id: str) -> Doc | None:
        """Read inside the transaction. Raises RuntimeError after a buffered write."""
        if self.writes:
            raise RuntimeError("transaction reads must come before writes (Firestore rule)")
        text = self._database.read(collection, doc_id)
        return loads(text) if text is not None else None

    def get_all(self, refs: Sequence[tuple[str, str]]) -> list[Doc | None]:
        """Read several documents inside the transaction (``get`` for each). Raises RuntimeError after a write."""
        return [self.get(collection, doc_id) for collection, doc_id in refs]

    def create(self, collection: str, doc_id: str, data: Doc) -> None:
        """Buffer a create-if-absent. Raises TypeError for a value a document cannot hold."""
        self._refuse_if_read_only()
        self.writes.append(("create", collection, doc_id, dumps(data)))

    def set(self, collection: str, doc_id: str, data: Doc) -> None:
        """Buffer a replace. Raises TypeError for a value a document cannot hold."""
        self._refuse_if_read_only()
        self.writes.append(("set", collection, doc_id, dumps(data)))

    def delete(self, collection: str, doc_id: str) -> None:
        """Buffer a delete."""
        self._refuse_if_read_only()
        self.writes.append(("delete", collection, doc_id, None))

    def _refuse_if_read_only(self) -> None:
        if self._read_only:
            raise StoreUnavailable("read-only store: nothing written")


def _sql_value(value: Any) -> Any:
    """A field's value as SQLite's ``json_extract`` compares it: true/false as 1/0, a list or an
    object as its JSON text, anything else as itself."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, (list, dict)):
        return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return value


def _sort_key(value: Any) -> tuple[int, Any]:
    """SQLite's order of values: NULL, then numbers, then text (sqlite.org/datatype3.html, "Sort Order")."""
    value = _sql_value(value)
    if value is None:
        return (0, 0)
    if isinstance(value, (int, float)):
        return (1, value)
    return (2, value)


class MemoryStore(WritesThroughTransactions):
    """Document store over a ``MemoryDatabase`` (a new empty one unless given).

    Args:
        database: the documents; share one between stores to share documents.
        deadline_seconds: how long a transaction waits for the writer lock, in seconds.
        read_only: every write raises StoreUnavailable and nothing is written (reads still work).
        before_commit: test seam, as ``SqliteStore``'s: called with the attempt number (1-based) after
            the transaction function ran and before its writes are applied; raising TransactionConflict
            there discards the attempt and re-runs the function.
    """

    def __init__(self, database: MemoryDatabase | None = None, *, deadline_seconds: float = 0.5,
                 read_only: bool = False, before_commit: Callable[[int], None] | None = None):
        self.database = database if database is not None else MemoryDatabase()
        self.deadline_seconds = deadline_seconds
        self.read_only = read_only
        self._before_commit = before_commit

    @classmethod
    def from_url(cls, url: str, **kwargs: Any) -> "MemoryStore":
        """A store on this process's database named by ``memory://NAME``. Raises ValueError for a malformed URL."""
        return cls(database_named(name_from_url(url)), **kwargs)

    def get(self, collection: str, doc_id: str) -> Doc | None:
        """Read one committed document, or None."""
        text = self.database.read(collection, doc_id)
        return loads(text) if text is not None else None

    def get_all(self, refs: Sequence[tuple[str, str]]) -> list[Doc | None]:
        """Read several documents at one moment; None where absent."""
        return [loads(text) if text is not None else None for text in self.database.read_all(list(refs))]

    def query(self, collection: str, where: dict[str, Any] | None = None,
              order_by: str | None = None, descending: bool = False,
              limit: int | None = None) -> list[Doc]:
        """Equality filters on top-level fields (None matches a missing field too, as in SQLite);
        optional order and limit. Raises ValueError for a field name that is not plain."""
        wanted = {field_name(name): _sql_value(value) for name, value in (where or {}).items()}
        docs = [loads(text) for _, text in self.database.scan(collection)]
        docs = [doc for doc in docs if all(_sql_value(doc.get(name)) == value for name, value in wanted.items())]
        if order_by:
            key = field_name(order_by)
            docs.sort(key=lambda doc: _sort_key(doc.get(key)), reverse=descending)
        return docs if limit is None else docs[:int(limit)]

    def run_transaction(self, fn: Callable[[Any], T], *, max_attempts: int = 5, durable: bool = True) -> T:
        """Run ``fn(tx)`` alone and apply its writes all or none; re-run it on TransactionConflict.
        ``durable`` has no meaning in memory.

        Raises:
            RecordAlreadyExists: a buffered create hit an existing id; nothing written.
            TransactionConflict: still conflicting after ``max_attempts``.
            StoreUnavailable: a write on a read-only store, or the writer lock not had within the deadline.
        """
        if not self.database.writer.acquire(timeout=self.deadline_seconds):
            raise StoreUnavailable("store busy: the writer lock was not had within the deadline")
        try:
            for attempt in range(1, max_attempts + 1):
                tx = _MemoryTransaction(self.database, read_only=self.read_only)
                result = fn(tx)
                staged = self.database.stage(tx.writes)
                if self._before_commit is not None:
                    try:
                        self._before_commit(attempt)
                    except TransactionConflict:
                        if attempt == max_attempts:
                            raise
                        continue
                self.database.apply(staged)
                return result
            raise TransactionConflict("transaction did not commit")  # pragma: no cover
        finally:
            self.database.writer.release()
