"""我已經不吃素了 (shared.memory.diet_dropped): with a diet remembered, the memory view's forget and correct
buttons are offered, never a silent keep; with none, one short line. Signed webhook bodies go through
the in-process ``WebhookService`` (memory client configured, not called: the words change nothing),
and the reply is read from the LINE stand-in."""
from __future__ import annotations

import pytest

from shared.memory.diet_dropped import diet_dropped
from shared.memory.store import PREFERENCES
from tests.conftest import TEST_USER, all_text, line_body, replies_to, reply_messages, sign, text_event
from tests.unit.webhook.test_privacy_store import card_postback


@pytest.fixture
def service(base_env, clock):
    from shared.config import WEBHOOK_REQUIRED, Settings
    from shared.webhook.service import WebhookService
    from shared.wiring import line_gateway, memory_client, open_store

    settings = Settings.from_env({**base_env, "MEMORY_FUNCTION_URL": "http://127.0.0.1:9/"},
                                 required=WEBHOOK_REQUIRED)
    return WebhookService(settings, open_store(settings), line_gateway(settings), clock=clock,
                          memory=memory_client(settings))


def remember(service, dietary_type: str) -> None:
    service.store.set(PREFERENCES, f"test-tenant:{TEST_USER}", {
        "tenant_id": "test-tenant", "user_id": TEST_USER, "revision": 1, "dietary_type": dietary_type,
        "consented_at": "2026-11-29T02:00:00+00:00", "last_nonce": "n", "updated_at": "2026-11-29T02:00:00+00:00"})


@pytest.mark.parametrize("text", ["我已經不吃素了", "我現在不吃素了", "我沒有吃素了", "我現在沒在吃全素了", "我不再吃素"])
def test_diet_dropped_with_a_remembered_diet_offers_to_forget_or_change_it(service, line_standin, text):
    remember(service, "ovo_lacto")
    messages = reply_messages(service, line_standin, text_event(text))
    words = all_text(messages)
    assert "我還記著「蛋奶素」" in words
    assert card_postback(messages, "忘記這個偏好").startswith("mem:")
    labels = [item["action"]["label"] for item in messages[-1]["quickReply"]["items"]]
    assert "改成全素" in labels
    stored = service.store.get(PREFERENCES, f"test-tenant:{TEST_USER}")
    assert stored["dietary_type"] == "ovo_lacto"  # words alone change nothing until a button is tapped
    assert not [c for c in line_standin.calls() if "127.0.0.1:9" in c.get("path", "")]


def test_diet_dropped_with_nothing_remembered_says_so_in_a_line(service, line_standin):
    words = all_text(reply_messages(service, line_standin, text_event("我已經不吃素了")))
    assert "我沒有記住你的飲食偏好" in words
    assert "想查哪個鄉鎮" not in words and "素食店家" not in words and "記著" not in words


def test_diet_dropped_in_a_group_is_declined_there(service, line_standin):
    remember(service, "vegan")
    event = text_event("我已經不吃素了", group_id="C" + "2" * 32)
    body = line_body(event)
    assert service.handle(body.decode(), sign(body)).status == 200
    [reply] = replies_to(line_standin, event["replyToken"])
    words = all_text(reply["body"]["messages"])
    assert "一對一" in words and "全素" not in words  # the group never reads one account's memory


@pytest.mark.parametrize("text, word", [("我已經不吃素了", "素"), ("不吃素了喔", "素"), ("我已經沒吃蛋奶素了。", "蛋奶素"),
                                        ("我不吃素", None), ("今天不吃素了", None), ("我不吃素了 花壇有店嗎", None)])
def test_diet_dropped_reads_a_change_said_on_its_own(text, word):
    assert diet_dropped(text) == word
