"""The one key module (shared/keys.py): one derivation (HKDF-SHA256) with a purpose label for card
MACs, the user hash and the staff hash; the user hasher built from the settings, with no fallback key;
lookups of stored hashes across a rotated key and the earlier derivation."""
from __future__ import annotations

import hashlib
import hmac
from datetime import datetime, timezone

import pytest

from shared import keys, logs
from shared.audit import COLLECTION, scrub_remembered_diet
from shared.config import Settings
from shared.context import EventContext
from shared.identity import Actor
from shared.keys import SigningKeys, UserHasher
from shared.staff import access
from shared.store.sqlite import SqliteStore

NOW = datetime(2026, 11, 30, 4, 0, tzinfo=timezone.utc)
ALICE = "U7a1e5b0c2d3f4a5b6c7d8e9f0a1b2c3d"
BOB = "Ub0b1b2b3b4b5b6b7b8b9babbbcbdbebf"


def _hkdf_sha256(root: bytes, info: bytes) -> bytes:
    """RFC 5869 §2, built here from ``hmac``: no salt (32 zero bytes), one 32-byte block."""
    prk = hmac.new(b"\x00" * 32, root, hashlib.sha256).digest()
    return hmac.new(prk, info + b"\x01", hashlib.sha256).digest()


def _tag(key: bytes, message: str) -> str:
    return hmac.new(key, message.encode(), hashlib.sha256).hexdigest()[:16]


def _settings(**env: str) -> Settings:
    return Settings.from_env({"LOCAL_TENANT_ID": "test-tenant", **env})


def test_keys_derive_key_is_hkdf_sha256_with_the_purpose_as_label():
    assert keys.derive_key(b"root", "local-user-hash") == _hkdf_sha256(b"root", b"local-user-hash\x00")
    assert keys.derive_key(b"root", "local-staff-card", b'[1,"t","C1"]') == _hkdf_sha256(
        b"root", b'local-staff-card\x00[1,"t","C1"]')


def test_keys_rfc5869_test_case_3_through_cryptography():
    """The HKDF this module calls reproduces RFC 5869 test case 3 (no salt, no info)."""
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.kdf.hkdf import HKDF

    okm = HKDF(algorithm=hashes.SHA256(), length=42, salt=None, info=b"").derive(b"\x0b" * 22)
    assert okm.hex() == ("8da4e775a563c18f715f802a063c5a31b8a11f5c5ee1879ec3454e5f3c738d2d"
                         "9d201395faa4b61a96c8")


def test_keys_every_purpose_has_its_own_key_none_the_root():
    derived = [keys.derive_key(b"root", purpose) for purpose in (
        keys.USER_HASH, keys.STAFF_HASH, "local-handoff-card", "local-memory-card", "local-staff-card")]
    assert len(set(derived)) == len(derived) and b"root" not in derived


@pytest.mark.parametrize("purpose", ["", "用戶", "a\x00b"])
def test_keys_derive_key_refuses_a_label_that_is_not_one(purpose):
    with pytest.raises(ValueError):
        keys.derive_key(b"root", purpose)


def test_keys_user_hash_is_hmac_under_the_user_hash_key():
    hasher = UserHasher.from_keys(SigningKeys(b"root", 1))
    assert hasher(ALICE) == _tag(_hkdf_sha256(b"root", b"local-user-hash\x00"), ALICE)
    assert hasher(None) is None and hasher(ALICE) != hasher(BOB)


def test_keys_user_hasher_is_none_without_a_signing_key_and_logs_then_carry_no_user():
    assert keys.user_hasher(_settings()) is None
    installed = logs._user_hasher
    try:
        logs.use_user_hasher(None)
        assert logs.hash_user(ALICE) is None  # no random per-process key
    finally:
        logs.use_user_hasher(installed)


def test_keys_turn_records_hash_with_the_settings_key_whatever_the_logs_were_given(tmp_path):
    """What a turn record stores (``EventContext.user_hash``) comes from the event's settings, not
    from the log configuration of the process."""
    settings = _settings(LOCAL_SIGNING_KEY="k1")
    ctx = EventContext(settings, None, None, NOW, Actor("test-tenant", ALICE), "EV1", 0.0)
    installed = logs._user_hasher
    try:
        logs.use_user_hasher(UserHasher.from_keys(SigningKeys(b"another-key", 1)))
        assert ctx.user_hash == _tag(_hkdf_sha256(b"k1", b"local-user-hash\x00"), ALICE)
    finally:
        logs.use_user_hasher(installed)
    assert EventContext(_settings(), None, None, NOW, Actor("test-tenant", ALICE), "EV1", 0.0).user_hash is None


def test_keys_a_forget_scrubs_records_under_a_rotated_key_and_the_earlier_derivation(tmp_path):
    store = SqliteStore(str(tmp_path / "s.sqlite3"))
    hasher = UserHasher.from_keys(SigningKeys(b"key-two", 2, previous=b"key-one"))
    stored_under = {
        "current": _tag(_hkdf_sha256(b"key-two", b"local-user-hash\x00"), ALICE),
        "rotated": _tag(_hkdf_sha256(b"key-one", b"local-user-hash\x00"), ALICE),
        "earlier": _tag(hmac.new(b"key-two", b"LOCAL user hash v1", hashlib.sha256).digest(), ALICE),
        "bob": hasher(BOB),
    }
    for name, user_hash in stored_under.items():
        store.set(COLLECTION, name, {"audit_id": name, "tenant_id": "test-tenant", "user_hash": user_hash,
                                     "origin": "consented_memory", "result_ids": ["p1"],
                                     "effective_args": {"dietary_type": "vegan"}})
    assert scrub_remembered_diet(store, tenant_id="test-tenant", user_hashes=hasher.all_hashes(ALICE), now=NOW) == 3
    diets = {name: store.get(COLLECTION, name)["effective_args"]["dietary_type"] for name in stored_under}
    assert diets == {"current": None, "rotated": None, "earlier": None, "bob": "vegan"}


def test_keys_staff_hash_is_keyed_per_tenant_under_its_own_purpose():
    root = SigningKeys(b"root", 1)
    expected = _tag(_hkdf_sha256(b"root", b"local-staff-hash\x00"), "t1\x00" + ALICE)
    assert keys.staff_hash(root, "t1", ALICE) == expected
    assert keys.staff_hash(root, "t2", ALICE) != expected
    assert UserHasher.from_keys(root)(ALICE) != expected


def test_keys_no_staff_member_without_a_signing_key():
    """No fallback key: without LOCAL_SIGNING_KEY nobody is a staff member (no card can be checked)."""

    class Source:
        type, group_id, user_id = "group", "C" + "0" * 32, ALICE

    settings = _settings(LOCAL_STAFF_GROUP_ID=Source.group_id)
    with pytest.raises(access.NotStaff) as refused:
        access.staff_member(settings, Source())
    assert refused.value.reason == access.NO_STAFF_GROUP
    assert access.staff_member(_settings(LOCAL_STAFF_GROUP_ID=Source.group_id, LOCAL_SIGNING_KEY="k"),
                               Source()).hashed == keys.staff_hash(SigningKeys(b"k", 1), "test-tenant", ALICE)
