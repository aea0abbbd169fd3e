"""Events snapshots in the document store: written by ingestion, read by every events turn.

Collections (global to the deployment: the county's activities are the same for every tenant):

- ``events_snapshots/<version>``: one snapshot's metadata: ``snapshot_version``, ``source_kind``,
  ``source_name``, ``origin``, ``fetched_at``, ``source_updated_at`` (the newest record
  ``UpdateTime``), ``recorded_on`` (Asia/Taipei), ``counts`` ``{received, kept, skipped: {reason: n}}``,
  ``content_hash``, ``part_count``;
- ``events_snapshot_parts/<version>:<n>``: ``{snapshot_version, part, events: [...]}``, at most
  ``PART_SIZE`` events each (a Firestore document holds at most 1 MiB);
- ``events_state/current``: the pointer: the current snapshot's metadata plus ``checked_at`` (when the
  source last confirmed it: a new fetch with the same content, or a 304), ``last_modified`` and
  ``last_attempt`` ``{at, outcome, reason}``. A failed fetch changes only ``last_attempt``.

A new snapshot (metadata, parts and pointer) is written in one transaction, reads first, so a turn
sees either the old snapshot or the whole new one. Versions are never rewritten: a turn that
started on one version and meets another answers ``unavailable`` (docs/design.md §5).

Reading: ``load_current_snapshot`` reads the pointer (one store read per turn) and the parts of a
version it has not parsed before (kept per process); without any real snapshot it returns the demo
snapshot (labelled 示範).

Source: docs/design.md §5 (versioned snapshots), Firestore "Usage and limits" (1 MiB documents,
500 writes per transaction).
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, replace
from datetime import date, datetime, time
from typing import Any

from shared.clock import TAIPEI, from_iso, require_aware, to_iso
from shared.events.search import Event, EventSnapshot, EventSnapshotInvalid, EventSnapshotMissing, load_event_snapshot
from shared.geo import Coordinates, checked_point
from shared.store import DocumentStore, StoreError
from shared.version_cache import VersionCache

SNAPSHOTS = "events_snapshots"
PARTS = "events_snapshot_parts"
STATE = "events_state"
CURRENT = "current"
PART_SIZE = 100
#: Snapshots kept (the current one included); older ones are deleted after a new one is written.
KEEP_SNAPSHOTS = 3


def event_to_doc(event: Event) -> dict[str, Any]:
    """An Event as a store document (JSON types only; dates ISO, the end day exclusive). ``position``
    ({lat, lng, source}) is present only when the event has one, so a snapshot of events without
    positions keeps the content hash it had before positions were read."""
    doc: dict[str, Any] = {
        "id": event.id, "title": event.title, "area": event.area, "date": event.date.isoformat(),
        "end_date": None if event.end_date is None else event.end_date.isoformat(),
        "start_time": None if event.start_time is None else event.start_time.strftime("%H:%M"),
        "meeting_point": event.meeting_point, "tags": list(event.tags), "source_kind": event.source_kind,
        "source_updated_at": event.source_updated_at, "organizer": event.organizer, "url": event.url,
    }
    if event.position is not None:
        doc["position"] = {"lat": event.position.lat, "lng": event.position.lng, "source": event.position.source}
    return doc


def _position_from_doc(value: Any) -> Coordinates | None:
    """A stored ``position`` back to Coordinates; None when absent. Raises ValueError when malformed."""
    if value is None:
        return None
    point = checked_point(value.get("lat"), value.get("lng")) if isinstance(value, dict) else None
    if point is None or not isinstance(value.get("source"), str):
        raise ValueError("position is not {lat, lng, source}")
    return Coordinates(point.lat, point.lng, value["source"])


def event_from_doc(doc: dict[str, Any]) -> Event:
    """The Event stored by event_to_doc. Raises KeyError, TypeError or ValueError when malformed."""
    return Event(
        id=doc["id"], title=doc["title"], area=doc["area"], date=date.fromisoformat(doc["date"]),
        start_time=None if doc["start_time"] is None else time.fromisoformat(doc["start_time"]),
        meeting_point=doc["meeting_point"], tags=tuple(doc["tags"]), source_kind=doc["source_kind"],
        end_date=None if doc["end_date"] is None else date.fromisoformat(doc["end_date"]),
        source_updated_at=doc["source_updated_at"], organizer=doc["organizer"], url=doc["url"],
        position=_position_from_doc(doc.get("position")),
    )


def content_hash(events: list[dict[str, Any]]) -> str:
    """SHA-256 (hex) of the canonical JSON of the event documents: same content, same hash."""
    canonical = json.dumps(events, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class NewSnapshot:
    """What ingestion wants stored.

    Attributes:
        events: event documents (event_to_doc), in source order.
        source_kind, source_name, origin: the source (origin carries no credentials).
        source_updated_at: newest kept UpdateTime (aware), or None.
        counts: {received, kept, skipped: {reason: n}}.
        last_modified: the source's Last-Modified, or None.
    """

    events: list[dict[str, Any]]
    source_kind: str
    source_name: str
    origin: str
    source_updated_at: datetime | None
    counts: dict[str, Any]
    last_modified: str | None


def read_state(store: DocumentStore) -> dict[str, Any] | None:
    """The pointer document, or None before the first ingestion. Raises StoreError."""
    return store.get(STATE, CURRENT)


def write_snapshot(store: DocumentStore, new: NewSnapshot, *, now: datetime) -> tuple[str, bool]:
    """Store a snapshot and point to it, or, when its content equals the current one, only mark
    the current one as confirmed now.

    Args:
        store: the document store.
        new: the mapped snapshot.
        now: aware instant of the fetch.
    Returns:
        (snapshot_version, written): written is False when the content was unchanged.
    Raises:
        StoreError: nothing was changed (StoreTimeout: the outcome is unknown; running the ingestion
            again is safe, since an equal content only updates the pointer).
    """
    now = require_aware(now)
    digest = content_hash(new.events)
    version = f"{new.source_kind}-{now.astimezone(TAIPEI).strftime('%Y%m%dT%H%M%S')}-{digest[:8]}"
    parts = [new.events[i:i + PART_SIZE] for i in range(0, len(new.events), PART_SIZE)] or [[]]
    attempt = {"at": to_iso(now), "outcome": "snapshot_written", "reason": None}

    def tx_fn(tx) -> tuple[str, bool]:
        state = tx.get(STATE, CURRENT)
        if state and state.get("snapshot_version") and state.get("content_hash") == digest:
            tx.set(STATE, CURRENT, {**state, "checked_at": to_iso(now), "last_modified": new.last_modified,
                                    "counts": new.counts,
                                    "last_attempt": {**attempt, "outcome": "unchanged"}})
            return state["snapshot_version"], False
        meta = {
            "snapshot_version": version, "source_kind": new.source_kind, "source_name": new.source_name,
            "origin": new.origin, "fetched_at": to_iso(now),
            "source_updated_at": None if new.source_updated_at is None else new.source_updated_at.isoformat(),
            "recorded_on": now.astimezone(TAIPEI).date().isoformat(), "counts": new.counts,
            "content_hash": digest, "part_count": len(parts),
        }
        tx.set(SNAPSHOTS, version, meta)
        for index, events in enumerate(parts):
            tx.set(PARTS, f"{version}:{index}", {"snapshot_version": version, "part": index, "events": events})
        tx.set(STATE, CURRENT, {**meta, "checked_at": to_iso(now), "last_modified": new.last_modified,
                                "last_attempt": attempt})
        return version, True

    return store.run_transaction(tx_fn)


def record_attempt(store: DocumentStore, *, now: datetime, outcome: str, reason: str | None,
                   confirmed: bool = False) -> None:
    """Record an ingestion attempt that wrote no snapshot; the current snapshot stays as it is.

    Args:
        outcome: ``fetch_failed``, ``not_modified`` or ``rejected``.
        reason: a short, secret-free word (e.g. ``http_500``), or None.
        confirmed: the source confirmed the current snapshot (a 304): ``checked_at`` moves to now.
    Raises:
        StoreError.
    """
    attempt = {"at": to_iso(require_aware(now)), "outcome": outcome, "reason": reason}

    def tx_fn(tx) -> None:
        state = tx.get(STATE, CURRENT) or {"snapshot_version": None}
        update = {**state, "last_attempt": attempt}
        if confirmed and state.get("snapshot_version"):
            update["checked_at"] = attempt["at"]
        tx.set(STATE, CURRENT, update)

    store.run_transaction(tx_fn)


def prune_snapshots(store: DocumentStore, *, keep: int = KEEP_SNAPSHOTS) -> int:
    """Delete all but the newest ``keep`` snapshots (never the current one). Returns how many
    were deleted. Raises StoreError."""
    state = read_state(store) or {}
    current = state.get("snapshot_version")
    metas = store.query(SNAPSHOTS, order_by="fetched_at", descending=True)
    old = [m for m in metas[keep:] if m.get("snapshot_version") != current]
    for meta in old:
        version = meta["snapshot_version"]

        def tx_fn(tx, version: str = version, part_count: int = int(meta.get("part_count", 0))) -> None:
            for index in range(part_count):
                tx.delete(PARTS, f"{version}:{index}")
            tx.delete(SNAPSHOTS, version)

        store.run_transaction(tx_fn)
    return len(old)


_CACHE: VersionCache[EventSnapshot] = VersionCache()


def _build(store: DocumentStore, state: dict[str, Any]) -> EventSnapshot:
    version = state["snapshot_version"]
    events: list[Event] = []
    try:
        for index in range(int(state["part_count"])):
            part = store.get(PARTS, f"{version}:{index}")
            if part is None:
                raise EventSnapshotInvalid(f"events snapshot {version}: part {index} is missing")
            events.extend(event_from_doc(doc) for doc in part["events"])
        updated = state.get("source_updated_at")
        return EventSnapshot(
            snapshot_version=version, recorded_on=date.fromisoformat(state["recorded_on"]), demo=False,
            note=f"{state['source_name']}（{state['origin']}）", events=tuple(events),
            source_name=state["source_name"], source_updated_at=None if updated is None else from_iso(updated),
        )
    except EventSnapshotInvalid:
        raise
    except (KeyError, TypeError, ValueError) as exc:
        raise EventSnapshotInvalid(f"events snapshot {version}: {type(exc).__name__}") from exc


def load_current_snapshot(store: DocumentStore) -> EventSnapshot:
    """The snapshot an events turn answers from: the newest real one, else the demo one.

    Args:
        store: the document store (one read per call; the parts of a new version once per process).
    Returns:
        The current real snapshot with ``checked_at`` set; or, when no real snapshot was ever
        written, the demo snapshot (``demo=True``: replies say 示範).
    Raises:
        EventSnapshotMissing: the store could not be read (the search answers ``unavailable``; the
            demo data is not shown in place of real data that exists).
        EventSnapshotInvalid: the stored snapshot is malformed.
    Source: docs/design.md §5 (real snapshot first, demo only as a labelled fallback).
    """
    try:
        state = read_state(store)
        if not state or not state.get("snapshot_version"):
            return load_event_snapshot()
        version = state["snapshot_version"]
        cached = _CACHE.get(version, lambda: _build(store, state))
    except StoreError as exc:
        raise EventSnapshotMissing(f"events snapshot unreadable: {exc.__class__.__name__}") from exc
    checked = state.get("checked_at")
    return replace(cached, checked_at=None if checked is None else from_iso(checked))


def status(store: DocumentStore, *, now: datetime, stale_after_seconds: float) -> dict[str, Any]:
    """The operator's view of the events data (``make events-status``).

    Returns:
        {source: {kind, name, origin} | None, snapshot_version, fetched_at, checked_at,
         source_updated_at, counts {received, kept, skipped}, age_seconds (since checked_at),
         stale, last_attempt {at, outcome, reason}, answers_from: "real" | "demo"}.
    Raises:
        StoreError.
    """
    return status_of(read_state(store) or {}, now=now, stale_after_seconds=stale_after_seconds)


def status_of(state: dict[str, Any], *, now: datetime, stale_after_seconds: float) -> dict[str, Any]:
    """``status`` from the events state document as read (``{}`` when there is none): no store access."""
    version = state.get("snapshot_version")
    checked = state.get("checked_at")
    age = None if not (version and checked) else round((require_aware(now) - from_iso(checked)).total_seconds(), 1)
    return {
        "answers_from": "real" if version else "demo",
        "source": None if not version else {"kind": state.get("source_kind"), "name": state.get("source_name"),
                                            "origin": state.get("origin")},
        "snapshot_version": version,
        "fetched_at": state.get("fetched_at"),
        "checked_at": checked,
        "source_updated_at": state.get("source_updated_at"),
        "counts": state.get("counts"),
        "age_seconds": age,
        "stale": age is not None and age > stale_after_seconds,
        "last_attempt": state.get("last_attempt"),
    }
