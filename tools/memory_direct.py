"""The memory use case called in-process, for tests and ``make eval`` (never deployed: the
webhook reaches functions/memory over HTTP through ``shared.wiring``)."""
from __future__ import annotations

from datetime import datetime

from shared.clock import Clock, utc_now
from shared.config import Settings
from shared.identity import Actor
from shared.memory.errors import MemoryOutcomeUnknown, MemoryUnavailable
from shared.memory.port import MemoryResult
from shared.memory.service import submit_card
from shared.store import DocumentStore, StoreError, StoreTimeout


class DirectMemoryClient:
    """The memory use case called in-process (a MemoryClient adapter).

    For tests that must inject a clock into the approve step (e.g. a card past 5 minutes); the
    deployed webhook always reaches functions/memory over HTTP (shared.wiring).

    Args:
        settings: as for ``submit_card``.
        store: the store functions/memory would use.
        clock: aware "now".
    """

    def __init__(self, settings: Settings, store: DocumentStore, clock: Clock = utc_now):
        self.settings = settings
        self.store = store
        self.clock = clock

    def submit(self, actor: Actor, token: str, *, timeout_seconds: float,
               tapped_at: datetime | None = None) -> MemoryResult:
        """See MemoryClient.submit. Store errors map as functions/memory's 503 does over HTTP.

        Raises:
            MemoryOutcomeUnknown: StoreTimeout (a write was sent; the outcome is unknown).
            MemoryUnavailable: another retryable store error; nothing written.
        """
        try:
            return submit_card(self.settings, self.store, actor, token, clock=self.clock, tapped_at=tapped_at)
        except StoreTimeout as exc:
            raise MemoryOutcomeUnknown("store timeout") from exc
        except StoreError as exc:
            if exc.retryable:
                raise MemoryUnavailable(exc.__class__.__name__) from exc
            raise
