"""A local stand-in for the LINE Messaging API that records every call.

It answers the few endpoints LOCAL uses the way LINE does (status codes, JSON
shapes, the ``x-line-request-id`` / ``x-line-accepted-request-id`` headers):

* ``POST /v2/bot/message/reply``: 200 ``{"sentMessages": [...]}``; a reply token
  is single-use (a second use → 400 ``Invalid reply token``); 1–5 messages.
* ``POST /v2/bot/message/push``: 200, or 409 when the ``X-Line-Retry-Key`` was
  already accepted (with the original request id in ``x-line-accepted-request-id``).
* ``POST /v2/bot/chat/loading/start``: 202 ``{}``.
* ``GET /v2/bot/message/quota``: ``{"type": "none"}``, or ``{"type": "limited", "value": N}`` after
  ``set_quota(N)``; ``GET /v2/bot/message/quota/consumption``: ``{"totalUsage": M}``, the messages
  used this month (``set_quota``'s ``used`` plus one per push accepted since). With a limit set, a push
  once ``totalUsage`` has reached it → 429 ``{"message": "You have reached your monthly limit."}``,
  and nothing is sent (LINE's monthly limit; replies are never limited).
* ``GET /v2/bot/profile/{userId}``: 200 with a made-up display name.
* the rich menu endpoints (``RICH_MENU_ROUTES``; LINE serves the image ones on ``api-data.line.me``,
  the stand-in serves both hosts' paths on one port):
  ``POST /v2/bot/richmenu`` → ``{"richMenuId": "richmenu-…"}`` and ``POST /v2/bot/richmenu/validate`` →
  ``{}``, each checking the body as LINE does (``rich_menu_problems``: size, name ≤ 300, chatBarText ≤ 14,
  1–20 areas inside the menu, actions of the kinds a rich menu takes, action lengths, the SDK's
  ``RichMenuRequest``); ``GET /v2/bot/richmenu/list`` → ``{"richmenus": [...]}``;
  ``GET``/``DELETE /v2/bot/richmenu/{id}`` (404 ``Not found`` for an unknown id; deleting the default
  menu leaves no default); ``POST /v2/bot/richmenu/{id}/content`` (``image/png`` or ``image/jpeg``,
  else 415; ≤ 1 MB, else 413; the image's own width and height equal to the menu's, else 400; one
  image per menu, a second → 400) and ``GET`` of it (the bytes, with their content type);
  ``POST /v2/bot/user/all/richmenu/{id}`` (400 ``must upload richmenu image before applying it to
  user`` without an image), ``GET /v2/bot/user/all/richmenu`` → ``{"richMenuId": …}`` (404 when none)
  and ``DELETE /v2/bot/user/all/richmenu``. An uploaded image is recorded as ``{"contentType",
  "bytes", "sha256"}``, never its bytes.
* a missing or wrong bearer token (when one is configured) → 401.
* a message over one of LINE's length limits, counted in UTF-16 units as LINE counts them
  (``shared.line.limits``: text 5,000, altText 400, labels 20, displayText 300, postback data
  300, …) → 400 ``{"message": "The request body has N error(s)", "details": [{message, property}]}``.
* a body that line-bot-sdk's own request model refuses (``ReplyMessageRequest``,
  ``PushMessageRequest``, ``ShowLoadingAnimationRequest`` and each message as a ``Message``, read with
  ``from_dict``: an unknown message type, a missing or mistyped field, a Flex box without a valid
  layout …) → 400 in the same shape, as LINE refuses a body that is not a valid request.

Stand-in-only endpoints (not LINE, not recorded): ``GET /__calls?since=SEQ``
returns the recorded calls with ``seq > SEQ`` so a chat in another process can
poll them; ``GET /__health`` returns ``{"ok": true}``.

Every LINE call is recorded as one JSON line (kept in memory, and appended to a
file when ``record_path`` is given)::

    {"seq": 1, "at": "2025-01-01T00:00:00.000000+00:00", "method": "POST",
     "path": "/v2/bot/message/reply", "headers": {"authorization": "Bearer ***",
     "content-type": "application/json", "x-line-retry-key": null},
     "body": {...} | null, "status": 200, "request_id": "...", "response": {...}}

The access token is never recorded.

Run on its own: ``python -m tools.line_standin --port 8090 --record calls.jsonl``
(prints ``{"url": ...}`` as one JSON line on stdout once it is listening).
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import os
import re
import secrets
import signal
import socket
import sys
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from linebot.v3.messaging import (
    Message,
    PushMessageRequest,
    ReplyMessageRequest,
    RichMenuRequest,
    ShowLoadingAnimationRequest,
)

from shared.line import limits
from tools.standin_server import StandinServer

REPLY_PATH = "/v2/bot/message/reply"
PUSH_PATH = "/v2/bot/message/push"
LOADING_PATH = "/v2/bot/chat/loading/start"
QUOTA_PATH = "/v2/bot/message/quota"
CONSUMPTION_PATH = "/v2/bot/message/quota/consumption"
MONTHLY_LIMIT_MESSAGE = "You have reached your monthly limit."
PROFILE_PREFIX = "/v2/bot/profile/"
RICH_MENU_PATH = "/v2/bot/richmenu"
RICH_MENU_LIST_PATH = "/v2/bot/richmenu/list"
RICH_MENU_VALIDATE_PATH = "/v2/bot/richmenu/validate"
DEFAULT_RICH_MENU_PATH = "/v2/bot/user/all/richmenu"
CALLS_PATH = "/__calls"
HEALTH_PATH = "/__health"

MAX_MESSAGES = 5
MAX_BODY_BYTES = 2 * 1024 * 1024
_UUID_RE = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")
_LOADING_SECONDS = frozenset(range(5, 61, 5))

AUTH_MISSING = ("Authorization header required. Must follow the scheme, "
                "'Authorization: Bearer <ACCESS TOKEN>'")
AUTH_INVALID = ("Authentication failed due to the following reason: invalid token. "
                "Confirm that the access token in the authorization header is valid.")


@dataclass
class Answer:
    """One HTTP answer: status, JSON body and extra response headers."""

    status: int
    body: Any
    headers: dict[str, str] = field(default_factory=dict)
    #: Bytes to send instead of the JSON body (a rich menu's image), and their content type.
    raw: bytes | None = None
    content_type: str = "application/json; charset=utf-8"


@dataclass(frozen=True)
class _Blob:
    """A request body that is not JSON (a rich menu image): its declared content type and bytes."""

    content_type: str
    data: bytes

    def summary(self) -> dict[str, Any]:
        """What the call record keeps of it: the content type, the size in bytes and the SHA-256."""
        return {"contentType": self.content_type, "bytes": len(self.data),
                "sha256": hashlib.sha256(self.data).hexdigest()}


@dataclass
class _Fault:
    """A scripted answer for the next ``remaining`` calls to one path."""

    status: int
    remaining: int
    after_processing: bool


def _error(status: int, message: str, details: list[dict] | None = None) -> Answer:
    body: dict[str, Any] = {"message": message}
    if details:
        body["details"] = details
    return Answer(status, body)


def _body_error(message: str, prop: str) -> Answer:
    return _error(400, "The request body has 1 error(s)", [{"message": message, "property": prop}])


def _new_request_id() -> str:
    return str(uuid.uuid4())


def _sent_messages(count: int) -> list[dict[str, str]]:
    """Make LINE-like sentMessages entries: 18-digit ids and opaque quote tokens."""
    return [{"id": str(secrets.randbelow(9 * 10**17) + 10**17), "quoteToken": secrets.token_urlsafe(48)}
            for _ in range(count)]


def _check_messages(body: dict) -> Answer | None:
    messages = body.get("messages")
    if not isinstance(messages, list):
        return _body_error("must be specified", "messages")
    if not 1 <= len(messages) <= MAX_MESSAGES:
        return _body_error(f"size must be between 1 and {MAX_MESSAGES}", "messages")
    problems = []
    for index, message in enumerate(messages):
        if not isinstance(message, dict) or not isinstance(message.get("type"), str):
            return _body_error("must be specified", f"messages[{index}].type")
        problems += limits.message_problems(message, f"messages[{index}]")
    if problems:  # LINE counts every length in UTF-16 units, and refuses the whole request
        return _error(400, f"The request body has {len(problems)} error(s)",
                      [{"message": message, "property": prop} for prop, message in problems])
    for index, message in enumerate(messages):
        problem = _model_problem(Message, message, f"messages[{index}]")
        if problem is not None:
            return problem
    return None


def _model_problem(model: Any, body: dict, prop: str | None = None) -> Answer | None:
    """400 when line-bot-sdk's request model ``model`` refuses ``body`` (``from_dict``), else None.

    The SDK's models are LINE's OpenAPI schema: what they refuse, LINE refuses. ``prop`` names the
    part checked (None: the request itself, so each detail names the field); the message names the
    model and field the SDK found wrong.
    """
    try:
        model.from_dict(body)
    except (ValueError, TypeError) as exc:  # pydantic's ValidationError is a ValueError
        where = getattr(getattr(exc, "model", None), "__name__", model.__name__)
        found = exc.errors() if callable(getattr(exc, "errors", None)) else []  # type: ignore[attr-defined]
        details = []
        for item in found:
            field_path = ".".join(map(str, item.get("loc", ())))
            details.append({"message": f"{item.get('msg', 'invalid')} ({where}.{field_path})",
                            "property": prop or field_path})
        details = details or [{"message": str(exc).split(". ")[0][:200], "property": prop or "body"}]
        return _error(400, f"The request body has {len(details)} error(s)", details)
    return None


# -- rich menus ------------------------------------------------------------------------------
#: (method, path pattern, handler method name), tried in order; a path of ``RICH_MENU_PREFIXES`` that
#: matches none is 404. ``menu_id`` is the rich menu id in the path, given to the handler by name.
_RICH_MENU_ID = r"(?P<menu_id>[^/]+)"
RICH_MENU_ROUTES: tuple[tuple[str, re.Pattern[str], str], ...] = (
    ("POST", re.compile(re.escape(RICH_MENU_PATH)), "_rich_menu_create"),
    ("POST", re.compile(re.escape(RICH_MENU_VALIDATE_PATH)), "_rich_menu_validate"),
    ("GET", re.compile(re.escape(RICH_MENU_LIST_PATH)), "_rich_menu_list"),
    ("GET", re.compile(f"{RICH_MENU_PATH}/{_RICH_MENU_ID}"), "_rich_menu_get"),
    ("DELETE", re.compile(f"{RICH_MENU_PATH}/{_RICH_MENU_ID}"), "_rich_menu_delete"),
    ("POST", re.compile(f"{RICH_MENU_PATH}/{_RICH_MENU_ID}/content"), "_rich_menu_upload"),
    ("GET", re.compile(f"{RICH_MENU_PATH}/{_RICH_MENU_ID}/content"), "_rich_menu_download"),
    ("POST", re.compile(f"{DEFAULT_RICH_MENU_PATH}/{_RICH_MENU_ID}"), "_default_rich_menu_set"),
    ("GET", re.compile(re.escape(DEFAULT_RICH_MENU_PATH)), "_default_rich_menu_get"),
    ("DELETE", re.compile(re.escape(DEFAULT_RICH_MENU_PATH)), "_default_rich_menu_cancel"),
)
RICH_MENU_PREFIXES = (RICH_MENU_PATH, DEFAULT_RICH_MENU_PATH)
_RICH_MENU_CONTENT = re.compile(f"{RICH_MENU_PATH}/[^/]+/content")
#: Pillow's name of each image type LINE takes for a rich menu.
_IMAGE_FORMATS = {"image/png": "PNG", "image/jpeg": "JPEG"}


def _whole_number(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _size_problems(size: Any) -> list[tuple[str, str]]:
    """What LINE refuses in a rich menu's ``size`` (``shared.line.limits``: 800–2500 wide, ≥ 250 high,
    at least 1.45 times as wide as high)."""
    if not isinstance(size, dict) or not all(_whole_number(size.get(k)) for k in ("width", "height")):
        return [("size", "must be specified")]
    width, height = size["width"], size["height"]
    low, high = limits.RICH_MENU_WIDTH
    if not low <= width <= high:
        return [("size.width", f"must be between {low} and {high}")]
    if height < limits.RICH_MENU_MIN_HEIGHT:
        return [("size.height", f"must be at least {limits.RICH_MENU_MIN_HEIGHT}")]
    if width / height < limits.RICH_MENU_MIN_RATIO:
        return [("size", f"width / height must be at least {limits.RICH_MENU_MIN_RATIO}")]
    return []


def _area_problems(area: Any, where: str, size: dict) -> list[tuple[str, str]]:
    """What LINE refuses in one area: bounds outside the menu, an action a rich menu does not take,
    an action string over its length."""
    if not isinstance(area, dict):
        return [(where, "must be specified")]
    problems = []
    bounds = area.get("bounds")
    if not isinstance(bounds, dict) or not all(_whole_number(bounds.get(k)) for k in ("x", "y", "width", "height")):
        problems.append((f"{where}.bounds", "must be specified"))
    elif (min(bounds["x"], bounds["y"]) < 0 or min(bounds["width"], bounds["height"]) < 1
          or bounds["x"] + bounds["width"] > size.get("width", 0)
          or bounds["y"] + bounds["height"] > size.get("height", 0)):
        problems.append((f"{where}.bounds", "must be within the rich menu's size"))
    action = area.get("action")
    if not isinstance(action, dict) or not isinstance(action.get("type"), str):
        problems.append((f"{where}.action", "must be specified"))
    elif action["type"] not in limits.RICH_MENU_ACTION_TYPES:
        problems.append((f"{where}.action.type", f"{action['type']} is not supported in a rich menu"))
    else:
        problems += limits.action_problems(action, f"{where}.action")
    return problems


def _text_problem(body: dict, key: str, limit: int) -> list[tuple[str, str]]:
    value = body.get(key)
    if not isinstance(value, str) or not value:
        return [(key, "must be specified")]
    if limits.units(value) > limit:
        return [(key, f"Length must be between 1 and {limit}")]
    return []


def rich_menu_problems(body: dict) -> list[tuple[str, str]]:
    """Every rule of LINE's "Rich menu object" that ``body`` (camelCase JSON) breaks, as
    ``[(property, message)]``; empty when LINE would take it (the SDK's model is checked after)."""
    problems = _size_problems(body.get("size"))
    if not isinstance(body.get("selected"), bool):
        problems.append(("selected", "must be specified"))
    problems += _text_problem(body, "name", limits.RICH_MENU_NAME)
    problems += _text_problem(body, "chatBarText", limits.RICH_MENU_CHAT_BAR_TEXT)
    areas = body.get("areas")
    if not isinstance(areas, list) or not 1 <= len(areas) <= limits.RICH_MENU_AREAS:
        return problems + [("areas", f"size must be between 1 and {limits.RICH_MENU_AREAS}")]
    size = body["size"] if isinstance(body.get("size"), dict) else {}
    for index, area in enumerate(areas):
        problems += _area_problems(area, f"areas[{index}]", size)
    return problems


def _image_problem(blob: _Blob, size: dict) -> Answer | None:
    """415/413/400 as LINE answers an image it does not take for a menu of ``size``, else None."""
    if blob.content_type not in limits.RICH_MENU_IMAGE_TYPES:
        return _error(415, "Unsupported media type")
    if len(blob.data) > limits.RICH_MENU_IMAGE_BYTES:
        return _error(413, f"The image is over {limits.RICH_MENU_IMAGE_BYTES} bytes")
    from PIL import Image, UnidentifiedImageError  # dev dependency; only this endpoint reads images

    try:
        with Image.open(io.BytesIO(blob.data)) as image:
            found, dimensions = image.format, image.size
    except (UnidentifiedImageError, OSError):
        return _error(400, "The image could not be read")
    if found != _IMAGE_FORMATS[blob.content_type]:
        return _error(400, f"The image is not {blob.content_type}")
    if dimensions != (size["width"], size["height"]):
        return _error(400, f"The image is {dimensions[0]}x{dimensions[1]}; the rich menu is "
                           f"{size['width']}x{size['height']}")
    return None


class _QuietServer(ThreadingHTTPServer):
    """A client that hung up before its answer (a caller's timeout: part of the scenario) is not
    an error of the stand-in: no traceback for it; anything else is reported as usual.

    Its listen backlog is 128 connections, not socketserver's 5: LINE's API takes any burst, and
    with 5 a burst of replies (the flapping-lock run's twelve senders) had connections dropped by
    the kernel and retried after a second, so a reply read as "never started" though LINE would
    have taken it (docs/design.md §11: the webhook then queues it: a fault of the stand-in, not of the scenario)."""

    request_queue_size = 128

    def handle_error(self, request, client_address) -> None:
        if isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError)):
            return
        super().handle_error(request, client_address)


class LineStandin(StandinServer):
    """A recording LINE Messaging API stand-in on loopback.

    Args:
        host: interface to bind; loopback by default.
        port: TCP port; 0 picks a free one (read it back from ``url``).
        record_path: JSON-lines file to append every recorded call to; None keeps
            calls in memory only.
        access_token: when set, requests must carry ``Authorization: Bearer <it>``
            or get 401; when None, any (or no) token is accepted.

    Use ``with LineStandin() as standin:`` or ``start()``/``stop()``.
    """

    def __init__(self, host: str = "127.0.0.1", port: int = 0, record_path: Path | None = None,
                 access_token: str | None = None) -> None:
        self._host = host
        self._port = port
        self._record_path = Path(record_path) if record_path is not None else None
        self._access_token = access_token
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self._calls: list[dict] = []
        self._seq = 0
        self._used_reply_tokens: set[str] = set()
        self._accepted_retry_keys: dict[str, tuple[str, list[dict]]] = {}
        self._faults: dict[str, _Fault] = {}
        self._delays: dict[str, list[float]] = {}
        self._latency: dict[str, float] = {}
        self._rich_menus: dict[str, dict] = {}  # id → LINE's rich menu response object
        self._rich_menu_images: dict[str, _Blob] = {}
        self._default_rich_menu: str | None = None
        self._quota_limit: int | None = None
        self._quota_used = 0
        self._last_port: int | None = None
        self._open_sockets: set = set()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle -----------------------------------------------------------------
    thread_name = "line-standin"

    def _new_server(self) -> ThreadingHTTPServer:
        server = _QuietServer((self._host, self._port), _make_handler(self))
        server.handle_error = _quiet_handle_error(server.handle_error)  # type: ignore[method-assign]
        return server

    def _before_close(self, server: ThreadingHTTPServer) -> None:
        self._last_port = server.server_address[1]

    # -- inspection ----------------------------------------------------------------
    def calls(self, since_seq: int = 0, where: Callable[[dict], bool] | None = None) -> list[dict]:
        """Return a copy of the recorded calls with ``seq > since_seq``, oldest first.

        Args:
            since_seq: only calls recorded after this one.
            where: only calls it returns true for; it is given each recorded call itself (read it,
                do not change it), and only the calls it keeps are copied.
        """
        with self._lock:
            return [json.loads(json.dumps(c)) for c in self._calls
                    if c["seq"] > since_seq and (where is None or where(c))]

    def wait_for(self, predicate: Callable[[dict], bool], timeout_s: float = 5.0,
                 count: int = 1) -> list[dict]:
        """Block until at least ``count`` recorded calls satisfy ``predicate``.

        Args:
            predicate: called with each recorded call (a dict as in ``calls()``).
            timeout_s: how long to wait, in seconds.
            count: how many matching calls to wait for.
        Returns:
            Every matching call so far (at least ``count``), oldest first.
        Raises:
            TimeoutError: fewer than ``count`` matched within ``timeout_s``.
        """
        deadline = time.monotonic() + timeout_s
        with self._changed:
            while True:
                matches = [c for c in self._calls if predicate(c)]
                if len(matches) >= count:
                    return [json.loads(json.dumps(c)) for c in matches]
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise TimeoutError(f"{len(matches)} of {count} matching LINE calls after {timeout_s} s")
                self._changed.wait(remaining)

    # -- fault hooks -----------------------------------------------------------------
    def fail_next(self, path: str, status: int, times: int = 1, after_processing: bool = False) -> None:
        """Make the next ``times`` calls to ``path`` answer ``status``; they are still recorded.

        Args:
            path: request path, e.g. ``/v2/bot/message/push``.
            status: HTTP status to answer, e.g. 500; the body is ``{"message": ...}``.
            times: how many calls to fail.
            after_processing: False: the call has no effect (token not used, retry key
                not accepted). True: the call takes effect and only the answer is lost,
                the "unknown outcome" case (a retried push then gets 409).
        """
        with self._lock:
            self._faults[path] = _Fault(status, times, after_processing)

    def delay_next(self, path: str, seconds: float, times: int = 1) -> None:
        """Make the next ``times`` calls to ``path`` wait ``seconds`` before answering."""
        with self._lock:
            self._delays.setdefault(path, []).extend([seconds] * times)

    def set_latency(self, path: str, seconds: float) -> None:
        """Make every later call to ``path`` wait ``seconds`` before answering (0 ends it); after ``delay_next``."""
        with self._lock:
            self._latency[path] = max(0.0, float(seconds))

    # -- the month's push quota (GET /v2/bot/message/quota[/consumption], the monthly limit) -------
    def set_quota(self, limit: int | None, used: int = 0) -> None:
        """Set this month's push limit (None: LINE sets none, ``type: none``) and the messages used so
        far; every push accepted afterwards adds one, and with a limit a push once ``used`` has reached
        it is refused 429 with LINE's monthly-limit message (nothing sent, the retry key not accepted)."""
        with self._lock:
            self._quota_limit = None if limit is None else max(0, int(limit))
            self._quota_used = max(0, int(used))

    def quota_used(self) -> int:
        """Messages used this month as the consumption endpoint answers (``totalUsage``)."""
        with self._lock:
            return self._quota_used

    def _quota_answer(self, method: str, path: str) -> Answer | None:
        """The answer of the two quota endpoints; None for any other request."""
        if method != "GET" or path not in (QUOTA_PATH, CONSUMPTION_PATH):
            return None
        with self._lock:
            if path == CONSUMPTION_PATH:
                return Answer(200, {"totalUsage": self._quota_used})
            if self._quota_limit is None:
                return Answer(200, {"type": "none"})
            return Answer(200, {"type": "limited", "value": self._quota_limit})

    def _monthly_limit_reached(self) -> Answer | None:
        """429 with LINE's monthly-limit message when a limit is set and used (call holding the lock)."""
        if self._quota_limit is not None and self._quota_used >= self._quota_limit:
            return _error(429, MONTHLY_LIMIT_MESSAGE)
        return None

    def refuse_connections(self) -> None:
        """Close the listening socket (keeping the port) and every open connection: a client's next
        call finds no server, so its connection is refused and nothing is sent."""
        self.stop()
        with self._lock:
            open_sockets, self._open_sockets = list(self._open_sockets), set()
        for sock in open_sockets:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def accept_connections(self) -> None:
        """Listen again on the same port after ``refuse_connections``.

        Raises:
            OSError: the port was taken meanwhile.
        """
        if self._server is None:
            self._port = self._last_port or self._port
            self.start()

    # -- request handling (called from server threads) -------------------------------
    def handle(self, method: str, raw_path: str, headers: dict[str, str], raw_body: bytes) -> Answer:
        """Answer one request and record it; the HTTP handler's only entry point."""
        split = urlsplit(raw_path)
        path = split.path
        if path.startswith("/__"):
            return self._control(method, path, parse_qs(split.query))
        delay = self._take_delay(path)
        if delay:
            time.sleep(delay)
        body: Any
        if method == "POST" and _RICH_MENU_CONTENT.fullmatch(path):  # an image, not JSON
            content_type = (headers.get("content-type") or "").split(";")[0].strip().lower()
            body, parse_error = _Blob(content_type, raw_body), False
        else:
            body, parse_error = _parse_json(raw_body)
        answer = self._answer(method, path, headers, body, parse_error)
        answer.headers.setdefault("x-line-request-id", _new_request_id())
        self._record(method, path, headers, body, answer)
        return answer

    def _answer(self, method: str, path: str, headers: dict[str, str], body: Any,
                parse_error: bool) -> Answer:
        fault = self._take_fault(path)
        if fault is not None and not fault.after_processing:
            return _error(fault.status, f"Injected fault ({fault.status})")
        auth = self._check_auth(headers.get("authorization"))
        if auth is not None:
            return auth
        if parse_error:
            return _error(400, "The request body could not be parsed as JSON")
        answer = self._route(method, path, headers, body)
        if fault is not None:  # processed, but the caller never learns it
            lost = _error(fault.status, f"Injected fault ({fault.status}) after processing")
            lost.headers.update({k: v for k, v in answer.headers.items() if k == "x-line-request-id"})
            return lost
        return answer

    def _route(self, method: str, path: str, headers: dict[str, str], body: Any) -> Answer:
        if path.startswith(RICH_MENU_PREFIXES):
            return self._rich_menu_route(method, path, body)
        quota = self._quota_answer(method, path)
        if quota is not None:
            return quota
        routes = {("POST", REPLY_PATH): self._reply, ("POST", PUSH_PATH): self._push,
                  ("POST", LOADING_PATH): self._loading}
        handler = routes.get((method, path))
        if handler is None and method == "GET" and path.startswith(PROFILE_PREFIX):
            return self._profile(path[len(PROFILE_PREFIX):])
        if handler is None:
            return _error(404, "Not found")
        retry_key = headers.get("x-line-retry-key")
        if retry_key is not None and path != PUSH_PATH:
            return _error(400, "The retry key is not supported for this API")
        if not isinstance(body, dict):
            return _error(400, "The request body must be a JSON object")
        return handler(body, retry_key)

    def _reply(self, body: dict, _retry_key: str | None) -> Answer:
        token = body.get("replyToken")
        if not isinstance(token, str) or not token:
            return _body_error("must be specified", "replyToken")
        problem = _check_messages(body) or _model_problem(ReplyMessageRequest, body)
        if problem is not None:
            return problem
        with self._lock:
            if token in self._used_reply_tokens:
                return _error(400, "Invalid reply token")
            self._used_reply_tokens.add(token)
        return Answer(200, {"sentMessages": _sent_messages(len(body["messages"]))})

    def _push(self, body: dict, retry_key: str | None) -> Answer:
        if not isinstance(body.get("to"), str) or not body["to"]:
            return _body_error("must be specified", "to")
        problem = _check_messages(body) or _model_problem(PushMessageRequest, body)
        if problem is not None:
            return problem
        if retry_key is not None and not _UUID_RE.match(retry_key):
            return _error(400, "The value of the X-Line-Retry-Key header is invalid")
        request_id = _new_request_id()
        sent = _sent_messages(len(body["messages"]))
        with self._lock:
            if retry_key is not None:
                accepted = self._accepted_retry_keys.get(retry_key.lower())
                if accepted is not None:
                    original_id, original_sent = accepted
                    return Answer(409, {"message": "The retry key is already accepted",
                                        "sentMessages": original_sent},
                                  {"x-line-accepted-request-id": original_id})
            refused = self._monthly_limit_reached()
            if refused is not None:
                return refused
            if retry_key is not None:
                self._accepted_retry_keys[retry_key.lower()] = (request_id, sent)
            self._quota_used += 1
        return Answer(200, {"sentMessages": sent}, {"x-line-request-id": request_id})

    def _loading(self, body: dict, _retry_key: str | None) -> Answer:
        if not isinstance(body.get("chatId"), str) or not body["chatId"]:
            return _body_error("must be specified", "chatId")
        seconds = body.get("loadingSeconds", 20)
        if seconds not in _LOADING_SECONDS:
            return _body_error("must be a multiple of 5 between 5 and 60", "loadingSeconds")
        problem = _model_problem(ShowLoadingAnimationRequest, body)
        if problem is not None:
            return problem
        return Answer(202, {})

    # -- rich menus (RICH_MENU_ROUTES) ------------------------------------------------------------
    def _rich_menu_route(self, method: str, path: str, body: Any) -> Answer:
        for route_method, pattern, name in RICH_MENU_ROUTES:
            match = pattern.fullmatch(path)
            if match and route_method == method:
                handler: Callable[..., Answer] = getattr(self, name)
                return handler(body, **match.groupdict())
        return _error(404, "Not found")

    @staticmethod
    def _rich_menu_refusal(body: Any) -> Answer | None:
        if not isinstance(body, dict):
            return _error(400, "The request body must be a JSON object")
        problems = rich_menu_problems(body)
        if problems:
            return _error(400, f"The request body has {len(problems)} error(s)",
                          [{"message": message, "property": prop} for prop, message in problems])
        return _model_problem(RichMenuRequest, body)

    def _rich_menu_validate(self, body: Any) -> Answer:
        return self._rich_menu_refusal(body) or Answer(200, {})

    def _rich_menu_create(self, body: Any) -> Answer:
        refusal = self._rich_menu_refusal(body)
        if refusal is not None:
            return refusal
        menu_id = "richmenu-" + secrets.token_hex(16)
        menu = {"richMenuId": menu_id, "size": body["size"], "selected": body["selected"],
                "name": body["name"], "chatBarText": body["chatBarText"], "areas": body["areas"]}
        with self._lock:
            self._rich_menus[menu_id] = menu
        return Answer(200, {"richMenuId": menu_id})

    def _rich_menu_list(self, _body: Any) -> Answer:
        with self._lock:
            return Answer(200, {"richmenus": list(self._rich_menus.values())})

    def _rich_menu_get(self, _body: Any, menu_id: str) -> Answer:
        with self._lock:
            menu = self._rich_menus.get(menu_id)
        return Answer(200, menu) if menu is not None else _error(404, "Not found")

    def _rich_menu_delete(self, _body: Any, menu_id: str) -> Answer:
        with self._lock:
            if self._rich_menus.pop(menu_id, None) is None:
                return _error(404, "Not found")
            self._rich_menu_images.pop(menu_id, None)
            if self._default_rich_menu == menu_id:
                self._default_rich_menu = None
        return Answer(200, {})

    def _rich_menu_upload(self, body: Any, menu_id: str) -> Answer:
        with self._lock:
            menu = self._rich_menus.get(menu_id)
            if menu is None:
                return _error(404, "Not found")
            if menu_id in self._rich_menu_images:
                return _error(400, "An image has already been uploaded to the richmenu")
        problem = _image_problem(body, menu["size"])
        if problem is not None:
            return problem
        with self._lock:
            if menu_id in self._rich_menu_images:
                return _error(400, "An image has already been uploaded to the richmenu")
            self._rich_menu_images[menu_id] = body
        return Answer(200, {})

    def _rich_menu_download(self, _body: Any, menu_id: str) -> Answer:
        with self._lock:
            image = self._rich_menu_images.get(menu_id)
        if image is None:
            return _error(404, "Not found")
        return Answer(200, image.summary(), raw=image.data, content_type=image.content_type)

    def _default_rich_menu_set(self, _body: Any, menu_id: str) -> Answer:
        with self._lock:
            if menu_id not in self._rich_menus:
                return _error(404, "Not found")
            if menu_id not in self._rich_menu_images:
                return Answer(400, {"message": "must upload richmenu image before applying it to user",
                                    "details": []})
            self._default_rich_menu = menu_id
        return Answer(200, {})

    def _default_rich_menu_get(self, _body: Any) -> Answer:
        with self._lock:
            menu_id = self._default_rich_menu
        return Answer(200, {"richMenuId": menu_id}) if menu_id else _error(404, "no default richmenu")

    def _default_rich_menu_cancel(self, _body: Any) -> Answer:
        with self._lock:
            self._default_rich_menu = None
        return Answer(200, {})

    @staticmethod
    def _profile(user_id: str) -> Answer:
        return Answer(200, {"displayName": "本機測試使用者", "userId": user_id, "language": "zh-TW"})

    def _control(self, method: str, path: str, query: dict[str, list[str]]) -> Answer:
        if method != "GET":
            return _error(405, "Method not allowed")
        if path == HEALTH_PATH:
            return Answer(200, {"ok": True})
        if path == CALLS_PATH:
            try:
                since = int(query.get("since", ["0"])[0])
            except ValueError:
                return _error(400, "since must be an integer")
            return Answer(200, self.calls(since))
        return _error(404, "Not found")

    def _check_auth(self, authorization: str | None) -> Answer | None:
        if self._access_token is None:
            return None
        if not authorization or not authorization.startswith("Bearer "):
            return _error(401, AUTH_MISSING)
        if not secrets.compare_digest(authorization[len("Bearer "):].encode(), self._access_token.encode()):
            return _error(401, AUTH_INVALID)
        return None

    def _take_fault(self, path: str) -> _Fault | None:
        with self._lock:
            fault = self._faults.get(path)
            if fault is None:
                return None
            fault.remaining -= 1
            if fault.remaining <= 0:
                del self._faults[path]
            return fault

    def _take_delay(self, path: str) -> float:
        with self._lock:
            pending = self._delays.get(path)
            return pending.pop(0) if pending else self._latency.get(path, 0.0)

    def _record(self, method: str, path: str, headers: dict[str, str], body: Any, answer: Answer) -> None:
        authorization = headers.get("authorization")
        recorded_headers = {
            "authorization": None if authorization is None else
            ("Bearer ***" if authorization.startswith("Bearer ") else "***"),
            "content-type": headers.get("content-type"),
            "x-line-retry-key": headers.get("x-line-retry-key"),
        }
        with self._changed:
            self._seq += 1
            call = {"seq": self._seq, "at": datetime.now(timezone.utc).isoformat(), "method": method,
                    "path": path, "headers": recorded_headers,
                    "body": body.summary() if isinstance(body, _Blob) else body, "status": answer.status,
                    "request_id": answer.headers.get("x-line-request-id"), "response": answer.body}
            self._calls.append(call)
            if self._record_path is not None:
                with self._record_path.open("a", encoding="utf-8") as sink:
                    sink.write(json.dumps(call, ensure_ascii=False, separators=(",", ":")) + "\n")
            self._changed.notify_all()


def _quiet_handle_error(handle_error: Callable[[Any, Any], None]) -> Callable[[Any, Any], None]:
    """The server's error hook, silent when a client went away first (it timed out, or was refused)."""

    def quiet(request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError)):
            return
        handle_error(request, client_address)

    return quiet


def _parse_json(raw_body: bytes) -> tuple[Any, bool]:
    """Return (parsed body or None, whether the body was present but not valid JSON)."""
    if not raw_body:
        return None, False
    try:
        return json.loads(raw_body.decode("utf-8")), False
    except (UnicodeDecodeError, json.JSONDecodeError):
        return None, True


def _make_handler(standin: LineStandin) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        server_version = "LineStandin/1"
        disable_nagle_algorithm = True  # headers and body are two writes; avoid a 40 ms stall

        def setup(self) -> None:
            super().setup()
            with standin._lock:
                standin._open_sockets.add(self.connection)

        def finish(self) -> None:
            with standin._lock:
                standin._open_sockets.discard(self.connection)
            try:
                super().finish()
            except OSError:
                pass

        def _serve(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            if length > MAX_BODY_BYTES:
                self._send(Answer(413, {"message": "Request entity too large"}), close=True)
                return
            raw_body = self.rfile.read(length) if length else b""
            headers = {k.lower(): v for k, v in self.headers.items()}
            self._send(standin.handle(self.command, self.path, headers, raw_body))

        def _send(self, answer: Answer, close: bool = False) -> None:
            payload = (answer.raw if answer.raw is not None
                       else json.dumps(answer.body, ensure_ascii=False).encode("utf-8"))
            self.send_response(answer.status)
            self.send_header("Content-Type", answer.content_type)
            self.send_header("Content-Length", str(len(payload)))
            for name, value in answer.headers.items():
                self.send_header(name, value)
            if close:
                self.send_header("Connection", "close")
                self.close_connection = True
            self.end_headers()
            self.wfile.write(payload)

        do_GET = do_POST = do_PUT = do_DELETE = _serve

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (stdlib signature)
            return  # calls are recorded as JSON; keep stderr quiet

    return Handler


def main(argv: list[str] | None = None) -> int:
    """Run the stand-in until SIGINT/SIGTERM; print ``{"url": ...}`` on stdout when ready."""
    parser = argparse.ArgumentParser(prog="python -m tools.line_standin", description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8090, help="TCP port; 0 picks a free one")
    parser.add_argument("--record", type=Path, default=None, help="append every call as JSON lines here")
    parser.add_argument("--quota-limit", type=int, default=None, help="this month's push limit (default: none)")
    parser.add_argument("--quota-used", type=int, default=0, help="push messages already used this month")
    parser.add_argument("--access-token-env", default=None, metavar="VAR",
                        help="require 'Bearer $VAR' (the token is read from this environment variable, "
                             "never from the command line)")
    args = parser.parse_args(argv)
    token = None
    if args.access_token_env:
        token = os.environ.get(args.access_token_env)
        if not token:
            print(f"line_standin: {args.access_token_env} is not set", file=sys.stderr)
            return 2
    stopped = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: stopped.set())
    with LineStandin(args.host, args.port, args.record, token) as standin:
        standin.set_quota(args.quota_limit, args.quota_used)
        print(json.dumps({"url": standin.url, "record": str(args.record) if args.record else None}), flush=True)
        stopped.wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())
