"""A forget forgets everywhere, and an expired forget button is no dead end (docs/design.md §6): the
in-process WebhookService on a real SQLite file, functions/memory's use case in-process, the LINE
stand-in, an injected clock; ``make user-data`` as an operator runs it."""
from __future__ import annotations

import json
from datetime import timedelta

import pytest

from tests.conftest import all_text, reply_messages, text_event
from tests.handoff_support import user_data
from tests.memory_support import USER_A, place_audits, postbacks, preference_of, tap_event, webhook_with_memory

DIET_WORDS = ("vegetarian", "vegan", "ovo_lacto", "lacto", "蔬食", "全素", "蛋奶素", "奶素")


@pytest.fixture
def service(base_env, clock):
    return webhook_with_memory(base_env, clock)


say = reply_messages  # tests/conftest.py


def text(service, standin, words):
    return say(service, standin, text_event(words, user_id=USER_A))


def tap(service, standin, data):
    return say(service, standin, tap_event(data, USER_A, service.clock()))  # tapped now


def remember_vegetarian(service, standin):
    tap(service, standin, postbacks(text(service, standin, "以後都找蔬食，幫我記住"))["同意記住"])


def test_forget_scrubs_remembered_diet_from_turn_audit_keeping_record_and_times(service, line_standin, clock,
                                                                                  store_url):
    remember_vegetarian(service, line_standin)
    clock.at += timedelta(seconds=1)
    assert "依你同意記住的偏好：蔬食" in all_text(tap(service, line_standin, "places:area=花壇鄉"))
    clock.at += timedelta(seconds=1)
    tap(service, line_standin, "places:area=花壇鄉&diet=vegan")  # said this turn: not from memory
    [from_memory, said] = place_audits(service.store)
    assert (from_memory["origin"], from_memory["effective_args"]["dietary_type"]) == ("consented_memory",
                                                                                       "vegetarian")
    found = len(from_memory["result_ids"])
    assert found > 0

    clock.at += timedelta(seconds=1)
    assert "已經忘記" in all_text(text(service, line_standin, "忘記我的飲食偏好"))
    [scrubbed, kept] = place_audits(service.store)
    assert scrubbed["effective_args"]["dietary_type"] is None and scrubbed["result_ids"] == []
    assert scrubbed["result_count"] == found  # counts kept
    for field in ("at", "timings_ms", "user_hash", "origin", "status", "revision", "tool", "webhook_event_id"):
        assert scrubbed[field] == from_memory[field], field
    assert kept == said  # a diet the user said in that turn was not the memory's
    assert preference_of(service.store).dietary_type is None

    shown = user_data(store_url, "test-tenant", USER_A)
    from_memory_rows = [row for row in shown["turn_audit"] if row.get("origin") == "consented_memory"]
    assert from_memory_rows and not any(word in json.dumps(from_memory_rows, ensure_ascii=False)
                                        for word in DIET_WORDS)
    assert shown["preference"] == {"revision": 2}


def test_forget_expired_button_offers_a_fresh_one_that_works(service, line_standin, clock):
    remember_vegetarian(service, line_standin)
    old = postbacks(text(service, line_standin, "我的偏好"))["忘記這個偏好"]
    clock.at += timedelta(minutes=5)  # the button's card has expired
    messages = tap(service, line_standin, old)
    words = all_text(messages)
    assert "超過有效時間" in words and "沒有做任何變更" in words
    fresh = postbacks(messages).get("忘記這個偏好")
    assert fresh is not None and fresh != old and len(fresh) <= 300
    assert preference_of(service.store).dietary_type == "vegetarian"  # nothing changed yet
    assert "已經忘記" in all_text(tap(service, line_standin, fresh))
    assert preference_of(service.store).dietary_type is None


def test_forget_expired_button_after_forgetting_elsewhere_offers_no_button(service, line_standin, clock):
    remember_vegetarian(service, line_standin)
    old = postbacks(text(service, line_standin, "我的偏好"))["忘記這個偏好"]
    text(service, line_standin, "忘記我的飲食偏好")
    clock.at += timedelta(minutes=5)
    messages = tap(service, line_standin, old)
    assert "忘記這個偏好" not in postbacks(messages)
    assert "目前沒有記住任何飲食偏好" in all_text(messages)
