"""The staff relay's and sweep's settings (a staff group, a 10-minute reminder, three queue attempts)
and a real SQLite store; test_staff_domain.py has its own (two allowed staff members)."""
from __future__ import annotations

import pytest

from shared.config import WEBHOOK_REQUIRED, Settings
from shared.store.sqlite import SqliteStore, path_from_url

GROUP = "C0a1b2c3d4e5f60718293a4b5c6d7e8f9"
STAFF = "U1111111111111111111111111111aaaa"
USER = "U7a1e5b0c2d3f4a5b6c7d8e9f0a1b2c3d"
PUSH = "/v2/bot/message/push"


@pytest.fixture
def settings(base_env) -> Settings:
    return Settings.from_env({**base_env, "LOCAL_STAFF_GROUP_ID": GROUP, "LOCAL_STAFF_REMIND_AFTER_SECONDS": "600",
                              "LOCAL_QUEUE_MAX_ATTEMPTS": "3", "RECONCILE_FUNCTION_URL": "http://127.0.0.1:9/"},
                             required=WEBHOOK_REQUIRED)


@pytest.fixture
def store(settings) -> SqliteStore:
    return SqliteStore(path_from_url(settings.store_url), deadline_seconds=2.0)
