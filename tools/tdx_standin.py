"""A local stand-in for TDX: the OIDC token endpoint and the tourism activity endpoint, scriptable.

Endpoints (as TDX answers them):

* ``POST /auth/realms/TDXConnect/protocol/openid-connect/token`` (form: ``grant_type=client_credentials``,
  ``client_id``, ``client_secret``) → 200 ``{"access_token", "expires_in", "token_type": "Bearer"}``;
  wrong credentials → 401 ``{"error": "invalid_client"}``.
* ``GET /api/basic/v2/Tourism/Activity/<City>?$format=JSON`` with ``Authorization: Bearer <token>`` →
  200 with the configured JSON array and a ``Last-Modified`` header; an unknown or expired token →
  401; ``If-Modified-Since`` equal to the current ``Last-Modified`` → 304.
* ``GET /api/basic/v2/Tourism/Restaurant/<City>?$format=JSON``: the same, with the ``restaurants`` array
  (calls and faults of kind ``restaurant``).

Scripting (from the test that owns it): ``fail_next(path_kind, status, times)`` answers the next
``times`` calls to ``token`` or ``activity`` with ``status``; ``expire_tokens()`` makes every token
issued so far answer 401 (a token expiring mid-run); ``set_records(records)`` changes the data and its
``Last-Modified``. Every call is recorded (``calls()``: method, kind, status, whether an
If-Modified-Since was sent); secrets and tokens are never recorded.

Run on its own: ``python -m tools.tdx_standin --port 8095 --records file.json`` (prints ``{"url": ...}``).
"""
from __future__ import annotations

import argparse
import json
import secrets
import signal
import sys
import threading
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from tools.standin_server import StandinServer

TOKEN_PATH = "/auth/realms/TDXConnect/protocol/openid-connect/token"
ACTIVITY_PREFIX = "/api/basic/v2/Tourism/Activity/"
RESTAURANT_PREFIX = "/api/basic/v2/Tourism/Restaurant/"
CLIENT_ID = "local-tdx-client"
CLIENT_SECRET = "local-tdx-secret"


class TdxStandin(StandinServer):
    """The stand-in on loopback; ``with TdxStandin(records) as tdx:`` or ``start()``/``stop()``.

    Args:
        records: the activity endpoint's JSON array.
        restaurants: the restaurant endpoint's JSON array.
        client_id, client_secret: the accepted credentials.
        expires_in: seconds announced with each token.
        port: 0 picks a free one (read ``url``).
    """

    def __init__(self, records: list[Any] | None = None, *, client_id: str = CLIENT_ID,
                 client_secret: str = CLIENT_SECRET, expires_in: int = 86400, host: str = "127.0.0.1",
                 port: int = 0, restaurants: list[Any] | None = None):
        self.client_id = client_id
        self.client_secret = client_secret
        self.expires_in = expires_in
        self._host, self._port = host, port
        self._lock = threading.Lock()
        self._records: list[Any] = list(records or [])
        self._restaurants: list[Any] = list(restaurants or [])
        self._data_version = 0
        self._last_modified = self._http_date()
        self._tokens: set[str] = set()
        self._faults: dict[str, list[int]] = {"token": [], "activity": [], "restaurant": []}
        self._calls: list[dict[str, Any]] = []
        self._server: ThreadingHTTPServer | None = None

    # --- scripting -------------------------------------------------------------------------
    def fail_next(self, kind: str, status: int, times: int = 1) -> None:
        """Answer the next ``times`` calls to ``kind`` (``token`` or ``activity``) with ``status``."""
        with self._lock:
            self._faults[kind].extend([status] * times)

    def expire_tokens(self) -> None:
        """Every token issued so far now answers 401."""
        with self._lock:
            self._tokens.clear()

    def set_records(self, records: list[Any], *, last_modified: str | None = None) -> None:
        """Replace the data; ``Last-Modified`` becomes ``last_modified`` or a new value."""
        with self._lock:
            self._records = list(records)
            self._data_version += 1
            self._last_modified = last_modified or self._http_date()

    def _http_date(self) -> str:
        # A fixed clock: each data version is one minute after the previous one.
        return formatdate(1_790_000_000 + 60 * self._data_version, usegmt=True)

    def calls(self, kind: str | None = None) -> list[dict[str, Any]]:
        """Recorded calls, oldest first (``kind``: token / activity / other)."""
        with self._lock:
            return [dict(c) for c in self._calls if kind is None or c["kind"] == kind]

    @property
    def api_base_url(self) -> str:
        """``TDX_API_BASE_URL`` for LOCAL."""
        return f"{self.url}/api/basic"

    @property
    def token_url(self) -> str:
        """``TDX_TOKEN_URL`` for LOCAL."""
        return f"{self.url}{TOKEN_PATH}"

    # --- answering -------------------------------------------------------------------------
    def _record(self, kind: str, method: str, status: int, **extra: Any) -> None:
        self._calls.append({"kind": kind, "method": method, "status": status, **extra})

    def answer(self, method: str, target: str, headers: dict[str, str], body: bytes) -> tuple[int, Any, dict]:
        """One request → (status, JSON body or None, extra headers)."""
        path = urlsplit(target).path
        with self._lock:
            if path == TOKEN_PATH and method == "POST":
                return self._token(body)
            if path.startswith(ACTIVITY_PREFIX) and method == "GET":
                return self._activity(target, headers)
            if path.startswith(RESTAURANT_PREFIX) and method == "GET":
                return self._activity(target, headers, kind="restaurant")
            self._record("other", method, 404, path=path)
            return 404, {"message": "not found"}, {}

    def _token(self, body: bytes) -> tuple[int, Any, dict]:
        if self._faults["token"]:
            status = self._faults["token"].pop(0)
            self._record("token", "POST", status)
            return status, {"error": "scripted"}, {}
        form = {k: v[0] for k, v in parse_qs(body.decode("utf-8", "replace")).items()}
        if (form.get("grant_type") != "client_credentials" or form.get("client_id") != self.client_id
                or form.get("client_secret") != self.client_secret):
            self._record("token", "POST", 401)
            return 401, {"error": "invalid_client"}, {}
        token = secrets.token_urlsafe(24)
        self._tokens.add(token)
        self._record("token", "POST", 200)
        return 200, {"access_token": token, "expires_in": self.expires_in, "token_type": "Bearer"}, {}

    def _activity(self, target: str, headers: dict[str, str], kind: str = "activity") -> tuple[int, Any, dict]:
        since = headers.get("if-modified-since")
        query = parse_qs(urlsplit(target).query)
        if self._faults[kind]:
            status = self._faults[kind].pop(0)
            self._record(kind, "GET", status, if_modified_since=bool(since))
            return status, {"message": "scripted"}, {}
        auth = headers.get("authorization", "")
        if not auth.startswith("Bearer ") or auth[len("Bearer "):] not in self._tokens:
            self._record(kind, "GET", 401, if_modified_since=bool(since))
            return 401, {"message": "Unauthorized"}, {}
        if query.get("$format") != ["JSON"]:
            self._record(kind, "GET", 400, if_modified_since=bool(since))
            return 400, {"message": "$format=JSON expected"}, {}
        if since and since == self._last_modified:
            self._record(kind, "GET", 304, if_modified_since=True)
            return 304, None, {"Last-Modified": self._last_modified}
        self._record(kind, "GET", 200, if_modified_since=bool(since))
        records = self._records if kind == "activity" else self._restaurants
        return 200, records, {"Last-Modified": self._last_modified}

    # --- server ----------------------------------------------------------------------------
    thread_name = "tdx-standin"

    def _new_server(self) -> ThreadingHTTPServer:
        standin = self

        class Handler(BaseHTTPRequestHandler):
            def _serve(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                headers = {k.lower(): v for k, v in self.headers.items()}
                status, payload, extra = standin.answer(self.command, self.path, headers, body)
                data = b"" if payload is None else json.dumps(payload, ensure_ascii=False).encode("utf-8")
                self.send_response(status)
                if payload is not None:
                    self.send_header("Content-Type", "application/json; charset=utf-8")
                for name, value in extra.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                if data:
                    self.wfile.write(data)

            do_GET = do_POST = _serve

            def log_message(self, format: str, *args: Any) -> None:  # quiet
                return

        return ThreadingHTTPServer((self._host, self._port), Handler)


def main(argv: list[str] | None = None) -> int:
    """Serve until SIGINT/SIGTERM; prints ``{"url", "api_base_url", "token_url"}`` once listening."""
    parser = argparse.ArgumentParser(prog="python -m tools.tdx_standin")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--records", type=Path, default=None, help="JSON array file to serve")
    args = parser.parse_args(argv)
    records = json.loads(args.records.read_text(encoding="utf-8")) if args.records else []
    standin = TdxStandin(records, port=args.port).start()
    print(json.dumps({"url": standin.url, "api_base_url": standin.api_base_url, "token_url": standin.token_url}),
          flush=True)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    try:
        stop.wait()
    except KeyboardInterrupt:
        pass
    standin.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
