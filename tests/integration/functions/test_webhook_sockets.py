"""Hostile HTTP at the webhook, with real sockets against a functions-framework process
(docs/design.md §3): a body is capped however it arrives, and slow clients cannot freeze the webhook.

No wall-clock bounds: each test waits on a condition (an answer on a socket), with a generous
safety timeout that only turns a hang into a failure.
"""
from __future__ import annotations

import socket

import pytest
import requests

from tests.conftest import line_body, recorded_replies, replies_to, sign, text_event

#: A safety net against a hang, never a speed claim (seconds).
HANG = 20.0
CAP = 64 * 1024


@pytest.fixture
def webhook(start_function, base_env):
    env = {**base_env, "THREADS": "4", "LOCAL_WEBHOOK_MAX_BODY_BYTES": str(CAP),
           "LOCAL_WEBHOOK_BODY_TIMEOUT_SECONDS": "1", "LOCAL_WEBHOOK_SLOW_CLIENT_SLOTS": "2"}
    return start_function("webhook", env)


pytestmark = pytest.mark.slow


def _open(webhook, head: str) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", webhook.port), timeout=HANG)
    sock.sendall(head.encode("ascii"))
    return sock


def _head(extra: str, signature: str = "x") -> str:
    return (f"POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            f"X-Line-Signature: {signature}\r\n{extra}\r\n")


def _status_of(sock: socket.socket) -> int | None:
    """The status code the server answered on ``sock``, or None when it closed without one."""
    data = b""
    try:
        while b"\r\n" not in data:
            piece = sock.recv(4096)
            if not piece:
                break
            data += piece
    except ConnectionResetError:
        pass
    if not data.startswith(b"HTTP/1.1 "):
        return None
    return int(data.split(b" ", 2)[1])


def _chunk(data: bytes) -> bytes:
    return f"{len(data):x}\r\n".encode() + data + b"\r\n"


def test_webhook_sockets_chunked_body_over_cap_is_413_before_the_body_ends(webhook, line_standin):
    sock = _open(webhook, _head("Transfer-Encoding: chunked\r\n"))
    try:
        for _ in range(3):  # 3 × 32 KiB > the 64 KiB cap; the terminating chunk is never sent
            sock.sendall(_chunk(b" " * 32 * 1024))
        assert _status_of(sock) == 413
    finally:
        sock.close()
    assert [e["reason"] for e in webhook.log_entries("webhook rejected")] == ["BodyTooLarge"]
    assert line_standin.calls() == []


def test_webhook_sockets_signed_chunked_body_over_cap_is_not_processed(webhook, line_standin):
    event = text_event("花壇有素食店嗎？" + " " * CAP)
    body = line_body(event)
    sock = _open(webhook, _head("Transfer-Encoding: chunked\r\n", sign(body)))
    try:
        for start in range(0, len(body), 16 * 1024):
            sock.sendall(_chunk(body[start:start + 16 * 1024]))
        sock.sendall(b"0\r\n\r\n")
        assert _status_of(sock) == 413
    finally:
        sock.close()
    assert replies_to(line_standin, event["replyToken"]) == []


def test_webhook_sockets_signed_chunked_body_under_cap_is_processed(webhook, line_standin):
    event = text_event("花壇有素食店嗎？")
    body = line_body(event)
    sock = _open(webhook, _head("Transfer-Encoding: chunked\r\n", sign(body)))
    try:
        sock.sendall(_chunk(body[:40]) + _chunk(body[40:]) + b"0\r\n\r\n")
        assert _status_of(sock) == 200
    finally:
        sock.close()
    assert len(recorded_replies(line_standin, event["replyToken"])) == 1


def test_webhook_sockets_content_length_over_cap_is_413_without_reading(webhook, line_standin):
    sock = _open(webhook, _head(f"Content-Length: {64 * 1024 * 1024}\r\n"))
    try:
        sock.sendall(b"{")  # nothing else is ever sent: the answer cannot wait for the body
        assert _status_of(sock) == 413
    finally:
        sock.close()


def _signed_delivery_is_answered(webhook, line_standin) -> None:
    """A signed delivery to the served webhook gets its 200 and its one reply (within ``HANG``)."""
    event = text_event("花壇有素食店嗎？")
    body = line_body(event)
    response = requests.post(webhook.url, data=body, timeout=HANG,
                             headers={"Content-Type": "application/json", "X-Line-Signature": sign(body)})
    assert response.status_code == 200
    assert len(recorded_replies(line_standin, event["replyToken"])) == 1


def test_webhook_sockets_slow_clients_do_not_freeze_deliveries(webhook, line_standin):
    # Twice as many slow clients as the worker has threads: each sends its headers and 1 byte of
    # a 10-byte body, then nothing, and keeps its connection open.
    slow = [_open(webhook, _head("Content-Length: 10\r\n") + "{") for _ in range(8)]
    chunked_slow = _open(webhook, _head("Transfer-Encoding: chunked\r\n") + "1\r\n{\r\n")
    try:
        _signed_delivery_is_answered(webhook, line_standin)
        # Every slow client is answered (408) or dropped by the server, without sending more.
        for sock in [*slow, chunked_slow]:
            assert _status_of(sock) in (408, None)
    finally:
        for sock in [*slow, chunked_slow]:
            sock.close()
    timeouts = [e for e in webhook.log_entries("webhook rejected") if e["reason"] == "BodyIncomplete"]
    assert len(timeouts) == 9


#: The webhook's request head that never ends: its request line and a header that goes on and on.
_ENDLESS_HEAD = b"POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Line-Signature: x\r\nX-Pad: " + b"a" * 60_000
#: Seconds between two bytes of a trickling head.
TRICKLE_SECONDS = 0.1


class _Trickle:
    """Sockets that send a request head one byte at a time from a thread, never reaching its end.

    Args:
        socks: connected sockets; each has sent the first byte of the head when this starts.
        sent: bytes of ``_ENDLESS_HEAD`` each socket has already sent.
    """

    def __init__(self, socks: list[socket.socket], sent: int = 0):
        import threading

        self.socks = socks
        self.refused: set[int] = set()  # indices of sockets the server closed (a send failed)
        self._sent = sent
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(TRICKLE_SECONDS) and self._sent < len(_ENDLESS_HEAD):
            for index, sock in enumerate(self.socks):
                try:
                    sock.send(_ENDLESS_HEAD[self._sent:self._sent + 1])
                except OSError:
                    self.refused.add(index)
            self._sent += 1

    def still_waiting(self) -> int:
        """How many sockets are still open with nothing answered: the server still holds them."""
        import select

        # A socket is readable once the server answered or closed it: then it no longer waits.
        readable, _, _ = select.select(self.socks, [], [], 0)
        return sum(1 for index, sock in enumerate(self.socks) if index not in self.refused and sock not in readable)

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
        for sock in self.socks:
            sock.close()


def _read_response(sock: socket.socket) -> tuple[int, bytes]:
    """One whole HTTP/1.1 response with a Content-Length on ``sock``: (status, the bytes after its head)."""
    data = b""
    while b"\r\n\r\n" not in data:
        piece = sock.recv(4096)
        assert piece, "closed before the response head"
        data += piece
    head, rest = data.split(b"\r\n\r\n", 1)
    length = next(int(line.split(b":", 1)[1]) for line in head.split(b"\r\n")
                  if line.lower().startswith(b"content-length:"))
    while len(rest) < length:
        piece = sock.recv(4096)
        assert piece, "closed before the response body"
        rest += piece
    return int(head.split(b" ", 2)[1]), rest[length:]


def _trickling_heads(webhook, *, after_one_request: bool) -> _Trickle:
    """Twice as many clients as the worker has threads, each sending a request head one byte at a
    time: on a fresh connection, or after one whole request (a GET: 405, the connection kept alive)."""
    socks = []
    for _ in range(8):
        sock = socket.create_connection(("127.0.0.1", webhook.port), timeout=HANG)
        if after_one_request:
            sock.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            assert _read_response(sock) == (405, b"")
        sock.sendall(_ENDLESS_HEAD[:1])
        socks.append(sock)
    return _Trickle(socks, sent=1)


def _delivery_answered_while_they_trickle(webhook, line_standin, trickle: _Trickle) -> None:
    """A signed delivery gets its 200 and its reply while every trickling client is still held open."""
    try:
        _signed_delivery_is_answered(webhook, line_standin)
        assert trickle.still_waiting() == len(trickle.socks)
    finally:
        trickle.close()


def test_webhook_sockets_slow_heads_do_not_hold_every_thread(webhook, line_standin):
    _delivery_answered_while_they_trickle(webhook, line_standin, _trickling_heads(webhook, after_one_request=False))


def test_webhook_sockets_slow_second_head_on_a_kept_alive_connection_holds_no_thread(webhook, line_standin):
    _delivery_answered_while_they_trickle(webhook, line_standin, _trickling_heads(webhook, after_one_request=True))


@pytest.fixture
def webhook_short_head_timeout(start_function, base_env):
    return start_function("webhook", {**base_env, "THREADS": "4", "LOCAL_HEADER_TIMEOUT_SECONDS": "1"})


def test_webhook_sockets_head_not_in_by_the_header_timeout_is_408(webhook_short_head_timeout, line_standin):
    sock = _open(webhook_short_head_timeout, "POST / HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # no blank line, ever
    try:
        assert _status_of(sock) == 408
        assert sock.recv(1) == b""  # and closed
    finally:
        sock.close()
    assert line_standin.calls() == []


def test_webhook_sockets_head_over_the_cap_is_431_and_closed(webhook, line_standin):
    sock = socket.create_connection(("127.0.0.1", webhook.port), timeout=HANG)
    try:
        sock.sendall(b"POST /" + b"a" * (128 * 1024))  # a request line with no end, sent at once
        assert _status_of(sock) == 431
    finally:
        sock.close()
    assert line_standin.calls() == []
