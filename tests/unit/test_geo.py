"""Positions, geodesic distance and the county's outline (shared/geo.py)."""
from __future__ import annotations

import json
import math

import pytest

from shared.geo import BORDER_MARGIN_M, OUTLINE_PATH, Point, checked_point, distance_m, in_county, outside_by_m


def test_distance_is_geodesic_metres():
    # one minute of latitude along a meridian is about 1,843 m at 24° N (WGS 84); a degree of longitude
    # at the equator is 111,319.5 m
    assert distance_m(Point(24.0, 120.5), Point(24.0 + 1 / 60, 120.5)) == pytest.approx(1843, abs=3)
    assert distance_m(Point(0.0, 120.0), Point(0.0, 121.0)) == pytest.approx(111_319.5, abs=1)
    assert distance_m(Point(24.08, 120.54), Point(24.08, 120.54)) == 0


@pytest.mark.parametrize(("name", "lat", "lng"), [
    ("彰化車站", 24.0818, 120.5386), ("員林車站", 23.9593, 120.5701), ("鹿港天后宮", 24.0572, 120.4337),
    ("二林", 23.8998, 120.3748), ("田中車站", 23.8578, 120.5909), ("二水車站", 23.8130, 120.6180),
])
def test_places_in_the_county_are_in_it(name, lat, lng):
    assert in_county(Point(lat, lng)), name


@pytest.mark.parametrize(("name", "lat", "lng"), [
    ("臺中市中心", 24.1477, 120.6736), ("南投市", 23.9096, 120.6856), ("嘉義市", 23.4801, 120.4491),
    ("臺北車站", 25.0478, 121.5170), ("臺灣海峽", 24.0, 120.1),
])
def test_places_outside_the_county_are_outside_it(name, lat, lng):
    assert not in_county(Point(lat, lng)), name
    assert outside_by_m(Point(lat, lng)) > BORDER_MARGIN_M


def test_a_point_just_outside_the_coarse_outline_counts_as_in_the_county():
    ring = json.loads(OUTLINE_PATH.read_text(encoding="utf-8"))["ring"]
    west = min(ring, key=lambda vertex: vertex[0])  # the westernmost vertex: the coast
    metres_per_degree = 111_320 * math.cos(math.radians(west[1]))
    near = Point(west[1], west[0] - 1_000 / metres_per_degree)
    far = Point(west[1], west[0] - 5_000 / metres_per_degree)
    assert 0 < outside_by_m(near) <= BORDER_MARGIN_M and in_county(near)
    assert outside_by_m(far) > BORDER_MARGIN_M and not in_county(far)


@pytest.mark.parametrize(("lat", "lng"), [(91, 120), (24, -181), (float("nan"), 120), (24, float("inf")),
                                          ("24", 120), (True, 120), (None, 120)])
def test_checked_point_refuses_what_is_not_a_position(lat, lng):
    assert checked_point(lat, lng) is None


def test_checked_point_keeps_a_position():
    assert checked_point(24, 120.5) == Point(24.0, 120.5)
