"""One functions-framework webhook process with its clock pinned (pinned_clock_webhook.py: Tuesday
2026-12-01 10:00 Asia/Taipei), on a fresh SQLite file, replying to a LINE stand-in; and a signed text
event sent to it, read back as the resident reads the reply. Shared by the HTTP suites whose answers
depend on the day (whole time words, follow-ups, items of the last list)."""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import requests

from tests.conftest import TEST_TOKEN, all_text, function_env, line_body, recorded_replies, sign, text_event
from tools.function_process import FunctionProcess
from tools.line_standin import LineStandin

#: The webhook's main.py with a pinned clock (never imported here: it reads its settings at import).
PINNED_SOURCE = Path(__file__).with_name("pinned_clock_webhook.py")
PINNED_NOW = "2026-12-01T10:00:00+08:00"


@contextmanager
def pinned_webhook_process(folder: Path) -> Iterator[tuple[FunctionProcess, LineStandin]]:
    """(the webhook process, the LINE stand-in it replies to); both stopped on exit."""
    with LineStandin(access_token=TEST_TOKEN) as standin:
        env = {**function_env(f"sqlite:///{folder / 'local.sqlite3'}", standin.url), "PINNED_NOW": PINNED_NOW}
        webhook = FunctionProcess("webhook", env, folder / "webhook.log", source=PINNED_SOURCE, preloaded=True)
        try:
            yield webhook, standin
        finally:
            webhook.stop()


def say_over_http(pinned: tuple[FunctionProcess, LineStandin], text: str, **where) -> str:
    """``text`` as a signed text event (``where``: ``user_id``, ``group_id`` of tests.conftest.text_event)
    POSTed to the webhook; asserts 200 and one reply, and returns its words in reading order."""
    webhook, standin = pinned
    event = text_event(text, **where)
    body = line_body(event)
    response = requests.post(webhook.url, data=body, timeout=10,
                             headers={"Content-Type": "application/json", "X-Line-Signature": sign(body)})
    assert response.status_code == 200
    [reply] = recorded_replies(standin, event["replyToken"])
    return all_text(reply["body"]["messages"])
