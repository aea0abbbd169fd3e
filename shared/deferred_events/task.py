"""The queued-event task: one webhook event handed from the webhook to the queue.

The task names the event, nothing more (no text, no token): the event itself waits in its inbox
document (``shared.inbox``, state ``queued``), the store being the source of truth. The
task is named from the ``webhookEventId`` (hashed, as Cloud Tasks advises against sequential
names), so a redelivered event and a re-queue of it create one task; a start-up re-queue adds a
``tag`` (the notice's claim) so that it is not swallowed by a finished task's reserved name.

Source: docs/design.md §3, §8 (turn tasks named from the webhookEventId); Cloud Tasks docs, "Create HTTP
target tasks" (task names, deduplication).
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from shared.clock import from_iso, utc_now
from shared.logs import log
from shared.queue import QueueError, TaskQueue, task_name_for

TASK_KIND = "queued_event"
#: LINE's webhookEventId is a 26-character ULID; anything else this long and plain is accepted.
_MAX_EVENT_ID_CHARS = 64


class InvalidQueuedEventTask(ValueError):
    """The task body is not a queued-event task (answer 400; retrying cannot help)."""


@dataclass(frozen=True)
class QueuedEventTask:
    """One queued webhook event: ``(tenant_id, webhook_event_id)`` and an optional re-queue ``tag``."""

    tenant_id: str
    webhook_event_id: str
    tag: str | None = None

    @property
    def task_name(self) -> str:
        """``event-<32 hex of SHA-256(tenant/webhookEventId/tag)>``: the same from every process."""
        return task_name_for("/".join((self.tenant_id, self.webhook_event_id, self.tag or "-")), prefix="event")

    def payload(self) -> dict[str, Any]:
        """The JSON body of the task."""
        return {"v": 1, "kind": TASK_KIND, "tenant_id": self.tenant_id,
                "webhook_event_id": self.webhook_event_id, "tag": self.tag}

    @classmethod
    def from_payload(cls, payload: object) -> "QueuedEventTask":
        """Parse a task body.

        Raises:
            InvalidQueuedEventTask: not an object of this shape.
        """
        if not isinstance(payload, dict) or payload.get("kind") != TASK_KIND or payload.get("v") != 1:
            raise InvalidQueuedEventTask("not a queued-event task")
        tenant, event_id, tag = payload.get("tenant_id"), payload.get("webhook_event_id"), payload.get("tag")
        if not (isinstance(tenant, str) and tenant):
            raise InvalidQueuedEventTask("tenant_id is required")
        if not (isinstance(event_id, str) and 0 < len(event_id) <= _MAX_EVENT_ID_CHARS
                and event_id.isascii() and event_id.isalnum()):
            raise InvalidQueuedEventTask("webhook_event_id must be 1-64 ASCII letters or digits")
        if not (tag is None or isinstance(tag, str)):
            raise InvalidQueuedEventTask("bad tag")
        return cls(tenant, event_id, tag)


def enqueue(queue: TaskQueue | None, task: QueuedEventTask, *, delay_seconds: float = 0.0) -> bool:
    """Queue the task under its deterministic name; a name seen before counts as queued.

    Returns:
        True when the queue holds the task; False when there is no queue or it did not confirm
        (logged; the event stays ``queued`` in the store and the start-up re-queue finds it).
    """
    if queue is None:
        log("WARNING", "queued event not queued: no event queue configured")
        return False
    try:
        queue.enqueue(task.task_name, task.payload(), delay_seconds=max(0.0, delay_seconds))
    except QueueError as exc:
        log("ERROR", "queued event not queued", error=exc.__class__.__name__, task=task.task_name)
        return False
    return True


def enqueue_all(queue: TaskQueue | None, tasks: list[QueuedEventTask]) -> int:
    """Queue several tasks: in one write when the queue offers ``enqueue_many`` (the embedded queue),
    else one by one. Returns how many the queue confirmed (a known name counts); failures are logged
    and left to the start-up re-queue (the store already holds every event as ``queued``)."""
    if not tasks:
        return 0
    if queue is None:
        log("WARNING", "queued events not queued: no event queue configured", events=len(tasks))
        return 0
    many = getattr(queue, "enqueue_many", None)
    if callable(many):
        try:
            many([(task.task_name, task.payload()) for task in tasks])
            return len(tasks)
        except QueueError as exc:
            log("ERROR", "queued events not queued", events=len(tasks), error=exc.__class__.__name__)
            return 0
    return sum(1 for task in tasks if enqueue(queue, task))


def requeue_queued(store, tenant_id: str, queue: TaskQueue | None, round_tag: str = "", *,
                   now: datetime | None = None) -> int:
    """Queue again every event of the tenant still ``queued`` with its answer pending (start-up).

    The store is the source of truth (docs/design.md §1): an event whose task failed for good, or whose
    enqueue never confirmed, is found here. The task is tagged with the notice's current claim, so
    a finished task's reserved name does not swallow it, while two processes starting together
    queue it once; ``round_tag`` (the sweep's round) lets a later sweep queue it again when even
    that task ended without reaching the worker.

    Returns:
        How many events were handed to the queue (a known name counts).
    Raises:
        StoreUnavailable: the store could not be read.
    """
    from shared import inbox

    count = 0
    now = now or utc_now()
    for doc in inbox.queued_events(store, tenant_id):
        event_id = doc.get("webhook_event_id")
        until = doc.get("notice_claim_until")
        if until and from_iso(until) > now:
            continue  # a worker attempt holds it right now
        if not isinstance(event_id, str) or not event_id:
            continue
        tag = f"requeue|{doc.get('notice_claim_until')}|{doc.get('answer_via')}|{round_tag}"
        if enqueue(queue, QueuedEventTask(tenant_id, event_id, tag=tag)):
            count += 1
    log("INFO", "queued events re-queued", events=count)
    return count
