"""The places acceptance over HTTP: ``make ingest-places FILE=data/places-template.csv`` writes a snapshot into
the store, then a signed 「員林有素食嗎」 to the webhook (functions-framework's test client, the recording LINE
stand-in on loopback) answers from the imported places, naming their list once, within the reply budget
(docs/design.md §5, §7). No test reaches the network."""
from __future__ import annotations

import io
import json
import os
import subprocess

import pytest

from tests.conftest import REPO, all_text, line_body, recorded_replies, sign, text_event
from tools import places as places_tool
from tools import reply_budget


def _ask(webhook, standin, text: str) -> list[dict]:
    event = text_event(text)
    body = line_body(event)
    response = webhook.post("/", data=body, headers={"Content-Type": "application/json", "X-Line-Signature": sign(body)})
    assert response.status_code == 200
    [reply] = recorded_replies(standin, event["replyToken"])
    return reply["body"]["messages"]


@pytest.mark.slow
def test_places_ingest_http_template_then_signed_yuanlin_question_answers_from_it(function_app, base_env, line_standin):
    webhook = function_app("webhook", base_env)
    before = all_text(_ask(webhook, line_standin, "員林有素食嗎"))
    assert "範例蔬食小館" not in before  # the shipped catalog has no shop in 員林

    env = {k: v for k, v in os.environ.items() if not k.startswith(("LINE_", "LOCAL_", "TDX_", "MAKE"))}
    env["LOCAL_STORE_URL"] = base_env["LOCAL_STORE_URL"]
    made = subprocess.run(["make", "-s", "-o", ".venv/.installed", "ingest-places", "FILE=data/places-template.csv"],
                          capture_output=True, text=True, cwd=REPO, env=env, timeout=300)
    assert made.returncode == 0, made.stderr[-2000:]
    printed = json.loads(made.stdout.strip().splitlines()[-1])
    assert printed["outcome"] == "snapshot_written" and printed["counts"]["kept"] == 4
    # the template keeps the shipped shops (nothing real is lost) and says its 範例 rows are examples
    assert printed["no_longer_listed"] == 0 and printed["example_rows"] == 2
    assert "example rows" in made.stderr and "範例蔬食小館" in made.stderr
    assert "John手作蔬食" in all_text(_ask(webhook, line_standin, "彰化市有素食嗎"))

    messages = _ask(webhook, line_standin, "員林有素食嗎")
    text = all_text(messages)
    assert "範例蔬食小館" in text and "範例素食便當" in text and "和米素食" not in text
    assert "資料來源：範例店家名單，2026/9/27 查閱" in text
    assert reply_budget.problems(messages, said="員林有素食嗎") == []

    by_name = all_text(_ask(webhook, line_standin, "範例素食便當在哪裡"))
    assert "彰化縣員林市範例路2號" in by_name
    typo = all_text(_ask(webhook, line_standin, "範例素食便擋有全素嗎"))
    assert "你是說" in typo and "範例素食便當" in typo

    out = io.StringIO()
    assert places_tool.main(["status"], environ={"LOCAL_STORE_URL": base_env["LOCAL_STORE_URL"]}, out=out) == 0
    status = json.loads(out.getvalue())
    assert status["answers_from"] == "snapshot" and status["catalog_version"] == printed["catalog_version"]
    assert status["layers"]["curated"]["sources"] == ["彰化縣蔬食節店家名單", "範例店家名單"]
