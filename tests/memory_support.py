"""Helpers shared by the consented-memory tests: find card buttons in recorded LINE messages,
read a preference and the turn audit straight from the store (no shared.* patching)."""
from __future__ import annotations

import json
import threading
import time
from datetime import datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from shared.audit import COLLECTION as AUDIT
from shared.identity import Actor
from shared.logs import hash_user
from shared.memory.store import PreferenceSnapshot, read_preference
from tests.conftest import postback_event
from tools.line_messages import postbacks  # noqa: F401  (postback buttons in sent messages)
from tools.memory_direct import DirectMemoryClient  # noqa: F401  (the tests' in-process memory client)

USER_A = "U7a1e5b0c2d3f4a5b6c7d8e9f0a1b2c3d"   # the user of the acceptance cases
USER_B = "Ub0b1b2b3b4b5b6b7b8b9babbbcbdbebf"


def tap_event(data: str, user_id: str, at: datetime) -> dict:
    """A postback event tapped at ``at``: its ``timestamp`` (epoch ms) as LINE stamps the tap."""
    event = postback_event(data, user_id=user_id)
    event["timestamp"] = int(at.timestamp() * 1000)
    return event


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
        self.traceparents: list[str | None] = []  # the traceparent header of each request
        scripted = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                length = int(self.headers.get("Content-Length", 0))
                scripted.requests.append({"auth": self.headers.get("Authorization"),
                                          "body": json.loads(self.rfile.read(length))})
                scripted.traceparents.append(self.headers.get("traceparent"))
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


def webhook_with_memory(env: dict, clock):
    """An in-process ``WebhookService`` on the test's SQLite file and LINE stand-in, whose memory calls
    go to functions/memory's use case in-process (``DirectMemoryClient``), with the given clock."""
    from shared.config import WEBHOOK_REQUIRED, Settings
    from shared.webhook.service import WebhookService
    from shared.wiring import line_gateway, open_store

    settings = Settings.from_env(env, required=WEBHOOK_REQUIRED)
    return WebhookService(settings, open_store(settings), line_gateway(settings), clock=clock,
                          memory=DirectMemoryClient(settings, open_store(settings), clock))
