"""``make user-data``: one JSON document on stdout, only the asked user's rows, environment wins.

Runs the tool (and once the make target) as a subprocess over a seeded SQLite file.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from shared.store.sqlite import SqliteStore
from tests.conftest import REPO

ALICE = "U" + "a1" * 16
BOB = "U" + "b2" * 16
TENANT = "tenant-changhua"


def seed(path) -> None:
    store = SqliteStore(str(path))
    store.set("preferences", f"{TENANT}:{ALICE}", {
        "tenant_id": TENANT, "user_id": ALICE, "revision": 2, "dietary_type": "vegan",
        "consented_at": "2026-11-29T02:00:00+00:00", "last_nonce": "n-secret"})
    store.set("preferences", f"{TENANT}:{BOB}", {
        "tenant_id": TENANT, "user_id": BOB, "revision": 1, "dietary_type": "ovo_lacto",
        "consented_at": "2026-11-28T02:00:00+00:00", "last_nonce": "n-bob"})
    requests = [
        ("r2", TENANT, ALICE, "2026-11-30T03:00:00+00:00"),
        ("r1", TENANT, ALICE, "2026-11-29T03:00:00+00:00"),
        ("r3", TENANT, BOB, "2026-11-29T04:00:00+00:00"),
        ("r4", "other-tenant", ALICE, "2026-11-29T05:00:00+00:00"),
    ]
    for rid, tenant, user, created in requests:
        store.set("handoff_requests", f"{tenant}:{user}:{rid}", {
            "tenant_id": tenant, "user_id": user, "request_id": f"req-20261130-{rid:0>16}",
            "idempotency_key": f"key-{rid}", "status": "request_created", "human_state": "awaiting_acceptance",
            "created_at": created, "text": "請幫我預約 — 私人內容", "content_hash": "h"})
    store.set("handoff_drafts", f"{TENANT}:{ALICE}:d1", {
        "tenant_id": TENANT, "user_id": ALICE, "idempotency_key": "key-d1", "status": "open",
        "created_at": "2026-11-30T03:30:00+00:00", "expires_at": "2026-11-30T03:40:00+00:00",
        "text": "草稿內容"})
    store.set("handoff_drafts", f"{TENANT}:{BOB}:d2", {
        "tenant_id": TENANT, "user_id": BOB, "idempotency_key": "key-d2", "status": "open",
        "created_at": "2026-11-30T03:31:00+00:00", "expires_at": "2026-11-30T03:41:00+00:00"})
    store.close()


def clean_env(**extra: str) -> dict[str, str]:
    # Drop make's own variables too: under `make test` a child make would print
    # "Entering directory" lines on stdout, as it does for any nested make.
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("LINE_", "LOCAL_")) and k not in ("MAKELEVEL", "MAKEFLAGS", "MFLAGS")}
    env.update(extra)
    return env


def run_tool(env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tools.user_data", *args], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=60)


def test_user_data_prints_one_json_document_with_only_that_users_rows(tmp_path):
    db = tmp_path / "store.sqlite3"
    seed(db)
    out = run_tool(clean_env(LOCAL_STORE_URL=f"sqlite:///{db}", LOCAL_TENANT_ID=TENANT, LINE_USER_ID=ALICE))
    assert out.returncode == 0, out.stderr[-2000:]
    data = json.loads(out.stdout)  # the whole of stdout is one document
    assert (data["tenant_id"], data["user_id"]) == (TENANT, ALICE)
    assert data["preference"] == {"revision": 2, "dietary_type": "vegan",
                                  "consented_at": "2026-11-29T02:00:00+00:00"}
    assert [r["idempotency_key"] for r in data["handoff_requests"]] == ["key-r1", "key-r2"]  # by created_at
    assert set(data["handoff_requests"][0]) == {"request_id", "idempotency_key", "status", "human_state",
                                                "created_at", "text"}  # the resident's own words too
    assert [d["idempotency_key"] for d in data["drafts"]] == ["key-d1"]
    assert "key-r3" not in out.stdout and "key-r4" not in out.stdout and "key-d2" not in out.stdout
    assert BOB not in out.stdout
    # Logs are JSON lines on stderr and carry no user id in clear.
    assert out.stderr.strip() and all(json.loads(line) for line in out.stderr.strip().splitlines())
    assert ALICE not in out.stderr


def test_user_data_shows_a_requests_code_as_people_read_it_beside_the_stored_one(tmp_path):
    db = tmp_path / "store.sqlite3"
    store = SqliteStore(str(db))
    store.set("handoff_requests", f"{TENANT}:{ALICE}:r9", {
        "tenant_id": TENANT, "user_id": ALICE, "request_id": "req-20261130-" + "9" * 16,
        "display_code": "8CDGJK", "idempotency_key": "key-r9", "status": "request_created",
        "human_state": "awaiting_acceptance", "created_at": "2026-11-30T03:00:00+00:00", "text": "t"})
    store.set("staff_notices", f"{TENANT}:n9", {
        "tenant_id": TENANT, "user_id": ALICE, "request_id": "req-20261130-" + "9" * 16, "display_code": "8CDGJK",
        "purpose": "new_request", "audience": "staff", "notice_state": "sent", "created_at": "2026-11-30T03:00:01+00:00"})
    store.close()
    out = run_tool(clean_env(LOCAL_STORE_URL=f"sqlite:///{db}", LOCAL_TENANT_ID=TENANT, LINE_USER_ID=ALICE))
    assert out.returncode == 0, out.stderr[-2000:]
    data = json.loads(out.stdout)
    [request], [notice] = data["handoff_requests"], data["staff_notices"]
    # 「8CD-GJK」 is what the resident's receipt and the staff card say; the stored form stays beside it
    assert (request["shown_code"], request["display_code"]) == ("8CD-GJK", "8CDGJK")
    assert (notice["shown_code"], notice["display_code"]) == ("8CD-GJK", "8CDGJK")


def test_user_data_forgotten_preference_shows_revision_only(tmp_path):
    db = tmp_path / "store.sqlite3"
    store = SqliteStore(str(db))
    store.set("preferences", f"{TENANT}:{ALICE}", {"tenant_id": TENANT, "user_id": ALICE, "revision": 5,
                                                   "last_nonce": "n"})
    store.close()
    out = run_tool(clean_env(LOCAL_STORE_URL=f"sqlite:///{db}", LOCAL_TENANT_ID=TENANT), "--user-id", ALICE)
    assert out.returncode == 0, out.stderr[-2000:]
    assert json.loads(out.stdout)["preference"] == {"revision": 5}


def test_user_data_missing_store_file_prints_empty_and_creates_nothing(tmp_path):
    db = tmp_path / "never-made.sqlite3"
    out = run_tool(clean_env(LOCAL_STORE_URL=f"sqlite:///{db}", LOCAL_TENANT_ID=TENANT, LINE_USER_ID=ALICE))
    assert out.returncode == 0, out.stderr[-2000:]
    data = json.loads(out.stdout)
    assert (data["tenant_id"], data["user_id"], data["preference"]) == (TENANT, ALICE, None)
    assert all(data[key] == [] for key in data if key not in ("tenant_id", "user_id", "preference", "log_user_hash"))
    assert not db.exists()


@pytest.mark.parametrize("user_id", ["", "   ", "not-a-line-id"])
def test_user_data_missing_or_bad_user_id_exits_2_with_message(tmp_path, user_id):
    env = clean_env(LOCAL_STORE_URL=f"sqlite:///{tmp_path / 's.sqlite3'}", LINE_USER_ID=user_id)
    out = run_tool(env)
    assert out.returncode == 2
    assert out.stdout == ""
    assert "LINE_USER_ID" in out.stderr


def test_user_data_make_target_environment_wins_over_defaults(tmp_path):
    db = tmp_path / "env-store.sqlite3"
    seed(db)
    env = clean_env(LOCAL_STORE_URL=f"sqlite:///{db}", LOCAL_TENANT_ID=TENANT)
    # -o: never rebuild the venv here; the suite already runs inside it.
    out = subprocess.run(["make", "-o", ".venv/.installed", "user-data", f"LINE_USER_ID={ALICE}"], cwd=REPO,
                         env=env, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr[-2000:]
    data = json.loads(out.stdout)
    assert data["tenant_id"] == TENANT  # not the Makefile's local-dev default
    assert len(data["handoff_requests"]) == 2  # read from the environment's store, not .run/


def test_user_data_make_target_without_user_id_fails_on_stderr(tmp_path):
    env = clean_env(LOCAL_STORE_URL=f"sqlite:///{tmp_path / 'none.sqlite3'}")
    out = subprocess.run(["make", "-o", ".venv/.installed", "user-data"], cwd=REPO, env=env,
                         capture_output=True, text=True, timeout=60)
    assert out.returncode != 0
    assert out.stdout == ""
    assert "LINE_USER_ID is required" in out.stderr


def test_user_data_on_make_runs_dev_tenant_uses_make_runs_dev_key_for_the_log_hash(tmp_path):
    # After a default `make run`, `make user-data` must give the log_user_hash that make run's functions
    # log, or the grep of .run/*.log for a resident's lines (docs/delivery.md, "Logs") finds nothing.
    from shared import keys
    from tools.devserver import DEV_SECRETS

    db = tmp_path / "never-made.sqlite3"
    dev = run_tool(clean_env(LOCAL_STORE_URL=f"sqlite:///{db}", LOCAL_TENANT_ID=DEV_SECRETS["LOCAL_TENANT_ID"],
                             LINE_USER_ID=ALICE))
    assert dev.returncode == 0, dev.stderr[-2000:]
    dev_hasher = keys.UserHasher.from_keys(keys.SigningKeys(DEV_SECRETS["LOCAL_SIGNING_KEY"].encode(), 1))
    assert json.loads(dev.stdout)["log_user_hash"] == dev_hasher(ALICE)
    other = run_tool(clean_env(LOCAL_STORE_URL=f"sqlite:///{db}", LOCAL_TENANT_ID=TENANT, LINE_USER_ID=ALICE))
    assert json.loads(other.stdout)["log_user_hash"] is None  # any other tenant: no key is guessed
