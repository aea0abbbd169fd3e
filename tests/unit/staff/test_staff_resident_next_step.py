"""After a staff member's step, what the resident reads and can do next, through signed webhook bodies to
the in-process ``WebhookService`` (the staff taps in the staff group, the notice pushed by the staff relay
through the courier to the LINE stand-in): a declined request's notice gives a next step with its
button; 好了嗎 right after the 「處理結束」 or 「已有專人接手」 notice gets the request's status."""
from __future__ import annotations

from datetime import timedelta

import pytest

from shared.handoff import records as handoff_records
from shared.handoff import staff_outbox
from shared.staff import relay
from shared.wiring import line_gateway
from tests.conftest import all_text, reply_messages, text_event
from tests.unit.staff.conftest import PUSH, USER
from tests.unit.staff.test_staff_claims import confirmed_request, staff_tap
from tests.unit.webhook.test_handoff_words import message_actions

NOT_UNDERSTOOD = "看不太懂"


def pushed_to_resident(standin) -> list[list[dict]]:
    return [c["body"]["messages"] for c in standin.calls()
            if c["path"] == PUSH and c["status"] == 200 and c["body"]["to"] == USER]


#: The resident notice each staff button writes (its first round).
PURPOSE = {"take": staff_outbox.ACCEPTED, "done": staff_outbox.COMPLETED, "decline": staff_outbox.DECLINED}


def staff_step(service, standin, clock, doc_id: str, op: str) -> list[dict]:
    """One staff tap and its resident notice pushed (the relay's task): the notice's messages."""
    staff_tap(service, standin, doc_id, op, "A")
    notice = staff_outbox.notice_id(doc_id, PURPOSE[op])
    outcome = relay.StaffRelay(service.settings, service.store, line_gateway(service.settings), clock).deliver(
        notice, last=False)
    assert outcome.outcome == "delivered"
    return pushed_to_resident(standin)[-1]


def number_of(service, doc_id: str) -> str:
    request = service.store.get(handoff_records.REQUESTS, doc_id)
    code = request["display_code"]
    return f"{code[:3]}-{code[3:]}"


def test_a_declined_request_notice_gives_a_next_step_and_its_button(service, line_standin, clock):
    doc_id = confirmed_request(service, line_standin)
    told = staff_step(service, line_standin, clock, doc_id, "decline")
    text = all_text(told)
    assert "無法處理" in text and number_of(service, doc_id) in text
    assert "更詳細" in text and "公所" in text and len(told) <= 2
    assert "留下服務詢問" in message_actions(told)


@pytest.mark.parametrize("op, said", [("done", "好了嗎"), ("done", "辦好了沒"), ("take", "有人處理了嗎"),
                                      ("take", "好了沒")])
def test_a_bare_progress_question_after_a_staff_notice_gets_the_status(service, line_standin, clock, op, said):
    doc_id = confirmed_request(service, line_standin)
    if op == "done":
        staff_step(service, line_standin, clock, doc_id, "take")
    staff_step(service, line_standin, clock, doc_id, op)
    clock.at += timedelta(minutes=40)  # past the conversation's window: the request itself is the context
    text = all_text(reply_messages(service, line_standin, text_event(said, user_id=USER)))
    assert NOT_UNDERSTOOD not in text and number_of(service, doc_id) in text
    assert ("處理結束" in text or "結束" in text) if op == "done" else "正在處理" in text
