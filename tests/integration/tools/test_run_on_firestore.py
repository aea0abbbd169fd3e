"""``make run`` on Firestore: LOCAL_STORE_URL=firestore://… with FIRESTORE_EMULATOR_HOST (Google's
emulator; skipped where the machine image has none), headless, answering like on SQLite."""
from __future__ import annotations

import json
import os
import subprocess
import uuid

import pytest

from tests.conftest import REPO, free_run_ports


@pytest.mark.slow(seconds=14)
def test_make_run_on_firestore_emulator_answers_and_stores_there(firestore_emulator_host, monkeypatch, tmp_path):
    project = f"demo-local-{uuid.uuid4().hex[:8]}"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LINE_", "LOCAL_", "FIRESTORE_"))}
    env.update({"LOCAL_STORE_URL": f"firestore://{project}", "FIRESTORE_EMULATOR_HOST": firestore_emulator_host,
                "LOCAL_HEADLESS": "1", **free_run_ports(), "LOCAL_RUN_DIR": str(tmp_path / "run"),
                # The claim is that it answers and stores on Firestore, not the 0.5 s default deadline.
                "LOCAL_STORE_DEADLINE_SECONDS": "1.2"})  # as the e2e stack's webhook, under LINE's 2 s
    # Warm-up first, as the e2e stack does (_warm_up): the webhook builds its Firestore client on its
    # first store call, and on a loaded machine that call (gRPC import and connect to the emulator)
    # can outlast the store deadline twice (the chat tool redelivers a 503 once, as LINE would).
    warm_up = [{"text": "選單"}] * 3
    lines = warm_up + [{"text": "選單"}, {"text": "花壇有素食店嗎？"}]
    run = subprocess.run(["make", "-s", "-o", ".venv/.installed", "run"], cwd=REPO, env=env, timeout=300,
                         input="".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines),
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-3000:]
    answers = [json.loads(line) for line in run.stdout.splitlines() if line.startswith("{")]
    assert len(answers) == len(lines), run.stderr[-3000:]
    answers = answers[len(warm_up):]
    assert [a["status"] for a in answers] == [200, 200], run.stderr[-3000:]
    assert all(a["replies"] for a in answers)
    assert "花壇" in json.dumps(answers[1]["replies"], ensure_ascii=False)
    # The events went through Firestore: the inbox holds both, each with its TTL instant.
    monkeypatch.setenv("FIRESTORE_EMULATOR_HOST", firestore_emulator_host)
    from shared.store.firestore import FirestoreStore

    inbox = FirestoreStore(project, deadline_seconds=5.0).query("webhook_inbox")
    # the two events (and the warm-ups the store took), each with its TTL instant
    assert all(doc["expire_at"] for doc in inbox) and len(inbox) <= len(lines)
    assert len([doc for doc in inbox if doc["state"] == "done"]) >= 2
