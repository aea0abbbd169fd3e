"""make run stops every child it started on each stop signal, even when its caller ignored SIGINT.

A shell script that runs ``make run &`` starts it with SIGINT ignored; Ctrl-C (SIGINT)
sent to the group then ends make; the devserver must not stay, with the five services still serving.
The children run in their own sessions, so only the devserver's own cleanup can stop them.
"""
from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time

import pytest

from tests.conftest import free_run_ports
from tools.demo import wait_until
from tools.devserver import PORT_VARIABLES, REPO
from tools.function_process import free_port

pytestmark = pytest.mark.slow



def _listening(port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(1.0)
        return sock.connect_ex(("127.0.0.1", port)) == 0


def _ignore_sigint() -> None:  # what `cmd &` in a non-interactive shell does to the job
    signal.signal(signal.SIGINT, signal.SIG_IGN)


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP], ids=lambda s: s.name)
def test_devserver_stop_signals_raise_keyboard_interrupt_even_when_inherited_ignored(signum):
    code = ("import os, signal, sys\n"
            "from tools.devserver import _stop_on_signals\n"
            "_stop_on_signals()\n"
            "try:\n"
            f"    os.kill(os.getpid(), {int(signum)}); signal.pause()\n"
            "except KeyboardInterrupt:\n"
            "    sys.exit(7)\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, preexec_fn=_ignore_sigint, timeout=60,
                          capture_output=True, text=True)
    assert done.returncode == 7, done.stderr[-1000:]


def test_devserver_later_stop_signals_do_not_interrupt_the_cleanup():
    # `timeout 90 make run` signals the devserver twice (timeout and make); a second
    # KeyboardInterrupt must not cut the cleanup short and leave services up. Only the first raises.
    code = ("import os, signal, sys\n"
            "from tools.devserver import _stop_on_signals\n"
            "_stop_on_signals()\n"
            "try:\n"
            "    os.kill(os.getpid(), signal.SIGTERM); signal.pause()\n"
            "except KeyboardInterrupt:\n"
            "    pass\n"
            "for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGTERM):\n"
            "    os.kill(os.getpid(), signum)\n"
            "sys.exit(7)\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, timeout=60, capture_output=True, text=True)
    assert done.returncode == 7, done.stderr[-1000:]


def test_devserver_sigint_with_sigint_ignored_then_a_burst_of_signals_stops_every_child(tmp_path):
    signum = signal.SIGINT  # the trial's case; the other signals take the same path (test above)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LINE_", "LOCAL_", "GOOGLE_", "GEMINI_"))}
    env.update(free_run_ports())
    # what it serves: every port but the Gemini stand-in's, which starts only with LOCAL_MODEL=standin
    ports = {variable: int(env[variable]) for name, (variable, _) in PORT_VARIABLES.items() if name != "gemini-standin"}
    env.update(LOCAL_SERVE_ONLY="1", LOCAL_STORE_URL=f"sqlite:///{tmp_path / 'run.sqlite3'}",
               LOCAL_RUN_DIR=str(tmp_path / "run"))
    server = subprocess.Popen([sys.executable, "-m", "tools.devserver", "--start-timeout", "60"], cwd=REPO,
                              env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                              preexec_fn=_ignore_sigint)
    try:
        ready = json.loads(server.stdout.readline())  # printed once every port accepts connections
        assert ready["mode"] == "serve-only"
        assert all(_listening(port) for port in ports.values())
        server.send_signal(signum)
        for _ in range(5):  # more stop signals while it stops its children (as timeout and make send them)
            time.sleep(0.02)
            if server.poll() is None:
                server.send_signal(signal.SIGTERM)
        assert server.wait(timeout=60) == 0
        # A child killed after the grace period may take a moment to close its socket on a loaded
        # machine: wait for the ports to close (the claim is that every child stops), then check.
        wait_until(lambda: not any(_listening(port) for port in ports.values()), 30)
        still_serving = [name for name, port in ports.items() if _listening(port)]
        assert still_serving == []
    finally:
        if server.poll() is None:  # the claim failed: SIGTERM still lets the devserver stop its children
            server.terminate()
            try:
                server.wait(timeout=30)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()


def test_devserver_child_forked_from_the_preloaded_server_is_like_python_dash_m(tmp_path):
    """make run forks `python -m MODULE ARGS` from the fork server (tools.devserver.start_child): the
    child sees the command's module and arguments, its own environment and working directory, sits in
    its own session (the stop signals reach its whole group), reads stdin from /dev/null, writes to
    its log, and its exit status is the module's."""
    from tools.devserver import start_child

    (tmp_path / "probe_module.py").write_text(
        "import json, os, sys\n"
        "print(json.dumps({'argv': sys.argv[1:], 'cwd': os.getcwd(), 'seen': os.environ.get('PROBE'),\n"
        "                  'own_session': os.getsid(0) == os.getpid(), 'stdin': sys.stdin.read(),\n"
        "                  'path0': sys.path[0]}), flush=True)\n"
        "sys.exit(3)\n")
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    port = free_port()
    child = start_child("line-standin", [sys.executable, "-m", "probe_module", "--port", str(port)], port,
                        {"PROBE": "seen", "PATH": os.environ.get("PATH", "")}, run_dir, cwd=tmp_path)
    assert child.process.wait(timeout=60) == 3
    assert child.process.pid != os.getpid()
    [line] = [json.loads(x) for x in child.log_path.read_text().splitlines() if x.startswith("{")]
    assert line == {"argv": ["--port", str(port)], "cwd": str(tmp_path), "seen": "seen", "own_session": True,
                    "stdin": "", "path0": str(tmp_path)}


def test_devserver_child_of_another_interpreter_is_started_as_a_command(tmp_path):
    from tools.devserver import start_child

    run_dir = tmp_path / "run"
    run_dir.mkdir()
    port = free_port()
    child = start_child("line-standin", ["/bin/sh", "-c", "echo started as a command; exit 4"], port, {}, run_dir)
    assert isinstance(child.process, subprocess.Popen)
    assert child.process.wait(timeout=60) == 4 and "started as a command" in child.log_path.read_text()


def test_devserver_child_log_of_the_previous_run_is_kept_one_generation(tmp_path):
    """A restart after a failure must not wipe what the failed run wrote: the
    new run writes ``<name>.log``, the last one is ``<name>.log.1``, and the one before is gone."""
    from tools.devserver import start_child

    run_dir = tmp_path / "run"
    run_dir.mkdir()
    for run in ("first", "second", "third"):
        child = start_child("line-standin", ["/bin/sh", "-c", f"echo {run} run"], free_port(), {}, run_dir)
        assert child.process.wait(timeout=60) == 0
    assert (run_dir / "line-standin.log").read_text() == "third run\n"
    assert (run_dir / "line-standin.log.1").read_text() == "second run\n"
    assert sorted(p.name for p in run_dir.iterdir()) == ["line-standin.log", "line-standin.log.1"]
    # an empty log (a run that wrote nothing) does not push the last one out
    (run_dir / "line-standin.log").write_text("")
    child = start_child("line-standin", ["/bin/sh", "-c", "echo fourth run"], free_port(), {}, run_dir)
    assert child.process.wait(timeout=60) == 0
    assert (run_dir / "line-standin.log.1").read_text() == "second run\n"
