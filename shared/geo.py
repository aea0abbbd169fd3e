"""Positions, straight-line distances and the county's outline.

- ``Coordinates``: a place's or an event's position as a source records it (WGS 84 degrees, with the
  source that records it). ``Point``: a position without a source (a location a resident shared).
- ``distance_m``: the geodesic (straight-line, on the WGS 84 ellipsoid) distance in metres, from
  GeographicLib (Karney's algorithm; https://geographiclib.sourceforge.io/Python/doc/). It is not a
  walking or driving route, and replies say so.
- ``in_county``: whether a point lies inside Changhua's outline (``data/changhua-outline.json``: the
  Institute of Transportation's 2010 county boundary as simplified by g0v/twgeojson, 78 points) or
  within ``BORDER_MARGIN_M`` of it. The outline is coarse, so a point up to the margin outside it is
  counted as in the county: a resident at the border is never told they are elsewhere; a point a
  little way into a neighbouring county may be counted as in (it then finds what is near, or is told
  nothing is near). Taichung's city centre (24.1477, 120.6736) is about 8 km outside the outline.

Source: docs/data.md (Near me), docs/design.md §5.
"""
from __future__ import annotations

import enum
import functools
import json
import math
from dataclasses import dataclass
from pathlib import Path

from geographiclib.geodesic import Geodesic

from shared.areas import DATA_DIR

OUTLINE_PATH = DATA_DIR / "changhua-outline.json"

#: A point this close to the outline (metres) counts as in the county (the outline is coarse).
BORDER_MARGIN_M = 2_000.0

#: At most this many places or events are listed by distance.
NEAREST_MAX = 5
#: Farther than this (metres, straight line) a place or event is not "near": the county is about
#: 45 km across, and an older resident on foot, by bus or on a scooter does not go farther for a meal
#: or a market. Chosen for LOCAL; docs/data.md (Near me).
NEAR_LIMIT_M = 15_000.0


class NearStatus(enum.StrEnum):
    """What a look-up of the places or events nearest a point found.

    OK: the nearest, at most NEAREST_MAX, within NEAR_LIMIT_M.
    NONE_LOCATED: none (of the kind asked) has a position from a source.
    NONE_NEAR: some have, none within NEAR_LIMIT_M.
    UNAVAILABLE: the data cannot be read.
    """

    OK = "ok"
    NONE_LOCATED = "none_located"
    NONE_NEAR = "none_near"
    UNAVAILABLE = "unavailable"


#: Metres per degree of latitude, and of longitude at the equator (WGS 84, rounded); used only for
#: the distance to the outline's edges, where a few metres do not matter.
_M_PER_DEG_LAT = 110_574.0
_M_PER_DEG_LNG = 111_320.0


@dataclass(frozen=True)
class Point:
    """A position in WGS 84 degrees, as LINE's location message gives it.

    Attributes:
        lat: latitude, -90..90.
        lng: longitude, -180..180.
    """

    lat: float
    lng: float


@dataclass(frozen=True)
class Coordinates:
    """Where a place or an event is, as a source records it (WGS 84 degrees).

    Attributes:
        lat: latitude in degrees, -90..90.
        lng: longitude in degrees, -180..180.
        source: where it comes from: a key of the place catalog's ``sources``, or ``tdx`` for an event.
    """

    lat: float
    lng: float
    source: str

    @property
    def point(self) -> Point:
        """The position without its source."""
        return Point(self.lat, self.lng)


def checked_point(lat: object, lng: object) -> Point | None:
    """A Point from two numbers in range, or None (not numbers, NaN, infinite, out of range, booleans)."""
    values = []
    for value, limit in ((lat, 90.0), (lng, 180.0)):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return None
        if not math.isfinite(value) or not -limit <= value <= limit:
            return None
        values.append(float(value))
    return Point(values[0], values[1])


def distance_m(a: Point, b: Point) -> float:
    """The geodesic distance between two points on the WGS 84 ellipsoid, in metres (GeographicLib)."""
    return Geodesic.WGS84.Inverse(a.lat, a.lng, b.lat, b.lng, Geodesic.DISTANCE)["s12"]


@functools.lru_cache(maxsize=1)
def _outline() -> tuple[tuple[float, float], ...]:
    """The outline's ring as (lng, lat) pairs, first point repeated last (data/changhua-outline.json)."""
    ring = json.loads(Path(OUTLINE_PATH).read_text(encoding="utf-8"))["ring"]
    return tuple((float(lng), float(lat)) for lng, lat in ring)


def _inside(point: Point, ring: tuple[tuple[float, float], ...]) -> bool:
    """Even-odd rule: does a ray from the point eastwards cross the ring an odd number of times?"""
    inside = False
    for (x1, y1), (x2, y2) in zip(ring, ring[1:]):
        if (y1 > point.lat) != (y2 > point.lat):
            if point.lng < (x2 - x1) * (point.lat - y1) / (y2 - y1) + x1:
                inside = not inside
    return inside


def _edge_distance_m(point: Point, ring: tuple[tuple[float, float], ...]) -> float:
    """Metres from the point to the nearest edge of the ring, on a local flat projection around it
    (good to a few metres at these distances)."""
    kx = _M_PER_DEG_LNG * math.cos(math.radians(point.lat))
    nearest = math.inf
    for (x1, y1), (x2, y2) in zip(ring, ring[1:]):
        ax, ay = (x1 - point.lng) * kx, (y1 - point.lat) * _M_PER_DEG_LAT
        bx, by = (x2 - point.lng) * kx, (y2 - point.lat) * _M_PER_DEG_LAT
        dx, dy = bx - ax, by - ay
        length2 = dx * dx + dy * dy
        t = 0.0 if length2 == 0 else max(0.0, min(1.0, -(ax * dx + ay * dy) / length2))
        nearest = min(nearest, math.hypot(ax + t * dx, ay + t * dy))
    return nearest


def outside_by_m(point: Point) -> float:
    """0 when the point is inside the county's outline, else its distance to the outline in metres."""
    ring = _outline()
    return 0.0 if _inside(point, ring) else _edge_distance_m(point, ring)


def in_county(point: Point) -> bool:
    """True when the point is inside Changhua's outline or within BORDER_MARGIN_M of it (module
    docstring: the outline is coarse)."""
    return outside_by_m(point) <= BORDER_MARGIN_M
