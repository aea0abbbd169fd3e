"""A real functions-framework process serving one LOCAL function on loopback.

Used by ``make demo`` and the tests whose claims are about processes. By default the process is
``python -m tools.function_server`` (functions-framework's app and gunicorn application, with a worker
whose threads never wait for a request head: tools/function_server.py says why); a bundle is started
as deployed, with ``module="functions_framework"``.
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
from typing import Callable

REPO = Path(__file__).resolve().parents[1]


#: The embedded queues the functions share on one SQLite store (``shared.wiring``'s queue names).
EMBEDDED_QUEUES = ("handoff-reconcile", "queued-events")


def prepare_sqlite_file(store_url: str) -> None:
    """Create the store's SQLite file (WAL, the store's and the embedded queue's tables), as a first
    connection would, before functions are started on it.

    Functions started at once on a file that does not exist yet race to set it up, and one that loses
    waits, with backoff, within its store deadline (shared/sqlite_file.py): on a loaded machine the
    first event can then get a 503. That race has its own tests
    (tests/unit/store/test_sqlite_fresh_file.py); everywhere else the file exists before they start."""
    from shared.queue.embedded import EmbeddedQueue
    from shared.store.sqlite import SqliteStore, path_from_url

    path = path_from_url(store_url)
    store = SqliteStore(path, deadline_seconds=30.0)
    queue = EmbeddedQueue(path, queue_name="set-up", target_url="http://unused.invalid/", auth_token=None,
                          lock_timeout_seconds=30.0)
    try:
        store.get("set_up", "none")
        queue.counts()
    finally:
        store.close()
        queue.close()


def queues_settled(store_url: str) -> bool:
    """Every task of the embedded queues (``EMBEDDED_QUEUES``) on the SQLite store at ``store_url``
    has finished (succeeded or failed): nothing pending or running."""
    from shared.queue.embedded import EmbeddedQueue
    from shared.store.sqlite import path_from_url

    path = path_from_url(store_url)
    for name in EMBEDDED_QUEUES:
        queue = EmbeddedQueue(path, queue_name=name, target_url="http://unused.invalid/", auth_token=None)
        try:
            counts = queue.counts()
        finally:
            queue.close()
        if counts.get("pending") or counts.get("running"):
            return False
    return True


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
        preloaded: fork the child from a server process that has already imported the heavy
            third-party libraries and LOCAL's modules (``PRELOADED_MODULES``) instead of starting
            a new interpreter: the same command line, environment, session and log, without paying
            ~2 s of CPU for imports on every start (tests start well over a hundred functions).
            Not with ``python``, nor with another checkout's code: LOCAL's modules are this one's.
        module: what serves it, ``python -m MODULE --source … --target … --host … --port …``:
            ``SERVER_MODULE`` (this checkout's), or ``functions_framework`` as deployed.
    Raises:
        RuntimeError: the process exited while starting, or did not listen in time.
    """

    def __init__(self, name: str, env: dict[str, str], log_path: Path, *, start_timeout_seconds: float = 30.0,
                 port: int | None = None, python: str | None = None, source: Path | None = None,
                 cwd: Path | None = None, preloaded: bool = False, module: str | None = None):
        self.name = name
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}/"
        self.log_path = log_path
        self._log = open(log_path, "wb")
        args = ["--source", str(source or f"functions/{name}/main.py"),
                "--target", name, "--host", "127.0.0.1", "--port", str(self.port)]
        module = module or SERVER_MODULE
        if preloaded:
            if python is not None:
                raise ValueError("a preloaded function runs this interpreter; python= needs a new one")
            self.process: subprocess.Popen | _ForkedProcess = _ForkedProcess(
                _run_module, (module, args, env, str(cwd or REPO), str(log_path)), name="function")
        else:
            self.process = subprocess.Popen(
                [python or sys.executable, "-m", module, *args],
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

    def stop(self) -> None:
        """SIGKILL the whole process group (gunicorn's master and workers) and reap the master.

        Nothing is lost: a function keeps its state in the store, and its logs are written line by
        line. A graceful stop would cost a second or more per process (gunicorn waits while the
        worker's interpreter tears down its heap) and a worker still inside a request, e.g. waiting
        on a slow stand-in, would hold it for gunicorn's 30 s graceful timeout. Idempotent.
        """
        try:
            os.killpg(self.process.pid, signal.SIGKILL)  # its own session: pgid == the master's pid
        except (ProcessLookupError, PermissionError):
            pass
        self.process.wait()
        self._log.close()


#: What serves a function locally (``make run``, the tests, ``make demo``): tools/function_server.py.
SERVER_MODULE = "tools.function_server"

#: Modules the fork server imports once: the heavy third-party libraries (about 2 s of CPU per start,
#: mostly line-bot-sdk's models), then LOCAL's modules that the functions' main.py files import and
#: OpenCC's converter (tools/forkserver_preload.py says why a forked function is still a new one).
PRELOADED_MODULES = (
    "functions_framework", "functions_framework._cli", "functions_framework._http.gunicorn",
    "gunicorn.app.base", "gunicorn.workers.gthread", "flask", "requests", "pydantic",
    "linebot.v3.messaging", "linebot.v3.webhooks", "linebot.v3.webhook", "cn2an", "holidays", "opencc",
    "cryptography.hazmat.primitives.kdf.kbkdf", SERVER_MODULE, "tools.forkserver_preload",
)


def _fork_context():
    """multiprocessing's fork server with ``PRELOADED_MODULES`` (started on first use, one per
    process that asks; it exits with that process)."""
    import multiprocessing

    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(list(PRELOADED_MODULES))
    return context


def _redirect(env: dict[str, str], cwd: str, stdout_path: str, stderr_path: str) -> None:
    """In a forked child: the environment, working directory and standard streams that a new
    interpreter started with them would have (stdin from /dev/null)."""
    os.chdir(cwd)
    os.environ.clear()
    os.environ.update(env)
    null = os.open(os.devnull, os.O_RDONLY)
    out = os.open(stdout_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    err = out if stderr_path == stdout_path else os.open(stderr_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    for fd, target in ((null, 0), (out, 1), (err, 2)):
        os.dup2(fd, target)
    for fd in {null, out, err}:
        os.close(fd)
    sys.stdin = open(0, encoding="utf-8", closefd=False)
    sys.stdout = open(1, "w", buffering=1, encoding="utf-8", closefd=False)
    sys.stderr = open(2, "w", buffering=1, encoding="utf-8", errors="backslashreplace", closefd=False)


def _run_script(script: str, args: list[str], env: dict[str, str], cwd: str, stdout_path: str,
                stderr_path: str) -> None:
    """The forked child: what ``python SCRIPT ARGS`` would do in a new interpreter."""
    import runpy

    _redirect(env, cwd, stdout_path, stderr_path)
    sys.path.insert(0, os.path.dirname(os.path.abspath(script)))  # as ``python SCRIPT`` does
    sys.argv = [script, *args]
    runpy.run_path(script, run_name="__main__")


def run_preloaded(script: str, args: list[str], env: dict[str, str], *, cwd: Path = REPO,
                  timeout_seconds: float = 60.0) -> subprocess.CompletedProcess:
    """``python SCRIPT ARGS`` (cwd, env) as its own OS process, forked from the fork server that has
    imported ``PRELOADED_MODULES``; like ``subprocess.run(..., capture_output=True, text=True)``.

    Returns:
        The exit code (1 for an uncaught exception, whose traceback is in ``stderr``) and the output.
    Raises:
        subprocess.TimeoutExpired: it ran longer than ``timeout_seconds`` (it is killed).
    """
    import tempfile

    with tempfile.TemporaryDirectory(prefix="run-preloaded-") as folder:
        out, err = os.path.join(folder, "stdout"), os.path.join(folder, "stderr")
        child = _fork_context().Process(target=_run_script, args=(script, args, env, str(cwd), out, err),
                                        daemon=True, name="script")
        child.start()
        child.join(timeout_seconds)
        if child.exitcode is None:
            child.kill()
            child.join()
            raise subprocess.TimeoutExpired([script, *args], timeout_seconds)
        read = lambda path: open(path, encoding="utf-8", errors="replace").read() if os.path.exists(path) else ""  # noqa: E731
        return subprocess.CompletedProcess([script, *args], child.exitcode, read(out), read(err))


def _run_module(module: str, args: list[str], env: dict[str, str], cwd: str, log_path: str) -> None:
    """The forked child: what ``python -m MODULE ARGS`` would do in a new interpreter started in
    ``cwd`` with ``env``, its own session, stdin from /dev/null and output to the log."""
    import runpy

    os.setsid()  # its own process group, as start_new_session=True gives a Popen child
    _redirect(env, cwd, log_path, log_path)
    sys.path.insert(0, cwd)  # as ``python -m`` puts the working directory first
    sys.argv = [module, *args]
    runpy.run_module(module, run_name="__main__", alter_sys=True)


def start_preloaded_module(module: str, args: list[str], env: dict[str, str], cwd: Path,
                           log_path: Path) -> "_ForkedProcess":
    """``python -m MODULE ARGS`` (cwd, env, its own session, output to ``log_path``) as its own OS
    process, forked from the fork server that has imported ``PRELOADED_MODULES``: the command
    ``make run`` starts each function and stand-in with, without a new interpreter's imports.

    Returns:
        A process handle with Popen's ``pid``, ``poll()`` and ``wait(timeout)`` (which raises
        ``subprocess.TimeoutExpired``).
    """
    return _ForkedProcess(_run_module, (module, args, env, str(cwd), str(log_path)), name=module)


def start_module(module: str, args: list[str], env: dict[str, str], cwd: Path, log_path: Path, *,
                 preloaded: bool) -> "subprocess.Popen | _ForkedProcess":
    """``python -m MODULE ARGS`` (this interpreter; cwd, env, its own session, stdin from /dev/null,
    stdout and stderr to a fresh ``log_path``): forked from the fork server when ``preloaded``
    (``start_preloaded_module``), else a new interpreter.

    Returns:
        A ``subprocess.Popen``, or the fork's handle with Popen's ``pid``, ``poll()`` and ``wait(timeout)``.
    """
    if preloaded:
        log_path.write_bytes(b"")
        return start_preloaded_module(module, args, env, cwd, log_path)
    with log_path.open("wb") as log:  # the child keeps its own copy of the descriptor
        return subprocess.Popen([sys.executable, "-m", module, *args], cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                                stdout=log, stderr=subprocess.STDOUT, start_new_session=True)


class _ForkedProcess:
    """The part of ``subprocess.Popen`` that ``FunctionProcess`` and ``make run`` use, over a child
    forked by the fork server (``pid``, ``poll``, ``wait``) that runs ``target(*target_args)``:
    ``_run_module`` (``python -m MODULE``: a function's server, a stand-in)."""

    def __init__(self, target: Callable[..., None], target_args: tuple, *, name: str):
        self._child = _fork_context().Process(target=target, args=target_args, daemon=True, name=name)
        self._child.start()
        self.pid = self._child.pid

    def poll(self) -> int | None:
        return self._child.exitcode

    def wait(self, timeout: float | None = None) -> int | None:
        self._child.join(timeout)
        if self._child.exitcode is None:
            raise subprocess.TimeoutExpired("function", timeout or 0)
        return self._child.exitcode


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
