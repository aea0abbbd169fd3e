"""The shops nearest a shared location, by straight-line distance, from sourced coordinates only.

A place is measured only when the catalog records its position with a source (``Place.coordinates``);
a place without one is never placed on a map or guessed from its address. Distances are geodesic
(shared.geo.distance_m), never a walking or driving route.

Outcomes (``shared.geo.NearStatus``): ``ok`` (the nearest, at most ``NEAREST_MAX``, within ``NEAR_LIMIT_M``);
``none_located`` (no shop of the diet asked has sourced coordinates: the shipped catalog today);
``none_near`` (some have, none within the limit); ``unavailable`` (the catalog cannot be read).

Source: docs/data.md (Near me), docs/design.md §5.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from shared.geo import NEAR_LIMIT_M, NEAREST_MAX, NearStatus, Point, distance_m
from shared.places.catalog import CatalogError, PlaceCatalog, Source, load_place_catalog
from shared.places.search import areas_with_places, normalize_dietary_type, place_matches_diet, place_view


@dataclass(frozen=True)
class NearPlace:
    """One shop and how far it is.

    Attributes:
        view: the place as search_local_places lists it (shared.places.search.place_view).
        distance_m: straight-line metres from the shared location.
        position_source: the source of its coordinates.
    """

    view: dict[str, Any]
    distance_m: float
    position_source: Source


@dataclass(frozen=True)
class NearbyPlaces:
    """The nearest shops to one point.

    Attributes:
        status: see NearStatus.
        near: nearest first, at most NEAREST_MAX (only with ``ok``).
        area_choices: townships that have shops (for the buttons when none is listed).
        nearest_m: with ``none_near``, how far the nearest located shop is (metres); else None.
        dietary_type: the canonical diet the shops were filtered by ("any" for none).
        located_any: some shop, of any diet, has sourced coordinates (with ``none_located`` for a diet:
            the shops with a position list none of that diet, not that no shop has a position).
    """

    status: NearStatus
    near: tuple[NearPlace, ...] = ()
    area_choices: tuple[str, ...] = ()
    nearest_m: float | None = None
    dietary_type: str = "any"
    located_any: bool = False


def nearest_places(point: Point, *, dietary_type: str | None = None, catalog: PlaceCatalog | None = None,
                   limit: int = NEAREST_MAX, within_m: float = NEAR_LIMIT_M) -> NearbyPlaces:
    """The shops nearest ``point`` that have sourced coordinates.

    Args:
        point: the shared location (WGS 84 degrees).
        dietary_type: as search_local_places (None or "any": every shop).
        catalog: default load_place_catalog().
        limit: at most this many.
        within_m: farther shops are not listed.
    Returns:
        NearbyPlaces; never raises for an unreadable catalog (``unavailable``).
    Raises:
        UnknownDietaryType: dietary_type is not a known type.
    """
    diet = normalize_dietary_type(dietary_type)
    try:
        catalog = load_place_catalog() if catalog is None else catalog
    except CatalogError:
        return NearbyPlaces(NearStatus.UNAVAILABLE, dietary_type=diet)
    choices = tuple(areas_with_places(catalog=catalog) or ())
    measured = sorted(
        (distance_m(point, Point(place.coordinates.lat, place.coordinates.lng)), place.id, place) for place in catalog.places
        if place.coordinates is not None and place_matches_diet(place, diet))
    if not measured:
        located_any = any(place.coordinates is not None for place in catalog.places)
        return NearbyPlaces(NearStatus.NONE_LOCATED, area_choices=choices, dietary_type=diet, located_any=located_any)
    near = tuple(NearPlace(place_view(place, catalog), metres, catalog.sources[place.coordinates.source])
                 for metres, _, place in measured[:limit] if metres <= within_m and place.coordinates)
    if not near:
        return NearbyPlaces(NearStatus.NONE_NEAR, area_choices=choices, nearest_m=measured[0][0], dietary_type=diet)
    return NearbyPlaces(NearStatus.OK, near, choices, dietary_type=diet)
