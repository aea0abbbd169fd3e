"""The lifecycle every loopback stand-in shares (LINE, Gemini, TDX): bind, serve in a daemon thread,
stop, use as a context manager, and read the base URL back. Dev and test code, never deployed."""
from __future__ import annotations

import threading
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any

#: How often the serving thread looks for stop(): stop() waits up to this long (tests start and
#: stop a stand-in per test, so a 0.5 s or 50 ms default adds up; an idle loop costs microseconds).
STOP_POLL_SECONDS = 0.005


class StandinServer:
    """Base of the stand-ins. A subclass sets ``_host``, ``_port`` (0: a free one) and, to record to a
    file, ``_record_path``, and builds its server in ``_new_server``."""

    _host: str = "127.0.0.1"
    _port: int = 0
    _record_path: Path | None = None
    _server: ThreadingHTTPServer | None = None
    _thread: threading.Thread | None = None
    thread_name = "standin"

    def _new_server(self) -> ThreadingHTTPServer:
        """The bound server with this stand-in's request handler."""
        raise NotImplementedError

    def _before_close(self, server: ThreadingHTTPServer) -> None:
        """Called with the server just before it stops (e.g. to remember its port)."""

    def start(self) -> Any:
        """Bind and serve in a daemon thread; ``url`` is valid from now on. Returns self.

        Raises:
            OSError: the port cannot be bound.
        """
        if self._server is not None:
            return self
        if self._record_path is not None:
            self._record_path.parent.mkdir(parents=True, exist_ok=True)
        self._server = self._new_server()
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name=self.thread_name,
                                        kwargs={"poll_interval": STOP_POLL_SECONDS}, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and close the socket; safe to call twice."""
        server, self._server = self._server, None
        if server is None:
            return
        self._before_close(server)
        server.shutdown()
        server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> Any:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    @property
    def url(self) -> str:
        """Base URL, e.g. ``http://127.0.0.1:8090`` (no trailing slash).

        Raises:
            RuntimeError: not started.
        """
        if self._server is None:
            raise RuntimeError(f"{type(self).__name__} is not started")
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"
