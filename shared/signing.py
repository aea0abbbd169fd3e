"""The one way LOCAL signs the postback data its buttons carry (handoff, consent, staff and agent cards).

A signed value is ``<body>.<mac>``: the card kind's own ASCII body (its format is the kind's
business; it may contain dots), then the base64url (no padding) HMAC-SHA256 of the body under a
key derived for one purpose and one binding. Signing is for integrity and binding (nobody can
confirm text they did not see, or tap another user's or another group's card), not for secrecy.

Keys (``SigningKeys.from_settings``): the root key ``LOCAL_SIGNING_KEY`` has a version
(``LOCAL_SIGNING_KEY_VERSION``, ≥ 1); the previous root (``LOCAL_SIGNING_KEY_PREVIOUS``, version − 1)
is still accepted, so the key can rotate without refusing the cards already shown. New cards are
signed with the current version.

Derivation (``derive_key``): NIST SP 800-108r1 KDF in counter mode, PRF HMAC-SHA256, one 256-bit
block (``cryptography``'s ``KBKDFHMAC``: 32-bit counter before the fixed input, label, 0x00,
context, 32-bit length). Label = the purpose (``local-handoff-card``, ``local-memory-card``,
``local-staff-card`` …), so one kind's MAC is never valid for another; context = JSON
``[version, *binding]`` with binding = ``(tenant_id, user_id)`` for a user's card or
``(tenant_id, group_id)`` for a group's, so a card verifies only for whom it was made.

Decoding is strict: the MAC must be the canonical base64url text of 32 bytes (decode, re-encode,
compare), so no two texts carry one MAC (flipping the unused low bits of the last character is
refused). Expiry is data in the body; ``expires_epoch`` and ``is_expired`` are the one rule
(the end is exclusive). ``postback_data`` checks LINE's 300-character limit.

Public API: ``POSTBACK_DATA_MAX_CHARS``, ``SigningKeys``, ``SigningNotConfigured``,
``SignatureRefused``, ``sign``, ``verify`` (→ ``Verified``), ``postback_data``, ``expires_epoch``,
``is_expired``, ``b64url_encode``, ``b64url_decode``, ``derive_key``.

Sources: NIST SP 800-108r1 §4.1; ``cryptography`` KBKDFHMAC docs
(https://cryptography.io/en/latest/hazmat/primitives/key-derivation-functions/#kbkdf);
LINE Messaging API reference, postback action (data ≤ 300 characters); RFC 4648 §5 (base64url)
and §3.5 (canonical encoding); Python ``hmac.compare_digest``.
"""
from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import re
from dataclasses import dataclass
from datetime import datetime
from typing import Sequence

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.kbkdf import KBKDFHMAC, CounterLocation, Mode

from shared.clock import require_aware
from shared.config import Settings
from shared.identity import Actor
from shared.line import limits

#: LINE's limit on postback data (Messaging API reference, postback action), counted in UTF-16
#: units by ``shared.line.limits``; signed data is ASCII, so units and characters agree here.
POSTBACK_DATA_MAX_CHARS = limits.POSTBACK_DATA

_MAC_BYTES = 32  # HMAC-SHA256
_B64URL_RE = re.compile(r"^[A-Za-z0-9_-]*$")


class SigningNotConfigured(Exception):
    """``LOCAL_SIGNING_KEY`` is not set: nothing can be signed or verified."""


class SignatureRefused(Exception):
    """The value is not one LOCAL signed for this purpose and binding; ``reason`` is a log word:
    ``malformed`` (shape, length, non-ASCII, non-canonical base64url) or ``bad_signature``
    (tampered, another binding's, another purpose's, or a key version no longer accepted)."""

    def __init__(self, reason: str):
        self.reason = reason
        super().__init__(reason)


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
        if not settings.signing_key:
            raise SigningNotConfigured("LOCAL_SIGNING_KEY is not set")
        previous = settings.signing_key_previous
        return cls(settings.signing_key.encode("utf-8"), settings.signing_key_version,
                   previous.encode("utf-8") if previous and settings.signing_key_version > 1 else None)

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


Binding = Actor | Sequence[str]


def _binding(bound_to: Binding) -> list[str]:
    if isinstance(bound_to, Actor):
        return [bound_to.tenant_id, bound_to.user_id]
    values = list(bound_to)
    if not values or not all(isinstance(v, str) for v in values):
        raise ValueError("a signing binding is one or more strings, e.g. (tenant_id, user_id)")
    return values


def derive_key(root: bytes, version: int, purpose: str, bound_to: Binding) -> bytes:
    """The key of one purpose and one binding: SP 800-108r1 counter mode, HMAC-SHA256, 256 bits.

    Args:
        root: the root key of that version (bytes).
        version: the key version, ≥ 1 (part of the context).
        purpose: the KDF label, e.g. ``local-handoff-card``.
        bound_to: an ``Actor`` (tenant, user) or a sequence of strings (e.g. tenant, group id).
    Returns:
        32 bytes.
    """
    context = json.dumps([version, *_binding(bound_to)], separators=(",", ":")).encode("utf-8")
    kdf = KBKDFHMAC(algorithm=hashes.SHA256(), mode=Mode.CounterMode, length=_MAC_BYTES, rlen=4, llen=4,
                    location=CounterLocation.BeforeFixed, label=purpose.encode("utf-8"), context=context,
                    fixed=None)
    return kdf.derive(root)


def b64url_encode(raw: bytes) -> str:
    """base64url without padding (RFC 4648 §5)."""
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def b64url_decode(text: str) -> bytes:
    """Strict base64url without padding: only the canonical text of its bytes is accepted.

    Raises:
        SignatureRefused: "malformed" for other characters, padding, an impossible length, or
            non-zero unused bits in the last character (RFC 4648 §3.5).
    """
    if not isinstance(text, str) or not _B64URL_RE.match(text) or len(text) % 4 == 1:
        raise SignatureRefused("malformed")
    try:
        raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (binascii.Error, ValueError) as exc:
        raise SignatureRefused("malformed") from exc
    if b64url_encode(raw) != text:
        raise SignatureRefused("malformed")
    return raw


def _mac(key: bytes, body: str) -> bytes:
    return hmac.new(key, body.encode("ascii"), hashlib.sha256).digest()


def sign(keys: SigningKeys, purpose: str, bound_to: Binding, body: str, *, version: int | None = None) -> str:
    """``<body>.<mac>`` for one purpose and binding, with the current key (or ``version``).

    Args:
        body: the card kind's ASCII text (its own fields, e.g. ``v1.ok.<key>.<hash>.<exp>``).
        version: sign with this accepted key version instead of the current one.
    Raises:
        ValueError: the body is not ASCII, or ``version`` is not an accepted version.
    """
    if not body.isascii():
        raise ValueError("a signed body is ASCII")
    version = keys.version if version is None else version
    root = keys.root_for(version)
    if root is None:
        raise ValueError(f"no signing key for version {version}")
    return body + "." + b64url_encode(_mac(derive_key(root, version, purpose, bound_to), body))


@dataclass(frozen=True)
class Verified:
    """A value whose MAC held: its body and the key version that signed it."""

    body: str
    key_version: int


def verify(keys: SigningKeys, purpose: str, bound_to: Binding, signed: str) -> Verified:
    """Check ``<body>.<mac>`` under every accepted key version for this purpose and binding.

    Args:
        signed: the value as issued (postback data after the ``<prefix>:``), ≤ 300 characters.
    Returns:
        Verified(body, key_version).
    Raises:
        SignatureRefused: "malformed" or "bad_signature" (see the class).
    """
    if not isinstance(signed, str) or len(signed) > POSTBACK_DATA_MAX_CHARS or not signed.isascii():
        raise SignatureRefused("malformed")
    body, dot, mac_text = signed.rpartition(".")
    if not dot or not body:
        raise SignatureRefused("malformed")
    mac = b64url_decode(mac_text)
    if len(mac) != _MAC_BYTES:
        raise SignatureRefused("malformed")
    for version in keys.accepted_versions():
        root = keys.root_for(version)
        if root is not None and hmac.compare_digest(mac, _mac(derive_key(root, version, purpose, bound_to), body)):
            return Verified(body, version)
    raise SignatureRefused("bad_signature")


def postback_data(prefix: str, signed: str) -> str:
    """``<prefix>:<signed>``, checked against LINE's limit before anything is sent.

    Raises:
        ValueError: longer than ``POSTBACK_DATA_MAX_CHARS``.
    """
    data = f"{prefix}:{signed}"
    if len(data) > POSTBACK_DATA_MAX_CHARS:
        raise ValueError(f"postback data is {len(data)} characters; LINE allows {POSTBACK_DATA_MAX_CHARS}")
    return data


def expires_epoch(now: datetime, ttl_seconds: float) -> int:
    """The expiry to put in a body: whole UTC epoch seconds, ``ttl_seconds`` after ``now`` (floored).

    Raises:
        ValueError: ``now`` is naive.
    """
    return int(require_aware(now).timestamp() + ttl_seconds)


def is_expired(expires_epoch_seconds: int, now: datetime) -> bool:
    """True from the expiry instant on (the end is exclusive).

    Raises:
        ValueError: ``now`` is naive.
    """
    return require_aware(now).timestamp() >= expires_epoch_seconds
