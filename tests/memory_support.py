"""Helpers shared by the consented-memory tests: find card buttons in recorded LINE messages,
read a preference and the turn audit straight from the store (no shared.* patching)."""
from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from shared.clock import Clock, utc_now
from shared.config import Settings
from shared.identity import Actor
from shared.logs import hash_user
from shared.memory.errors import MemoryOutcomeUnknown, MemoryUnavailable
from shared.memory.port import MemoryResult
from shared.memory.service import submit_card
from shared.memory.store import PreferenceSnapshot, read_preference
from shared.store import DocumentStore, StoreError, StoreTimeout
from shared.turn.audit import COLLECTION as AUDIT

USER_A = "U7a1e5b0c2d3f4a5b6c7d8e9f0a1b2c3d"   # the user of the acceptance cases
USER_B = "Ub0b1b2b3b4b5b6b7b8b9babbbcbdbebf"


def postbacks(node) -> dict[str, str]:
    """Every postback action in recorded (camelCase JSON) messages: {label: data}."""
    found: dict[str, str] = {}

    def walk(value):
        if isinstance(value, dict):
            if value.get("type") == "postback" and "data" in value:
                found[value.get("label")] = value["data"]
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    walk(node)
    return found


def preference_of(store, user_id: str = USER_A, tenant_id: str = "test-tenant") -> PreferenceSnapshot:
    """The stored preference of one user."""
    return read_preference(store, Actor(tenant_id, user_id))


def place_audits(store, user_id: str = USER_A) -> list[dict]:
    """The place-search audit records of one user, oldest first."""
    rows = store.query(AUDIT, where={"user_hash": hash_user(user_id), "tool": "search_local_places"})
    return sorted(rows, key=lambda row: row["at"])


class ScriptedMemoryFunction:
    """A loopback server answering each POST with the next (status, body, delay_s)."""

    def __init__(self, *answers):
        self.answers = list(answers)
        self.requests: list[dict] = []
        scripted = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                length = int(self.headers.get("Content-Length", 0))
                scripted.requests.append({"auth": self.headers.get("Authorization"),
                                          "body": json.loads(self.rfile.read(length))})
                status, body, delay = scripted.answers.pop(0)
                time.sleep(delay)
                raw = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/"

    def close(self):
        self.server.shutdown()
        self.server.server_close()


class DirectMemoryClient:
    """The memory use case called in-process (a MemoryClient adapter).

    For tests that must inject a clock into the approve step (e.g. a card past 5 minutes); the
    deployed webhook always reaches functions/memory over HTTP (shared.wiring).

    Args:
        settings: as for ``submit_card``.
        store: the store functions/memory would use.
        clock: aware "now".
    """

    def __init__(self, settings: Settings, store: DocumentStore, clock: Clock = utc_now):
        self.settings = settings
        self.store = store
        self.clock = clock

    def submit(self, actor: Actor, token: str, *, timeout_seconds: float) -> MemoryResult:
        """See MemoryClient.submit. Store errors map as functions/memory's 503 does over HTTP.

        Raises:
            MemoryOutcomeUnknown: StoreTimeout (a write was sent; the outcome is unknown).
            MemoryUnavailable: another retryable store error; nothing written.
        """
        try:
            return submit_card(self.settings, self.store, actor, token, clock=self.clock)
        except StoreTimeout as exc:
            raise MemoryOutcomeUnknown("store timeout") from exc
        except StoreError as exc:
            if exc.retryable:
                raise MemoryUnavailable(exc.__class__.__name__) from exc
            raise
