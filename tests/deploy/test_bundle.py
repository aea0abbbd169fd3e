"""``make bundle``: each dist/<function>/ holds only what that function reaches, installs offline
(uv's cache, no index) into a fresh venv, and answers over functions-framework."""
from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest
import requests

from tests.conftest import REPO, TEST_SECRET, TEST_TOKEN, case_bytes, sign
from tools import bundle
from tools.function_process import FunctionProcess

BUNDLE_VENVS = REPO / ".run" / "bundle-venvs"


@pytest.fixture(scope="module")
def dist(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    run = subprocess.run([sys.executable, "-m", "tools.bundle", "--out", str(out)], cwd=REPO,
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    return out


def _requirement_names(path: Path) -> set[str]:
    return {re.sub(r"[-_.]+", "-", m.lower()) for m in
            re.findall(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==", path.read_text(), re.M)}


def test_bundle_writes_one_directory_per_function(dist):
    assert sorted(p.name for p in dist.iterdir()) == bundle.all_functions()
    for fn in bundle.all_functions():
        assert (dist / fn / "main.py").read_bytes() == (REPO / "functions" / fn / "main.py").read_bytes()
        assert (dist / fn / "requirements.txt").is_file()
        assert not list((dist / fn).rglob("test*")), fn


def test_bundle_memory_needs_neither_line_sdk_nor_cloud_tasks_nor_adk(dist):
    names = _requirement_names(dist / "memory" / "requirements.txt")
    assert {"functions-framework", "google-cloud-firestore"} <= names
    assert not names & {"line-bot-sdk", "google-cloud-tasks", "google-adk", "google-genai", "pytest"}
    assert not (dist / "memory" / "shared" / "line" / "messaging.py").exists()
    assert not (dist / "memory" / "shared" / "queue" / "cloudtasks.py").exists()
    assert not (dist / "memory" / "data").exists()  # memory reads no snapshot


def test_bundle_only_the_agent_needs_adk(dist):
    for fn in bundle.all_functions():
        names = _requirement_names(dist / fn / "requirements.txt")
        if fn != "agent":  # the agent gets ADK once its model turn imports it (the bundle follows imports)
            assert not names & {"google-adk", "google-genai"}, fn
        assert not names & {"pytest", "hypothesis", "ruff", "mypy", "python-hcl2", "checkov"}, fn


def test_bundle_webhook_carries_its_snapshots_and_clients(dist):
    names = _requirement_names(dist / "webhook" / "requirements.txt")
    assert {"line-bot-sdk", "google-cloud-tasks", "google-cloud-firestore"} <= names
    for snapshot in ("townships.json", "places-catalog.json", "events-demo.json"):
        assert (dist / "webhook" / "data" / snapshot).read_bytes() == (REPO / "data" / snapshot).read_bytes()


def test_bundle_requirements_are_pinned_and_hashed_from_the_lock(dist):
    lock = bundle.lock_entries(REPO / "requirements.lock")
    for fn in bundle.all_functions():
        body = (dist / fn / "requirements.txt").read_text()
        entries = [e for e in re.split(r"\n(?=[A-Za-z0-9])", body) if not e.startswith("#")]
        assert entries
        for entry in entries:
            name = re.sub(r"[-_.]+", "-", entry.split("==")[0].lower())
            assert entry.strip() == lock[name], (fn, name)
            assert "--hash=sha256:" in entry, (fn, name)


def test_bundle_plan_follows_only_reached_lazy_imports(tmp_path):
    # A module whose two functions import two different packages lazily; the entry calls one.
    (tmp_path / "functions" / "f").mkdir(parents=True)
    (tmp_path / "shared").mkdir()
    (tmp_path / "data").mkdir()
    (tmp_path / "shared" / "__init__.py").write_text("")
    (tmp_path / "shared" / "pick.py").write_text(
        "def used():\n    import requests\n    return requests\n\n"
        "def unused():\n    import linebot\n    return linebot\n")
    (tmp_path / "functions" / "f" / "main.py").write_text(
        "from shared import pick\n\ndef f(request):\n    return pick.used()\n")
    planned = bundle.plan("f", root=tmp_path)
    assert "requests" in planned.distributions and "line-bot-sdk" not in planned.distributions
    assert planned.modules == ("shared", "shared.pick")


# --- bytecode ------------------------------------------------------------------------------------

#: What the image export writes as every file's modification time (buildpacks/lifecycle,
#: archive.NormalizedModTime): 1980-01-01T00:00:01Z.
EXPORTED_MTIME = datetime(1980, 1, 1, 0, 0, 1, tzinfo=UTC).timestamp()
#: PEP 552 flags word of a hash-based pyc whose hash the import system checks against the source.
CHECKED_HASH_FLAGS = 0b11


def test_bundle_ships_checked_hash_bytecode_for_the_runtime_python_beside_every_module(dist):
    assert bundle.RUNTIME == f"python{bundle.RUNTIME_PYTHON[0]}{bundle.RUNTIME_PYTHON[1]}"
    for fn in bundle.all_functions():
        sources = sorted((dist / fn).rglob("*.py"))
        assert len(sources) > 3, fn
        for source in sources:
            cached = Path(importlib.util.cache_from_source(str(source)))
            assert cached.name.endswith(f".cpython-{''.join(map(str, bundle.RUNTIME_PYTHON))}.pyc"), cached
            header = cached.read_bytes()[:16]
            assert header[:4] == importlib.util.MAGIC_NUMBER, cached
            assert int.from_bytes(header[4:8], "little") == CHECKED_HASH_FLAGS, cached
            assert header[8:16] == importlib.util.source_hash(source.read_bytes()), cached
        assert (dist / fn / ".gcloudignore").read_text().splitlines()[-1] == ".gcloudignore"


@pytest.mark.slow
def test_bundle_first_import_reads_bytecode_and_writes_none_after_the_image_export(dist, tmp_path):
    # The webhook's bundle as the runtime sees it: every file's time set as the image export sets it.
    app = tmp_path / "workspace"
    shutil.copytree(dist / "webhook", app)
    for path in app.rglob("*"):
        os.utime(path, (EXPORTED_MTIME, EXPORTED_MTIME))
    before = {p.relative_to(app): p.read_bytes() for p in app.rglob("*") if p.is_file()}
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "LINE_", "LOCAL_"))}
    env.update(LINE_CHANNEL_SECRET=TEST_SECRET, LINE_CHANNEL_ACCESS_TOKEN=TEST_TOKEN, LOCAL_TENANT_ID="bundle-test",
               LOCAL_STORE_URL=f"sqlite:///{tmp_path / 'w.sqlite3'}", LOCAL_SIGNING_KEY="bundle-signing-key")
    script = ("import json, sys; sys.path.insert(0, sys.argv[1]); import main; "
              "print(json.dumps({n: m.__spec__.origin for n, m in sys.modules.items() "
              "if getattr(getattr(m, '__spec__', None), 'origin', None)}))")
    run = subprocess.run([sys.executable, "-v", "-c", script, str(app)], cwd=app, env=env,
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-3000:]
    origins = json.loads(run.stdout.splitlines()[-1])
    ours = {name: origin for name, origin in origins.items() if origin.startswith(str(app))}
    assert {"main", "shared.webhook.service", "shared.config"} <= set(ours)
    assert not [n for n, o in origins.items() if o.startswith(str(REPO / "shared"))], "imported the repo's shared/"
    loaded = set(re.findall(r"^# code object from '?([^'\n]+)'?$", run.stderr, re.M))
    for name, origin in ours.items():
        assert importlib.util.cache_from_source(origin) in loaded, f"{name} was not read from its pyc"
        assert origin not in loaded, f"{name} was compiled from source"
    written = re.findall(r"^# (?:wrote|created) '?([^'\n]+)", run.stderr, re.M)
    assert not [w for w in written if w.startswith(str(app))]
    after = {p.relative_to(app): p.read_bytes() for p in app.rglob("*") if p.is_file()}
    assert after == before


@pytest.mark.slow
def test_bundle_bytecode_of_an_edited_source_is_not_used(dist, tmp_path):
    # Checked, not unchecked, hash-based pycs: a source changed after make bundle runs as changed.
    app = tmp_path / "workspace"
    shutil.copytree(dist / "memory", app)
    edited = app / "shared" / "identity.py"
    edited.write_text(edited.read_text() + "\nEDITED_AFTER_BUNDLE = True\n")
    script = "import sys; sys.path.insert(0, sys.argv[1]); import shared.identity as m; print(m.EDITED_AFTER_BUNDLE)"
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    run = subprocess.run([sys.executable, "-v", "-c", script, str(app)], cwd=app, env=env,
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stdout.split() == ["True"]
    loaded = set(re.findall(r"^# code object from '?([^'\n]+)'?$", run.stderr, re.M))
    assert str(edited) in loaded  # compiled from the edited source
    assert importlib.util.cache_from_source(str(app / "shared" / "__init__.py")) in loaded  # the rest from pycs


# --- install and run ---------------------------------------------------------------------------

UV = REPO / ".venv-uv" / "bin" / "uv"


def _bundle_venv(fn: str, requirements: Path) -> Path:
    """A fresh venv with exactly the bundle's requirements, installed offline in hash-checking mode.

    ``uv pip install --offline`` reads only uv's cache, which ``make venv`` filled from the same
    runtime lock: no index and no network, so the bundle's requirements.txt alone (every transitive
    pin with its hashes) must be enough, as it must be for Cloud Functions' build. Reused while the
    requirements are the same (a fresh clone builds it fresh)."""
    if not UV.exists():
        built = subprocess.run(["make", "venv"], cwd=REPO, capture_output=True, text=True)
        assert built.returncode == 0, built.stderr[-3000:]
    digest = hashlib.sha256(requirements.read_bytes()).hexdigest()[:16]
    venv = BUNDLE_VENVS / f"{fn}-{digest}"
    python = str(venv / "bin" / "python")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "UV_"))}
    env.update(UV_NO_CONFIG="1", UV_PYTHON_DOWNLOADS="never")  # hard links from the cache, as make venv
    if not (venv / ".installed").is_file():
        shutil.rmtree(venv, ignore_errors=True)
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
        install = subprocess.run(
            [str(UV), "pip", "install", "--quiet", "--offline", "--no-progress", "--compile-bytecode",
             "--python", python, "--require-hashes", "-r", str(requirements)],
            capture_output=True, text=True, env=env)
        assert install.returncode == 0, install.stderr[-3000:]
        (venv / ".installed").write_text(digest)
    frozen = subprocess.run([str(UV), "pip", "freeze", "--python", python], capture_output=True, text=True,
                            check=True, env=env).stdout
    installed = {re.sub(r"[-_.]+", "-", line.split("==")[0].lower()) for line in frozen.splitlines() if "==" in line}
    assert installed == _requirement_names(requirements), fn
    return venv


def _start(fn: str, dist: Path, env: dict[str, str], tmp_path: Path) -> FunctionProcess:
    venv = _bundle_venv(fn, dist / fn / "requirements.txt")
    child = {k: v for k, v in os.environ.items()
             if not k.startswith(("LINE_", "LOCAL_", "PYTHON", "RECONCILE_", "MEMORY_"))}
    child.update(env)
    return FunctionProcess(fn, child, tmp_path / f"{fn}.log", python=str(venv / "bin" / "python"),
                           source=dist / fn / "main.py", cwd=dist / fn, start_timeout_seconds=120,
                           module="functions_framework")  # as deployed


@pytest.mark.slow
def test_bundle_webhook_installs_offline_and_answers_a_signed_entry(dist, tmp_path, line_standin):
    body = case_bytes("text-menu.json")
    proc = _start("webhook", dist, {
        "LINE_CHANNEL_SECRET": TEST_SECRET, "LINE_CHANNEL_ACCESS_TOKEN": TEST_TOKEN,
        "LINE_API_BASE_URL": line_standin.url, "LOCAL_STORE_URL": f"sqlite:///{tmp_path / 'w.sqlite3'}",
        "LOCAL_TENANT_ID": "bundle-test", "LOCAL_SIGNING_KEY": "bundle-signing-key"}, tmp_path)
    try:
        answer = requests.post(proc.url, data=body, timeout=30, headers={
            "Content-Type": "application/json", "X-Line-Signature": sign(body)})
        assert answer.status_code == 200, proc.log_path.read_text()[-2000:]
        token = json.loads(body)["events"][0]["replyToken"]
        assert line_standin.wait_for(lambda c: c["path"] == "/v2/bot/message/reply"
                                     and c["body"].get("replyToken") == token, timeout_s=10)
        bad = requests.post(proc.url, data=body, timeout=30, headers={"X-Line-Signature": sign(body, "other")})
        assert bad.status_code == 400
    finally:
        proc.stop()


@pytest.mark.slow
def test_bundle_memory_installs_offline_and_answers_an_authenticated_body(dist, tmp_path):
    proc = _start("memory", dist, {"LOCAL_STORE_URL": f"sqlite:///{tmp_path / 'm.sqlite3'}",
                                   "LOCAL_TENANT_ID": "bundle-test", "LOCAL_SIGNING_KEY": "bundle-signing-key",
                                   "LOCAL_INTERNAL_TOKEN": "bundle-internal-token"}, tmp_path)
    try:
        body = {"tenant_id": "bundle-test", "user_id": "U" + "0" * 32, "token": "not-a-card"}
        assert requests.post(proc.url, json=body, timeout=30).status_code == 401
        answer = requests.post(proc.url, json=body, timeout=30,
                               headers={"Authorization": "Bearer bundle-internal-token"})
        assert answer.status_code == 200, proc.log_path.read_text()[-2000:]
        assert answer.json()["outcome"] == "invalid_memory_card"
    finally:
        proc.stop()


@pytest.mark.slow
def test_bundle_reconcile_installs_offline_and_answers_an_authenticated_body(dist, tmp_path):
    proc = _start("reconcile", dist, {
        "LINE_CHANNEL_ACCESS_TOKEN": TEST_TOKEN, "LINE_API_BASE_URL": "http://127.0.0.1:9",
        "LOCAL_STORE_URL": f"sqlite:///{tmp_path / 'r.sqlite3'}", "LOCAL_TENANT_ID": "bundle-test",
        "LOCAL_INTERNAL_TOKEN": "bundle-internal-token", "RECONCILE_FUNCTION_URL": "http://127.0.0.1:9/"}, tmp_path)
    try:
        sweep = {"kind": "handoff_sweep"}  # the scheduler's call (infra/tasks.tf)
        assert requests.post(proc.url, json=sweep, timeout=30).status_code == 401
        answer = requests.post(proc.url, json=sweep, timeout=30,
                               headers={"Authorization": "Bearer bundle-internal-token"})
        assert answer.status_code == 200, proc.log_path.read_text()[-2000:]
        assert answer.json()["outcome"] == "swept"
    finally:
        proc.stop()
