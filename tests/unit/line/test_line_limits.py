"""LINE's limits, counted as LINE counts them (UTF-16 units), in one place (docs/design.md §11):
the counter, the renderers that use it, and the LINE stand-in that refuses what LINE refuses."""
from __future__ import annotations

import pytest
import requests

from shared.line import limits
from shared.replies.area_picker import checked_postback
from tests.conftest import TEST_TOKEN, line_body, replies_to, sign, text_event

EMOJI = "😀"  # outside the BMP: 1 code point, 2 UTF-16 units


def test_limits_units_count_utf16_code_units():
    assert limits.units("abc") == 3
    assert limits.units("花壇") == 2
    assert limits.units(EMOJI * 200) == 400
    assert limits.units("𠮷") == 2
    assert limits.units("👨‍👩‍👧") == 8  # three people (2 units each) and two joiners


@pytest.mark.parametrize("text, limit", [(EMOJI * 201, 400), ("請確認：" + EMOJI * 300, 400), ("a" * 401, 400),
                                          (EMOJI * 11, 20), ("ab" + EMOJI, 3)])
def test_limits_fit_stays_within_limit_and_never_splits_a_pair(text, limit):
    fitted = limits.fit(text, limit)
    assert limits.units(fitted) <= limit
    assert fitted.endswith("…")
    fitted.encode("utf-8")  # a split surrogate pair could not be encoded
    assert text.startswith(fitted[:-1])


def test_limits_fit_keeps_what_fits():
    assert limits.fit(EMOJI * 200, 400) == EMOJI * 200


def test_limits_checked_postback_counts_label_in_utf16_units():
    checked_postback(EMOJI * 10, "places:area=花壇鄉", "查花壇鄉")
    with pytest.raises(limits.LimitExceeded):
        checked_postback(EMOJI * 11, "places:area=花壇鄉", "查花壇鄉")  # 11 code points, 22 units
    with pytest.raises(limits.LimitExceeded):
        checked_postback("花壇", "x" * 290 + EMOJI * 6, "查花壇鄉")  # 296 code points, 302 units


def _reply(standin, message: dict) -> requests.Response:
    return requests.post(standin.url + "/v2/bot/message/reply", timeout=5,
                         headers={"Authorization": f"Bearer {TEST_TOKEN}"},
                         json={"replyToken": f"rt-{id(message)}-{limits.units(str(message))}", "messages": [message]})


@pytest.mark.parametrize("message, prop", [
    ({"type": "text", "text": EMOJI * 2501}, "messages[0].text"),
    ({"type": "flex", "altText": EMOJI * 201, "contents": {"type": "bubble"}}, "messages[0].altText"),
    ({"type": "text", "text": "x", "quickReply": {"items": [
        {"type": "action", "action": {"type": "message", "label": EMOJI * 11, "text": "x"}}]}},
     "messages[0].quickReply.items[0].action.label"),
    ({"type": "flex", "altText": "x", "contents": {"type": "bubble", "footer": {"type": "box", "layout": "vertical",
      "contents": [{"type": "button", "action": {"type": "postback", "label": "ok", "data": EMOJI * 151,
                                                  "displayText": "ok"}}]}}},
     "messages[0].contents.footer.contents[0].action.data"),
    ({"type": "template", "altText": "x", "template": {"type": "buttons", "text": "x", "actions": [
        {"type": "postback", "label": "ok", "data": "d", "displayText": EMOJI * 151}]}},
     "messages[0].template.actions[0].displayText"),
])
def test_limits_standin_refuses_what_line_refuses_with_400(line_standin, message, prop):
    response = _reply(line_standin, message)
    assert response.status_code == 400
    assert [d["property"] for d in response.json()["details"]] == [prop]


def test_limits_standin_accepts_exactly_the_limit(line_standin):
    assert _reply(line_standin, {"type": "flex", "altText": EMOJI * 200, "contents": {"type": "bubble"}}).status_code == 200


def test_limits_two_hundred_emoji_draft_gets_a_card_line_accepts(webhook_service, line_standin):
    event = text_event("新需求：" + EMOJI * 200)
    body = line_body(event)
    assert webhook_service.handle(body.decode(), sign(body)).status == 200
    [reply] = replies_to(line_standin, event["replyToken"])  # accepted: status 200 at the stand-in
    [card] = reply["body"]["messages"]
    assert card["type"] == "flex"
    assert limits.units(card["altText"]) <= limits.ALT_TEXT
    assert EMOJI * 200 in str(card["contents"])  # the card itself still shows the exact text
