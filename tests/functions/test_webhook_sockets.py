"""Hostile HTTP at the webhook, with real sockets against a functions-framework process (issue 13,
items 1 and 2): a body is capped however it arrives, and slow clients cannot freeze the webhook.

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


def test_webhook_sockets_slow_clients_do_not_freeze_deliveries(webhook, line_standin):
    # Twice as many slow clients as the worker has threads: each sends its headers and 1 byte of
    # a 10-byte body, then nothing, and keeps its connection open.
    slow = [_open(webhook, _head("Content-Length: 10\r\n") + "{") for _ in range(8)]
    chunked_slow = _open(webhook, _head("Transfer-Encoding: chunked\r\n") + "1\r\n{\r\n")
    try:
        event = text_event("花壇有素食店嗎？")
        body = line_body(event)
        response = requests.post(webhook.url, data=body, timeout=HANG,
                                 headers={"Content-Type": "application/json", "X-Line-Signature": sign(body)})
        assert response.status_code == 200
        assert len(recorded_replies(line_standin, event["replyToken"])) == 1
        # Every slow client is answered (408) or dropped by the server, without sending more.
        for sock in [*slow, chunked_slow]:
            assert _status_of(sock) in (408, None)
    finally:
        for sock in [*slow, chunked_slow]:
            sock.close()
    timeouts = [e for e in webhook.log_entries("webhook rejected") if e["reason"] == "BodyIncomplete"]
    assert len(timeouts) == 9
