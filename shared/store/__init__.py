"""The document store port (Firestore's model) and its errors. Adapters live in submodules."""
from shared.store.port import (  # noqa: F401
    TTL_FIELD,
    DocumentStore,
    RecordAlreadyExists,
    StoreError,
    StoreTimeout,
    StoreUnavailable,
    Transaction,
    TransactionConflict,
    expire_at,
)
