"""Adapter selection for the entry points. Domain code never imports an adapter; this does,
lazily, so a process only loads the backend its configuration names (Firestore stays unloaded
on the embedded default)."""
from __future__ import annotations

from shared import keys
from shared.config import Settings
from shared.line import LineGateway
from shared.store import DocumentStore


def user_hasher(settings: Settings) -> keys.UserHasher | None:
    """The keyed hasher of LINE user ids (``shared.keys.UserHasher``) for logs and turn records, from
    ``LOCAL_SIGNING_KEY`` (its version and previous key); None when the key is not set."""
    return keys.user_hasher(settings)


def open_store(settings: Settings, *, read_only: bool = False) -> DocumentStore:
    """The store named by ``LOCAL_STORE_URL``: ``sqlite:////abs/path.sqlite3``,
    ``firestore://PROJECT[/DATABASE]`` (no connection is made here; the client is built on first use),
    or ``memory://NAME`` (this process's in-memory database NAME: tests and one-process tools only).

    Raises:
        ValueError: unsupported URL scheme or malformed URL.
    """
    url = settings.store_url or ""
    if url.startswith("sqlite:"):
        from shared.store.sqlite import SqliteStore

        return SqliteStore.from_url(url, deadline_seconds=settings.store_deadline_seconds,
                                    read_only=read_only)
    if url.startswith("memory:"):
        from shared.store.memory import MemoryStore

        return MemoryStore.from_url(url, deadline_seconds=settings.store_deadline_seconds, read_only=read_only)
    if url.startswith("firestore:"):
        from shared.store.firestore import FirestoreStore

        return FirestoreStore.from_url(url, deadline_seconds=settings.store_deadline_seconds,
                                       read_only=read_only)
    raise ValueError(f"unsupported LOCAL_STORE_URL scheme: {url.split(':', 1)[0]!r}")


def activity_source(settings: Settings, *, file: str | None = None):
    """Where ingestion reads activities: the file (TDX's response format) when given, else TDX's live
    API with ``TDX_CLIENT_ID`` / ``TDX_CLIENT_SECRET``, ``TDX_TOKEN_URL`` and ``TDX_API_BASE_URL``.

    Raises:
        ValueError: no file and no TDX credentials.
    """
    if file is not None:
        from shared.events.file_source import FileActivitySource

        return FileActivitySource(file)
    if not (settings.tdx_client_id and settings.tdx_client_secret):
        raise ValueError("TDX_CLIENT_ID and TDX_CLIENT_SECRET are required to fetch live activities")
    from shared.events.tdx import TdxActivitySource

    return TdxActivitySource(api_base_url=settings.tdx_api_base_url, token_url=settings.tdx_token_url,
                             client_id=settings.tdx_client_id, client_secret=settings.tdx_client_secret,
                             timeout_seconds=settings.tdx_timeout_seconds, max_retries=settings.tdx_max_retries,
                             backoff_seconds=settings.tdx_backoff_seconds)


class _RestaurantSource:
    """TDX's restaurants (``/v2/Tourism/Restaurant/ChanghuaCounty``, or a file in that format) through the
    events' TDX client (token, retries, If-Modified-Since), its failures as the places import reads them."""

    def __init__(self, inner):
        self._inner = inner

    def fetch(self, *, if_modified_since: str | None = None):
        from shared.events.source import SourceError
        from shared.places.ingest import RestaurantsFetched, RestaurantsUnavailable

        try:
            fetched = self._inner.fetch(if_modified_since=if_modified_since)
        except SourceError as exc:
            raise RestaurantsUnavailable(exc.reason) from None
        return RestaurantsFetched(fetched.records, fetched.last_modified, fetched.origin)


def restaurant_source(settings: Settings, *, file: str | None = None):
    """Where the places import reads TDX's restaurants: the file (TDX's response format) when given,
    else TDX's live API with the same credentials and settings as the events import.

    Raises:
        ValueError: no file and no TDX credentials.
    """
    if file is not None:
        from shared.events.file_source import FileActivitySource

        return _RestaurantSource(FileActivitySource(file))
    if not (settings.tdx_client_id and settings.tdx_client_secret):
        raise ValueError("TDX_CLIENT_ID and TDX_CLIENT_SECRET are required to fetch live restaurants")
    from shared.events.tdx import TdxActivitySource

    return _RestaurantSource(TdxActivitySource(
        api_base_url=settings.tdx_api_base_url, token_url=settings.tdx_token_url, dataset="Restaurant",
        client_id=settings.tdx_client_id, client_secret=settings.tdx_client_secret,
        timeout_seconds=settings.tdx_timeout_seconds, max_retries=settings.tdx_max_retries,
        backoff_seconds=settings.tdx_backoff_seconds))


def line_gateway(settings: Settings) -> LineGateway:
    """The LINE Messaging API client at ``LINE_API_BASE_URL``."""
    from shared.line.messaging import SdkLineGateway

    return SdkLineGateway(settings.line_api_base_url, settings.line_channel_access_token or "")


def task_queue(settings: Settings):
    """The task queue for handoff reconcile, or None when no target is configured.

    * ``LOCAL_TASKS_QUEUE_PATH`` set → Cloud Tasks (HTTP tasks to ``RECONCILE_FUNCTION_URL`` with an
      OIDC token for ``LOCAL_TASKS_SERVICE_ACCOUNT``);
    * else a SQLite store and ``RECONCILE_FUNCTION_URL`` set → the embedded queue, durable in the
      store's file, dispatching with ``Authorization: Bearer <LOCAL_INTERNAL_TOKEN>``;
    * else None: handoff still works, and an unknown outcome says it cannot be checked automatically.

    Nothing connects and no thread starts here; the embedded dispatcher is started in the worker.
    """
    return _task_queue(settings, settings.tasks_queue_path, settings.reconcile_function_url, settings.queue_name)


def agent_queue(settings: Settings):
    """The task queue of queued webhook events (target functions/agent), or None when none is configured.

    * ``LOCAL_AGENT_TASKS_QUEUE_PATH`` set → Cloud Tasks (HTTP tasks to ``AGENT_FUNCTION_URL`` with an
      OIDC token for ``LOCAL_TASKS_SERVICE_ACCOUNT``);
    * else a SQLite store and ``AGENT_FUNCTION_URL`` set → the embedded queue ``LOCAL_AGENT_QUEUE_NAME``
      in the store's file, with the same retry policy as the reconcile queue;
    * else None: the webhook then answers 503 for what it cannot finish in time (LINE's redelivery,
      when the operator enabled it, is the only net).
    """
    return _task_queue(settings, settings.agent_tasks_queue_path, settings.agent_function_url,
                       settings.agent_queue_name)


def _task_queue(settings: Settings, tasks_queue_path: str | None, target_url: str | None, queue_name: str):
    """Cloud Tasks when ``tasks_queue_path`` is set; else the embedded queue ``queue_name`` in the SQLite
    store's file when ``target_url`` is set; else None. One retry policy for every queue (config)."""
    if tasks_queue_path:
        from shared.queue.cloudtasks import CloudTasksQueue

        return CloudTasksQueue(tasks_queue_path, target_url=target_url or "",
                               service_account_email=settings.tasks_service_account or "",
                               dispatch_deadline_seconds=settings.queue_dispatch_deadline_seconds,
                               emulator_host=settings.tasks_emulator_host)
    url = settings.store_url or ""
    if url.startswith("sqlite:") and target_url:
        from shared.queue.embedded import EmbeddedQueue
        from shared.store.sqlite import path_from_url

        return EmbeddedQueue(path_from_url(url), queue_name=queue_name,
                             target_url=target_url, auth_token=settings.internal_token,
                             min_backoff_seconds=settings.queue_min_backoff_seconds,
                             max_backoff_seconds=settings.queue_max_backoff_seconds,
                             max_attempts=settings.queue_max_attempts,
                             max_doublings=settings.queue_max_doublings,
                             dispatch_deadline_seconds=settings.queue_dispatch_deadline_seconds,
                             lock_timeout_seconds=settings.store_deadline_seconds,
                             max_concurrent_dispatches=settings.queue_max_concurrent_dispatches)
    return None


def deferred_event_worker(settings: Settings, handler=None):
    """The queued-event worker (functions/agent's core) wired to the store, LINE, the reconcile queue
    and functions/memory. ``handler``: the ``shared.deferred_events.worker.EventHandler`` seam (None: the
    webhook's dispatch table)."""
    from shared.deferred_events.worker import QueuedEventWorker

    if handler is None and settings.model_backend != "offline":
        handler = model_handler()
    return QueuedEventWorker(settings, open_store(settings), line_gateway(settings), handler=handler,
                             queue=task_queue(settings), memory=memory_client(settings))


def model_handler():
    """The queued-event handler with the model: the routing table, with free text read by Gemini
    through ADK (shared.agent; loaded here, in functions/agent only, never in the webhook)."""
    import dataclasses

    from shared.agent.agent import run_model_text_turn, warm_up
    from shared.routing import dispatch_event

    warm_up()

    def handle(ctx, event):
        return dispatch_event(dataclasses.replace(ctx, text_turn=run_model_text_turn), event)

    return handle


def memory_client(settings: Settings):
    """The client of functions/memory at ``MEMORY_FUNCTION_URL``, or None when it is not set
    (memory flows then say the feature is off and write nothing).

    Credentials: ``LOCAL_INTERNAL_TOKEN`` on the embedded default, else a Google ID token for the
    function's URL (shared.memory.auth).
    """
    if not settings.memory_function_url:
        return None
    from shared.memory.auth import caller_credentials
    from shared.memory.client import HttpMemoryClient

    return HttpMemoryClient(settings.memory_function_url, caller_credentials(settings))


def webhook_service(settings: Settings):
    """The webhook use case wired to the configured store, LINE API, queue and memory function.

    Without an event queue (a webhook-only deployment) an answer still owed by push is answered in
    this process (``shared.deferred_events.local.LocalEventQueue``: the queued-event worker with the
    webhook's own dispatch table, never the model)."""
    from shared.deferred_events.local import LocalEventQueue
    from shared.deferred_events.worker import QueuedEventWorker
    from shared.webhook.service import WebhookService

    store, line, queue, memory = open_store(settings), line_gateway(settings), task_queue(settings), \
        memory_client(settings)
    event_queue = agent_queue(settings)
    local = None if event_queue is not None else LocalEventQueue(
        QueuedEventWorker(settings, store, line, queue=queue, memory=memory))
    return WebhookService(settings, store, line, queue=queue, memory=memory, event_queue=event_queue,
                          local_events=local)
