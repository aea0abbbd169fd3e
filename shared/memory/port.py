"""Port of functions/memory as seen from the webhook: submit one signed card token.

Adapter: ``shared.memory.client.HttpMemoryClient`` (HTTP to MEMORY_FUNCTION_URL, the production
and embedded path); tests also use ``tools.memory_direct.DirectMemoryClient`` (the same use case
in-process, with an injected clock). Source: docs/design.md §1, §6.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from shared.identity import Actor

#: Domain outcomes of one submitted token (docs/design.md §6 approve table, plus decline and refusals).
MEMORY_SAVED = "memory_saved"
MEMORY_FORGOTTEN = "memory_forgotten"
MEMORY_DECLINED = "memory_declined"
ALREADY_APPLIED = "already_applied"
STALE_MEMORY_CARD = "stale_memory_card"
EXPIRED_MEMORY_CARD = "expired_memory_card"
DECLINED_MEMORY_CARD = "declined_memory_card"
INVALID_MEMORY_CARD = "invalid_memory_card"

OUTCOMES = frozenset({MEMORY_SAVED, MEMORY_FORGOTTEN, MEMORY_DECLINED, ALREADY_APPLIED, STALE_MEMORY_CARD,
                      EXPIRED_MEMORY_CARD, DECLINED_MEMORY_CARD, INVALID_MEMORY_CARD})


@dataclass(frozen=True)
class MemoryResult:
    """What functions/memory decided for one token.

    Attributes:
        outcome: one of OUTCOMES.
        revision: the preference revision after the call (0 when no record exists).
        dietary_type: the stored value after the call, or None (none stored, or a refusal
            that does not say).
        operation: the token's operation (save | forget | decline), or None when unreadable.
    """

    outcome: str
    revision: int
    dietary_type: str | None = None
    operation: str | None = None

    def as_dict(self) -> dict:
        """The JSON body functions/memory answers with."""
        return {"outcome": self.outcome, "revision": self.revision, "dietary_type": self.dietary_type,
                "operation": self.operation}


class MemoryClient(Protocol):
    """Submits consent-card tokens to the only writer of preferences."""

    def submit(self, actor: Actor, token: str, *, timeout_seconds: float,
               tapped_at: datetime | None = None) -> MemoryResult:
        """Apply one token (save, forget or decline) for the verified actor.

        Args:
            actor: from the verified webhook event; the token must be signed for it.
            token: the card token, without the ``mem:`` prefix.
            timeout_seconds: the whole call's budget (it runs inside LINE's 2-second webhook).
            tapped_at: when the card was tapped: the verified webhook event's ``timestamp`` (aware),
                never anything read from the postback data. The card's expiry is judged at it
                (no later than the call itself); None: judged at the call.
        Returns:
            The MemoryResult, refusals included (stale, expired, invalid …).
        Raises:
            MemoryUnavailable: nothing applied; retryable.
            MemoryOutcomeUnknown: sent, no answer in time; retrying the same token is safe.
            MemoryCallRejected: credentials or body refused (a configuration fault).
        """
