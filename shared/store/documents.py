"""How the embedded adapters (SQLite, in-memory) hold a document: compact JSON text.

A document goes in as JSON text and comes out as a fresh object, so both adapters refuse the same
values (anything JSON cannot hold, except the aware ``expire_at`` instant) and a caller never holds
an object the store also holds. Field names in queries are checked the same way by both, and both
write one document through one transaction (``WritesThroughTransactions``).
"""
from __future__ import annotations

import json
from datetime import datetime, timezone
from typing import Any, Callable, TypeVar

from shared.store.port import TTL_FIELD, Doc

T = TypeVar("T")


def dumps(data: Doc) -> str:
    """JSON text of a document; an aware datetime (the ``expire_at`` value) becomes ISO-8601 UTC text.

    Raises:
        TypeError: a value JSON cannot hold (a naive datetime, a set, an object).
    """
    return json.dumps(data, ensure_ascii=False, sort_keys=True, separators=(",", ":"), default=_encode)


def _encode(value: Any) -> str:
    if isinstance(value, datetime) and value.utcoffset() is not None:
        return value.astimezone(timezone.utc).isoformat()
    raise TypeError(f"cannot store a {type(value).__name__} in a document")


def loads(text: str) -> Doc:
    """A stored document; ``expire_at`` comes back as an aware UTC datetime, as Firestore returns it."""
    doc = json.loads(text)
    if isinstance(doc.get(TTL_FIELD), str):
        doc[TTL_FIELD] = datetime.fromisoformat(doc[TTL_FIELD]).astimezone(timezone.utc)
    return doc


def field_name(name: str) -> str:
    """``name`` when it is a plain top-level field name (letters, digits, underscores).

    Raises:
        ValueError: anything else (a path, an operator, an empty name).
    """
    if not name.replace("_", "").isalnum():
        raise ValueError(f"bad field name {name!r}")
    return name


class WritesThroughTransactions:
    """``create`` and ``set`` of an embedded adapter, each one ``run_transaction`` of one write (the
    subclass provides ``run_transaction``)."""

    def run_transaction(self, fn: Callable[[Any], T], *, max_attempts: int = 5, durable: bool = True) -> T:
        raise NotImplementedError

    def create(self, collection: str, doc_id: str, data: Doc) -> None:
        """Create-if-absent. Raises RecordAlreadyExists or StoreUnavailable."""
        self.run_transaction(lambda tx: tx.create(collection, doc_id, data))

    def set(self, collection: str, doc_id: str, data: Doc) -> None:
        """Replace one document. Raises StoreUnavailable."""
        self.run_transaction(lambda tx: tx.set(collection, doc_id, data))

    def increment(self, collection: str, doc_id: str, amounts: dict[str, int], base: Doc) -> None:
        """See ``DocumentStore.increment``: one transaction (read, add, write). Raises StoreUnavailable."""

        def txn(tx: Any) -> None:
            doc = {**(tx.get(collection, doc_id) or {}), **base}
            for name, amount in amounts.items():
                doc[name] = int(doc.get(name) or 0) + int(amount)
            tx.set(collection, doc_id, doc)

        self.run_transaction(txn)
