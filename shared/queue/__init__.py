"""The task queue port (Cloud Tasks semantics) and its errors. Adapters live in submodules
(``shared.queue.embedded``, ``shared.queue.cloudtasks``) and are imported only by ``shared.wiring``."""
from shared.queue.port import (  # noqa: F401
    EnqueueResult,
    InvalidTask,
    QueueError,
    QueueUnavailable,
    TaskQueue,
    task_name_for,
)
