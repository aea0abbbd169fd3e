"""The sweep: queue again whatever the store shows unsettled and no task holds any more (docs/design.md §1, §11).

The store is the source of truth; a queue's retries are bounded. A confirmation whose outcome is
unknown, a notice never delivered, a queued event never answered — each is found here and handed
to its queue again, once per retry window, however long its target was down. A serving webhook
sweeps every ``sweep_interval_seconds`` on the embedded default; in production a scheduler posts
``{"kind": "handoff_sweep"}`` to functions/reconcile, which runs the same function.
"""
from __future__ import annotations

from datetime import datetime

from shared import inbox
from shared.clock import utc_now
from shared.config import Settings
from shared.handoff.worker import requeue_pending, sweep_round
from shared.logs import log
from shared.queue import TaskQueue
from shared.queued_event.task import QueuedEventTask, enqueue, requeue_queued
from shared.staff import sweep as staff_sweep
from shared.store import DocumentStore, StoreError


def sweep(settings: Settings, store: DocumentStore, queue: TaskQueue | None, event_queue: TaskQueue | None, *,
          now: datetime | None = None) -> dict[str, int]:
    """One sweep: re-queue pending handoff operations, unsettled confirmations and queued events;
    the staff sweep (reminders, follow-ups, undelivered staff notices: ``shared.staff.sweep``).

    Args:
        queue: the reconcile queue (None: handoff work is not swept).
        event_queue: the queued-event queue, or, in a webhook-only deployment, the webhook's
            ``shared.queued_event.local.LocalEventQueue``, which answers them in its process (None:
            queued events are not swept).
        now: aware "now" (the clock when None).
    Returns:
        ``{"handoff": n, "abandoned_events": a, "queued_events": m, "staff_reminders": r,
        "staff_followups": f, "staff_requeued": s}``: how many were handed to their queue (known
        names count), and the staff group's reminders and follow-up notices recorded (docs/design.md §10).
    Raises:
        StoreUnavailable: the store could not be read.
    """
    now = now or utc_now()
    handoff = requeue_pending(settings, store, queue, now=now) if queue is not None else 0
    staff = staff_sweep.run_sweep(settings, store, queue, now=now).as_dict() if queue is not None else {}
    abandoned = finish_abandoned(settings, store, event_queue, now=now)
    events = requeue_queued(store, settings.tenant_id, event_queue, sweep_round(settings, now), now=now) \
        if event_queue is not None else 0
    return {"handoff": handoff, "abandoned_events": abandoned, "queued_events": events,
            **{f"staff_{name}": count for name, count in staff.items()}}


def finish_abandoned(settings: Settings, store: DocumentStore, event_queue: TaskQueue | None, *,
                     now: datetime) -> int:
    """Events left ``processing`` past their lease: queue those never answered, finish the rest.

    Without an event queue nothing is taken over (LINE's redelivery, if enabled, still may).
    Returns:
        How many were taken over.
    Raises:
        StoreUnavailable: the store could not be read.
    """
    if event_queue is None:
        return 0
    count = 0
    for event_id in inbox.abandoned_events(store, settings.tenant_id, now):
        try:
            result = inbox.take_over_abandoned(store, settings.tenant_id, event_id, now=now)
        except StoreError as exc:
            log("WARNING", "abandoned event not taken over", error=exc.__class__.__name__)
            continue
        if result is inbox.QueueResult.QUEUED:
            enqueue(event_queue, QueuedEventTask(settings.tenant_id, event_id))
        if result is not None:
            log("WARNING", "abandoned event taken over", result=result.value, webhook_event_id=event_id)
            count += 1
    return count
