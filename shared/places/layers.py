"""Imported place layers and their merge into one catalog document.

A layer is what one importer read from one source: the operator's curated list (``curated``:
shared.places.curated) or TDX's restaurants (``tdx``: shared.places.restaurants). Each layer holds
catalog-shaped places (the JSON shape of ``data/places-catalog.json``) and the sources they cite.
A snapshot keeps the newest layer of each kind; its catalog is their merge:

- two places are the same shop when their normalised name and normalised address are equal
  (``merge_key``: NFKC, 台 → 臺, case-folded, spaces and marks out; the address as shared.address
  reads it: its township and the rest, without postal code, 臺灣 and 彰化縣);
- the curated place wins field by field: name, township and address always (the list requires them),
  phone and coordinates when the list has them, the diets when the list states any; the TDX
  restaurant fills the rest; ``field_sources`` (and the coordinates' ``source``) name which source
  gave each field;
- a TDX restaurant alone keeps only ``vegetarian`` evidence (its class or name says 素 or 蔬食; which
  kind is not confirmed), so a strict diet (全素, 蛋奶素, 奶素) never matches it unless a curated list
  says so.

Source: docs/design.md §5 (Places: imported snapshots, merge), docs/data.md (Places from lists and TDX).
"""
from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from typing import Any, Mapping

from shared.address import AddressReading, read_address

CURATED = "curated"
TDX = "tdx"
#: The layers, the winning one first.
LAYER_KINDS: tuple[str, ...] = (CURATED, TDX)

#: Fields a curated place gives whenever it has them (name, area and address it always has).
_CURATED_FIELDS: tuple[str, ...] = ("name", "area", "address", "phone")

_MARKS = re.compile(r"[^0-9a-z\u3400-\u9fff]+")


class RowSkip(Exception):
    """A row or record an importer leaves out; ``reason`` is the word it is counted under (Layer.skip)."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


@dataclass
class Layer:
    """One importer's reading of one source.

    Attributes:
        kind: ``curated`` or ``tdx``.
        sources: {source id: source in the catalog's JSON shape {url, kind, name, accessed_on, scope}}.
        places: catalog-shaped place dicts, in the source's order.
        skipped: {reason: count} of the rows or records left out.
        skipped_rows: [{row (1-based data row, or record index + 1), reason}] in the source's order.
        received: rows or records read.
    """

    kind: str
    sources: dict[str, dict[str, Any]] = field(default_factory=dict)
    places: list[dict[str, Any]] = field(default_factory=list)
    skipped: dict[str, int] = field(default_factory=dict)
    skipped_rows: list[dict[str, Any]] = field(default_factory=list)
    received: int = 0

    def skip(self, row: int, reason: str) -> None:
        """Count one row left out, with its reason."""
        self.skipped[reason] = self.skipped.get(reason, 0) + 1
        self.skipped_rows.append({"row": row, "reason": reason})

    @property
    def counts(self) -> dict[str, Any]:
        """{received, kept, skipped: {reason: n}} as ``make ingest-places`` prints it."""
        return {"received": self.received, "kept": len(self.places), "skipped": dict(sorted(self.skipped.items()))}

    def as_doc(self) -> dict[str, Any]:
        """The layer as stored: {kind, sources, places, counts}."""
        return {"kind": self.kind, "sources": self.sources, "places": self.places, "counts": self.counts}


def _read_form(text: str) -> str:
    return unicodedata.normalize("NFKC", text).replace("台", "臺").casefold()


def normalized_name(name: str) -> str:
    """A shop's name as compared: NFKC, 台 → 臺, case-folded, spaces and marks out."""
    return _MARKS.sub("", _read_form(name))


def normalized_address(address: str) -> str:
    """An address as compared: its township and the rest (shared.address: without postal code, 臺灣 and
    彰化縣), NFKC, 台 → 臺, case-folded, spaces and marks out; the whole text when it names no township."""
    reading = read_address(address)
    text = f"{reading.township}{reading.rest}" if isinstance(reading, AddressReading) else address
    return _MARKS.sub("", _read_form(text))


def merge_key(name: str, address: str) -> str:
    """The identity of a shop across sources: normalised name and normalised address."""
    return f"{normalized_name(name)}|{normalized_address(address)}"


def township_in_address(address: str) -> str | None:
    """The township an address names (shared.address.read_address: a full name, or a Changhua postal
    code), or None (another county, or no township where the address starts)."""
    reading = read_address(address)
    return reading.township if isinstance(reading, AddressReading) else None


def _merged(curated: dict[str, Any], tdx: dict[str, Any]) -> dict[str, Any]:
    """One shop from both layers, the curated place winning field by field."""
    merged = {**tdx, "id": curated["id"], "in_campaign": curated["in_campaign"]}
    sources = dict(tdx["field_sources"])
    for name in _CURATED_FIELDS:
        if curated.get(name) is not None:
            merged[name] = curated[name]
            sources[name] = curated["field_sources"][name]
    merged["field_sources"] = sources
    if curated.get("coordinates") is not None:
        merged["coordinates"] = curated["coordinates"]
    if curated["dietary_evidence"]:
        for key in ("dietary_evidence", "dietary_options", "dietary_scope"):
            merged[key] = curated[key]
    return merged


def merge_layers(layers: Mapping[str, Mapping[str, Any]]) -> tuple[dict[str, dict[str, Any]], list[dict[str, Any]]]:
    """Merge stored layers (``Layer.as_doc()``) into one catalog's sources and places.

    Args:
        layers: {kind: layer document}; a missing kind is an empty layer.
    Returns:
        (sources cited by the places, places): curated places in their order (merged with the TDX
        restaurant of the same merge_key), then the TDX restaurants no curated place matched.
    """
    curated = list((layers.get(CURATED) or {}).get("places", []))
    tdx = list((layers.get(TDX) or {}).get("places", []))
    by_key = {merge_key(place["name"], place["address"]): place for place in tdx}
    places: list[dict[str, Any]] = []
    used: set[str] = set()
    for place in curated:
        key = merge_key(place["name"], place["address"])
        match = by_key.get(key)
        places.append(place if match is None else _merged(place, match))
        if match is not None:
            used.add(key)
    places += [place for key, place in by_key.items() if key not in used]
    all_sources = {sid: source for layer in layers.values() for sid, source in (layer or {}).get("sources", {}).items()}
    return {sid: all_sources[sid] for sid in _cited(places) if sid in all_sources}, places


def _cited(places: list[dict[str, Any]]) -> list[str]:
    cited: dict[str, None] = {}
    for place in places:
        cited.update(dict.fromkeys(place["field_sources"].values()))
        cited.update(dict.fromkeys(place["dietary_evidence"].values()))
        if place.get("coordinates"):
            cited[place["coordinates"]["source"]] = None
    return list(cited)
