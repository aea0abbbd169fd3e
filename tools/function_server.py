"""``python -m tools.function_server --source S --target T --host H --port P``: one LOCAL function
served the way ``python -m functions_framework`` serves it, except that a request reaches a worker
thread only once its head is in.

functions-framework runs a Flask app under gunicorn's ``gthread`` worker: the main loop accepts a
connection and hands it at once to one of ``THREADS`` threads, which then reads the request line and
headers with blocking reads. A client that sends its head a byte at a time holds that thread for as
long as it keeps sending, and ``THREADS`` such clients hold them all: a signed LINE delivery that
arrives alongside waits behind them past LINE's 2 s (gunicorn only bounds the wait for a
connection's *first* bytes). gunicorn's own advice is a buffering proxy in front of it
(https://gunicorn.org/deploy, https://gunicorn.org/design); in production Cloud Run's front end is
that proxy (docs/delivery.md, "Slow clients").

Locally (``make run``, the tests' function processes, ``make demo``) there is no such front, so
``HeadBufferingThreadWorker`` does the part that matters in the worker itself: it reads each
connection's head in gunicorn's main loop, without blocking, and submits the connection to the
thread pool only when the blank line that ends the head has arrived. A head that is not in within
``LOCAL_HEADER_TIMEOUT_SECONDS`` (default 10) is answered 408; one longer than ``MAX_HEAD_BYTES``
431 (RFC 9110 §15.5.9, RFC 6585 §5); both close the connection. Bodies are left to the app, whose
webhook bounds them with ``shared.http_body.SlowClientGate``.

Everything else is functions-framework's: ``functions_framework.create_app`` builds the app and its
own gunicorn application (``functions_framework._http.create_server``, which its CLI calls too)
reads ``THREADS``, ``WORKERS`` and ``CLOUD_RUN_TIMEOUT_SECONDS`` from the environment; the only
option added is ``worker_class`` (gunicorn's setting: a subclass of ``gunicorn.workers.base.Worker``).
"""
from __future__ import annotations

import argparse
import os
import re
import selectors
import time
from collections import OrderedDict
from functools import partial
from typing import Any

from gunicorn.workers.gthread import ThreadWorker

#: Default seconds a request head may take to arrive, from its connection's first wait for it.
DEFAULT_HEADER_TIMEOUT_SECONDS = 10.0
#: Largest request head read (bytes): far above what LINE, Cloud Tasks or the functions send.
MAX_HEAD_BYTES = 64 * 1024
#: Largest single read of a head (bytes).
RECV_BYTES = 16 * 1024
_CONTENT = re.compile(rb"[^\r\n]")  # the head starts at its first byte that is not an empty line's
_TIMEOUT = b"HTTP/1.1 408 Request Timeout\r\nConnection: close\r\nContent-Length: 0\r\n\r\n"
_TOO_LARGE = b"HTTP/1.1 431 Request Header Fields Too Large\r\nConnection: close\r\nContent-Length: 0\r\n\r\n"


def header_timeout_seconds(environ: dict[str, str] | os._Environ[str] = os.environ) -> float:
    """``LOCAL_HEADER_TIMEOUT_SECONDS`` (seconds, > 0), default ``DEFAULT_HEADER_TIMEOUT_SECONDS``.

    Raises:
        ValueError: not a positive number.
    """
    value = float(environ.get("LOCAL_HEADER_TIMEOUT_SECONDS") or DEFAULT_HEADER_TIMEOUT_SECONDS)
    if not value > 0:
        raise ValueError("LOCAL_HEADER_TIMEOUT_SECONDS must be > 0")
    return value


class RequestHead:
    """The bytes of one request head received so far, and when it must be in (monotonic seconds).

    ``add`` scans only what it has not scanned before, so a head sent a byte at a time costs time
    linear in its length. The head ends at the first blank line after its request line (RFC 9112 §2.1:
    CRLF CRLF; a bare LF LF too, left for gunicorn's parser to refuse); empty lines before the request
    line are skipped, as RFC 9112 §2.2 lets a server do.
    """

    __slots__ = ("data", "deadline", "_start", "_scanned")

    def __init__(self, deadline: float):
        self.data = bytearray()
        self.deadline = deadline
        self._start = -1  # where the request line starts; -1 while only empty lines arrived
        self._scanned = 0

    def add(self, chunk: bytes) -> bool:
        """Append ``chunk``; True once the head has ended (what follows it stays in ``data``)."""
        self.data += chunk
        if self._start < 0:
            found = _CONTENT.search(self.data, self._scanned)
            if found is None:
                self._scanned = len(self.data)
                return False
            self._start = self._scanned = found.start()
        since = max(self._start, self._scanned - 2)
        self._scanned = len(self.data)
        return self.data.find(b"\n\r\n", since) >= 0 or self.data.find(b"\n\n", since) >= 0


class HeadBufferingThreadWorker(ThreadWorker):
    """gunicorn's ``gthread`` worker whose threads never wait for a request head.

    Every connection handed to the thread pool (a new one, or a kept-alive one whose next request
    begins) first waits in the main loop's selector until its head is complete; the bytes read are
    given back to the connection's parser (``unreader.unread``), which then parses them without
    waiting. Waiting heads count towards ``worker_connections`` like any open connection. Only plain
    HTTP/1 is buffered; with TLS or HTTP/2 prior knowledge configured this is gunicorn's worker as is.
    """

    def init_process(self) -> None:
        self.heads: OrderedDict[Any, RequestHead] = OrderedDict()  # in deadline order
        self.header_timeout_seconds = header_timeout_seconds()
        self._buffers_heads = not self.cfg.is_ssl and self.cfg.http2_cleartext in ("off", "upgrade")
        super().init_process()

    def enqueue_req(self, conn) -> None:
        """Submit ``conn`` to the thread pool once its next request head is in (main thread)."""
        if not self._buffers_heads:
            super().enqueue_req(conn)
            return
        head = RequestHead(time.monotonic() + self.header_timeout_seconds)
        ahead = conn.parser.unreader.take_buffered() if conn.initialized else b""
        if head.add(ahead):  # a kept-alive connection whose next head was read ahead
            self._hand_over(conn, head)
            return
        conn.sock.setblocking(False)
        self.heads[conn] = head
        self.poller.register(conn.sock, selectors.EVENT_READ, partial(self._on_head_readable, conn))

    def _on_head_readable(self, conn, _sock) -> None:
        head = self.heads[conn]
        try:
            chunk = conn.sock.recv(RECV_BYTES)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            chunk = b""
        if not chunk:  # the client went away
            self._drop(conn)
        elif head.add(chunk):
            self._forget(conn)
            self._hand_over(conn, head)
        elif len(head.data) >= MAX_HEAD_BYTES:
            self._drop(conn, _TOO_LARGE)

    def _hand_over(self, conn, head: RequestHead) -> None:
        conn.sock.setblocking(True)
        conn.init()  # plain HTTP/1: only builds the parser (no reads)
        conn.parser.unreader.unread(bytes(head.data))
        conn.data_ready = True
        super().enqueue_req(conn)

    def _forget(self, conn) -> None:
        del self.heads[conn]
        try:
            self.poller.unregister(conn.sock)
        except (KeyError, ValueError, OSError):
            pass

    def _drop(self, conn, answer: bytes = b"") -> None:
        """Close a connection whose head will not be served, sending ``answer`` if the socket takes it."""
        self._forget(conn)
        if answer:
            try:
                conn.sock.send(answer)
            except OSError:
                pass
        self.nr_conns -= 1
        conn.close()

    def murder_pending(self) -> None:
        """gunicorn's pending-connection expiry, then 408 for every head past its deadline (all of
        them once the worker is stopping)."""
        super().murder_pending()
        now = time.monotonic()
        while self.heads:
            conn, head = next(iter(self.heads.items()))
            if head.deadline > now and self.alive:
                break
            self._drop(conn, _TIMEOUT)


def main(argv: list[str] | None = None) -> None:
    """Build the function's app with functions-framework and serve it until the process ends."""
    parser = argparse.ArgumentParser(prog="python -m tools.function_server", description=__doc__.split("\n")[0])
    parser.add_argument("--source", required=True, help="the function's main.py")
    parser.add_argument("--target", required=True, help="the function's name in it")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8080)
    args = parser.parse_args(argv)
    header_timeout_seconds()  # a bad value stops the start, not the first request
    from functions_framework import create_app
    from functions_framework._http import create_server

    app = create_app(args.target, args.source, "http")
    create_server(app, False, worker_class=HeadBufferingThreadWorker).run(args.host, args.port)


if __name__ == "__main__":
    main()
