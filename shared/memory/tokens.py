"""Signed consent-card tokens: integrity and actor binding, not secrecy (docs/design.md §6).

Wire format (URL-safe, no padding, fits a LINE postback):

    token = b64url(payload JSON, compact, sorted keys) + "." + b64url(HMAC-SHA256(actor key, first part))
    payload = {"v": key version, "r": revision at issue, "d": dietary type or null,
               "e": expiry, epoch seconds, "n": nonce, "o": "save" | "forget" | "decline"}

Signed through ``shared.signing`` (purpose ``local-memory-card``, bound to the tenant and the LINE
user id, so a card signed for one account fails the MAC for any other); the current key version
and the previous one (``LOCAL_SIGNING_KEY_PREVIOUS``) are accepted, so the key can rotate. The
payload's ``v`` must name the version whose key verified the MAC.
"""
from __future__ import annotations

import json
import re
import secrets
from dataclasses import dataclass
from datetime import datetime

from shared import signing
from shared.config import Settings
from shared.identity import Actor
from shared.memory.diet import SAVABLE_DIETS
from shared.memory.errors import InvalidMemoryCard, MemoryNotConfigured
from shared.signing import POSTBACK_DATA_MAX_CHARS, SigningKeys

OPERATIONS: tuple[str, ...] = ("save", "forget", "decline")

#: Postback data of every memory button starts with this (routed by shared.routing).
POSTBACK_PREFIX = "mem:"
#: Tokens longer than this are refused before any decoding work.
TOKEN_MAX_CHARS = POSTBACK_DATA_MAX_CHARS - len(POSTBACK_PREFIX)

PURPOSE = "local-memory-card"
_NONCE_BYTES = 12  # 96 bits → 16 URL-safe characters
_NONCE_RE = re.compile(r"^[A-Za-z0-9_-]{16,64}$")


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


def signing_keys(settings: Settings) -> SigningKeys:
    """The keys consent cards are signed with (``shared.signing.SigningKeys.from_settings``).

    Raises:
        MemoryNotConfigured: LOCAL_SIGNING_KEY is not set.
    """
    try:
        return SigningKeys.from_settings(settings)
    except signing.SigningNotConfigured as exc:
        raise MemoryNotConfigured(str(exc)) from exc


def sign_card(keys: SigningKeys, actor: Actor, payload: CardPayload) -> str:
    """Encode and sign a payload for one actor with the key version it names.

    Raises:
        MemoryNotConfigured: the payload's key version is not one of ours.
    """
    if keys.root_for(payload.key_version) is None:
        raise MemoryNotConfigured(f"no signing key for version {payload.key_version}")
    body = signing.b64url_encode(json.dumps(payload.to_wire(), sort_keys=True, separators=(",", ":")).encode())
    return signing.sign(keys, PURPOSE, actor, body, version=payload.key_version)


def verify_card(keys: SigningKeys, actor: Actor, token: str) -> CardPayload:
    """Check a token's MAC under the actor's key, then decode it. Expiry is not checked here:
    the approve transaction does it, after idempotency and revision (docs/design.md §6 order).

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
    try:
        verified = signing.verify(keys, PURPOSE, actor, token)
        raw = signing.b64url_decode(verified.body)
    except signing.CardRefused as exc:
        raise InvalidMemoryCard(f"token refused: {exc.reason}") from exc
    try:
        payload = CardPayload.from_wire(json.loads(raw))
    except ValueError as exc:  # JSONDecodeError, UnicodeDecodeError
        raise InvalidMemoryCard("payload is not JSON") from exc
    if payload.key_version != verified.key_version:
        raise InvalidMemoryCard("key version does not match the signature")
    return payload


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
        ttl_seconds: validity (the consent card's is 300 s, docs/design.md §6).
        nonce: reuse a card's nonce (its decline token); default a fresh one.
    Returns:
        (payload, token).
    Raises:
        InvalidMemoryCard: the arguments do not make a valid payload.
        ValueError: ``now`` is naive.
    """
    expires = signing.expires_epoch(now, ttl_seconds)
    payload = CardPayload.from_wire({"v": keys.version, "r": revision, "d": dietary_type, "e": expires,
                                     "n": nonce or new_nonce(), "o": operation})
    return payload, sign_card(keys, actor, payload)


def postback_data(token: str) -> str:
    """``mem:<token>``, checked against LINE's 300-character postback limit.

    Raises:
        ValueError: the data would be longer than ``POSTBACK_DATA_MAX_CHARS``.
    """
    return signing.postback_data(POSTBACK_PREFIX.rstrip(":"), token)
