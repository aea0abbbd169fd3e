"""Background work of a serving process: the queue's dispatcher and the start-up re-queue.

functions-framework runs gunicorn, which imports ``main.py`` in its master and then forks the
worker that serves (``functions_framework/_http/gunicorn.py``: ``GunicornApplication.load``
returns the app built before the fork). Threads do not survive a fork, and a connection opened
in the master must not be shared, so nothing here runs at import: ``BackgroundStart`` is armed at
import with ``os.register_at_fork(after_in_child=…)`` and also called on every request; it runs
once per process id (a respawned worker — e.g. after SIGKILL — runs it again).

Start-up re-queue (DESIGN §1, §4: the store is the source of truth): operations whose notice was
never delivered, and operations still pending verification, are queued again under their
deterministic task names; a name the queue has seen is not queued twice.
"""
from __future__ import annotations

import os
import threading
from datetime import datetime
from typing import Callable

from shared.clock import utc_now
from shared.config import Settings
from shared.handoff import notify, records
from shared.handoff.reconcile import REQUEUE, UNKNOWN_OUTCOME, ReconcileTask, enqueue, requeue_delay_seconds
from shared.handoff.records import Operation
from shared.identity import Actor
from shared.logs import log
from shared.queue import TaskQueue
from shared.store import DocumentStore, StoreError


def pending_operations(store: DocumentStore, tenant_id: str) -> list[dict]:
    """Operation documents of the tenant with an undelivered notice or still pending verification.

    Raises:
        StoreUnavailable: the store could not be read.
    """
    undelivered = store.query(records.OPERATIONS, where={"tenant_id": tenant_id, "notice_state": notify.PENDING})
    pending = store.query(records.OPERATIONS, where={"tenant_id": tenant_id, "state": "pending_verification"})
    seen: dict[str, dict] = {}
    for doc in undelivered + pending:
        seen.setdefault(f"{doc.get('user_id')}/{doc.get('idempotency_key')}", doc)
    return list(seen.values())


def requeue_task(operation: Operation, doc: dict) -> ReconcileTask:
    """The re-queue task for one pending operation document.

    Its name is tagged with the state and notice claim it is queued for, so a restart re-queues
    work whose earlier task already ended, while two workers reading the same state dedupe. An
    operation still pending verification keeps the event that was told "checking", so the push
    that follows carries that event's retry key (LINE delivers it once).

    Raises:
        KeyError / TypeError: a malformed document.
    """
    tag = "|".join(str(doc.get(name)) for name in ("state", "notice_owner", "notice_claim_until"))
    if doc.get("state") == "pending_verification":
        return ReconcileTask(operation, doc["content_hash"], UNKNOWN_OUTCOME, doc.get("checked_event"), tag=tag)
    return ReconcileTask(operation, doc["content_hash"], REQUEUE, tag=tag)


def requeue_pending(settings: Settings, store: DocumentStore, queue: TaskQueue | None, *,
                    now: datetime) -> int:
    """Queue a reconcile task for every pending operation of this tenant.

    A notice still owned by a reply is queued to run when that reply's lease ends.
    Returns:
        How many operations were handed to the queue (a known name counts).
    Raises:
        StoreUnavailable: the store could not be read.
    """
    count = 0
    for doc in pending_operations(store, settings.tenant_id):
        try:
            operation = Operation(Actor(doc["tenant_id"], doc["user_id"]), doc["idempotency_key"])
            task = requeue_task(operation, doc)
        except (KeyError, TypeError):
            log("ERROR", "pending operation is malformed; skipped")
            continue
        if enqueue(queue, task, delay_seconds=requeue_delay_seconds(doc, now)):
            count += 1
    log("INFO", "start-up re-queue done", operations=count)
    return count


class BackgroundStart:
    """Run ``start`` once per process, in the process that serves; safe from any thread.

    Args:
        start: the work to begin (start the dispatcher, launch the re-queue); exceptions are logged.
    """

    def __init__(self, start: Callable[[], None]):
        self._start = start
        self._lock = threading.Lock()
        self._pid: int | None = None

    def after_fork(self) -> None:
        """The ``os.register_at_fork(after_in_child=…)`` hook: a fresh lock, then start."""
        self._lock = threading.Lock()
        self._pid = None
        self.ensure_started()

    def ensure_started(self) -> bool:
        """Start unless this process already did. Returns True when this call started it."""
        pid = os.getpid()
        if self._pid == pid:
            return False
        with self._lock:
            if self._pid == pid:
                return False
            self._pid = pid
        try:
            self._start()
        except Exception:  # noqa: BLE001 - background start must never break serving; it is logged
            log("ERROR", "background start failed", exc_info=True)
        return True


def start_queue_work(settings: Settings, store: DocumentStore, queue: TaskQueue | None, *,
                     requeue: bool) -> None:
    """Start the queue's dispatcher thread (embedded queue) and, if asked, the re-queue thread."""
    if queue is None:
        return
    start = getattr(queue, "start", None)
    if callable(start):
        start()
    if requeue:
        start_thread("handoff-requeue", lambda: requeue_pending(settings, store, queue, now=utc_now()))


def start_thread(name: str, work: Callable[[], object]) -> None:
    """Run ``work`` once in a daemon thread; a store error is logged, never raised."""
    def run() -> None:
        try:
            work()
        except StoreError as exc:
            log("ERROR", f"{name} failed", error=exc.__class__.__name__)

    threading.Thread(target=run, name=name, daemon=True).start()
