"""Where the short conversation state is stored: collection ``conversations``, one document per
(tenant, chat, sender), kept 30 minutes from the last turn (docs/design.md §7).

The typed state and its reading are the turn's (``shared.turn.conversation``); this module holds only
the storage schema, so that the memory (a forget) and the operator's export (``make user-data``),
which sit below the turn, can find and clear an account's documents too.

Document id: the keyed hash (``shared.keys.UserHasher``, key ``local-user-hash``) of
``conversation``, the tenant, the chat and the sender, joined by NUL: never a raw LINE id. The chat is
the LINE source's group or room id in a group or room, and ``""`` in a one-to-one chat.

Fields: ``doc_id`` (its own id, so a lookup by account can delete it); ``tenant_id``; ``user_hash``
(the sender's keyed hash, as turn records hold it: what a forget
or an export looks the documents up by); ``shared_chat`` (true in a group or room; the group's id is
not stored); ``last_ask`` (the encoded ask, ``shared.turn.conversation``); ``items`` (``[{"kind",
"id"}]`` in the order shown); ``updated_at`` (UTC ISO) and ``expire_at`` (a Timestamp: the Firestore
TTL field, infra/firestore.tf). No message text.

The last location the sender shared in that chat is a second document of the same collection, id
``doc_id(DocKind.LOCATION, …)`` (the keyed hash of ``location``, tenant, chat and sender), with the same fields
except ``last_ask`` and ``items``, and ``location`` (``{"lat", "lng"}``, WGS 84 degrees rounded to
``LOCATION_DECIMALS`` places, about 11 m): a search never rewrites it, and a forget or an export finds
it as it finds the state (by ``user_hash``). It is kept 30 minutes from when it was shared.

After 留下服務詢問 (or any offer to leave a request) a third document, id ``doc_id(DocKind.AWAITING, …)`` (the keyed hash
of ``awaiting-request``, tenant, chat and sender), marks that the sender's next plain message may be the
request's text: the same fields as the location's but ``awaiting`` (``"request_text"``) instead of
``location``, kept ``AWAITING_WINDOW`` from the prompt. It holds no message text; a forget or an export
finds it by ``user_hash`` as the others.

Firestore deletes an expired document within about a day (Firestore docs, "Manage data retention with
TTL policies"), so a reader also compares ``expire_at`` with its own clock.
"""
from __future__ import annotations

import enum
from datetime import datetime, timedelta
from typing import Any, Protocol, Sequence

from shared.clock import to_iso
from shared.keys import UserHasher
from shared.logs import log
from shared.store import DocumentStore, StoreError, expire_at

COLLECTION = "conversations"
#: How long the state is kept after the last turn (docs/design.md §7).
TTL = timedelta(minutes=30)


class DocKind(enum.Enum):
    """The short-lived documents kept per (tenant, chat, sender) in this collection; the value is the
    purpose label hashed into the document id (so the three never share an id)."""

    CONVERSATION = "conversation"
    LOCATION = "location"
    AWAITING = "awaiting-request"


class EventKeys(Protocol):
    """What an event's document id is derived from (``shared.context.EventContext`` has these)."""

    @property
    def user_hasher(self) -> UserHasher | None: ...
    @property
    def actor(self) -> Any: ...
    @property
    def settings(self) -> Any: ...
    @property
    def chat_id(self) -> str | None: ...
    @property
    def shared_chat(self) -> bool: ...


def doc_id(kind: DocKind, ctx: EventKeys) -> str | None:
    """The document id of ``kind`` for this event's (tenant, chat, sender): 16 hex digits, keyed with
    ``LOCAL_SIGNING_KEY`` (never a raw LINE id); one-to-one chats are keyed without a chat. None when
    there is no actor or no signing key to hash with (nothing is kept then)."""
    if ctx.user_hasher is None or ctx.actor is None:
        return None
    chat_id = ctx.chat_id if ctx.shared_chat else None
    hashed = ctx.user_hasher(f"{kind.value}\x00{ctx.settings.tenant_id}\x00{chat_id or ''}\x00{ctx.actor.user_id}")
    assert hashed is not None  # a non-empty message always hashes
    return hashed


#: Decimal places a shared location is kept with (4: about 11 m; what a nearby answer needs).
LOCATION_DECIMALS = 4


#: How long after the prompt to leave a request the next plain message is read as its text.
AWAITING_WINDOW = timedelta(minutes=10)
#: The one thing awaited so far: the text of a request for a person (shared.handoff.awaiting).
AWAITING_REQUEST_TEXT = "request_text"


def awaiting_document(*, doc_id: str, tenant_id: str, user_hash: str, shared_chat: bool,
                      asked_at: datetime) -> dict[str, Any]:
    """The stored mark (module docstring); ``asked_at`` aware; it expires ``AWAITING_WINDOW`` later."""
    return {"doc_id": doc_id, "tenant_id": tenant_id, "user_hash": user_hash, "shared_chat": shared_chat,
            "awaiting": AWAITING_REQUEST_TEXT, "updated_at": to_iso(asked_at),
            "expire_at": expire_at(asked_at + AWAITING_WINDOW)}


def location_document(*, doc_id: str, tenant_id: str, user_hash: str, shared_chat: bool, lat: float, lng: float,
                      shared_at: datetime) -> dict[str, Any]:
    """The stored location (module docstring): degrees rounded to LOCATION_DECIMALS; ``shared_at`` aware."""
    return {"doc_id": doc_id, "tenant_id": tenant_id, "user_hash": user_hash, "shared_chat": shared_chat,
            "location": {"lat": round(lat, LOCATION_DECIMALS), "lng": round(lng, LOCATION_DECIMALS)},
            "updated_at": to_iso(shared_at), "expire_at": expire_at(shared_at + TTL)}


def document(*, doc_id: str, tenant_id: str, user_hash: str, shared_chat: bool, last_ask: dict[str, Any] | None,
             items: list[dict[str, str]], updated_at: datetime) -> dict[str, Any]:
    """The stored document (fields in the module docstring); ``updated_at`` aware."""
    return {"doc_id": doc_id, "tenant_id": tenant_id, "user_hash": user_hash, "shared_chat": shared_chat, "last_ask": last_ask,
            "items": items, "updated_at": to_iso(updated_at), "expire_at": expire_at(updated_at + TTL)}


def read(store: DocumentStore, doc_id: str) -> dict[str, Any] | None:
    """The stored document, or None. Raises: StoreError."""
    return store.get(COLLECTION, doc_id)


def write(store: DocumentStore, doc_id: str, doc: dict[str, Any]) -> None:
    """Replace the document. Raises: StoreError."""
    store.set(COLLECTION, doc_id, doc)


def delete(store: DocumentStore, doc_id: str) -> None:
    """Delete the document if present (one small transaction: the port deletes only there).
    Raises: StoreError."""
    store.run_transaction(lambda tx: tx.delete(COLLECTION, doc_id))


def delete_quietly(store: DocumentStore, doc_id: str | None, what: str) -> None:
    """``delete``, best-effort, for the short-lived documents whose loss costs a resident nothing but a
    follow-up read alone (the TTL removes them anyway): a store error is logged as ``"{what} not
    cleared"``, never raised; ``doc_id`` None (no keyed id could be made) deletes nothing."""
    if doc_id is None:
        return
    try:
        delete(store, doc_id)
    except StoreError as exc:
        log("WARNING", f"{what} not cleared", error=exc.__class__.__name__)


def of_user(store: DocumentStore, tenant_id: str, user_hashes: Sequence[str]) -> list[tuple[str, dict[str, Any]]]:
    """Every conversation document of one account, in every chat, as ``(doc_id, document)``.

    Args:
        user_hashes: every hash the account's documents may carry (``UserHasher.all_hashes``).
    Raises:
        StoreError: the store could not be read.
    """
    found: dict[str, dict[str, Any]] = {}
    for user_hash in dict.fromkeys(user_hashes):
        for doc in store.query(COLLECTION, where={"tenant_id": tenant_id, "user_hash": user_hash}):
            if doc.get("tenant_id") == tenant_id and doc.get("doc_id"):
                found[doc["doc_id"]] = doc
    return list(found.items())


def clear_user(store: DocumentStore, tenant_id: str, user_hashes: Sequence[str]) -> int:
    """Delete every conversation document of one account (a forget: docs/design.md §6). Idempotent.

    Returns:
        How many documents were deleted.
    Raises:
        StoreError: some may remain; call again.
    """
    docs = of_user(store, tenant_id, user_hashes)
    for doc_id, _ in docs:
        delete(store, doc_id)
    return len(docs)
