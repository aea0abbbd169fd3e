"""The served webhook answers LINE's longest text messages (5,000 UTF-16 units) of the shapes that
stress reading cost (``tools.hostile_text``), while a fixed entry sent at the same time gets its
reply: a real functions-framework process, signed bodies over loopback HTTP, the LINE
stand-in (docs/delivery.md, "Hostile and unusual input"). How long it takes is ``make bench``'s R2 figure; the
client timeout below only keeps a hung process from hanging the suite."""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest
import requests

from shared.line.limits import units
from tests.conftest import all_text, line_body, recorded_replies, sign, text_event
from tools.hostile_text import BENCH_SHAPES, hostile_text

#: Seconds a request may hang before the test gives up on the process (not a speed claim).
HANG_SECONDS = 60


def post_http(url: str, body: bytes) -> int:
    headers = {"Content-Type": "application/json", "X-Line-Signature": sign(body)}
    return requests.post(url, data=body, headers=headers, timeout=HANG_SECONDS).status_code


@pytest.mark.slow(seconds=8)
def test_webhook_http_long_messages_answered_while_menu_word_gets_its_reply(start_function, base_env, line_standin):
    webhook = start_function("webhook", base_env)
    texts = {f"rt-long-{shape}": hostile_text(shape, 5000) for shape in BENCH_SHAPES}
    assert all(units(text) == 5000 for text in texts.values())
    bodies = {token: line_body(text_event(text, reply_token=token)) for token, text in texts.items()}
    bodies["rt-menu-beside-long"] = line_body(text_event("選單", reply_token="rt-menu-beside-long"))

    with ThreadPoolExecutor(max_workers=len(bodies)) as pool:
        statuses = dict(zip(bodies, pool.map(lambda body: post_http(webhook.url, body), bodies.values())))

    assert statuses == {token: 200 for token in bodies}
    [menu] = recorded_replies(line_standin, "rt-menu-beside-long")
    items = menu["body"]["messages"][-1]["quickReply"]["items"]
    assert [item["action"]["label"] for item in items] == ["查活動", "查蔬食", "留下服務詢問"]
    for token in texts:  # each long message got one reply LINE accepted, in plain words
        [reply] = recorded_replies(line_standin, token)
        assert all_text(reply["body"]["messages"]).strip()
