"""Keyed user hashes in logs (docs/design.md §2, §9): a user id alone does not find a resident's log
lines; the operator, who holds LOCAL_SIGNING_KEY, finds exactly theirs with ``make user-data``."""
from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys

import pytest
import requests

from shared.keys import SigningKeys, UserHasher
from tests.conftest import REPO, line_body, sign, text_event

ALICE = "U7a1e5b0c2d3f4a5b6c7d8e9f0a1b2c3d"
BOB = "Ub0b1b2b3b4b5b6b7b8b9babbbcbdbebf"


def _user_data(env: dict[str, str], user_id: str) -> dict:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("LINE_", "LOCAL_"))}
    clean.update({k: v for k, v in env.items() if k in ("LOCAL_STORE_URL", "LOCAL_TENANT_ID", "LOCAL_SIGNING_KEY")})
    out = subprocess.run([sys.executable, "-m", "tools.user_data", "--user-id", user_id], cwd=REPO, env=clean,
                         capture_output=True, text=True, timeout=60, check=False)
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout)


@pytest.mark.slow
def test_log_user_hash_operator_finds_exactly_one_residents_lines(start_function, base_env, line_standin):
    webhook = start_function("webhook", base_env)
    for user in (ALICE, BOB):
        body = line_body(text_event("我要預約", user_id=user))
        response = requests.post(webhook.url, data=body, timeout=10,
                                 headers={"Content-Type": "application/json", "X-Line-Signature": sign(body)})
        assert response.status_code == 200
    lines = [json.loads(line) for line in webhook.log_path.read_text().splitlines() if line.startswith("{")]
    assert lines and ALICE not in webhook.log_path.read_text()

    alice_hash = _user_data(base_env, ALICE)["log_user_hash"]
    alice_lines = [line for line in lines if line.get("user") == alice_hash]
    assert alice_lines, "the operator's hash must find the resident's lines"
    assert all(line.get("user") != alice_hash for line in lines if line not in alice_lines)
    assert _user_data(base_env, BOB)["log_user_hash"] != alice_hash

    # What someone with only the user id could try: the old unkeyed tag, or a guessed key.
    unkeyed = hashlib.sha256(("local-user:" + ALICE).encode()).hexdigest()[:16]
    guessed = UserHasher.from_keys(SigningKeys(b"wrong-key", 1))(ALICE)
    assert not [line for line in lines if line.get("user") in (unkeyed, guessed)]


def test_log_user_hash_without_signing_key_is_null_and_says_why(base_env):
    env = {k: v for k, v in base_env.items() if k != "LOCAL_SIGNING_KEY"}
    assert _user_data(env, ALICE)["log_user_hash"] is None


@pytest.mark.slow(seconds=2)
@pytest.mark.parametrize("function, required", [
    ("webhook", {"LINE_CHANNEL_SECRET": "s", "LINE_CHANNEL_ACCESS_TOKEN": "t"}),
    ("agent", {"LINE_CHANNEL_ACCESS_TOKEN": "t"}),
    ("memory", {}),
    ("reconcile", {"LINE_CHANNEL_ACCESS_TOKEN": "t"}),
    ("ingest", {"TDX_CLIENT_ID": "i", "TDX_CLIENT_SECRET": "s"}),
])
def test_log_user_hash_every_function_hashes_with_the_settings_key(function, required, tmp_path):
    """Each function process, once its main module is loaded, logs a user as the settings' key
    hashes them: the same in every process, so one resident's lines join across functions."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LINE_", "LOCAL_", "TDX_"))}
    env.update(required, LOCAL_STORE_URL=f"sqlite:///{tmp_path / 's.sqlite3'}", LOCAL_TENANT_ID="test-tenant",
               LOCAL_SIGNING_KEY="process-key", PYTHONPATH=str(REPO))
    code = (f"import runpy; runpy.run_path('functions/{function}/main.py'); "
            f"from shared.logs import hash_user; print(hash_user('{ALICE}'))")
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True,
                         timeout=120, check=False)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().splitlines()[-1] == UserHasher.from_keys(SigningKeys(b"process-key", 1))(ALICE)
