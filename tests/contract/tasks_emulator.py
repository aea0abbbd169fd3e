"""A Cloud Tasks emulator on loopback for the tests: ``gcloud-tasks-emulator`` from PyPI, run from
its own tool venv (``make tasks-emulator-venv`` → ``.venv-tasks-emulator``; its protobuf pin clashes
with the runtime lock, so it never enters ``.venv``).

What it does: the Cloud Tasks gRPC API (CreateTask, ListTasks, RunTask, queues) in memory, and
dispatches HTTP tasks to their URL with the ``X-CloudTasks-*`` headers, honouring ``schedule_time``.
What it does not do (covered by unit tests of shared/queue instead): deduplicate task names
(neither a live name nor one used recently: a second CreateTask with a name is accepted), back off
between attempts (a failed task is retried at once, up to ``max_retries``), mint the OIDC token
(no ``Authorization`` header is sent), or enforce the dispatch deadline.
"""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from pathlib import Path

from tools.function_process import free_port

REPO = Path(__file__).resolve().parents[2]
VENV = REPO / ".venv-tasks-emulator"
NOT_INSTALLED = "Cloud Tasks emulator venv missing (make tasks-emulator-venv failed)"


def ensure_venv() -> Path | None:
    """The tool venv's python, building it with make on first use; None when it cannot be built."""
    python = VENV / "bin" / "python"
    if not (VENV / ".installed").is_file():
        built = subprocess.run(["make", "tasks-emulator-venv"], cwd=REPO, capture_output=True, text=True)
        if built.returncode != 0:
            return None
    return python


class TasksEmulator:
    """One emulator process with one queue.

    Args:
        python: the tool venv's interpreter.
        queue_path: ``projects/P/locations/L/queues/Q`` created at start.
        max_retries: attempts after the first before the emulator gives a task up.
        log_path: where its output goes.
    """

    def __init__(self, python: Path, queue_path: str, log_path: Path, *, max_retries: int = 4):
        self.python = python
        self.queue_path = queue_path
        self.max_retries = max_retries
        self.log_path = log_path
        self.port = 0
        self._proc: subprocess.Popen | None = None

    @property
    def host(self) -> str:
        return f"127.0.0.1:{self.port}"

    def start(self, timeout_seconds: float = 60.0) -> str:
        """Start and wait until its gRPC port accepts; returns ``127.0.0.1:PORT``.

        Raises:
            RuntimeError: it exited or did not listen in time (its log tail in the message).
        """
        self.port = free_port()
        with open(self.log_path, "wb") as log:
            self._proc = subprocess.Popen(
                [str(self.python), "-m", "gcloud_tasks_emulator", "start", "-p", str(self.port),
                 "-d", self.queue_path, "-r", str(self.max_retries)],
                stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
                env={k: v for k, v in os.environ.items() if not k.startswith("PYTHON")})
        deadline = time.monotonic() + timeout_seconds
        while True:
            if self._proc.poll() is not None:
                raise RuntimeError(f"tasks emulator exited: {self.log_path.read_text()[-2000:]}")
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return self.host
            except OSError:
                if time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError("tasks emulator did not listen in time") from None
                time.sleep(0.1)

    def stop(self) -> None:
        """SIGTERM its process group, SIGKILL after 5 s."""
        proc, self._proc = self._proc, None
        if proc is None or proc.poll() is not None:
            return
        try:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=5)
        except ProcessLookupError:
            pass
