"""The sweep: queue again whatever the store shows unsettled and no task holds any more (docs/design.md §1, §11).

The store is the source of truth; a queue's retries are bounded. A confirmation whose outcome is
unknown, a notice never delivered, a queued event never answered — each is found by one of the
re-queue queries of ``REQUEUES`` (the one list of them) and handed to its queue again, once per
retry window (``shared.handoff.requeue.sweep_round``), however long its target was down.

One background loop runs them (``start_background``): at a serving webhook's start (a process
killed after a commit and before its enqueue), then every ``sweep_interval_seconds`` on the
embedded default; in production a scheduler posts ``{"kind": "handoff_sweep"}`` to
functions/reconcile, which runs the same ``sweep``.
"""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from datetime import datetime
from typing import Callable

from shared import inbox, trace
from shared.clock import Clock, utc_now
from shared.config import Settings
from shared.deferred_events.task import QueuedEventTask, enqueue, requeue_queued
from shared.handoff.requeue import requeue_pending, sweep_round
from shared.line import LineGateway
from shared.logs import log
from shared.queue import TaskQueue
from shared.staff import quota as line_quota
from shared.staff import relay as staff_relay
from shared.staff import reminders as staff_reminders
from shared.store import DocumentStore, StoreError

#: The start-up re-queue's pauses between passes that left work unqueued: doubling from the first
#: to the cap (seconds), for at most one sweep interval (then the periodic sweep queues the rest).
REQUEUE_RETRY_FIRST_SECONDS, REQUEUE_RETRY_MAX_SECONDS = 0.1, 5.0


@dataclass(frozen=True)
class Queues:
    """Where re-queued work goes: ``tasks`` (reconcile and staff notices) and ``events`` (queued
    webhook events: the event queue, or a webhook-only deployment's
    ``shared.deferred_events.local.LocalEventQueue``). None: that work is not swept."""

    tasks: TaskQueue | None
    events: TaskQueue | None


@dataclass(frozen=True)
class Requeued:
    """One query's pass: ``queued`` items handed to their queue (a known task name counts) and
    ``missed`` ones the queue did not confirm (they stay unsettled for the next pass)."""

    queued: int
    missed: int = 0


@dataclass(frozen=True)
class RequeueQuery:
    """One re-queue query: ``name`` (its key in ``sweep``'s answer) and ``run`` (settings, store,
    queues, aware now) → Requeued; ``run`` raises StoreUnavailable when the store cannot be read."""

    name: str
    run: Callable[[Settings, DocumentStore, Queues, datetime], Requeued]


def _handoff(settings: Settings, store: DocumentStore, queues: Queues, now: datetime) -> Requeued:
    """Handoff operations with an undelivered notice or pending verification, and unsettled confirmations."""
    return Requeued(requeue_pending(settings, store, queues.tasks, now=now) if queues.tasks is not None else 0)


def _staff_notices(settings: Settings, store: DocumentStore, queues: Queues, now: datetime) -> Requeued:
    """Pending staff notices (``shared.staff.relay.requeue_pass``)."""
    if queues.tasks is None:
        return Requeued(0)
    done = staff_relay.requeue_pass(settings, store, queues.tasks, now=now, round_tag=sweep_round(settings, now))
    return Requeued(done.queued, done.missed)


def _queued_events(settings: Settings, store: DocumentStore, queues: Queues, now: datetime) -> Requeued:
    """Webhook events still ``queued`` with their answer pending (``requeue_queued``)."""
    if queues.events is None:
        return Requeued(0)
    return Requeued(requeue_queued(store, settings.tenant_id, queues.events, sweep_round(settings, now), now=now))


#: Every re-queue query, in the order a sweep runs them.
REQUEUES = (RequeueQuery("handoff", _handoff), RequeueQuery("staff_requeued", _staff_notices),
            RequeueQuery("queued_events", _queued_events))


def sweep(settings: Settings, store: DocumentStore, queue: TaskQueue | None, event_queue: TaskQueue | None, *,
          now: datetime | None = None, line: LineGateway | None = None) -> dict[str, int]:
    """One sweep: the staff group's due notices (reminders, follow-ups: ``shared.staff.reminders``),
    abandoned events taken over, then every query of ``REQUEUES``; with ``line``, LINE's push quota
    last (``shared.staff.quota.check``: at most once per window, the staff group warned at 80%).

    Args:
        queue: the reconcile queue (None: handoff and staff work is not swept).
        event_queue: the queued-event queue (see ``Queues.events``; None: queued events are not swept).
        now: aware "now" (the clock when None).
        line: the LINE gateway (None: the quota is not read).
    Returns:
        ``{"handoff": n, "abandoned_events": a, "queued_events": m, "staff_reminders": r,
        "staff_followups": f, "staff_requeued": s}``: how many were handed to their queue (known
        names count), and the staff group's reminders and follow-up notices recorded (docs/design.md
        §10); the ``staff_*`` counts only with a reconcile queue; with ``line``, ``quota_warned``
        (1 when this sweep pushed the month's quota warning, else 0).
    Raises:
        StoreUnavailable: the store could not be read.
    """
    now = now or utc_now()
    queues = Queues(queue, event_queue)
    staff, abandoned = _due_and_abandoned(settings, store, queues, now)
    requeued = {query.name: query.run(settings, store, queues, now).queued for query in REQUEUES}
    if queue is None:
        del requeued["staff_requeued"]
    quota = {} if line is None else {"quota_warned": int(_quota_warned(settings, store, line, now))}
    return {"handoff": requeued.pop("handoff"), "abandoned_events": abandoned,
            "queued_events": requeued.pop("queued_events"),
            **{f"staff_{name}": count for name, count in staff.items()}, **requeued, **quota}


def _quota_warned(settings: Settings, store: DocumentStore, line: LineGateway, now: datetime) -> bool:
    """LINE's push quota, read at most once per window (``shared.staff.quota.check``): True when this
    sweep warned the staff group. A store that cannot take the window's record is logged, never
    raised: the sweep's other work is done, and the next window reads the quota."""
    try:
        return line_quota.check(settings, store, line, clock=lambda: now).warned
    except StoreError as exc:
        log("WARNING", "line quota not checked", error=exc.__class__.__name__)
        return False


def _due_and_abandoned(settings: Settings, store: DocumentStore, queues: Queues,
                       now: datetime) -> tuple[dict[str, int], int]:
    """The sweep's work besides its re-queue queries: the staff group's due notices (with a reconcile
    queue) and abandoned events taken over → (``{reminders, followups}`` counts or {}, taken over)."""
    staff = staff_reminders.record_due(settings, store, now=now).as_dict() if queues.tasks is not None else {}
    return staff, finish_abandoned(settings, store, queues.events, now=now)


def requeue_at_start(settings: Settings, store: DocumentStore, queues: Queues, *, now: Clock = utc_now) -> None:
    """A process's start-up re-queue: every query of ``REQUEUES``, each repeated after a pause
    (``REQUEUE_RETRY_FIRST_SECONDS`` doubling to ``REQUEUE_RETRY_MAX_SECONDS``) while it left work
    unqueued (e.g. the store file's write lock stayed busy past the queue's lock timeout while the
    process's other start-up threads wrote) or could not read the store, for at most
    ``settings.sweep_interval_seconds``. Repeats are safe: task names are per item, claim and
    sweep round, so work already queued is not queued twice. Logs, never raises a store error."""
    give_up_at = time.monotonic() + settings.sweep_interval_seconds
    pause = REQUEUE_RETRY_FIRST_SECONDS
    left = list(REQUEUES)
    queued: dict[str, int] = {}
    while True:
        at = now()
        for query in list(left):
            try:
                done = query.run(settings, store, queues, at)
            except StoreError as exc:
                log("WARNING", "start-up re-queue could not read the store", query=query.name,
                    error=exc.__class__.__name__)
                continue
            queued[query.name] = queued.get(query.name, 0) + done.queued
            if done.missed:
                log("WARNING", "start-up re-queue incomplete", query=query.name, queued=done.queued, missed=done.missed)
            else:
                left.remove(query)
        if not left:
            log("INFO", "start-up re-queue done", **queued)
            return
        if time.monotonic() + pause > give_up_at:
            log("ERROR", "start-up re-queue gave up; the sweep queues the rest", left=[query.name for query in left])
            return
        time.sleep(pause)
        pause = min(pause * 2, REQUEUE_RETRY_MAX_SECONDS)


def start_background(settings: Settings, store: DocumentStore, queue: TaskQueue | None,
                     event_queue: TaskQueue | None, *, now: Clock = utc_now,
                     line: LineGateway | None = None) -> threading.Thread:
    """The one background loop of a serving webhook, in a daemon thread: at start, one sweep's worth
    of work (the due staff notices, abandoned events, then ``requeue_at_start``), then ``sweep``
    every ``settings.sweep_interval_seconds`` for the life of the process (a failed pass is logged;
    the next one runs). Each pass runs under a fresh trace (``shared.trace``): its lines and the
    tasks it queues are followed as one.

    Called once per serving process (after the fork: ``shared.queue.background.BackgroundStart``),
    never at import; ``line`` as for ``sweep``. Returns the started thread.
    """
    queues = Queues(queue, event_queue)

    def loop() -> None:
        with trace.active(trace.TraceContext.fresh()):  # each pass a trace of its own (shared/trace.py)
            _logged_pass("start-up sweep", lambda: _due_and_abandoned(settings, store, queues, now()))
            requeue_at_start(settings, store, queues, now=now)
        stop = threading.Event()
        while not stop.wait(settings.sweep_interval_seconds):
            with trace.active(trace.TraceContext.fresh()):
                _logged_pass("sweep", lambda: sweep(settings, store, queue, event_queue, now=now(), line=line))

    thread = threading.Thread(target=loop, name="sweep", daemon=True)
    thread.start()
    return thread


def _logged_pass(name: str, work: Callable[[], object]) -> None:
    """Run one pass; a store error or a crash is logged, never raised (the next pass runs)."""
    try:
        work()
    except StoreError as exc:
        log("WARNING", f"{name} pass failed", error=exc.__class__.__name__)
    except Exception:  # noqa: BLE001 - the sweep must outlive a bad pass; it is logged
        log("ERROR", f"{name} pass crashed", exc_info=True)


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
