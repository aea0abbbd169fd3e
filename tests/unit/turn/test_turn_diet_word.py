"""A bare diet word is no dead end: 素食 / 全素 / 我吃素 get the shop picker, never a consent card alone.

The kind: a diet word, or a short statement of one's own diet, with no township gets the shop
picker carrying that diet (as 我是素食者 did). A statement about oneself (我吃素, 我吃全素, 我是素食者)
may add a 「記住：…」 button, which only asks for the consent card; a bare word (素食) states nothing
about the user and offers no memory; nothing is stored either way (docs/design.md §6). Through a signed
webhook body with the in-process memory client; its eval cases are in tests/eval/cases/.
"""
from __future__ import annotations

from urllib.parse import parse_qs

import pytest

from tests.conftest import all_text, postback_event, reply_messages, text_event
from tests.memory_support import USER_A, postbacks, preference_of, webhook_with_memory
from tests.unit.turn.test_turn_multiple_asks_and_follow_ups import _quick_labels, pinned  # noqa: F401  (fixture)


@pytest.fixture
def service(base_env, pinned):  # noqa: F811
    return webhook_with_memory(base_env, pinned)


def _say(service, standin, text):
    return reply_messages(service, standin, text_event(text, user_id=USER_A))


def _picker_diets(messages) -> dict[str, str | None]:
    """Township → the diet its picker button carries."""
    found = {}
    for message in messages:
        for item in (message.get("quickReply") or {}).get("items", []):
            data = item["action"].get("data") or ""
            if data.startswith("places:"):
                query = parse_qs(data.partition(":")[2])
                found[query["area"][0]] = (query.get("diet") or [None])[0]
    return found


BARE = [("素食", "vegetarian"), ("全素", "vegan"), ("蛋奶素", "ovo_lacto"), ("純素", "vegan"), ("吃素", "vegetarian"),
        ("蔬食", "vegetarian"), ("素食！", "vegetarian")]
OWN = [("我吃素", "vegetarian", "蔬食"), ("我吃全素", "vegan", "全素"), ("我是素食者", "vegetarian", "蔬食"),
       ("我是吃素的喔", "vegetarian", "蔬食"), ("我們家吃素", "vegetarian", "蔬食"), ("我吃蛋奶素", "ovo_lacto", "蛋奶素"),
       ("我 吃 全素", "vegan", "全素")]


@pytest.mark.parametrize("text, diet", BARE)
def test_diet_word_bare_gets_the_picker_and_no_memory_offer(service, line_standin, text, diet):
    messages = _say(service, line_standin, text)
    diets = _picker_diets(messages)
    assert diets and set(diets.values()) == {diet}  # every township button keeps the diet
    text_out = all_text(messages)
    assert "同意記住" not in text_out and not any(label.startswith("記住") for label in _quick_labels(messages))
    assert all(message["type"] != "flex" for message in messages)  # no consent card
    assert preference_of(service.store).dietary_type is None


@pytest.mark.parametrize("text, diet, label", OWN)
def test_diet_word_own_statement_gets_the_picker_with_an_offer_button(service, line_standin, text, diet, label):
    messages = _say(service, line_standin, text)
    diets = _picker_diets(messages)
    assert diets and set(diets.values()) == {diet}
    labels = _quick_labels(messages)
    # the location button, the townships, the offer last
    assert labels[-1] == f"記住：{label}" and labels[:-1] == ["分享我的位置", *diets]
    assert "不點就什麼都不保存" in all_text(messages) and "同意記住" not in all_text(messages)
    assert all(message["type"] != "flex" for message in messages)
    assert preference_of(service.store).dietary_type is None


def test_diet_word_offer_button_leads_to_the_consent_card_and_a_township_tap_searches(service, line_standin):
    messages = _say(service, line_standin, "我吃全素")
    [remember] = [item["action"]["text"] for message in messages
                  for item in message["quickReply"]["items"] if item["action"]["label"] == "記住：全素"]
    card = _say(service, line_standin, remember)
    assert "同意記住" in all_text(card) and preference_of(service.store).dietary_type is None
    data = next(item["action"]["data"] for item in messages[-1]["quickReply"]["items"]
                if item["action"].get("data", "").startswith("places:"))
    found = reply_messages(service, line_standin, postback_event(data, user_id=USER_A))
    assert "全素" in all_text(found)


def _remember(service, standin, diet_word):
    card = _say(service, standin, f"以後都找{diet_word}，幫我記住")
    reply_messages(service, standin, postback_event(postbacks(card)["同意記住"], user_id=USER_A))


@pytest.mark.parametrize("text", ["我吃全素", "我是素食者"])
def test_diet_word_negative_no_offer_when_remembered_or_broader(service, line_standin, text):
    _remember(service, line_standin, "全素")  # 我是素食者 (蔬食) never overwrites a finer 全素
    messages = _say(service, line_standin, text)
    assert _picker_diets(messages)
    assert not any(label.startswith("記住") for label in _quick_labels(messages))


@pytest.mark.parametrize("text", ["我媽吃素", "朋友吃全素"])
def test_diet_word_negative_someone_elses_diet_is_not_offered(service, line_standin, text):
    messages = _say(service, line_standin, text)
    assert _picker_diets(messages)
    assert not any(label.startswith("記住") for label in _quick_labels(messages))


@pytest.mark.parametrize("text", ["我吃素，幫我記住", "以後都吃全素"])
def test_diet_word_negative_a_request_to_remember_still_gets_the_card(service, line_standin, text):
    assert "同意記住" in all_text(_say(service, line_standin, text))


def test_diet_word_negative_a_township_still_searches(service, line_standin):
    messages = _say(service, line_standin, "我吃全素 彰化市")
    assert any(message["type"] == "flex" for message in messages) and "同意記住" not in all_text(messages)


#: Taiwanese and colloquial ways to say "eats vegetarian" (呷 = 吃, ㄟ = 的, 食菜 = 吃素).
DIALECT = ["有呷菜ㄟ店嗎 員林", "有呷素ㄟ店嗎 員林", "員林有食菜的店嗎", "員林哪裡可以吃菜", "花壇有呷菜ㄟ店嗎",
           "彰化市有食素ㄟ店家嗎", "ㄟ 員林有素食嗎"]


@pytest.mark.parametrize("text", DIALECT)
def test_diet_word_dialect_is_read_as_a_diet_and_no_detail_is_said_unasked(service, line_standin, text):
    words = all_text(_say(service, line_standin, text))
    assert "沒有記錄" not in words and "其他細節" not in words
    assert "蔬食" in words


def test_diet_word_dialect_with_a_real_detail_still_says_it_once(service, line_standin):
    words = all_text(_say(service, line_standin, "彰化市有呷菜ㄟ店嗎 可以刷卡嗎"))
    assert words.count("沒有記錄") == 1 and "其他細節" not in words
