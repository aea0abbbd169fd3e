"""The terminal chat as the staff group (``/staff``): the resident's request reaches the simulated
group as a card, and a staff member taps 「我來處理」 from the group (real webhook and reconcile
processes, the embedded queue, the LINE stand-in)."""
from __future__ import annotations

import io
import json

import pytest

from tests.handoff_support import USER, env_with, wait_for
from tools import chat

pytestmark = pytest.mark.slow

GROUP = "C" + "5" * 32
STAFF = "U" + "6" * 32


def run(session: chat.ChatSession, *requests: dict) -> list[dict]:
    out = io.StringIO()
    chat.run_headless(session, io.StringIO("\n".join(json.dumps(r, ensure_ascii=False) for r in requests) + "\n"),
                      out, io.StringIO())
    return [json.loads(line) for line in out.getvalue().splitlines()]


def test_chat_staff_command_acts_in_group_and_sees_group_cards(start_function, base_env, line_standin):
    env = env_with(base_env, LOCAL_STAFF_GROUP_ID=GROUP)
    reconcile = start_function("reconcile", env)
    webhook = start_function("webhook", {**env, "RECONCILE_FUNCTION_URL": reconcile.url})
    session = chat.ChatSession(webhook.url, base_env["LINE_CHANNEL_SECRET"], USER, line_standin.url,
                               wait_s=3.0, staff_group_id=GROUP)
    [card] = run(session, {"text": "新需求：想參加週六的社區走讀"})
    [confirmed] = run(session, {"tap": next(c["n"] for c in card["choices"] if c["label"] == "確認送出")})
    assert "單號" in json.dumps(confirmed, ensure_ascii=False)

    def group_card() -> list[dict]:
        return [c for c in line_standin.calls() if c["path"] == "/v2/bot/message/push" and c["body"]["to"] == GROUP]

    wait_for(group_card, 20, "the staff card in the simulated group")
    # Act as a staff member in the group; the card's buttons are shown (with whichever exchange saw
    # the push) and stay tappable.
    switched, said = run(session, {"staff": STAFF}, {"text": "大家好", "wait_seconds": 0.3})
    assert switched.get("error") is None and said["status"] == 200
    take = [c for c in session.choices if c.label == "我來處理"]
    assert take and take[0].action["data"].startswith("staff:")
    [tapped] = run(session, {"tap": take[0].n})
    assert tapped["status"] == 200
    assert "已接手" in json.dumps(tapped["replies"], ensure_ascii=False)  # acted as staff, from the group


@pytest.mark.parametrize("raw, readable", [
    ({"type": "message"}, False),                                   # no message object
    ({"type": "message", "message": {"type": "text"}}, False),      # no id nor text
    ({"type": "postback"}, False),                                  # no postback object
    ({"type": "message", "message": {"type": "text", "id": "468789577898262530", "text": "我要預約"}}, True),
    ({"type": "follow"}, True),
    ({"type": "message", "message": {"type": "sticker", "packageId": "11537", "stickerId": "52002734",
                                     "stickerResourceType": "STATIC"}}, True),  # make run's /sticker (docs/configuration.md)
])
def test_chat_headless_event_the_webhook_cannot_read_says_so(start_function, base_env, line_standin, raw, readable):
    """A raw ``{"event"}`` the real webhook does not read gets an error line saying why no reply
    comes, never a silent empty answer; a complete one is answered as usual."""
    webhook = start_function("webhook", env_with(base_env))
    session = chat.ChatSession(webhook.url, base_env["LINE_CHANNEL_SECRET"], USER, line_standin.url, wait_s=3.0)
    [answer] = run(session, {"event": raw})
    assert answer["status"] == 200
    if readable:
        assert answer.get("error") is None and answer["replies"]
    else:
        assert "could not read this event" in answer["error"] and answer["replies"] == []


def test_chat_staff_text_in_group_is_answered_or_said_to_get_none(start_function, base_env, line_standin):
    """Typing a button's label in the group gets the bot's one line (press the card's button); plain
    staff talk gets none, and the chat says so instead of waiting for a reply that will not come."""
    webhook = start_function("webhook", env_with(base_env, LOCAL_STAFF_GROUP_ID=GROUP))
    session = chat.ChatSession(webhook.url, base_env["LINE_CHANNEL_SECRET"], USER, line_standin.url,
                               wait_s=3.0, staff_group_id=GROUP)
    out = io.StringIO()
    chat.run_interactive(session, io.StringIO(f"/staff {STAFF}\n我來處理\n今天誰值班？\n/quit\n"), out)
    shown = out.getvalue()

    _, _, taken, talk, _ = shown.split("你> ")  # what followed each line typed (the prompt is not echoed)
    assert "卡片上的「我來處理」按鈕" in taken  # the bot's answer to the typed label
    assert chat.GROUP_TEXT_NOTE in talk and "還沒有收到回覆" not in shown
