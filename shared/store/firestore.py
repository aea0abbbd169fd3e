"""Firestore adapter of the document store (google-cloud-firestore, native mode).

Only ``shared.wiring`` imports this module, so ``google.cloud.firestore`` loads only when
``LOCAL_STORE_URL`` is ``firestore://PROJECT[/DATABASE]``; the client (and its gRPC channel) is
built on the first call, never at import (docs/design.md §9). With ``FIRESTORE_EMULATOR_HOST`` set, the
library itself talks to that emulator with anonymous credentials.

Document ids. Firestore forbids ``/`` in an id, and the ids ``.``, ``..`` and ``__…__``; callers use
ids such as ``tenant:eventid`` (Firestore docs, "Usage and limits" › document ids). ``doc_id_for``
maps a store id one-to-one onto a legal Firestore id: ``%`` → ``%25`` and ``/`` → ``%2F``; then a
whole id of ``.``/``..`` or of the ``__…__`` shape has its first character escaped (``%2E``,
``%5F``); an id whose escaped form is over 1,500 bytes becomes ``%H`` + its SHA-256 hex. Plain ids
(``tenant:eventid``) are stored unchanged, so they stay readable in the console.

Deadlines. Every RPC carries ``timeout=deadline_seconds`` (a deadline for the whole call,
retries included: google-api-core ``TimeToDeadlineTimeout``). Reads and ``set`` (a replace, so
idempotent) retry UNAVAILABLE / INTERNAL / RESOURCE_EXHAUSTED with backoff inside that deadline;
``create`` and a transaction's Commit are never retried, because a retry after a lost answer
cannot tell "mine" from "someone else's". The library sends BeginTransaction, Commit and
Rollback with its 60 s GAPIC defaults, so ``_DeadlineTransaction`` re-sends them with the
deadline. That is a private seam (the public transaction API has no timeout for those three
RPCs), written for google-cloud-firestore 2.34.1 and pinned to it by
``test_firestore_store_private_transaction_seam_is_pinned``. ``expire_at`` (``TTL_FIELD``) is
written as an aware datetime, which the library stores as a Timestamp, the only type TTL reads.
A transaction therefore takes at most ``max_attempts`` × (its RPCs × ``deadline_seconds``).

Errors (raised ``from`` the Google error):
    AlreadyExists → RecordAlreadyExists; Aborted after ``max_attempts`` (or on a read) →
    TransactionConflict; any other failure before a write was sent → StoreUnavailable; after
    a write (``create``, ``set`` or a Commit) was sent, anything but a definite refusal →
    StoreTimeout, the outcome is unknown (docs/design.md §4; Firestore docs, error codes: DEADLINE_EXCEEDED
    "may be returned even if the operation has completed successfully"). Definite refusals
    (INVALID_ARGUMENT, e.g. an array inside an array; FAILED_PRECONDITION, e.g. a missing
    composite index; PERMISSION_DENIED; UNAUTHENTICATED; NOT_FOUND) → StoreError, not retryable.

Differences from SQLite that callers may meet: a ``query`` ordered by a field leaves out the
documents that lack that field, and equality on one field with ``order_by`` on another needs a
composite index in production (the emulator needs none); arrays cannot hold arrays; integers are
64-bit; ``True`` matches only booleans (SQLite stores it as 1).
"""
from __future__ import annotations

import hashlib
import re
import threading
from typing import Any, Callable, Sequence, TypeVar

from google.api_core import exceptions as gexc
from google.api_core import retry as retries
from google.cloud import firestore
from google.cloud.firestore_v1.transaction import Transaction as _LibraryTransaction

from shared.store.port import (
    Doc,
    RecordAlreadyExists,
    StoreError,
    StoreTimeout,
    StoreUnavailable,
    TransactionConflict,
)

T = TypeVar("T")

MAX_DOC_ID_BYTES = 1500  # Firestore limit on a document id, in UTF-8 bytes
_SIMPLE_FIELD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_TRANSIENT = (gexc.ServiceUnavailable, gexc.InternalServerError, gexc.ResourceExhausted)
_REFUSED = (gexc.InvalidArgument, gexc.FailedPrecondition, gexc.PermissionDenied,
            gexc.Unauthenticated, gexc.NotFound, gexc.OutOfRange)


def parse_url(url: str) -> tuple[str, str]:
    """``firestore://PROJECT`` or ``firestore://PROJECT/DATABASE`` → ``(project, database)``.

    Raises:
        ValueError: not a Firestore URL with a project.
    """
    prefix = "firestore://"
    rest = url[len(prefix):] if url.startswith(prefix) else ""
    project, _, database = rest.partition("/")
    if not project or any(c.isspace() or c in "/?#" for c in project + database):
        raise ValueError("expected firestore://PROJECT or firestore://PROJECT/DATABASE")
    return project, database or "(default)"


def doc_id_for(store_id: str) -> str:
    """The legal Firestore document id for a store id; one-to-one (see the module docstring).

    Raises:
        ValueError: an empty id (Firestore has no empty document id).
    """
    if not store_id:
        raise ValueError("document id must not be empty")
    escaped = store_id.replace("%", "%25").replace("/", "%2F")
    if escaped in (".", "..") or (len(escaped) >= 4 and escaped.startswith("__") and escaped.endswith("__")):
        escaped = f"%{ord(escaped[0]):02X}{escaped[1:]}"
    if len(escaped.encode("utf-8")) > MAX_DOC_ID_BYTES:
        escaped = "%H" + hashlib.sha256(store_id.encode("utf-8")).hexdigest()
    return escaped


def _translate(exc: Exception, *, write_sent: bool) -> StoreError:
    """The store error for a Google API error; ``write_sent`` = the failing RPC carried a write."""
    name = exc.__class__.__name__
    if isinstance(exc, gexc.AlreadyExists):
        return RecordAlreadyExists(f"document exists ({name})")
    if isinstance(exc, gexc.Aborted):
        return TransactionConflict(f"transaction aborted ({name})")
    if isinstance(exc, _REFUSED):
        return StoreError(f"request refused ({name})")
    if write_sent:
        return StoreTimeout(f"write outcome unknown ({name})")
    return StoreUnavailable(f"store unavailable, nothing written ({name})")


class _DeadlineTransaction(_LibraryTransaction):
    """The library's Transaction with the store's timeout and retry on BeginTransaction, Commit
    and Rollback (the library sends those with the 60 s GAPIC defaults; pinned
    google-cloud-firestore 2.34.1, whose method bodies these follow).

    ``commit_sent`` is True from the moment this attempt's Commit is sent until the next Begin.
    """

    def __init__(self, client: Any, *, max_attempts: int, timeout_seconds: float,
                 begin_retry: retries.Retry):
        super().__init__(client, max_attempts=max_attempts)
        self.timeout_seconds = timeout_seconds
        self._begin_retry = begin_retry
        self.commit_sent = False

    def _begin(self, retry_id: bytes | None = None) -> None:
        self.commit_sent = False
        if self.in_progress:
            raise ValueError("transaction already begun")
        response = self._client._firestore_api.begin_transaction(
            request={"database": self._client._database_string,
                     "options": self._options_protobuf(retry_id)},
            metadata=self._client._rpc_metadata,
            retry=self._begin_retry, timeout=self.timeout_seconds,
        )
        self._id = response.transaction

    def _commit(self) -> list:
        if not self.in_progress:
            raise ValueError("no transaction in progress")
        self.commit_sent = True
        response = self._client._firestore_api.commit(
            request={"database": self._client._database_string,
                     "writes": self._write_pbs, "transaction": self._id},
            metadata=self._client._rpc_metadata,
            retry=None, timeout=self.timeout_seconds,
        )
        self._clean_up()
        self.write_results = list(response.write_results)
        self.commit_time = response.commit_time
        return self.write_results

    def _rollback(self) -> None:
        """Best effort: the server drops an abandoned transaction anyway; the caller's error wins."""
        if not self.in_progress:
            return
        try:
            self._client._firestore_api.rollback(
                request={"database": self._client._database_string, "transaction": self._id},
                metadata=self._client._rpc_metadata,
                retry=None, timeout=self.timeout_seconds,
            )
        except gexc.GoogleAPIError:
            pass
        finally:
            self._clean_up()


class _FirestoreTransaction:
    """One attempt's view for the caller's function: reads go to Firestore inside the
    transaction, writes are buffered by the library and sent with the Commit."""

    def __init__(self, store: "FirestoreStore", tx: _DeadlineTransaction):
        self._store = store
        self._tx = tx
        self._wrote = False

    def get(self, collection: str, doc_id: str) -> Doc | None:
        """Read inside the transaction. Raises RuntimeError after a write, StoreUnavailable,
        TransactionConflict (the read was aborted by contention)."""
        if self._wrote:
            raise RuntimeError("transaction reads must come before writes (Firestore rule)")
        ref = self._store._ref(collection, doc_id)
        try:
            snap = next(iter(self._tx.get(ref, retry=self._store._read_retry,
                                          timeout=self._store.deadline_seconds)), None)
        except gexc.GoogleAPIError as exc:
            raise _translate(exc, write_sent=False) from exc
        return snap.to_dict() if snap is not None and snap.exists else None

    def get_all(self, refs: Sequence[tuple[str, str]]) -> list[Doc | None]:
        """Read several documents inside the transaction in one ``BatchGetDocuments``; None where
        absent. Raises RuntimeError after a write, StoreUnavailable, TransactionConflict."""
        if self._wrote:
            raise RuntimeError("transaction reads must come before writes (Firestore rule)")
        if not refs:
            return []
        docs = [self._store._ref(collection, doc_id) for collection, doc_id in refs]
        try:
            snaps = {snap.reference.path: snap for snap in
                     self._tx.get_all(docs, retry=self._store._read_retry, timeout=self._store.deadline_seconds)}
        except gexc.GoogleAPIError as exc:
            raise _translate(exc, write_sent=False) from exc
        return [snap.to_dict() if (snap := snaps.get(ref.path)) is not None and snap.exists else None
                for ref in docs]

    def create(self, collection: str, doc_id: str, data: Doc) -> None:
        """Buffer a create-if-absent; the Commit fails with RecordAlreadyExists if it exists."""
        self._write()
        self._tx.create(self._store._ref(collection, doc_id), dict(data))

    def set(self, collection: str, doc_id: str, data: Doc) -> None:
        """Buffer a replace."""
        self._write()
        self._tx.set(self._store._ref(collection, doc_id), dict(data))

    def delete(self, collection: str, doc_id: str) -> None:
        """Buffer a delete (no error if absent)."""
        self._write()
        self._tx.delete(self._store._ref(collection, doc_id))

    def _write(self) -> None:
        if self._store.read_only:
            raise StoreUnavailable("read-only store: nothing written")
        self._wrote = True


class FirestoreStore:
    """Document store over one Firestore database (native mode).

    Args:
        project: Google Cloud project id.
        database: Firestore database id.
        deadline_seconds: deadline of every RPC, retries included, in seconds.
        read_only: refuse every write with StoreUnavailable before anything is sent (reconcile's
            lookup, docs/design.md §4), like SQLite's ``mode=ro``.
        client: an injected ``google.cloud.firestore.Client``; built lazily when None.
    """

    def __init__(self, project: str, *, database: str = "(default)", deadline_seconds: float = 0.5,
                 read_only: bool = False, client: Any = None):
        self.project = project
        self.database = database
        self.deadline_seconds = deadline_seconds
        self.read_only = read_only
        self._client = client
        self._lock = threading.Lock()
        self._read_retry = retries.Retry(
            predicate=retries.if_exception_type(*_TRANSIENT), initial=0.05,
            maximum=max(0.05, deadline_seconds / 4), multiplier=2.0, timeout=deadline_seconds)

    @classmethod
    def from_url(cls, url: str, **kwargs: Any) -> "FirestoreStore":
        """Build from ``LOCAL_STORE_URL`` (``firestore://PROJECT[/DATABASE]``). Raises ValueError."""
        project, database = parse_url(url)
        return cls(project, database=database, **kwargs)

    def _db(self) -> Any:
        if self._client is None:
            with self._lock:
                if self._client is None:
                    try:
                        self._client = firestore.Client(project=self.project, database=self.database)
                    except Exception as exc:  # google.auth DefaultCredentialsError and the like
                        raise StoreUnavailable(f"cannot open store: {exc.__class__.__name__}") from exc
        return self._client

    def _collection(self, name: str) -> Any:
        if not name or "/" in name or (name.startswith("__") and name.endswith("__")):
            raise ValueError(f"bad collection name {name!r}")
        return self._db().collection(name)

    def _ref(self, collection: str, doc_id: str) -> Any:
        return self._collection(collection).document(doc_id_for(doc_id))

    def get(self, collection: str, doc_id: str) -> Doc | None:
        """Read one document, or None. Raises StoreUnavailable."""
        ref = self._ref(collection, doc_id)
        try:
            snap = ref.get(retry=self._read_retry, timeout=self.deadline_seconds)
        except gexc.GoogleAPIError as exc:
            raise _translate(exc, write_sent=False) from exc
        return snap.to_dict() if snap.exists else None

    def get_all(self, refs: Sequence[tuple[str, str]]) -> list[Doc | None]:
        """Read several documents in one ``BatchGetDocuments`` call; None where absent. Raises StoreUnavailable."""
        if not refs:
            return []
        docs = [self._ref(collection, doc_id) for collection, doc_id in refs]
        try:
            snaps = {snap.reference.path: snap for snap in
                     self._db().get_all(docs, retry=self._read_retry, timeout=self.deadline_seconds)}
        except gexc.GoogleAPIError as exc:
            raise _translate(exc, write_sent=False) from exc
        out: list[Doc | None] = []
        for ref in docs:
            snap = snaps.get(ref.path)
            out.append(snap.to_dict() if snap is not None and snap.exists else None)
        return out

    def create(self, collection: str, doc_id: str, data: Doc) -> None:
        """Create-if-absent, not retried. Raises RecordAlreadyExists, StoreTimeout (sent, outcome
        unknown) or StoreUnavailable (read-only)."""
        ref = self._ref(collection, doc_id)
        self._refuse_if_read_only()
        try:
            ref.create(dict(data), retry=None, timeout=self.deadline_seconds)
        except gexc.GoogleAPIError as exc:
            raise _translate(exc, write_sent=True) from exc

    def set(self, collection: str, doc_id: str, data: Doc) -> None:
        """Replace one document (retried inside the deadline: a replace is idempotent).
        Raises StoreTimeout (sent, outcome unknown) or StoreUnavailable (read-only)."""
        ref = self._ref(collection, doc_id)
        self._refuse_if_read_only()
        try:
            ref.set(dict(data), retry=self._read_retry, timeout=self.deadline_seconds)
        except gexc.GoogleAPIError as exc:
            raise _translate(exc, write_sent=True) from exc

    def increment(self, collection: str, doc_id: str, amounts: dict[str, int], base: Doc) -> None:
        """See ``DocumentStore.increment``: one ``set(merge=True)`` with an ``Increment`` transform per
        field (one Commit RPC, no read), never retried. Raises StoreTimeout (sent, outcome unknown)
        or StoreUnavailable (read-only)."""
        ref = self._ref(collection, doc_id)
        self._refuse_if_read_only()
        data = {**base, **{_field(name): firestore.Increment(int(amount)) for name, amount in amounts.items()}}
        try:
            ref.set(data, merge=True, retry=None, timeout=self.deadline_seconds)
        except gexc.GoogleAPIError as exc:
            raise _translate(exc, write_sent=True) from exc

    def query(self, collection: str, where: dict[str, Any] | None = None,
              order_by: str | None = None, descending: bool = False,
              limit: int | None = None) -> list[Doc]:
        """Equality filters on top-level fields (``FieldFilter``); optional order and limit.

        Raises:
            StoreUnavailable: nothing read.
            StoreError: refused, e.g. FAILED_PRECONDITION for a missing composite index.
            ValueError: a field name other than ASCII letters, digits and ``_`` (not digit-first).
        """
        q = self._collection(collection)
        for name, value in (where or {}).items():
            q = q.where(filter=firestore.FieldFilter(_field(name), "==", value))
        if order_by:
            q = q.order_by(_field(order_by),
                           direction=firestore.Query.DESCENDING if descending else firestore.Query.ASCENDING)
        if limit is not None:
            q = q.limit(int(limit))
        try:
            snaps = q.get(retry=self._read_retry, timeout=self.deadline_seconds)
        except gexc.GoogleAPIError as exc:
            raise _translate(exc, write_sent=False) from exc
        return [s.to_dict() for s in snaps]

    def run_transaction(self, fn: Callable[[Any], T], *, max_attempts: int = 5, durable: bool = True) -> T:
        """Run ``fn(tx)`` in a Firestore transaction (``firestore.transactional``), which re-runs
        it when the Commit is ABORTED by contention. Every commit is durable: ``durable`` is ignored.

        Raises:
            RecordAlreadyExists: a buffered create hit an existing document; nothing written.
            TransactionConflict: still aborted after ``max_attempts``, or a read was aborted.
            StoreUnavailable: failed before the Commit was sent; nothing written.
            StoreTimeout: the Commit was sent and its outcome is unknown.
        """
        tx = _DeadlineTransaction(self._db(), max_attempts=max_attempts,
                                  timeout_seconds=self.deadline_seconds, begin_retry=self._read_retry)

        @firestore.transactional
        def attempt(transaction: _DeadlineTransaction) -> T:
            return fn(_FirestoreTransaction(self, transaction))

        try:
            return attempt(tx)
        except ValueError as exc:
            if isinstance(exc.__cause__, gexc.Aborted):  # the library's "failed in N attempts"
                raise TransactionConflict(f"transaction aborted {max_attempts} times") from exc
            raise
        except gexc.GoogleAPIError as exc:
            raise _translate(exc, write_sent=tx.commit_sent) from exc

    def _refuse_if_read_only(self) -> None:
        if self.read_only:
            raise StoreUnavailable("read-only store: nothing written")


def _field(name: str) -> str:
    """A top-level field name that Firestore takes unquoted in a field path."""
    if not _SIMPLE_FIELD.fullmatch(name):
        raise ValueError(f"bad field name {name!r}")
    return name
