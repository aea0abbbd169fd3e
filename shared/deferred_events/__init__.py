"""Queued webhook events: the task the webhook queues and the worker core that answers it
(docs/design.md §3, §8, §11)."""
