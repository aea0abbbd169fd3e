"""Events: the versioned (for now demo) events snapshot and its read-only search (docs/design.md §5)."""

from shared.events.search import (
    EventSnapshot,
    InvalidDateRange,
    load_event_snapshot,
    search_local_events,
    weekend_range,
)

__all__ = ["EventSnapshot", "InvalidDateRange", "load_event_snapshot", "search_local_events", "weekend_range"]
