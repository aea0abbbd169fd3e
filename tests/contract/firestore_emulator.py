"""Google's Firestore emulator on loopback, for the store contract suite and ``.ci/run``.

Standard library only, so ``.ci/run`` can run it with the system ``python3`` before ``.venv``
exists. The emulator comes with the Google Cloud CLI (``gcloud emulators firestore start``, the
``cloud-firestore-emulator`` component, Java); it is on the Debian 12 machine image and absent on
Debian 13, where the Firestore tests skip.

gcloud runs with a throw-away ``CLOUDSDK_CONFIG`` (no account, no credentials), prompts, update
checks, usage reporting and the GCE metadata probe off, so starting the emulator touches nothing
but loopback.

As a command (``.ci/run``)::

    python3 tests/contract/firestore_emulator.py serve

prints one line on stdout, ``FIRESTORE_EMULATOR_HOST=127.0.0.1:PORT`` once the emulator answers,
or ``unavailable: <reason>``; it stops the emulator when its stdin closes or on SIGTERM/SIGINT.
"""
from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import requests

START_TIMEOUT_SECONDS = 60.0
NOT_INSTALLED = "Firestore emulator not installed on this machine image"
_JAR = Path("platform", "cloud-firestore-emulator", "cloud-firestore-emulator.jar")
_QUIET_GCLOUD = {
    "CLOUDSDK_CORE_DISABLE_PROMPTS": "1",
    "CLOUDSDK_COMPONENT_MANAGER_DISABLE_UPDATE_CHECK": "1",
    "CLOUDSDK_CORE_DISABLE_USAGE_REPORTING": "true",
    "CLOUDSDK_CORE_CHECK_GCE_METADATA": "false",
}

#: JVM options for an emulator that serves one test run (unless JAVA_TOOL_OPTIONS is set): the
#: client compiler only and the serial collector. The emulator answers the same; its JVM spent
#: 3.5 s of CPU instead of 6.1 s over the Firestore tests on this 2-core machine, where the server
#: compiler's and the parallel collector's threads compete with the tests for the cores.
#: (JDK tool reference: https://docs.oracle.com/en/java/javase/17/docs/specs/man/java.html)
_SHORT_RUN_JVM = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"


class EmulatorError(RuntimeError):
    """The emulator is installed but did not start or answer in time; not retryable here."""


def find_gcloud() -> str | None:
    """Path of ``gcloud`` when it, Java and the Firestore emulator component are installed."""
    gcloud, java = shutil.which("gcloud"), shutil.which("java")
    if not gcloud or not java:
        return None
    sdk_root = Path(os.path.realpath(gcloud)).parent.parent  # <sdk>/bin/gcloud
    return gcloud if (sdk_root / _JAR).is_file() else None


def answers(host: str, timeout_seconds: float = 1.0) -> bool:
    """True when the emulator at ``host`` (``127.0.0.1:PORT``) answers its root page with 200."""
    with requests.Session() as session:
        session.trust_env = False  # loopback, never a proxy
        try:
            return session.get(f"http://{host}/", timeout=timeout_seconds).status_code == 200
        except requests.RequestException:
            return False


def wait_until_answers(host: str, timeout_seconds: float, proc: subprocess.Popen | None = None) -> None:
    """Poll every 0.1 s. Raises EmulatorError when ``proc`` exits or the timeout passes."""
    deadline = time.monotonic() + timeout_seconds
    while time.monotonic() < deadline:
        if answers(host, timeout_seconds=0.5):
            return
        if proc is not None and proc.poll() is not None:
            raise EmulatorError(f"emulator exited with status {proc.returncode}")
        time.sleep(0.1)
    raise EmulatorError(f"emulator at {host} did not answer within {timeout_seconds:.0f} s")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Emulator:
    """One emulator process group on a free loopback port.

    Args:
        gcloud: path from ``find_gcloud()``.
    """

    def __init__(self, gcloud: str):
        self.gcloud = gcloud
        self.host = ""
        self.started_seconds = 0.0
        self._proc: subprocess.Popen | None = None
        self._dir = tempfile.mkdtemp(prefix="firestore-emulator-")

    def start(self, timeout_seconds: float = START_TIMEOUT_SECONDS) -> str:
        """Start and wait until it answers; returns ``127.0.0.1:PORT``.

        Raises:
            EmulatorError: it exited or did not answer within ``timeout_seconds``; it is stopped,
                and the message's first line says why, the next ones end its log.
        """
        t0 = time.monotonic()
        self.host = f"127.0.0.1:{_free_port()}"
        env = {"JAVA_TOOL_OPTIONS": _SHORT_RUN_JVM, **os.environ, **_QUIET_GCLOUD,
               "CLOUDSDK_CONFIG": os.path.join(self._dir, "gcloud")}
        with open(self.log_path, "wb") as log:
            self._proc = subprocess.Popen(
                [self.gcloud, "emulators", "firestore", "start", f"--host-port={self.host}"],
                stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, env=env,
                start_new_session=True,  # its own process group: gcloud → bash → java
            )
        try:
            wait_until_answers(self.host, timeout_seconds, self._proc)
        except EmulatorError as exc:
            tail = self.log_tail()
            self.stop()
            raise EmulatorError(f"{exc}\nlog tail:\n{tail}") from None
        self.started_seconds = time.monotonic() - t0
        return self.host

    @property
    def pid(self) -> int:
        """The process id (and group id) of the started emulator; 0 when not started."""
        return self._proc.pid if self._proc is not None else 0

    @property
    def directory(self) -> str:
        """Its temporary directory (gcloud config, log), removed by ``stop``."""
        return self._dir

    @property
    def log_path(self) -> str:
        return os.path.join(self._dir, "emulator.log")

    def log_tail(self, lines: int = 20) -> str:
        try:
            return "\n".join(Path(self.log_path).read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""

    def stop(self) -> None:
        """SIGTERM the process group, SIGKILL after 10 s; remove the temporary directory."""
        proc, self._proc = self._proc, None
        if proc is not None and proc.poll() is None:
            try:
                os.killpg(proc.pid, signal.SIGTERM)
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=10)
            except ProcessLookupError:
                pass
        if proc is not None:
            try:  # the java grandchild may outlive gcloud for a moment
                os.killpg(proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        shutil.rmtree(self._dir, ignore_errors=True)


def stop_group(pid: int, directory: str, grace_seconds: float = 10.0) -> None:
    """``Emulator.stop`` from a process other than its parent (pytest-xdist's controller stops the
    emulator a worker started): SIGTERM the process group, SIGKILL whatever is left after
    ``grace_seconds``, and remove its temporary directory."""
    try:
        os.killpg(pid, signal.SIGTERM)
        deadline = time.monotonic() + grace_seconds
        while time.monotonic() < deadline:
            os.killpg(pid, 0)  # raises ProcessLookupError once the whole group is gone
            time.sleep(0.1)
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    shutil.rmtree(directory, ignore_errors=True)


def _serve() -> int:
    """Print the one status line, then hold until stdin closes (always, so that a shell coprocess
    can read the line before this process goes away)."""
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    gcloud = find_gcloud()
    emulator = Emulator(gcloud) if gcloud else None
    try:
        if emulator is None:
            print(f"unavailable: {NOT_INSTALLED}", flush=True)
        else:
            try:
                host = emulator.start()
            except EmulatorError as exc:
                print(f"unavailable: {str(exc).splitlines()[0]}", flush=True)
                print(exc, file=sys.stderr)
            else:
                print(f"FIRESTORE_EMULATOR_HOST={host}", flush=True)
                print(f"Firestore emulator on {host}, started in {emulator.started_seconds:.1f} s",
                      file=sys.stderr)
        sys.stdin.read()
    except KeyboardInterrupt:
        pass
    finally:
        if emulator is not None:
            emulator.stop()
    return 0


if __name__ == "__main__":
    if sys.argv[1:] != ["serve"]:
        sys.exit("usage: python3 tests/contract/firestore_emulator.py serve")
    sys.exit(_serve())
