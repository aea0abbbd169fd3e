"""Issue 9's examples whose answers do not depend on today, over real HTTP: one functions-framework
webhook process on loopback, one signed body per case, the LINE stand-in. The
expectations are read from tests/eval/cases.json (the same file the router tests use); the
date-dependent cases run through the webhook use case with a pinned clock instead
(tests/eval/test_eval_cases.py)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
import requests

from tests.conftest import all_text, line_body, recorded_replies, sign, text_event

CASES = {case["id"]: case for case in json.loads(
    (Path(__file__).resolve().parents[2] / "eval" / "cases.json").read_text(encoding="utf-8"))}
#: Clock-free cases: greetings, limits, shop names, Simplified text, diets, status, privacy, requests.
HTTP_CASES = (
    "i09-14-small-talk-1", "i09-14-small-talk-4", "i09-07-medical", "i09-07-bus-route", "i09-06-john-hours",
    "i09-06-hemi-booking", "i09-15-simplified-places", "i09-05-five-pungent", "i09-05-vegan-upper",
    "i09-08-two-townships", "i09-09-status-1", "i09-09-cancel", "i09-11-privacy-2", "i09-10-request-3",
    "i09-10-bare",
)


@pytest.mark.slow
def test_router_http_clock_free_examples_reply_as_the_case_file_says(start_function, base_env, line_standin):
    webhook = start_function("webhook", base_env)
    for index, case_id in enumerate(HTTP_CASES):
        event = text_event(CASES[case_id]["input"], user_id=f"U{index:032x}")
        body = line_body(event)
        response = requests.post(webhook.url, data=body, timeout=10,
                                 headers={"Content-Type": "application/json", "X-Line-Signature": sign(body)})
        assert response.status_code == 200, case_id
        expect = CASES[case_id]["expect"]
        [reply] = recorded_replies(line_standin, event["replyToken"])
        words = all_text(reply["body"]["messages"])
        assert all(needle in words for needle in expect.get("must_contain", [])), (case_id, words)
        assert not any(needle in words for needle in expect.get("must_not_contain", [])), (case_id, words)
