"""Every key LOCAL derives from ``LOCAL_SIGNING_KEY``, through one derivation with a purpose label.

The root key (``SigningKeys.from_settings``) has a version (``LOCAL_SIGNING_KEY_VERSION``, ≥ 1); the
previous root (``LOCAL_SIGNING_KEY_PREVIOUS``, version − 1) is still accepted, so the key can rotate
without refusing the cards already shown. Nothing uses a root key directly: ``derive_key`` makes a
32-byte key for one purpose (and, for a card, one binding), so a key made for one use is worthless
for another and reveals nothing about the root.

Derivation: HKDF-SHA256 (RFC 5869), no salt (the root is a secret, not a password), 32 bytes, info =
the purpose label, a 0x00 byte, then the context (``cryptography``'s ``HKDF``). Purposes:

- ``local-handoff-card``, ``local-memory-card``, ``local-staff-card``: the MACs
  of signed postbacks (``shared.signing``); context = JSON ``[version, *binding]``;
- ``local-user-hash``: the keyed hash of a LINE user id in logs and turn records (``UserHasher``);
- ``local-staff-hash``: the keyed hash of a staff member in request history and audit (``staff_hash``).

Changing a purpose, the context or the derivation changes every MAC and hash made with it: cards
already shown are refused as expired, and stored hashes (turn records, staff history) no longer
match new ones (docs/deploy.md, "Keys derived from LOCAL_SIGNING_KEY").

Sources: RFC 5869 (HKDF); ``cryptography`` HKDF docs
(https://cryptography.io/en/latest/hazmat/primitives/key-derivation-functions/#hkdf); RFC 2104 (HMAC).
"""
from __future__ import annotations

import functools
import hashlib
import hmac
from dataclasses import dataclass

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from shared.config import Settings

KEY_BYTES = 32
USER_HASH = "local-user-hash"
STAFF_HASH = "local-staff-hash"
_LEGACY_USER_HASH_LABEL = b"LOCAL user hash v1"
#: Hex digits of a user or staff hash (64 bits: unique enough among one channel's accounts).
HASH_HEX_CHARS = 16


class SigningNotConfigured(Exception):
    """``LOCAL_SIGNING_KEY`` is not set: nothing can be signed, verified or hashed with a key."""


def derive_key(root: bytes, purpose: str, context: bytes = b"") -> bytes:
    """The 32-byte key of one purpose (and context) under one root key: HKDF-SHA256 (RFC 5869).

    Args:
        root: a root key (``SigningKeys.current`` or ``.previous``).
        purpose: the label, e.g. ``local-user-hash``; ASCII, no 0x00.
        context: what else the key is bound to (a card's version and binding), b"" for none.
    Raises:
        ValueError: an empty root, or a purpose that is empty, not ASCII or holds 0x00.
    """
    if not root:
        raise ValueError("an empty root key")
    if not purpose or not purpose.isascii() or "\x00" in purpose:
        raise ValueError("a key purpose is a non-empty ASCII label without NUL")
    info = purpose.encode("ascii") + b"\x00" + context
    return HKDF(algorithm=hashes.SHA256(), length=KEY_BYTES, salt=None, info=info).derive(root)


@dataclass(frozen=True)
class SigningKeys:
    """The root keys: the current version and, optionally, the previous one (version − 1)."""

    current: bytes
    version: int
    previous: bytes | None = None

    @classmethod
    def from_settings(cls, settings: Settings) -> "SigningKeys":
        """Keys from ``LOCAL_SIGNING_KEY``, ``LOCAL_SIGNING_KEY_VERSION`` and ``LOCAL_SIGNING_KEY_PREVIOUS``.

        Raises:
            SigningNotConfigured: ``LOCAL_SIGNING_KEY`` is not set.
        """
        return cls.from_values(settings.signing_key, settings.signing_key_version, settings.signing_key_previous)

    @classmethod
    def from_values(cls, signing_key: str | None, version: int, previous: str | None) -> "SigningKeys":
        """Keys from the three settings' values (the previous key counts only from version 2).

        Raises:
            SigningNotConfigured: ``signing_key`` is empty.
        """
        if not signing_key:
            raise SigningNotConfigured("LOCAL_SIGNING_KEY is not set")
        return cls(signing_key.encode("utf-8"), version,
                   previous.encode("utf-8") if previous and version > 1 else None)

    def accepted_versions(self) -> tuple[int, ...]:
        """The versions a value may be signed with: current first, then the previous one if set."""
        return (self.version,) + ((self.version - 1,) if self.previous else ())

    def root_for(self, version: int) -> bytes | None:
        """The root key of ``version``, or None when that version is not accepted."""
        if version == self.version:
            return self.current
        if version == self.version - 1:
            return self.previous
        return None

    def roots(self) -> tuple[bytes, ...]:
        """The accepted root keys, current first."""
        return tuple(r for r in (self.root_for(v) for v in self.accepted_versions()) if r is not None)


def _keyed_hash(key: bytes, message: str) -> str:
    return hmac.new(key, message.encode("utf-8", "backslashreplace"), hashlib.sha256).hexdigest()[:HASH_HEX_CHARS]


@dataclass(frozen=True)
class UserHasher:
    """The keyed, non-reversible tag of a LINE user id in logs and turn records: 16 hex digits of
    HMAC-SHA256 under the ``local-user-hash`` key. Someone with a user id but not the signing key
    cannot find that user's lines or records; an operator with the key can (``make user-data``).

    Built once per process from the settings (``shared.wiring.user_hasher``) and handed to what
    hashes; there is no fallback key: without ``LOCAL_SIGNING_KEY`` there is no hasher.

    ``keys``: the hash keys under each accepted root, current first. ``__call__`` hashes under the
    current one (what is written); ``all_hashes`` gives every hash a stored record of that user may
    carry (what a lookup, e.g. a forget's scrub, must match): one per accepted root, then one per
    ``legacy_keys``.

    ``legacy_keys``: the keys of the derivation that came before ``derive_key`` (HMAC-SHA256 of the
    root over ``LOCAL user hash v1``). Turn records written under it are still found and scrubbed
    until their retention (30 days, ``shared.audit.RETENTION``) has passed; then drop them.
    """

    keys: tuple[bytes, ...]
    legacy_keys: tuple[bytes, ...] = ()

    @classmethod
    def from_keys(cls, keys: SigningKeys) -> "UserHasher":
        return cls(tuple(derive_key(root, USER_HASH) for root in keys.roots()),
                   tuple(hmac.new(root, _LEGACY_USER_HASH_LABEL, hashlib.sha256).digest() for root in keys.roots()))

    @classmethod
    def from_settings(cls, settings: Settings) -> "UserHasher":
        """Raises: SigningNotConfigured: ``LOCAL_SIGNING_KEY`` is not set."""
        return cls.from_keys(SigningKeys.from_settings(settings))

    def __call__(self, user_id: str | None) -> str | None:
        """The hash of ``user_id`` under the current key, or None for no user."""
        return _keyed_hash(self.keys[0], user_id) if user_id else None

    def all_hashes(self, user_id: str) -> tuple[str, ...]:
        """The hashes ``user_id`` may be stored under, current first (one per accepted root)."""
        return tuple(dict.fromkeys(_keyed_hash(key, user_id) for key in self.keys + self.legacy_keys))


@functools.lru_cache(maxsize=8)
def _user_hasher(signing_key: str, version: int, previous: str | None) -> UserHasher:
    return UserHasher.from_keys(SigningKeys.from_values(signing_key, version, previous))


def user_hasher(settings: Settings) -> UserHasher | None:
    """The settings' ``UserHasher`` (built once per process and key), or None without ``LOCAL_SIGNING_KEY``."""
    if not settings.signing_key:
        return None
    return _user_hasher(settings.signing_key, settings.signing_key_version, settings.signing_key_previous)


def staff_hash(keys: SigningKeys, tenant_id: str, staff_user_id: str) -> str:
    """16 lowercase hex naming one staff member in stored history and audit (never the raw id).

    HMAC-SHA256 under the ``local-staff-hash`` key of the current root, over the tenant and the user
    id, so that a list of LINE user ids cannot be hashed and matched against it.
    """
    return _keyed_hash(derive_key(keys.current, STAFF_HASH), f"{tenant_id}\x00{staff_user_id}")
