"""shared.version_cache: a versioned snapshot is built once per process, within a bound of versions."""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest

from shared.version_cache import VersionCache


def test_version_cache_builds_a_version_once_and_keeps_at_most_its_bound():
    cache: VersionCache[str] = VersionCache(size=2)
    built: list[str] = []

    def build(version: str):
        return lambda: built.append(version) or f"built {version}"

    assert cache.get("v1", build("v1")) == "built v1"
    assert cache.get("v1", build("v1")) == "built v1"
    cache.get("v2", build("v2"))
    cache.get("v3", build("v3"))  # over the bound: the older ones go
    cache.get("v1", build("v1"))
    assert built == ["v1", "v2", "v3", "v1"]


def test_version_cache_keeps_nothing_when_the_build_fails():
    cache: VersionCache[str] = VersionCache()

    def broken() -> str:
        raise ValueError("part missing")

    with pytest.raises(ValueError):
        cache.get("v1", broken)
    assert cache.get("v1", lambda: "built") == "built"


def test_version_cache_threads_on_one_version_all_get_the_kept_value():
    cache: VersionCache[object] = VersionCache()
    with ThreadPoolExecutor(max_workers=8) as pool:
        values = list(pool.map(lambda _: cache.get("v1", object), range(32)))
    assert len({id(value) for value in values}) == 1
