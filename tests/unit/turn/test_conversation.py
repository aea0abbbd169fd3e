"""The short conversation state (shared.turn.conversation): per (chat, sender), typed, 30 minutes
from the last turn by the turn's own clock, keyed by a hash, without message text (docs/design.md §7)."""
from __future__ import annotations

import time
from dataclasses import replace
from datetime import datetime, timedelta, timezone

import pytest

from shared import conversation_store as schema
from shared.config import Settings
from shared.context import EventContext
from shared.identity import Actor
from shared.store import StoreUnavailable
from shared.store.memory import MemoryStore
from shared.store.sqlite import SqliteStore
from shared.turn.ask import EventsSearch, PlacesSearch
from shared.turn.conversation import (
    Conversation,
    ItemKind,
    ListedItem,
    clear_conversation,
    load_conversation,
    save_conversation,
    touch_conversation,
)
from shared.turn.datespec import Span, Weekday

NOW = datetime(2026, 12, 1, 2, 0, tzinfo=timezone.utc)
ALICE = Actor("test-tenant", "U" + "a" * 32)
BOB = Actor("test-tenant", "U" + "b" * 32)
GROUP = "C" + "1" * 32
SATURDAY = EventsSearch("員林市", Weekday(5, 0), "市集")
ITEMS = (ListedItem(ItemKind.EVENT, "ev-2"), ListedItem(ItemKind.EVENT, "ev-1"))


@pytest.fixture(params=["memory", "sqlite"])
def store(request, tmp_path):
    return MemoryStore() if request.param == "memory" else SqliteStore(str(tmp_path / "local.db"))


def ctx_for(store, actor=ALICE, *, now=NOW, chat: str | None = None, key: str | None = "k") -> EventContext:
    env = {"LOCAL_TENANT_ID": "test-tenant", **({"LOCAL_SIGNING_KEY": key} if key else {})}
    return EventContext(Settings.from_env(env), store, None, now, actor, "01CONV", time.monotonic() + 1.8,
                        shared_chat=chat is not None, chat_id=chat)


def test_conversation_round_trip_keeps_the_typed_ask_and_the_order(store):
    ctx = ctx_for(store)
    save_conversation(ctx, Conversation(SATURDAY, ITEMS, NOW))
    assert load_conversation(ctx) == Conversation(SATURDAY, ITEMS, NOW)
    places = Conversation(PlacesSearch("溪湖鎮", "vegan"), (ListedItem(ItemKind.PLACE, "p-9"),), NOW)
    save_conversation(ctx, places)  # a new search replaces it
    assert load_conversation(ctx) == places


def test_conversation_expires_by_the_turns_clock_not_the_ttl_delete(store):
    save_conversation(ctx_for(store), Conversation(SATURDAY, ITEMS, NOW))
    assert load_conversation(ctx_for(store, now=NOW + timedelta(minutes=29, seconds=59))) is not None
    assert load_conversation(ctx_for(store, now=NOW + timedelta(minutes=30))) is None  # still stored, expired


def test_conversation_document_is_keyed_by_hash_and_holds_no_raw_id(store):
    ctx = ctx_for(store)
    save_conversation(ctx, Conversation(EventsSearch("員林市", Span(NOW.date(), NOW.date() + timedelta(days=1))),
                                        ITEMS, NOW))
    [(doc_id, doc)] = schema.of_user(store, "test-tenant", [ctx.user_hash])
    assert ALICE.user_id not in doc_id and ALICE.user_id not in str(doc)
    assert doc["last_ask"] == {"kind": "events", "area": "員林市", "date": "2026-12-01/2026-12-02", "keyword": None}
    assert doc["items"] == [{"kind": "event", "id": "ev-2"}, {"kind": "event", "id": "ev-1"}]
    assert doc["expire_at"] == NOW + schema.TTL and doc["updated_at"] == "2026-12-01T02:00:00+00:00"


def test_conversation_is_per_chat_and_sender(store):
    save_conversation(ctx_for(store, chat=GROUP), Conversation(SATURDAY, ITEMS, NOW))
    assert load_conversation(ctx_for(store, chat=GROUP)) is not None
    assert load_conversation(ctx_for(store, BOB, chat=GROUP)) is None  # another member of the group
    assert load_conversation(ctx_for(store)) is None  # the same sender one-to-one
    assert load_conversation(ctx_for(store, chat="C" + "2" * 32)) is None  # another group


def test_conversation_clear_and_clear_user_remove_every_chat(store):
    for chat in (None, GROUP):
        save_conversation(ctx_for(store, chat=chat), Conversation(SATURDAY, ITEMS, NOW))
    save_conversation(ctx_for(store, BOB), Conversation(SATURDAY, ITEMS, NOW))
    clear_conversation(ctx_for(store))
    assert load_conversation(ctx_for(store)) is None and load_conversation(ctx_for(store, chat=GROUP)) is not None
    hashes = [ctx_for(store).user_hash]
    assert schema.clear_user(store, "test-tenant", hashes) == 1
    assert schema.of_user(store, "test-tenant", hashes) == []
    assert load_conversation(ctx_for(store, BOB)) is not None  # another account's is kept


def test_conversation_without_a_signing_key_or_actor_keeps_nothing(store):
    save_conversation(ctx_for(store, key=None), Conversation(SATURDAY, ITEMS, NOW))
    assert store.query(schema.COLLECTION) == []
    assert load_conversation(replace(ctx_for(store), actor=None)) is None


class _Down(MemoryStore):
    def get(self, collection, doc_id):
        raise StoreUnavailable("down")

    def set(self, collection, doc_id, data):
        raise StoreUnavailable("down")


def test_conversation_store_errors_read_the_message_alone():
    ctx = ctx_for(_Down())
    save_conversation(ctx, Conversation(SATURDAY, ITEMS, NOW))  # logged, not raised
    assert load_conversation(ctx) is None


def test_conversation_unreadable_document_is_none(store):
    ctx = ctx_for(store)
    save_conversation(ctx, Conversation(SATURDAY, ITEMS, NOW))
    [(doc_id, doc)] = schema.of_user(store, "test-tenant", [ctx.user_hash])
    store.set(schema.COLLECTION, doc_id, {**doc, "last_ask": {"kind": "weather"}})
    assert load_conversation(ctx) is None


def test_conversation_touch_keeps_it_thirty_minutes_from_this_turn(store):
    save_conversation(ctx_for(store), Conversation(SATURDAY, ITEMS, NOW))
    later = ctx_for(store, now=NOW + timedelta(minutes=20))
    touch_conversation(later, load_conversation(later))
    assert load_conversation(ctx_for(store, now=NOW + timedelta(minutes=45))) == Conversation(
        SATURDAY, ITEMS, NOW + timedelta(minutes=20))
