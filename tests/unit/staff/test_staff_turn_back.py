"""Staff turning a taken request back to waiting (轉回待處理), through the signed webhook (docs/design.md §10):
the resident who heard 「已有專人接手」 hears, once, that the request waits again; a redelivered or
repeated staff postback tells nothing more. The relay pushes the staff outbox as the queue would
(``StaffRelay.deliver``), on the real SQLite store, through the LINE stand-in."""
from __future__ import annotations

from shared.handoff import records as handoff_records
from shared.handoff import staff_outbox
from shared.identity import Actor
from shared.staff.relay import StaffRelay
from shared.wiring import line_gateway
from tests.codes_support import shown_of
from tests.conftest import all_text, line_body, postback_event, reply_messages, sign, text_event
from tests.unit.staff.conftest import GROUP, PUSH, STAFF_MEMBERS, USER
from tools.line_messages import postbacks


def _request(service, standin) -> str:
    card = reply_messages(service, standin, text_event("新需求：巷口路燈不亮", user_id=USER))
    reply_messages(service, standin, postback_event(postbacks(card)["確認送出"], user_id=USER))
    [request] = service.store.query(handoff_records.REQUESTS)
    return handoff_records.Operation(Actor(request["tenant_id"], USER), request["idempotency_key"]).doc_id


def _deliver_pending(service, clock) -> list[str]:
    """Push every pending staff notice, as the queue's staff_notice tasks do → their outcomes."""
    relay = StaffRelay(service.settings, service.store, line_gateway(service.settings), clock)
    pending = service.store.query(staff_outbox.NOTICES, where={"notice_state": "pending"})
    return [relay.deliver(staff_outbox.notice_id(doc["operation_doc"], doc.get("notice_key") or doc["purpose"]),
                          last=False).outcome for doc in pending]


def _resident_pushes(standin) -> list[str]:
    return [all_text(c["body"]["messages"]) for c in standin.calls()
            if c["path"] == PUSH and c["status"] == 200 and c["body"]["to"] == USER]


def _group_card_buttons(standin) -> dict[str, str]:
    [card] = [c for c in standin.calls() if c["path"] == PUSH and c["body"]["to"] == GROUP]
    return postbacks(card["body"]["messages"])


def test_turn_back_tells_the_resident_once_that_it_waits_again(service, line_standin, clock):
    doc_id = _request(service, line_standin)
    assert _deliver_pending(service, clock) == ["delivered"]  # the staff group's card
    take = postback_event(_group_card_buttons(line_standin)["我來處理"], user_id=STAFF_MEMBERS["A"], group_id=GROUP)
    answer = reply_messages(service, line_standin, take)
    assert "已通知詢問者「已有專人接手」" in all_text(answer)
    assert _deliver_pending(service, clock) == ["delivered"]
    told = _resident_pushes(line_standin)
    assert len(told) == 1 and "已有專人接手" in told[0]

    back = postback_event(postbacks(answer)["轉回待處理"], user_id=STAFF_MEMBERS["A"], group_id=GROUP)
    answer = reply_messages(service, line_standin, back)
    assert "轉回待處理" in all_text(answer) and "已通知詢問者「改回等待接手」" in all_text(answer)
    assert _deliver_pending(service, clock) == ["delivered"]
    told = _resident_pushes(line_standin)
    request = service.store.get(handoff_records.REQUESTS, doc_id)
    assert len(told) == 2 and "等待工作人員接手" in told[1] and "沒有被取消" in told[1]
    assert f"單號：{shown_of(request)}" in told[1] and "req-" not in told[1]
    assert request["human_state"] == staff_outbox.AWAITING

    # LINE redelivers the same postback (same webhook event id): nothing is applied or told again
    body = line_body({**back, "deliveryContext": {"isRedelivery": True}})
    assert service.handle(body.decode(), sign(body)).status == 200
    # the same member taps the same card once more (a new event): already applied, nothing told
    again = postback_event(back["postback"]["data"], user_id=STAFF_MEMBERS["A"], group_id=GROUP)
    assert "剛才已經完成" in all_text(reply_messages(service, line_standin, again))
    assert _deliver_pending(service, clock) == []
    assert len(_resident_pushes(line_standin)) == 2
    resident = service.store.query(staff_outbox.NOTICES, where={"audience": staff_outbox.RESIDENT})
    assert sorted(n["purpose"] for n in resident) == [staff_outbox.ACCEPTED, staff_outbox.RETURNED]


def test_turn_back_before_the_take_was_told_tells_nothing_taken_back(service, line_standin, clock):
    _request(service, line_standin)
    assert _deliver_pending(service, clock) == ["delivered"]  # the staff group's card
    take = postback_event(_group_card_buttons(line_standin)["我來處理"], user_id=STAFF_MEMBERS["A"], group_id=GROUP)
    answer = reply_messages(service, line_standin, take)
    back = postback_event(postbacks(answer)["轉回待處理"], user_id=STAFF_MEMBERS["B"], group_id=GROUP)
    reply_messages(service, line_standin, back)
    # the turn-back's task runs before the take's (its push was being retried): the resident never
    # heard 「已有專人接手」, so nothing is taken back, and the take is not told after it either
    relay = StaffRelay(service.settings, service.store, line_gateway(service.settings), clock)
    [returned] = service.store.query(staff_outbox.NOTICES, where={"purpose": staff_outbox.RETURNED})
    returned_id = staff_outbox.notice_id(returned["operation_doc"], returned["notice_key"])
    assert relay.deliver(returned_id, last=False).outcome == "not_needed"
    assert _deliver_pending(service, clock) == []  # the take's notice was ended by it
    assert _resident_pushes(line_standin) == []
