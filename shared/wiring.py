"""Adapter selection for the entry points. Domain code never imports an adapter; this does,
lazily, so a process only loads the backend its configuration names (Firestore stays unloaded
on the embedded default)."""
from __future__ import annotations

from shared.config import Settings
from shared.line import LineGateway
from shared.store import DocumentStore


def open_store(settings: Settings, *, read_only: bool = False) -> DocumentStore:
    """The store named by ``LOCAL_STORE_URL``.

    Raises:
        ValueError: unsupported URL scheme (only sqlite is built in this release).
    """
    url = settings.store_url or ""
    if url.startswith("sqlite:"):
        from shared.store.sqlite import SqliteStore

        return SqliteStore.from_url(url, deadline_seconds=settings.store_deadline_seconds,
                                    read_only=read_only)
    raise ValueError(f"unsupported LOCAL_STORE_URL scheme: {url.split(':', 1)[0]!r}")


def line_gateway(settings: Settings) -> LineGateway:
    """The LINE Messaging API client at ``LINE_API_BASE_URL``."""
    from shared.line.messaging import SdkLineGateway

    return SdkLineGateway(settings.line_api_base_url, settings.line_channel_access_token or "")


def task_queue(settings: Settings):
    """The task queue for handoff reconcile (embedded or Cloud Tasks); None until the handoff issue."""
    return None


def memory_client(settings: Settings):
    """The client of functions/memory; None until the memory issue."""
    return None


def webhook_service(settings: Settings):
    """The webhook use case wired to the configured store, LINE API, queue and memory function."""
    from shared.webhook.service import WebhookService

    return WebhookService(settings, open_store(settings), line_gateway(settings),
                          queue=task_queue(settings), memory=memory_client(settings))
