"""Import places: an operator's curated list, or TDX's restaurants; validate every row; store a new snapshot.

Used by ``make ingest-places [FILE=…]`` (tools/places.py).

Outcomes (``PlacesIngestResult.outcome``):
- ``snapshot_written``: a new versioned snapshot is current (the new layer merged with the other kind's);
- ``unchanged``: the content equals the current snapshot's; it is marked as confirmed now;
- ``not_modified``: TDX answered 304 to If-Modified-Since; confirmed now;
- ``fetch_failed``: TDX failed (after its retries); the last good snapshot stays, the reason is recorded;
- ``rejected``: the file is not a list (``CuratedFileError``'s reason) or no row was valid
  (``no_valid_rows``); the last good snapshot stays, the reason is recorded.

What an import replaced is said: ``no_longer_listed`` counts the shops residents were answered with
before (the previous snapshot, or the shipped catalog) that the new catalog no longer lists, and a
WARNING log (stderr) names them; ``example_rows`` counts rows that are only examples (named 範例, or from
a list named 範例 or published on example.org/.com, like data/places-template.csv's), also warned of.

Source: docs/design.md §5 (versioned snapshots; places from lists and TDX).
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol

from shared.clock import TAIPEI, require_aware
from shared.logs import log
from shared.places.catalog import CatalogError, PlaceCatalog
from shared.places.curated import CuratedFileError, read_curated
from shared.places.layers import CURATED, TDX, Layer
from shared.places.restaurants import map_restaurants
from shared.places.snapshots import load_current_catalog, prune_snapshots, read_state, record_attempt, write_snapshot
from shared.store import DocumentStore, StoreError

OK_OUTCOMES = frozenset({"snapshot_written", "unchanged", "not_modified"})


class RestaurantsUnavailable(Exception):
    """TDX's restaurants could not be fetched; ``reason`` is a short, secret-free word (``http_500``)."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class RestaurantsFetched:
    """One fetch: ``records`` (the JSON array) or None for a 304; ``last_modified``; ``origin`` (no credentials)."""

    records: list[Any] | None
    last_modified: str | None
    origin: str


class RestaurantSource(Protocol):
    """TDX's restaurants of the county, in TDX's response format (built by shared.wiring)."""

    def fetch(self, *, if_modified_since: str | None = None) -> RestaurantsFetched:
        """Raises RestaurantsUnavailable."""


@dataclass(frozen=True)
class PlacesIngestResult:
    """One import: outcome (module docstring), layer (``curated`` / ``tdx``), the current version after
    it, counts {received, kept, skipped {reason: n}}, skipped_rows [{row, reason}], places in the
    merged catalog, reason; no_longer_listed: how many shops of the previous answer the new catalog no
    longer lists (0 when nothing was written); example_rows: rows kept that are only examples."""

    outcome: str
    layer: str
    catalog_version: str | None = None
    counts: dict[str, Any] | None = None
    skipped_rows: list[dict[str, Any]] | None = None
    places: int | None = None
    reason: str | None = None
    no_longer_listed: int = 0
    example_rows: int = 0

    @property
    def ok(self) -> bool:
        """True unless the fetch failed or the input was rejected."""
        return self.outcome in OK_OUTCOMES

    def as_dict(self) -> dict[str, Any]:
        """The JSON document ``make ingest-places`` prints."""
        return {"outcome": self.outcome, "layer": self.layer, "catalog_version": self.catalog_version,
                "counts": self.counts, "skipped_rows": self.skipped_rows, "places": self.places,
                "reason": self.reason, "no_longer_listed": self.no_longer_listed, "example_rows": self.example_rows}


#: What marks a row as only an example: 範例 in its name or list's name, or a list on example.org/.com.
_EXAMPLE_WORDS = ("範例", "example.org", "example.com")


def _example_rows(layer: Layer) -> list[str]:
    """The names of the rows of ``layer`` that are only examples (``_EXAMPLE_WORDS``)."""
    found = []
    for place in layer.places:
        source = layer.sources.get((place.get("field_sources") or {}).get("name", ""), {})
        said = " ".join(str(value) for value in (place.get("name"), source.get("name"), source.get("url")))
        if any(word in said for word in _EXAMPLE_WORDS):
            found.append(str(place.get("name")))
    return found


def _answered_before(store: DocumentStore) -> PlaceCatalog | None:
    """The catalog residents are answered from before the import, or None when it cannot be read."""
    try:
        return load_current_catalog(store)
    except CatalogError:
        return None


def _no_longer_listed(before: PlaceCatalog | None, store: DocumentStore) -> list[str]:
    """「name（township）」 of each shop ``before`` listed that the store's current catalog does not."""
    after = _answered_before(store)
    if before is None or after is None:
        return []
    kept = {(place.name, place.area) for place in after.places}
    return [f"{place.name}（{place.area}）" for place in before.places if (place.name, place.area) not in kept]


def _warn(layer: Layer, examples: list[str], gone: list[str]) -> None:
    """Say on stderr what an operator must know: example rows loaded as shops, shops no longer listed."""
    if examples:
        log("WARNING", "places import holds example rows; replace them with real shops", layer=layer.kind,
            count=len(examples), shops=examples)
    if gone:
        log("WARNING", "places import: shops residents were answered with are no longer listed", layer=layer.kind,
            count=len(gone), shops=gone)


def _store_layer(store: DocumentStore, layer: Layer, *, origin: str, now: datetime,
                 last_modified: str | None = None) -> PlacesIngestResult:
    current = (read_state(store) or {}).get("catalog_version")
    before = _answered_before(store) if layer.places else None
    seen: dict[str, Any] = {"counts": layer.counts, "skipped_rows": layer.skipped_rows}
    if not layer.places:
        record_attempt(store, now=now, layer=layer.kind, outcome="rejected", reason="no_valid_rows")
        return PlacesIngestResult("rejected", layer.kind, current, reason="no_valid_rows", **seen)
    try:
        version, written, count = write_snapshot(store, layer, origin=origin, now=now, last_modified=last_modified)
    except CatalogError as exc:  # a merge the catalog contract refuses, or a stored layer unreadable: nothing is stored
        log("ERROR", "places merge invalid", layer=layer.kind, error=str(exc)[:300])
        record_attempt(store, now=now, layer=layer.kind, outcome="rejected", reason="invalid_catalog")
        return PlacesIngestResult("rejected", layer.kind, current, reason="invalid_catalog", **seen)
    if written:
        try:
            prune_snapshots(store)
        except StoreError as exc:  # old snapshots are only clutter; the next import prunes again
            log("WARNING", "places snapshot prune failed", error=exc.__class__.__name__)
    outcome = "snapshot_written" if written else "unchanged"
    log("INFO", "places ingested", layer=layer.kind, outcome=outcome, version=version, kept=len(layer.places),
        skipped=sum(layer.skipped.values()))
    examples, gone = _example_rows(layer), (_no_longer_listed(before, store) if written else [])
    _warn(layer, examples, gone)
    return PlacesIngestResult(outcome, layer.kind, version, places=count, no_longer_listed=len(gone),
                              example_rows=len(examples), **seen)


def ingest_curated(store: DocumentStore, path: str | Path, *, now: datetime) -> PlacesIngestResult:
    """Import an operator's list (shared.places.curated) as the ``curated`` layer.

    Raises:
        StoreError: the store failed; what was written is all or nothing.
    """
    now = require_aware(now)
    try:
        layer = read_curated(path)
    except CuratedFileError as exc:
        record_attempt(store, now=now, layer=CURATED, outcome="rejected", reason=exc.reason)
        return PlacesIngestResult("rejected", CURATED, (read_state(store) or {}).get("catalog_version"),
                                  reason=exc.reason)
    return _store_layer(store, layer, origin=f"file:{Path(path).name}", now=now)


def ingest_restaurants(store: DocumentStore, source: RestaurantSource, *, now: datetime) -> PlacesIngestResult:
    """Import TDX's vegetarian restaurants (shared.places.restaurants) as the ``tdx`` layer;
    ``If-Modified-Since`` is sent when the current snapshot holds a TDX layer.

    Raises:
        StoreError: the store failed; what was written is all or nothing.
    """
    now = require_aware(now)
    state = read_state(store) or {}
    has_tdx = TDX in (state.get("layers") or {})
    try:
        fetched = source.fetch(if_modified_since=state.get("tdx_last_modified") if has_tdx else None)
    except RestaurantsUnavailable as exc:
        log("WARNING", "restaurants fetch failed", reason=exc.reason)
        record_attempt(store, now=now, layer=TDX, outcome="fetch_failed", reason=exc.reason)
        return PlacesIngestResult("fetch_failed", TDX, state.get("catalog_version"), reason=exc.reason)
    if fetched.records is None:
        record_attempt(store, now=now, layer=TDX, outcome="not_modified", reason=None, confirmed=True)
        return PlacesIngestResult("not_modified", TDX, state.get("catalog_version"))
    layer = map_restaurants(fetched.records, origin=fetched.origin, accessed_on=now.astimezone(TAIPEI).date())
    return _store_layer(store, layer, origin=fetched.origin, now=now, last_modified=fetched.last_modified)
