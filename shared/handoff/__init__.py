"""Handoff requests: draft → confirm → create exactly once, reconcile unknown outcomes (DESIGN §4)."""
