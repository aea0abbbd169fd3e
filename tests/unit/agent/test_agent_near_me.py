"""附近… read by the model after a shared location (shared.turn.near_me through shared.agent): the model's
township-less call with the vague word 附近 is answered from the kept location like the router's, with no
location tool. Through the signed webhook, the queued-event worker and the real ADK Runner to the scripted
Gemini stand-in (as tests/unit/agent/test_agent_conversation.py)."""
from __future__ import annotations

import time

import pytest

from shared.context import EventContext
from shared.events.file_source import FileActivitySource
from shared.events.ingest import ingest_events
from shared.geo import Point
from shared.identity import Actor
from shared.places.catalog import DEFAULT_CATALOG_PATH
from shared.turn.conversation import save_location
from tests.conftest import TEST_USER
from tests.unit.agent.conftest import open_pair
from tests.unit.agent.test_agent_conversation import MONDAY, model_follow_up

pytestmark = pytest.mark.sqlite
FIXTURES = DEFAULT_CATALOG_PATH.parents[1] / "tests" / "fixtures" / "tdx"


@pytest.fixture
def pair(base_env, clock, gemini):
    clock.at = MONDAY
    p = open_pair(base_env, clock, gemini, "model_first")
    yield p
    p.queue.close()


def test_agent_near_events_after_a_shared_location_answer_from_it(pair, gemini, line_standin, clock):
    ingest_events(pair.store, FileActivitySource(FIXTURES / "changhua-activities.json"), now=MONDAY)
    ctx = EventContext(pair.settings, pair.store, None, MONDAY, Actor("test-tenant", TEST_USER), "01SEED",
                       time.monotonic() + 5)
    save_location(ctx, Point(24.0818, 120.5386))  # 彰化車站, shared a moment before
    answer, _, audit = model_follow_up(pair, gemini, line_standin, clock, "我附近有什麼活動", {
        "name": "search_local_events", "args": {"vague_place_words": ["附近"]}})
    assert "彰化藝術館常設展" in answer and "直線約" in answer and "不是步行路線" in answer
    assert (audit["source"], audit["tool"], audit["status"]) == ("model", "needs_area", "ok")
    assert "24.08" not in str(audit) and "120.53" not in str(audit)  # the point is never in the record


def test_agent_near_without_a_shared_location_gets_the_picker_with_the_location_button(pair, gemini, line_standin,
                                                                                       clock):
    answer, _, audit = model_follow_up(pair, gemini, line_standin, clock, "附近有素食嗎", {
        "name": "search_local_places", "args": {"vague_place_words": ["附近"]}})
    assert "分享我的位置" in answer and audit["status"] == "needs_area"
