"""One listed item, answered from its own record: 第三個在哪裡集合, 第2家電話幾號, 最後一個要錢嗎, 剛剛那家在哪.

``answer_item(ctx, ref)``: the conversation (shared.turn.conversation) says which items the last
answer listed, in the order shown; the reference (shared.turn.ask.ItemRef) picks one of them:

- by position: 第 n (1-based), or from the end (-1 最後一個); a position beyond the list says how many
  were listed (「剛剛列了 2 家，沒有第 3 家」);
- by a word (那個市集): the listed item whose title, tags, township or name holds it; several or none
  ask which one, with a button per item;
- by a pointer alone (剛剛那家): the one item listed; or the item the resident last asked about in this
  list (that turn's audit record, ``result_ids``); else it asks which one.

The item's record is read again from where the list came from: an event from the current events
snapshot (shared.events.snapshots), a shop from the places catalog (shared.places.catalog). The reply
says what that record holds for each detail asked, or plainly that it does not record it, with its
source once (shared.turn.wording, the items section). No list (none yet, or expired 30 minutes after
the last turn) is said briefly, with the menu. An answered item keeps the list 30 minutes from this turn
(the state is saved again as it was, with this turn's time); the engine audits the turn, with the
item answered as its result id (``ItemAnswer.result``).
Source: docs/design.md §5 (replies name what is not recorded), §7 (the conversation state).
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from shared.audit import COLLECTION as AUDIT
from shared.clock import TAIPEI, from_iso
from shared.context import EventContext, Reply
from shared.events.search import EventSnapshot, EventSnapshotError
from shared.events.snapshots import load_current_snapshot
from shared.logs import log
from shared.places.catalog import CatalogError, PlaceCatalog, load_place_catalog
from shared.store import StoreError
from shared.turn import wording
from shared.turn.ask import ItemRef
from shared.turn.conversation import Conversation, ItemKind, ListedItem, load_conversation, touch_conversation
from shared.turn.rules.items import ITEM_TOOL

__all__ = ["ItemAnswer", "ItemStatus", "answer_item", "resolve"]


class ItemStatus(StrEnum):
    """How a reference was answered; its value is the audit record's ``status``."""

    ANSWERED = "ok"
    NO_LIST = "no_list"
    BEYOND = "beyond_list"
    WHICH = "which_item"
    GONE = "item_gone"


@dataclass(frozen=True)
class Picked:
    """The listed item a reference picked: the item and its 1-based position in the list."""

    item: ListedItem
    position: int


@dataclass(frozen=True)
class ItemAnswer:
    """What a reference turn replies, with its status and the item answered (None when none was)."""

    reply: Reply
    status: ItemStatus
    item: ListedItem | None = None

    def result(self) -> dict[str, Any]:
        """The turn's result as the engine audits it: the status and the item answered, by id
        (``{"status", "query": None, "events" | "places": [{"id"}]}``; no item: an empty list)."""
        key = "events" if self.item is not None and self.item.kind is ItemKind.EVENT else "places"
        return {"status": self.status.value, "query": None, key: [{"id": self.item.id}] if self.item else []}


def _record_text(item: ListedItem, events: EventSnapshot | None, catalog: PlaceCatalog | None) -> str:
    """What a word may name in an item's record: an event's title, tags and township; a shop's name and
    township (reading form: case-folded)."""
    if item.kind is ItemKind.EVENT and events is not None:
        event = next((event for event in events.events if event.id == item.id), None)
        return " ".join([event.title, *event.tags, event.area]).casefold() if event else ""
    if item.kind is ItemKind.PLACE and catalog is not None:
        place = next((place for place in catalog.places if place.id == item.id), None)
        return f"{place.name} {place.area}".casefold() if place else ""
    return ""


def resolve(ref: ItemRef, items: Sequence[ListedItem], named: Sequence[str] = (),
            focus: str | None = None) -> Picked | tuple[int, ...] | None:
    """The item a reference picks among ``items``, or the positions to choose from.

    Args:
        ref: the reference read (position, word, details).
        items: the listed items, in the order shown.
        named: per item, the text a word may name in its record (``_record_text``); () when unread.
        focus: the id of the item last asked about in this list, or None.
    Returns:
        ``Picked`` when one item is meant; a tuple of 1-based positions to ask among (every position for
        a pointer to several, the matching ones for a word matching several, every one for a word
        matching none); None for a position beyond the list.
    """
    count = len(items)
    if ref.position is not None:
        index = ref.position - 1 if ref.position > 0 else count + ref.position
        return Picked(items[index], index + 1) if 0 <= index < count else None
    every = tuple(range(1, count + 1))
    if ref.name_word is not None:
        word = ref.name_word.casefold()
        matching = tuple(at for at, text in zip(every, named) if word in text)
        if len(matching) == 1:
            return Picked(items[matching[0] - 1], matching[0])
        return matching or every
    if count == 1:
        return Picked(items[0], 1)
    at = next((at for at, item in zip(every, items) if item.id == focus), None)
    return Picked(items[at - 1], at) if at is not None else every


def _focus(ctx: EventContext, conversation: Conversation) -> str | None:
    """The id of the item this resident last asked about since the list was shown (the audit record of
    that item turn), or None. One query on (tenant_id, user_hash), as shared.turn.follow_up's."""
    if ctx.user_hash is None:
        return None
    try:
        records = ctx.store.query(AUDIT, where={"tenant_id": ctx.settings.tenant_id, "user_hash": ctx.user_hash})
    except StoreError as exc:
        log("WARNING", "item focus unavailable", error=exc.__class__.__name__)
        return None
    asked = [record for record in records if record.get("tool") == ITEM_TOOL and record.get("status") == "ok"
             and record.get("result_ids") and record.get("at")
             and from_iso(record["at"]) >= conversation.updated_at]
    if not asked:
        return None
    return max(asked, key=lambda record: from_iso(record["at"]))["result_ids"][0]


def _sources(items: Sequence[ListedItem], load_events: Callable[[], EventSnapshot]
             ) -> tuple[EventSnapshot | None, PlaceCatalog | None]:
    """The events snapshot and the places catalog the items come from (each read only when listed)."""
    events = catalog = None
    if any(item.kind is ItemKind.EVENT for item in items):
        try:
            events = load_events()
        except EventSnapshotError as exc:
            log("WARNING", "item record unavailable", error=exc.__class__.__name__)
    if any(item.kind is ItemKind.PLACE for item in items):
        try:
            catalog = load_place_catalog()
        except CatalogError as exc:
            log("WARNING", "item record unavailable", error=exc.__class__.__name__)
    return events, catalog


def _labels(items: Sequence[ListedItem], positions: tuple[int, ...], events: EventSnapshot | None,
            catalog: PlaceCatalog | None) -> list[tuple[int, str]]:
    """(position, the item's title or name) per position offered; the title is left empty when unread."""
    titles = {event.id: event.title for event in events.events} if events else {}
    names = {place.id: place.name for place in catalog.places} if catalog else {}
    return [(at, titles.get(items[at - 1].id) or names.get(items[at - 1].id) or "") for at in positions]


def answer_item(ctx: EventContext, ref: ItemRef,
                load_events: Callable[[], EventSnapshot] | None = None) -> ItemAnswer:
    """The reply to a reference to one listed item (see the module docstring).

    Args:
        ctx: the verified event (``now``, the store, the chat and sender).
        ref: the reference the router read.
        load_events: reads the events snapshot (the turn engine passes the one its text turn already
            read: shared.turn.engine.events_snapshot_args); default ``load_current_snapshot(ctx.store)``.
            Raises EventSnapshotError when there is none.
    Returns:
        The reply, how it was answered, and the item answered.
    """
    conversation = load_conversation(ctx)
    if conversation is None or not conversation.items:
        searched = conversation is not None and conversation.last_ask is not None
        return ItemAnswer(wording.item_no_list_reply(searched=searched), ItemStatus.NO_LIST)
    items = conversation.items
    kind = items[0].kind
    events, catalog = _sources(items, load_events or (lambda: load_current_snapshot(ctx.store)))
    named = [_record_text(item, events, catalog) for item in items] if ref.name_word else []
    focus = _focus(ctx, conversation) if ref.position is None and ref.name_word is None and len(items) > 1 else None
    picked = resolve(ref, items, named, focus)
    if picked is None:
        every = tuple(range(1, len(items) + 1))
        return ItemAnswer(wording.item_beyond_reply(kind, len(items), ref, _labels(items, every, events, catalog)),
                          ItemStatus.BEYOND)
    if not isinstance(picked, Picked):
        unmatched = ref.name_word is not None and not any(ref.name_word.casefold() in text for text in named)
        return ItemAnswer(wording.item_which_reply(kind, len(items), ref, _labels(items, picked, events, catalog),
                                                   unmatched=unmatched), ItemStatus.WHICH)
    answer = _answered(ctx, ref, picked, events, catalog)
    if answer.status is ItemStatus.ANSWERED:  # a turn about the list keeps it 30 minutes more
        touch_conversation(ctx, conversation)
    return answer


def _answered(ctx: EventContext, ref: ItemRef, picked: Picked, events: EventSnapshot | None,
              catalog: PlaceCatalog | None) -> ItemAnswer:
    """The picked item answered from its record; ``item_gone`` when the record is no longer there."""
    if picked.item.kind is ItemKind.EVENT and events is not None:
        event = next((event for event in events.events if event.id == picked.item.id), None)
        if event is not None:
            checked = events.checked_at
            stale = checked is not None and (ctx.now - checked).total_seconds() > ctx.settings.events_stale_after_seconds
            return ItemAnswer(wording.event_item_reply(event, events, picked.position, ref.details,
                                                       ctx.now.astimezone(TAIPEI).date(), stale=stale, other=ref.asked),
                              ItemStatus.ANSWERED, picked.item)
    if picked.item.kind is ItemKind.PLACE and catalog is not None:
        place = next((place for place in catalog.places if place.id == picked.item.id), None)
        if place is not None:
            return ItemAnswer(wording.place_item_reply(place, catalog, picked.position, ref.details, ref.asked),
                              ItemStatus.ANSWERED, picked.item)
    return ItemAnswer(wording.item_gone_reply(), ItemStatus.GONE)
