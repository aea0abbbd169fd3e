"""functions/ingest and the events acceptance through functions-framework's
``create_app(...).test_client()`` (no claim here is about processes), the local TDX stand-in and the
recording LINE stand-in over real loopback HTTP, and signed LINE bodies (docs/design.md §5). No test reaches
the network."""
from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO, all_text, line_body, recorded_replies, sign, text_event
from tools import events as events_tool
from tools.tdx_standin import CLIENT_ID, CLIENT_SECRET, TdxStandin

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "tdx"
GOOD = json.loads((FIXTURES / "changhua-activities.json").read_text(encoding="utf-8"))
MIXED = json.loads((FIXTURES / "mixed-validity.json").read_text(encoding="utf-8"))
INTERNAL = {"Authorization": "Bearer test-internal-token"}


@pytest.fixture
def tdx():
    with TdxStandin(GOOD) as standin:
        yield standin


@pytest.fixture
def ingest(function_app, base_env, tdx):
    env = {**base_env, "TDX_CLIENT_ID": CLIENT_ID, "TDX_CLIENT_SECRET": CLIENT_SECRET,
           "TDX_API_BASE_URL": tdx.api_base_url, "TDX_TOKEN_URL": tdx.token_url,
           "LOCAL_TDX_MAX_RETRIES": "2", "LOCAL_TDX_BACKOFF_SECONDS": "0.01", "LOCAL_TDX_TIMEOUT_SECONDS": "5"}
    return function_app("ingest", env)


def _status(base_env) -> dict:
    out = io.StringIO()
    assert events_tool.main(["status"], environ={"LOCAL_STORE_URL": base_env["LOCAL_STORE_URL"]}, out=out) == 0
    return json.loads(out.getvalue())


def _run(ingest):
    return ingest.post("/", headers=INTERNAL)


def test_ingest_http_fetches_from_standin_and_writes_snapshot(ingest, tdx, base_env):
    response = _run(ingest)
    assert response.status_code == 200, response.get_data(as_text=True)
    body = response.json
    assert body["outcome"] == "snapshot_written" and body["counts"]["kept"] == len(GOOD)
    status = _status(base_env)
    assert status["snapshot_version"] == body["snapshot_version"] and status["answers_from"] == "real"
    assert status["source"]["origin"] == f"{tdx.api_base_url}/v2/Tourism/Activity/ChanghuaCounty"


def test_ingest_http_logs_the_snapshot_age_after_the_run(ingest, caplog):
    from shared.logs import configure

    configure()  # the project's handler first, so that caplog's sees the lines too
    caplog.set_level("INFO", logger="local")
    assert _run(ingest).status_code == 200
    [age] = [record.fields for record in caplog.records if record.getMessage() == "events snapshot age"]
    assert (age["age_seconds"], age["stale"], age["answers_from"]) == (0.0, False, "real")  # confirmed by this run


def test_ingest_http_500_keeps_previous_snapshot_and_records_reason(ingest, tdx, base_env):
    first = _run(ingest).json
    tdx.set_records(MIXED)
    tdx.fail_next("activity", 500, times=3)  # the first try and both retries
    response = _run(ingest)
    assert response.status_code == 502
    assert response.json == {"outcome": "fetch_failed", "snapshot_version": first["snapshot_version"],
                               "counts": None, "reason": "http_500"}
    assert [c["status"] for c in tdx.calls("activity")] == [200, 500, 500, 500]
    status = _status(base_env)
    assert status["snapshot_version"] == first["snapshot_version"]
    assert status["counts"]["kept"] == len(GOOD)
    assert status["last_attempt"]["outcome"] == "fetch_failed" and status["last_attempt"]["reason"] == "http_500"


def test_ingest_http_token_expiry_mid_run_refreshed_once(ingest, tdx):
    assert _run(ingest).status_code == 200
    tdx.expire_tokens()
    tdx.set_records(MIXED)
    response = _run(ingest)
    assert response.status_code == 200 and response.json["outcome"] == "snapshot_written"
    assert [c["status"] for c in tdx.calls("token")] == [200, 200]
    assert [c["status"] for c in tdx.calls("activity")] == [200, 401, 200]


def test_ingest_http_unchanged_data_sends_if_modified_since(ingest, tdx):
    first = _run(ingest).json
    again = _run(ingest)
    assert again.status_code == 200
    assert again.json["outcome"] == "not_modified" and again.json["snapshot_version"] == first["snapshot_version"]
    assert [c["if_modified_since"] for c in tdx.calls("activity")] == [False, True]


@pytest.mark.parametrize(("headers", "status"), [({}, 401), ({"Authorization": "Bearer wrong"}, 403)])
def test_ingest_http_refuses_other_callers(ingest, tdx, headers, status):
    response = ingest.post("/", headers=headers)
    assert response.status_code == status
    assert tdx.calls() == []


def test_ingest_http_get_not_allowed(ingest):
    assert ingest.get("/", headers=INTERNAL).status_code == 405


@pytest.mark.slow
def test_ingest_missing_tdx_credentials_is_a_clear_startup_error(base_env):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LINE_", "LOCAL_", "TDX_"))}
    env.update(base_env)
    out = subprocess.run([sys.executable, "-c", "import runpy; runpy.run_path('functions/ingest/main.py')"],
                         capture_output=True, text=True, cwd=REPO, env=env, timeout=60)
    assert out.returncode != 0
    assert "TDX_CLIENT_ID is required" in out.stderr and "TDX_CLIENT_SECRET is required" in out.stderr


def _ask(webhook, standin, text: str) -> str:
    event = text_event(text)
    body = line_body(event)
    response = webhook.post("/", data=body, headers={"Content-Type": "application/json", "X-Line-Signature": sign(body)})
    assert response.status_code == 200
    [reply] = recorded_replies(standin, event["replyToken"])
    return all_text(reply["body"]["messages"])


@pytest.mark.slow
def test_events_acceptance_make_ingest_file_then_webhook_answers_from_it(function_app, base_env, line_standin):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LINE_", "LOCAL_", "TDX_", "MAKE"))}
    env["LOCAL_STORE_URL"] = base_env["LOCAL_STORE_URL"]
    made = subprocess.run(["make", "-s", "-o", ".venv/.installed", "ingest-events", "FILE=tests/fixtures/tdx/changhua-activities.json"],
                          capture_output=True, text=True, cwd=REPO, env=env, timeout=300)
    assert made.returncode == 0, made.stderr[-2000:]
    assert json.loads(made.stdout.strip().splitlines()[-1])["outcome"] == "snapshot_written"
    webhook = function_app("webhook", base_env)
    text = _ask(webhook, line_standin, "彰化市有什麼活動？")
    assert "彰化藝術館常設展：八卦山下的城市記憶" in text
    assert "資料來源：交通部觀光署活動資料，11/29 更新" in text and "TDX" not in text
    assert "示範" not in text


def test_events_acceptance_without_real_snapshot_webhook_says_demo(function_app, base_env, line_standin):
    webhook = function_app("webhook", base_env)
    text = _ask(webhook, line_standin, "彰化市有什麼活動？")
    assert "示範" in text and "資料來源：交通部" not in text
