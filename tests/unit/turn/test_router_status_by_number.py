"""The router reads a request number in a status question (shared.turn.rules.handoff, docs/design.md §4):
the status of that request; a number beside another ask, or a word that only looks like one, is not."""
from __future__ import annotations

import pytest

from shared.handoff.codes import DisplayCode
from shared.turn.router import route


@pytest.mark.parametrize("said", ["A7K-3QF 處理到哪了", "a7k3qf處理到哪了", "ａ７ｋ－３ｑｆ 有人處理了嗎", "A7K 3QF 進度",
                                  "單號 A7K-3QF 呢？", "A7K-3QF", "請問a7k-3qf好了沒", "我的單號A7K3QF"])
def test_router_status_by_number_carries_the_code(said):
    proposal = route(said)
    assert proposal.tool == "handoff_status" and proposal.args == {"code": DisplayCode("A7K3QF")}


@pytest.mark.parametrize("said, tool", [
    ("A7K-3QF 週末有活動嗎", "search_local_events"),  # another ask beside a number
    ("我要取消 A7K-3QF", "handoff_cancel_help"),  # cancelling: how to cancel
    ("market 處理到哪了", "handoff_status"),  # no number: the resident's requests
])
def test_router_status_by_number_only_when_asked(said, tool):
    proposal = route(said)
    assert proposal.tool == tool and "code" not in proposal.args
