"""A remember request that names a health condition or allergy, and no diet.

LOCAL keeps one dietary condition only (docs/design.md §6). 幫我記住我有糖尿病，對花生過敏 must not
get the diet picker as if nothing else was said: the reply first says such facts are not kept.
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


@pytest.mark.parametrize("text", ["幫我記住我有糖尿病，對花生過敏", "幫我記住我有高血壓", "以後都幫我記住我對海鮮過敏"])
def test_health_in_a_remember_request_is_said_not_kept(service, line_standin, text):
    words = all_text(reply_messages(service, line_standin, text_event(text)))
    assert "不會記住" in words and "沒有保存" in words
    assert "想記住哪一種" in words  # the diets that can be remembered are still offered


@pytest.mark.parametrize("text", ["幫我記住", "幫我記住我的飲食"])
def test_remember_request_without_health_words_gets_the_plain_picker(service, line_standin, text):
    words = all_text(reply_messages(service, line_standin, text_event(text)))
    assert "想記住哪一種" in words and "不會記住" not in words
