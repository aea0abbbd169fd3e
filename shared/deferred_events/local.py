"""The queued-event queue of a webhook-only deployment: tasks answered at once, in this process.

Without an event queue (no ``AGENT_FUNCTION_URL`` / ``LOCAL_AGENT_TASKS_QUEUE_PATH``) the webhook
still owes some answers by push: a reply LINE answered 429 or never received, and the follow-up of a
reply of unknown outcome whose answer must reach the resident (``shared.context.Reply.follow_up``).
The store records each one as a queued event (``shared.inbox.queue_event``), as in the full wiring;
``LocalEventQueue`` stands where the event queue would, and runs the queued-event worker
(``shared.deferred_events.worker``) on the task as it is enqueued: the same claim, the same records,
the same ``X-Line-Retry-Key``. A delivery that must be tried again (the worker's 503: a push LINE
answered 429, 5xx or never received) stays pending in the store, and the sweep (``shared.sweep``,
every ``LOCAL_SWEEP_INTERVAL_SECONDS`` in a serving webhook) enqueues it here again; each of those
tries is a first attempt, so it is tried until LINE answers it. A delay is not honoured: the sweep
is the retry. Source: docs/design.md §11; docs/delivery.md (task queue).
"""
from __future__ import annotations

from typing import Any

from shared.deferred_events.task import QueuedEventTask
from shared.deferred_events.worker import QueuedEventWorker
from shared.logs import log
from shared.queue import EnqueueResult


class LocalEventQueue:
    """A ``shared.queue.TaskQueue`` for queued-event tasks that answers each one in the caller's thread.

    Args:
        worker: the queued-event worker, wired to this process's store and LINE gateway (its
            handler is the webhook's own dispatch table: the webhook never loads the model).
    """

    def __init__(self, worker: QueuedEventWorker):
        self.worker = worker

    def enqueue(self, task_name: str, payload: dict[str, Any], *, delay_seconds: float = 0.0) -> EnqueueResult:
        """Answer the task now (``QueuedEventWorker.run``, as its first attempt).

        Returns:
            EnqueueResult(created=True): whatever the answer, the task is settled or left pending
            in the store for the sweep; nothing here raises.
        """
        try:
            result = self.worker.run(QueuedEventTask.from_payload(payload), retry_count=0)
        except Exception as exc:  # noqa: BLE001 - the store still holds the event; the sweep tries again
            log("ERROR", "queued event not answered in this process", error=exc.__class__.__name__, task=task_name)
        else:
            if result.http_status >= 500:
                log("INFO", "queued event left to the sweep", outcome=result.outcome, task=task_name)
        return EnqueueResult(task_name, True)
