"""The router's examples whose answers do not depend on today, over real HTTP: one functions-framework
webhook process on loopback, one signed body per case, the LINE stand-in. The
expectations are read from the eval cases, tests/eval/cases/ (the same cases make eval and
tests/eval/test_eval_cases.py run with a pinned clock)."""
from __future__ import annotations

import pytest
import requests

from tests.conftest import all_text, line_body, recorded_replies, sign, text_event
from tools.eval import DEFAULT_CASES, load_cases

CASES = {case["id"]: case for case in load_cases(DEFAULT_CASES)}
#: Clock-free cases: greetings, limits, shop names, Simplified text, diets, status, privacy, requests.
HTTP_CASES = (
    "small-talk-small-talk-1", "small-talk-small-talk-4", "limits-medical", "limits-bus-route", "limits-john-hours",
    "limits-hemi-booking", "diets-simplified-places", "diets-five-pungent", "diets-vegan-upper",
    "two-asks-two-townships", "handoff-status-1", "handoff-cancel", "privacy-privacy-2", "handoff-request-3",
    "handoff-bare", "limits-fraud-prize", "limits-fraud-prosecutor", "limits-politics-vote", "limits-off-topic-poem",
    "limits-directory-police-phone", "safety-crisis-with-fraud", "typos-yuanlin-saturday", "typos-lugang-sunday",
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
