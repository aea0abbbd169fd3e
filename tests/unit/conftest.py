"""Unit tests run on the in-memory store (shared/store/memory.py) unless they test SQLite itself.

``store_url`` is ``memory://<fresh name>`` here (``open_store`` and ``store_at`` both reach that one
database; it is dropped after the test). A test, class or module marked ``pytest.mark.sqlite`` gets a
real SQLite file instead: the store's own tests, and those that reach the file itself (the embedded
queue that shares it, a lock held from another connection, rows read with ``sqlite3``)."""
from __future__ import annotations

import io
import json
import logging
import uuid

import pytest

from shared.store import DocumentStore

_QUEUE_IN_FILE = "the embedded task queue it runs lives in the store's SQLite file"
#: Unit tests that stay on a real SQLite file, by path under tests/unit (a module, or one test's node
#: id), and why: each reaches the file itself, not only the store port.
ON_SQLITE = {
    "handoff/test_handoff_checked_answer.py": _QUEUE_IN_FILE,
    "handoff/test_handoff_confirmations.py": _QUEUE_IN_FILE,
    "handoff/test_handoff_flow.py": _QUEUE_IN_FILE + "; a lock held from another SQLite connection",
    "handoff/test_handoff_outbox.py": _QUEUE_IN_FILE,
    "handoff/test_handoff_reconcile.py": _QUEUE_IN_FILE,
    "handoff/test_handoff_requests.py": "SqliteStore's own connections from several threads",
    "handoff/test_handoff_wiring.py": "wiring builds the embedded queue in the SQLite store's file",
    "staff/test_staff_domain.py": _QUEUE_IN_FILE,
    "staff/test_staff_sweep.py": _QUEUE_IN_FILE,
    "webhook/test_queued_events.py": _QUEUE_IN_FILE,
    "webhook/test_privacy_store.py": "reads every row of every table of the file with sqlite3",
    "webhook/test_webhook_service.py::test_budget_locked_store_answers_503_at_the_store_deadline":
        "a lock held from another SQLite connection",
    "memory/test_memory_outcome_delivery.py": _QUEUE_IN_FILE,
    "memory/test_memory_forget_everywhere.py": "tools.user_data reads the SQLite file",
    "agent/test_agent_webhook.py": _QUEUE_IN_FILE,
}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark the ``ON_SQLITE`` tests ``sqlite``."""
    for item in items:
        under_unit = item.nodeid.split("tests/unit/", 1)[-1]
        if under_unit.split("::", 1)[0] in ON_SQLITE or under_unit.split("[", 1)[0] in ON_SQLITE:
            item.add_marker(pytest.mark.sqlite)


@pytest.fixture
def store_url(request, tmp_path):
    """``LOCAL_STORE_URL`` of this test's store: in memory, or a fresh SQLite file under ``sqlite``."""
    if request.node.get_closest_marker("sqlite") is not None:
        yield f"sqlite:///{tmp_path / 'local.sqlite3'}"
        return
    from shared.store.memory import forget_database

    name = f"unit-{uuid.uuid4().hex}"
    yield f"memory://{name}"
    forget_database(name)


def store_at(url: str, **kwargs) -> DocumentStore:
    """A store on ``url`` (``memory://NAME`` or ``sqlite:////path``) with the adapter's own arguments
    (``deadline_seconds``, ``read_only``, ``before_commit``)."""
    if url.startswith("memory://"):
        from shared.store.memory import MemoryStore

        return MemoryStore.from_url(url, **kwargs)
    from shared.store.sqlite import SqliteStore

    return SqliteStore.from_url(url, **kwargs)


def stored_documents(url: str) -> list[tuple[str, str, str]]:
    """Every stored document of the store at ``url`` as (collection, id, JSON text), in that order."""
    if url.startswith("memory://"):
        from shared.store.memory import database_named, name_from_url

        database = database_named(name_from_url(url))
        return sorted((collection, doc_id, text) for collection, docs in database.collections.items()
                      for doc_id, text in docs.items())
    import sqlite3

    from shared.store.sqlite import path_from_url

    conn = sqlite3.connect(path_from_url(url))
    try:
        return conn.execute("SELECT collection, id, data FROM documents ORDER BY collection, id").fetchall()
    except sqlite3.OperationalError:  # no table yet: nothing stored
        return []
    finally:
        conn.close()


@pytest.fixture
def json_lines():
    """Every line the ``local`` logger writes during the test, as ``shared.logs`` writes it (its JSON
    formatter: the trace fields included), parsed; the trace project is reset afterwards."""
    from shared import logs

    stream = io.StringIO()
    handler = logs.JsonLineHandler(stream)
    handler.setFormatter(logs.JsonFormatter())
    logger = logging.getLogger("local")
    logs.configure()
    logger.addHandler(handler)
    try:
        yield lambda: [json.loads(line) for line in stream.getvalue().splitlines()]
    finally:
        logger.removeHandler(handler)
        logs.use_trace_project(None)
