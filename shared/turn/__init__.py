"""Turn engine: fixed entries, the offline router, and one read-only tool per turn (docs/design.md §7)."""
