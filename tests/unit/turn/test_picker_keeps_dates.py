"""The events township picker keeps the dates and topic read from the message.

過年 彰化有什麼活動 asks for a township; a tap on 全部鄉鎮 or on a township must search the 過年 dates,
not 「近期」 (every date). Through the webhook use case with a real SQLite file and the LINE stand-in.
"""
from __future__ import annotations

from datetime import UTC, datetime
from urllib.parse import parse_qs

import pytest

from tests.conftest import (
    FixedClock,
    all_text,
    postback_event,
    reply_messages,
    text_event,
)
from tests.memory_support import postbacks, webhook_with_memory

PINNED = datetime(2026, 12, 1, 2, 0, tzinfo=UTC)


@pytest.fixture
def service(base_env):
    return webhook_with_memory(base_env, FixedClock(PINNED))


_send = reply_messages  # tests/conftest.py


def test_events_picker_all_townships_tap_keeps_lunar_new_year_dates(service, line_standin):
    picker = postbacks(_send(service, line_standin, text_event("過年 彰化有什麼活動")))
    data = picker["全部鄉鎮"]
    query = parse_qs(data.partition(":")[2])
    assert query["scope"] == ["all"] and query["date"][0].startswith("2027-")  # 2027 Lunar New Year
    words = all_text(_send(service, line_standin, postback_event(data)))
    assert "近期" not in words
    assert "2027" in words


def test_events_picker_township_tap_keeps_dates_and_topic(service, line_standin):
    picker = postbacks(_send(service, line_standin, text_event("這週末附近有市集嗎")))
    townships = {label: data for label, data in picker.items() if label != "全部鄉鎮"}
    assert townships, picker
    for data in list(townships.values()) + [picker["全部鄉鎮"]]:
        query = parse_qs(data.partition(":")[2])
        assert query["date"] == ["2026-12-05/2026-12-07"] and query["keyword"] == ["市集"], data


def test_events_picker_without_dates_keeps_plain_buttons(service, line_standin):
    picker = postbacks(_send(service, line_standin, text_event("查活動")))
    assert picker["全部鄉鎮"] == "events:scope=all"
    assert all("date=" not in data for data in picker.values())
