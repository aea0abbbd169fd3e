"""Errors of the consented-memory domain: a flat family under one base (docs/design.md §6)."""
from __future__ import annotations

from shared.signing import CardRefused


class MemoryFlowError(Exception):
    """Base of every consented-memory error. ``retryable`` says whether trying again may help."""

    retryable = False


class InvalidMemoryCard(MemoryFlowError, CardRefused):
    """The card token is malformed, altered, signed for another account or by a retired key; not
    retryable. A ``shared.signing.CardRefused`` like every refused card; ``reason`` says which check failed."""


class MemoryNotConfigured(MemoryFlowError):
    """LOCAL_SIGNING_KEY or MEMORY_FUNCTION_URL is missing, so no card can be issued or applied; not retryable."""


class MemoryCallRejected(MemoryFlowError):
    """functions/memory refused the call itself (401/403/400: credentials or body); not retryable."""

    def __init__(self, status: int, message: str = ""):
        self.status = status
        super().__init__(f"memory function answered {status} {message}".strip())


class MemoryUnavailable(MemoryFlowError):
    """functions/memory could not be reached or answered 503 before writing; nothing changed; retryable."""

    retryable = True


class MemoryOutcomeUnknown(MemoryUnavailable):
    """The call was sent but no answer came in time: it may have applied; retry with the same card is safe."""
