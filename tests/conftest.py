"""Shared fixtures: signed LINE bodies, a recording LINE stand-in, real SQLite stores, and
real functions-framework processes on loopback. No test reaches the network."""
from __future__ import annotations

import os
from datetime import datetime, timezone
from pathlib import Path

import pytest

from tools import line_events
from tools.function_process import FunctionProcess, free_port, prepare_sqlite_file
from tools.line_messages import all_text  # noqa: F401  (the tests' reader of sent messages)

REPO = Path(__file__).resolve().parents[1]
#: Real-format LINE webhook bodies, copied into the repo (the repo stands alone).
CASES = REPO / "tests" / "fixtures" / "line"
TEST_SECRET = "local-test-channel-secret-0001"
TEST_TOKEN = "local-test-access-token"


#: The test account's user (the acceptance cases' user), the bot's id, and every event's time.
TEST_USER = "U7a1e5b0c2d3f4a5b6c7d8e9f0a1b2c3d"
TEST_DESTINATION = "U0c6f1a2b3c4d5e6f708192a3b4c5d6e7"
TEST_TIMESTAMP_MS = 1790577600000


def sign(body: bytes, secret: str = TEST_SECRET) -> str:
    """X-Line-Signature for exact bytes, with the test channel secret by default."""
    return line_events.sign(body, secret)


def case_bytes(name: str) -> bytes:
    """The exact bytes of one acceptance case in tests/fixtures/line/."""
    return (CASES / name).read_bytes()


def line_body(*events: dict) -> bytes:
    """A webhook body as LINE sends it (``tools.line_events.webhook_body``) to the test bot."""
    return line_events.webhook_body(list(events), TEST_DESTINATION)


def text_event(text: str, *, user_id: str | None = TEST_USER, event_id: str | None = None,
               reply_token: str | None = None, group_id: str | None = None, room_id: str | None = None) -> dict:
    """A text message event with fresh ids (``tools.line_events.text_event``): one-to-one, or in
    ``group_id`` / ``room_id``."""
    return line_events.text_event(text, user_id=user_id, event_id=event_id, reply_token=reply_token,
                                  timestamp_ms=TEST_TIMESTAMP_MS, group_id=group_id, room_id=room_id)


def postback_event(data: str, *, user_id: str | None = TEST_USER, event_id: str | None = None,
                   group_id: str | None = None, room_id: str | None = None,
                   timestamp_ms: int = TEST_TIMESTAMP_MS) -> dict:
    """A postback event with fresh ids (``tools.line_events.postback_event``); ``timestamp_ms`` is when
    the tap happened (epoch ms, LINE's ``timestamp``), which decides a card's expiry."""
    return line_events.postback_event(data, user_id=user_id, event_id=event_id, timestamp_ms=timestamp_ms,
                                      group_id=group_id, room_id=room_id)


def location_event(latitude: float, longitude: float, *, user_id: str | None = TEST_USER, address: str | None = None,
                   group_id: str | None = None) -> dict:
    """A location message event with fresh ids (``tools.line_events.location_event``)."""
    return line_events.location_event(latitude, longitude, user_id=user_id, address=address, group_id=group_id,
                                      timestamp_ms=TEST_TIMESTAMP_MS)


def unsend_event(message_id: str, *, user_id: str = TEST_USER, event_id: str | None = None) -> dict:
    """An unsend event for ``message_id`` (``tools.line_events.unsend_event``)."""
    return line_events.unsend_event(message_id, user_id=user_id, event_id=event_id, timestamp_ms=TEST_TIMESTAMP_MS)


#: Rough cost of one test on a quiet machine, in seconds, used only to order files (below): a ``slow``
#: test (it starts real processes) costs ``slow(seconds=N)`` or ``SLOW_TEST_SECONDS``, any other
#: ``FAST_TEST_SECONDS``. No test asserts a time.
SLOW_TEST_SECONDS, FAST_TEST_SECONDS = 3.0, 0.02


def _cost_seconds(item: pytest.Item) -> float:
    slow = item.get_closest_marker("slow")
    if slow is None:
        return FAST_TEST_SECONDS
    return float(slow.kwargs.get("seconds", SLOW_TEST_SECONDS))


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    """Costliest files first, each file's tests in their own order.

    ``make test`` hands whole files to xdist workers in collection order (``--dist loadfile
    --no-loadscope-reorder``): a file of one half-minute test started last would finish alone while
    the other workers idle, so the long files start first and the many short ones fill in at the end.
    The order is the same in every worker (xdist requires identical collections)."""
    files: dict[str, list[pytest.Item]] = {}
    for item in items:
        files.setdefault(item.nodeid.split("::", 1)[0], []).append(item)
    ordered = sorted(files.values(), key=lambda tests: -sum(_cost_seconds(t) for t in tests))  # stable
    items[:] = [item for tests in ordered for item in tests]


#: The cyclic garbage collector's thresholds during the tests (``gc.set_threshold``; Python's default is
#: 700, 10, 10): a test run allocates millions of short-lived objects (line-bot-sdk and pydantic models,
#: parsed ASTs) beside a large heap of imported modules, and with the default a worker spent about 2 s of
#: CPU in the collector; with these, under 1 s. Garbage is still collected, in fewer, larger passes.
GC_THRESHOLDS = (10_000, 20, 20)


def pytest_collection_finish(session: pytest.Session) -> None:
    """After collection, leave what the imports and the collection built out of the collector's passes
    (``gc.freeze``: it lives for the whole run) and use ``GC_THRESHOLDS``. Memory management only: no
    test sees a difference (reference counting frees what has no cycle at once, as before)."""
    import gc

    gc.collect()
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLDS)


@pytest.fixture(autouse=True, scope="session")
def _keyed_user_hash():
    """In-process code hashes user ids with the key the test functions derive from the test
    ``LOCAL_SIGNING_KEY``, so hashes computed here match those a function process stored."""
    from shared import keys, logs

    logs.use_user_hasher(keys.UserHasher.from_keys(keys.SigningKeys(b"test-signing-key", 1)))


@pytest.fixture
def signed_webhook():
    """Sign exact bytes once: returns ``(body_bytes, headers)``."""

    def make(body: bytes, secret: str = TEST_SECRET) -> tuple[bytes, dict]:
        return body, {"X-Line-Signature": sign(body, secret), "Content-Type": "application/json"}

    return make


def stop_in_background(server) -> None:
    """Stop a stand-in (``tools.standin_server.StandinServer``) without waiting for it.

    ``stop()`` waits for the serving thread's next look for it (up to ``STOP_POLL_SECONDS``, 5 ms):
    a per-test stand-in would add that to each of a thousand tests. Nothing waits for the stop: the
    next test's stand-in binds a port of its own, and no call of the next test can reach this one."""
    import threading

    threading.Thread(target=server.stop, name=f"stop-{server.thread_name}", daemon=True).start()


@pytest.fixture
def line_standin():
    """A recording LINE Messaging API stand-in on an ephemeral loopback port (stopped in the background
    after the test: ``stop_in_background``)."""
    from tools.line_standin import LineStandin

    standin = LineStandin(access_token=TEST_TOKEN).start()
    try:
        yield standin
    finally:
        stop_in_background(standin)


@pytest.fixture
def store_url(tmp_path) -> str:
    """``LOCAL_STORE_URL`` for a fresh SQLite file."""
    return f"sqlite:///{tmp_path / 'local.sqlite3'}"


def function_env(store_url: str, standin_url: str) -> dict[str, str]:
    """The variables a function needs on the embedded default (a SQLite store, the LINE stand-in at
    ``standin_url``), after creating the store's file (``prepare_sqlite_file``; an in-memory store of
    the unit tests, ``memory://NAME``, needs none)."""
    if store_url.startswith("sqlite:"):
        prepare_sqlite_file(store_url)
    return {
        "LINE_CHANNEL_SECRET": TEST_SECRET,
        "LINE_CHANNEL_ACCESS_TOKEN": TEST_TOKEN,
        "LINE_API_BASE_URL": standin_url,
        "LOCAL_STORE_URL": store_url,
        "LOCAL_TENANT_ID": "test-tenant",
        "LOCAL_TIMEZONE": "Asia/Taipei",
        "LOCAL_SIGNING_KEY": "test-signing-key",
        "LOCAL_INTERNAL_TOKEN": "test-internal-token",
    }


@pytest.fixture
def base_env(store_url, line_standin) -> dict[str, str]:
    """``function_env`` for this test's fresh SQLite file and stand-in."""
    return function_env(store_url, line_standin.url)


def free_run_ports() -> dict[str, str]:
    """Every port variable ``make run`` reads (``tools.devserver.PORT_VARIABLES``), each set to a free
    port: a test's ``make run`` must never meet a developer's own one on the defaults (8080–8083, 8090,
    8091), nor another test's."""
    from tools.devserver import PORT_VARIABLES

    return {variable: str(free_port()) for variable, _ in PORT_VARIABLES.values()}


class FixedClock:
    """A settable aware clock for tests."""

    def __init__(self, at: datetime):
        self.at = at

    def __call__(self) -> datetime:
        return self.at


@pytest.fixture
def clock():
    return FixedClock(datetime(2026, 11, 30, 4, 0, tzinfo=timezone.utc))


@pytest.fixture
def webhook_service(base_env, clock):
    """A WebhookService wired to this test's store (``store_url``) and the stand-in, with an injected clock."""
    from shared.config import WEBHOOK_REQUIRED, Settings
    from shared.webhook.service import WebhookService
    from shared.wiring import line_gateway, open_store

    settings = Settings.from_env(base_env, required=WEBHOOK_REQUIRED)
    return WebhookService(settings, open_store(settings), line_gateway(settings), clock=clock)


#: Variable prefixes a function reads; a function loaded in-process sees only the test's own values.
_FUNCTION_ENV_PREFIXES = ("LINE_", "LOCAL_", "MEMORY_", "RECONCILE_", "GEMINI_", "TDX_")


@pytest.fixture
def function_app(monkeypatch):
    """Load ``functions/<name>/main.py`` in this process and return a Flask test client
    (functions-framework's ``create_app(...).test_client()``), with ``env`` as the function's
    environment (restored after the test). For HTTP-contract tests that make no claim about
    processes; kills, forks and workers use ``start_function``."""
    from functions_framework import create_app

    def load(name: str, env: dict[str, str]):
        for variable in [n for n in os.environ if n.startswith(_FUNCTION_ENV_PREFIXES)]:
            monkeypatch.delenv(variable)
        for variable, value in env.items():
            monkeypatch.setenv(variable, value)
        return create_app(name, str(REPO / "functions" / name / "main.py")).test_client()

    return load


@pytest.fixture
def start_function(tmp_path):
    """Start functions by name with an environment; all are stopped after the test.

    Each is a real functions-framework process (its own pid, session, gunicorn master and worker),
    forked from a server that has already imported the third-party libraries
    (``FunctionProcess(preloaded=True)``)."""
    started: list[FunctionProcess] = []

    def start(name: str, env: dict[str, str]) -> FunctionProcess:
        full_env = {k: v for k, v in os.environ.items() if not k.startswith(("LINE_", "LOCAL_"))}
        full_env.update(env)
        proc = FunctionProcess(name, full_env, tmp_path / f"{name}-{len(started)}.log", preloaded=True)
        started.append(proc)
        return proc

    yield start
    for proc in started:
        proc.stop()


def replies_to(standin, reply_token: str) -> list[dict]:
    """Recorded reply calls for one reply token that LINE accepted (status 200)."""
    return standin.calls(where=lambda c: c["path"] == "/v2/bot/message/reply" and c["status"] == 200
                         and (c.get("body") or {}).get("replyToken") == reply_token)


def recorded_replies(standin, reply_token: str, timeout_seconds: float = 30.0) -> list[dict]:
    """``replies_to``, waiting (up to ``timeout_seconds``) until the stand-in has recorded at least one:
    on a loaded machine the stand-in may finish a reply after the caller gave up waiting for its
    answer (LINE would still show it), and records it only then."""
    from tools.demo import wait_until

    return wait_until(lambda: replies_to(standin, reply_token), timeout_seconds) or []


def reply_messages(service, standin, event: dict) -> list[dict]:
    """Post one signed event to an in-process ``WebhookService``: asserts 200 and exactly one accepted
    reply to the event's token, and returns that reply's messages (JSON dicts)."""
    body = line_body(event)
    assert service.handle(body.decode(), sign(body)).status == 200
    [reply] = recorded_replies(standin, event["replyToken"])
    return reply["body"]["messages"]


#: Under xdist, the one Firestore emulator all workers share: a file in the run's base temporary
#: directory (``{"host", "pid", "dir"}``), written by the worker that started it, read by the others,
#: and stopped by the controller when the run ends (``pytest_unconfigure``).
_SHARED_EMULATOR = "firestore-emulator.json"


@pytest.fixture(scope="session")
def firestore_emulator_host(tmp_path_factory, request):
    """``127.0.0.1:PORT`` of Google's Firestore emulator for this run (``FIRESTORE_EMULATOR_HOST``
    if set, else one started here), or skip when the machine image has none.

    Under xdist the first worker that needs it starts it and the others use the same one (a JVM
    start is seconds of CPU; each test uses its own project), as ``.ci/run`` shares its emulator."""
    import fcntl
    import json

    from tests.contract import firestore_emulator

    host = os.environ.get("FIRESTORE_EMULATOR_HOST")
    if host:
        firestore_emulator.wait_until_answers(host, timeout_seconds=10)
        _warm_up_firestore(host)
        yield host
        return
    gcloud = firestore_emulator.find_gcloud()
    if gcloud is None:
        pytest.skip(firestore_emulator.NOT_INSTALLED)
    if not hasattr(request.config, "workerinput"):  # one process: this session owns it
        emulator = firestore_emulator.Emulator(gcloud)
        try:
            host = emulator.start()
            _warm_up_firestore(host)
            yield host
        finally:
            emulator.stop()
        return
    shared = tmp_path_factory.getbasetemp().parent / _SHARED_EMULATOR
    with open(shared.with_suffix(".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one starter; the others wait for its line
        if shared.exists():
            host = json.loads(shared.read_text())["host"]
            firestore_emulator.wait_until_answers(host, timeout_seconds=10)
        else:
            emulator = firestore_emulator.Emulator(gcloud)
            host = emulator.start()
            shared.write_text(json.dumps({"host": host, "pid": emulator.pid, "dir": emulator.directory}))
    _warm_up_firestore(host)
    yield host


def _warm_up_firestore(host: str) -> None:
    """One write and read through the store adapter with a generous deadline, in this process,
    before any test: the emulator's first RPCs (a cold JVM) and this process's first gRPC channel
    are slow on a loaded machine, and a test's claim is its store's behaviour, not that cold start
    within its own deadline (the e2e stack warms its functions the same way)."""
    import uuid

    from shared.store.firestore import FirestoreStore

    before = os.environ.get("FIRESTORE_EMULATOR_HOST")
    os.environ["FIRESTORE_EMULATOR_HOST"] = host
    try:
        store = FirestoreStore(f"warm-up-{uuid.uuid4().hex[:8]}", deadline_seconds=60.0)
        store.create("warm_up", "one", {"at": "start"})
        assert store.get("warm_up", "one") == {"at": "start"}
    finally:
        if before is None:
            del os.environ["FIRESTORE_EMULATOR_HOST"]
        else:
            os.environ["FIRESTORE_EMULATOR_HOST"] = before


def pytest_unconfigure(config: pytest.Config) -> None:
    """The xdist controller stops the emulator its workers shared (they have all ended by now)."""
    import json

    from tests.contract import firestore_emulator

    factory = getattr(config, "_tmp_path_factory", None)
    if hasattr(config, "workerinput") or factory is None:
        return
    try:
        shared = factory.getbasetemp() / _SHARED_EMULATOR
    except OSError:
        return
    try:
        started = json.loads(shared.read_text())
    except (OSError, ValueError):  # none was started (or this hook already stopped it)
        return
    else:
        firestore_emulator.stop_group(started["pid"], started["dir"])
        shared.unlink(missing_ok=True)


@pytest.fixture(scope="session")
def signing():
    """(a google-auth RSA signer with key id ``k1``, its self-signed certificate as PEM text): a
    Google-style OIDC token issuer for the caller-authentication tests, made once per session."""
    from datetime import timedelta

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import rsa
    from cryptography.x509.oid import NameOID
    from google.auth import crypt

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "test-issuer")])
    now = datetime.now(timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(1).not_valid_before(now - timedelta(days=1)).not_valid_after(now + timedelta(days=1))
            .sign(key, hashes.SHA256()))
    pem_key = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption())
    return crypt.RSASigner.from_string(pem_key, key_id="k1"), cert.public_bytes(serialization.Encoding.PEM).decode()
