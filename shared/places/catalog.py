"""The versioned place catalog: loading, validation and the campaign window.

A catalog is one versioned document: the shipped one in the repository (``data/places-catalog.json``,
the fallback) or an imported snapshot in the store (shared.places.snapshots, the newest answers).
Every field of a place names its source; dietary types are claimed only with evidence; facts no
source records (open now, hours, coordinates, walking distance, accessibility) are JSON null. A
position is kept only with the source that records it (``Coordinates``, from shared.geo).

Which catalog ``load_place_catalog()`` answers with is set per event by ``catalog_scope`` (the store's
newest snapshot, read at most once per event); outside a scope it is the shipped file.

Source: docs/design.md §5 (Catalog: unknown fields, campaign deadline, versioned snapshots).
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import json
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path
from types import MappingProxyType
from typing import Any, Callable, Iterator, Literal, Mapping

from shared.address import AddressReading, AddressSkip, read_address
from shared.areas import DATA_DIR, UnknownArea, normalize_area
from shared.clock import TAIPEI, require_aware
from shared.geo import Coordinates, checked_point, in_county

DEFAULT_CATALOG_PATH = DATA_DIR / "places-catalog.json"

#: Dietary types a place can have evidence for, loosest first. "vegetarian" = some vegetarian option.
EVIDENCE_TYPES: tuple[str, ...] = ("vegetarian", "vegan", "ovo_lacto", "lacto")

#: Fields every place carries, null when the snapshot does not know them.
UNKNOWABLE_FIELDS: tuple[str, ...] = ("open_now", "hours", "coordinates", "walking_distance_m", "accessibility")

#: Fields whose source must be named in ``field_sources`` (phone: when the place has one).
SOURCED_FIELDS: tuple[str, ...] = ("name", "area", "address", "phone")


CampaignState = Literal["not_started", "active_by_announcement", "ended"]


class CatalogError(Exception):
    """The place catalog cannot be used; searches answer "unavailable". Not retryable."""


class CatalogMissing(CatalogError):
    """The catalog file does not exist or cannot be read."""


class CatalogInvalid(CatalogError, ValueError):
    """The catalog file breaks the docs/design.md §5 contract; the message lists every problem."""


@dataclass(frozen=True)
class Source:
    """Where a fact comes from.

    Attributes:
        id: key in the catalog's ``sources``, e.g. "festival_list".
        url: the page or file that was read.
        kind: machine word, e.g. "official_poster", "merchant_menu_on_platform".
        accessed_on: the day it was read (Asia/Taipei calendar date).
        scope: what the source does and does not establish.
    """

    id: str
    url: str
    kind: str
    accessed_on: date
    scope: str
    name: str | None = None

    def as_dict(self) -> dict[str, str | None]:
        """JSON-ready view: {id, kind, name (people's words, or None: the kind's words), accessed_on
        (YYYY-MM-DD), url, scope}."""
        return {
            "id": self.id,
            "kind": self.kind,
            "name": self.name,
            "accessed_on": self.accessed_on.isoformat(),
            "url": self.url,
            "scope": self.scope,
        }


@dataclass(frozen=True)
class Campaign:
    """The festival's stamp-collection window, as announced.

    Attributes:
        name: the campaign's name as recorded.
        starts_at: first instant of the window, aware (+08:00 in the file).
        ends_at: first instant after the window (end exclusive), aware.
        carnival_date: the carnival day (Asia/Taipei calendar date).
        source_id: the source of these dates.
    """

    name: str
    starts_at: datetime
    ends_at: datetime
    carnival_date: date
    source_id: str

    def state_at(self, now: datetime) -> CampaignState:
        """Say where ``now`` falls in the window.

        Args:
            now: an aware instant; compared in Asia/Taipei.
        Returns:
            "not_started" before starts_at; "active_by_announcement" from starts_at up to
            ends_at − 1 µs (so ends_at − 1 s is active); "ended" from ends_at on.
        Raises:
            ValueError: ``now`` is naive.
        Source: docs/design.md §5 (campaign state; the campaign's stamps run 8/1 to 9/30 17:00, end
        exclusive).
        """
        local_now = require_aware(now).astimezone(TAIPEI)
        if local_now < self.starts_at:
            return "not_started"
        if local_now < self.ends_at:
            return "active_by_announcement"
        return "ended"

    def as_dict(self) -> dict[str, str | bool]:
        """JSON-ready view; times in Asia/Taipei ISO 8601 with +08:00, end exclusive."""
        return {
            "name": self.name,
            "starts_at": self.starts_at.astimezone(TAIPEI).isoformat(),
            "ends_at": self.ends_at.astimezone(TAIPEI).isoformat(),
            "end_is_exclusive": True,
            "carnival_date": self.carnival_date.isoformat(),
            "source": self.source_id,
        }


def parse_coordinates(raw: Any, place_id: str) -> Coordinates | None:
    """Read a place's ``coordinates`` field.

    Args:
        raw: JSON null, or {"lat": number, "lng": number, "source": "<source id>"}.
        place_id: for the error message.
    Returns:
        Coordinates, or None for null (the snapshot has no sourced position).
    Raises:
        CatalogInvalid: not an object of exactly those keys, a non-number or out-of-range degree, or
            a blank source (whether the source is known is checked with the other source ids).
    Source: docs/design.md §5 (Catalog: coordinates only with a source).
    """
    if raw is None:
        return None
    if not isinstance(raw, dict) or set(raw) != {"lat", "lng", "source"}:
        raise CatalogInvalid(f"place {place_id!r}: coordinates must be null or {{lat, lng, source}}")
    point, source = checked_point(raw["lat"], raw["lng"]), raw["source"]
    if point is None:
        raise CatalogInvalid(f"place {place_id!r}: coordinates out of range or not a number")
    if not isinstance(source, str) or not source.strip():
        raise CatalogInvalid(f"place {place_id!r}: coordinates.source must name a source")
    return Coordinates(point.lat, point.lng, source)


def coordinates_dict(coordinates: Coordinates | None) -> dict[str, Any] | None:
    """A position in the catalog's JSON shape ``{"lat", "lng", "source"}``, or None."""
    return None if coordinates is None else {"lat": coordinates.lat, "lng": coordinates.lng,
                                             "source": coordinates.source}


@dataclass(frozen=True)
class Place:
    """One shop, with a source for every field and evidence for every dietary type.

    Attributes:
        id: stable id, e.g. "vegfest2026-22".
        name, area, address, phone: as recorded; area is a township's full name; phone None when no
            source records one.
        field_sources: {field name: source id} for name, area, address, and phone when there is one.
        dietary_evidence: {dietary type: source id}; only these types may match a search; empty when
            no source states a diet.
        dietary_scope: what the evidence covers (e.g. "not every dish qualifies").
        unknown: {field: value} for UNKNOWABLE_FIELDS; None means the snapshot does not know
            (``coordinates``: its JSON shape when known).
        coordinates: the sourced position (shared.geo.Coordinates), or None.
        in_campaign: the place is on the festival's list, so its cards say where the campaign stands.
    """

    id: str
    name: str
    area: str
    address: str
    phone: str | None
    field_sources: Mapping[str, str]
    dietary_evidence: Mapping[str, str]
    dietary_scope: str
    unknown: Mapping[str, Any]
    coordinates: Coordinates | None = None
    in_campaign: bool = False

    @property
    def dietary_options(self) -> tuple[str, ...]:
        """Dietary types with evidence, in EVIDENCE_TYPES order."""
        return tuple(kind for kind in EVIDENCE_TYPES if kind in self.dietary_evidence)

    @property
    def cited_sources(self) -> tuple[tuple[str, str], ...]:
        """(field or dietary type, source id) for every source this place cites, coordinates included."""
        located = (("coordinates", self.coordinates.source),) if self.coordinates else ()
        return (*self.field_sources.items(), *self.dietary_evidence.items(), *located)

    @property
    def unknown_fields(self) -> tuple[str, ...]:
        """UNKNOWABLE_FIELDS that this snapshot records as null, in that order."""
        return tuple(field for field in UNKNOWABLE_FIELDS if self.unknown[field] is None)


@dataclass(frozen=True)
class PlaceCatalog:
    """A validated, read-only place catalog.

    Attributes:
        catalog_version: e.g. "places-2026-09-27.1"; changes whenever the content changes.
        recorded_on: the day the snapshot was recorded (Asia/Taipei).
        sources: {source id: Source}.
        campaign: the festival window.
        places: in file order.
    """

    catalog_version: str
    recorded_on: date
    sources: Mapping[str, Source]
    campaign: Campaign
    places: tuple[Place, ...]


def _parse_source(source_id: str, raw: Mapping[str, Any]) -> Source:
    return Source(
        id=source_id,
        url=raw["url"],
        kind=raw["kind"],
        accessed_on=date.fromisoformat(raw["accessed_on"]),
        scope=raw.get("scope") or raw["note"],
        name=raw.get("name") or None,
    )


def _parse_campaign(raw: Mapping[str, Any]) -> Campaign:
    if raw.get("end_is_exclusive") is not True:
        raise CatalogInvalid("campaign.end_is_exclusive must be true")
    return Campaign(
        name=raw["name"],
        starts_at=require_aware(datetime.fromisoformat(raw["starts_at"]), "campaign.starts_at"),
        ends_at=require_aware(datetime.fromisoformat(raw["ends_at"]), "campaign.ends_at"),
        carnival_date=date.fromisoformat(raw["carnival_date"]),
        source_id=raw["source"],
    )


def _parse_place(raw: Mapping[str, Any]) -> Place:
    missing_unknown = [field for field in UNKNOWABLE_FIELDS if field not in raw]
    if missing_unknown:
        raise CatalogInvalid(f"place {raw.get('id')!r}: fields must be present (null if unknown): {missing_unknown}")
    coordinates = parse_coordinates(raw["coordinates"], raw["id"])
    unknown = {field: raw[field] for field in UNKNOWABLE_FIELDS}
    unknown["coordinates"] = coordinates_dict(coordinates)
    return Place(
        id=raw["id"],
        name=raw["name"],
        area=raw["area"],
        address=raw["address"],
        phone=raw["phone"] or None,
        field_sources=MappingProxyType(dict(raw["field_sources"])),
        dietary_evidence=MappingProxyType(dict(raw["dietary_evidence"])),
        dietary_scope=raw["dietary_scope"],
        unknown=MappingProxyType(unknown),
        coordinates=coordinates,
        in_campaign=bool(raw.get("in_campaign", False)),
    )


def place_to_dict(place: Place) -> dict[str, Any]:
    """A place in the catalog file's JSON shape (what _parse_place reads back to an equal Place)."""
    return {
        "id": place.id, "name": place.name, "area": place.area, "address": place.address, "phone": place.phone,
        "field_sources": dict(place.field_sources), "dietary_options": list(place.dietary_options),
        "dietary_evidence": dict(place.dietary_evidence), "dietary_scope": place.dietary_scope,
        "in_campaign": place.in_campaign, **dict(place.unknown),
    }


def _area_problems(place: Place) -> list[str]:
    """The township: a full Changhua township name, and the one its address names (when it names one)."""
    problems: list[str] = []
    try:
        if normalize_area(place.area) != place.area:
            problems.append(f"{place.id}: area must be a full township name, got {place.area!r}")
    except UnknownArea:
        problems.append(f"{place.id}: area {place.area!r} is not a Changhua township")
    reading = read_address(place.address)  # an address that names no township is no problem: area has a source
    if reading is AddressSkip.OTHER_COUNTY:
        problems.append(f"{place.id}: address is in another county")
    elif isinstance(reading, AddressReading) and reading.township != place.area:
        problems.append(f"{place.id}: address is in {reading.township}, area says {place.area}")
    return problems


def _source_problems(place: Place, sources: Mapping[str, Source]) -> list[str]:
    """Every recorded fact names a known source; coordinates lie in the county."""
    problems: list[str] = []
    for field in SOURCED_FIELDS:
        if field not in place.field_sources and (field != "phone" or place.phone is not None):
            problems.append(f"{place.id}: field_sources lacks {field!r}")
    for field in ("open_now", "hours", "walking_distance_m", "accessibility"):
        if place.unknown[field] is not None and field not in place.field_sources:
            problems.append(f"{place.id}: {field} is recorded without a source in field_sources")
    if place.coordinates is not None and not in_county(place.coordinates.point):
        problems.append(f"{place.id}: coordinates outside Changhua County")
    problems += [f"{place.id}: {key} cites unknown source {sid!r}" for key, sid in place.cited_sources
                 if sid not in sources]
    return problems


def _diet_problems(place: Place, declared: list[str] | None) -> list[str]:
    """Known dietary types only, and dietary_options listing exactly those with evidence."""
    problems = [f"{place.id}: unknown dietary type {kind!r}" for kind in place.dietary_evidence
                if kind not in EVIDENCE_TYPES]
    if set(declared or ()) != set(place.dietary_evidence):
        problems.append(f"{place.id}: dietary_options must list exactly the types in dietary_evidence")
    return problems


def _place_problems(place: Place, sources: Mapping[str, Source], declared: list[str] | None) -> list[str]:
    return _area_problems(place) + _source_problems(place, sources) + _diet_problems(place, declared)


def _problems(catalog: PlaceCatalog, declared_options: Mapping[str, list[str]]) -> list[str]:
    """List every way a parsed catalog breaks the contract (empty when it is valid)."""
    problems: list[str] = []
    campaign = catalog.campaign
    if campaign.starts_at >= campaign.ends_at:
        problems.append("campaign.starts_at must be before campaign.ends_at")
    if campaign.source_id not in catalog.sources:
        problems.append(f"campaign.source {campaign.source_id!r} is not a known source")
    ids = [place.id for place in catalog.places]
    if len(ids) != len(set(ids)):
        problems.append("place ids must be unique")
    for place in catalog.places:
        problems += _place_problems(place, catalog.sources, declared_options.get(place.id))
    return problems


def catalog_from_dict(raw: Mapping[str, Any], origin: str) -> PlaceCatalog:
    """Parse and validate a catalog document (the catalog file's JSON shape).

    Args:
        raw: {catalog_version, recorded_on, sources {id: {url, kind, name?, accessed_on, scope}},
            campaign, places [...]}.
        origin: where it came from, for error messages (a path, or ``store:<version>``).
    Returns:
        The validated PlaceCatalog.
    Raises:
        CatalogInvalid: every way the document breaks the contract, in one message.
    """
    try:
        catalog = PlaceCatalog(
            catalog_version=raw["catalog_version"],
            recorded_on=date.fromisoformat(raw["recorded_on"]),
            sources=MappingProxyType({sid: _parse_source(sid, s) for sid, s in raw["sources"].items()}),
            campaign=_parse_campaign(raw["campaign"]),
            places=tuple(_parse_place(p) for p in raw["places"]),
        )
        declared_options = {p["id"]: p["dietary_options"] for p in raw["places"]}
    except CatalogInvalid:
        raise
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise CatalogInvalid(f"place catalog {origin}: {type(exc).__name__}: {exc}") from exc
    problems = _problems(catalog, declared_options)
    if problems:
        raise CatalogInvalid("; ".join(problems))
    return catalog


@functools.lru_cache(maxsize=8)
def _load_cached(path: Path) -> PlaceCatalog:
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise CatalogMissing(f"cannot read place catalog {path}") from exc
    except json.JSONDecodeError as exc:
        raise CatalogInvalid(f"place catalog {path} is not JSON: {exc}") from exc
    return catalog_from_dict(raw, str(path))


def load_shipped_catalog() -> PlaceCatalog:
    """The shipped catalog (``DEFAULT_CATALOG_PATH``, read at call time), whatever scope is open.
    Raises CatalogMissing, CatalogInvalid as load_place_catalog."""
    return _load_cached(Path(DEFAULT_CATALOG_PATH).resolve())


#: The catalog of the event being handled (``catalog_scope``): a loader, called at most once per scope.
_SCOPE: contextvars.ContextVar[Callable[[], PlaceCatalog] | None] = contextvars.ContextVar(
    "places_catalog_scope", default=None)


@contextlib.contextmanager
def catalog_scope(loader: Callable[[], PlaceCatalog]) -> Iterator[None]:
    """Within the block, ``load_place_catalog()`` answers with ``loader()``'s catalog, loaded on first use
    and kept for the block (one event answers from one version).

    Args:
        loader: returns the catalog; may raise CatalogError (then every use in the block raises it:
            searches answer ``unavailable``, name lookups find nothing).
    """
    outcome: list[Any] = []

    def once() -> PlaceCatalog:
        if not outcome:
            try:
                outcome.append(loader())
            except CatalogError as exc:
                outcome.append(exc)
        if isinstance(outcome[0], CatalogError):
            raise outcome[0]
        return outcome[0]

    token = _SCOPE.set(once)
    try:
        yield
    finally:
        _SCOPE.reset(token)


def load_place_catalog(path: str | Path | None = None) -> PlaceCatalog:
    """Load and validate a place catalog.

    Args:
        path: a JSON file, loaded once per resolved path per process. None: the catalog of the
            enclosing ``catalog_scope`` (the store's newest snapshot), else ``data/places-catalog.json``
            in the repository or bundle.
    Returns:
        The validated PlaceCatalog (the same object on later calls with the same path or scope).
    Raises:
        CatalogMissing: the file (or the scope's store) cannot be read.
        CatalogInvalid: the file is not JSON or breaks the contract (unknown source ids, a place
            outside the 26 townships, dietary_options not matching dietary_evidence, a missing
            unknown field, coordinates outside the county, naive campaign times, a non-exclusive end, ...).
    Source: docs/design.md §5 (Catalog).
    """
    scoped = _SCOPE.get() if path is None else None
    if scoped is not None:
        return scoped()
    return _load_cached(Path(path or DEFAULT_CATALOG_PATH).resolve())
