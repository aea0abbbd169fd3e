"""The process's google-genai client, the ADK model over it, and the one event loop model turns run on.

Per process (docs/design.md §8): one ``google.genai.Client`` per client configuration (backend, key,
endpoint, budget), one ADK ``Gemini`` model per model id over it, and one daemon thread running one
asyncio loop on which every model turn runs (``run_on_model_loop``). Why one loop: google-genai keeps one
aiohttp session per running loop (``BaseApiClient._get_aiohttp_session``) and ADK one client per running
loop (``google.adk.utils._event_loop_cache``); an ``asyncio.run`` per turn would open a new session with
its own connections every turn and leave the last one open. On the one loop the session, its connection
pool and the TLS context are built once and reused by every turn.

The client's own retries fit inside the turn's budget (``retry_plan``). ``close_clients`` closes every
client (async session on its loop, then the sync transport) and stops the loop; it runs at interpreter
exit (``atexit``). A forked child starts with none of the parent's clients or loop (``os.register_at_fork``):
the parent's sockets are never shared.

Only shared.agent imports this module (the webhook never loads google.adk or google.genai).
"""
from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import functools
import os
import ssl
import threading
from collections.abc import Coroutine
from dataclasses import dataclass
from typing import Any, TypeVar

import certifi
from google import genai
from google.adk.models.google_llm import Gemini
from google.genai import types

from shared.config import Settings

#: The API key the stand-in is given (google-genai needs one for the Gemini API; it is not a secret).
STANDIN_API_KEY = "local-standin-key"

#: Retries of one model request (google-genai ``HttpRetryOptions``), Gemini API troubleshooting
#: (https://ai.google.dev/gemini-api/docs/troubleshooting): 500, 503 and 504 are transient and worth one
#: quick retry. 429 is not retried here: a quota lasts longer than a turn, and google-genai does not read
#: ``Retry-After``, so a retry would spend the turn and the quota for nothing.
RETRY_ATTEMPTS = 2
RETRY_STATUS_CODES = (408, 500, 502, 503, 504)
RETRY_INITIAL_DELAY_SECONDS = 0.25
RETRY_JITTER_SECONDS = 0.25
#: tenacity's ``wait_exponential_jitter`` caps every wait at ``max``: no wait between attempts is longer.
RETRY_MAX_DELAY_SECONDS = 0.5
#: Below this per-attempt timeout a retry is not worth it: the whole budget goes to one attempt.
MIN_ATTEMPT_SECONDS = 3.0

_T = TypeVar("_T")


@dataclass(frozen=True)
class RetryPlan:
    """How one model request spends the turn's budget.

    Attributes:
        attempts: requests at most, the first included (1: no retry).
        attempt_timeout_seconds: google-genai's HTTP timeout of each attempt (``HttpOptions.timeout``).
        max_delay_seconds: the longest wait between two attempts.
    The worst case, ``attempts × attempt_timeout_seconds + (attempts − 1) × max_delay_seconds``, is at
    most the budget the plan was made for.
    """

    attempts: int
    attempt_timeout_seconds: float
    max_delay_seconds: float

    @property
    def worst_case_seconds(self) -> float:
        """Seconds the client may spend on one request, retries and waits included."""
        return self.attempts * self.attempt_timeout_seconds + (self.attempts - 1) * self.max_delay_seconds

    @property
    def timeout_ms(self) -> int:
        """``HttpOptions.timeout`` (google-genai counts milliseconds), rounded down."""
        return int(self.attempt_timeout_seconds * 1000)

    def http_retry_options(self) -> types.HttpRetryOptions:
        """google-genai's retry options for this plan (``attempts=1``: google-genai never retries)."""
        if self.attempts <= 1:
            return types.HttpRetryOptions(attempts=1)
        return types.HttpRetryOptions(attempts=self.attempts, initial_delay=RETRY_INITIAL_DELAY_SECONDS,
                                      max_delay=self.max_delay_seconds, exp_base=2.0,
                                      jitter=RETRY_JITTER_SECONDS, http_status_codes=list(RETRY_STATUS_CODES))


def retry_plan(budget_seconds: float) -> RetryPlan:
    """The retry plan for a turn of ``budget_seconds`` (``LOCAL_MODEL_TIMEOUT_SECONDS``).

    With ``RETRY_ATTEMPTS`` = 2 and waits of at most ``RETRY_MAX_DELAY_SECONDS`` = 0.5 s, each attempt
    gets ``(budget − 0.5) / 2``: 12 s → two attempts of 5.75 s, 5.75 + 0.5 + 5.75 = 12 s. When that is
    under ``MIN_ATTEMPT_SECONDS`` the one attempt gets the whole budget.

    Raises:
        ValueError: ``budget_seconds`` is not positive.
    """
    if budget_seconds <= 0:
        raise ValueError("the model budget must be positive")
    per_attempt = (budget_seconds - (RETRY_ATTEMPTS - 1) * RETRY_MAX_DELAY_SECONDS) / RETRY_ATTEMPTS
    if per_attempt < MIN_ATTEMPT_SECONDS:
        return RetryPlan(1, budget_seconds, 0.0)
    return RetryPlan(RETRY_ATTEMPTS, int(per_attempt * 1000) / 1000, RETRY_MAX_DELAY_SECONDS)


@functools.cache
def tls_context() -> ssl.SSLContext:
    """The verifying TLS context that google-genai would build for each client, built once per process.

    The same trust as google-genai's default (``ssl.create_default_context`` with certifi's CA bundle,
    or ``SSL_CERT_FILE`` / ``SSL_CERT_DIR``); a client built without one loads the CA bundle for each of
    its transports (httpx sync and async, aiohttp, websockets), about 20 ms of CPU each. An
    ``SSLContext`` may be shared by many connections and threads.
    Source: Python ``ssl`` (https://docs.python.org/3/library/ssl.html#ssl.create_default_context);
    google-genai ``HttpOptions.client_args`` / ``async_client_args`` (``verify`` for httpx, ``ssl`` for
    aiohttp and websockets, each used as given).
    """
    return ssl.create_default_context(cafile=os.environ.get("SSL_CERT_FILE", certifi.where()),
                                      capath=os.environ.get("SSL_CERT_DIR"))


def client_kwargs(settings: Settings) -> dict[str, Any]:
    """Keyword arguments for ``google.genai.Client``, from Settings only.

    - ``gemini``: ``api_key``; ``vertex``: ``vertexai=True``, ``project``, ``location`` (application
      default credentials); ``standin``: a placeholder key and ``GOOGLE_GEMINI_BASE_URL``.
    - every backend: the per-attempt HTTP timeout and the retry options of
      ``retry_plan(model_timeout_seconds)``, so the client's retries end inside the turn's budget.
    - ``gemini`` and ``standin``: the process's one ``tls_context()`` for every transport. Vertex AI
      keeps google-genai's own, which may carry the default client certificate (mTLS).

    Raises:
        ValueError: the model is off (``model_backend == "offline"``).
    Source: google-genai ``Client`` (api_key / vertexai / project / location / http_options).
    """
    plan = retry_plan(settings.model_timeout_seconds)
    http: dict[str, Any] = {"timeout": plan.timeout_ms, "retry_options": plan.http_retry_options()}
    if settings.model_backend == "vertex":
        return {"vertexai": True, "project": settings.google_cloud_project,
                "location": settings.google_cloud_location or "global", "http_options": http}
    if settings.model_backend not in ("gemini", "standin"):
        raise ValueError("the model is off (LOCAL_MODEL=offline, or no key configured)")
    http["client_args"] = {"verify": tls_context()}
    http["async_client_args"] = {"verify": tls_context(), "ssl": tls_context()}  # httpx's name; aiohttp's and websockets
    if settings.model_backend == "gemini":
        if settings.gemini_base_url:
            http["base_url"] = settings.gemini_base_url
        return {"vertexai": False, "api_key": settings.gemini_api_key, "http_options": http}
    http["base_url"] = settings.gemini_base_url
    return {"vertexai": False, "api_key": STANDIN_API_KEY, "http_options": http}


def _client_key(settings: Settings) -> tuple:
    """What makes two clients differ: the fields ``client_kwargs`` reads."""
    return (settings.model_backend, settings.gemini_api_key, settings.gemini_base_url,
            settings.google_cloud_project, settings.google_cloud_location, settings.model_timeout_seconds)


class _ModelRuntime:
    """The process's clients, models and model loop; all state behind one lock."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.pid = os.getpid()
        self.clients: dict[tuple, genai.Client] = {}
        self.models: dict[tuple, Gemini] = {}
        self.loop: asyncio.AbstractEventLoop | None = None
        self.thread: threading.Thread | None = None
        self.clients_built = 0

    def model_loop(self) -> asyncio.AbstractEventLoop:
        with self.lock:
            if self.loop is None or self.loop.is_closed():
                loop = asyncio.new_event_loop()
                ready = threading.Event()
                self.thread = threading.Thread(target=_serve_loop, args=(loop, ready), name="local-model-loop",
                                               daemon=True)
                self.thread.start()
                ready.wait()
                self.loop = loop
            return self.loop

    def client(self, settings: Settings) -> genai.Client:
        key = _client_key(settings)
        with self.lock:
            found = self.clients.get(key)
            if found is None:
                found = self.clients[key] = genai.Client(**client_kwargs(settings))
                self.clients_built += 1
            return found

    def model(self, settings: Settings) -> Gemini:
        key = (*_client_key(settings), settings.model_id)
        client = self.client(settings)
        with self.lock:
            found = self.models.get(key)
            if found is None:
                found = self.models[key] = Gemini(model=settings.model_id, client=client)
            return found

    def close(self) -> None:
        with self.lock:
            clients, loop, thread = list(self.clients.values()), self.loop, self.thread
            self.clients, self.models, self.loop, self.thread = {}, {}, None, None
        if loop is not None and not loop.is_closed() and loop.is_running():
            for client in clients:
                try:
                    asyncio.run_coroutine_threadsafe(client.aio.aclose(), loop).result(timeout=2.0)
                except Exception:  # noqa: BLE001 (closing: nothing left to tell)
                    pass
            loop.call_soon_threadsafe(loop.stop)
            if thread is not None:
                thread.join(timeout=2.0)
        for client in clients:
            try:
                client.close()
            except Exception:  # noqa: BLE001
                pass


def _serve_loop(loop: asyncio.AbstractEventLoop, ready: threading.Event) -> None:
    asyncio.set_event_loop(loop)
    loop.call_soon(ready.set)
    try:
        loop.run_forever()
    finally:
        loop.close()


_RUNTIME = _ModelRuntime()


def _forget_after_fork() -> None:
    """In a forked child: the parent's loop thread does not exist and its sockets are not ours."""
    global _RUNTIME
    _RUNTIME = _ModelRuntime()


os.register_at_fork(after_in_child=_forget_after_fork)


def shared_model(settings: Settings) -> Gemini:
    """The process's ADK ``Gemini`` model for ``settings.model_id``, over the process's client for this
    configuration (built on first use, then reused by every turn).

    Raises:
        ValueError: the model is off (``client_kwargs``), or google-genai refuses the configuration.
    """
    return _RUNTIME.model(settings)


def clients_built() -> int:
    """How many google-genai clients this process has built (tests: one per configuration)."""
    return _RUNTIME.clients_built


def run_on_model_loop(coroutine: Coroutine[Any, Any, _T], *, timeout_seconds: float) -> _T:
    """Run ``coroutine`` on the process's model loop and wait for its result (from any other thread).

    Args:
        coroutine: bounds its own time (``run_agent`` wraps the run in ``asyncio.wait_for``).
        timeout_seconds: how long the caller waits at most; past it the coroutine is cancelled.
    Raises:
        TimeoutError: the result did not come in time; whatever the coroutine raises.
    """
    future = asyncio.run_coroutine_threadsafe(coroutine, _RUNTIME.model_loop())
    try:
        return future.result(timeout=timeout_seconds)
    except concurrent.futures.TimeoutError:
        future.cancel()
        raise TimeoutError("the model turn did not end in time") from None


def close_clients() -> None:
    """Close every client (its async session on the model loop, then its sync transport) and stop the
    loop; the next model turn builds them again. Runs at interpreter exit."""
    _RUNTIME.close()


atexit.register(close_clients)
