"""The one way LOCAL signs the postback data its buttons carry (handoff, consent and staff cards).

A signed value is ``<body>.<mac>``: the card kind's own ASCII body (its format is the kind's
business; it may contain dots), then the base64url (no padding) HMAC-SHA256 of the body under a
key derived for one purpose and one binding. Signing is for integrity and binding (nobody can
confirm text they did not see, or tap another user's or another group's card), not for secrecy.

Keys: ``shared.keys`` (the root keys and their rotation, and the one derivation). A card's MAC key is
``derive_key(root, purpose, context)`` with purpose the card kind's label (``local-handoff-card``,
``local-memory-card``, ``local-staff-card`` …), so one kind's MAC is never valid for another, and
context = JSON ``[version, *binding]`` with binding = ``(tenant_id, user_id)`` for a user's card or
``(tenant_id, group_id)`` for a group's, so a card verifies only for whom it was made. New cards are
signed with the current version; the previous one is still accepted.

Decoding is strict: the MAC must be the canonical base64url text of 32 bytes (decode, re-encode,
compare), so no two texts carry one MAC (flipping the unused low bits of the last character is
refused). Expiry is data in the body; ``expires_epoch`` and ``is_expired`` are the one rule
(the end is exclusive). ``postback_data`` checks LINE's 300-character limit.

A card LOCAL cannot accept, of any kind, raises ``CardRefused`` with a reason word; each card
kind (handoff, staff, memory: ``InvalidMemoryCard`` is one) raises this one type.

Public API: ``POSTBACK_DATA_MAX_CHARS``, ``CardRefused`` (reasons ``NOT_CONFIGURED``, ``MALFORMED``,
``BAD_SIGNATURE``), ``sign``, ``verify`` (→ ``Verified``), ``postback_data``, ``expires_epoch``,
``is_expired``, ``b64url_encode``, ``b64url_decode``, ``card_key``; ``SigningKeys`` and
``SigningNotConfigured`` come from ``shared.keys``.

Sources: LINE Messaging API reference, postback action (data ≤ 300 characters); RFC 4648 §5 (base64url)
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

from shared.clock import require_aware
from shared.identity import Actor
from shared.keys import SigningKeys, SigningNotConfigured, derive_key
from shared.line import limits

__all__ = ["POSTBACK_DATA_MAX_CHARS", "CardRefused", "NOT_CONFIGURED", "MALFORMED", "BAD_SIGNATURE", "SigningKeys",
           "SigningNotConfigured", "Verified", "sign", "verify", "postback_data", "expires_epoch", "is_expired",
           "b64url_encode", "b64url_decode", "card_key"]

#: LINE's limit on postback data (Messaging API reference, postback action), counted in UTF-16
#: units by ``shared.line.limits``; signed data is ASCII, so units and characters agree here.
POSTBACK_DATA_MAX_CHARS = limits.POSTBACK_DATA

_MAC_BYTES = 32  # HMAC-SHA256
_B64URL_RE = re.compile(r"^[A-Za-z0-9_-]*$")


#: Why a card is refused (``CardRefused.reason``, a log word): no signing key (or, for a staff card,
#: no staff group) configured; not the shape of a card of its kind; a MAC that does not hold
#: (tampered, another binding's or purpose's, or a key version no longer accepted).
NOT_CONFIGURED, MALFORMED, BAD_SIGNATURE = "not_configured", "malformed", "bad_signature"


class CardRefused(Exception):
    """The postback is not a card LOCAL made for this purpose and binding, or cannot be checked:
    nothing is done; not retryable. ``reason``: ``NOT_CONFIGURED``, ``MALFORMED`` or ``BAD_SIGNATURE``
    (a card kind may add its own word, e.g. ``expired``)."""

    def __init__(self, reason: str):
        self.reason = reason
        super().__init__(reason)


Binding = Actor | Sequence[str]


def _binding(bound_to: Binding) -> list[str]:
    if isinstance(bound_to, Actor):
        return [bound_to.tenant_id, bound_to.user_id]
    values = list(bound_to)
    if not values or not all(isinstance(v, str) for v in values):
        raise ValueError("a signing binding is one or more strings, e.g. (tenant_id, user_id)")
    return values


def card_key(root: bytes, version: int, purpose: str, bound_to: Binding) -> bytes:
    """The MAC key of one card purpose and one binding: ``shared.keys.derive_key`` with context JSON
    ``[version, *binding]``.

    Args:
        root: the root key of that version (bytes).
        version: the key version, ≥ 1 (part of the context).
        purpose: the card kind's label, e.g. ``local-handoff-card``.
        bound_to: an ``Actor`` (tenant, user) or a sequence of strings (e.g. tenant, group id).
    Returns:
        32 bytes.
    """
    context = json.dumps([version, *_binding(bound_to)], separators=(",", ":")).encode("utf-8")
    return derive_key(root, purpose, context)


def b64url_encode(raw: bytes) -> str:
    """base64url without padding (RFC 4648 §5)."""
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def b64url_decode(text: str) -> bytes:
    """Strict base64url without padding: only the canonical text of its bytes is accepted.

    Raises:
        CardRefused: ``MALFORMED`` for other characters, padding, an impossible length, or
            non-zero unused bits in the last character (RFC 4648 §3.5).
    """
    if not isinstance(text, str) or not _B64URL_RE.match(text) or len(text) % 4 == 1:
        raise CardRefused(MALFORMED)
    try:
        raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (binascii.Error, ValueError) as exc:
        raise CardRefused(MALFORMED) from exc
    if b64url_encode(raw) != text:
        raise CardRefused(MALFORMED)
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
    return body + "." + b64url_encode(_mac(card_key(root, version, purpose, bound_to), body))


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
        CardRefused: ``MALFORMED`` or ``BAD_SIGNATURE`` (see the reasons).
    """
    if not isinstance(signed, str) or len(signed) > POSTBACK_DATA_MAX_CHARS or not signed.isascii():
        raise CardRefused(MALFORMED)
    body, dot, mac_text = signed.rpartition(".")
    if not dot or not body:
        raise CardRefused(MALFORMED)
    mac = b64url_decode(mac_text)
    if len(mac) != _MAC_BYTES:
        raise CardRefused(MALFORMED)
    for version in keys.accepted_versions():
        root = keys.root_for(version)
        if root is not None and hmac.compare_digest(mac, _mac(card_key(root, version, purpose, bound_to), body)):
            return Verified(body, version)
    raise CardRefused(BAD_SIGNATURE)


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
