"""Fixtures for the handoff domain: settings on a real SQLite file, the LINE stand-in, an actor."""
from __future__ import annotations

import sqlite3

import pytest

from shared.config import WEBHOOK_REQUIRED, Settings
from shared.identity import Actor
from shared.store.sqlite import SqliteStore, path_from_url

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
def store(settings) -> SqliteStore:
    return SqliteStore(path_from_url(settings.store_url), deadline_seconds=2.0)


def all_documents(settings: Settings) -> list[tuple[str, str, str]]:
    """Every stored document as (collection, id, JSON text), for before/after comparisons."""
    conn = sqlite3.connect(path_from_url(settings.store_url))
    try:
        return conn.execute("SELECT collection, id, data FROM documents ORDER BY collection, id").fetchall()
    except sqlite3.OperationalError:  # no table yet: nothing stored
        return []
    finally:
        conn.close()


def count(store: SqliteStore, collection: str) -> int:
    return len(store.query(collection))
