"""The chat page's server: LOCAL's LINE chats in a browser, on loopback only.

It stands where the LINE app stands. What the page asks to send (a text, a tapped button's action, a
location) becomes the webhook event a phone would cause, in a body signed with the channel secret
(``tools.chat.send_event``, ``tools.chat.action_event``, ``tools.line_events``: the terminal chat's own
code). What LOCAL sent back is read from the LINE stand-in's record (``GET /__calls``, as the terminal
chat reads it) and kept as one timeline of the chats the page shows: each resident's one-to-one chat
and the simulated staff group. The rich menu is read through LINE's own endpoints on the stand-in
(``GET /v2/bot/user/{userId}/richmenu``, then the default ``GET /v2/bot/user/all/richmenu``, ``GET
/v2/bot/richmenu/{id}``, and the image from ``GET /v2/bot/richmenu/{id}/content`` on the api-data host).

Endpoints (JSON unless said):

* ``GET /`` the page; ``GET /static/<file>`` its CSS and JS; ``GET /api/config`` the chats, residents,
  township points; ``GET /api/timeline?since=N`` the timeline entries after ``N``;
  ``GET /api/richmenu?user=U…`` the rich menu that user sees (``{"richmenu": null}`` when none);
  ``GET /api/richmenu/image?id=richmenu-…`` its image.
* ``POST /api/send`` ``{"chat": <chat id>, "kind": "text"|"action"|"location"|"follow", …}``; a location
  is ``{"latitude", "longitude", "title"?}`` and the server labels it (``SharedPoint``): a point outside
  the county is never given a Changhua title or address.

Security: it binds 127.0.0.1 only; a request whose ``Host`` is not this server's loopback address is
refused (DNS rebinding), and so is a cross-site one (``Origin`` / ``Sec-Fetch-Site``); a POST must be
same-origin JSON; every input is checked (bad JSON or a bad field → 400); the only URLs it fetches
are the webhook and the stand-in it was started with, never one the page names.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import signal
import sys
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, quote, urlsplit

import requests

from shared import areas, geo
from shared.line import limits
from tools import chat, line_events

HERE = Path(__file__).resolve().parent
STATIC = {"chat.js": "text/javascript; charset=utf-8", "chat.css": "text/css; charset=utf-8"}
HOST = "127.0.0.1"
DEFAULT_PORT = 8092
MAX_BODY_BYTES = 64 * 1024
MAX_TEXT = limits.TEXT  # LINE's text message limit, in UTF-16 code units (shared/line/limits.py)
MAX_FIELD = 300  # a postback's data, displayText, a message action's text (UTF-16 code units)
HTTP_TIMEOUT_SECONDS = 5.0
RICHMENU_ID_RE = re.compile(r"^richmenu-[0-9A-Za-z_-]{1,64}$")
USER_ALL_RICHMENU = "/v2/bot/user/all/richmenu"
IMAGE_TYPES = ("image/png", "image/jpeg")
MAX_IMAGE_BYTES = 1024 * 1024  # LINE's own limit for a rich menu image
SECURITY_HEADERS = {
    "Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
                               "connect-src 'self'; form-action 'none'; frame-ancestors 'none'; base-uri 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
    "Cross-Origin-Resource-Policy": "same-origin",
}


def _user(seed: str) -> str:
    return "U" + hashlib.sha256(seed.encode()).hexdigest()[:32]


#: The residents the page can act as: 住民A is the terminal chat's default user.
RESIDENTS = ({"id": chat.DEFAULT_USER_ID, "name": "住民A"}, {"id": _user("local-dev-user-b"), "name": "住民B"},
             {"id": _user("local-dev-user-c"), "name": "住民C"})
STAFF = {"id": chat.DEFAULT_STAFF_ID, "name": "工作人員"}


#: A shared point this close (metres) to a township's point on the page's map is named by that township.
TOWNSHIP_POINT_M = 1_500.0
#: The title of a shared point outside the county when the person gave none (or one naming a Changhua place).
OUTSIDE_TITLE = "彰化縣外的位置"
OWN_TITLE = "我的位置"


def _townships() -> list[dict]:
    return json.loads((HERE / "townships.json").read_text(encoding="utf-8"))["townships"]


@dataclass(frozen=True)
class SharedPoint:
    """How the page labels a location it sends: never a Changhua place for a point outside the county.

    Attributes:
        title: the location message's title (the person's own, or ``OWN_TITLE`` / ``OUTSIDE_TITLE``).
        address: ``彰化縣<township>`` only for a township's own point on the map (within
            ``TOWNSHIP_POINT_M``), else None: the page has no geocoder, and LINE's address is optional.
        in_county: ``shared.geo.in_county`` (Changhua's outline, with its border margin).
    """

    title: str
    address: str | None
    in_county: bool

    @classmethod
    def of(cls, latitude: float, longitude: float, title: str) -> SharedPoint:
        """The label of the point (WGS 84 degrees) the person shared, with the title they typed ("" for none)."""
        point = geo.Point(latitude, longitude)
        title = title.strip()
        if not geo.in_county(point):
            names_changhua = "彰化" in title or bool(areas.townships_in(title))
            return cls(OUTSIDE_TITLE if not title or names_changhua else title, None, False)
        address = next((f"彰化縣{town['name']}" for town in _townships() if town["name"] == title
                        and geo.distance_m(point, geo.Point(town["latitude"], town["longitude"])) <= TOWNSHIP_POINT_M),
                       None)
        return cls(title or OWN_TITLE, address, True)


class BadRequest(ValueError):
    """An input the page server refuses (HTTP 400), with the reason."""


@dataclass(frozen=True)
class Upstream:
    """Where the page sends and reads: the webhook, the LINE stand-in (and its api-data host), the
    secret that signs, the token that reads the rich menu, the simulated staff group."""

    webhook_url: str
    standin_url: str
    secret: str
    access_token: str
    staff_group_id: str | None = None
    data_url: str | None = None  # LINE's api-data host (rich menu images); default: the stand-in


def _text(body: dict, key: str, limit: int, *, required: bool = True) -> str:
    """``body[key]``, a string of at most ``limit`` characters as LINE counts them (UTF-16 code units,
    ``shared.line.limits.units``): a text LINE would refuse is never sent.

    Raises:
        BadRequest: missing (when required), blank, not a string, or too long (saying its length).
    """
    value = body.get(key)
    if value is None and not required:
        return ""
    if not isinstance(value, str) or (required and not value.strip()):
        raise BadRequest(f"{key} must be a string of 1 to {limit} characters")
    if limits.units(value) > limit:
        raise BadRequest(f"{key} is {limits.units(value)} characters as LINE counts them (UTF-16 code units); "
                         f"LINE takes at most {limit}")
    return value


def _number(body: dict, key: str, low: float, high: float) -> float:
    value = body.get(key)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not low <= value <= high:
        raise BadRequest(f"{key} must be a number from {low} to {high}")
    return float(value)


def checked_action(action: Any) -> dict:
    """A tapped action the page may send: a postback (``data``, optional ``displayText``), a message
    (``text``) or a date/time picker (``data``, ``mode``); only those fields are kept.

    Raises:
        BadRequest: any other shape.
    """
    if not isinstance(action, dict):
        raise BadRequest("action must be an object")
    kind = action.get("type")
    if kind == "postback":
        kept = {"type": kind, "data": _text(action, "data", MAX_FIELD, required=False)}
        if action.get("displayText") is not None:
            kept["displayText"] = _text(action, "displayText", MAX_FIELD)
        return kept
    if kind == "message":
        return {"type": kind, "text": _text(action, "text", MAX_FIELD)}
    if kind == "datetimepicker":
        mode = action.get("mode", "datetime")
        if mode not in ("date", "time", "datetime"):
            raise BadRequest("mode must be date, time or datetime")
        return {"type": kind, "data": _text(action, "data", MAX_FIELD, required=False), "mode": mode}
    raise BadRequest("action.type must be postback, message or datetimepicker")


class ChatPage:
    """The page's state: the chats' timeline, and what a send does. Thread-safe."""

    def __init__(self, upstream: Upstream) -> None:
        self.upstream = upstream
        self._lock = threading.Lock()
        self._sync_lock = threading.Lock()
        self._timeline: list[dict] = []
        self._token_chat: dict[str, str] = {}
        residents = {r["id"] for r in RESIDENTS}
        self._chats = residents | ({upstream.staff_group_id} if upstream.staff_group_id else set())
        self._seq: int | None = None  # the stand-in's last call read; None: not read yet
        self._poller = chat.loopback_session()  # one kept-alive connection for polling (under _sync_lock)

    # -- the timeline ---------------------------------------------------------------------------
    def config(self) -> dict:
        """What the page needs to draw itself."""
        townships = _townships()
        return {"residents": list(RESIDENTS), "staff": STAFF, "staff_group": self.upstream.staff_group_id,
                "townships": townships}

    def _add(self, chat_id: str, entry: dict) -> None:
        with self._lock:
            self._timeline.append({"id": len(self._timeline) + 1, "chat": chat_id,
                                   "at_ms": int(time.time() * 1000), **entry})

    def timeline(self, since: int) -> dict:
        """The entries after ``since`` (read the stand-in's new calls first)."""
        self.sync()
        with self._lock:
            return {"entries": self._timeline[since:], "last": len(self._timeline)}

    def sync(self) -> None:
        """Turn the stand-in's new calls for the page's chats into timeline entries."""
        with self._sync_lock:
            fresh = chat.fetch_calls(self.upstream.standin_url, self._seq or 0, session=self._poller)
            if self._seq is None:  # the first read: start after what another chat left
                self._seq = max((c["seq"] for c in fresh), default=0)
                return
            for call in fresh:
                self._seq = max(self._seq, call["seq"])
                self._take(call)

    def _take(self, call: dict) -> None:
        body = call.get("body") if isinstance(call.get("body"), dict) else {}
        path = call.get("path")
        if path == chat.LOADING_PATH:
            if body.get("chatId") in self._chats and call.get("status") == 202:
                self._add(body["chatId"], {"from": "loading", "seconds": body.get("loadingSeconds", 20)})
            return
        if path == chat.REPLY_PATH:
            target = self._token_chat.get(str(body.get("replyToken")))
        elif path == chat.PUSH_PATH:
            target = body.get("to") if body.get("to") in self._chats else None
        else:
            return
        if target is None:
            return
        kind = "reply" if path == chat.REPLY_PATH else "push"
        if call.get("status") != 200:
            reason = (call.get("response") or {}).get("message", "")
            self._add(target, {"from": "system", "text": f"LINE 拒絕了一則{'回覆' if kind == 'reply' else '推播'}："
                                                         f"{call.get('status')} {reason}".strip()})
            return
        self._add(target, {"from": "bot", "kind": kind, "messages": body.get("messages") or []})

    # -- sending ----------------------------------------------------------------------------------
    def send(self, request: Any) -> dict:
        """Send what the page asked for, as a phone would, and answer what the webhook said.

        Raises:
            BadRequest: the request is not one the page sends.
        """
        if not isinstance(request, dict):
            raise BadRequest("the body must be a JSON object")
        chat_id = request.get("chat")
        if chat_id not in self._chats:
            raise BadRequest("chat must be one of the page's chats")
        in_group = chat_id == self.upstream.staff_group_id
        sender = STAFF["id"] if in_group else str(chat_id)
        event, shown = self._event(request, sender, in_group)
        if shown is not None:
            self._add(chat_id, {"from": "user", "who": STAFF["name"] if in_group else self._name(sender), **shown})
        if in_group and self.upstream.staff_group_id:
            event = chat.in_group(event, sender, self.upstream.staff_group_id)
        token = event.get("replyToken")
        if token:
            self._token_chat[token] = str(chat_id)
        self.sync()  # what came before this event is shown before its answer
        status, error, elapsed, outcomes = chat.send_event(self.upstream.webhook_url, self.upstream.secret, event)
        if error is not None or status != 200:
            self._add(str(chat_id), {"from": "system", "text": f"webhook 沒有收下這個事件（{status or error}）"})
        self.sync()
        return {"status": status, "outcomes": outcomes, "elapsed_s": round(elapsed, 3)}

    @staticmethod
    def _name(user_id: str) -> str:
        return next((r["name"] for r in RESIDENTS if r["id"] == user_id), user_id)

    @staticmethod
    def _event(request: dict, sender: str, in_group: bool) -> tuple[dict, dict | None]:
        """The webhook event and what the sender's own bubble shows (None: nothing, as LINE shows
        nothing for a postback without displayText)."""
        kind = request.get("kind")
        if kind == "text":
            text = _text(request, "text", MAX_TEXT)
            return line_events.text_event(text, user_id=sender), {"text": text}
        if kind == "action":
            action = checked_action(request.get("action"))
            event = chat.action_event(action, sender)
            if event is None:  # checked_action keeps only kinds that send an event
                raise BadRequest("this action sends no event")
            shown = action.get("displayText") or (action["text"] if action["type"] == "message" else None)
            return event, ({"text": shown} if shown else None)
        if kind == "location":
            if in_group:
                raise BadRequest("the page shares a location from a one-to-one chat only")
            latitude, longitude = _number(request, "latitude", -90, 90), _number(request, "longitude", -180, 180)
            label = SharedPoint.of(latitude, longitude, _text(request, "title", 100, required=False))
            event = line_events.location_event(latitude, longitude, user_id=sender, title=label.title,
                                               address=label.address)
            return event, {"location": {"type": "location", "title": label.title, "address": label.address or "",
                                        "latitude": latitude, "longitude": longitude,
                                        "in_county": label.in_county}}
        if kind == "follow":
            if in_group:
                raise BadRequest("a follow comes from a one-to-one chat")
            return line_events.follow_event(user_id=sender), None
        raise BadRequest("kind must be text, action, location or follow")

    # -- the rich menu ------------------------------------------------------------------------------
    def _line_get(self, base: str, path: str) -> requests.Response:
        with chat.loopback_session() as session:  # loopback only: never a proxy from the environment
            return session.get(base.rstrip("/") + path, timeout=HTTP_TIMEOUT_SECONDS,
                               headers={"Authorization": f"Bearer {self.upstream.access_token}"})

    def richmenu(self, user_id: Any) -> dict:
        """The rich menu ``user_id`` sees, as LINE shows it: the one linked to the user, else the
        default; ``{"richmenu": null, "reason": …}`` when there is none (or the stand-in has no
        rich menu endpoints)."""
        if user_id not in {r["id"] for r in RESIDENTS}:
            raise BadRequest("user must be one of the page's residents")
        try:
            menu_id = None
            for path in (f"/v2/bot/user/{user_id}/richmenu", USER_ALL_RICHMENU):
                answer = self._line_get(self.upstream.standin_url, path)
                if answer.status_code == 200:
                    menu_id = answer.json().get("richMenuId")
                    break
            if not isinstance(menu_id, str) or not RICHMENU_ID_RE.match(menu_id):
                return {"richmenu": None, "reason": "no rich menu is set"}
            answer = self._line_get(self.upstream.standin_url, f"/v2/bot/richmenu/{quote(menu_id)}")
            if answer.status_code != 200:
                return {"richmenu": None, "reason": f"GET rich menu: {answer.status_code}"}
            menu = answer.json()
        except (requests.RequestException, ValueError, AttributeError) as exc:
            return {"richmenu": None, "reason": f"the LINE stand-in did not answer: {type(exc).__name__}"}
        if not isinstance(menu, dict):
            return {"richmenu": None, "reason": "the rich menu is not an object"}
        return {"richmenu": {**menu, "richMenuId": menu_id},
                "image": f"/api/richmenu/image?id={quote(menu_id)}"}

    def richmenu_image(self, menu_id: Any) -> tuple[bytes, str] | None:
        """The rich menu image's bytes and type from the api-data host, or None (none, or not an image)."""
        if not isinstance(menu_id, str) or not RICHMENU_ID_RE.match(menu_id):
            raise BadRequest("id must be a rich menu id")
        try:
            answer = self._line_get(self.upstream.data_url or self.upstream.standin_url,
                                    f"/v2/bot/richmenu/{quote(menu_id)}/content")
        except requests.RequestException:
            return None
        kind = answer.headers.get("Content-Type", "").split(";")[0].strip().lower()
        if answer.status_code != 200 or kind not in IMAGE_TYPES or len(answer.content) > MAX_IMAGE_BYTES:
            return None
        return answer.content, kind


# ------------------------------------------------------------------------------------ HTTP
def _make_handler(page: ChatPage) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        server_version = "LocalChatPage/1"

        def _origins(self) -> set[str]:
            port = self.server.server_address[1]
            return {f"127.0.0.1:{port}", f"localhost:{port}"}

        def _refusal(self) -> str | None:
            """Why this request is not the page's own (None: it is)."""
            if self.headers.get("Host", "") not in self._origins():
                return "unexpected Host"
            origin = self.headers.get("Origin")
            if origin is not None and origin not in {f"http://{o}" for o in self._origins()}:
                return "cross-origin"
            if self.headers.get("Sec-Fetch-Site", "same-origin") not in ("same-origin", "none"):
                return "cross-site"
            if self.command == "POST" and origin is None and self.headers.get("Sec-Fetch-Site") != "same-origin":
                return "a POST must come from the page"
            return None

        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            refusal = self._refusal()
            if refusal:
                self._json(403, {"error": refusal})
                return
            split = urlsplit(self.path)
            query = parse_qs(split.query)
            try:
                self._get(split.path, query)
            except BadRequest as exc:
                self._json(400, {"error": str(exc)})
            except OSError as exc:  # the stand-in did not answer
                self._json(502, {"error": f"the LINE stand-in did not answer: {type(exc).__name__}"})

        def _get(self, path: str, query: dict[str, list[str]]) -> None:
            if path in ("/", "/index.html"):
                self._file(HERE / "static" / "index.html", "text/html; charset=utf-8")
            elif path.startswith("/static/") and path[len("/static/"):] in STATIC:
                name = path[len("/static/"):]
                self._file(HERE / "static" / name, STATIC[name])
            elif path == "/api/config":
                self._json(200, page.config())
            elif path == "/api/timeline":
                raw = (query.get("since") or ["0"])[0]
                if not raw.isdigit():
                    raise BadRequest("since must be a whole number")
                self._json(200, page.timeline(int(raw)))
            elif path == "/api/richmenu":
                self._json(200, page.richmenu((query.get("user") or [""])[0]))
            elif path == "/api/richmenu/image":
                image = page.richmenu_image((query.get("id") or [""])[0])
                if image is None:
                    self._json(404, {"error": "no image"})
                else:
                    self._send(200, image[0], image[1])
            elif path == "/favicon.ico":
                self._send(204, b"", "text/plain")
            else:
                self._json(404, {"error": "not found"})

        def do_POST(self) -> None:  # noqa: N802
            refusal = self._refusal()
            if refusal:
                self.close_connection = True
                self._json(403, {"error": refusal})
                return
            if urlsplit(self.path).path != "/api/send":
                self.close_connection = True
                self._json(404, {"error": "not found"})
                return
            if self.headers.get("Content-Type", "").split(";")[0].strip().lower() != "application/json":
                self.close_connection = True  # the body is not read
                self._json(415, {"error": "the body must be application/json"})
                return
            raw_length = self.headers.get("Content-Length", "")
            if not raw_length.isdigit() or int(raw_length) > MAX_BODY_BYTES:
                self.close_connection = True
                self._json(413 if raw_length.isdigit() else 411, {"error": "body too large or without a length"})
                return
            raw = self.rfile.read(int(raw_length))
            try:
                request = json.loads(raw.decode("utf-8"))
                self._json(200, page.send(request))
            except (UnicodeDecodeError, json.JSONDecodeError):
                self._json(400, {"error": "the body is not JSON"})
            except BadRequest as exc:
                self._json(400, {"error": str(exc)})
            except OSError as exc:
                self._json(502, {"error": f"the LINE stand-in did not answer: {type(exc).__name__}"})

        def do_PUT(self) -> None:  # noqa: N802
            self._json(405, {"error": "method not allowed"})

        do_DELETE = do_PATCH = do_PUT

        def _file(self, path: Path, kind: str) -> None:
            self._send(200, path.read_bytes(), kind)

        def _json(self, status: int, body: Any) -> None:
            self._send(status, json.dumps(body, ensure_ascii=False).encode("utf-8"), "application/json; charset=utf-8")

        def _send(self, status: int, payload: bytes, kind: str) -> None:
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(payload)))
            for name, value in SECURITY_HEADERS.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            return

    return Handler


class ChatPageServer:
    """The page's HTTP server on 127.0.0.1 (never another address), serving from a daemon thread."""

    def __init__(self, page: ChatPage, port: int = 0) -> None:
        self.page = page
        self._server = ThreadingHTTPServer((HOST, port), _make_handler(page))
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="chatpage", daemon=True,
                                        kwargs={"poll_interval": 0.02})  # stop() waits up to this long

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT/``."""
        return f"http://{HOST}:{self._server.server_address[1]}/"

    def __enter__(self) -> ChatPageServer:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._server.shutdown()
        self._server.server_close()


def main(argv: list[str] | None = None) -> int:
    """``python -m tools.chatpage``: serve the page until SIGINT/SIGTERM. The channel secret and the
    access token come from the environment (LINE_CHANNEL_SECRET, LINE_CHANNEL_ACCESS_TOKEN), never
    from the command line."""
    parser = argparse.ArgumentParser(prog="python -m tools.chatpage", description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help="TCP port on 127.0.0.1; 0 picks one")
    parser.add_argument("--webhook", required=True, help="the webhook function's URL")
    parser.add_argument("--standin", required=True, help="the LINE stand-in's base URL")
    parser.add_argument("--data-url", default=None, help="LINE's api-data host (default: the stand-in)")
    parser.add_argument("--staff-group", default=os.environ.get("LOCAL_STAFF_GROUP_ID"),
                        help="the simulated staff group id (default: $LOCAL_STAFF_GROUP_ID)")
    args = parser.parse_args(argv)
    secret, token = os.environ.get("LINE_CHANNEL_SECRET"), os.environ.get("LINE_CHANNEL_ACCESS_TOKEN")
    if not secret or not token:
        print("chatpage: LINE_CHANNEL_SECRET and LINE_CHANNEL_ACCESS_TOKEN must be set", file=sys.stderr)
        return 2
    stopped = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: stopped.set())
    page = ChatPage(Upstream(args.webhook, args.standin, secret, token, args.staff_group or None, args.data_url))
    with ChatPageServer(page, args.port) as server:
        print(json.dumps({"url": server.url}), flush=True)
        stopped.wait()
    return 0
