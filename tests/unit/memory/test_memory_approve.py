"""The approve table of docs/design.md §6 as one store transaction, on a real SQLite file."""
from __future__ import annotations

import threading
from datetime import datetime, timedelta, timezone

import pytest

from shared.identity import Actor
from shared.memory.approve import apply_card
from shared.memory.store import MEMORY_CARDS, PREFERENCES, read_preference
from shared.memory.tokens import issue_card
from shared.signing import SigningKeys
from shared.store import TransactionConflict
from shared.store.sqlite import SqliteStore

NOW = datetime(2026, 11, 30, 4, 0, tzinfo=timezone.utc)
ALICE = Actor("test-tenant", "U7a1e5b0c2d3f4a5b6c7d8e9f0a1b2c3d")
KEYS = SigningKeys(b"k", 1)


@pytest.fixture
def store(tmp_path):
    return SqliteStore(str(tmp_path / "memory.sqlite3"), deadline_seconds=5.0)


def card(revision=0, diet="vegetarian", op="save", now=NOW, nonce=None):
    payload, _ = issue_card(KEYS, ALICE, revision=revision, dietary_type=diet if op == "save" else None,
                            operation=op, now=now, ttl_seconds=300, nonce=nonce)
    return payload



def test_approve_save_writes_revision_value_and_consent_time(store):
    result = apply_card(store, ALICE, card(), NOW + timedelta(seconds=10))
    assert (result.outcome, result.revision, result.dietary_type) == ("memory_saved", 1, "vegetarian")
    doc = store.get(PREFERENCES, "test-tenant:" + ALICE.user_id)
    assert doc["revision"] == 1 and doc["dietary_type"] == "vegetarian"
    assert doc["tenant_id"] == "test-tenant" and doc["user_id"] == ALICE.user_id
    assert doc["consented_at"] == "2026-11-30T04:00:10+00:00"


def test_approve_same_card_again_is_already_applied_and_revision_unchanged(store):
    saving = card()
    apply_card(store, ALICE, saving, NOW)
    again = apply_card(store, ALICE, saving, NOW + timedelta(hours=1))  # idempotency wins over expiry
    assert (again.outcome, again.revision) == ("already_applied", 1)
    assert read_preference(store, ALICE).revision == 1


def test_approve_card_issued_before_a_change_is_stale(store):
    old = card(revision=0, diet="vegan")
    apply_card(store, ALICE, card(revision=0), NOW)
    result = apply_card(store, ALICE, old, NOW)
    assert result.outcome == "stale_memory_card"
    assert read_preference(store, ALICE).dietary_type == "vegetarian"


def test_approve_expiry_is_exclusive_at_e(store):
    saving = card()
    at_expiry = datetime.fromtimestamp(saving.expires_epoch_seconds, timezone.utc)
    assert apply_card(store, ALICE, saving, at_expiry).outcome == "expired_memory_card"
    assert read_preference(store, ALICE).revision == 0
    assert apply_card(store, ALICE, saving, at_expiry - timedelta(seconds=1)).outcome == "memory_saved"


@pytest.mark.parametrize("tap_before_expiry,outcome", [(timedelta(seconds=1), "memory_saved"),
                                                        (timedelta(0), "expired_memory_card")],
                         ids=["tap_1s_before_expiry", "tap_at_expiry"])
def test_approve_expiry_is_judged_at_the_tap_not_the_call(store, tap_before_expiry, outcome):
    saving = card()
    expiry = datetime.fromtimestamp(saving.expires_epoch_seconds, timezone.utc)
    tapped = expiry - tap_before_expiry
    result = apply_card(store, ALICE, saving, tapped + timedelta(minutes=10), tapped_at=tapped)  # answered late
    assert result.outcome == outcome
    assert read_preference(store, ALICE).revision == (1 if outcome == "memory_saved" else 0)


def test_approve_tap_time_after_the_call_is_judged_at_the_call(store):
    saving = card()
    expiry = datetime.fromtimestamp(saving.expires_epoch_seconds, timezone.utc)
    result = apply_card(store, ALICE, saving, expiry, tapped_at=expiry - timedelta(seconds=1) + timedelta(hours=1))
    assert result.outcome == "expired_memory_card"  # a tap cannot come after the call it caused
    with pytest.raises(ValueError):
        apply_card(store, ALICE, saving, NOW, tapped_at=NOW.replace(tzinfo=None))


def test_approve_declined_card_is_refused_and_decline_changes_nothing(store):
    saving = card()
    declined = apply_card(store, ALICE, card(op="decline", nonce=saving.nonce), NOW)
    assert (declined.outcome, declined.revision) == ("memory_declined", 0)
    assert store.get(PREFERENCES, "test-tenant:" + ALICE.user_id) is None
    cancelled = store.get(MEMORY_CARDS, f"test-tenant:{ALICE.user_id}:{saving.nonce}")
    assert cancelled["status"] == "declined" and "dietary_type" not in cancelled
    refused = apply_card(store, ALICE, saving, NOW)
    assert (refused.outcome, refused.revision) == ("declined_memory_card", 0)
    assert read_preference(store, ALICE).revision == 0


def test_approve_decline_after_approval_is_already_applied(store):
    saving = card()
    apply_card(store, ALICE, saving, NOW)
    result = apply_card(store, ALICE, card(op="decline", nonce=saving.nonce), NOW)
    assert result.outcome == "already_applied"
    assert read_preference(store, ALICE).dietary_type == "vegetarian"


def test_approve_forget_removes_every_dietary_field_and_bumps_revision(store):
    apply_card(store, ALICE, card(), NOW)
    result = apply_card(store, ALICE, card(revision=1, op="forget"), NOW)
    assert (result.outcome, result.revision, result.dietary_type) == ("memory_forgotten", 2, None)
    doc = store.get(PREFERENCES, "test-tenant:" + ALICE.user_id)
    assert doc["revision"] == 2
    assert "dietary_type" not in doc and "consented_at" not in doc
    assert "vegetarian" not in str(doc)


def test_approve_twenty_concurrent_taps_save_once(store, tmp_path):
    saving = card()
    outcomes: list[str] = []
    barrier = threading.Barrier(20)

    def tap():
        own = SqliteStore(store.path, deadline_seconds=5.0)
        barrier.wait()
        outcomes.append(apply_card(own, ALICE, saving, NOW).outcome)

    threads = [threading.Thread(target=tap) for _ in range(20)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert sorted(outcomes) == ["already_applied"] * 19 + ["memory_saved"]
    assert read_preference(store, ALICE).revision == 1


def test_approve_transaction_rerun_applies_once(tmp_path):
    attempts: list[int] = []

    def conflict_first(attempt: int) -> None:
        attempts.append(attempt)
        if attempt == 1:
            raise TransactionConflict("forced re-run")

    store = SqliteStore(str(tmp_path / "rerun.sqlite3"), before_commit=conflict_first)
    result = apply_card(store, ALICE, card(), NOW)
    assert attempts == [1, 2]
    assert (result.outcome, result.revision) == ("memory_saved", 1)
    assert read_preference(store, ALICE).revision == 1


def test_approve_decline_replayed_after_approve_and_forget_is_stale_and_writes_nothing(store):
    saving = card()
    apply_card(store, ALICE, saving, NOW)
    apply_card(store, ALICE, card(revision=1, op="forget"), NOW)
    result = apply_card(store, ALICE, card(op="decline", nonce=saving.nonce), NOW + timedelta(seconds=5))
    assert (result.outcome, result.revision) == ("stale_memory_card", 2)
    assert store.get(MEMORY_CARDS, f"test-tenant:{ALICE.user_id}:{saving.nonce}") is None
    assert read_preference(store, ALICE).revision == 2


def test_approve_decline_of_a_card_issued_before_another_approval_is_stale(store):
    old = card(revision=0, diet="vegan")
    apply_card(store, ALICE, card(revision=0), NOW)
    result = apply_card(store, ALICE, card(op="decline", nonce=old.nonce), NOW)
    assert result.outcome == "stale_memory_card"
    assert store.get(MEMORY_CARDS, f"test-tenant:{ALICE.user_id}:{old.nonce}") is None
    assert read_preference(store, ALICE).dietary_type == "vegetarian"
