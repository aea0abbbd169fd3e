"""A reconcile task, one delivery of it, and its answer (the shapes shared by the webhook, the
queue's re-queues and functions/reconcile).

``ReconcileTask`` names one handoff operation and why it is reconciled; ``enqueue`` queues it under
its deterministic name; ``Attempt`` is one delivery (the task, "now", whether it is the queue's
last attempt); ``ReconcileResult`` is the HTTP answer to the queue. Importing this module loads no
LINE client and no store adapter, so the webhook can queue tasks cheaply.

Source: docs/design.md §4 (Reconcile; task names from a hash of the key); Cloud Tasks docs (task names are
reserved once used; any non-2xx is retried; X-CloudTasks-TaskRetryCount).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from shared.clock import from_iso
from shared.handoff import notify, records
from shared.handoff.records import Operation
from shared.identity import Actor
from shared.logs import log
from shared.queue import QueueError, TaskQueue, task_name_for

TASK_KIND = "handoff_reconcile"
#: Why a task exists: the webhook's create had an unknown outcome; the webhook relays the outbox in
#: case its reply fails; a worker found an undelivered notice at start-up.
UNKNOWN_OUTCOME, RELAY, REQUEUE = "unknown_outcome", "relay", "requeue"
REASONS = (UNKNOWN_OUTCOME, RELAY, REQUEUE)
#: The not-created reason when the user cancelled the draft while its create was being checked.
CANCELLED_BY_USER = "cancelled_by_user"


class InvalidReconcileTask(ValueError):
    """The task body is not a handoff reconcile task (answer 400; retrying cannot help)."""


@dataclass(frozen=True)
class ReconcileTask:
    """One queued reconcile: which operation, what content, and why.

    ``reply_event_id``: the webhook event that answered "checking" instead of the receipt; its
    claim on the notice is void (the user did not hear the receipt from it).
    ``tag``: what else tells this task apart from others of the same operation and reason: for a
    relay, the webhook event that created the request (and owns its notice); for a start-up
    re-queue, the notice claim it is queued for (``<state>|<notice_owner>|<notice_claim_until>``).
    """

    operation: Operation
    content_hash: str
    reason: str
    reply_event_id: str | None = None
    tag: str | None = None
    #: When the user tapped 「確認送出」 (ISO UTC), for an unknown outcome: expiry is judged at it.
    tapped_at: str | None = None

    @property
    def task_name(self) -> str:
        """``reconcile-<32 hex of SHA-256(key/reason/event/tag)>``: one name per purpose.

        Task names are reserved for good once used (Cloud Tasks; the embedded queue likewise), so a
        check after "checking", a relay and a re-queue of the same operation need distinct names,
        or a later one is silently dropped. Each is still the same from every process and restart,
        so two workers queueing the same work dedupe. Source: docs/design.md §4 (name from a hash of the key).
        """
        parts = (self.operation.idempotency_key, self.reason, self.reply_event_id or "-", self.tag or "-")
        return task_name_for("/".join(parts))

    def payload(self) -> dict[str, Any]:
        """The JSON body of the task (no request text, no tokens)."""
        return {"v": 1, "kind": TASK_KIND, "tenant_id": self.operation.actor.tenant_id,
                "user_id": self.operation.actor.user_id, "idempotency_key": self.operation.idempotency_key,
                "content_hash": self.content_hash, "reason": self.reason, "reply_event_id": self.reply_event_id,
                "tag": self.tag, "tapped_at": self.tapped_at}

    @classmethod
    def from_payload(cls, payload: object) -> "ReconcileTask":
        """Parse a task body.

        Raises:
            InvalidReconcileTask: not an object of this shape.
        """
        if not isinstance(payload, dict) or payload.get("kind") != TASK_KIND or payload.get("v") != 1:
            raise InvalidReconcileTask("not a handoff reconcile task")
        tenant, user, key = payload.get("tenant_id"), payload.get("user_id"), payload.get("idempotency_key")
        digest, reason, event = payload.get("content_hash"), payload.get("reason"), payload.get("reply_event_id")
        if not (isinstance(tenant, str) and tenant and isinstance(user, str) and user):
            raise InvalidReconcileTask("tenant_id and user_id are required")
        if not (isinstance(key, str) and records.is_idempotency_key(key)):
            raise InvalidReconcileTask("idempotency_key must be 32 lowercase hex")
        if not (isinstance(digest, str) and len(digest) == 64 and all(c in "0123456789abcdef" for c in digest)):
            raise InvalidReconcileTask("content_hash must be 64 lowercase hex")
        tag = payload.get("tag")
        if reason not in REASONS or not (event is None or isinstance(event, str)):
            raise InvalidReconcileTask("unknown reason or bad reply_event_id")
        if not (tag is None or isinstance(tag, str)):
            raise InvalidReconcileTask("bad tag")
        tapped_at = payload.get("tapped_at")
        if tapped_at is not None:
            try:
                from_iso(tapped_at)
            except (TypeError, ValueError) as exc:
                raise InvalidReconcileTask("tapped_at must be an ISO time with an offset") from exc
        return cls(Operation(Actor(tenant, user), key), digest, reason, event, tag, tapped_at)


def enqueue(queue: TaskQueue | None, task: ReconcileTask, *, delay_seconds: float = 0.0) -> bool:
    """Queue the task under its deterministic name; a name seen before counts as queued.

    Returns:
        True when the queue holds the task; False when there is no queue or it did not confirm
        (logged; the start-up re-queue and the user's own re-tap remain).
    """
    if queue is None:
        log("WARNING", "reconcile not queued: no task queue configured", reason=task.reason)
        return False
    try:
        queue.enqueue(task.task_name, task.payload(), delay_seconds=max(0.0, delay_seconds))
    except QueueError as exc:
        log("ERROR", "reconcile not queued", reason=task.reason, error=exc.__class__.__name__,
            task=task.task_name)
        return False
    return True


@dataclass(frozen=True)
class ReconcileResult:
    """The answer to one delivery: ``outcome`` (machine word), HTTP status for the queue, details."""

    outcome: str
    http_status: int
    request_id: str | None = None
    detail: dict[str, Any] = field(default_factory=dict)

    def body(self) -> dict[str, Any]:
        """The JSON body of the HTTP answer."""
        return {"outcome": self.outcome, "request_id": self.request_id, **self.detail}


@dataclass(frozen=True)
class Attempt:
    """One delivery of a reconcile task: the per-delivery context every step reads.

    Attributes:
        task: the task being delivered.
        now: aware UTC instant the delivery started.
        last: True on the queue's last attempt (``X-CloudTasks-TaskRetryCount`` + 1 =
            ``queue_max_attempts``): nothing may be left to a later one.
    """

    task: ReconcileTask
    now: datetime
    last: bool

    @property
    def operation(self) -> Operation:
        """The handoff operation the task names."""
        return self.task.operation

    @property
    def void_owner(self) -> str | None:
        """The reply owner known not to have told the receipt (the event answered "checking")."""
        return notify.reply_owner(self.task.reply_event_id) if self.task.reply_event_id else None
