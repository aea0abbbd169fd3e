"""Where consented memory lives in the document store, and how it is read (docs/design.md §6).

Collections:
- ``preferences``, id ``<tenant_id>:<user_id>``: ``{tenant_id, user_id, revision, dietary_type?,
  consented_at?, last_nonce, updated_at}``; written only by functions/memory (shared.memory.approve).
  Keyed by account, never by session. After a forget it keeps no dietary content.
- ``memory_cards``, id ``<tenant_id>:<user_id>:<nonce>``: a declined (cancelled) card,
  ``{tenant_id, user_id, nonce, status: "declined", declined_at, expire_at}``; no dietary content.
  ``expire_at`` is for a Firestore TTL policy: the card is useless after its own expiry anyway.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from shared.clock import from_iso
from shared.identity import Actor
from shared.store import DocumentStore

PREFERENCES = "preferences"
MEMORY_CARDS = "memory_cards"


def preference_id(actor: Actor) -> str:
    """``<tenant_id>:<user_id>``."""
    return f"{actor.tenant_id}:{actor.user_id}"


def card_id(actor: Actor, nonce: str) -> str:
    """``<tenant_id>:<user_id>:<nonce>``."""
    return f"{actor.tenant_id}:{actor.user_id}:{nonce}"


@dataclass(frozen=True)
class PreferenceSnapshot:
    """One account's consented preference at one instant.

    Attributes:
        revision: 0 when no record exists; +1 on every save and forget.
        dietary_type: a SAVABLE_DIETS value, or None (never stored, or forgotten).
        consented_at: aware UTC instant of the consent tap, or None.
    """

    revision: int = 0
    dietary_type: str | None = None
    consented_at: datetime | None = None

    @classmethod
    def from_doc(cls, doc: dict | None) -> "PreferenceSnapshot":
        """A stored ``preferences`` document (or None) → snapshot."""
        if not doc:
            return cls()
        consented = doc.get("consented_at")
        return cls(int(doc.get("revision", 0)), doc.get("dietary_type") or None,
                   from_iso(consented) if consented else None)


def read_preference(store: DocumentStore, actor: Actor) -> PreferenceSnapshot:
    """Read the actor's preference (one store read; no transaction needed to read).

    Raises:
        StoreUnavailable: the store could not be read; retryable.
    """
    return PreferenceSnapshot.from_doc(store.get(PREFERENCES, preference_id(actor)))
