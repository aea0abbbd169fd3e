"""Signed consent-card tokens: integrity and actor binding, not secrecy (DESIGN §6).

Wire format (URL-safe, no padding, fits a LINE postback):

    token = b64url(payload JSON, compact, sorted keys) + "." + b64url(HMAC-SHA256(actor key, first part))
    payload = {"v": key version, "r": revision at issue, "d": dietary type or null,
               "e": expiry, epoch seconds, "n": nonce, "o": "save" | "forget" | "decline"}

The actor key is derived from ``LOCAL_SIGNING_KEY`` with the NIST SP 800-108r1 KDF in counter
mode, HMAC-SHA256 as the PRF, one 256-bit block; the context is the key version, the tenant and
the LINE user id, so a card signed for one account fails the MAC for any other. The current
version and the previous one (``LOCAL_SIGNING_KEY_PREVIOUS``) are accepted, so the key can rotate.
"""
from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import re
import secrets
from dataclasses import dataclass
from datetime import datetime

from shared.clock import require_aware
from shared.config import Settings
from shared.identity import Actor
from shared.memory.diet import SAVABLE_DIETS
from shared.memory.errors import InvalidMemoryCard, MemoryNotConfigured

OPERATIONS: tuple[str, ...] = ("save", "forget", "decline")

#: Postback data of every memory button starts with this (routed by shared.routing).
POSTBACK_PREFIX = "mem:"
#: LINE Messaging API: postback data is at most 300 characters.
POSTBACK_DATA_MAX_CHARS = 300
#: Tokens longer than this are refused before any decoding work.
TOKEN_MAX_CHARS = POSTBACK_DATA_MAX_CHARS - len(POSTBACK_PREFIX)

_KDF_LABEL = b"local-memory-card"
_NONCE_BYTES = 12  # 96 bits → 16 URL-safe characters
_NONCE_RE = re.compile(r"^[A-Za-z0-9_-]{16,64}$")
_B64URL_RE = re.compile(r"^[A-Za-z0-9_-]+$")


@dataclass(frozen=True)
class CardPayload:
    """The signed content of one card.

    Attributes:
        key_version: the signing key version (``v``), ≥ 1.
        revision: the preference revision the card was issued at (``r``), ≥ 0.
        dietary_type: the value to save (``d``); None for forget and decline.
        expires_epoch_seconds: ``e``; the card is refused from this instant on (end exclusive).
        nonce: ``n``, random; the save and the decline token of one card share it.
        operation: ``o``: save | forget | decline.
    """

    key_version: int
    revision: int
    dietary_type: str | None
    expires_epoch_seconds: int
    nonce: str
    operation: str

    def to_wire(self) -> dict:
        """The short-keyed dict that is signed."""
        return {"v": self.key_version, "r": self.revision, "d": self.dietary_type,
                "e": self.expires_epoch_seconds, "n": self.nonce, "o": self.operation}

    @classmethod
    def from_wire(cls, data: object) -> "CardPayload":
        """Validate a decoded payload.

        Raises:
            InvalidMemoryCard: a field is missing, has the wrong type, or does not fit the operation.
        """
        if not isinstance(data, dict) or set(data) != {"v", "r", "d", "e", "n", "o"}:
            raise InvalidMemoryCard("payload fields")
        v, r, d, e, n, o = (data[k] for k in ("v", "r", "d", "e", "n", "o"))
        ints_ok = all(isinstance(x, int) and not isinstance(x, bool) for x in (v, r, e))
        if not ints_ok or v < 1 or r < 0 or e < 0:
            raise InvalidMemoryCard("payload numbers")
        if not isinstance(n, str) or not _NONCE_RE.match(n) or o not in OPERATIONS:
            raise InvalidMemoryCard("payload nonce or operation")
        if (o == "save") != (d in SAVABLE_DIETS) or (o != "save" and d is not None):
            raise InvalidMemoryCard("payload value does not fit the operation")
        return cls(v, r, d, e, n, o)


@dataclass(frozen=True)
class SigningKeys:
    """The root keys cards are signed with: the current version and, optionally, the previous one."""

    current: bytes
    version: int
    previous: bytes | None = None

    @classmethod
    def from_settings(cls, settings: Settings) -> "SigningKeys":
        """Keys from ``LOCAL_SIGNING_KEY`` (+ ``_VERSION``, ``_PREVIOUS``).

        Raises:
            MemoryNotConfigured: LOCAL_SIGNING_KEY is not set.
        """
        if not settings.signing_key:
            raise MemoryNotConfigured("LOCAL_SIGNING_KEY is not set")
        previous = settings.signing_key_previous
        return cls(settings.signing_key.encode(), settings.signing_key_version,
                   previous.encode() if previous and settings.signing_key_version > 1 else None)

    def accepted_versions(self) -> tuple[int, ...]:
        """The versions a token may be signed with: current first, then the previous one if set."""
        return (self.version,) + ((self.version - 1,) if self.previous else ())

    def root_for(self, version: int) -> bytes | None:
        """The root key of ``version``, or None when that version is not accepted."""
        if version == self.version:
            return self.current
        if version == self.version - 1:
            return self.previous
        return None


def derive_actor_key(root: bytes, version: int, actor: Actor) -> bytes:
    """One actor's card key: SP 800-108r1 counter-mode KDF, PRF HMAC-SHA256, L = 256 bits.

    K = HMAC(root, [1]_32 || "local-memory-card" || 0x00 || context || [256]_32), with context =
    JSON ``[version, tenant_id, user_id]`` (unambiguous whatever the ids contain).

    Args:
        root: the configured signing key of that version, as bytes.
        version: the key version, ≥ 1.
        actor: (tenant_id, user_id) from the verified event.
    Returns:
        32 bytes.
    Source: NIST SP 800-108r1 §4.1 (KDF in counter mode).
    """
    context = json.dumps([version, actor.tenant_id, actor.user_id], separators=(",", ":")).encode()
    message = (1).to_bytes(4, "big") + _KDF_LABEL + b"\x00" + context + (256).to_bytes(4, "big")
    return hmac.new(root, message, hashlib.sha256).digest()


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    if not _B64URL_RE.match(text):
        raise InvalidMemoryCard("not base64url")
    try:
        return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (binascii.Error, ValueError) as exc:
        raise InvalidMemoryCard("not base64url") from exc


def _mac(key: bytes, body: str) -> bytes:
    return hmac.new(key, body.encode("ascii"), hashlib.sha256).digest()


def sign_card(keys: SigningKeys, actor: Actor, payload: CardPayload) -> str:
    """Encode and sign a payload for one actor with the key version it names.

    Raises:
        MemoryNotConfigured: the payload's key version is not one of ours.
    """
    root = keys.root_for(payload.key_version)
    if root is None:
        raise MemoryNotConfigured(f"no signing key for version {payload.key_version}")
    body = _b64(json.dumps(payload.to_wire(), sort_keys=True, separators=(",", ":")).encode())
    return body + "." + _b64(_mac(derive_actor_key(root, payload.key_version, actor), body))


def verify_card(keys: SigningKeys, actor: Actor, token: str) -> CardPayload:
    """Check a token's MAC under the actor's key, then decode it. Expiry is not checked here:
    the approve transaction does it, after idempotency and revision (DESIGN §6 order).

    Args:
        keys: the accepted signing keys.
        actor: the account that tapped the card (from the verified webhook event).
        token: ``<body>.<mac>`` as issued, at most 296 characters.
    Returns:
        The payload.
    Raises:
        InvalidMemoryCard: malformed, altered, signed for another account, or by a key version
            that is no longer accepted. (Another account's card and an altered card look the same:
            both fail the MAC under this actor's key.)
    """
    if not isinstance(token, str) or len(token) > TOKEN_MAX_CHARS or token.count(".") != 1:
        raise InvalidMemoryCard("token shape")
    body, mac_text = token.split(".")
    raw = _unb64(body)
    mac = _unb64(mac_text)
    for version in keys.accepted_versions():
        expected = _mac(derive_actor_key(keys.root_for(version), version, actor), body)
        if hmac.compare_digest(mac, expected):
            try:
                payload = CardPayload.from_wire(json.loads(raw))
            except ValueError as exc:  # JSONDecodeError, UnicodeDecodeError
                raise InvalidMemoryCard("payload is not JSON") from exc
            if payload.key_version != version:
                raise InvalidMemoryCard("key version does not match the signature")
            return payload
    raise InvalidMemoryCard("signature does not match this account under any accepted key")


def new_nonce() -> str:
    """A fresh random nonce: 96 bits, 16 URL-safe characters (stdlib ``secrets``)."""
    return secrets.token_urlsafe(_NONCE_BYTES)


def issue_card(keys: SigningKeys, actor: Actor, *, revision: int, dietary_type: str | None, operation: str,
               now: datetime, ttl_seconds: float, nonce: str | None = None) -> tuple[CardPayload, str]:
    """Build and sign one token valid for ``ttl_seconds`` from ``now``.

    Args:
        keys: signs with the current version.
        actor: the account the card is for.
        revision: the preference revision now (0 when nothing was ever stored).
        dietary_type: a SAVABLE_DIETS value for save; None for forget and decline.
        operation: save | forget | decline.
        now: aware instant of issue.
        ttl_seconds: validity (the consent card's is 300 s, DESIGN §6).
        nonce: reuse a card's nonce (its decline token); default a fresh one.
    Returns:
        (payload, token).
    Raises:
        InvalidMemoryCard: the arguments do not make a valid payload.
        ValueError: ``now`` is naive.
    """
    expires = int(require_aware(now).timestamp() + ttl_seconds)
    payload = CardPayload.from_wire({"v": keys.version, "r": revision, "d": dietary_type, "e": expires,
                                     "n": nonce or new_nonce(), "o": operation})
    return payload, sign_card(keys, actor, payload)


def postback_data(token: str) -> str:
    """``mem:<token>``, checked against LINE's 300-character postback limit.

    Raises:
        ValueError: the data would be longer than 300 characters.
    Source: LINE Messaging API reference, postback action (data max 300 characters).
    """
    data = POSTBACK_PREFIX + token
    if len(data) > POSTBACK_DATA_MAX_CHARS:
        raise ValueError(f"memory postback data is {len(data)} characters; LINE allows {POSTBACK_DATA_MAX_CHARS}")
    return data
