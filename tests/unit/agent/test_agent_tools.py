"""The model's tools, one per ask family of the offline router, through the real ADK Runner and
google-genai client to the scripted Gemini stand-in: each call the model makes becomes the router's own
Proposal and reply (shared.agent.calls, shared.agent.tools). The scripted call is the one a competent
model makes for the text; the stand-in looks nothing up. Gemini is never called."""
from __future__ import annotations

import dataclasses
from datetime import date

import pytest

from shared.turn import ask
from shared.turn.router import route
from shared.turn.rules.follow_ups import FOLLOW_UP_TOOL
from tests.unit.agent.agent_support import call, labels, model_turn, read_by_resident, router_turn
from tools.line_messages import all_text

# shared.agent.* (google.adk, google.genai) is imported by the helpers that use it, not at collection.


# -- each ask family on the model path ------------------------------------------------------------------

def test_agent_greeting_gets_the_greeting_not_the_no_data_answer(standin, settings, store):
    messages, audit = model_turn(standin, settings, store, "你好", call("small_talk", kind="greeting"))
    assert messages[-1]["text"].startswith("你好！我可以幫你") and "沒有資料可以回答" not in all_text(messages)
    assert (audit["source"], audit["tool"], audit["status"]) == ("model", "greeting", "fixed")


@pytest.mark.parametrize("text, kind, said", [
    ("謝謝你", "thanks", "不客氣！"),
    ("收到", "ok", "好的！"),
])
def test_agent_small_talk_gets_the_routers_short_answer(standin, settings, store, text, kind, said):
    messages, _ = model_turn(standin, settings, store, text, call("small_talk", kind=kind))
    assert messages[-1]["text"].startswith(said)


def test_agent_asking_for_a_person_gets_how_to_leave_a_request_and_nothing_is_sent(standin, settings, store):
    messages, audit = model_turn(standin, settings, store, "我要找真人幫忙", call("ask_for_person"))
    assert "轉給公所工作人員" in all_text(messages) and "確認送出" in all_text(messages)
    assert store.query("handoff_requests", where={}) == [] and store.query("handoff_drafts", where={}) == []
    assert (audit["tool"], audit["status"]) == ("handoff_info", "fixed")


def test_agent_request_status_is_read_from_the_residents_requests(standin, settings, store):
    messages, audit = model_turn(standin, settings, store, "我上次的服務單處理到哪了", call("show_request_status"))
    assert messages[-1]["text"].startswith("目前查不到你登記的服務詢問") and "沒有資料可以回答" not in all_text(messages)
    assert (audit["tool"], audit["status"]) == ("handoff_status", "fixed")


def test_agent_cancel_help_says_how_cancelling_works(standin, settings, store):
    messages, audit = model_turn(standin, settings, store, "那個單幫我撤掉", call("explain_cancel_request"))
    assert "取消" in all_text(messages) and "查看原本服務單" in labels(messages)
    assert audit["tool"] == "handoff_cancel_help"


def test_agent_another_county_is_the_elsewhere_limit(standin, settings, store):
    messages, audit = model_turn(standin, settings, store, "台中有素食嗎", call("show_limits", kinds=["other_county"]))
    assert "我只有彰化縣各鄉鎮的資料" in all_text(messages)
    assert (audit["tool"], audit["proposed_args"]) == ("show_limits", {"kinds": ["elsewhere"]})


def test_agent_shop_named_without_a_township_is_found_by_name(standin, settings, store):
    messages, audit = model_turn(standin, settings, store, "john手作電話幾號", call("find_place", name="john手作"))
    words = all_text(messages)
    assert "John手作蔬食" in words and "彰化市" in words and "請先選鄉鎮" not in words
    assert (audit["tool"], audit["status"]) == ("find_place", "ok")
    assert audit["proposed_args"] == {"name": "john手作", "area": None}
    assert audit["effective_args"]["area"] == "彰化市"  # found by name, then read as its township
    assert "彰化市的活動" in labels(messages)


def test_agent_shop_name_found_nowhere_is_no_match_not_a_picker(standin, settings, store):
    messages, audit = model_turn(standin, settings, store, "阿霞素食館在哪", call("find_place", name="阿霞素食館"))
    assert audit["status"] == "no_match" and audit["result_ids"] == []
    assert "和米素食" not in all_text(messages) and "John手作蔬食" not in all_text(messages)


def test_agent_whole_county_searches_every_township_for_shops(standin, settings, store):
    messages, audit = model_turn(standin, settings, store, "全彰化有素食店嗎",
                                 call("search_local_places", area="全彰化", dietary_type="vegetarian"))
    words = all_text(messages)
    assert "和米素食" in words and "John手作蔬食" in words  # 花壇鄉 and 彰化市
    assert audit["status"] == "ok" and len(audit["result_ids"]) == 2 and audit["effective_args"]["area"] is None


def test_agent_whole_county_searches_every_township_for_events(standin, settings, store):
    _, audit = model_turn(standin, settings, store, "全彰化12月有什麼活動", call(
        "search_local_events", area="全彰化", date_from="2026-12-01", date_to="2026-12-31"))
    assert audit["proposed_args"] == {"area": None, "date": "2026-12-01/2027-01-01", "keyword": None}
    _, one = model_turn(standin, settings, store, "花壇12月有什麼活動", call(
        "search_local_events", area="花壇鄉", date_from="2026-12-01", date_to="2026-12-31"))
    assert set(one["result_ids"]) < set(audit["result_ids"])  # more than one township's events


def test_agent_someone_elses_diet_is_never_offered_to_remember(standin, settings, store):
    messages, audit = model_turn(standin, settings, store, "我媽媽吃全素 彰化市有嗎", call(
        "search_local_places", area="彰化市", dietary_type="vegan", diet_is_someone_elses=True))
    assert audit["status"] == "ok" and audit["effective_args"]["dietary_type"] == "vegan"
    assert not any(label.startswith("記住") for label in labels(messages))
    own, _ = model_turn(standin, settings, store, "我吃全素 彰化市有嗎",
                        call("search_local_places", area="彰化市", dietary_type="vegan"))
    assert "記住：全素" in labels(own)  # the resident's own diet is offered


def test_agent_someone_elses_diet_beside_a_shop_name_is_never_offered(standin, settings, store):
    messages, _ = model_turn(standin, settings, store, "我朋友吃全素 和米素食可以嗎", call(
        "find_place", name="和米素食", dietary_type="vegan", diet_is_someone_elses=True))
    assert "和米素食只記錄「蔬食」" in all_text(messages)  # the diet asked is answered per shop
    assert not any(label.startswith("記住") for label in labels(messages))


@pytest.mark.parametrize("text, step, said", [
    ("鹿港有素食店嗎？那邊停車方便嗎", call("search_local_places", area="鹿港鎮", dietary_type="vegetarian",
                                           limits_asked=["parking"]), "我沒有停車場或車位的資料"),
    ("花壇有素食嗎？可以訂位嗎", call("search_local_places", area="花壇鄉", dietary_type="vegetarian",
                                    limits_asked=["booking"]), "我不能幫你訂位"),
    ("這週末彰化市有活動嗎 怎麼去", call("search_local_events", area="彰化市", date_from="2026-12-05",
                                       date_to="2026-12-06", limits_asked=["transport"]), "我沒有公車、客運或火車"),
    ("和米素食可以刷卡嗎", call("find_place", name="和米素食", limits_asked=["payment"]), "付款方式"),
], ids=["parking-beside-shops", "booking-beside-shops", "transport-beside-events", "payment-beside-a-shop"])
def test_agent_limit_asked_beside_a_search_is_said(standin, settings, store, text, step, said):
    messages, audit = model_turn(standin, settings, store, text, step)
    assert said in all_text(messages)
    assert audit["status"] in ("ok", "no_match") and audit["tool"] == step["function_call"]["name"]


def test_agent_opening_hours_beside_events_is_not_said_as_a_shops_hours(standin, settings, store):
    messages, audit = model_turn(standin, settings, store, "這週末彰化市的市集幾點開始", call(
        "search_local_events", area="彰化市", date_from="2026-12-05", date_to="2026-12-06", keyword="市集",
        limits_asked=["opening_hours"]))
    assert audit["tool"] == "search_local_events" and audit["status"] in ("ok", "no_match")
    assert "營業時間" not in all_text(messages)


def test_agent_second_ask_of_the_other_kind_is_offered_as_a_button(standin, settings, store):
    messages, audit = model_turn(standin, settings, store, "週末彰化市有活動嗎？順便推薦附近的素食店", call(
        "search_local_events", area="彰化市", date_from="2026-12-05", date_to="2026-12-06",
        second_ask_kind="places"))
    assert audit["tool"] == "search_local_events"
    assert "請點下方「彰化市的店家」" in all_text(messages) and "彰化市的店家" in labels(messages)


def test_agent_second_ask_of_the_same_kind_is_named_and_offered_as_a_button(standin, settings, store):
    messages, audit = model_turn(standin, settings, store, "聖誕節員林有活動嗎？還有12/5到12/7全彰化的市集", call(
        "search_local_events", area="員林市", date_from="2026-12-25", date_to="2026-12-25",
        second_ask_kind="events", second_ask_area="全彰化", second_ask_date_from="2026-12-05",
        second_ask_date_to="2026-12-07", second_ask_keyword="市集"))
    words = all_text(messages)
    assert "你問了兩件事，先查第一件" in words and "12/5～12/7全彰化市集" in labels(messages)
    assert audit["proposed_args"]["date"] == "2026-12-25"  # the second ask never filters the first


def test_agent_crisis_read_by_the_model_gets_the_safety_reply_alone(standin, settings, store):
    messages, audit = model_turn(standin, settings, store, "活著好累 花壇有素食嗎", call(
        "search_local_places", area="花壇鄉", limits_asked=["crisis"]))
    assert "1925" in all_text(messages) and "和米素食" not in all_text(messages)
    assert (audit["tool"], audit["proposed_args"]) == ("show_limits", {"kinds": ["crisis"]})


# -- both readers build the same ask ---------------------------------------------------------------------

#: A text and the call a competent model makes for it (today: Monday 2026-11-30, Asia/Taipei).
SAME_ASK = [
    ("你好", call("small_talk", kind="greeting")),
    ("謝謝", call("small_talk", kind="thanks")),
    ("好", call("small_talk", kind="ok")),
    ("我又沒說要你記住", call("small_talk", kind="ok", memory_remark="do_not_remember")),
    ("我要找人幫忙", call("ask_for_person")),
    ("我的服務單進度", call("show_request_status")),
    ("要怎麼取消服務單", call("explain_cancel_request")),
    ("台中有素食嗎", call("show_limits", kinds=["other_county"])),
    ("彰化縣政府電話幾號", call("show_limits", kinds=["directory"])),
    ("有人打電話說我中獎要先匯錢", call("show_limits", kinds=["fraud"])),
    ("該投誰", call("show_limits", kinds=["politics_religion"])),
    ("幫我寫一首詩", call("show_limits", kinds=["off_topic"])),
    ("以後不用記了，刪掉", call("show_privacy", topic="forget_my_diet")),
    ("你們會不會把我的電話跟資料給別人", call("show_privacy", topic="who_sees_my_data")),
    ("我的資料", call("show_privacy", topic="what_is_kept")),
    ("那鹿港呢", call("ask_events_or_shops", area="鹿港鎮")),
    ("和米素食在哪裡", call("find_place", name="和米素食")),
    ("john手作有全素嗎", call("find_place", name="john手作", dietary_type="vegan")),
    ("全彰化有全素的店嗎", call("search_local_places", area="全彰化", dietary_type="vegan")),
    ("全彰化這週末有什麼活動", call("search_local_events", area="全彰化", date_from="2026-12-05",
                                   date_to="2026-12-06")),
    ("12/5到12/7彰化市有活動嗎", call("search_local_events", area="彰化市", date_from="2026-12-05",
                                     date_to="2026-12-07")),
    ("附近有素食嗎", call("search_local_places", dietary_type="vegetarian", vague_place_words=["附近"])),
    ("附近有什麼活動", call("search_local_events", vague_place_words=["附近"])),
    ("我吃全素", call("search_local_places", dietary_type="vegan", states_own_diet=True)),
    ("我媽媽吃全素 花壇有嗎", call("search_local_places", area="花壇鄉", dietary_type="vegan",
                                  diet_is_someone_elses=True)),
    ("鹿港有素食店嗎？那邊停車方便嗎", call("search_local_places", area="鹿港鎮", dietary_type="vegetarian",
                                           limits_asked=["parking"])),
    ("花壇有素食嗎？可以訂位嗎", call("search_local_places", area="花壇鄉", dietary_type="vegetarian",
                                    limits_asked=["booking"])),
    ("彰化市有素食自助餐嗎", call("search_local_places", area="彰化市", dietary_type="vegetarian",
                                 shop_kind_not_recorded="自助餐")),
    ("週末彰化市有活動嗎？順便推薦附近的素食店", call("search_local_events", area="彰化市", date_from="2026-12-05",
                                                   date_to="2026-12-06", second_ask_kind="places")),
    ("花壇有素食店嗎？還有這週末有什麼活動", call("search_local_places", area="花壇鄉", dietary_type="vegetarian",
                                               second_ask_kind="events", second_ask_date_from="2026-12-05",
                                               second_ask_date_to="2026-12-06")),
    ("聖誕節員林有活動嗎？還有12/5到12/7全彰化的市集", call(
        "search_local_events", area="員林市", date_from="2026-12-25", date_to="2026-12-25", second_ask_kind="events",
        second_ask_area="全彰化", second_ask_date_from="2026-12-05", second_ask_date_to="2026-12-07",
        second_ask_keyword="市集")),
    ("員林有全素的店嗎？還有鹿港的蛋奶素", call("search_local_places", area="員林市", dietary_type="vegan",
                                              second_ask_kind="places", second_ask_area="鹿港鎮",
                                              second_ask_dietary_type="ovo_lacto")),
    # a date named that cannot be read: asked again, never every date
    ("12/40員林有活動嗎", call("search_local_events", area="員林市", date_not_understood=True)),
    ("尾牙彰化市有活動嗎", call("search_local_events", area="彰化市", date_not_understood=True)),
    # two dates asked apart: the days between are not searched
    ("今天或週日花壇有活動嗎", call("search_local_events", area="花壇鄉", date_from="2026-11-30", date_to="2026-11-30",
                                  also_date_from="2026-12-06", also_date_to="2026-12-06")),
    ("這週六跟下週日鹿港有活動嗎", call("search_local_events", area="鹿港鎮", date_from="2026-12-05",
                                      date_to="2026-12-05", also_date_from="2026-12-13", also_date_to="2026-12-13")),
    # whom an event suits, and a question in the resident's words: said as not recorded
    ("週六彰化市市集 阿公可以去嗎", call("search_local_events", area="彰化市", date_from="2026-12-05",
                                       date_to="2026-12-05", keyword="市集", suits_whom="阿公")),
    ("明天彰化市有沒有摸彩", call("search_local_events", area="彰化市", date_from="2026-12-01", date_to="2026-12-01",
                                 unasked_questions=["摸彩"])),
    ("john手作蔬食有插座嗎", call("find_place", name="John手作蔬食", unasked_questions=["插座"])),
    ("和米素食有包廂嗎", call("find_place", name="和米素食", unasked_questions=["包廂"])),
    # a misspelt shop name: 你是說…嗎 with a button that asks again, spelt right
    ("合米素食在哪裡", call("find_place", name="合米素食")),
    ("jhon手作有全素嗎", call("find_place", name="jhon手作", dietary_type="vegan")),
    # a bare 彰化 beside a township, read as 彰化市
    ("鹿港 彰化 哪裡有蛋奶素", call("search_local_places", area="鹿港鎮", dietary_type="ovo_lacto",
                                 other_townships=["彰化市"], changhua_read_as_city=True)),
]


@pytest.mark.parametrize("text, step", SAME_ASK, ids=[text for text, _ in SAME_ASK])
def test_agent_call_and_router_build_the_same_ask_and_reply(standin, settings, store, text, step):
    routed, by_router = router_turn(settings, store, text)
    modelled, by_model = model_turn(standin, settings, store, text, step)
    assert read_by_resident(modelled) == read_by_resident(routed)
    assert (by_model["tool"], by_model["status"]) == (by_router["tool"], by_router["status"])
    assert sorted(by_model["result_ids"]) == sorted(by_router["result_ids"])


#: The day SAME_ASK's relative dates are read on (Asia/Taipei).
SAME_ASK_TODAY = date(2026, 11, 30)


def _as_days(note):
    """A note with any date it carries written as the days it asks on SAME_ASK_TODAY (the router reads
    這週末 as a week, the model says calendar days: the same days are the same ask)."""
    if isinstance(note, ask.SecondAsk) and isinstance(note.ask, ask.EventsSearch) and note.ask.date is not None:
        return ask.SecondAsk(dataclasses.replace(note.ask, date=note.ask.date.resolve(SAME_ASK_TODAY)))
    return note


@pytest.mark.parametrize("text, step", SAME_ASK, ids=[text for text, _ in SAME_ASK])
def test_agent_call_and_router_read_the_same_notes(text, step):
    from shared.agent.calls import misspelt_shop, proposal_of

    by_model = misspelt_shop(proposal_of(step["function_call"]["name"], step["function_call"]["args"]), text)
    by_router = route(text)
    if by_router.tool == FOLLOW_UP_TOOL:  # 那鹿港呢: with no conversation to follow, the message read alone
        by_router = by_router.args["alone"]
    assert by_model.tool == by_router.tool
    # limits are said first whatever their place among the notes; the others are said in their order
    assert {n for n in by_model.notes if isinstance(n, ask.Limit)} == {n for n in by_router.notes if isinstance(n, ask.Limit)}
    assert [_as_days(n) for n in by_model.notes if not isinstance(n, ask.Limit)] == \
        [_as_days(n) for n in by_router.notes if not isinstance(n, ask.Limit)]


def test_agent_memory_card_is_never_offered_in_a_group(standin, settings, store):
    from shared.agent.agent import run_model_text_turn
    from tests.unit.agent.agent_support import ctx_for

    standin.script([call("propose_dietary_memory", dietary_type="lacto")])
    ctx = dataclasses.replace(ctx_for(settings, store), shared_chat=True)
    messages = [m.to_dict() for m in run_model_text_turn(ctx, "我平常吃奶素，之後找店都照這個").messages]
    assert "一對一" in all_text(messages) and "同意記住" not in all_text(messages)
    assert all(m["type"] != "flex" for m in messages) and store.query("memory_cards", where={}) == []


def test_agent_misspelt_shop_of_another_township_than_named_is_not_offered(standin, settings, store):
    reply, audit = model_turn(standin, settings, store, "彰化市的合米素食在哪",
                              call("find_place", name="合米素食", area="彰化市"))
    assert audit["tool"] == "find_place"
    assert "你是說" not in all_text(reply)


def test_agent_misspelt_shop_button_sends_the_message_spelt_right(standin, settings, store):
    reply, audit = model_turn(standin, settings, store, "合米素食要怎麼去", call("find_place", name="合米素食"))
    assert audit["tool"] == "did_you_mean"
    assert "是，和米素食" in labels(reply)
    assert "和米素食要怎麼去" in all_text(reply)
