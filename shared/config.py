"""Settings for every LOCAL function: the only reader of ``os.environ``.

Names follow docs/design.md §9. Each ``functions/<name>/main.py`` calls ``Settings.from_env`` once, at
import (so once per cold start, before gunicorn forks), and it raises ``ConfigError`` listing every
problem at once: a function with missing variables refuses to start.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from enum import Enum, StrEnum
from typing import Mapping
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

LINE_API_DEFAULT = "https://api.line.me"
#: LINE's host for uploads and downloads of content, e.g. a rich menu's image (Messaging API reference,
#: "Upload rich menu image": ``https://api-data.line.me``).
LINE_API_DATA_DEFAULT = "https://api-data.line.me"

#: Variables a function may refuse to start without, per function.
WEBHOOK_REQUIRED = ("LINE_CHANNEL_SECRET", "LINE_CHANNEL_ACCESS_TOKEN", "LOCAL_STORE_URL", "LOCAL_SIGNING_KEY")
RECONCILE_REQUIRED = ("LINE_CHANNEL_ACCESS_TOKEN", "LOCAL_STORE_URL")
MEMORY_REQUIRED = ("LOCAL_STORE_URL", "LOCAL_SIGNING_KEY")
INGEST_REQUIRED = ("LOCAL_STORE_URL", "TDX_CLIENT_ID", "TDX_CLIENT_SECRET")

#: TDX (Transport Data eXchange, MOTC) endpoints: the OIDC client-credentials token URL and the
#: basic API root (https://tdx.transportdata.tw, "API 使用說明").
TDX_TOKEN_URL_DEFAULT = "https://tdx.transportdata.tw/auth/realms/TDXConnect/protocol/openid-connect/token"
TDX_API_BASE_DEFAULT = "https://tdx.transportdata.tw/api/basic"
AGENT_REQUIRED = ("LINE_CHANNEL_ACCESS_TOKEN", "LOCAL_STORE_URL", "LOCAL_SIGNING_KEY")

#: Fault-injection names (tests and the demo only; refused unless the store is the embedded SQLite).
FAULTS = frozenset({"BEFORE_WRITE", "AFTER_COMMIT", "LOOKUP_UNAVAILABLE", "KILL_AFTER_COMMIT", "KILL_BEFORE_REPLY"})


#: ``LOCAL_MODEL`` values: unset/auto (a key or Vertex AI turns the model on), offline, standin.
MODEL_MODES = ("auto", "offline", "standin")
THINKING_LEVELS = ("minimal", "low", "medium", "high")
#: The default model: Gemini 3.8 Flash, generally available (GA) in the Gemini API and Vertex AI, thinking
#: levels LOW / MEDIUM / HIGH. Source: "Developer's guide to Gemini 3.8 Flash",
#: https://docs.cloud.google.com/gemini-enterprise-agent-platform/models/guides/gemini-3-8-flash
DEFAULT_MODEL_ID = "gemini-3.8-flash"
#: The thinking level sent to a Gemini 3 model when none is configured: the guide above advises lower
#: levels for latency-sensitive tasks, and reading one short message into one call is one.
DEFAULT_THINKING_LEVEL = "low"
#: Gemini 2.5 ``thinking_budget``: -1 (dynamic) up to 24576 tokens (https://ai.google.dev/gemini-api/docs/thinking).
THINKING_BUDGET_RANGE = (-1, 24576)


class ModelFamily(Enum):
    """Which thinking setting a model takes (https://ai.google.dev/gemini-api/docs/thinking): Gemini 3
    models take ``thinking_level``, Gemini 2.5 models ``thinking_budget``; for any other model LOCAL sends
    neither."""

    GEMINI_3 = "thinking_level"
    GEMINI_2_5 = "thinking_budget"
    OTHER = "none"


_GEMINI_3 = re.compile(r"(?:.*/)?gemini-(?:[3-9]|[1-9][0-9])(?:\.[0-9]+)?-")
_GEMINI_2_5 = re.compile(r"(?:.*/)?gemini-2\.5-")


def model_family(model_id: str) -> ModelFamily:
    """The family of a model id (``gemini-3.8-flash`` → GEMINI_3, ``gemini-2.5-flash`` → GEMINI_2_5; a
    Vertex AI resource name ``projects/…/models/gemini-3.8-flash`` is read by its last part)."""
    if _GEMINI_3.match(model_id):
        return ModelFamily.GEMINI_3
    if _GEMINI_2_5.match(model_id):
        return ModelFamily.GEMINI_2_5
    return ModelFamily.OTHER


def thinking_problem(model_id: str, level: str | None, budget: int | None) -> str | None:
    """Why a thinking setting does not fit the model, in plain words, or None when it fits.

    Gemini 2.5 models take no ``thinking_level``; Gemini 3 models accept a ``thinking_budget`` only for
    backwards compatibility, with worse results; a request with both is an HTTP 400
    (https://ai.google.dev/gemini-api/docs/thinking, https://ai.google.dev/gemini-api/docs/gemini-3).
    Each is refused at start-up instead of at the first resident's turn.
    """
    family = model_family(model_id)
    if level is not None and budget is not None:
        return "set LOCAL_MODEL_THINKING_LEVEL or LOCAL_MODEL_THINKING_BUDGET, not both"
    if level is not None and level not in THINKING_LEVELS:
        return f"LOCAL_MODEL_THINKING_LEVEL must be one of {', '.join(THINKING_LEVELS)}"
    if budget is not None and not THINKING_BUDGET_RANGE[0] <= budget <= THINKING_BUDGET_RANGE[1]:
        return "LOCAL_MODEL_THINKING_BUDGET must be a number of tokens from -1 (dynamic) to 24576"
    if level is not None and family is not ModelFamily.GEMINI_3:
        return (f"LOCAL_MODEL_THINKING_LEVEL is for Gemini 3 models; {model_id} "
                + ("takes LOCAL_MODEL_THINKING_BUDGET instead" if family is ModelFamily.GEMINI_2_5
                   else "takes no thinking setting from LOCAL"))
    if budget is not None and family is not ModelFamily.GEMINI_2_5:
        return (f"LOCAL_MODEL_THINKING_BUDGET is for Gemini 2.5 models; {model_id} "
                + ("takes LOCAL_MODEL_THINKING_LEVEL instead" if family is ModelFamily.GEMINI_3
                   else "takes no thinking setting from LOCAL"))
    return None


class ReaderOrder(StrEnum):
    """``LOCAL_READER``: who reads a free-text message first when a model is configured.

    ``router_first`` (the default): the webhook answers inline every message the offline router reads
    completely (shared.turn.reading) and queues only the rest for the model; ``model_first``: every
    free-text message is queued for the model. Source: docs/design.md §8.
    """

    ROUTER_FIRST = "router_first"
    MODEL_FIRST = "model_first"


class ConfigError(RuntimeError):
    """The environment is missing or has bad values; the message lists every problem."""

    def __init__(self, problems: list[str]):
        self.problems = list(problems)
        super().__init__("LOCAL configuration error: " + "; ".join(self.problems))


#: The bot's name in replies unless ``LOCAL_DISPLAY_NAME`` says otherwise.
DISPLAY_NAME_DEFAULT = "彰化在地小幫手"


@dataclass(frozen=True)
class Settings:
    """Process-wide configuration, built once per cold start.

    Durations carry their unit in the name. Deadlines inside the webhook fit LINE's
    2-second answer budget (docs/design.md §3: LINE counts a webhook as failed after 2 s).
    """

    line_channel_secret: str | None
    line_channel_access_token: str | None
    line_api_base_url: str
    store_url: str | None
    tenant_id: str
    timezone: str
    #: The bot's name as residents read it in replies (docs/design.md §7, Wording), never "LOCAL".
    display_name: str = DISPLAY_NAME_DEFAULT
    signing_key: str | None = None
    internal_token: str | None = None
    reconcile_function_url: str | None = None
    memory_function_url: str | None = None
    gemini_api_key: str | None = None
    # The model (docs/design.md §8). ``model_backend``: "offline" (the router reads free text),
    # "gemini" (Gemini API key), "vertex" (Vertex AI, application default credentials) or
    # "standin" (tools/gemini_standin at ``gemini_base_url``; never Gemini).
    model_backend: str = "offline"
    genai_use_vertexai: bool = False
    google_cloud_project: str | None = None
    google_cloud_location: str | None = None
    #: google-genai's own ``GOOGLE_GEMINI_BASE_URL`` (the client's Gemini API endpoint).
    gemini_base_url: str | None = None
    model_id: str = DEFAULT_MODEL_ID
    #: One model turn (all of its calls) must finish within this (seconds), else ``model_timeout``.
    model_timeout_seconds: float = 12.0
    #: ``minimal`` / ``low`` / ``medium`` / ``high`` (Gemini 3 ``thinking_level``), or None: the model's default.
    model_thinking_level: str | None = None
    #: Gemini 2.5 ``thinking_budget`` in tokens (-1 dynamic, 0 off), or None: the model's default.
    model_thinking_budget: int | None = None
    webhook_budget_seconds: float = 1.8
    store_deadline_seconds: float = 0.5
    line_timeout_seconds: float = 1.0
    event_lease_seconds: float = 30.0
    # Handoff (docs/design.md §4).
    draft_ttl_seconds: float = 600.0
    request_text_max_chars: int = 500
    daily_request_cap: int = 5
    queue_name: str = "handoff-reconcile"
    # One retry policy for both queues, the same numbers as the production Cloud Tasks queues'
    # RetryConfig (docs/delivery.md, task queue): attempts include the first; maxRetryDuration unlimited.
    queue_min_backoff_seconds: float = 1.0
    queue_max_backoff_seconds: float = 300.0
    queue_max_attempts: int = 10
    queue_max_doublings: int = 16
    #: How long the queue waits for its target to answer one attempt (Cloud Tasks HTTP: 15 s–30 min).
    queue_dispatch_deadline_seconds: float = 30.0
    #: Deliveries of one embedded queue in flight at once, per process (Cloud Tasks
    #: ``maxConcurrentDispatches``; the production queues' own setting is in infra/).
    queue_max_concurrent_dispatches: int = 4
    #: How often a serving webhook sweeps the store for work no task holds any more (seconds).
    sweep_interval_seconds: float = 60.0
    #: First reconcile attempt after an unknown create outcome waits this long (seconds).
    reconcile_delay_seconds: float = 1.0
    tasks_queue_path: str | None = None
    tasks_service_account: str | None = None
    #: ``HOST:PORT`` of a Cloud Tasks emulator (tests, local runs); unset in production.
    tasks_emulator_host: str | None = None
    faults: frozenset[str] = frozenset()
    # Consented memory (docs/design.md §6).
    memory_card_ttl_seconds: float = 300.0
    signing_key_version: int = 1
    signing_key_previous: str | None = None
    memory_timeout_seconds: float = 0.8
    # Real events from TDX (docs/data.md).
    tdx_client_id: str | None = None
    tdx_client_secret: str | None = None
    tdx_token_url: str = TDX_TOKEN_URL_DEFAULT
    tdx_api_base_url: str = TDX_API_BASE_DEFAULT
    tdx_timeout_seconds: float = 10.0
    tdx_max_retries: int = 3
    tdx_backoff_seconds: float = 1.0
    ingest_function_url: str | None = None
    ingest_caller_email: str | None = None
    #: An events snapshot last confirmed longer ago than this is said to be possibly out of date.
    events_stale_after_seconds: float = 172800.0
    # Staff group (docs/design.md §10).
    #: The LINE group of staff (``C`` + 32 hex); None: requests are stored but nobody is told.
    staff_group_id: str | None = None
    #: Optional allowlist of staff LINE user ids; empty: every member of the staff group may act.
    staff_user_ids: frozenset[str] = frozenset()
    #: A request still awaiting acceptance after this long is announced again, once (seconds).
    staff_remind_after_seconds: float = 1800.0
    # Queued webhook events (docs/design.md §3, §8, §11): the queue and functions/agent.
    agent_function_url: str | None = None
    agent_queue_name: str = "queued-events"
    agent_tasks_queue_path: str | None = None
    #: A queued event is answered by reply only while its reply token is this young (LINE: about a minute).
    reply_token_fresh_seconds: float = 50.0
    #: How long the queued-event worker may spend on one event's handler (seconds).
    agent_budget_seconds: float = 20.0

    @property
    def queue_retry_window_seconds(self) -> float:
        """Seconds from a task's first attempt to its last, by the retry policy (backoffs only).

        After this (plus the dispatch deadlines) a task that never got a 2xx has ended ``failed``; a
        sweep re-queues what the store still shows unsettled no more often than this.
        """
        total = 0.0
        for retry in range(self.queue_max_attempts - 1):
            total += min(self.queue_max_backoff_seconds,
                         self.queue_min_backoff_seconds * 2 ** min(retry, self.queue_max_doublings))
        return total
    # Hostile input at the public webhook (docs/delivery.md).
    #: Largest webhook body read, however it arrives (bytes); more → 413, never read past.
    webhook_max_body_bytes: int = 1024 * 1024
    #: The longest a webhook body may take to arrive (seconds); later → 408, connection closed.
    webhook_body_timeout_seconds: float = 1.0
    #: How many slow webhook bodies may be waited for at once, per process.
    webhook_slow_client_slots: int = 2
    #: The official account's basic ID (e.g. "@123abcde"): a group member is offered a button that
    #: opens the one-to-one chat with it; None → the words only.
    line_bot_basic_id: str | None = None
    #: Who reads free text first when a model is configured (``LOCAL_READER``; docs/design.md §8).
    reader: ReaderOrder = ReaderOrder.ROUTER_FIRST
    #: LINE's content host (``LINE_API_DATA_BASE_URL``): ``https://api-data.line.me``, or the same
    #: stand-in as ``line_api_base_url`` when only that one is set (a stand-in serves both hosts' paths).
    line_api_data_base_url: str = LINE_API_DATA_DEFAULT

    def __post_init__(self) -> None:
        """Refuse a thinking setting the model does not take (``thinking_problem``).

        Raises:
            ValueError: the plain reason (a Gemini 2.5 model with a level, a Gemini 3 model with a budget, …).
        """
        problem = thinking_problem(self.model_id, self.model_thinking_level, self.model_thinking_budget)
        if problem is not None:
            raise ValueError(problem)

    @property
    def trace_project(self) -> str | None:
        """The Google Cloud project log lines name their traces under (``projects/<P>/traces/<ID>``,
        shared.logs): ``GOOGLE_CLOUD_PROJECT`` when set, else the project of a
        ``firestore://PROJECT[/DATABASE]`` store, else None (a local run: bare trace ids)."""
        if self.google_cloud_project:
            return self.google_cloud_project
        if self.store_url and self.store_url.startswith("firestore://"):
            return self.store_url[len("firestore://"):].split("/", 1)[0] or None
        return None

    @property
    def tz(self) -> ZoneInfo:
        """The configured wall-clock zone (Asia/Taipei unless overridden)."""
        return ZoneInfo(self.timezone)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None,
                 required: tuple[str, ...] = ()) -> "Settings":
        """Build settings from an environment mapping.

        Args:
            environ: defaults to ``os.environ``.
            required: variable names this function cannot start without.
        Raises:
            ConfigError: every missing or malformed variable, listed together.
        """
        env = os.environ if environ is None else environ
        problems: list[str] = []

        def get(name: str) -> str | None:
            value = env.get(name, "").strip()
            return value or None

        for name in required:
            if not get(name):
                problems.append(f"{name} is required but not set")

        store_url = get("LOCAL_STORE_URL")
        if store_url and not store_url.startswith(("sqlite:////", "firestore://", "memory://")):
            problems.append("LOCAL_STORE_URL must be sqlite:////absolute/path.sqlite3, firestore://PROJECT or memory://NAME")

        timezone = get("LOCAL_TIMEZONE") or "Asia/Taipei"
        try:
            ZoneInfo(timezone)
        except (ZoneInfoNotFoundError, ValueError):
            problems.append(f"LOCAL_TIMEZONE {timezone!r} is not a known time zone")

        def seconds(name: str, default: float) -> float:
            raw = get(name)
            if raw is None:
                return default
            try:
                value = float(raw)
            except ValueError:
                problems.append(f"{name} must be a number of seconds")
                return default
            if value <= 0:
                problems.append(f"{name} must be positive")
            return value

        def integer(name: str, default: int, *, minimum: int = 1) -> int:
            raw = get(name)
            if raw is None:
                return default
            if not raw.isdigit() or int(raw) < minimum:
                problems.append(f"{name} must be a positive whole number")
                return default
            return int(raw)

        faults = frozenset(f.strip().upper() for f in (get("LOCAL_FAULTS") or "").split(",") if f.strip())
        unknown_faults = faults - FAULTS
        if unknown_faults:
            problems.append(f"LOCAL_FAULTS has unknown names: {', '.join(sorted(unknown_faults))}")
        if faults and not (store_url or "").startswith("sqlite:"):
            problems.append("LOCAL_FAULTS is for tests and the demo on the embedded store only")

        staff_group_id = get("LOCAL_STAFF_GROUP_ID")
        if staff_group_id and not re.fullmatch(r"C[0-9a-f]{32}", staff_group_id):
            problems.append("LOCAL_STAFF_GROUP_ID must be a LINE group id: C followed by 32 lowercase hex")
        staff_user_ids = frozenset(u.strip() for u in (get("LOCAL_STAFF_USER_IDS") or "").split(",") if u.strip())
        bad_staff = sorted(u for u in staff_user_ids if not re.fullmatch(r"U[0-9a-f]{32}", u))
        if bad_staff:
            problems.append(f"LOCAL_STAFF_USER_IDS has {len(bad_staff)} value(s) that are not LINE user ids "
                            "(U followed by 32 lowercase hex, comma-separated)")

        settings = cls(
            line_channel_secret=get("LINE_CHANNEL_SECRET"),
            line_channel_access_token=get("LINE_CHANNEL_ACCESS_TOKEN"),
            line_api_base_url=(get("LINE_API_BASE_URL") or LINE_API_DEFAULT).rstrip("/"),
            line_api_data_base_url=_line_data_url(get),
            store_url=store_url,
            tenant_id=get("LOCAL_TENANT_ID") or "default",
            timezone=timezone,
            display_name=get("LOCAL_DISPLAY_NAME") or DISPLAY_NAME_DEFAULT,
            signing_key=get("LOCAL_SIGNING_KEY"),
            internal_token=get("LOCAL_INTERNAL_TOKEN"),
            reconcile_function_url=get("RECONCILE_FUNCTION_URL"),
            memory_function_url=get("MEMORY_FUNCTION_URL"),
            gemini_api_key=get("GEMINI_API_KEY"),
            **_model_settings(get, seconds, problems),
            store_deadline_seconds=seconds("LOCAL_STORE_DEADLINE_SECONDS", 0.5),
            line_timeout_seconds=seconds("LOCAL_LINE_TIMEOUT_SECONDS", 1.0),
            event_lease_seconds=seconds("LOCAL_EVENT_LEASE_SECONDS", 30.0),
            draft_ttl_seconds=seconds("LOCAL_DRAFT_TTL_SECONDS", 600.0),
            request_text_max_chars=integer("LOCAL_REQUEST_TEXT_MAX_CHARS", 500),
            daily_request_cap=integer("LOCAL_DAILY_REQUEST_CAP", 5),
            queue_name=get("LOCAL_QUEUE_NAME") or "handoff-reconcile",
            queue_min_backoff_seconds=seconds("LOCAL_QUEUE_MIN_BACKOFF_SECONDS", 1.0),
            queue_max_backoff_seconds=seconds("LOCAL_QUEUE_MAX_BACKOFF_SECONDS", 300.0),
            queue_max_attempts=integer("LOCAL_QUEUE_MAX_ATTEMPTS", 10),
            queue_max_doublings=integer("LOCAL_QUEUE_MAX_DOUBLINGS", 16),
            queue_dispatch_deadline_seconds=seconds("LOCAL_QUEUE_DISPATCH_DEADLINE_SECONDS", 30.0),
            queue_max_concurrent_dispatches=integer("LOCAL_QUEUE_MAX_CONCURRENT_DISPATCHES", 4),
            sweep_interval_seconds=seconds("LOCAL_SWEEP_INTERVAL_SECONDS", 60.0),
            reconcile_delay_seconds=seconds("LOCAL_RECONCILE_DELAY_SECONDS", 1.0),
            tasks_queue_path=get("LOCAL_TASKS_QUEUE_PATH"),
            tasks_service_account=get("LOCAL_TASKS_SERVICE_ACCOUNT"),
            tasks_emulator_host=get("LOCAL_TASKS_EMULATOR_HOST"),
            faults=faults,
            memory_card_ttl_seconds=seconds("LOCAL_MEMORY_CARD_TTL_SECONDS", 300.0),
            signing_key_version=integer("LOCAL_SIGNING_KEY_VERSION", 1),
            signing_key_previous=get("LOCAL_SIGNING_KEY_PREVIOUS"),
            memory_timeout_seconds=seconds("LOCAL_MEMORY_TIMEOUT_SECONDS", 0.8),
            tdx_client_id=get("TDX_CLIENT_ID"),
            tdx_client_secret=get("TDX_CLIENT_SECRET"),
            tdx_token_url=get("TDX_TOKEN_URL") or TDX_TOKEN_URL_DEFAULT,
            tdx_api_base_url=(get("TDX_API_BASE_URL") or TDX_API_BASE_DEFAULT).rstrip("/"),
            tdx_timeout_seconds=seconds("LOCAL_TDX_TIMEOUT_SECONDS", 10.0),
            tdx_max_retries=integer("LOCAL_TDX_MAX_RETRIES", 3, minimum=0),
            tdx_backoff_seconds=seconds("LOCAL_TDX_BACKOFF_SECONDS", 1.0),
            ingest_function_url=get("INGEST_FUNCTION_URL"),
            ingest_caller_email=get("LOCAL_INGEST_CALLER_EMAIL"),
            events_stale_after_seconds=seconds("LOCAL_EVENTS_STALE_AFTER_SECONDS", 172800.0),
            staff_group_id=staff_group_id,
            staff_user_ids=staff_user_ids,
            staff_remind_after_seconds=seconds("LOCAL_STAFF_REMIND_AFTER_SECONDS", 1800.0),
            agent_function_url=get("AGENT_FUNCTION_URL"),
            agent_queue_name=get("LOCAL_AGENT_QUEUE_NAME") or "queued-events",
            agent_tasks_queue_path=get("LOCAL_AGENT_TASKS_QUEUE_PATH"),
            reply_token_fresh_seconds=seconds("LOCAL_REPLY_TOKEN_FRESH_SECONDS", 50.0),
            agent_budget_seconds=seconds("LOCAL_AGENT_BUDGET_SECONDS", 20.0),
            webhook_max_body_bytes=integer("LOCAL_WEBHOOK_MAX_BODY_BYTES", 1024 * 1024),
            webhook_body_timeout_seconds=seconds("LOCAL_WEBHOOK_BODY_TIMEOUT_SECONDS", 1.0),
            webhook_slow_client_slots=integer("LOCAL_WEBHOOK_SLOW_CLIENT_SLOTS", 2),
            line_bot_basic_id=get("LINE_BOT_BASIC_ID"),
            reader=_reader_order(get, problems),
        )
        if problems:
            raise ConfigError(problems)
        return settings


def _line_data_url(get) -> str:
    """``LINE_API_DATA_BASE_URL``; unset: LINE's content host, unless ``LINE_API_BASE_URL`` names a host
    other than LINE's (a stand-in), which then serves the content paths too."""
    explicit = get("LINE_API_DATA_BASE_URL")
    if explicit:
        return explicit.rstrip("/")
    base = (get("LINE_API_BASE_URL") or LINE_API_DEFAULT).rstrip("/")
    return LINE_API_DATA_DEFAULT if base == LINE_API_DEFAULT else base


def _reader_order(get, problems: list[str]) -> ReaderOrder:
    """``LOCAL_READER`` (``router_first`` unless set); another value is a start-up problem."""
    raw = (get("LOCAL_READER") or ReaderOrder.ROUTER_FIRST.value).lower()
    try:
        return ReaderOrder(raw)
    except ValueError:
        problems.append(f"LOCAL_READER must be one of {', '.join(order.value for order in ReaderOrder)}")
        return ReaderOrder.ROUTER_FIRST


def _model_settings(get, seconds, problems: list[str]) -> dict:
    """The model's fields of Settings (docs/design.md §8), appending any problem to ``problems``.

    ``LOCAL_MODEL=offline`` forces the offline router; ``standin`` needs ``GOOGLE_GEMINI_BASE_URL``
    (the stand-in's URL); unset or ``auto`` uses Gemini when ``GEMINI_API_KEY`` is set, Vertex AI when
    ``GOOGLE_GENAI_USE_VERTEXAI`` is true (``GOOGLE_CLOUD_PROJECT`` required), else the router.
    Source: google-genai client (GEMINI_API_KEY, GOOGLE_GENAI_USE_VERTEXAI, GOOGLE_CLOUD_PROJECT,
    GOOGLE_CLOUD_LOCATION, GOOGLE_GEMINI_BASE_URL).
    """
    mode = (get("LOCAL_MODEL") or "auto").lower()
    if mode not in MODEL_MODES:
        problems.append(f"LOCAL_MODEL must be one of {', '.join(MODEL_MODES)}")
        mode = "offline"
    vertex = (get("GOOGLE_GENAI_USE_VERTEXAI") or "").lower() in ("true", "1")
    project, base_url = get("GOOGLE_CLOUD_PROJECT"), get("GOOGLE_GEMINI_BASE_URL")
    backend = "offline"
    if mode == "standin":
        backend = "standin"
        if not base_url:
            problems.append("LOCAL_MODEL=standin needs GOOGLE_GEMINI_BASE_URL (the stand-in's URL)")
    elif mode == "auto" and vertex:
        backend = "vertex"
        if not project:
            problems.append("GOOGLE_GENAI_USE_VERTEXAI=true needs GOOGLE_CLOUD_PROJECT")
    elif mode == "auto" and get("GEMINI_API_KEY"):
        backend = "gemini"
    model_id = get("LOCAL_MODEL_ID") or DEFAULT_MODEL_ID
    level, budget = _thinking(get, model_id, problems)
    return {
        "model_backend": backend,
        "genai_use_vertexai": vertex,
        "google_cloud_project": project,
        "google_cloud_location": get("GOOGLE_CLOUD_LOCATION"),
        "gemini_base_url": base_url,
        "model_id": model_id,
        "model_timeout_seconds": seconds("LOCAL_MODEL_TIMEOUT_SECONDS", 12.0),
        "model_thinking_level": level,
        "model_thinking_budget": budget,
    }


def _thinking(get, model_id: str, problems: list[str]) -> tuple[str | None, int | None]:
    """``LOCAL_MODEL_THINKING_LEVEL`` / ``LOCAL_MODEL_THINKING_BUDGET`` for ``model_id`` → (level, budget).

    Neither set: a Gemini 3 model gets ``DEFAULT_THINKING_LEVEL``, any other model the model's own default.
    A setting the model does not take is a problem (``thinking_problem``), and then neither is sent.
    """
    level = (get("LOCAL_MODEL_THINKING_LEVEL") or "").lower() or None
    raw_budget = get("LOCAL_MODEL_THINKING_BUDGET")
    budget: int | None = None
    if raw_budget is not None:
        try:
            budget = int(raw_budget)
        except ValueError:
            problems.append("LOCAL_MODEL_THINKING_BUDGET must be a whole number of tokens")
            return None, None
    if level is None and budget is None and model_family(model_id) is ModelFamily.GEMINI_3:
        level = DEFAULT_THINKING_LEVEL
    problem = thinking_problem(model_id, level, budget)
    if problem is not None:
        problems.append(problem)
        return None, None
    return level, budget
