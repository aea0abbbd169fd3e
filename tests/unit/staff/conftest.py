"""The staff tests' set-up: the relay's and sweep's settings (a staff group, a 10-minute reminder,
three queue attempts) and the unit tests' store (tests/unit/conftest.py; test_staff_domain.py has its own, with two allowed
members), and the webhook service in process with the staff group and two allowed members."""
from __future__ import annotations

import pytest

from shared.config import WEBHOOK_REQUIRED, Settings
from shared.store import DocumentStore
from shared.webhook.service import WebhookService
from shared.wiring import line_gateway, open_store
from tests.unit.conftest import store_at

GROUP = "C0a1b2c3d4e5f60718293a4b5c6d7e8f9"
STAFF = "U1111111111111111111111111111aaaa"
USER = "U7a1e5b0c2d3f4a5b6c7d8e9f0a1b2c3d"
PUSH = "/v2/bot/message/push"
#: Two allowed staff members (``LOCAL_STAFF_USER_IDS``) of the in-process webhook ``service``.
STAFF_MEMBERS = {"A": "U1111111111111111111111111111aaaa", "B": "U2222222222222222222222222222bbbb"}


@pytest.fixture
def settings(base_env) -> Settings:
    return Settings.from_env({**base_env, "LOCAL_STAFF_GROUP_ID": GROUP, "LOCAL_STAFF_REMIND_AFTER_SECONDS": "600",
                              "LOCAL_QUEUE_MAX_ATTEMPTS": "3", "RECONCILE_FUNCTION_URL": "http://127.0.0.1:9/"},
                             required=WEBHOOK_REQUIRED)


@pytest.fixture
def store(settings) -> DocumentStore:
    return store_at(settings.store_url, deadline_seconds=2.0)


@pytest.fixture
def service(base_env, clock) -> WebhookService:
    """The webhook service in process (the unit tests' store, the LINE stand-in, the test clock) with the
    staff group and the two ``STAFF_MEMBERS`` allowed."""
    env = {**base_env, "LOCAL_STAFF_GROUP_ID": GROUP, "LOCAL_STAFF_USER_IDS": ",".join(STAFF_MEMBERS.values())}
    settings = Settings.from_env(env, required=WEBHOOK_REQUIRED)
    return WebhookService(settings, open_store(settings), line_gateway(settings), clock=clock)
