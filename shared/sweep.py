"""The sweep: queue again whatever the store shows unsettled and no task holds any more (DESIGN §1, §11).

The store is the source of truth; a queue's retries are bounded. A confirmation whose outcome is
unknown, a notice never delivered, a queued event never answered — each is found here and handed
to its queue again, once per retry window, however long its target was down. A serving webhook
sweeps every ``sweep_interval_seconds`` on the embedded default; in production a scheduler posts
``{"kind": "handoff_sweep"}`` to functions/reconcile, which runs the same function.
"""
from __future__ import annotations

from datetime import datetime

from shared.clock import utc_now
from shared.config import Settings
from shared.handoff.worker import requeue_pending, sweep_round
from shared.queue import TaskQueue
from shared.queued_event.task import requeue_queued
from shared.store import DocumentStore


def sweep(settings: Settings, store: DocumentStore, queue: TaskQueue | None, event_queue: TaskQueue | None, *,
          now: datetime | None = None) -> dict[str, int]:
    """One sweep: re-queue pending handoff operations, unsettled confirmations and queued events.

    Args:
        queue: the reconcile queue (None: handoff work is not swept).
        event_queue: the queued-event queue (None: queued events are not swept).
        now: aware "now" (the clock when None).
    Returns:
        ``{"handoff": n, "queued_events": m}``: how many were handed to their queue (known names count).
    Raises:
        StoreUnavailable: the store could not be read.
    """
    now = now or utc_now()
    handoff = requeue_pending(settings, store, queue, now=now) if queue is not None else 0
    events = requeue_queued(store, settings.tenant_id, event_queue, sweep_round(settings, now)) \
        if event_queue is not None else 0
    return {"handoff": handoff, "queued_events": events}
