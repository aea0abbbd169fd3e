"""Every rich menu tile's action, sent as LINE sends a tap (a signed postback event), gets the answer
of the word on the tile, never the broken-button or can't-read fallback: a real WebhookService, its
store and the recording LINE stand-in."""
from __future__ import annotations

import pytest

from shared.replies import menu, richmenu
from tests.conftest import all_text, postback_event, reply_messages, text_event

#: Different residents for the tap and the typed word, so neither answer depends on the other.
TAPPER = "U" + "7a" * 16
TYPIST = "U" + "8b" * 16


@pytest.mark.parametrize("area", richmenu.areas(), ids=[tile.data for tile in richmenu.TILES])
def test_richmenu_tap_is_answered_as_the_word_on_the_tile(webhook_service, line_standin, area):
    action = area.action
    assert action.type == "postback" and action.display_text == action.label  # the chat shows the word

    tapped = reply_messages(webhook_service, line_standin, postback_event(action.data, user_id=TAPPER))
    typed = reply_messages(webhook_service, line_standin, text_event(action.label, user_id=TYPIST))

    said = all_text(tapped)
    assert said and said == all_text(typed)
    assert [m["type"] for m in tapped] == [m["type"] for m in typed]
    for fallback in (menu.expired_button_reply(), menu.help_reply()):
        assert all_text([m.to_dict() for m in fallback.messages]) != said
    assert "失效" not in said and "看不太懂" not in said
