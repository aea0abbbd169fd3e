"""Built snapshots by version, per process: a versioned snapshot's parts are read and parsed once.

The events and places snapshots (docs/data.md) are immutable once written: a version names one content, so
a process may keep what it built from it. Versions only move forward, so a small bound is enough: at most
``size`` versions are kept, and a new one beyond that clears the rest.
"""
from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")


class VersionCache(Generic[T]):
    """Thread-safe ``version → built value`` with a bound of ``size`` versions."""

    def __init__(self, size: int = 4) -> None:
        self._size = size
        self._built: dict[str, T] = {}
        self._lock = threading.Lock()

    def get(self, version: str, build: Callable[[], T]) -> T:
        """The value built for ``version``, building it with ``build()`` (outside the lock: it reads the
        store) on first use. Two threads may both build a new version; both get an equal value and one
        is kept. Raises whatever ``build`` raises, and keeps nothing then."""
        with self._lock:
            cached = self._built.get(version)
        if cached is not None:
            return cached
        built = build()
        with self._lock:
            if version not in self._built and len(self._built) >= self._size:
                self._built.clear()
            return self._built.setdefault(version, built)
