"""What the staff tapper is told about the resident is true in the store (docs/design.md §10).

Signed webhook bodies go through a real ``WebhookService`` on a real SQLite file with the recording
LINE stand-in: the resident confirms a request one-to-one, staff members tap the group card's
buttons (postbacks from the staff group, made for the request's current revision). The kind: every
staff answer that says the resident was told (「已通知詢問者」) comes from a transition that wrote the
resident's notice (a ``staff_notices`` entry with ``audience: resident``); an answer after a
transition that wrote none says no notice was sent this time. The resident is still told each
outcome once (docs/design.md §10): a take after 轉回待處理 writes no second 「已有專人接手」.
"""
from __future__ import annotations

import pytest

from shared.handoff import records as handoff_records
from shared.identity import Actor
from shared.staff import cards
from tests.conftest import all_text, postback_event, reply_messages, text_event
from tests.unit.staff.conftest import STAFF_MEMBERS
from tools.line_messages import postbacks

GROUP = "C0a1b2c3d4e5f60718293a4b5c6d7e8f9"
STAFF = STAFF_MEMBERS
USER = "U7a1e5b0c2d3f4a5b6c7d8e9f0a1b2c3d"
CLAIM = "已通知詢問者"
NOT_SENT = "沒有再通知詢問者"


def confirmed_request(service, standin, text: str = "新需求：路燈壞了") -> str:
    """The resident's request through the card (one-to-one): the request's document id."""
    card = reply_messages(service, standin, text_event(text, user_id=USER))
    reply_messages(service, standin, postback_event(postbacks(card)["確認送出"], user_id=USER))
    [request] = service.store.query(handoff_records.REQUESTS)
    return handoff_records.Operation(Actor(request["tenant_id"], USER), request["idempotency_key"]).doc_id


def resident_notices(service) -> int:
    return len(service.store.query("staff_notices", where={"audience": "resident"}))


def staff_tap(service, standin, doc_id: str, op: str, who: str) -> str:
    """One staff button on the request's current card, tapped in the staff group → the answer's text."""
    request = service.store.get(handoff_records.REQUESTS, doc_id)
    data = cards.postback_data(service.settings, op, doc_id, int(request.get("staff_revision") or 0))
    return all_text(reply_messages(service, standin, postback_event(data, user_id=STAFF[who], group_id=GROUP)))


@pytest.mark.parametrize("taps", [
    [("take", "A")],
    [("take", "A"), ("back", "A"), ("take", "B")],  # take, return, another take
    [("take", "A"), ("back", "A"), ("take", "A")],  # the same member takes it again
    [("take", "A"), ("back", "B"), ("take", "B"), ("back", "A"), ("take", "A")],
    [("take", "A"), ("back", "A"), ("take", "B"), ("done", "B")],
    [("take", "A"), ("back", "A"), ("decline", "B")],
    [("decline", "A")],
], ids=["take", "take-back-take-other", "take-back-take-same", "three-takes", "retake-done", "back-decline",
        "decline"])
def test_staff_claims_resident_told_only_when_a_notice_was_written(service, line_standin, taps):
    doc_id = confirmed_request(service, line_standin)
    for op, who in taps:
        before = resident_notices(service)
        text = staff_tap(service, line_standin, doc_id, op, who)
        written = resident_notices(service) - before
        claims = CLAIM in text and NOT_SENT not in text
        assert claims == (written == 1), (op, who, text)
        assert written == 1, (op, who, text)  # every change a staff member makes is told, once
    # one notice per change, in the order the staff made them
    purposes = sorted(n["purpose"] for n in service.store.query("staff_notices", where={"audience": "resident"}))
    told = {"take": "accepted", "back": "returned", "done": "completed", "decline": "declined"}
    assert purposes == sorted(told[op] for op, _ in taps)


def test_staff_claims_take_return_then_another_take(service, line_standin):
    """A takes, A returns it, B takes: the resident hears 接手, 等待, 接手, each once; a tap of the
    same card again (a redelivered postback) tells nothing more."""
    doc_id = confirmed_request(service, line_standin)
    assert "已通知詢問者「已有專人接手」" in staff_tap(service, line_standin, doc_id, "take", "A")
    assert "已通知詢問者「改回等待接手」" in staff_tap(service, line_standin, doc_id, "back", "A")
    assert resident_notices(service) == 2
    text = staff_tap(service, line_standin, doc_id, "take", "B")
    assert "已接手" in text and "已通知詢問者「已有專人接手」" in text
    assert resident_notices(service) == 3
    assert service.store.get(handoff_records.REQUESTS, doc_id)["human_state"] == "accepted"


def test_stale_tap_on_a_completed_request_reads_once_as_completed():
    # Never 「已由 工作人員 #d57b 已完成」 (已 twice).
    from shared.handoff import staff_outbox
    from shared.staff import access, wording

    member = access.StaffMember("U" + "a" * 32, "a" * 16)
    request = {"request_id": "req-20261201-0123456789abcdef", "human_state": staff_outbox.COMPLETED,
               "closed_by": "b" * 16}
    text = wording.stale_message(member, request).text
    assert "已由" in text and "已完成" not in text and "完成" in text
