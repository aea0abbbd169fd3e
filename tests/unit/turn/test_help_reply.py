"""The help reply (shared.replies.menu.help_reply): what a resident is told when the router reads
nothing in a text, through a signed webhook body. Its words are plain (「離線查詢模式」
would mean nothing to a resident), and a note, when there is one, leads instead of the opening.
Clock: 2026-12-01 10:00 Asia/Taipei.
"""
from __future__ import annotations

from datetime import datetime, timezone

import pytest

from tests.conftest import FixedClock, reply_messages, text_event
from tests.memory_support import webhook_with_memory

PINNED = datetime(2026, 12, 1, 2, 0, tzinfo=timezone.utc)


@pytest.fixture
def service(base_env):
    return webhook_with_memory(base_env, FixedClock(PINNED))


@pytest.mark.parametrize("text", ["😀🙏🌱", "I need to talk to a person", "嗯嗯那個", "？？？"])
def test_help_reply_unread_text_is_answered_in_plain_words(service, line_standin, text):
    # 「我目前是離線查詢模式」 meant nothing to a resident: say it was not understood, and what is
    [message] = reply_messages(service, line_standin, text_event(text))
    words = message["text"]
    assert words.startswith("這句我看不太懂。") and "我認得的是鄉鎮名稱" in words
    assert "離線" not in words and "模式" not in words


def test_help_reply_a_note_replaces_the_not_understood_opening():
    # an argument the tools refused (shared.turn.engine._invalid_argument_reply) is named first
    from shared.replies.menu import help_reply

    [message] = help_reply("我找不到這個地區。").messages
    assert message.text.startswith("我找不到這個地區。\n我認得的是鄉鎮名稱")
    assert "這句我看不太懂" not in message.text
