"""Task queue port with Cloud Tasks semantics: named HTTP tasks, deduplicated by name.

A task is a JSON object delivered as the body of an HTTP POST to the queue's target (for
handoff: functions/reconcile). The caller names each task from a hash of its idempotency key
(``task_name_for``), so enqueueing the same operation twice — a retry, a start-up re-queue —
creates one task: a name already seen answers ``created=False``, never an error.

Source: docs/design.md §1 (embedded default), §4 (reconcile task named from a hash of the key);
Cloud Tasks docs, "Create HTTP target tasks" (task names, deduplication, X-CloudTasks-* headers).
"""
from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from typing import Any, Protocol

#: Cloud Tasks task ids: letters, digits, hyphens and underscores, at most 500 characters.
TASK_NAME_RE = re.compile(r"^[A-Za-z0-9_-]{1,500}$")
#: Cloud Tasks refuses tasks larger than 100 KB; the payload (as JSON bytes) stays well under it.
MAX_PAYLOAD_BYTES = 90_000


class QueueError(Exception):
    """Base of every queue error. ``retryable`` says whether trying again may help."""

    retryable = False


class InvalidTask(QueueError):
    """The task name, payload or delay is malformed; nothing was enqueued; not retryable."""


class QueueUnavailable(QueueError):
    """The queue did not confirm the enqueue: it may or may not exist; retryable with the same name."""

    retryable = True


@dataclass(frozen=True)
class EnqueueResult:
    """The queue holds the task. ``created`` is False when the name was already taken (a duplicate)."""

    name: str
    created: bool


def task_name_for(key: str, prefix: str = "reconcile") -> str:
    """A deterministic Cloud Tasks task id for one operation.

    Args:
        key: the operation's idempotency key (any text; it is hashed, never shown).
        prefix: letters, digits, hyphens or underscores naming the kind of work.
    Returns:
        ``<prefix>-<first 32 lowercase hex of SHA-256(key)>``, e.g. ``reconcile-3f2a…`` (42 chars).
    Raises:
        InvalidTask: empty key, or a prefix Cloud Tasks would refuse.
    Source: docs/design.md §4 ("a task name derived from a hash of the key").
    """
    if not key:
        raise InvalidTask("an idempotency key is required to name a task")
    name = f"{prefix}-{hashlib.sha256(key.encode('utf-8')).hexdigest()[:32]}"
    validate_task_name(name)
    return name


def validate_task_name(name: str) -> str:
    """Return ``name`` if Cloud Tasks accepts it as a task id. Raises InvalidTask otherwise."""
    if not isinstance(name, str) or not TASK_NAME_RE.match(name):
        raise InvalidTask("task names are 1-500 letters, digits, hyphens or underscores")
    return name


def encode_payload(payload: dict[str, Any]) -> bytes:
    """The HTTP body for a task: compact UTF-8 JSON of one object.

    Raises:
        InvalidTask: not a JSON object, not serialisable, or larger than MAX_PAYLOAD_BYTES.
    """
    if not isinstance(payload, dict):
        raise InvalidTask("a task payload is a JSON object")
    try:
        body = json.dumps(payload, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode("utf-8")
    except (TypeError, ValueError) as exc:
        raise InvalidTask(f"task payload is not JSON: {exc.__class__.__name__}") from exc
    if len(body) > MAX_PAYLOAD_BYTES:
        raise InvalidTask(f"task payload is {len(body)} bytes; the limit is {MAX_PAYLOAD_BYTES}")
    return body


def validate_delay(delay_seconds: float) -> float:
    """Return the delay in seconds if it is a finite number ≥ 0. Raises InvalidTask otherwise."""
    try:
        delay = float(delay_seconds)
    except (TypeError, ValueError) as exc:
        raise InvalidTask("delay_seconds must be a number of seconds") from exc
    if not delay >= 0 or delay == float("inf"):
        raise InvalidTask("delay_seconds must be zero or more (and finite)")
    return delay


class TaskQueue(Protocol):
    """A queue of named HTTP tasks, each delivered at least once to the queue's target.

    Delivery is an HTTP POST whose body is the payload as JSON, with Cloud Tasks' headers
    (``X-CloudTasks-QueueName``, ``-TaskName``, ``-TaskRetryCount``, ``-TaskExecutionCount``,
    ``-TaskETA``). A 2xx answer ends the task; anything else is retried with backoff until the
    queue's maximum attempts. The handler must be idempotent: a task may arrive more than once.
    """

    def enqueue(self, name: str, payload: dict[str, Any], *, delay_seconds: float = 0.0) -> EnqueueResult:
        """Add a named task, or find it already there.

        Args:
            name: task id from ``task_name_for`` (letters, digits, ``-``, ``_``; ≤ 500 chars).
            payload: a JSON object, e.g. ``{"kind": "reconcile", "tenant_id", "user_id",
                "idempotency_key"}``; never logged.
            delay_seconds: earliest delivery, in seconds from now (0 = as soon as possible).
        Returns:
            EnqueueResult(name, created); created is False when the name was seen before
            (pending, running, succeeded or failed) — a success, not an error.
        Raises:
            InvalidTask: bad name, payload or delay; nothing enqueued.
            QueueUnavailable: not confirmed; may or may not be enqueued. Retrying with the same
                name is safe; the start-up re-queue covers a caller that gives up.
        """
