"""The short conversation state of one (chat, sender): the last resolved search and what its answer
listed (docs/design.md §7).

``Conversation``: the last ask (an ``EventsSearch`` or a ``PlacesSearch`` with every condition the
search ran with: township, dates, topic, diet) and the items its reply listed, in the order shown.
``load_conversation`` / ``save_conversation`` / ``clear_conversation`` keep it in the store behind
the store port (schema: ``shared.conversation_store``), 30 minutes from the last turn; a reader
checks the expiry with the turn's own clock (``ctx.now``), since Firestore's TTL deletes late.

Per (chat, sender): in a group or room the chat is the group or room (``ctx.chat_id``), so two members
never share a state, and one member's one-to-one state is not the group's. What is stored is only what
was said: a diet filled by the consented memory is never stored (the memory fills it again itself,
and never in a group: docs/design.md §6). No message text.

Encoding of ``last_ask`` (the boundary form of the store)::

    {"kind": "events", "area": "員林市" | null, "date": "<DateSpec encoding>" | null, "keyword": "市集" | null}
    {"kind": "places", "area": "員林市" | null, "diet": "vegan" | null}

(the DateSpec encoding: ``shared.turn.datespec``).

The last location the sender shared in the chat (a LINE location message) is kept beside it,
30 minutes from when it was shared, in its own document (``shared.conversation_store.doc_id``, ``DocKind.LOCATION``):
``save_location`` / ``load_location``. It is personal data: never logged, rounded to about 11 m, found
and deleted by a forget and listed by the export like the state.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime
from enum import StrEnum
from typing import Any

from shared import conversation_store as schema
from shared.clock import from_iso, require_aware
from shared.context import EventContext
from shared.geo import Point, checked_point
from shared.logs import log
from shared.store import TTL_FIELD, StoreError
from shared.turn.ask import EventsSearch, PlacesSearch
from shared.turn.datespec import DateSpec

__all__ = ["Conversation", "ItemKind", "ListedItem", "SharedLocation", "clear_conversation", "decode_ask",
           "encode_ask", "load_conversation", "load_location", "save_conversation", "save_location",
           "touch_conversation"]


class ItemKind(StrEnum):
    """What a listed item is: an event of the events snapshot, or a shop of the places catalog."""

    EVENT = "event"
    PLACE = "place"


@dataclass(frozen=True)
class ListedItem:
    """One item a reply listed: its kind and its id in the snapshot or catalog (``event["id"]``,
    ``place["id"]``)."""

    kind: ItemKind
    id: str


@dataclass(frozen=True)
class Conversation:
    """The state kept between two turns of one (chat, sender).

    Attributes:
        last_ask: the last search, every condition resolved (township full name or None for every
            township, a DateSpec, a topic keyword, a canonical diet said in the chat), or None.
        items: what the last answer listed, in the order shown (the first is 第一個).
        updated_at: when it was saved (aware UTC); it expires ``schema.TTL`` later.
    """

    last_ask: EventsSearch | PlacesSearch | None
    items: tuple[ListedItem, ...]
    updated_at: datetime


def encode_ask(search: EventsSearch | PlacesSearch | None) -> dict[str, Any] | None:
    """``search`` in the stored encoding (module docstring), or None."""
    if isinstance(search, EventsSearch):
        return {"kind": "events", "area": search.area, "date": search.date.encode() if search.date else None,
                "keyword": search.keyword}
    if isinstance(search, PlacesSearch):
        return {"kind": "places", "area": search.area, "diet": search.diet}
    return None


def decode_ask(value: Any) -> EventsSearch | PlacesSearch | None:
    """The stored encoding back to the ask; None for none.

    Raises:
        ValueError: not the encoding (an unknown kind, a field of the wrong type, an unreadable date).
    """
    if value is None:
        return None
    if not isinstance(value, dict):
        raise ValueError("last_ask is not an object")
    fields = {name: value.get(name) for name in ("area", "date", "keyword", "diet")}
    if any(item is not None and not isinstance(item, str) for item in fields.values()):
        raise ValueError("last_ask field is not text")
    if value.get("kind") == "events":
        return EventsSearch(fields["area"], DateSpec.parse(fields["date"]) if fields["date"] else None,
                            fields["keyword"])
    if value.get("kind") == "places":
        return PlacesSearch(fields["area"], fields["diet"])
    raise ValueError("last_ask has an unknown kind")


def _decode_items(value: Any) -> tuple[ListedItem, ...]:
    if not isinstance(value, list):
        raise ValueError("items is not a list")
    items = []
    for item in value:
        if not isinstance(item, dict) or not isinstance(item.get("id"), str) or not isinstance(item.get("kind"), str):
            raise ValueError("an item without a kind or an id")
        items.append(ListedItem(ItemKind(item["kind"]), item["id"]))
    return tuple(items)


def _doc_id(ctx: EventContext) -> str | None:
    """The state's document id for this event, or None (no actor, or no signing key to hash with)."""
    return schema.doc_id(schema.DocKind.CONVERSATION, ctx)


def _decoded(doc: dict[str, Any], now: datetime) -> Conversation | None:
    """The document as a Conversation, or None when it has expired at ``now``.

    Raises: ValueError, KeyError, TypeError: not a conversation document.
    """
    expires = doc[TTL_FIELD]
    if isinstance(expires, str):
        expires = from_iso(expires)
    if not isinstance(expires, datetime) or now >= expires:
        return None
    return Conversation(decode_ask(doc.get("last_ask")), _decode_items(doc.get("items") or []),
                        from_iso(doc["updated_at"]))


def load_conversation(ctx: EventContext) -> Conversation | None:
    """The state of this event's (chat, sender), or None.

    None when there is none, when it expired by ``ctx.now`` (30 minutes after its last save), when
    it cannot be read (a store error or an unreadable document, logged as a warning: the message is
    then read alone), and without an actor or ``LOCAL_SIGNING_KEY`` (nothing to key the state by).
    """
    doc_id = _doc_id(ctx)
    if doc_id is None:
        return None
    try:
        doc = schema.read(ctx.store, doc_id)
        return _decoded(doc, require_aware(ctx.now)) if doc is not None else None
    except StoreError as exc:
        log("WARNING", "conversation state unavailable", error=exc.__class__.__name__)
    except (ValueError, KeyError, TypeError) as exc:
        log("WARNING", "conversation state unreadable", error=exc.__class__.__name__)
    return None


def save_conversation(ctx: EventContext, conversation: Conversation) -> None:
    """Store ``conversation`` for this event's (chat, sender), kept 30 minutes from
    ``conversation.updated_at``. Best-effort: a store error is logged and the turn still answers;
    nothing without an actor or ``LOCAL_SIGNING_KEY``. The caller leaves out a diet the consented
    memory filled (module docstring)."""
    doc_id = _doc_id(ctx)
    user_hash = ctx.user_hash
    if doc_id is None or user_hash is None:
        return
    doc = schema.document(
        doc_id=doc_id, tenant_id=ctx.settings.tenant_id, user_hash=user_hash, shared_chat=ctx.shared_chat,
        last_ask=encode_ask(conversation.last_ask),
        items=[{"kind": item.kind.value, "id": item.id} for item in conversation.items],
        updated_at=require_aware(conversation.updated_at, "updated_at"))
    try:
        schema.write(ctx.store, doc_id, doc)
    except StoreError as exc:
        log("WARNING", "conversation state not saved", error=exc.__class__.__name__)


def touch_conversation(ctx: EventContext, conversation: Conversation) -> None:
    """Keep ``conversation`` 30 minutes from this turn (``ctx.now``): for a turn that used the state
    without a new search (an item asked about by its position). Best-effort, as ``save_conversation``."""
    save_conversation(ctx, replace(conversation, updated_at=ctx.now))


def clear_conversation(ctx: EventContext) -> None:
    """Delete this event's (chat, sender) state. Best-effort, as ``save_conversation``."""
    schema.delete_quietly(ctx.store, _doc_id(ctx), "conversation state")


@dataclass(frozen=True)
class SharedLocation:
    """The last location the sender shared in this chat.

    Attributes:
        point: WGS 84 degrees, rounded as stored (``schema.LOCATION_DECIMALS``).
        shared_at: when it was shared (aware UTC); it is forgotten ``schema.TTL`` later.
    """

    point: Point
    shared_at: datetime


def _location_id(ctx: EventContext) -> str | None:
    return schema.doc_id(schema.DocKind.LOCATION, ctx)


def save_location(ctx: EventContext, point: Point) -> None:
    """Keep ``point`` as this (chat, sender)'s shared location, 30 minutes from ``ctx.now``.
    Best-effort, as ``save_conversation`` (a store error is logged without the point); nothing
    without an actor or ``LOCAL_SIGNING_KEY``."""
    doc_id = _location_id(ctx)
    user_hash = ctx.user_hash
    if doc_id is None or user_hash is None:
        return
    doc = schema.location_document(doc_id=doc_id, tenant_id=ctx.settings.tenant_id, user_hash=user_hash,
                                   shared_chat=ctx.shared_chat, lat=point.lat, lng=point.lng,
                                   shared_at=require_aware(ctx.now, "now"))
    try:
        schema.write(ctx.store, doc_id, doc)
    except StoreError as exc:
        log("WARNING", "shared location not kept", error=exc.__class__.__name__)


def _decoded_location(doc: dict[str, Any], now: datetime) -> SharedLocation | None:
    """The document as a SharedLocation, or None when expired at ``now``. Raises ValueError,
    KeyError, TypeError: not a location document."""
    expires = doc[TTL_FIELD]
    if isinstance(expires, str):
        expires = from_iso(expires)
    if not isinstance(expires, datetime) or now >= expires:
        return None
    location = doc["location"]
    point = checked_point(location["lat"], location["lng"])
    if point is None:
        raise ValueError("location is not two degrees in range")
    return SharedLocation(point, from_iso(doc["updated_at"]))


def load_location(ctx: EventContext) -> SharedLocation | None:
    """The location this (chat, sender) shared in the last 30 minutes (by ``ctx.now``), or None (none,
    expired, unreadable or a store error: logged without the point; no actor or signing key)."""
    doc_id = _location_id(ctx)
    if doc_id is None:
        return None
    try:
        doc = schema.read(ctx.store, doc_id)
        return _decoded_location(doc, require_aware(ctx.now)) if doc is not None else None
    except StoreError as exc:
        log("WARNING", "shared location unavailable", error=exc.__class__.__name__)
    except (ValueError, KeyError, TypeError) as exc:
        log("WARNING", "shared location unreadable", error=exc.__class__.__name__)
    return None
