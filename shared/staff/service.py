"""Staff queue tasks, as functions/reconcile runs them: ``staff_notice`` (one push of the staff outbox).

Pending staff notices are queued again, and reminders and follow-ups recorded, by the project's
sweep (``shared.sweep``: its start-up re-queue and its periodic pass).

Answers follow the queue's contract: 200 settled, 400 malformed body, 503 retry. Source: docs/design.md §10;
Cloud Tasks docs (any non-2xx is retried).
"""
from __future__ import annotations

from typing import Any

from shared.clock import Clock, utc_now
from shared.config import Settings
from shared.handoff.reconcile import ReconcileService
from shared.line import LineGateway
from shared.logs import log
from shared.queue import TaskQueue
from shared.staff import relay
from shared.store import DocumentStore

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
