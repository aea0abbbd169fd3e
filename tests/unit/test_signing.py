"""The one signing module (shared/signing.py) and every card kind signed through it: each field of
each kind tampered is refused; keys rotate; bindings and purposes do not cross; decoding is canonical."""
from __future__ import annotations

import base64
import hashlib
import hmac
import json
from datetime import datetime, timedelta, timezone

import pytest

from shared import signing
from shared.config import Settings
from shared.handoff import cards
from shared.handoff.records import Operation
from shared.identity import Actor
from shared.memory.errors import InvalidMemoryCard
from shared.memory.tokens import issue_card, verify_card
from shared.signing import CardRefused, SigningKeys

NOW = datetime(2026, 11, 30, 4, 0, tzinfo=timezone.utc)
ALICE = Actor("test-tenant", "U7a1e5b0c2d3f4a5b6c7d8e9f0a1b2c3d")
BOB = Actor("test-tenant", "Ub0b1b2b3b4b5b6b7b8b9babbbcbdbebf")
KEYS = SigningKeys(b"test-signing-key", 1)
KEY = "0123456789abcdef0123456789abcdef"
CONTENT_HASH = "ab" * 32
_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"


def _flip_low_bit_of_last_char(signed: str) -> str:
    index = _ALPHABET.index(signed[-1])
    return signed[:-1] + _ALPHABET[index ^ 1]


def _lenient_b64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


# ---- the module ------------------------------------------------------------------------------

def test_signing_card_key_is_hkdf_sha256_with_the_purpose_and_the_binding_as_info():
    """An independent construction of RFC 5869 HKDF-SHA256 (no salt: 32 zero bytes; one block)."""
    context = json.dumps([2, ALICE.tenant_id, ALICE.user_id], separators=(",", ":")).encode()
    prk = hmac.new(b"\x00" * 32, b"root", hashlib.sha256).digest()
    expected = hmac.new(prk, b"local-memory-card" + b"\x00" + context + b"\x01", hashlib.sha256).digest()
    assert signing.card_key(b"root", 2, "local-memory-card", ALICE) == expected
    assert signing.card_key(b"root", 2, "local-memory-card", (ALICE.tenant_id, ALICE.user_id)) == expected


def test_signing_keys_differ_by_purpose_binding_tenant_and_version():
    derived = {signing.card_key(b"root", 1, "local-handoff-card", ALICE),
               signing.card_key(b"root", 1, "local-memory-card", ALICE),
               signing.card_key(b"root", 1, "local-handoff-card", BOB),
               signing.card_key(b"root", 1, "local-handoff-card", Actor("t2", ALICE.user_id)),
               signing.card_key(b"root", 2, "local-handoff-card", ALICE),
               signing.card_key(b"root", 1, "local-handoff-card", ("test-tenant", "C" + "0" * 32))}
    assert len(derived) == 6


def test_signing_verify_returns_body_and_version():
    signed = signing.sign(KEYS, "local-test-card", ALICE, "v1.a.b")
    assert signing.verify(KEYS, "local-test-card", ALICE, signed) == signing.Verified("v1.a.b", 1)


@pytest.mark.parametrize("purpose, bound_to", [("local-other-card", ALICE), ("local-test-card", BOB),
                                               ("local-test-card", ("test-tenant", "C" + "0" * 32))])
def test_signing_other_purpose_or_binding_is_refused(purpose, bound_to):
    signed = signing.sign(KEYS, "local-test-card", ALICE, "v1.a.b")
    with pytest.raises(CardRefused) as refused:
        signing.verify(KEYS, purpose, bound_to, signed)
    assert refused.value.reason == "bad_signature"


def test_signing_previous_key_version_is_accepted_after_rotation_and_older_is_not():
    old = signing.sign(SigningKeys(b"key-one", 1), "local-test-card", ALICE, "body")
    rotated = SigningKeys(b"key-two", 2, previous=b"key-one")
    assert signing.verify(rotated, "local-test-card", ALICE, old).key_version == 1
    assert signing.verify(rotated, "local-test-card", ALICE,
                          signing.sign(rotated, "local-test-card", ALICE, "body")).key_version == 2
    with pytest.raises(CardRefused):
        signing.verify(SigningKeys(b"key-three", 3, previous=b"key-two"), "local-test-card", ALICE, old)


def test_signing_keys_from_settings_need_a_key_and_accept_the_previous_version():
    with pytest.raises(signing.SigningNotConfigured):
        SigningKeys.from_settings(Settings.from_env({}))
    keys = SigningKeys.from_settings(Settings.from_env({
        "LOCAL_SIGNING_KEY": "new", "LOCAL_SIGNING_KEY_VERSION": "2", "LOCAL_SIGNING_KEY_PREVIOUS": "old"}))
    assert keys.accepted_versions() == (2, 1) and keys.root_for(1) == b"old" and keys.root_for(0) is None


def test_signing_mac_with_flipped_low_bit_of_last_char_is_refused():
    """The flipped text decodes leniently to the very same MAC bytes, and is refused."""
    signed = signing.sign(KEYS, "local-test-card", ALICE, "v1.a.b")
    flipped = _flip_low_bit_of_last_char(signed)
    assert flipped != signed
    assert _lenient_b64(flipped.rpartition(".")[2]) == _lenient_b64(signed.rpartition(".")[2])
    with pytest.raises(CardRefused) as refused:
        signing.verify(KEYS, "local-test-card", ALICE, flipped)
    assert refused.value.reason == "malformed"


@pytest.mark.parametrize("text", ["AB==", "A", "AB+/", "AB C", "ABC=", "AB\n"])
def test_signing_b64url_decode_refuses_non_canonical_text(text):
    with pytest.raises(CardRefused):
        signing.b64url_decode(text)


@pytest.mark.parametrize("raw", [b"", b"\x00", b"\xff\xfe", bytes(range(32)), b"x" * 33])
def test_signing_b64url_round_trips(raw):
    assert signing.b64url_decode(signing.b64url_encode(raw)) == raw


@pytest.mark.parametrize("signed", ["", "nodot", ".AAAA", "body.", "body." + "A" * 42, "b\u00e9.AAAA",
                                    "x" * 250 + "." + "A" * 43])
def test_signing_malformed_values_are_refused(signed):
    with pytest.raises(CardRefused):
        signing.verify(KEYS, "local-test-card", ALICE, signed)


def test_signing_postback_data_is_checked_against_300_characters():
    assert signing.postback_data("p", "x" * 298) == "p:" + "x" * 298
    with pytest.raises(ValueError, match="300"):
        signing.postback_data("p", "x" * 299)


def test_signing_expiry_end_is_exclusive():
    exp = signing.expires_epoch(NOW, 300)
    assert exp == int(NOW.timestamp()) + 300
    assert not signing.is_expired(exp, NOW + timedelta(seconds=299, microseconds=999999))
    assert signing.is_expired(exp, NOW + timedelta(seconds=300))
    with pytest.raises(ValueError):
        signing.is_expired(exp, NOW.replace(tzinfo=None))


# ---- every card kind: each field tampered is refused ------------------------------------------

def _handoff_settings(**env: str) -> Settings:
    return Settings.from_env({"LOCAL_SIGNING_KEY": "test-signing-key", **env})


def _handoff_reference(settings: Settings, op: str = cards.CONFIRM) -> str:
    return cards.sign_reference(settings, op, Operation(ALICE, KEY), CONTENT_HASH, NOW + timedelta(minutes=10))


_HANDOFF_FIELDS = {
    "version": (0, "v2"),
    "op": (1, cards.CANCEL),
    "idempotency_key": (2, "f" * 32),
    "content_hash": (3, "cd" * 32),
    "expiry": (4, "9999999999"),
    "signature": (5, signing.b64url_encode(b"\x00" * 32)),
}


def test_signing_handoff_reference_verifies_untampered():
    reference = cards.verify_reference(_handoff_settings(), ALICE, _handoff_reference(_handoff_settings()))
    assert (reference.op, reference.operation, reference.content_hash) == (cards.CONFIRM, Operation(ALICE, KEY),
                                                                          CONTENT_HASH)


@pytest.mark.parametrize("field", sorted(_HANDOFF_FIELDS))
def test_signing_handoff_card_each_field_tampered_is_refused(field):
    settings = _handoff_settings()
    parts = _handoff_reference(settings).split(".")
    index, value = _HANDOFF_FIELDS[field]
    assert parts[index] != value
    parts[index] = value
    with pytest.raises(cards.CardRefused):
        cards.verify_reference(settings, ALICE, ".".join(parts))


def test_signing_handoff_card_flipped_low_bit_other_user_and_rotation():
    settings = _handoff_settings()
    reference = _handoff_reference(settings)
    with pytest.raises(cards.CardRefused):
        cards.verify_reference(settings, ALICE, _flip_low_bit_of_last_char(reference))
    with pytest.raises(cards.CardRefused):
        cards.verify_reference(settings, BOB, reference)
    rotated = _handoff_settings(LOCAL_SIGNING_KEY="next-key", LOCAL_SIGNING_KEY_VERSION="2",
                                LOCAL_SIGNING_KEY_PREVIOUS="test-signing-key")
    assert cards.verify_reference(rotated, ALICE, reference).operation == Operation(ALICE, KEY)
    retired = _handoff_settings(LOCAL_SIGNING_KEY="third-key", LOCAL_SIGNING_KEY_VERSION="3",
                                LOCAL_SIGNING_KEY_PREVIOUS="next-key")
    with pytest.raises(cards.CardRefused):
        cards.verify_reference(retired, ALICE, reference)


def _memory_token() -> str:
    _, token = issue_card(KEYS, ALICE, revision=3, dietary_type="ovo_lacto", operation="save", now=NOW,
                          ttl_seconds=300)
    return token


_MEMORY_FIELDS = {"v": 2, "r": 4, "d": "vegan", "e": 9999999999, "n": "b" * 16, "o": "decline"}


@pytest.mark.parametrize("field", sorted(_MEMORY_FIELDS))
def test_signing_memory_card_each_field_tampered_is_refused(field):
    body, mac = _memory_token().split(".")
    payload = json.loads(_lenient_b64(body))
    assert payload[field] != _MEMORY_FIELDS[field]
    payload[field] = _MEMORY_FIELDS[field]
    if field == "o":
        payload["d"] = None  # keep the payload well-formed so only the MAC can refuse it
    tampered = signing.b64url_encode(json.dumps(payload, sort_keys=True, separators=(",", ":")).encode())
    with pytest.raises(InvalidMemoryCard):
        verify_card(KEYS, ALICE, tampered + "." + mac)


def test_signing_memory_card_mac_tampered_or_flipped_low_bit_is_refused():
    token = _memory_token()
    body, _ = token.split(".")
    for bad in (_flip_low_bit_of_last_char(token), body + "." + signing.b64url_encode(b"\x00" * 32)):
        with pytest.raises(InvalidMemoryCard):
            verify_card(KEYS, ALICE, bad)
    assert verify_card(KEYS, ALICE, token).dietary_type == "ovo_lacto"


# ---- one card refusal, and cards made before the derivation changed -----------------------------

def _former_card_mac(root: bytes, version: int, purpose: str, bound_to: tuple[str, ...], body: str) -> str:
    """A MAC under the derivation LOCAL used before shared.keys (NIST SP 800-108r1 counter mode)."""
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.kdf.kbkdf import KBKDFHMAC, CounterLocation, Mode

    context = json.dumps([version, *bound_to], separators=(",", ":")).encode()
    key = KBKDFHMAC(algorithm=hashes.SHA256(), mode=Mode.CounterMode, length=32, rlen=4, llen=4,
                    location=CounterLocation.BeforeFixed, label=purpose.encode(), context=context,
                    fixed=None).derive(root)
    return signing.b64url_encode(hmac.new(key, body.encode(), hashlib.sha256).digest())


def test_signing_every_card_kind_refuses_with_the_one_card_refusal():
    from shared.staff import cards as staff_cards

    assert cards.CardRefused is staff_cards.CardRefused is signing.CardRefused
    staff_settings = _handoff_settings(LOCAL_STAFF_GROUP_ID="C" + "0" * 32)
    refusals = []
    for refuse in (lambda: cards.verify_reference(_handoff_settings(), BOB, _handoff_reference(_handoff_settings())),
                   lambda: staff_cards.verify(staff_settings, "v1.take." + "0" * 64 + ".1.AAAA"),
                   lambda: verify_card(KEYS, BOB, _memory_token()),
                   lambda: cards.verify_reference(Settings.from_env({}), ALICE, "v1")):
        with pytest.raises(signing.CardRefused) as refused:
            refuse()
        refusals.append(refused.value.reason)
    assert refusals[0] == signing.BAD_SIGNATURE and refusals[-1] == signing.NOT_CONFIGURED


def test_signing_a_card_made_under_the_former_derivation_is_refused_kindly_as_expired(tmp_path):
    """After the deploy that changed the derivation, a handoff card shown before it is refused with
    the kind refusal (「可能已失效」) and nothing is written."""
    import time

    from shared.context import EventContext
    from shared.handoff import flow, records
    from shared.store.sqlite import SqliteStore

    settings = _handoff_settings(LOCAL_TENANT_ID=ALICE.tenant_id)
    store = SqliteStore(str(tmp_path / "s.sqlite3"))
    ctx = EventContext(settings, store, None, NOW, ALICE, "EV1", time.monotonic() + 30)
    card = flow.match_text(ctx, "新需求：想參加週六的社區走讀").messages[0].to_dict()
    confirm = next(b["action"]["data"] for b in card["contents"]["footer"]["contents"]
                   if b["action"]["label"] == "確認送出").split(":", 1)[1]
    body = confirm.rpartition(".")[0]
    former = body + "." + _former_card_mac(b"test-signing-key", 1, cards.PURPOSE,
                                           (ALICE.tenant_id, ALICE.user_id), body)
    assert former != confirm
    reply = flow.handle_postback(ctx, former)
    words = json.dumps([m.to_dict() for m in reply.messages], ensure_ascii=False)
    assert "可能已失效" in words and "沒有送出" in words
    assert store.query(records.REQUESTS) == []
    assert "等待工作人員受理" in json.dumps([m.to_dict() for m in flow.handle_postback(ctx, confirm).messages],
                                      ensure_ascii=False)
