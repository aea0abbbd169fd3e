"""Memory flows through the in-process WebhookService: real SQLite file, LINE stand-in, an
injected clock, and functions/memory's use case called in-process (DirectMemoryClient)."""
from __future__ import annotations

import socket
from datetime import timedelta

import pytest

from shared.config import WEBHOOK_REQUIRED, Settings
from shared.memory.auth import InternalTokenCredentials
from shared.memory.client import HttpMemoryClient
from shared.store import TransactionConflict
from shared.webhook.service import WebhookService
from shared.wiring import line_gateway, open_store
from tests.conftest import all_text, reply_messages, text_event
from tests.memory_support import (
    USER_A,
    USER_B,
    DirectMemoryClient,
    ScriptedMemoryFunction,
    place_audits,
    postbacks,
    preference_of,
    tap_event,
)


def build_service(base_env, clock, memory="direct", memory_store=None):
    settings = Settings.from_env(base_env, required=WEBHOOK_REQUIRED)
    store = open_store(settings)
    if memory == "direct":
        memory = DirectMemoryClient(settings, memory_store or open_store(settings), clock)
    return WebhookService(settings, store, line_gateway(settings), clock=clock, memory=memory)


@pytest.fixture
def service(base_env, clock):
    return build_service(base_env, clock)


say = reply_messages  # tests/conftest.py


def text(service, standin, words, user=USER_A):
    return say(service, standin, text_event(words, user_id=user))


def tap(service, standin, data, user=USER_A):
    return say(service, standin, tap_event(data, user, service.clock()))  # tapped now


def card_buttons(service, standin, words="長輩吃素，以後優先找蔬食，幫我記住"):
    buttons = postbacks(text(service, standin, words))
    assert set(buttons) == {"同意記住", "先不要"}
    return buttons["同意記住"], buttons["先不要"]


def test_flow_remember_offers_card_with_purpose_and_taipei_expiry_and_stores_nothing(service, line_standin):
    messages = text(service, line_standin, "長輩吃素，以後優先找蔬食，幫我記住")
    words = all_text(messages)
    assert messages[0]["type"] == "flex" and "蔬食" in messages[0]["altText"]
    assert "用途：" in words and "有效至 12:05:00" in words  # 04:00 UTC + 5 min, Asia/Taipei
    assert all(len(data) <= 300 and data.startswith("mem:") for data in postbacks(messages).values())
    assert preference_of(service.store).revision == 0


def test_flow_card_past_five_minutes_is_expired_and_nothing_saved(service, line_standin, clock):
    approve, _ = card_buttons(service, line_standin)
    clock.at += timedelta(minutes=5)
    words = all_text(tap(service, line_standin, approve))
    assert "超過有效時間" in words and "沒有保存" in words
    assert preference_of(service.store).revision == 0


def test_flow_card_just_before_expiry_is_saved(service, line_standin, clock):
    approve, _ = card_buttons(service, line_standin)
    clock.at += timedelta(minutes=5) - timedelta(seconds=1)
    assert "已經記住" in all_text(tap(service, line_standin, approve))
    assert preference_of(service.store).dietary_type == "vegetarian"


def test_flow_decline_cancels_card_and_later_approve_is_refused(service, line_standin):
    approve, decline = card_buttons(service, line_standin)
    words = all_text(tap(service, line_standin, decline))
    assert "不記住" in words and "沒有改變" in words
    refused = all_text(tap(service, line_standin, approve))
    assert "先不要" in refused and "不會記住" in refused
    assert preference_of(service.store).revision == 0


def test_flow_correct_keeps_old_value_until_approved(service, line_standin):
    approve, _ = card_buttons(service, line_standin)
    tap(service, line_standin, approve)
    correction = text(service, line_standin, "改成蛋奶素")
    assert "目前記住的是「蔬食」" in all_text(correction)
    text(service, line_standin, "花壇有推薦吃的嗎？")
    assert place_audits(service.store)[-1]["effective_args"]["dietary_type"] == "vegetarian"
    assert "已經記住" in all_text(tap(service, line_standin, postbacks(correction)["同意記住"]))
    snapshot = preference_of(service.store)
    assert (snapshot.dietary_type, snapshot.revision) == ("ovo_lacto", 2)


def test_flow_view_shows_value_and_consent_time_then_forget_button_removes_it(service, line_standin, clock):
    approve, _ = card_buttons(service, line_standin)
    clock.at += timedelta(seconds=30)
    tap(service, line_standin, approve)
    view = text(service, line_standin, "我的偏好")
    words = all_text(view)
    assert "蔬食" in words and "2026/11/30 12:00" in words
    assert "改成蛋奶素" in words and "改成全素" in words  # correct choices
    forget = postbacks(view)["忘記這個偏好"]
    assert "已經忘記" in all_text(tap(service, line_standin, forget))
    snapshot = preference_of(service.store)
    assert (snapshot.dietary_type, snapshot.consented_at, snapshot.revision) == (None, None, 2)
    assert "目前沒有記住" in all_text(text(service, line_standin, "我的偏好"))


def test_flow_forget_text_then_old_card_is_stale_and_nothing_restored(service, line_standin):
    approve, _ = card_buttons(service, line_standin)
    tap(service, line_standin, approve)
    assert "已經忘記" in all_text(text(service, line_standin, "忘記我的飲食偏好"))
    replay = all_text(tap(service, line_standin, approve))
    assert "失效" in replay
    assert preference_of(service.store).dietary_type is None


def test_flow_forget_also_cancels_a_card_not_yet_approved(service, line_standin):
    approve, _ = card_buttons(service, line_standin)
    assert "沒有記住任何飲食偏好" in all_text(text(service, line_standin, "忘記我的飲食偏好"))
    assert "失效" in all_text(tap(service, line_standin, approve))
    assert preference_of(service.store).dietary_type is None


def test_flow_card_tapped_by_another_user_is_refused_for_both(service, line_standin):
    approve, _ = card_buttons(service, line_standin)
    words = all_text(tap(service, line_standin, approve, user=USER_B))
    assert "無法使用" in words and "不是發給這個 LINE 帳號" in words
    assert preference_of(service.store, USER_B).revision == 0
    assert preference_of(service.store, USER_A).revision == 0


def test_flow_negated_and_reported_text_offer_no_card(service, line_standin):
    for words in ("不要記住我吃素", "朋友說他吃素"):
        messages = text(service, line_standin, words)
        assert not any(data.startswith("mem:") for data in postbacks(messages).values())
        assert "用途：" not in all_text(messages)
    assert preference_of(service.store).revision == 0


def test_flow_remember_same_value_offers_no_card(service, line_standin):
    approve, _ = card_buttons(service, line_standin)
    tap(service, line_standin, approve)
    messages = text(service, line_standin, "以後都找蔬食，幫我記住")
    assert postbacks(messages) == {} and "不用再記" in all_text(messages)


def test_flow_without_memory_function_says_feature_off_and_writes_nothing(base_env, clock, line_standin):
    service = build_service(base_env, clock, memory=None)
    messages = text(service, line_standin, "以後都找蔬食，幫我記住")
    assert postbacks(messages) == {} and "沒有開啟" in all_text(messages)
    assert preference_of(service.store).revision == 0


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_flow_memory_function_unreachable_is_an_honest_failure(base_env, clock, line_standin):
    client = HttpMemoryClient(f"http://127.0.0.1:{_closed_port()}/", InternalTokenCredentials("t"))
    service = build_service(base_env, clock, memory=client)
    approve, _ = card_buttons(service, line_standin)
    words = all_text(tap(service, line_standin, approve))
    assert "沒有保存成功" in words and "稍後" in words
    assert preference_of(service.store).revision == 0


def test_flow_transaction_rerun_makes_no_line_call_inside_and_applies_once(base_env, clock, line_standin):
    seen: list[tuple[int, int]] = []

    def conflict_first(attempt: int) -> None:
        seen.append((attempt, len(line_standin.calls())))
        if attempt == 1:
            raise TransactionConflict("forced re-run")

    settings = Settings.from_env(base_env)
    from tests.unit.conftest import store_at

    memory_store = store_at(settings.store_url, before_commit=conflict_first)
    service = build_service(base_env, clock, memory_store=memory_store)
    approve, _ = card_buttons(service, line_standin)
    calls_before_tap = len(line_standin.calls())
    words = all_text(tap(service, line_standin, approve))
    assert [attempt for attempt, _ in seen] == [1, 2]
    assert [count for _, count in seen] == [calls_before_tap, calls_before_tap]  # no LINE call inside
    assert len(line_standin.calls()) == calls_before_tap + 1  # the reply, after the commit
    assert "已經記住" in words
    assert preference_of(service.store).revision == 1


def test_flow_ovo_lacto_memory_does_not_offer_hemi_for_huatan(service, line_standin):
    approve = postbacks(text(service, line_standin, "以後都找蛋奶素，幫我記住"))["同意記住"]
    tap(service, line_standin, approve)
    words = all_text(text(service, line_standin, "花壇有推薦吃的嗎？"))
    assert "和米素食" not in words
    assert "偏好：蛋奶素" in words and "沒有找到" in words and "不限素別" in words
    [audit] = place_audits(service.store)
    assert (audit["origin"], audit["effective_args"]["dietary_type"], audit["result_ids"]) == \
        ("consented_memory", "ovo_lacto", [])


def test_flow_places_postback_applies_memory_when_diet_left_open(service, line_standin, clock):
    tap(service, line_standin, postbacks(text(service, line_standin, "以後都找蔬食，幫我記住"))["同意記住"])
    words = all_text(tap(service, line_standin, "places:area=花壇鄉"))
    assert "依你同意記住的偏好：蔬食" in words and "和米素食" in words
    clock.at += timedelta(seconds=1)
    tap(service, line_standin, "places:area=花壇鄉&diet=any")
    first, second = place_audits(service.store)
    assert (first["origin"], first["proposed_args"]["dietary_type"]) == ("consented_memory", None)
    assert (second["origin"], second["effective_args"]["dietary_type"]) == ("this_turn", "any")


def test_flow_memory_outcome_unknown_says_so_and_points_to_the_view(base_env, clock, line_standin):
    server = ScriptedMemoryFunction((503, {"error": "outcome_unknown"}, 0))
    try:
        service = build_service(base_env, clock, memory=HttpMemoryClient(server.url, InternalTokenCredentials("t")))
        approve, _ = card_buttons(service, line_standin)
        words = all_text(tap(service, line_standin, approve))
    finally:
        server.close()
    assert "還不確定" in words and "我的偏好" in words and "不會重複" in words


@pytest.mark.parametrize("words, expected", [("幫我記住", "想記住哪一種"), ("以後都不限，幫我記住", "不用記住")])
def test_flow_remember_without_a_storable_diet_explains_and_offers_no_card(service, line_standin, words, expected):
    messages = text(service, line_standin, words)
    assert expected in all_text(messages)
    assert not any(data.startswith("mem:") for data in postbacks(messages).values())


def test_flow_correction_inside_a_place_search_is_a_search(service, line_standin):
    words = all_text(text(service, line_standin, "花壇改成蛋奶素呢"))
    assert "用途：" not in words
    [audit] = place_audits(service.store)
    assert (audit["origin"], audit["effective_args"]["dietary_type"]) == ("this_turn", "ovo_lacto")


def test_flow_remember_a_negated_diet_offers_no_card_and_writes_nothing(service, line_standin):
    messages = text(service, line_standin, "幫我記住我不吃素")
    words = all_text(messages)
    assert not any(data.startswith("mem:") for data in postbacks(messages).values())
    assert [m["type"] for m in messages] == ["text"] and "用途：" not in words
    assert "不用記住" in words
    assert preference_of(service.store).revision == 0


@pytest.mark.parametrize("words, diet_word", [("朋友說他吃素，幫我記住", "蔬食"),
                                              ("我朋友說他吃全素，以後都幫我找全素", "全素")])
def test_flow_reported_speech_with_a_request_offers_no_card_and_says_what_to_type(service, line_standin,
                                                                                  words, diet_word):
    messages = text(service, line_standin, words)
    assert not any(data.startswith("mem:") for data in postbacks(messages).values())
    assert "用途：" not in all_text(messages)
    assert place_audits(service.store) == []  # answered, not passed on to a place search
    suggestion = messages[-1]["quickReply"]["items"][0]["action"]["text"]  # its own suggestion first, then the menu
    assert diet_word in suggestion and suggestion in messages[-1]["text"]
    card = text(service, line_standin, suggestion)  # typing what it suggests gives the card
    assert set(postbacks(card)) == {"同意記住", "先不要"}
    assert preference_of(service.store).revision == 0


def test_flow_decline_replayed_after_approve_and_forget_is_the_stale_message(service, line_standin):
    approve, decline = card_buttons(service, line_standin)
    tap(service, line_standin, approve)
    text(service, line_standin, "忘記我的飲食偏好")
    words = all_text(tap(service, line_standin, decline))
    assert "失效" in words and "已取消" not in words
    snapshot = preference_of(service.store)
    assert (snapshot.dietary_type, snapshot.revision) == (None, 2)
