"""Staff queue tasks, as functions/reconcile runs them: ``staff_notice`` (one push of the staff outbox).

Also the webhook's start-up hook (``start_background``): re-queue pending staff notices in a thread,
after the fork (never at import). Reminders and follow-ups come from the project's sweep
(``shared.sweep``, which runs ``shared.staff.sweep.run_sweep``).

Answers follow the queue's contract: 200 settled, 400 malformed body, 503 retry. Source: DESIGN §10;
Cloud Tasks docs (any non-2xx is retried).
"""
from __future__ import annotations

import threading
import time
from typing import Any

from shared.clock import Clock, utc_now
from shared.config import Settings
from shared.handoff.reconcile import ReconcileService
from shared.handoff.worker import sweep_round
from shared.line import LineGateway
from shared.logs import log
from shared.queue import TaskQueue
from shared.staff import relay
from shared.store import DocumentStore, StoreError

TASK_KINDS = relay.TASK_KINDS
InvalidStaffTask = relay.InvalidStaffTask


def is_staff_task(payload: object) -> bool:
    """True when a queue body names a staff task (routing in functions/reconcile)."""
    return isinstance(payload, dict) and payload.get("kind") in TASK_KINDS


def reconcile_service(settings: Settings, store: DocumentStore, lookup_store: DocumentStore, line: LineGateway,
                      clock: Clock = utc_now) -> ReconcileService:
    """functions/reconcile's service: a request it creates is announced to the staff group at once
    (``StaffRelay.announce_now``), besides its queued ``staff_notice`` task."""
    return ReconcileService(settings, store, lookup_store, line, clock,
                            announce=relay.StaffRelay(settings, store, line, clock).announce_now)


class StaffTaskService:
    """Runs staff tasks. Safe to share across threads.

    Args:
        settings: tenant, staff group, sweep interval, reminder age, lease, LINE timeout, queue attempts.
        store: the read-write store.
        line: the LINE gateway.
        queue: the task queue (the sweep queues pushes and its next slot), or None.
        clock: aware "now" (injected in tests).
    """

    def __init__(self, settings: Settings, store: DocumentStore, line: LineGateway, queue: TaskQueue | None,
                 clock: Clock = utc_now):
        self.settings = settings
        self.store = store
        self.queue = queue
        self.clock = clock
        self.relay = relay.StaffRelay(settings, store, line, clock)

    def run(self, payload: Any, *, retry_count: int) -> relay.TaskResult:
        """Run one delivery of a staff task.

        Args:
            payload: the task body (a JSON object).
            retry_count: ``X-CloudTasks-TaskRetryCount`` (0 on the first attempt).
        Raises:
            InvalidStaffTask: a malformed body (answer 400).
        """
        last = retry_count + 1 >= self.settings.queue_max_attempts
        result = self.relay.deliver(relay.parse_notice_task(payload, self.settings.tenant_id), last=last)
        log("INFO" if result.http_status < 500 else "WARNING", "staff task answered", outcome=result.outcome,
            status=result.http_status, kind=payload.get("kind"), retry_count=retry_count, **result.detail)
        return result


#: The start-up re-queue's pauses between passes that left a notice unqueued: doubling from the first
#: to the cap (seconds), for at most one sweep interval (then the periodic sweep queues the rest).
REQUEUE_RETRY_FIRST_SECONDS, REQUEUE_RETRY_MAX_SECONDS = 0.1, 5.0


def start_background(settings: Settings, store: DocumentStore, queue: TaskQueue | None, *,
                     now: Clock = utc_now) -> threading.Thread | None:
    """In a daemon thread: re-queue pending staff notices (a process killed after a commit).

    A pass that leaves a notice unqueued (the queue did not confirm, e.g. the store file's write lock
    stayed busy past the store deadline while the new worker's other start-up threads wrote) or could
    not read the store is repeated after a pause (``REQUEUE_RETRY_FIRST_SECONDS`` doubling to
    ``REQUEUE_RETRY_MAX_SECONDS``) for at most ``settings.sweep_interval_seconds``: a transient lock
    must not leave a staff card waiting a whole sweep interval. Repeats are safe: task names are
    per notice, claim and sweep round, so a notice already queued is not queued twice.

    Called once per serving process (after the fork) by functions/webhook; never at import.
    Returns:
        The started thread (tests join it), or None when there is no queue.
    """
    if queue is None:
        return None

    def run() -> None:
        give_up_at = time.monotonic() + settings.sweep_interval_seconds
        pause = REQUEUE_RETRY_FIRST_SECONDS
        while True:
            at = now()
            try:
                done = relay.requeue_pass(settings, store, queue, now=at, round_tag=sweep_round(settings, at))
                if not done.missed:
                    log("INFO", "staff start-up re-queue done", notices=done.queued)
                    return
                log("WARNING", "staff start-up re-queue incomplete", notices=done.queued, missed=done.missed)
            except StoreError as exc:
                log("WARNING", "staff start-up re-queue could not read the store", error=exc.__class__.__name__)
            if time.monotonic() + pause > give_up_at:
                log("ERROR", "staff start-up re-queue gave up; the sweep queues the rest")
                return
            time.sleep(pause)
            pause = min(pause * 2, REQUEUE_RETRY_MAX_SECONDS)

    thread = threading.Thread(target=run, name="staff-requeue", daemon=True)
    thread.start()
    return thread
