"""Newcomer trial 9 (make run, headless): the turn-level findings, through a signed webhook body.

The other findings are tested beside their units: the same-request note before the card
(tests/unit/handoff/test_handoff_flow.py) and the hashed user of an unreadable event
(tests/unit/webhook/test_webhook_parse_phase.py). Clock: 2026-12-01 10:00 Asia/Taipei.
"""
from __future__ import annotations

from datetime import datetime, timezone

import pytest

from tests.conftest import FixedClock, all_text, reply_messages, text_event
from tests.memory_support import webhook_with_memory

PINNED = datetime(2026, 12, 1, 2, 0, tzinfo=timezone.utc)


@pytest.fixture
def service(base_env):
    return webhook_with_memory(base_env, FixedClock(PINNED))


@pytest.mark.parametrize("text", ["😀🙏🌱", "I need to talk to a person", "嗯嗯那個", "？？？"])
def test_trial9_unread_text_is_answered_in_plain_words(service, line_standin, text):
    # 「我目前是離線查詢模式」 meant nothing to a resident: say it was not understood, and what is
    [message] = reply_messages(service, line_standin, text_event(text))
    words = message["text"]
    assert words.startswith("這句我看不太懂。") and "我認得的是鄉鎮名稱" in words
    assert "離線" not in words and "模式" not in words


def test_trial9_a_note_replaces_the_not_understood_opening(service, line_standin):
    words = all_text(reply_messages(service, line_standin, text_event("花壇有肉食店嗎")))
    assert words.count("我認得的是鄉鎮名稱") <= 1 and "離線" not in words
