"""Chat with the local LOCAL functions as a LINE user, from a terminal or a script.

Each line you type becomes a LINE webhook body in LINE's own format (compact
UTF-8 JSON), signed over its exact bytes with the channel secret and POSTed to
the webhook function. The replies and pushes the bot sends are read back from
the LINE stand-in (``tools.line_standin``, ``GET /__calls``) and rendered for a
person: text wrapped, Flex and template cards walked in order, buttons and quick
replies numbered ``[n] 標籤``; typing a number taps it.

Interactive::

    python -m tools.chat --webhook http://127.0.0.1:8080/ --standin http://127.0.0.1:8090 \
        --secret local-dev-channel-secret

Commands: ``/follow``, ``/unfollow``, ``/sticker``, ``/location LAT,LNG`` (share a location, as LINE's
map does: the nearest shops only when the catalog has sourced positions; the shipped one has none, so the
reply names the townships that have shops), ``/user Uxxxx`` (or ``/user new``),
``/staff Uxxxx`` (act as that staff member in the simulated staff group; ``/staff`` alone: a
default staff member; ``/user`` returns to the one-to-one chat), ``/help``, ``/quit``.

Headless (``--headless``): one JSON object per stdin line —
``{"text": "..."}``, ``{"postback": "data"}``, ``{"tap": n}``, ``{"event": {...}}``,
``{"user": "U..."}`` or ``{"staff": "U..."}`` (``""``: the default staff member), each optionally with ``"wait_seconds"`` — and exactly one
JSON line per input on stdout::

    {"status": 200, "replies": [<recorded reply/push request bodies>],
     "choices": [{"n": 1, "label": "確認送出", "kind": "postback", "data": "..."}]}

(plus ``"error"`` when the input could not be sent). Each chat keeps its own buttons, as in LINE:
``choices`` and ``{"tap": n}`` are the current chat's (the user's one-to-one chat, or the staff group
after ``{"staff": …}``); buttons pushed to another chat in the same exchange (the staff group's card,
another user's notice) are listed apart as ``"other_choices": {"<chat id>": [...]}``, tappable after
switching to that chat. Logs go to stderr.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import secrets
import shutil
import sys
import time
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, TextIO

import requests

from tools import line_events

REPLY_PATH = "/v2/bot/message/reply"
PUSH_PATH = "/v2/bot/message/push"
LOADING_PATH = "/v2/bot/chat/loading/start"

#: Stable default user, so a consented preference survives restarts of ``make run``.
DEFAULT_USER_ID = "U" + hashlib.sha256(b"local-dev-user").hexdigest()[:32]
#: The bot's own user id as LINE puts it in ``destination``.
DEFAULT_DESTINATION = "U" + hashlib.sha256(b"local-dev-bot").hexdigest()[:32]
USER_ID_RE = re.compile(r"^U[0-9a-f]{32}$")
#: The staff member ``/staff`` acts as when no id is given.
DEFAULT_STAFF_ID = "U" + hashlib.sha256(b"local-dev-staff").hexdigest()[:32]

DEFAULT_WAIT_SECONDS = 8.0
GRACE_SECONDS = 0.5
POLL_INTERVAL_SECONDS = 0.1
HTTP_TIMEOUT_SECONDS = 10.0
WEBHOOK_BUDGET_SECONDS = 2.0  # LINE counts a slower answer as request_timeout

#: Message kinds whose webhook event carries a ``quoteToken`` (Messaging API, message event).
QUOTABLE_MESSAGE_TYPES = frozenset({"text", "sticker", "image", "video"})


def complete_event(event: dict, user_id: str = DEFAULT_USER_ID) -> dict:
    """Fill the common fields a script left out of a raw event (a copy; given fields win).

    Adds ``mode``, ``timestamp``, ``source`` (this user), ``webhookEventId``,
    ``deliveryContext`` and, except for unfollow/leave/unsend events, ``replyToken``; a follow
    event's ``follow``; a message's ``id`` and, for the kinds LINE quotes, ``quoteToken``. What only
    the sender can say (a text, a postback's data) is never made up: without it the webhook does not
    read the event, and ``headless_step`` says so. Source: the Messaging API reference, webhook
    event objects.
    """
    kind = str(event.get("type", "message"))
    now_ms = int(time.time() * 1000)
    base: dict[str, Any] = {"type": kind, "mode": "active", "timestamp": now_ms,
                            "source": {"type": "user", "userId": user_id},
                            "webhookEventId": line_events.new_webhook_event_id(now_ms),
                            "deliveryContext": {"isRedelivery": False}}
    if kind not in {"unfollow", "leave", "unsend"}:
        base["replyToken"] = line_events.new_reply_token()
    if kind == "follow":
        base["follow"] = {"isUnblocked": False}
    completed = {**base, **event}
    message = event.get("message")
    if kind == "message" and isinstance(message, dict):  # the ids LINE gives every message; never its text
        completed["message"] = {"id": line_events.new_message_id(),
                                **({"quoteToken": line_events.new_quote_token()}
                                   if message.get("type") in QUOTABLE_MESSAGE_TYPES else {}),
                                **message}
    return completed


# --------------------------------------------------------------------- rendering
@dataclass
class Choice:
    """A tappable item shown as ``[n] label``; ``action`` is the LINE action object."""

    n: int
    label: str
    action: dict

    @property
    def kind(self) -> str:
        """The action type: postback, message, uri, datetimepicker, ..."""
        return str(self.action.get("type", "unknown"))

    def to_json(self) -> dict:
        """The headless form: ``{"n", "label", "kind", "data"|"text"|"uri"}``."""
        out: dict[str, Any] = {"n": self.n, "label": self.label, "kind": self.kind}
        for key in ("data", "text", "uri"):
            if key in self.action:
                out[key] = self.action[key]
        return out


@dataclass
class Rendered:
    """Rendered text lines plus the choices they number."""

    lines: list[str] = field(default_factory=list)
    choices: list[Choice] = field(default_factory=list)
    #: ``ChatSession.present`` only: the buttons sent to other chats (another user, the staff group),
    #: by chat id, each list numbered from 1 and tappable from that chat.
    other_choices: dict[str, list[Choice]] = field(default_factory=dict)

    @property
    def text(self) -> str:
        """The lines joined with newlines."""
        return "\n".join(self.lines)


_TOKEN_RE = re.compile(
    r"\s+"
    r"|[^\s\u1100-\uffff\U00010000-\U0010ffff]+"  # a run of Latin/ASCII: keep words whole
    r"|.[\u0300-\u036f\ufe0e\ufe0f\U0001f3fb-\U0001f3ff]*"  # one wide char with its modifiers,
    r"(?:\u200d.[\ufe0e\ufe0f\U0001f3fb-\U0001f3ff]*)*"  # and any ZWJ-joined emoji
)


def display_width(text: str) -> int:
    """Terminal columns of ``text``: East Asian wide/fullwidth = 2, combining/ZWJ = 0."""
    width = 0
    for char in text:
        if unicodedata.combining(char) or char in "\u200d\ufe0e\ufe0f":
            continue
        width += 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1
    return width


def wrap_text(text: str, width: int) -> list[str]:
    """Wrap text to ``width`` terminal columns, CJK-aware; existing newlines are kept.

    Latin words are kept whole unless longer than a line; emoji sequences are never split.
    """
    lines: list[str] = []
    for paragraph in text.split("\n"):
        line, used = "", 0
        for token in _TOKEN_RE.findall(paragraph):
            token_width = display_width(token)
            if used + token_width > width and line.strip():
                lines.append(line.rstrip())
                line, used = "", 0
                if token.isspace():
                    continue
            while token_width > width:  # a word longer than a whole line
                cut = 1
                while display_width(token[:cut + 1]) <= width:
                    cut += 1
                lines.append(token[:cut])
                token, token_width = token[cut:], display_width(token[cut:])
            line, used = line + token, used + token_width
        lines.append(line.rstrip())
    return lines


class _Renderer:
    """Walks LINE message objects into lines, numbering every tappable action."""

    def __init__(self, width: int, start: int) -> None:
        self.width = width
        self.out = Rendered()
        self._next = start

    def choice(self, action: dict, fallback_label: str = "") -> str:
        label = (action.get("label") or action.get("displayText") or action.get("text")
                 or fallback_label or action.get("type", "?"))
        item = Choice(self._next, str(label), action)
        self._next += 1
        self.out.choices.append(item)
        return f"[{item.n}] {item.label}"

    def text(self, value: str, indent: str = "") -> None:
        self.out.lines.extend(indent + line for line in wrap_text(value, self.width - display_width(indent)))

    # messages ---------------------------------------------------------------
    def message(self, message: dict) -> None:
        kind = message.get("type")
        handler = getattr(self, f"_message_{kind}", None)
        if handler is None:
            self.out.lines.append(f"[{kind} 訊息] {message.get('altText', '')}".rstrip())
        else:
            handler(message)
        quick = (message.get("quickReply") or {}).get("items") or []
        if quick:
            self.out.lines.append("快速回覆：")
            self.out.lines.extend("  " + self.choice(item.get("action") or {}) for item in quick)

    def _message_text(self, message: dict) -> None:
        self.text(str(message.get("text", "")))

    _message_textV2 = _message_text

    def _message_sticker(self, message: dict) -> None:
        self.out.lines.append("[貼圖]")

    def _message_image(self, message: dict) -> None:
        self.out.lines.append(f"[圖片] {message.get('originalContentUrl', '')}".rstrip())

    def _message_video(self, message: dict) -> None:
        self.out.lines.append(f"[影片] {message.get('originalContentUrl', '')}".rstrip())

    def _message_audio(self, message: dict) -> None:
        self.out.lines.append("[語音]")

    def _message_location(self, message: dict) -> None:
        self.out.lines.append(f"[位置] {message.get('title', '')} · {message.get('address', '')}")

    def _message_imagemap(self, message: dict) -> None:
        self.out.lines.append(f"[圖片選單] {message.get('altText', '')}")
        for action in message.get("actions") or []:
            self.out.lines.append(self.choice(action, "圖片區塊"))

    def _message_template(self, message: dict) -> None:
        template = message.get("template") or {}
        columns = template.get("columns")
        if columns is None:
            self._template_column(template)
            return
        for index, column in enumerate(columns, 1):
            self.out.lines.append(self._separator(index, len(columns)))
            self._template_column(column)
            if "action" in column and "actions" not in column:  # image carousel
                self.out.lines.append(self.choice(column["action"]))

    def _template_column(self, column: dict) -> None:
        for key in ("title", "text"):
            if column.get(key):
                self.text(str(column[key]))
        for action in column.get("actions") or []:
            self.out.lines.append(self.choice(action))

    def _message_flex(self, message: dict) -> None:
        contents = message.get("contents") or {}
        bubbles = contents.get("contents", []) if contents.get("type") == "carousel" else [contents]
        for index, bubble in enumerate(bubbles, 1):
            self.out.lines.append(self._separator(index, len(bubbles)))
            for block in ("header", "hero", "body", "footer"):
                if isinstance(bubble.get(block), dict):
                    self.component(bubble[block])

    def _separator(self, index: int, total: int) -> str:
        label = f" 卡片 {index}/{total} " if total > 1 else ""
        return "──" + label + "─" * max(4, min(self.width, 40) - 2 - display_width(label))

    # flex components -----------------------------------------------------------
    def component(self, node: dict) -> None:
        kind = node.get("type")
        if kind == "box":
            self._box(node)
        elif kind == "text":
            value = node.get("text") or "".join(str(s.get("text", "")) for s in node.get("contents") or [])
            self.text(str(value))
        elif kind == "button":
            self.out.lines.append(self.choice(node.get("action") or {}))
            return
        elif kind == "video":
            self.out.lines.append("[影片]")
        # image, icon, separator, spacer, filler: nothing to read aloud
        if isinstance(node.get("action"), dict):
            self.out.lines.append(self.choice(node["action"], "點選" if kind != "image" else "圖片"))

    def _box(self, node: dict) -> None:
        children = [c for c in node.get("contents") or [] if isinstance(c, dict)]
        if node.get("layout") in ("horizontal", "baseline"):
            inner = _Renderer(10**6, self._next)  # one row: join the cells, wrap once
            for child in children:
                inner.component(child)
            self._next += len(inner.out.choices)
            self.out.choices.extend(inner.out.choices)
            if inner.out.choices:
                self.out.lines.extend(inner.out.lines)
            elif inner.out.lines:
                self.text("  ".join(line for line in inner.out.lines if line))
            return
        for child in children:
            self.component(child)


def _default_width() -> int:
    return max(20, min(shutil.get_terminal_size((80, 24)).columns - 4, 76))


def render(messages: list[dict], *, width: int | None = None, start: int = 1) -> Rendered:
    """Render LINE message objects for a person reading a terminal.

    Args:
        messages: message objects as sent to the reply/push API (text, flex, template, ...).
        width: wrap width in terminal columns; the terminal's width (at most 76) by default.
        start: the number given to the first tappable item.
    Returns:
        Lines (a blank line between messages) and the numbered choices: buttons,
        tappable Flex parts, template actions and quick replies, in reading order.
    """
    renderer = _Renderer(width or _default_width(), start)
    for index, message in enumerate(messages):
        if index:
            renderer.out.lines.append("")
        renderer.message(message)
    return renderer.out


def render_messages(messages: list[dict], width: int | None = None) -> str:
    """Render messages to text; tappable items appear as ``[n] 標籤`` numbered from 1."""
    return render(messages, width=width).text


# --------------------------------------------------------------------- transport
def loopback_session() -> requests.Session:
    """A requests session that never takes a proxy from the environment (every call is on loopback)."""
    session = requests.Session()
    session.trust_env = False
    return session


def post_webhook(url: str, body: bytes, signature: str,
                 timeout_s: float = HTTP_TIMEOUT_SECONDS) -> tuple[int | None, str | None, float, list[str]]:
    """POST a signed webhook body the way LINE does.

    Returns:
        (HTTP status or None, error text or None, elapsed seconds, what became of each event: the
        answer body's ``events`` list, e.g. ``["done"]``, or [] when there is none). Connection
        failures are returned, not raised.
    """
    headers = {"Content-Type": "application/json; charset=utf-8", "User-Agent": "LineBotWebhook/2.0",
               "X-Line-Signature": signature}
    started = time.monotonic()
    try:
        with loopback_session() as session:
            response = session.post(url, data=body, headers=headers, timeout=timeout_s)
        try:
            answer = response.json()
        except ValueError:
            answer = {}
        events = answer.get("events") if isinstance(answer, dict) else None
        outcomes = [str(e) for e in events] if isinstance(events, list) else []
        return response.status_code, None, time.monotonic() - started, outcomes
    except requests.RequestException as exc:
        return None, str(exc), time.monotonic() - started, []


def fetch_calls(standin_url: str, since_seq: int, timeout_s: float = HTTP_TIMEOUT_SECONDS,
                session: requests.Session | None = None) -> list[dict]:
    """Read the stand-in's recorded LINE calls with ``seq > since_seq``; ``session``: a kept-alive
    ``loopback_session()`` for a caller that polls (one connection instead of one per poll).

    Raises:
        OSError: the stand-in cannot be reached or answered an error (requests' ``RequestException``
            is an OSError).
    """
    url = f"{standin_url.rstrip('/')}/__calls?since={since_seq}"
    if session is not None:
        response = session.get(url, timeout=timeout_s)
    else:
        with loopback_session() as fresh:
            response = fresh.get(url, timeout=timeout_s)
    response.raise_for_status()
    return response.json()


def in_group(event: dict, user_id: str, group_id: str) -> dict:
    """``event`` as sent by ``user_id`` inside group ``group_id`` (a copy with the group's source)."""
    return {**event, "source": line_events.source_of(user_id, group_id=group_id).to_dict()}


def send_event(webhook_url: str, secret: str, event: dict, destination: str = DEFAULT_DESTINATION,
               ) -> tuple[int | None, str | None, float, list[str]]:
    """Send one event as LINE does: a webhook body of its own, signed over its exact bytes with the channel
    secret; a 503 (not taken yet, e.g. a cold store connection) is redelivered once, marked so.

    Returns:
        What ``post_webhook`` returns for the last delivery.
    """
    body = line_events.webhook_body([event], destination)
    status, error, elapsed, outcomes = post_webhook(webhook_url, body, line_events.sign(body, secret))
    if status == 503:
        body = line_events.webhook_body([{**event, "deliveryContext": {"isRedelivery": True}}], destination)
        status, error, elapsed, outcomes = post_webhook(webhook_url, body, line_events.sign(body, secret))
    return status, error, elapsed, outcomes


# ----------------------------------------------------------------------- session
#: The webhook's word for an event it did not read (shared.webhook.service.EventStatus) → what the
#: person who sent it is told: the bot says nothing to such an event, so silence would mislead.
UNREAD_OUTCOMES = {
    "unreadable": "the webhook could not read this event in LINE's format (see the Messaging API's webhook "
                  "event objects); nothing was stored and the bot sends no reply",
    "refused": "the event's ids are not in LINE's format (webhookEventId, replyToken); nothing was stored "
               "and the bot sends no reply",
}


@dataclass
class Exchange:
    """What one sent event produced: the webhook's answer and the LINE calls seen since."""

    status: int | None
    error: str | None = None
    elapsed_s: float = 0.0
    calls: list[dict] = field(default_factory=list)
    #: Why the webhook did not read the event (``UNREAD_OUTCOMES``), or None when it did.
    unread: str | None = None
    #: A text message said in the staff group: answered at once or not at all (docs/staff.md: only a
    #: card button's label or a recognized word gets a line; staff talk gets none), so not waited for.
    group_text: bool = False

    @property
    def delivered(self) -> list[dict]:
        """Replies and pushes LINE accepted (status 200), oldest first."""
        return [c for c in self.calls if c["path"] in (REPLY_PATH, PUSH_PATH) and c["status"] == 200]


def _nothing_more_coming(exchange: Exchange, token: str | None, outcomes: list[str]) -> bool:
    """True when no answer (or no more of it) is coming for a sent event: the webhook refused it or
    did not answer, it had no reply token, it was ignored or left unread, or it was plain text in the
    staff group (the bot answers only a card button's label there)."""
    refused = exchange.status is None or exchange.status >= 300
    return refused or not token or outcomes[:1] == ["ignored"] or bool(exchange.unread) or exchange.group_text


class ChatSession:
    """One person chatting as a LINE user: builds, signs and sends events, reads answers.

    Args:
        webhook_url: the webhook function's URL.
        secret: the channel secret used to sign bodies.
        user_id: the LINE user to act as ("U" + 32 hex).
        standin_url: the LINE stand-in's base URL; None → answers cannot be read.
        destination: the bot's user id for the body's ``destination``.
        wait_s: how long to wait for a reply after each event, in seconds.
        staff_group_id: the simulated staff group (``LOCAL_STAFF_GROUP_ID``); its pushes are shown,
            and ``act_as_staff`` sends events from it.
    """

    def __init__(self, webhook_url: str, secret: str, user_id: str = DEFAULT_USER_ID,
                 standin_url: str | None = None, destination: str = DEFAULT_DESTINATION,
                 wait_s: float = DEFAULT_WAIT_SECONDS, staff_group_id: str | None = None) -> None:
        self.webhook_url = webhook_url
        self.staff_group_id = staff_group_id
        self.in_staff_group = False
        self.secret = secret
        self.user_id = user_id
        self.resident_id = user_id  # the one-to-one chat's user, kept while acting as staff
        self.standin_url = standin_url
        self.destination = destination
        self.wait_s = wait_s
        self._choices: dict[str, list[Choice]] = {}  # each chat's last buttons (a user id or the group id)
        self._token_chat: dict[str, str] = {}  # reply token → the chat its event came from
        self._users = {user_id}
        self._reply_tokens: set[str] = set()
        self._last_seq = 0
        if standin_url:
            seen = fetch_calls(standin_url, 0)  # start after whatever an earlier session left
            self._last_seq = max((c["seq"] for c in seen), default=0)

    def switch_user(self, user_id: str) -> None:
        """Act as another LINE user, in a one-to-one chat, from now on."""
        self.user_id = self.resident_id = user_id
        self._users.add(user_id)
        self.in_staff_group = False

    def act_as_staff(self, user_id: str) -> None:
        """Act as ``user_id`` inside the simulated staff group from now on.

        Raises:
            ValueError: no staff group is configured.
        """
        if not self.staff_group_id:
            raise ValueError("no staff group configured (LOCAL_STAFF_GROUP_ID)")
        self.user_id = user_id
        self.in_staff_group = True

    @property
    def chat_id(self) -> str:
        """The chat the session speaks in now: the staff group (after ``act_as_staff``) or the user's
        one-to-one chat."""
        return self.staff_group_id if self.in_staff_group and self.staff_group_id else self.user_id

    @property
    def choices(self) -> list[Choice]:
        """The buttons a tap acts on: the current chat's last answer that had any (never
        another user's answer, nor the staff group's card while chatting as the resident)."""
        return self._choices.get(self.chat_id, [])

    def poll(self) -> list[dict]:
        """Return new recorded LINE calls addressed to this session (replies to its
        tokens, pushes and loading animations for its users); [] without a stand-in."""
        if not self.standin_url:
            return []
        fresh = fetch_calls(self.standin_url, self._last_seq)
        if fresh:
            self._last_seq = max(c["seq"] for c in fresh)
        return [c for c in fresh if self._is_ours(c)]

    def _is_ours(self, call: dict) -> bool:
        body = call.get("body") if isinstance(call.get("body"), dict) else {}
        if call["path"] == REPLY_PATH:
            return body.get("replyToken") in self._reply_tokens
        if call["path"] == PUSH_PATH:
            to = body.get("to")
            return to in self._users or (bool(self.staff_group_id) and to == self.staff_group_id)
        if call["path"] == LOADING_PATH:
            return body.get("chatId") in self._users
        return False

    def send(self, event: dict, wait_s: float | None = None) -> Exchange:
        """Send one event and collect what the bot sends back.

        Waits up to ``wait_s`` (default: the session's) for a reply to this event's
        token or a push to the user, then ``GRACE_SECONDS`` more for follow-ups.
        Calls that arrived before sending (late pushes) are included first.
        """
        pending = self.poll()
        if self.in_staff_group and self.staff_group_id:  # the event comes from the staff group
            event = in_group(event, self.user_id, self.staff_group_id)
        token = event.get("replyToken")
        if token:
            self._reply_tokens.add(token)
            self._token_chat[token] = self.chat_id
        status, error, elapsed, outcomes = send_event(self.webhook_url, self.secret, event, self.destination)
        exchange = Exchange(status, error, elapsed, pending, unread=UNREAD_OUTCOMES.get(outcomes[0]) if outcomes else None,
                            group_text=self.in_staff_group and bool(self.staff_group_id)
                            and (event.get("message") or {}).get("type") == "text")
        if not self.standin_url:
            return exchange
        wait = self.wait_s if wait_s is None else wait_s
        if _nothing_more_coming(exchange, token, outcomes):
            wait = min(wait, GRACE_SECONDS)
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            fresh = self.poll()
            exchange.calls.extend(fresh)
            if any(self._answers(c, token) for c in fresh):
                deadline = min(deadline, time.monotonic() + GRACE_SECONDS)
            time.sleep(POLL_INTERVAL_SECONDS)
        exchange.calls.extend(self.poll())
        return exchange

    def _answers(self, call: dict, token: str | None) -> bool:
        body = call.get("body") or {}
        return (call["path"] == REPLY_PATH and body.get("replyToken") == token) or call["path"] == PUSH_PATH

    def present(self, calls: list[dict], width: int | None = None) -> Rendered:
        """Render delivered messages (with a header per reply/push) and notes on the rest.

        Each chat keeps its own buttons, as in LINE: a reply belongs to the chat its event came from,
        a push to the chat it is sent ``to``. The buttons shown for a chat become that chat's tappable
        ones, numbered from 1; a batch without buttons for a chat keeps its previous ones (older
        buttons stay tappable in LINE too). ``Rendered.choices`` are the current chat's,
        ``Rendered.other_choices`` the other chats'.
        """
        out = Rendered()
        batch: dict[str, list[Choice]] = {}
        for call in calls:
            note = _undelivered_note(call)
            if note is not None:
                out.lines.append(note)
                continue
            self._present_delivered(call, out, batch, width)
        for chat, choices in batch.items():
            if choices:
                self._choices[chat] = choices
        out.choices = batch.get(self.chat_id, [])
        out.other_choices = {chat: choices for chat, choices in batch.items() if choices and chat != self.chat_id}
        return out

    def _present_delivered(self, call: dict, out: Rendered, batch: dict[str, list[Choice]],
                           width: int | None) -> None:
        """Append one delivered reply/push to ``out.lines``: a header naming who it went to (when not
        the current chat), its messages indented, and, for buttons sent to another chat, how to
        reach them. Its buttons are added to its chat's list in ``batch`` (chat id → choices),
        numbered on from those of earlier calls."""
        body = call.get("body") or {}
        to = body.get("to")
        chat = to or self._token_chat.get(body.get("replyToken") or "", self.chat_id)
        suffix = "（給工作人員群組）" if to and to == self.staff_group_id else (
            f"（給 {to}）" if to and to != self.chat_id else "")
        out.lines.append(f"LOCAL {_kind_zh(call)}{suffix}：")
        mine = batch.setdefault(chat, [])
        part = render(body.get("messages") or [], width=width, start=len(mine) + 1)
        out.lines.extend("  " + line if line else "" for line in part.lines)
        mine.extend(part.choices)
        if part.choices and chat != self.chat_id:
            where = "/staff" if chat == self.staff_group_id else f"/user {chat}"
            out.lines.append(f"  （這些按鈕在另一個聊天室：先輸入 {where} 再點）")

    def event_for(self, choice: Choice) -> dict | None:
        """Turn tapping a choice into the event LINE would send; None when no event
        results (uri, clipboard, camera, ... — the caller shows what it would do)."""
        return action_event(choice.action, self.user_id, choice.label)


def action_event(action: dict, user_id: str, label: str = "") -> dict | None:
    """The event LINE sends when ``user_id`` taps a button or quick reply holding ``action``: a postback
    (a date/time picker's with today's value), or a text message (a message action's ``text``, else
    ``label``); None for actions that send no event (uri, clipboard, camera, location …: the caller
    shows or asks what it would do). Shared by the terminal chat and the chat page
    (``tools/chatpage``)."""
    kind = action.get("type")
    if kind == "postback":
        return line_events.postback_event(str(action.get("data", "")), user_id=user_id)
    if kind == "message":
        return line_events.text_event(str(action.get("text", label)), user_id=user_id)
    if kind == "datetimepicker":
        now = datetime.now().astimezone()
        mode = action.get("mode", "datetime")
        value = {"date": now.strftime("%Y-%m-%d"), "time": now.strftime("%H:%M"),
                 "datetime": now.strftime("%Y-%m-%dT%H:%M")}.get(mode, now.strftime("%Y-%m-%dT%H:%M"))
        return line_events.postback_event(str(action.get("data", "")), user_id=user_id, params={mode: value})
    return None


def _undelivered_note(call: dict) -> str | None:
    """The note shown for a recorded LINE call that delivered no message (the loading animation, or
    a reply/push LINE refused, with its status and reason); None for a delivered reply/push."""
    if call["path"] == LOADING_PATH:
        return "（LOCAL 正在輸入…）"
    if call["status"] != 200:
        reason = (call.get("response") or {}).get("message", "")
        return f"（LINE 拒絕了一則{_kind_zh(call)}：{call['status']} {reason}）"
    return None


def _kind_zh(call: dict) -> str:
    return "回覆" if call["path"] == REPLY_PATH else "推播"


def _action_note(choice: Choice) -> str:
    action = choice.action
    if choice.kind == "uri":
        return f"（開啟連結：{action.get('uri', '')}）"
    if choice.kind == "clipboard":
        return f"（已複製：{action.get('clipboardText', '')}）"
    if choice.kind == "location":
        return "（LINE 會打開地圖讓你選位置；這裡請輸入 /location 緯度,經度，例如 /location 24.0818,120.5386）"
    return f"（終端機無法模擬「{choice.kind}」動作）"


# ------------------------------------------------------------------- interactive
HELP = """指令：
  直接輸入文字      以 LINE 使用者身分傳訊息
  輸入編號          點選畫面上的 [n] 按鈕或快速回覆
  /follow          加入好友（follow 事件）     /unfollow  封鎖（unfollow 事件）
  /sticker         傳一張貼圖                  /user Uxxxx 或 /user new  切換使用者
  /location 緯度,經度  分享位置，例如 /location 24.0818,120.5386
                   （店家資料有來源標明的地圖位置時，列出最近的店家；內建的店家名單沒有位置，
                    會說明沒有地圖位置，並列出有店家的鄉鎮）
  /staff [Uxxxx]   以工作人員身分在工作人員群組中操作（/user 回到一對一聊天）
  /help            顯示這段說明                /quit（或 Ctrl-D、Ctrl-C）離開"""


def _say(text: str, stream: TextIO) -> None:
    if text:
        print(text, file=stream, flush=True)


#: Said for a text in the staff group that got no answer: none is coming (docs/staff.md).
GROUP_TEXT_NOTE = "（機器人不回應群組裡的一般聊天；處理服務詢問請按卡片上的按鈕）"


def _show(session: ChatSession, exchange: Exchange, stream: TextIO) -> None:
    if exchange.error is not None:
        _say(f"（無法連到 webhook：{exchange.error}）", stream)
    elif exchange.unread is not None:
        _say(f"（webhook 讀不懂這個事件，機器人不會回覆：{exchange.unread}）", stream)
    elif exchange.status != 200:
        _say(f"（webhook 回應 HTTP {exchange.status}）", stream)
    if exchange.elapsed_s > WEBHOOK_BUDGET_SECONDS:
        _say(f"（注意：webhook 花了 {exchange.elapsed_s:.1f} 秒才回應；LINE 超過 2 秒就算逾時）", stream)
    shown = session.present(exchange.calls)
    _say(shown.text, stream)
    if session.standin_url and exchange.status == 200 and not exchange.delivered:
        _say(GROUP_TEXT_NOTE if exchange.group_text else "（還沒有收到回覆；之後的推播會在下一次提示前顯示）", stream)


def _location_argument(argument: str) -> tuple[float, float] | None:
    """「24.0818,120.5386」 (or separated by a space) → (latitude, longitude); None when not two numbers."""
    parts = argument.replace(",", " ").split()
    try:
        return (float(parts[0]), float(parts[1])) if len(parts) == 2 else None
    except ValueError:
        return None


def _location_command(session: ChatSession, argument: str, stream: TextIO) -> dict | None:
    """``/location 緯度,經度``: a location message event; None (after saying how) when the argument
    is not two numbers."""
    point = _location_argument(argument)
    if point is None:
        _say("（請輸入 /location 緯度,經度，例如 /location 24.0818,120.5386）", stream)
        return None
    return line_events.location_event(*point, user_id=session.user_id)


def _user_command(session: ChatSession, argument: str, stream: TextIO) -> None:
    """``/user [ID|new]``: chat as another resident (a bare ``/user``: back to the one-to-one chat's
    resident; ``new``: a fresh random id). A malformed id is refused with a note; no event."""
    user_id = argument.strip() or session.resident_id
    if user_id == "new":
        user_id = "U" + secrets.token_hex(16)
    if not USER_ID_RE.match(user_id):
        _say("（使用者 ID 要是 U 加 32 個小寫十六進位字元，或用 /user new）", stream)
        return
    session.switch_user(user_id)
    _say(f"（現在的身分：{user_id}）", stream)


def _staff_command(session: ChatSession, argument: str, stream: TextIO) -> None:
    """``/staff [ID]``: speak as a staff member (default ``DEFAULT_STAFF_ID``) in the staff group.
    A malformed id, or no staff group configured, is said in a note; no event."""
    user_id = argument.strip() or DEFAULT_STAFF_ID
    if not USER_ID_RE.match(user_id):
        _say("（工作人員 ID 要是 U 加 32 個小寫十六進位字元）", stream)
        return
    try:
        session.act_as_staff(user_id)
    except ValueError:
        _say("（沒有設定工作人員群組 LOCAL_STAFF_GROUP_ID）", stream)
        return
    _say(f"（現在以工作人員 {user_id} 的身分在工作人員群組中）", stream)


#: The slash commands: (session, the text after the command, the terminal) → the event to send, or
#: None when the command is handled here.
_COMMANDS: dict[str, Callable[[ChatSession, str, TextIO], dict | None]] = {
    "/follow": lambda session, _argument, _stream: line_events.follow_event(user_id=session.user_id),
    "/unfollow": lambda session, _argument, _stream: line_events.unfollow_event(user_id=session.user_id),
    "/sticker": lambda session, _argument, _stream: line_events.sticker_event(user_id=session.user_id),
    "/location": _location_command,
    "/user": _user_command,
    "/staff": _staff_command,
    "/help": lambda _session, _argument, stream: _say(HELP, stream),
}


def _choice_event(session: ChatSession, number: int, stream: TextIO) -> dict | None:
    """A tap on the shown choice ``[number]`` (1-based): its event, or None (with a note of what the
    action would do) when it sends none."""
    choice = session.choices[number - 1]
    _say(f"（點選 [{choice.n}] {choice.label}）", stream)
    event = session.event_for(choice)
    if event is None:
        _say(_action_note(choice), stream)
    return event


def _command_event(session: ChatSession, line: str, stream: TextIO) -> dict | None:
    """Turn a slash command (``_COMMANDS``), a choice's number or a typed line into an event; None
    when handled locally (an unknown command is said so)."""
    command, _, argument = line.partition(" ")
    if command in _COMMANDS:
        return _COMMANDS[command](session, argument, stream)
    if line.isdigit() and 1 <= int(line) <= len(session.choices):
        return _choice_event(session, int(line), stream)
    if line.startswith("/"):
        _say(f"（不認得的指令 {command}；輸入 /help 看說明）", stream)
        return None
    return line_events.text_event(line, user_id=session.user_id)


def run_interactive(session: ChatSession, stdin: TextIO | None = None, stdout: TextIO | None = None) -> int:
    """Chat on a terminal until /quit, EOF or Ctrl-C.

    Args:
        session: the chat session to drive.
        stdin, stdout: default to the process's; with the real stdin, ``input()``
            (line editing) is used.
    Returns:
        The exit status, 0.
    """
    stdin = stdin or sys.stdin
    stdout = stdout or sys.stdout
    try:
        import readline  # noqa: F401  (line editing and history for input())
    except ImportError:
        pass
    _say(f"以 LINE 使用者 {session.user_id} 的身分聊天。輸入 /help 看指令，/quit 離開。", stdout)
    while True:
        try:
            _show_pending(session, stdout)
            line = (input("你> ") if stdin is sys.stdin else _read_line(stdin, stdout)).strip()
        except (EOFError, KeyboardInterrupt):
            print(file=stdout, flush=True)  # end the prompt line
            return 0
        if not line:
            continue
        if line in ("/quit", "/exit"):
            return 0
        try:
            event = _command_event(session, line, stdout)
            if event is not None:
                _show(session, session.send(event), stdout)
        except KeyboardInterrupt:
            _say("（已停止等待）", stdout)
        except OSError as exc:
            _say(f"（讀不到 LINE stand-in 的紀錄：{exc}）", stdout)


def _read_line(stdin: TextIO, stdout: TextIO) -> str:
    stdout.write("你> ")
    stdout.flush()
    line = stdin.readline()
    if not line:
        raise EOFError
    return line


def _show_pending(session: ChatSession, stdout: TextIO) -> None:
    try:
        calls = session.poll()
    except OSError:
        return
    if calls:
        _say(session.present(calls).text, stdout)


# ---------------------------------------------------------------------- headless
def headless_step(session: ChatSession, request: dict) -> dict:
    """Handle one headless input object and return its one output object.

    Args:
        request: ``{"text": s}``, ``{"postback": data}``, ``{"tap": n}``,
            ``{"event": {...}}`` (missing common fields are filled in) or
            ``{"user": "U..."}``; optional ``"wait_seconds"``.
    Returns:
        ``{"status", "replies", "choices"}`` (+ ``"other_choices"``, ``"error"``): status is the
        webhook's HTTP status (None when nothing was sent); replies are the delivered reply/push
        request bodies; choices are the buttons of these replies for the current chat (the
        user's one-to-one chat, or the staff group after ``{"staff"}``): ``tap`` uses that chat's
        latest non-empty list, never another user's or the group's; other_choices are the buttons
        sent to other chats in this exchange, by chat id (tappable after switching to it).
    """
    made = _headless_event(session, request)
    if isinstance(made, _Answered):
        return made.output
    wait_s = request.get("wait_seconds")
    exchange = session.send(made, wait_s=float(wait_s) if isinstance(wait_s, (int, float)) else None)
    shown = session.present(exchange.calls)
    out: dict[str, Any] = {"status": exchange.status, "replies": [c["body"] for c in exchange.delivered],
                           "choices": [c.to_json() for c in shown.choices]}
    if shown.other_choices:  # buttons sent to another chat: tappable after {"user"} / {"staff"}
        out["other_choices"] = {chat: [c.to_json() for c in choices] for chat, choices in shown.other_choices.items()}
    if exchange.error is not None or exchange.unread is not None:
        out["error"] = exchange.error or exchange.unread
    return out


@dataclass(frozen=True)
class _Answered:
    """A headless input answered without sending an event: ``output`` is its one output object."""

    output: dict


def _headless_event(session: ChatSession, request: dict) -> dict | _Answered:
    """The event a headless input sends (the first of text, postback, event, tap it holds), or its
    answer when it sends none (``user`` / ``staff`` switch chats; a bad input is an error object)."""
    if "text" in request:
        return line_events.text_event(str(request["text"]), user_id=session.user_id)
    if "postback" in request:
        return line_events.postback_event(str(request["postback"]), user_id=session.user_id)
    if "event" in request and isinstance(request["event"], dict):
        return complete_event(request["event"], session.user_id)
    if "user" in request:
        return _Answered(_headless_user(session, request["user"]))
    if "staff" in request:
        return _Answered(_headless_staff(session, request["staff"]))
    if "tap" in request:
        return _headless_tap(session, request["tap"])
    return _Answered(_headless_error("expected one of: text, postback, tap, event, user, staff"))


def _headless_user(session: ChatSession, user: Any) -> dict:
    """``{"user": "U..."}``: chat as that resident; an error object when the id is malformed."""
    if not USER_ID_RE.match(str(user)):
        return _headless_error("user must be 'U' followed by 32 lowercase hex characters")
    session.switch_user(str(user))
    return {"status": None, "replies": [], "choices": []}


def _headless_staff(session: ChatSession, staff: Any) -> dict:
    """``{"staff": "U..." | null}``: speak as that staff member (default DEFAULT_STAFF_ID) in the staff
    group; an error object when the id is malformed or no staff group is configured."""
    staff = str(staff or DEFAULT_STAFF_ID)
    if not USER_ID_RE.match(staff):
        return _headless_error("staff must be 'U' followed by 32 lowercase hex characters")
    try:
        session.act_as_staff(staff)
    except ValueError as exc:
        return _headless_error(str(exc))
    return {"status": None, "replies": [], "choices": []}


def _headless_tap(session: ChatSession, n: Any) -> dict | _Answered:
    """``{"tap": n}``: the event of the current chat's choice ``n`` (1-based); an error object when there
    is no such choice, or (with the choices listed) when the choice sends no event."""
    if not isinstance(n, int) or not 1 <= n <= len(session.choices):
        return _Answered(_headless_error(f"no choice {n!r}; {len(session.choices)} available"))
    choice = session.choices[n - 1]
    event = session.event_for(choice)
    if event is None:
        return _Answered({**_headless_error(_action_note(choice)), "choices": [c.to_json() for c in session.choices]})
    return event


def _headless_error(message: str) -> dict:
    return {"status": None, "replies": [], "choices": [], "error": message}


def run_headless(session: ChatSession, stdin: TextIO | None = None, stdout: TextIO | None = None,
                 stderr: TextIO | None = None) -> int:
    """Serve a script: one JSON object per input line, exactly one JSON line out each.

    Args:
        session: the chat session to drive.
        stdin, stdout, stderr: default to the process's streams (read at call time).
    Returns:
        0 at end of input.
    """
    stdin = stdin or sys.stdin
    stdout = stdout or sys.stdout
    stderr = stderr or sys.stderr
    for number, raw in enumerate(stdin, 1):
        if not raw.strip():
            continue
        try:
            request = json.loads(raw)
            if not isinstance(request, dict):
                raise ValueError("not a JSON object")
            result = headless_step(session, request)
        except (ValueError, OSError) as exc:
            result = _headless_error(f"not a JSON object: {exc}" if isinstance(exc, ValueError) else str(exc))
        if result.get("error"):
            print(f"chat: line {number}: {result['error']}", file=stderr, flush=True)
        stdout.write(json.dumps(result, ensure_ascii=False) + "\n")
        stdout.flush()
    return 0


def main(argv: list[str] | None = None) -> int:
    """Parse arguments and run the interactive or headless chat."""
    parser = argparse.ArgumentParser(prog="python -m tools.chat", description=__doc__.splitlines()[0])
    parser.add_argument("--webhook", required=True, help="webhook function URL")
    parser.add_argument("--standin", default=None, help="LINE stand-in base URL (to read replies)")
    parser.add_argument("--secret", default=None,
                        help="channel secret (default: $LINE_CHANNEL_SECRET)")
    parser.add_argument("--user-id", default=DEFAULT_USER_ID, help="act as this LINE user")
    parser.add_argument("--headless", action="store_true", help="JSON lines on stdin/stdout")
    parser.add_argument("--staff-group", default=os.environ.get("LOCAL_STAFF_GROUP_ID"),
                        help="the simulated staff group id (default: $LOCAL_STAFF_GROUP_ID)")
    parser.add_argument("--wait-seconds", type=float, default=DEFAULT_WAIT_SECONDS,
                        help="how long to wait for a reply per event")
    args = parser.parse_args(argv)
    secret = args.secret or os.environ.get("LINE_CHANNEL_SECRET")
    if not secret:
        parser.error("--secret or LINE_CHANNEL_SECRET is required")
    if not USER_ID_RE.match(args.user_id):
        parser.error("--user-id must be 'U' followed by 32 lowercase hex characters")
    try:
        session = ChatSession(args.webhook, secret, args.user_id, args.standin, wait_s=args.wait_seconds,
                              staff_group_id=args.staff_group)
    except OSError as exc:
        print(f"chat: cannot reach the LINE stand-in at {args.standin}: {exc}", file=sys.stderr)
        return 2
    return run_headless(session) if args.headless else run_interactive(session)


if __name__ == "__main__":
    sys.exit(main())
