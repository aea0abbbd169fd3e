"""A real ``python -m functions_framework`` process serving one LOCAL function on loopback.

Used by ``make demo`` and the tests whose claims are about processes.
"""
from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class FunctionProcess:
    """Start ``functions/<name>/main.py`` (target ``name``) and wait until its port accepts.

    Args:
        name: ``webhook``, ``reconcile`` or ``memory``.
        env: the whole environment of the child.
        log_path: where its stdout and stderr (structured JSON logs) go.
        start_timeout_seconds: how long to wait for the port.
        port: the port to serve on (a restart on the same URL); a free one when None.
        python: the interpreter (default: this one); a bundle test passes its own venv's.
        source: the entry file (default ``functions/<name>/main.py`` of this checkout).
        cwd: the child's working directory (default: the repository).
    Raises:
        RuntimeError: the process exited while starting, or did not listen in time.
    """

    def __init__(self, name: str, env: dict[str, str], log_path: Path, *, start_timeout_seconds: float = 30.0,
                 port: int | None = None, python: str | None = None, source: Path | None = None,
                 cwd: Path | None = None):
        self.name = name
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}/"
        self.log_path = log_path
        self._log = open(log_path, "wb")
        self.process = subprocess.Popen(
            [python or sys.executable, "-m", "functions_framework", "--source",
             str(source or f"functions/{name}/main.py"),
             "--target", name, "--host", "127.0.0.1", "--port", str(self.port)],
            cwd=cwd or REPO, env=env, stdin=subprocess.DEVNULL, stdout=self._log, stderr=subprocess.STDOUT,
            start_new_session=True)  # its own process group: stop() ends the master and its workers
        deadline = time.monotonic() + start_timeout_seconds
        while True:
            if self.process.poll() is not None:
                self._log.close()
                raise RuntimeError(f"{name} exited while starting: {log_path.read_text()[-2000:]}")
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return
            except OSError:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"{name} did not start in {start_timeout_seconds:.0f} s") from None
                time.sleep(0.05)

    def log_entries(self, message: str) -> list[dict]:
        """Structured log lines with this ``message``."""
        return read_entries(self.log_path, message)

    def stop(self, grace_seconds: float = 1.0) -> None:
        """SIGINT (gunicorn's quick shutdown); after ``grace_seconds``, SIGKILL to the whole process
        group (a worker still inside a request, e.g. waiting on a slow stand-in, would otherwise
        hold the shutdown for gunicorn's 30 s graceful timeout). Idempotent."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(timeout=grace_seconds)
            except subprocess.TimeoutExpired:
                pass
        try:
            os.killpg(self.process.pid, signal.SIGKILL)  # the group outlives a master that exited
        except (ProcessLookupError, PermissionError):
            pass
        self.process.wait()
        self._log.close()


def read_entries(path, message: str) -> list[dict]:
    """The structured entries with this ``message`` in a log file written by ``log`` (tests, demo).

    Non-JSON lines (e.g. the server's own start-up lines) are skipped.
    """
    found = []
    with open(path, encoding="utf-8", errors="replace") as handle:
        for line in handle:
            if not line.startswith("{"):
                continue
            try:
                entry = json.loads(line)
            except json.JSONDecodeError:
                continue
            if entry.get("message") == message:
                found.append(entry)
    return found
