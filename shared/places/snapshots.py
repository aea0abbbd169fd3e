"""Places snapshots in the document store: written by ``make ingest-places``, read by every event.

Collections (global to the deployment, like the events snapshots):

- ``places_snapshots/<version>``: one snapshot's metadata: ``catalog_version``, ``recorded_on``
  (Asia/Taipei), ``fetched_at``, ``sources`` and ``campaign`` of its catalog, ``layers`` ``{kind:
  {origin, imported_at, counts, sources}}`` (the newest ``curated`` and ``tdx`` layers it merges),
  ``part_counts`` ``{places, curated, tdx}``, ``content_hash``;
- ``places_snapshot_parts/<version>:<series>:<n>``: ``{catalog_version, series, part, items}``, at most
  ``PART_SIZE`` items each; ``series`` is ``places`` (the merged catalog's places) or a layer kind;
- ``places_state/current``: the pointer: the current snapshot's metadata plus ``checked_at``,
  ``tdx_last_modified`` (TDX's ``Last-Modified``, sent back as ``If-Modified-Since``) and
  ``last_attempt`` ``{at, layer, outcome, reason}``. A failed import changes only ``last_attempt``.

A new snapshot holds the new layer, the other kind's newest layer as the current snapshot has it, and
their merge (shared.places.layers), validated as a catalog (shared.places.catalog) before it is
written; metadata, parts and pointer are written in one transaction. Versions are never rewritten.

Reading: ``load_current_catalog`` reads the pointer (one store read) and the parts of a version it
has not parsed before (kept per process); with no snapshot it answers with the shipped catalog
(``data/places-catalog.json``). ``scope_for_store`` makes it the catalog of one event.

Source: docs/design.md §5 (versioned snapshots), Firestore "Usage and limits" (1 MiB documents,
500 writes per transaction).
"""
from __future__ import annotations

import hashlib
import json
from contextlib import AbstractContextManager
from datetime import datetime
from typing import Any

from shared.clock import TAIPEI, from_iso, require_aware, to_iso
from shared.places.catalog import (
    CatalogMissing,
    PlaceCatalog,
    catalog_from_dict,
    catalog_scope,
    load_shipped_catalog,
)
from shared.places.layers import LAYER_KINDS, Layer, merge_layers
from shared.store import DocumentStore, StoreError
from shared.version_cache import VersionCache

SNAPSHOTS = "places_snapshots"
PARTS = "places_snapshot_parts"
STATE = "places_state"
CURRENT = "current"
PART_SIZE = 100
KEEP_SNAPSHOTS = 3
PLACES_SERIES = "places"


def content_hash(document: Any) -> str:
    """SHA-256 (hex) of the canonical JSON of ``document``: same content, same hash."""
    canonical = json.dumps(document, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def read_state(store: DocumentStore) -> dict[str, Any] | None:
    """The pointer document, or None before the first import. Raises StoreError."""
    return store.get(STATE, CURRENT)


def _series(tx_or_store: Any, version: str, series: str, count: int) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    for index in range(count):
        part = tx_or_store.get(PARTS, f"{version}:{series}:{index}")
        if part is None:
            raise CatalogMissing(f"places snapshot {version}: part {series}:{index} is missing")
        items.extend(part["items"])
    return items


def _layers_of(tx: Any, state: dict[str, Any] | None) -> dict[str, dict[str, Any]]:
    """The layers the current snapshot holds, as layer documents {kind, sources, places, counts, origin, imported_at}."""
    if not state or not state.get("catalog_version"):
        return {}
    version = state["catalog_version"]
    layers = {}
    for kind, meta in (state.get("layers") or {}).items():
        places = _series(tx, version, kind, int(state["part_counts"].get(kind, 0)))
        layers[kind] = {**meta, "kind": kind, "places": places}
    return layers


def _shipped_campaign() -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """The festival campaign and its source, from the shipped catalog (an import does not change them)."""
    shipped = load_shipped_catalog()
    source: dict[str, Any] = shipped.sources[shipped.campaign.source_id].as_dict()
    source_id = str(source.pop("id"))
    return shipped.campaign.as_dict(), {source_id: source}


def _catalog_doc(version: str, recorded_on: str, layers: dict[str, dict[str, Any]]) -> dict[str, Any]:
    campaign, campaign_sources = _shipped_campaign()
    sources, places = merge_layers(layers)
    return {"catalog_version": version, "recorded_on": recorded_on, "sources": {**campaign_sources, **sources},
            "campaign": campaign, "places": places}


def write_snapshot(store: DocumentStore, layer: Layer, *, origin: str, now: datetime,
                   last_modified: str | None = None) -> tuple[str, bool, int]:
    """Store a snapshot with ``layer`` as its newest layer of that kind, or, when the content equals the
    current one, only mark the current one as confirmed now.

    Args:
        store: the document store.
        layer: the imported layer (at least one place).
        origin: where the layer was read (a file name or the API URL; no credentials).
        now: aware instant of the import.
        last_modified: TDX's ``Last-Modified`` for a ``tdx`` layer.
    Returns:
        (catalog_version, written, places in the merged catalog).
    Raises:
        CatalogInvalid: the merge does not make a valid catalog (nothing written).
        CatalogMissing: a part of the current snapshot is missing (nothing written).
        StoreError: nothing was changed (StoreTimeout: outcome unknown; importing again is safe).
    """
    now = require_aware(now)
    stamp = now.astimezone(TAIPEI)
    attempt = {"at": to_iso(now), "layer": layer.kind, "outcome": "snapshot_written", "reason": None}
    new_layer = {"kind": layer.kind, "sources": layer.sources, "places": layer.places, "counts": layer.counts,
                 "origin": origin, "imported_at": to_iso(now)}

    def tx_fn(tx) -> tuple[str, bool, int]:
        state = tx.get(STATE, CURRENT)
        layers = {**_layers_of(tx, state), layer.kind: new_layer}
        digest = content_hash({kind: {"sources": doc["sources"], "places": doc["places"]}
                               for kind, doc in sorted(layers.items())})
        extra = {} if layer.kind != "tdx" else {"tdx_last_modified": last_modified}
        if state and state.get("catalog_version") and state.get("content_hash") == digest:
            tx.set(STATE, CURRENT, {**state, **extra, "checked_at": to_iso(now),
                                    "last_attempt": {**attempt, "outcome": "unchanged"}})
            return state["catalog_version"], False, int(state.get("place_count", 0))
        version = f"places-{stamp.strftime('%Y%m%dT%H%M%S')}-{digest[:8]}"
        document = _catalog_doc(version, stamp.date().isoformat(), layers)
        catalog_from_dict(document, f"import {layer.kind}")  # raises CatalogInvalid before anything is written
        chunks = _parts(document, layers)
        meta = _snapshot_meta(version, document, digest, layers, chunks, now)
        tx.set(SNAPSHOTS, version, meta)
        for name, parts in chunks.items():
            for index, items in enumerate(parts):
                tx.set(PARTS, f"{version}:{name}:{index}",
                       {"catalog_version": version, "series": name, "part": index, "items": items})
        kept = {"tdx_last_modified": (state or {}).get("tdx_last_modified"), **extra}
        tx.set(STATE, CURRENT, {**meta, **kept, "checked_at": to_iso(now), "last_attempt": attempt})
        return version, True, len(document["places"])

    return store.run_transaction(tx_fn)


def _parts(document: dict[str, Any], layers: dict[str, dict[str, Any]]) -> dict[str, list[list[Any]]]:
    """The merged catalog's places (series PLACES_SERIES) and each layer's (series: the layer's kind),
    cut in parts of at most PART_SIZE places: {series: [part, ...]}, one empty part for a series of none."""
    series = {PLACES_SERIES: document["places"], **{kind: doc["places"] for kind, doc in layers.items()}}
    return {name: [items[i:i + PART_SIZE] for i in range(0, len(items), PART_SIZE)] or [[]]
            for name, items in series.items()}


def _snapshot_meta(version: str, document: dict[str, Any], digest: str, layers: dict[str, dict[str, Any]],
                   chunks: dict[str, list[list[Any]]], now: datetime) -> dict[str, Any]:
    """A snapshot's document in SNAPSHOTS: the catalog ``document`` without its places, ``digest`` (its
    content hash), each layer without its places, ``fetched_at`` (``now``, ISO) and the part count of
    each series of ``chunks``."""
    return {
        "catalog_version": version, "recorded_on": document["recorded_on"], "fetched_at": to_iso(now),
        "sources": document["sources"], "campaign": document["campaign"], "content_hash": digest,
        "layers": {kind: {key: value for key, value in doc.items() if key not in ("places", "kind")}
                   for kind, doc in layers.items()},
        "part_counts": {name: len(parts) for name, parts in chunks.items()},
        "place_count": len(document["places"]),
    }


def record_attempt(store: DocumentStore, *, now: datetime, layer: str, outcome: str, reason: str | None,
                   confirmed: bool = False) -> None:
    """Record an import that wrote no snapshot (``fetch_failed``, ``not_modified``, ``rejected``); the
    current snapshot stays. ``confirmed`` (a 304) moves ``checked_at`` to now. Raises StoreError."""
    attempt = {"at": to_iso(require_aware(now)), "layer": layer, "outcome": outcome, "reason": reason}

    def tx_fn(tx) -> None:
        state = tx.get(STATE, CURRENT) or {"catalog_version": None}
        update = {**state, "last_attempt": attempt}
        if confirmed and state.get("catalog_version"):
            update["checked_at"] = attempt["at"]
        tx.set(STATE, CURRENT, update)

    store.run_transaction(tx_fn)


def prune_snapshots(store: DocumentStore, *, keep: int = KEEP_SNAPSHOTS) -> int:
    """Delete all but the newest ``keep`` snapshots (never the current one); returns how many. Raises StoreError."""
    current = (read_state(store) or {}).get("catalog_version")
    metas = store.query(SNAPSHOTS, order_by="fetched_at", descending=True)
    old = [meta for meta in metas[keep:] if meta.get("catalog_version") != current]
    for meta in old:
        def tx_fn(tx, meta: dict[str, Any] = meta) -> None:
            version = meta["catalog_version"]
            for name, count in (meta.get("part_counts") or {}).items():
                for index in range(int(count)):
                    tx.delete(PARTS, f"{version}:{name}:{index}")
            tx.delete(SNAPSHOTS, version)

        store.run_transaction(tx_fn)
    return len(old)


_CACHE: VersionCache[PlaceCatalog] = VersionCache()


def _build(store: DocumentStore, state: dict[str, Any]) -> PlaceCatalog:
    version = state["catalog_version"]
    try:
        places = _series(store, version, PLACES_SERIES, int(state["part_counts"][PLACES_SERIES]))
        document = {"catalog_version": version, "recorded_on": state["recorded_on"], "sources": state["sources"],
                    "campaign": state["campaign"], "places": places}
    except (KeyError, TypeError, ValueError) as exc:
        raise CatalogMissing(f"places snapshot {version}: {type(exc).__name__}") from exc
    return catalog_from_dict(document, f"store:{version}")


def load_current_catalog(store: DocumentStore) -> PlaceCatalog:
    """The catalog an event answers from: the store's newest snapshot, else the shipped catalog.

    Raises:
        CatalogMissing: the store could not be read (searches answer ``unavailable``; the shipped
            catalog is not shown in place of imported data that exists).
        CatalogInvalid: the stored snapshot is malformed.
    Source: docs/design.md §5 (the newest snapshot answers; the shipped catalog is the fallback).
    """
    try:
        state = read_state(store)
        if not state or not state.get("catalog_version"):
            return load_shipped_catalog()
        version = state["catalog_version"]
        cached = _CACHE.get(version, lambda: _build(store, state))
        return cached
    except StoreError as exc:
        raise CatalogMissing(f"places snapshot unreadable: {exc.__class__.__name__}") from exc


def scope_for_store(store: DocumentStore) -> AbstractContextManager[None]:
    """``with scope_for_store(ctx.store):`` around one event: ``load_place_catalog()`` answers with the
    store's newest snapshot (read on first use, once), else the shipped catalog."""
    return catalog_scope(lambda: load_current_catalog(store))


def status_of(state: dict[str, Any], *, now: datetime) -> dict[str, Any]:
    """The operator's view (``make places-status``) of the state document as read (``{}``: none).

    Returns:
        {answers_from: "snapshot" | "shipped", catalog_version, fetched_at, checked_at, age_seconds,
         places, layers {kind: {origin, imported_at, counts, sources: [names]}}, last_attempt}.
    """
    version = state.get("catalog_version")
    checked = state.get("checked_at")
    age = None if not (version and checked) else round((require_aware(now) - from_iso(checked)).total_seconds(), 1)
    layers = {kind: {"origin": meta.get("origin"), "imported_at": meta.get("imported_at"), "counts": meta.get("counts"),
                     "sources": sorted({source.get("name") or source.get("kind") for source in
                                        (meta.get("sources") or {}).values()})}
              for kind, meta in sorted((state.get("layers") or {}).items()) if kind in LAYER_KINDS}
    return {
        "answers_from": "snapshot" if version else "shipped",
        "catalog_version": version,
        "fetched_at": state.get("fetched_at"),
        "checked_at": checked,
        "age_seconds": age,
        "places": state.get("place_count"),
        "layers": layers,
        "last_attempt": state.get("last_attempt"),
    }


def status(store: DocumentStore, *, now: datetime) -> dict[str, Any]:
    """``status_of`` the store's state. Raises StoreError."""
    return status_of(read_state(store) or {}, now=now)
