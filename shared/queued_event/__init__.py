"""Queued webhook events: the task the webhook queues and the worker core that answers it (DESIGN §3, §8, §11)."""
