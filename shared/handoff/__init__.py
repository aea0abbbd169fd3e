"""Handoff requests: draft → confirm → create exactly once, reconcile unknown outcomes (docs/design.md §4)."""
