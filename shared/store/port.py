"""Document store port, shaped after Firestore so that its adapter drops in.

Documents are JSON objects in named collections, addressed by ``(collection, doc_id)``.
A transaction function reads before it writes and may be re-run by the store, so it must
have no side effects (no LINE, model or queue calls): docs/design.md §4, §6; Firestore docs,
"Transactions and batched writes".
"""
from __future__ import annotations

from datetime import datetime, timezone
from typing import Any, Callable, Protocol, Sequence, TypeVar

T = TypeVar("T")
Doc = dict[str, Any]

#: The one field that holds an instant rather than ISO text: a TTL policy deletes the document
#: after it (Firestore TTL needs a Timestamp and ignores strings: Firestore docs, "Manage data
#: retention with TTL policies"; infra/firestore.tf). Every adapter stores an aware datetime
#: here and reads it back as an aware UTC datetime.
TTL_FIELD = "expire_at"


def expire_at(instant: datetime) -> datetime:
    """The ``expire_at`` value for a document kept until ``instant`` (aware; returned in UTC).

    Raises:
        ValueError: ``instant`` is naive.
    """
    if instant.tzinfo is None or instant.utcoffset() is None:
        raise ValueError("expire_at must be timezone-aware")
    return instant.astimezone(timezone.utc)


class StoreError(Exception):
    """Base of every store error. ``retryable`` says whether trying again may help."""

    retryable = False


class RecordAlreadyExists(StoreError):
    """``create`` found a document at that id (Firestore AlreadyExists, SQLite IntegrityError)."""


class TransactionConflict(StoreError):
    """A transaction lost a race and gave up after its attempts; retryable."""

    retryable = True


class StoreUnavailable(StoreError):
    """The store could not be reached and nothing was written; retryable."""

    retryable = True


class StoreTimeout(StoreUnavailable):
    """The deadline passed after a write was sent: the outcome is unknown (DEADLINE_EXCEEDED)."""


class Transaction(Protocol):
    """Reads and buffered writes inside one ``run_transaction`` attempt.

    Every ``get`` must come before the first write, as in Firestore.
    """

    def get(self, collection: str, doc_id: str) -> Doc | None:
        """Read one document, or None. Raises RuntimeError after a write in this attempt."""

    def get_all(self, refs: Sequence[tuple[str, str]]) -> list[Doc | None]:
        """Read several documents, each ``(collection, id)``, in one call (Firestore: one
        BatchGetDocuments in the transaction, where ``get`` after ``get`` is one round trip each).

        Returns:
            One document or None per ref, in the order of ``refs``.
        Raises:
            RuntimeError: after a write in this attempt.
        """

    def create(self, collection: str, doc_id: str, data: Doc) -> None:
        """Write a new document; the commit raises RecordAlreadyExists if it exists."""

    def set(self, collection: str, doc_id: str, data: Doc) -> None:
        """Write (replace) a document."""

    def delete(self, collection: str, doc_id: str) -> None:
        """Delete a document if present."""


class DocumentStore(Protocol):
    """A small Firestore-shaped store. Every call has a deadline in seconds.

    Raises (every method): StoreUnavailable (nothing written, retryable) or StoreTimeout
    (a write's outcome is unknown).
    """

    def get(self, collection: str, doc_id: str) -> Doc | None:
        """Read one document by id; None when absent."""

    def get_all(self, refs: Sequence[tuple[str, str]]) -> list[Doc | None]:
        """Read several documents, each ``(collection, id)``, in one call and one consistent read.

        Returns:
            One document or None (absent) per ref, in the order of ``refs``.
        """

    def create(self, collection: str, doc_id: str, data: Doc) -> None:
        """Create-if-absent. Raises RecordAlreadyExists when the id is taken."""

    def set(self, collection: str, doc_id: str, data: Doc) -> None:
        """Write (replace) one document."""

    def query(self, collection: str, where: dict[str, Any] | None = None,
              order_by: str | None = None, descending: bool = False,
              limit: int | None = None) -> list[Doc]:
        """Documents whose top-level fields equal every value in ``where``."""

    def increment(self, collection: str, doc_id: str, amounts: dict[str, int], base: Doc) -> None:
        """Add each of ``amounts`` to its integer field (a missing field counts as 0), writing the
        ``base`` fields too and creating the document when absent: one write, no read by the caller
        (Firestore's ``Increment`` transform: one Commit). Never retried (a repeat would count twice).

        Raises:
            StoreUnavailable: nothing written. StoreTimeout: sent, outcome unknown (it may have counted).
        """

    def run_transaction(self, fn: Callable[[Transaction], T], *, max_attempts: int = 5, durable: bool = True) -> T:
        """Run ``fn`` atomically; it may be called more than once.

        ``durable=False`` lets an adapter return before the commit is safe from a power loss or an
        OS crash (never from a process crash), provided a later durable commit makes it safe as well:
        SQLite's ``synchronous=NORMAL`` for that one commit. Only for a write whose loss leaves a state
        the code already treats as an honest unknown (the finish of a reply that carries nothing,
        ``shared.inbox.mark_done``). Firestore commits are always durable and ignore it.

        Raises:
            TransactionConflict: still contended after ``max_attempts``.
            RecordAlreadyExists: a buffered ``create`` hit an existing document.
        """
