"""The conversation state is covered by what LOCAL says and does about a resident's data: ``make
user-data`` lists it (in every chat), a forget deletes it everywhere, and the privacy answer names it.
Through signed webhook bodies (in-process WebhookService, real SQLite file, functions/memory in-process)."""
from __future__ import annotations

from datetime import datetime, timezone

import pytest

from shared.audit import COLLECTION as AUDIT
from shared.conversation_store import COLLECTION as CONVERSATIONS
from tests.conftest import TEST_USER, FixedClock, all_text, postback_event, reply_messages, text_event
from tests.memory_support import webhook_with_memory
from tests.unit.webhook.test_privacy_store import holding, user_data
from tools.line_messages import postbacks

PINNED = datetime(2026, 12, 1, 2, 0, tzinfo=timezone.utc)  # 2026-12-01 10:00 Asia/Taipei
GROUP = "C" + "1" * 32
#: tools.user_data and the row scan read the SQLite file.
pytestmark = pytest.mark.sqlite


@pytest.fixture
def service(base_env):
    return webhook_with_memory(base_env, FixedClock(PINNED))


def test_user_data_shows_the_conversation_state_of_every_chat(service, line_standin, base_env, store_url):
    reply_messages(service, line_standin, text_event("員林這禮拜六有什麼活動"))
    reply_messages(service, line_standin, text_event("彰化市有全素的店嗎", group_id=GROUP))
    states = user_data(base_env)["conversations"]
    assert sorted((state["shared_chat"], state["last_ask"]["kind"]) for state in states) == [
        (False, "events"), (True, "places")]
    [one_to_one] = [state for state in states if not state["shared_chat"]]
    assert one_to_one["last_ask"] == {"kind": "events", "area": "員林市", "date": "2026-12-05/2026-12-06",
                                      "keyword": None}
    assert one_to_one["updated_at"] == "2026-12-01T02:00:00+00:00" and one_to_one["expire_at"].startswith(
        "2026-12-01T02:30:00")
    [shop_state] = [state for state in states if state["shared_chat"]]
    assert shop_state["items"] and all(item["kind"] == "place" for item in shop_state["items"])
    # neither the LINE user id nor the group id is stored in it
    assert [row for row in holding(store_url, TEST_USER) if row[1] == CONVERSATIONS] == []
    assert [row for row in holding(store_url, GROUP) if row[1] == CONVERSATIONS] == []


def test_forget_deletes_the_conversation_state_everywhere(service, line_standin, base_env):
    reply_messages(service, line_standin, text_event("花壇有全素的店嗎"))
    reply_messages(service, line_standin, text_event("花壇有全素的店嗎", group_id=GROUP))
    assert len(user_data(base_env)["conversations"]) == 2
    words = all_text(reply_messages(service, line_standin, text_event("忘記我的飲食偏好")))
    assert "忘記" in words
    assert user_data(base_env)["conversations"] == []
    event = text_event("那彰化市呢")  # read alone again: events or shops?, with no diet kept
    words = all_text(reply_messages(service, line_standin, event))
    assert "想查彰化市的活動，還是" in words and "全素" not in words
    assert service.store.get(AUDIT, f"test-tenant:{event['webhookEventId']}")["tool"] == "ask_search_kind"


def test_privacy_answer_names_the_conversation_state(service, line_standin):
    """The short answer's 「詳細說明」 lists the last search, kept 30 minutes."""
    short = reply_messages(service, line_standin, text_event("我的資料"))
    [more] = [data for label, data in postbacks(short).items() if label == "詳細說明"]
    words = all_text(reply_messages(service, line_standin, postback_event(more)))
    assert "30 分鐘" in words and "最後一次查詢" in words
