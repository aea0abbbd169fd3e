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


@pytest.fixture(scope="module")
def gemini():
    """The stand-in the webhook tests' functions/agent worker reaches (one per module)."""
    with GeminiStandin() as server:
        yield server


def open_pair(base_env, clock, gemini, reader: str):
    """The webhook and the queued-event worker with the model on the stand-in (``LOCAL_READER=reader``),
    its script emptied (tests.unit.agent.test_agent_webhook.ModelPair)."""
    from tests.unit.agent.test_agent_webhook import ModelPair

    gemini.script([])
    env = {**base_env, "LOCAL_MODEL": "standin", "GOOGLE_GEMINI_BASE_URL": gemini.url,
           "LOCAL_MODEL_TIMEOUT_SECONDS": "30", "LOCAL_READER": reader}
    return ModelPair(env, clock)


@pytest.fixture
def pair(base_env, clock, gemini):
    """The model reads every free-text message (``LOCAL_READER=model_first``)."""
    p = open_pair(base_env, clock, gemini, "model_first")
    yield p
    p.queue.close()
