"""The turn engine applies consented memory only where the question leaves the diet open, checks
the revision before and after the tool, says where the diet came from, and audits each turn
(docs/design.md §7)."""
from __future__ import annotations

import inspect
import time
from datetime import datetime, timezone

import pytest

from shared.audit import COLLECTION as AUDIT
from shared.config import Settings
from shared.context import EventContext
from shared.identity import Actor
from shared.memory.approve import apply_card
from shared.memory.store import PreferenceSnapshot
from shared.memory.tokens import issue_card
from shared.places.search import search_local_places
from shared.signing import SigningKeys
from shared.store.memory import MemoryStore
from shared.store.sqlite import SqliteStore
from shared.turn.diet_origin import resolve_diet
from shared.turn.engine import TurnTools, run_proposal, run_text_turn
from shared.turn.router import Proposal, route
from tests.conftest import all_text

NOW = datetime(2026, 11, 30, 4, 0, tzinfo=timezone.utc)
ALICE = Actor("test-tenant", "U7a1e5b0c2d3f4a5b6c7d8e9f0a1b2c3d")
KEYS = SigningKeys(b"k", 1)
_EVENT_IDS = iter(range(10**6))


@pytest.fixture
def store():
    return MemoryStore()


def remember(store, diet: str, revision: int = 0) -> None:
    card, _ = issue_card(KEYS, ALICE, revision=revision, dietary_type=diet, operation="save", now=NOW,
                         ttl_seconds=300)
    assert apply_card(store, ALICE, card, NOW).outcome == "memory_saved"


def ctx_for(store) -> EventContext:
    settings = Settings.from_env({"LOCAL_TENANT_ID": "test-tenant", "LOCAL_SIGNING_KEY": "k"})
    return EventContext(settings, store, None, NOW, ALICE, f"01TURN{next(_EVENT_IDS):020d}",
                        time.monotonic() + 1.8)


def turn(store, text: str, **kwargs):
    ctx = ctx_for(store)
    reply = run_text_turn(ctx, text) if not kwargs else run_proposal(ctx, route(text), **kwargs)
    return all_text([m.to_dict() for m in reply.messages]), store.get(AUDIT, f"test-tenant:{ctx.webhook_event_id}")


@pytest.mark.parametrize("proposed, snapshot, expected", [
    ("any", PreferenceSnapshot(1, "vegetarian"), ("any", "this_turn")),
    ("vegan", PreferenceSnapshot(1, "vegetarian"), ("vegan", "this_turn")),
    (None, PreferenceSnapshot(1, "ovo_lacto"), ("ovo_lacto", "consented_memory")),
    ("", PreferenceSnapshot(2, None), ("any", "none")),
    (None, None, ("any", "none")),
])
def test_diet_origin_precedence(proposed, snapshot, expected):
    diet = resolve_diet(proposed, snapshot)
    assert (diet.dietary_type, diet.origin) == expected


def test_engine_memory_fills_open_diet_and_says_so(store):
    remember(store, "vegetarian")
    words, audit = turn(store, "花壇有推薦吃的嗎？")
    assert "依你同意記住的偏好：蔬食" in words and "和米素食" in words
    assert audit["proposed_args"]["dietary_type"] is None  # what the router (later: the model) proposed
    assert audit["effective_args"] == {"area": "花壇鄉", "dietary_type": "vegetarian", "keyword": None}
    assert (audit["origin"], audit["revision"], audit["revision_after"]) == ("consented_memory", 1, 1)
    assert audit["result_ids"] == ["vegfest2026-22"] and audit["status"] == "ok"
    assert set(audit["timings_ms"]) == {"snapshot", "tool", "total"}
    assert audit["user_hash"] and ALICE.user_id not in str(audit)


def test_engine_explicit_any_wins_over_memory_without_changing_it(store):
    remember(store, "ovo_lacto")
    words, audit = turn(store, "花壇不限素別的店")
    assert (audit["origin"], audit["effective_args"]["dietary_type"]) == ("this_turn", "any")
    assert "依你說的條件：不限素別" in words and "蛋奶素" in words and "沒有套用，也沒改" in words
    assert "和米素食" in words


def test_engine_today_only_is_this_turn(store):
    words, audit = turn(store, "今天想吃素，花壇有什麼店？")
    assert (audit["origin"], audit["effective_args"]["dietary_type"]) == ("this_turn", "vegetarian")
    assert "偏好" not in words


def test_engine_no_memory_is_any_with_origin_none(store):
    words, audit = turn(store, "花壇有推薦吃的嗎？")
    assert (audit["origin"], audit["effective_args"]["dietary_type"], audit["revision"]) == ("none", "any", 0)
    assert "依你同意記住的偏好" not in words


def test_engine_revision_change_mid_turn_discards_personalised_result(store):
    remember(store, "vegetarian")

    def places_while_user_forgets(*args, **kwargs):
        result = search_local_places(*args, **kwargs)
        forget, _ = issue_card(KEYS, ALICE, revision=1, dietary_type=None, operation="forget", now=NOW,
                               ttl_seconds=300)
        apply_card(store, ALICE, forget, NOW)  # functions/memory commits while the tool runs
        return result

    words, audit = turn(store, "花壇有推薦吃的嗎？", tools=TurnTools(places=places_while_user_forgets))
    assert "和米素食" not in words and "變更" in words
    assert (audit["status"], audit["revision"], audit["revision_after"], audit["result_ids"]) == \
        ("revision_changed", 1, 2, [])


def test_engine_unreadable_preference_runs_without_it_and_says_so(tmp_path):
    broken = SqliteStore(str(tmp_path / "no-such-dir" / "x.sqlite3"))
    ctx = ctx_for(broken)
    reply = run_text_turn(ctx, "花壇有推薦吃的嗎？")  # the audit write fails too: best-effort
    words = all_text([m.to_dict() for m in reply.messages])
    assert "暫時讀不到你記住的偏好" in words and "和米素食" in words


def test_engine_events_turn_reads_no_preference(store):
    remember(store, "vegetarian")
    _, audit = turn(store, "這週末鹿港有什麼活動？")
    assert audit["tool"] == "search_local_events"
    assert (audit["origin"], audit["revision"]) == (None, None)


def test_engine_router_sees_only_the_text_never_the_stored_value():
    assert list(inspect.signature(route).parameters) == ["text", "titles"]  # the snapshot's event titles, no memory
    proposal = route("花壇有推薦吃的嗎？")
    assert proposal == Proposal("search_local_places", {"area": "花壇鄉", "dietary_type": None, "keyword": None})


@pytest.mark.parametrize("text", ["合米素食有全素嗎", "溪胡還是員林有素食餐廳"])
def test_engine_audit_keeps_no_words_of_a_misspelt_message(store, text):
    words, audit = turn(store, text)
    assert "你是說" in words and audit["tool"] == "did_you_mean"
    assert not any(part in str(audit) for part in ("合米", "溪胡", "全素嗎", "員林有"))
    assert audit["proposed_args"]["name"] in ("和米素食", "溪湖鎮")  # the catalog's name, which is no user text


def test_engine_audit_holds_limits_and_topics_as_plain_names(store):
    _, crisis = turn(store, "我想自殺")
    _, privacy = turn(store, "你們會不會賣我的資料")
    assert crisis["proposed_args"] == {"kinds": ["crisis"]}
    assert privacy["proposed_args"] == {"topic": "who_sees_my_data"}
    assert type(privacy["proposed_args"]["topic"]) is str
