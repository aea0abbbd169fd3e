"""Follow-ups and corrections through a signed webhook body (shared.turn.follow_up,
shared.turn.rules.follow_ups): a message that changes one condition re-runs the last search with the
rest kept and says so in one line; without a state (none, 30 minutes later, another member of a group)
it is read alone. Clock: 2026-12-01 10:00 Asia/Taipei, a Tuesday (this Saturday is 12/5)."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from shared.audit import COLLECTION as AUDIT
from shared.conversation_store import COLLECTION as CONVERSATIONS
from shared.conversation_store import TTL
from tests.conftest import FixedClock, all_text, postback_event, reply_messages, text_event
from tests.memory_support import postbacks, webhook_with_memory

PINNED = datetime(2026, 12, 1, 2, 0, tzinfo=timezone.utc)  # 2026-12-01 10:00 Asia/Taipei
OTHER_USER = "U" + "9" * 32
GROUP = "C" + "1" * 32


@pytest.fixture
def pinned():
    return FixedClock(PINNED)


@pytest.fixture
def service(base_env, pinned):
    return webhook_with_memory(base_env, pinned)


def say(service, line_standin, text: str, **where) -> tuple[str, dict]:
    """Send ``text`` as a signed text event; (what the resident reads, the turn's audit record)."""
    event = text_event(text, **where)
    words = all_text(reply_messages(service, line_standin, event))
    return words, service.store.get(AUDIT, f"test-tenant:{event['webhookEventId']}") or {}


def searched(audit: dict) -> tuple:
    args = audit.get("effective_args") or {}
    return audit.get("tool"), args.get("area"), args.get("date") or args.get("dietary_type"), args.get("keyword")


# -- events: the township and the days are kept --------------------------------------------------

def test_follow_up_events_keeps_the_township_then_the_days(service, line_standin):
    _, first = say(service, line_standin, "員林這禮拜六有什麼活動")
    assert searched(first) == ("search_local_events", "員林市", "2026-12-05", None)
    words, audit = say(service, line_standin, "那下禮拜呢")
    assert searched(audit) == ("search_local_events", "員林市", "2026-12-07/2026-12-14", None)
    assert words.startswith("改查下禮拜，員林市的活動：")
    words, audit = say(service, line_standin, "那溪湖呢")
    assert searched(audit) == ("search_local_events", "溪湖鎮", "2026-12-07/2026-12-14", None)
    assert words.startswith("改查溪湖鎮，12/7（一）～12/13（日）的活動：")


def test_follow_up_weekday_keeps_the_week_and_the_topic(service, line_standin):
    say(service, line_standin, "鹿港下禮拜六有市集嗎")
    words, audit = say(service, line_standin, "換成週日")
    assert searched(audit) == ("search_local_events", "鹿港鎮", "2026-12-13", "市集")  # next week's Sunday
    assert words.startswith("改查週日，鹿港鎮的「市集」活動：")
    _, audit = say(service, line_standin, "那明天呢")
    assert searched(audit) == ("search_local_events", "鹿港鎮", "2026-12-02", "市集")


# -- shops: the township and the diet are kept ---------------------------------------------------

def test_follow_up_shops_change_the_diet_then_the_township(service, line_standin):
    _, first = say(service, line_standin, "員林有素食嗎")
    assert searched(first)[:2] == ("search_local_places", "員林市")
    words, audit = say(service, line_standin, "那全素的呢")
    assert searched(audit) == ("search_local_places", "員林市", "vegan", None)
    assert words.startswith("改查全素，員林市的店家：")
    words, audit = say(service, line_standin, "換成溪湖")
    assert searched(audit) == ("search_local_places", "溪湖鎮", "vegan", None)
    assert words.startswith("改查溪湖鎮，全素的店家：")


def test_follow_up_kind_switch_keeps_the_township(service, line_standin):
    say(service, line_standin, "員林這禮拜六有什麼活動")
    words, audit = say(service, line_standin, "那全素的呢")  # a diet names shops: 員林市 kept, the date dropped
    assert searched(audit) == ("search_local_places", "員林市", "vegan", None)
    assert words.startswith("改查全素，員林市的店家：")
    words, audit = say(service, line_standin, "那明天呢")  # a date names events: 員林市 kept
    assert searched(audit) == ("search_local_events", "員林市", "2026-12-02", None)
    assert words.startswith("改查明天，員林市的活動：")


def test_follow_up_township_and_kind_together(service, line_standin):
    say(service, line_standin, "員林有全素的店嗎")
    words, audit = say(service, line_standin, "那鹿港的素食呢")  # a plain 素食 names no diet: 全素 kept
    assert searched(audit) == ("search_local_places", "鹿港鎮", "vegan", None)
    assert words.startswith("改查鹿港鎮，全素的店家：")


# -- corrections -----------------------------------------------------------------------------------

@pytest.mark.parametrize("correction", ["不是啦 我是說鹿港", "啊不對 是鹿港", "我是要問鹿港的", "不對不對，鹿港"])
def test_correction_replaces_the_township_and_never_refuses(service, line_standin, correction):
    say(service, line_standin, "員林這禮拜六有什麼活動")
    words, audit = say(service, line_standin, correction)
    assert searched(audit) == ("search_local_events", "鹿港鎮", "2026-12-05", None)
    assert words.startswith("好的，改查鹿港鎮，12/5（六）的活動：")
    assert "沒有資料" not in words and "看不太懂" not in words


def test_correction_replaces_the_day(service, line_standin):
    say(service, line_standin, "員林這禮拜六有什麼活動")
    words, audit = say(service, line_standin, "啊不對 是禮拜天")
    assert searched(audit) == ("search_local_events", "員林市", "2026-12-06", None)
    assert words.startswith("好的，改查週日，員林市的活動：")


def test_correction_naming_a_kind_switches_it_keeping_the_township(service, line_standin):
    say(service, line_standin, "溪湖這週末有什麼活動")
    words, audit = say(service, line_standin, "我是要問素食")
    assert searched(audit)[:2] == ("search_local_places", "溪湖鎮")
    assert words.startswith("好的，改查溪湖鎮的店家：")


def test_correction_without_a_state_reads_its_conditions_not_a_refusal(service, line_standin):
    words, audit = say(service, line_standin, "不是啦 我是說鹿港")
    assert "想查鹿港鎮的活動，還是" in words and "沒有資料" not in words
    assert audit["tool"] == "ask_search_kind"


# -- without a state the message is read alone, as before -----------------------------------------

def test_follow_up_without_a_state_is_read_alone(service, line_standin):
    words, audit = say(service, line_standin, "那下禮拜呢")
    assert searched(audit) == ("search_local_events", None, "2026-12-07/2026-12-14", None)
    assert "改查" not in words


def test_follow_up_thirty_minutes_later_is_read_alone(service, line_standin, pinned):
    say(service, line_standin, "員林這禮拜六有什麼活動")
    pinned.at = PINNED + TTL - timedelta(seconds=1)
    _, audit = say(service, line_standin, "那下禮拜呢")  # within 30 minutes of the last turn: followed
    assert searched(audit)[1] == "員林市"
    pinned.at += TTL  # 30 minutes after that turn
    words, audit = say(service, line_standin, "那下禮拜呢")
    assert searched(audit) == ("search_local_events", None, "2026-12-07/2026-12-14", None) and "改查" not in words


def test_follow_up_greeting_between_keeps_the_state(service, line_standin):
    say(service, line_standin, "員林這禮拜六有什麼活動")
    say(service, line_standin, "謝謝")
    _, audit = say(service, line_standin, "那下禮拜呢")
    assert searched(audit)[1] == "員林市"


def test_follow_up_another_resident_does_not_share_the_state(service, line_standin):
    say(service, line_standin, "員林這禮拜六有什麼活動")
    _, audit = say(service, line_standin, "那下禮拜呢", user_id=OTHER_USER)
    assert searched(audit)[1] is None


# -- pickers and buttons keep the conditions ------------------------------------------------------

def test_follow_up_after_a_picker_tap_keeps_its_conditions(service, line_standin):
    messages = reply_messages(service, line_standin, text_event("有全素的店嗎"))  # no township: the picker
    tap = postback_event(postbacks(messages)["彰化市"])
    reply_messages(service, line_standin, tap)
    assert service.store.get(AUDIT, f"test-tenant:{tap['webhookEventId']}")["effective_args"]["dietary_type"] == "vegan"
    words, audit = say(service, line_standin, "換成花壇")
    assert searched(audit) == ("search_local_places", "花壇鄉", "vegan", None)
    assert words.startswith("改查花壇鄉，全素的店家：") and "沒有找到符合「花壇鄉、全素」的店家" in words


# -- groups: per sender, and never a person's memory ----------------------------------------------

def test_follow_up_in_a_group_is_per_sender(service, line_standin):
    say(service, line_standin, "員林這禮拜六有什麼活動", group_id=GROUP)
    _, audit = say(service, line_standin, "那下禮拜呢", group_id=GROUP, user_id=OTHER_USER)
    assert searched(audit)[1] is None  # another member: read alone
    _, audit = say(service, line_standin, "那下禮拜呢")  # the same sender one-to-one: another chat
    assert searched(audit)[1] is None
    words, audit = say(service, line_standin, "那下禮拜呢", group_id=GROUP)
    assert searched(audit)[1] == "員林市" and words.startswith("改查下禮拜，員林市的活動：")


def _remember_vegan(service, line_standin) -> None:
    card = reply_messages(service, line_standin, text_event("以後都找全素，幫我記住"))
    saved = reply_messages(service, line_standin, postback_event(postbacks(card)["同意記住"]))
    assert "已經記住" in all_text(saved)


def _stored_asks(service) -> list[dict]:
    return [doc["last_ask"] for doc in service.store.query(CONVERSATIONS)]


def test_follow_up_remembered_diet_is_never_stored(service, line_standin):
    _remember_vegan(service, line_standin)
    words, audit = say(service, line_standin, "花壇有素食店嗎")
    assert audit["origin"] == "consented_memory"
    assert _stored_asks(service) == [{"kind": "places", "area": "花壇鄉", "diet": None}]
    words, audit = say(service, line_standin, "那彰化市呢")  # the memory fills it again, and says so
    assert searched(audit) == ("search_local_places", "彰化市", "vegan", None) and audit["origin"] == "consented_memory"
    assert words.startswith("改查彰化市的店家：")


def test_follow_up_in_a_group_never_applies_or_stores_a_remembered_diet(service, line_standin):
    _remember_vegan(service, line_standin)
    say(service, line_standin, "花壇有素食店嗎", group_id=GROUP)  # only what the group read: 素食
    assert _stored_asks(service) == [{"kind": "places", "area": "花壇鄉", "diet": "vegetarian"}]
    words, audit = say(service, line_standin, "那彰化市呢", group_id=GROUP)
    assert searched(audit) == ("search_local_places", "彰化市", "vegetarian", None)
    assert audit["origin"] != "consented_memory" and "同意記住" not in words
    assert words.startswith("改查彰化市，蔬食的店家：")


def test_follow_up_after_the_township_picker_keeps_what_it_asked(service, line_standin):
    say(service, line_standin, "有全素的店嗎")  # no township: the picker, nothing listed yet
    words, audit = say(service, line_standin, "那花壇呢")
    assert searched(audit) == ("search_local_places", "花壇鄉", "vegan", None)
    assert words.startswith("改查花壇鄉，全素的店家：")


def test_follow_up_state_lists_the_items_in_the_order_shown(service, line_standin):
    messages = reply_messages(service, line_standin, text_event("這個月有什麼活動"))
    event_titles = [bubble["body"]["contents"][0]["text"] for message in messages if message["type"] == "flex"
                    for bubble in message["contents"]["contents"]]
    [state] = service.store.query(CONVERSATIONS)
    assert 1 < len(state["items"]) <= 12 and len(state["items"]) == len(event_titles)
    assert {item["kind"] for item in state["items"]} == {"event"}
    audit = [doc for doc in service.store.query(AUDIT) if doc.get("tool") == "search_local_events"][-1]
    assert [item["id"] for item in state["items"]] == audit["result_ids"][:12]
