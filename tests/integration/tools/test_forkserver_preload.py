"""The fork server's preload (tools/forkserver_preload.py) keeps a forked function a new one.

A function forked from it must read its own environment, must not find ADK, genai or Google's
clients already imported (the webhook's cold start claim, docs/design.md §3), and the preload itself must
read none of LOCAL's variables nor start a thread, since whatever it did would be inherited by every
function the tests and ``make run`` start.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.conftest import REPO
from tools.function_process import run_preloaded

pytestmark = pytest.mark.slow

#: Module prefixes that a forked webhook must import itself, if ever (tests/functions/test_cold_start_imports.py).
HEAVY = ("google.adk", "google.genai", "google.cloud.firestore", "google.cloud.tasks")

_FORKED_PROBE = """
import json, sys
from shared.config import WEBHOOK_REQUIRED, Settings
settings = Settings.from_env(required=WEBHOOK_REQUIRED)
print(json.dumps({"tenant": settings.tenant_id, "secret_set": bool(settings.line_channel_secret),
                  "preloaded": "shared.webhook.service" in sys.modules,
                  "heavy": sorted(m for m in sys.modules if m.startswith(HEAVY))}))
""".replace("HEAVY", repr(HEAVY))


def _env(**values: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LINE_", "LOCAL_"))}
    return {**env, **values}


def test_forkserver_preload_forked_functions_read_their_own_environment_and_get_no_model(tmp_path):
    script = tmp_path / "probe.py"
    script.write_text(_FORKED_PROBE)
    seen = []
    for tenant in ("tenant-a", "tenant-b"):
        out = run_preloaded(str(script), [], _env(LINE_CHANNEL_SECRET="s", LINE_CHANNEL_ACCESS_TOKEN="t", LOCAL_TENANT_ID=tenant,
                                                  LOCAL_STORE_URL=f"sqlite:///{tmp_path}/s.sqlite3",
                                                  LOCAL_SIGNING_KEY="k"), cwd=REPO)
        assert out.returncode == 0, out.stderr[-2000:]
        seen.append(json.loads(out.stdout.strip().splitlines()[-1]))
    assert [s["tenant"] for s in seen] == ["tenant-a", "tenant-b"]
    assert all(s["secret_set"] and s["preloaded"] for s in seen)  # preloaded, yet configured by the child
    assert [s["heavy"] for s in seen] == [[], []]


_IMPORT_PROBE = """
import json, os, threading
read = []
class Spy(type(os.environ)):
    def __getitem__(self, key):
        read.append(key)
        return super().__getitem__(key)
    def __contains__(self, key):
        read.append(key)
        return super().__contains__(key)
spy = Spy(os.environ._data, os.environ.encodekey, os.environ.decodekey, os.environ.encodevalue,
          os.environ.decodevalue)
os.environ = spy  # os.getenv and os.environ.get go through it
import tools.forkserver_preload
print(json.dumps({"threads": threading.active_count(),
                  "local_reads": sorted({k for k in read if k.startswith(("LINE_", "LOCAL_", "MEMORY_", "RECONCILE_",
                                                                          "GEMINI_", "TDX_", "AGENT_"))})}))
"""


def test_forkserver_preload_reads_no_local_setting_and_starts_no_thread():
    env = _env(LINE_CHANNEL_SECRET="s", LOCAL_TENANT_ID="never-read", PYTHONDONTWRITEBYTECODE="1")
    out = subprocess.run([sys.executable, "-c", _IMPORT_PROBE], cwd=REPO, env=env, capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 0, out.stderr[-2000:]
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result == {"threads": 1, "local_reads": []}
