"""shared.turn.reading: whether the offline router reads a message completely (the router-first webhook
answers those inline and queues the rest for the model), and that judging it costs work linear in the
text. Resident-facing behaviour through the webhook: tests/unit/agent/test_agent_webhook.py."""
from __future__ import annotations

import pytest

from shared.text import reading_form
from shared.turn.proposal import Proposal
from shared.turn.reading import Incomplete, read, unread_words
from shared.turn.rules.titles import demo_titles
from shared.turn.rules.townships import english_places
from tests.unit.turn.test_router_cost import SHAPES, assert_linear
from tools.eval import DEFAULT_CASES, load_cases


@pytest.mark.parametrize("text", [
    "花壇有素食嗎", "這週末員林有什麼活動", "12/5彰化市有市集嗎", "聖誕節鹿港有活動嗎", "花壇哪裡有全素的店",
    "你好", "謝謝", "台中有素食嗎", "我的服務單進度", "新需求：路燈壞了", "明仔載有啥物活動",
    "我媽不吃蛋，花壇有素食嗎", "去鹿港要坐什麼車", "any vegan food in 彰化市?", "12/5彰化市市集要帶水嗎",
])
def test_reading_of_a_message_the_router_reads_whole_is_complete(text):
    reading = read(text)
    assert reading.complete and reading.why_incomplete is None, (text, reading)


@pytest.mark.parametrize("text", ["那下禮拜呢", "那溪湖呢", "那全素的呢", "換成週日", "改成星期天好了",
                                  "不是啦 我是說鹿港", "啊不對 是禮拜天", "我是要問溪湖的"])
def test_reading_of_a_follow_up_or_correction_is_complete(text):
    """Follow-ups are the router's (merged with the conversation state inline), never queued for the model."""
    reading = read(text)
    assert reading.proposal.tool == "follow_up" and reading.complete, (text, reading)


@pytest.mark.parametrize("text", ["笑死 那下禮拜呢", "那下禮拜呢 我想找安靜可以看書的", "不是啦 我是說笑死鹿港"])
def test_reading_of_a_follow_up_with_words_beside_it_is_not_complete(text):
    """Words the follow-up's conditions do not cover send it to the model, which sees the last search."""
    reading = read(text)
    assert not reading.complete, (text, reading)


@pytest.mark.parametrize("text", ["第三個在哪裡集合", "第2家電話幾號", "最後一個要錢嗎", "剛剛那家在哪", "那個市集"])
def test_reading_of_an_item_of_the_last_list_is_complete(text):
    """Items by position are answered inline from the conversation state, never queued for the model."""
    reading = read(text)
    assert reading.proposal.tool == "item_detail" and reading.complete, (text, reading)


@pytest.mark.parametrize("text", ["我不想活了", "我阿公跌倒了起不來", "剛剛有人昏倒了 花壇有什麼好吃的",
                                  "有人打電話說我中獎要先匯錢", "自稱檢察官的人叫我去領錢", "說我帳戶被盜用要監管帳戶"])
def test_reading_of_crisis_emergency_and_a_scam_is_always_complete(text):
    reading = read(text)
    assert reading.complete and reading.proposal.tool == "show_limits", text


@pytest.mark.parametrize("text, why", [
    ("嗯嗯那個", Incomplete.NOTHING_READ),
    ("合米素食有全素嗎", Incomplete.SPELLING),
    ("花潭有素食嗎", Incomplete.UNKNOWN_PLACE),
    ("聖誕夜彰化市有沒有報佳音", Incomplete.QUESTION_LEFT),
    ("笑死 花壇有素食嗎", Incomplete.UNREAD_WORDS),
    ("員林戶政事務所幾點開", Incomplete.UNREAD_WORDS),
    ("花壇有素食嗎 我想找安靜可以看書的", Incomplete.UNREAD_WORDS),
])
def test_reading_names_why_it_is_not_complete(text, why):
    reading = read(text)
    assert not reading.complete and reading.why_incomplete is why, (text, reading)


def test_reading_keeps_the_routers_own_proposal():
    from shared.turn.router import route

    for text in ("笑死 花壇有素食嗎", "花壇有素食嗎"):
        assert read(text).proposal == route(text)


def test_reading_is_complete_for_most_eval_inputs():
    texts = [case["input"] for case in load_cases(DEFAULT_CASES)
             if isinstance(case.get("input"), str) and not (case.get("setup") or {}).get("observe")]
    complete = sum(read(text).complete for text in texts)
    assert complete / len(texts) >= 0.8, (complete, len(texts))


@pytest.mark.parametrize("shape", SHAPES)
def test_reading_unread_words_work_grows_linearly_with_the_text(shape):
    """The remainder is looked for whatever the router proposed (``read`` skips it for the help menu)."""
    def remainder(text: str) -> str:
        return unread_words(english_places(reading_form(text)), Proposal("search_local_events"), demo_titles())

    assert_linear(remainder, shape)
