"""Fixtures of the agent tests: the Gemini stand-in on loopback (one per module), an in-memory store
and settings that point the real google-genai client at the stand-in."""
from __future__ import annotations

import pytest

from shared.store.memory import MemoryStore
from tests.unit.agent.agent_support import model_settings
from tools.gemini_standin import GeminiStandin


@pytest.fixture(scope="module")
def standin():
    """The stand-in, and the tools' declarations built before the first turn, as functions/agent does
    at start-up (shared.wiring.model_handler); ADK is imported here, not at collection."""
    from shared.agent.agent import warm_up

    warm_up()
    with GeminiStandin() as server:
        yield server


@pytest.fixture
def store():
    return MemoryStore()


@pytest.fixture
def settings(standin):
    return model_settings(standin.url)
