"""``make run``: the three LOCAL functions on loopback, a LINE stand-in, and a chat.

Starts, from the repository root, each function as its own functions-framework
process (``functions/<name>/main.py``, target ``<name>``, served by ``tools.function_server``), plus the LINE stand-in
(``tools.line_standin``) unless ``LINE_API_BASE_URL`` is already set, with the chat page beside it
(``tools.chatpage``, a browser's view of the same chats, on ``LOCAL_CHATPAGE_PORT``), and, with
``LOCAL_MODEL=standin``, the Gemini API stand-in (``tools.gemini_standin``, recording in
``.run/gemini-calls.jsonl``) unless ``GOOGLE_GEMINI_BASE_URL`` is already set; waits until
every port accepts connections, then:

* stdin is a terminal (and ``LOCAL_HEADLESS`` is not "1") → the interactive chat;
* ``LOCAL_HEADLESS=1`` → the headless chat on stdin/stdout (JSON lines);
* ``LOCAL_SERVE_ONLY=1``, no terminal, or an external ``LINE_API_BASE_URL`` →
  print the URLs as one JSON line on stdout and wait for SIGINT/SIGTERM/SIGHUP.

Dev defaults fill only variables the environment does not set (the environment
always wins). Children log to ``.run/<name>.log`` (``LOCAL_RUN_DIR``; the previous run's is
``<name>.log.1``); the banner goes to stderr. On
exit (end of input, /quit, SIGINT, SIGTERM or SIGHUP, even when the caller started it with SIGINT
ignored) every child is sent SIGTERM, then SIGKILL after 5 s.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from tools.function_process import SERVER_MODULE

REPO = Path(__file__).resolve().parents[1]
RUN_DIR_NAME = ".run"
FUNCTIONS = ("webhook", "reconcile", "memory", "agent")
PORT_VARIABLES = {"webhook": ("LOCAL_WEBHOOK_PORT", 8080), "reconcile": ("LOCAL_RECONCILE_PORT", 8081),
                  "memory": ("LOCAL_MEMORY_PORT", 8082), "agent": ("LOCAL_AGENT_PORT", 8083),
                  "line-standin": ("LOCAL_STANDIN_PORT", 8090),
                  "gemini-standin": ("LOCAL_GEMINI_STANDIN_PORT", 8091),
                  "chatpage": ("LOCAL_CHATPAGE_PORT", 8092)}
#: Stand-ins, whose URLs have no trailing slash.
STANDINS = ("line-standin", "gemini-standin")
DEV_SECRETS = {
    "LINE_CHANNEL_SECRET": "local-dev-channel-secret",
    "LINE_CHANNEL_ACCESS_TOKEN": "local-dev-access-token",
    "LOCAL_SIGNING_KEY": "local-dev-signing-key-change-me",
    "LOCAL_INTERNAL_TOKEN": "local-dev-internal-token",
    "LOCAL_TENANT_ID": "local-dev",
    "LOCAL_TIMEZONE": "Asia/Taipei",
    # A simulated LINE staff group (docs/design.md §10): staff cards are pushed to it; /staff acts in it.
    "LOCAL_STAFF_GROUP_ID": "C" + hashlib.sha256(b"local-dev-staff-group").hexdigest()[:32],
}
START_TIMEOUT_SECONDS = 20.0
STOP_GRACE_SECONDS = 5.0
LOG_TAIL_LINES = 30


class StartupError(Exception):
    """A child did not come up: it exited early, its port was taken, or it timed out."""


@dataclass
class Child:
    """One started process: its name, port, log file and Popen handle (or the fork server's
    equivalent: ``pid``, ``poll``, ``wait``)."""

    name: str
    port: int
    log_path: Path
    process: Any

    @property
    def url(self) -> str:
        """Loopback URL with a trailing slash for functions, none for the stand-in."""
        base = f"http://127.0.0.1:{self.port}"
        return base if self.name in STANDINS else base + "/"


@dataclass(frozen=True)
class DevConfig:
    """What ``build_env`` decided: the children's environment, ports and paths."""

    env: dict[str, str]
    ports: dict[str, int]
    run_dir: Path
    store_path: Path | None
    start_standin: bool
    #: LOCAL_MODEL=standin without a GOOGLE_GEMINI_BASE_URL of its own: start tools/gemini_standin.
    start_gemini_standin: bool = False


def sqlite_path(store_url: str) -> Path | None:
    """Return the file of a ``sqlite:////abs/path`` URL, or None for other stores."""
    prefix = "sqlite:///"
    return Path(store_url[len(prefix):]) if store_url.startswith(prefix) else None


def build_env(environ: Mapping[str, str], repo: Path = REPO) -> DevConfig:
    """Compute the children's environment: dev defaults under the given environment.

    Args:
        environ: the current environment; every variable set here wins.
        repo: the repository root (``.run/`` lives there).
    Returns:
        The merged environment, ports by child name, the run directory, the SQLite
        file (None for a non-SQLite store) and whether to start the LINE stand-in.
    Raises:
        StartupError: a port variable is not an integer in 1–65535.
    """
    env = dict(environ)
    # LOCAL_RUN_DIR: where logs, call records, the lock and the default store go (default repo/.run)
    run_dir = Path(env["LOCAL_RUN_DIR"]) if env.get("LOCAL_RUN_DIR") else repo / RUN_DIR_NAME
    for name, value in DEV_SECRETS.items():
        env.setdefault(name, value)
    env.setdefault("LOCAL_STORE_URL", f"sqlite:///{run_dir / 'local.sqlite3'}")
    ports: dict[str, int] = {}
    for name, (variable, default) in PORT_VARIABLES.items():
        raw = env.setdefault(variable, str(default))
        if not raw.isdigit() or not 0 < int(raw) < 65536:
            raise StartupError(f"{variable}={raw!r} is not a TCP port")
        ports[name] = int(raw)
    env.setdefault("RECONCILE_FUNCTION_URL", f"http://127.0.0.1:{ports['reconcile']}/")
    env.setdefault("MEMORY_FUNCTION_URL", f"http://127.0.0.1:{ports['memory']}/")
    env.setdefault("AGENT_FUNCTION_URL", f"http://127.0.0.1:{ports['agent']}/")
    start_standin = not env.get("LINE_API_BASE_URL")
    if start_standin:
        env["LINE_API_BASE_URL"] = f"http://127.0.0.1:{ports['line-standin']}"
    else:
        del ports["line-standin"]
        del ports["chatpage"]  # the chat page reads replies from the stand-in only
    start_gemini = env.get("LOCAL_MODEL", "").strip().lower() == "standin" and not env.get("GOOGLE_GEMINI_BASE_URL")
    if start_gemini:
        env["GOOGLE_GEMINI_BASE_URL"] = f"http://127.0.0.1:{ports['gemini-standin']}"
    else:
        del ports["gemini-standin"]
    env["PYTHONUNBUFFERED"] = "1"
    return DevConfig(env, ports, run_dir, sqlite_path(env["LOCAL_STORE_URL"]), start_standin, start_gemini)


def venv_python(repo: Path = REPO) -> str:
    """The repository's venv interpreter, or the running one when there is no venv."""
    candidate = repo / ".venv" / "bin" / "python"
    return str(candidate) if candidate.exists() else sys.executable


def port_is_free(port: int, host: str = "127.0.0.1") -> bool:
    """True when ``host:port`` can be bound now (SO_REUSEADDR, as servers bind)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError:
            return False
    return True


def function_argv(python: str, functions_dir: Path, name: str, port: int) -> list[str]:
    """The exact command line for one function: functions-framework's app and gunicorn application,
    whose threads never wait for a request head (tools/function_server.py)."""
    return [python, "-m", SERVER_MODULE, "--source", str(functions_dir / name / "main.py"),
            "--target", name, "--host", "127.0.0.1", "--port", str(port)]


def standin_argv(python: str, port: int, record_path: Path) -> list[str]:
    """The command line for the LINE stand-in; the token comes from the environment."""
    return [python, "-m", "tools.line_standin", "--host", "127.0.0.1", "--port", str(port),
            "--record", str(record_path), "--access-token-env", "LINE_CHANNEL_ACCESS_TOKEN"]


def chatpage_argv(python: str, port: int, webhook_port: int, standin_port: int) -> list[str]:
    """The command line for the chat page (``tools.chatpage``, on 127.0.0.1 only); the channel secret and
    access token come from the environment."""
    return [python, "-m", "tools.chatpage", "--port", str(port), "--webhook", f"http://127.0.0.1:{webhook_port}/",
            "--standin", f"http://127.0.0.1:{standin_port}"]


def gemini_standin_argv(python: str, port: int, record_path: Path) -> list[str]:
    """The command line for the Gemini API stand-in (LOCAL_MODEL=standin)."""
    return [python, "-m", "tools.gemini_standin", "--host", "127.0.0.1", "--port", str(port),
            "--record", str(record_path)]


def model_label(env: Mapping[str, str]) -> str:
    """What reads free text, in words, for the banner (Settings decides the same way)."""
    mode = env.get("LOCAL_MODEL", "").strip().lower()
    if mode == "offline":
        return "offline router (LOCAL_MODEL=offline)"
    if mode == "standin":
        return f"Gemini stand-in at {env.get('GOOGLE_GEMINI_BASE_URL')} (LOCAL_MODEL=standin; not Gemini)"
    if env.get("GOOGLE_GENAI_USE_VERTEXAI", "").strip().lower() in ("true", "1"):
        return "Gemini on Vertex AI (application default credentials)"
    if env.get("GEMINI_API_KEY"):
        return "Gemini (GEMINI_API_KEY set)"
    return "offline router (no GEMINI_API_KEY)"


def start_child(name: str, argv: list[str], port: int, env: Mapping[str, str], run_dir: Path,
                cwd: Path = REPO) -> Child:
    """Start one child in its own session (Ctrl-C reaches only us), logging to ``run_dir/<name>.log``;
    the previous run's log, if any, becomes ``<name>.log.1`` (one generation, as logrotate names it),
    so a restart after a failure keeps what the failed run wrote.

    A ``python -m MODULE …`` command for this very interpreter (``make run`` runs the devserver with
    the venv's) is forked from a fork server that has imported the third-party libraries once
    (``tools.function_process.start_preloaded_module``): the same module, arguments, environment,
    working directory, session and log, without paying a new interpreter's imports (about 1.5 s of
    CPU each, mostly line-bot-sdk's models) once per child. Any other command is started as is.

    Raises:
        StartupError: the port is already in use.
    """
    if not port_is_free(port):
        raise StartupError(f"{name}: port {port} is already in use "
                           f"(another `make run`? set {PORT_VARIABLES[name][0]} to move it)")
    log_path = run_dir / f"{name}.log"
    if log_path.exists() and log_path.stat().st_size:  # the last run's log, kept for one more run
        log_path.replace(log_path.with_name(log_path.name + ".1"))
    if len(argv) > 2 and argv[0] == sys.executable and argv[1] == "-m":
        from tools.function_process import start_module

        return Child(name, port, log_path, start_module(argv[2], argv[3:], dict(env), cwd, log_path, preloaded=True))
    with log_path.open("wb") as log:
        process = subprocess.Popen(argv, cwd=cwd, env=dict(env), stdin=subprocess.DEVNULL, stdout=log,
                                   stderr=subprocess.STDOUT, start_new_session=True)
    return Child(name, port, log_path, process)


def apply_richmenu(python: str, config: DevConfig) -> subprocess.Popen:
    """Put LOCAL's rich menu on the stand-in, as ``make richmenu`` puts it on a channel, in the
    background (drawing it takes about a second of CPU): ``python -m tools.richmenu apply`` against the
    stand-in with the dev token, logging to ``run_dir/richmenu.log``. The chat page shows the menu once
    it is set; without the CJK font the log says so and the page shows none. ``LOCAL_RICHMENU=0`` skips
    it (docs/configuration.md). Returns the started process; ``run`` ends it on exit if still running.
    """
    log_path = config.run_dir / "richmenu.log"
    with log_path.open("wb") as log:
        return subprocess.Popen([python, "-m", "tools.richmenu", "apply"], cwd=REPO, env=dict(config.env),
                                stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                start_new_session=True)


def log_tail(path: Path, lines: int = LOG_TAIL_LINES) -> str:
    """The last ``lines`` lines of a log file ('' if unreadable)."""
    try:
        return "\n".join(path.read_text(encoding="utf-8", errors="replace").splitlines()[-lines:])
    except OSError:
        return ""


def wait_until_ready(children: list[Child], timeout_s: float = START_TIMEOUT_SECONDS) -> None:
    """Wait until every child's port accepts a TCP connection.

    Raises:
        StartupError: a child exited first (message ends with its log tail) or
            ``timeout_s`` seconds passed.
    """
    deadline = time.monotonic() + timeout_s
    waiting = list(children)
    while waiting:
        for child in list(waiting):
            code = child.process.poll()
            if code is not None:
                raise StartupError(f"{child.name} exited with status {code} while starting; "
                                   f"{child.log_path}:\n{log_tail(child.log_path)}")
            try:
                socket.create_connection(("127.0.0.1", child.port), timeout=0.2).close()
                waiting.remove(child)
            except OSError:
                pass
        if waiting and time.monotonic() > deadline:
            names = ", ".join(c.name for c in waiting)
            tails = "\n".join(f"--- {c.log_path}\n{log_tail(c.log_path)}" for c in waiting)
            raise StartupError(f"not listening after {timeout_s:.0f} s: {names}\n{tails}")
        if waiting:
            time.sleep(0.1)


def stop_children(children: list[Child], grace_s: float = STOP_GRACE_SECONDS) -> None:
    """SIGTERM every child's process group, then SIGKILL those still alive after ``grace_s``."""
    for child in children:
        _signal_group(child, signal.SIGTERM)
    deadline = time.monotonic() + grace_s
    for child in children:
        try:
            child.process.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            _signal_group(child, signal.SIGKILL)
            child.process.wait()


def _signal_group(child: Child, signum: int) -> None:
    if child.process.poll() is not None:
        return
    try:
        os.killpg(child.process.pid, signum)  # its own session: pgid == pid (gunicorn + workers)
    except ProcessLookupError:
        pass


#: Set once stopping has begun: every later stop signal is a no-op (``_raise_interrupt``).
_STOPPING = threading.Event()


def _raise_interrupt(signum: int, frame: object) -> None:
    """The first stop signal raises KeyboardInterrupt; any later one (``timeout`` and make both
    signalling, a second Ctrl-C) returns at once, so it cannot cut the cleanup short."""
    if _STOPPING.is_set():
        return
    _STOPPING.set()
    raise KeyboardInterrupt


STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def _stop_on_signals() -> None:
    """Make Ctrl-C, SIGTERM and a closed terminal (SIGHUP) each stop every child, then exit.

    Set explicitly, not inherited: a shell starts a background job (``make run &`` in a script)
    with SIGINT ignored, and Python then never raises KeyboardInterrupt, so a later ``kill -INT``
    would stop make but leave the functions serving. The children run in their own sessions, so a
    signal to the devserver's group never reaches them; ``stop_children`` does.
    """
    for signum in STOP_SIGNALS:
        signal.signal(signum, _raise_interrupt)


def _ignore_interrupts() -> None:
    try:
        for signum in STOP_SIGNALS:
            signal.signal(signum, signal.SIG_IGN)
    except ValueError:  # not the main thread (e.g. under a test runner thread)
        pass


def _banner(config: DevConfig, children: list[Child], mode: str, stream: IO[str]) -> None:
    env = config.env
    rows = [(c.name, c.url) for c in children if c.name not in STANDINS + ("chatpage",)]
    rows += [("chat page", f"{c.url}  (open in a browser: residents and the staff group)")
             for c in children if c.name == "chatpage"]
    if config.start_standin:
        rows.append(("LINE API", f"{env['LINE_API_BASE_URL']}  (stand-in; calls in "
                                 f"{config.run_dir / 'line-calls.jsonl'})"))
    else:
        rows.append(("LINE API", f"{env['LINE_API_BASE_URL']}  (external: replies cannot be shown here)"))
    rows.append(("store", str(config.store_path or env["LOCAL_STORE_URL"])))
    rows.append(("model", model_label(env)))
    rows.append(("logs", f"{config.run_dir / '<name>.log'}  (the previous run's: <name>.log.1)"))
    rows.append(("quit", {"interactive": "/quit, Ctrl-D or Ctrl-C", "headless": "end of input (EOF) or Ctrl-C",
                          "serve-only": "Ctrl-C or SIGTERM"}[mode]))
    print(f"LOCAL on loopback ({mode})", file=stream)
    for label, value in rows:
        print(f"  {label:<10} {value}", file=stream)
    stream.flush()


def choose_mode(env: Mapping[str, str], start_standin: bool, stdin_is_tty: bool) -> str:
    """Pick "interactive", "headless" or "serve-only" (see the module docstring)."""
    if env.get("LOCAL_SERVE_ONLY") == "1" or not start_standin:
        return "serve-only"
    if env.get("LOCAL_HEADLESS") == "1":
        return "headless"
    return "interactive" if stdin_is_tty else "serve-only"


def _serve_only(config: DevConfig, children: list[Child]) -> int:
    urls = {c.name.replace("-", "_"): c.url for c in children}
    print(json.dumps({"mode": "serve-only", **urls, "line_api": config.env["LINE_API_BASE_URL"],
                      "store": str(config.store_path or config.env["LOCAL_STORE_URL"]),
                      "logs": str(config.run_dir)}, ensure_ascii=False), flush=True)
    while True:
        for child in children:
            code = child.process.poll()
            if code is not None:
                print(f"devserver: {child.name} exited with status {code}; {child.log_path}:\n"
                      f"{log_tail(child.log_path)}", file=sys.stderr)
                return 1
        time.sleep(0.5)


def hold_run_dir(run_dir: Path):
    """Take ``run_dir``'s lock for this process (``fcntl.flock``, released when the process ends).

    Returns:
        The open lock file (keep it open), or None when another ``make run`` holds the directory:
        its logs, call records and store would be shared, so the caller stops instead.
    """
    import fcntl

    handle = open(run_dir / "devserver.lock", "a+")
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.seek(0)
        holder = handle.read().strip() or "?"
        handle.close()
        print(f"devserver: another make run (pid {holder}) is using {run_dir}; stop it first, or run the "
              "second one with its own LOCAL_RUN_DIR and ports (docs/configuration.md)", file=sys.stderr)
        return None
    handle.seek(0)
    handle.truncate()
    handle.write(str(os.getpid()))
    handle.flush()
    return handle


def run(config: DevConfig, functions_dir: Path, timeout_s: float) -> int:
    """Start everything for ``config``, run the chosen mode, and always stop the children.

    Returns 2 at once, starting nothing, when another ``make run`` holds ``config.run_dir``.
    """
    config.run_dir.mkdir(parents=True, exist_ok=True)
    lock = hold_run_dir(config.run_dir)
    if lock is None:
        return 2
    if config.store_path is not None:
        config.store_path.parent.mkdir(parents=True, exist_ok=True)
    mode = choose_mode(config.env, config.start_standin, sys.stdin.isatty())
    python = venv_python()
    children: list[Child] = []
    helpers: list[subprocess.Popen] = []
    try:
        _start_children(config, python, functions_dir, children)
        wait_until_ready(children, timeout_s)
        if config.start_standin and config.env.get("LOCAL_RICHMENU", "1") != "0":
            helpers.append(apply_richmenu(python, config))
        _banner(config, children, mode, sys.stderr)
        return _serve(config, children, mode)
    except StartupError as exc:
        print(f"devserver: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 0
    finally:
        _STOPPING.set()  # a signal from here on stops nothing short (see _raise_interrupt)
        _ignore_interrupts()
        _stop_all(children, helpers)


def _start_children(config: DevConfig, python: str, functions_dir: Path, children: list[Child]) -> None:
    """Start the stand-ins ``config`` asks for (LINE's with the chat page, Gemini's), then every
    function of ``FUNCTIONS``, each appended to ``children`` as it starts (so that ``run`` stops those
    started when a later one fails). Ports from ``config.ports``.

    Raises:
        StartupError: a child could not be started.
    """
    if config.start_standin:
        port = config.ports["line-standin"]
        children.append(start_child("line-standin", standin_argv(python, port,
                                    config.run_dir / "line-calls.jsonl"), port, config.env, config.run_dir))
        port = config.ports["chatpage"]  # the page reads what LOCAL sent from this stand-in
        children.append(start_child("chatpage", chatpage_argv(python, port, config.ports["webhook"],
                                    config.ports["line-standin"]), port, config.env, config.run_dir))
    if config.start_gemini_standin:
        port = config.ports["gemini-standin"]
        children.append(start_child("gemini-standin", gemini_standin_argv(
            python, port, config.run_dir / "gemini-calls.jsonl"), port, config.env, config.run_dir))
    for name in FUNCTIONS:
        port = config.ports[name]
        children.append(start_child(name, function_argv(python, functions_dir, name, port), port,
                                    config.env, config.run_dir))


def _serve(config: DevConfig, children: list[Child], mode: str) -> int:
    """With everything up: serve only (``mode`` "serve-only", saying why on stderr), or run the chat
    (``tools.chat``, interactive or ``headless``) against the webhook. Returns the exit status."""
    if not config.start_standin:
        print("devserver: LINE_API_BASE_URL is set, so no stand-in runs and the chat cannot show "
              "replies; serving only.", file=sys.stderr)
    if mode == "serve-only":
        if config.start_standin and config.env.get("LOCAL_SERVE_ONLY") != "1":
            print("devserver: standard input is not a terminal, so no chat reads it: serving only. "
                  "For a script, run with LOCAL_HEADLESS=1 (one JSON object per line).", file=sys.stderr)
        return _serve_only(config, children)
    from tools import chat  # the chat (and line-bot-sdk's webhook models) only when a chat runs

    session = chat.ChatSession(f"http://127.0.0.1:{config.ports['webhook']}/",
                               config.env["LINE_CHANNEL_SECRET"],
                               standin_url=f"http://127.0.0.1:{config.ports['line-standin']}",
                               staff_group_id=config.env.get("LOCAL_STAFF_GROUP_ID"))
    return chat.run_headless(session) if mode == "headless" else chat.run_interactive(session)


def _stop_all(children: list[Child], helpers: list[subprocess.Popen]) -> None:
    """Kill the helpers still running (the rich-menu upload) and wait for them, then stop the
    children (``stop_children``), again if a Ctrl-C that slipped in interrupts it."""
    for helper in helpers:
        if helper.poll() is None:
            helper.kill()
        helper.wait()
    while True:  # one that slipped in before interrupts were ignored stops stop_children: go again
        try:
            stop_children(children)
            break
        except KeyboardInterrupt:
            continue


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``python -m tools.devserver`` (``make run``)."""
    parser = argparse.ArgumentParser(prog="python -m tools.devserver", description=__doc__.splitlines()[0])
    parser.add_argument("--functions-dir", type=Path, default=REPO / "functions",
                        help="folder holding <name>/main.py for webhook, reconcile and memory")
    parser.add_argument("--start-timeout", type=float, default=START_TIMEOUT_SECONDS,
                        help="seconds to wait for every port to accept connections")
    args = parser.parse_args(argv)
    _stop_on_signals()
    try:
        config = build_env(os.environ)
    except StartupError as exc:
        print(f"devserver: {exc}", file=sys.stderr)
        return 2
    return run(config, args.functions_dir.resolve(), args.start_timeout)


if __name__ == "__main__":
    sys.exit(main())
