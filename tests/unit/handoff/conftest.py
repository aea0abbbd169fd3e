"""Fixtures for the handoff domain: settings on the unit tests' store (tests/unit/conftest.py), the LINE stand-in, an actor."""
from __future__ import annotations

import pytest

from shared.config import WEBHOOK_REQUIRED, Settings
from shared.identity import Actor
from shared.store import DocumentStore
from tests.unit.conftest import store_at, stored_documents

USER = "U7a1e5b0c2d3f4a5b6c7d8e9f0a1b2c3d"
OTHER_USER = "U0000000000000000000000000000beef"


@pytest.fixture
def actor() -> Actor:
    return Actor("test-tenant", USER)


@pytest.fixture
def make_settings(base_env):
    """Settings from the base environment plus overrides (variable name → value)."""

    def make(**overrides: str) -> Settings:
        return Settings.from_env({**base_env, "LOCAL_QUEUE_MAX_ATTEMPTS": "3", **overrides},
                                 required=WEBHOOK_REQUIRED)

    return make


@pytest.fixture
def settings(make_settings) -> Settings:
    return make_settings()


@pytest.fixture
def store(settings) -> DocumentStore:
    return store_at(settings.store_url, deadline_seconds=2.0)


def all_documents(settings: Settings) -> list[tuple[str, str, str]]:
    """Every stored document as (collection, id, JSON text), for before/after comparisons."""
    return stored_documents(settings.store_url)


def count(store: DocumentStore, collection: str) -> int:
    return len(store.query(collection))
