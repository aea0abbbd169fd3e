"""Who goes, and the privacy answer after a request (offline router, the signed webhook in process):

- who goes (阿公想去看龍舟, 阿嬤想看龍舟賽, 想帶阿公去看龍舟賽) is no 長輩 topic: it filters nothing when
  the message names an event or another topic, so the named event is found; a topic asked for
  (有長輩的活動嗎, 長輩可以去的市集) still filters.
- the privacy answer right after a request carrying a phone number says that number is kept with it.
Clock: 2026-12-01 10:00 Asia/Taipei, a Tuesday.
"""
from __future__ import annotations

import pytest

from shared.handoff import records
from tests.conftest import all_text, postback_event, reply_messages, text_event
from tests.unit.turn.test_router_named_events import routed, service  # noqa: F401 - the TDX snapshot's webhook


@pytest.mark.parametrize("text, keyword, area", [
    ("阿公想去看龍舟", "龍舟", None),
    ("阿嬤想看龍舟賽", "龍舟賽", None),
    ("想帶阿公去看龍舟賽", "龍舟賽", None),
    ("阿公要去看龍舟賽嗎", "龍舟賽", None),
    ("阿嬤想去鹿港看龍舟", "龍舟", "鹿港鎮"),
    # variants: another topic named beside who goes
    ("阿公想去看市集", "市集", None),
    ("想帶阿嬤去逛花卉市集", "市集", None),
    ("我媽想看展覽", "展覽", None),
])
def test_router_who_goes_is_no_topic_beside_a_named_event_or_topic(text, keyword, area):
    proposal = routed(text)
    assert proposal.tool == "search_local_events", proposal
    assert (proposal.args["keyword"], proposal.args["area"]) == (keyword, area)


@pytest.mark.parametrize("text, keyword", [
    ("有長輩的活動嗎", "長輩"),            # the topic asked for
    ("長輩活動", "長輩"),
    ("長輩可以去的市集", "市集 長輩"),
    ("帶小朋友去的活動", "親子"),          # who goes is the only cue of what is asked
    ("週日想帶孩子去玩", "親子"),
    ("阿嬤想去走走 鹿港這個月有什麼活動", "長輩"),
])
def test_router_a_topic_asked_for_still_filters(text, keyword):
    assert routed(text).args["keyword"] == keyword


@pytest.mark.parametrize("text", ["阿公想去看龍舟", "阿嬤想看龍舟賽", "想帶阿公去看龍舟賽"])
def test_webhook_named_event_is_found_for_who_goes(service, line_standin, text):  # noqa: F811
    words = all_text(reply_messages(service, line_standin, text_event(text)))
    assert "鹿港慶端陽龍舟賽" in words
    assert "長輩" not in words and "沒有找到" not in words


def test_webhook_privacy_answer_after_a_request_with_a_phone_number_says_it_is_kept(service, line_standin):  # noqa: F811
    """Never 「LOCAL 沒有存你的電話號碼」 right after a request carrying one: the answer says a number
    written into a request is kept with it, and the request's text does hold it."""
    card = reply_messages(service, line_standin, text_event("新需求：請工作人員回電 0912-345-678，我姓陳"))
    confirm = next(button["action"]["data"] for message in card
                   for button in ((message.get("contents") or {}).get("footer") or {}).get("contents", [])
                   if button.get("action", {}).get("label") == "確認送出")
    assert "單號" in all_text(reply_messages(service, line_standin, postback_event(confirm)))
    [request] = service.store.query(records.REQUESTS, where={})
    assert "0912-345-678" in request["text"]
    for question in ("你們會不會把我的資料給別人", "你們有我的電話嗎"):
        words = all_text(reply_messages(service, line_standin, text_event(question)))
        assert "沒有存你的電話" not in words
        assert "寫進服務詢問" in words and "一起保存" in words, words
