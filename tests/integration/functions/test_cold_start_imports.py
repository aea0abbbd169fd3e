"""Cold start: fixed entries and postbacks never load ADK or genai (docs/design.md §3)."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.conftest import REPO, case_bytes, line_body, postback_event, sign
from tools.function_process import run_preloaded

_PROBE = r"""
import importlib.util, json, sys
spec = importlib.util.spec_from_file_location("webhook_main", "functions/webhook/main.py")
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
statuses = []
for body, signature in json.loads(sys.stdin.read()):
    statuses.append(module._service().handle(body, signature).status)
heavy = sorted({name.split(".")[0] + "." + name.split(".")[1] for name in sys.modules
                if name.startswith(("google.adk", "google.genai", "google.cloud.firestore", "google.cloud.tasks"))})
print(json.dumps({"statuses": statuses, "heavy": heavy}))
"""


@pytest.mark.slow
def test_cold_start_fixed_entry_and_postback_load_no_model(base_env, line_standin):
    bodies = [case_bytes("text-menu.json"), line_body(postback_event("menu:places")),
              case_bytes("text-places-huatan.json")]
    payload = json.dumps([[b.decode(), sign(b)] for b in bodies])
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LINE_", "LOCAL_"))}
    env.update(base_env)
    out = subprocess.run([sys.executable, "-c", _PROBE], input=payload, capture_output=True, text=True,
                         cwd=REPO, env=env, timeout=60)
    assert out.returncode == 0, out.stderr[-2000:]
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["statuses"] == [200, 200, 200]
    assert result["heavy"] == []
    assert len([c for c in line_standin.calls() if c["path"] == "/v2/bot/message/reply"]) == 3


_IMPORT_PROBE = r"""
import importlib.util, json
spec = importlib.util.spec_from_file_location("webhook_main", "functions/webhook/main.py")
spec.loader.exec_module(importlib.util.module_from_spec(spec))
from shared import text
print(json.dumps({"opencc_built": text._converter.cache_info().currsize}))
"""


@pytest.mark.slow
def test_cold_start_import_builds_no_text_tables(base_env):
    # OpenCC's tables (about 40 MiB) are built on the first text read, never by an import: a module-level
    # table in reading form would make every cold start pay for them.
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LINE_", "LOCAL_"))}
    env.update(base_env)
    out = subprocess.run([sys.executable, "-c", _IMPORT_PROBE], capture_output=True, text=True, cwd=REPO, env=env,
                         timeout=60)
    assert out.returncode == 0, out.stderr[-2000:]
    assert json.loads(out.stdout.strip().splitlines()[-1]) == {"opencc_built": 0}


@pytest.mark.slow
def test_cold_start_missing_secret_is_a_clear_startup_error(base_env):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LINE_", "LOCAL_"))}
    env.update({k: v for k, v in base_env.items() if k != "LINE_CHANNEL_SECRET"})
    out = run_preloaded("functions/webhook/main.py", [], env, cwd=REPO, timeout_seconds=60)  # a fresh main.py
    assert out.returncode != 0
    assert "LINE_CHANNEL_SECRET is required" in out.stderr
