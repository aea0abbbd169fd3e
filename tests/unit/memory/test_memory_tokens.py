"""Consent-card tokens: signature, actor binding, key rotation and LINE's 300-character limit
(docs/design.md §6)."""
from __future__ import annotations

import base64
import json
from datetime import datetime, timezone

import pytest

from shared.config import Settings
from shared.identity import Actor
from shared.memory.errors import InvalidMemoryCard, MemoryNotConfigured
from shared.memory.tokens import CardPayload, issue_card, postback_data, signing_keys, verify_card
from shared.signing import POSTBACK_DATA_MAX_CHARS, SigningKeys

NOW = datetime(2026, 11, 30, 4, 0, tzinfo=timezone.utc)
ALICE = Actor("test-tenant", "U7a1e5b0c2d3f4a5b6c7d8e9f0a1b2c3d")
BOB = Actor("test-tenant", "Ub0b1b2b3b4b5b6b7b8b9babbbcbdbebf")
KEYS = SigningKeys(b"test-signing-key", 1)


def _issue(keys=KEYS, actor=ALICE, **overrides):
    args = dict(revision=3, dietary_type="ovo_lacto", operation="save", now=NOW, ttl_seconds=300)
    args.update(overrides)
    return issue_card(keys, actor, **args)


def test_tokens_made_then_verified_round_trip_every_field():
    payload, token = _issue()
    assert verify_card(KEYS, ALICE, token) == payload
    assert payload.revision == 3 and payload.dietary_type == "ovo_lacto" and payload.operation == "save"
    assert payload.expires_epoch_seconds == int(NOW.timestamp()) + 300
    assert payload.key_version == 1 and len(payload.nonce) >= 16


def test_tokens_postback_data_fits_line_limit_with_room():
    _, token = _issue(revision=10**9, dietary_type="vegetarian")
    data = postback_data(token)
    assert data.startswith("mem:")
    assert len(data) <= 200 < POSTBACK_DATA_MAX_CHARS


def test_tokens_postback_data_over_300_characters_raises():
    with pytest.raises(ValueError, match="300"):
        postback_data("x" * 297)


def test_tokens_other_actor_fails_the_mac():
    _, token = _issue()
    with pytest.raises(InvalidMemoryCard):
        verify_card(KEYS, BOB, token)
    with pytest.raises(InvalidMemoryCard):
        verify_card(KEYS, Actor("other-tenant", ALICE.user_id), token)


def _reencode(token: str, **changes) -> str:
    body, mac = token.split(".")
    payload = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
    payload.update(changes)
    new_body = base64.urlsafe_b64encode(json.dumps(payload, sort_keys=True, separators=(",", ":")).encode())
    return new_body.rstrip(b"=").decode() + "." + mac


@pytest.mark.parametrize("changes", [{"d": "vegan"}, {"r": 4}, {"e": 9999999999}, {"o": "forget", "d": None}])
def test_tokens_tampered_payload_is_rejected(changes):
    _, token = _issue()
    with pytest.raises(InvalidMemoryCard):
        verify_card(KEYS, ALICE, _reencode(token, **changes))


@pytest.mark.parametrize("bad", ["", "abc", "a.b.c", "!!!.???", "e30.AAAA", "x" * 400])
def test_tokens_malformed_is_rejected(bad):
    with pytest.raises(InvalidMemoryCard):
        verify_card(KEYS, ALICE, bad)


def test_tokens_previous_key_version_is_accepted_after_rotation_and_older_is_not():
    _, old_token = _issue(keys=SigningKeys(b"key-one", 1))
    rotated = SigningKeys(b"key-two", 2, previous=b"key-one")
    assert verify_card(rotated, ALICE, old_token).key_version == 1
    assert verify_card(rotated, ALICE, _issue(keys=rotated)[1]).key_version == 2
    twice_rotated = SigningKeys(b"key-three", 3, previous=b"key-two")
    with pytest.raises(InvalidMemoryCard):
        verify_card(twice_rotated, ALICE, old_token)


def test_tokens_keys_from_settings_need_a_signing_key():
    with pytest.raises(MemoryNotConfigured):
        signing_keys(Settings.from_env({}))
    keys = signing_keys(Settings.from_env({"LOCAL_SIGNING_KEY": "new", "LOCAL_SIGNING_KEY_VERSION": "2",
                                                        "LOCAL_SIGNING_KEY_PREVIOUS": "old"}))
    assert keys.accepted_versions() == (2, 1)


@pytest.mark.parametrize("wire", [
    {"v": 1, "r": 0, "d": "any", "e": 1, "n": "a" * 16, "o": "save"},        # 不限 is never stored
    {"v": 1, "r": 0, "d": "vegan", "e": 1, "n": "a" * 16, "o": "forget"},    # forget carries no diet
    {"v": 1, "r": -1, "d": None, "e": 1, "n": "a" * 16, "o": "forget"},
    {"v": 1, "r": 0, "d": None, "e": 1, "n": "short", "o": "forget"},
    {"v": 1, "r": 0, "d": None, "e": 1, "n": "a" * 16, "o": "approve"},
    {"v": True, "r": 0, "d": None, "e": 1, "n": "a" * 16, "o": "forget"},
])
def test_tokens_payload_that_does_not_fit_its_operation_is_invalid(wire):
    with pytest.raises(InvalidMemoryCard):
        CardPayload.from_wire(wire)


def test_tokens_decline_token_shares_the_card_nonce_and_is_not_a_save():
    save, _ = _issue()
    decline, token = _issue(dietary_type=None, operation="decline", nonce=save.nonce)
    verified = verify_card(KEYS, ALICE, token)
    assert verified.nonce == save.nonce and verified.operation == "decline" and verified.dietary_type is None
