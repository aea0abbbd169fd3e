"""The resident hears a request's steps in order (docs/design.md §10): a later step's notice (completed,
declined) is never told before the accepted one. Seen in the staff HTTP test under load: the take's
push was retried and the resident heard 「處理結束」 first, then 「已有專人接手」. Real SQLite store,
the relay pushing through the LINE stand-in, an injected clock."""
from __future__ import annotations

from datetime import timedelta

import pytest

from shared.handoff import notify, staff_outbox
from shared.staff import relay, transitions
from shared.staff.access import staff_member
from shared.staff.cards import BACK, DECLINE, DONE, TAKE, StaffReference
from shared.wiring import line_gateway
from tests.codes_support import shown_of
from tests.conftest import all_text
from tests.unit.staff.conftest import PUSH, USER
from tests.unit.staff.test_staff_sweep import GroupSource, new_request


def step(settings, store, doc_id: str, op: str, revision: int, now) -> staff_outbox.NoticeRef | None:
    result = transitions.apply(store, settings.tenant_id, StaffReference(op, doc_id, revision),
                               staff_member(settings, GroupSource()), now=now)
    assert result.status == transitions.APPLIED
    return result.notice


def resident_pushes(standin) -> list[str]:
    return [all_text(c["body"]["messages"]) for c in standin.calls()
            if c["path"] == PUSH and c["status"] == 200 and c["body"]["to"] == USER]


def notice(store, ref) -> dict:
    return store.get(staff_outbox.NOTICES, ref.doc_id)


@pytest.fixture
def staff_relay(settings, store, clock):
    return relay.StaffRelay(settings, store, line_gateway(settings), clock)


def test_notice_order_completed_told_first_ends_the_pending_accepted_one(settings, store, clock, line_standin,
                                                                         staff_relay):
    doc_id, _ = new_request(settings, store, clock, "想借用活動中心的場地")
    accepted = step(settings, store, doc_id, TAKE, 0, clock())
    completed = step(settings, store, doc_id, DONE, 1, clock() + timedelta(minutes=1))
    # The completed notice's task runs first (the accepted one's push is being retried).
    assert staff_relay.deliver(completed.doc_id, last=False).outcome == "delivered"
    assert staff_relay.deliver(accepted.doc_id, last=False).outcome == "already_settled"
    told = resident_pushes(line_standin)
    assert len(told) == 1 and "處理結束" in told[0]
    ended = notice(store, accepted)
    assert ended["notice_state"] == relay.NOT_NEEDED.value and ended["notice_superseded_by"] == staff_outbox.COMPLETED


def test_notice_order_declined_after_take_and_back_ends_the_pending_accepted_one(settings, store, clock,
                                                                                 line_standin, staff_relay):
    doc_id, _ = new_request(settings, store, clock, "想借用活動中心的場地")
    accepted = step(settings, store, doc_id, TAKE, 0, clock())
    returned = step(settings, store, doc_id, BACK, 1, clock())
    declined = step(settings, store, doc_id, DECLINE, 2, clock())
    assert staff_relay.deliver(declined.doc_id, last=False).outcome == "delivered"
    assert staff_relay.deliver(accepted.doc_id, last=False).outcome == "already_settled"
    assert staff_relay.deliver(returned.doc_id, last=False).outcome == "already_settled"
    told = resident_pushes(line_standin)
    assert len(told) == 1 and "無法處理" in told[0]


def test_notice_order_turned_back_after_the_take_was_told_tells_it_waits_once(settings, store, clock,
                                                                               line_standin, staff_relay):
    doc_id, request = new_request(settings, store, clock, "想借用活動中心的場地")
    accepted = step(settings, store, doc_id, TAKE, 0, clock())
    assert staff_relay.deliver(accepted.doc_id, last=False).outcome == "delivered"
    returned = step(settings, store, doc_id, BACK, 1, clock() + timedelta(minutes=1))
    assert staff_relay.deliver(returned.doc_id, last=False).outcome == "delivered"
    assert staff_relay.deliver(returned.doc_id, last=False).outcome == "already_settled"  # a duplicate task
    told = resident_pushes(line_standin)
    assert len(told) == 2 and "已有專人接手" in told[0]
    assert "等待工作人員接手" in told[1] and "沒有被取消" in told[1] and shown_of(request) in told[1]
    # taken again: told again, after the turn-back
    again = step(settings, store, doc_id, TAKE, 2, clock() + timedelta(minutes=2))
    assert staff_relay.deliver(again.doc_id, last=False).outcome == "delivered"
    assert len(resident_pushes(line_standin)) == 3 and "已有專人接手" in resident_pushes(line_standin)[2]


def test_notice_order_turned_back_before_the_take_was_told_tells_nothing(settings, store, clock,
                                                                         line_standin, staff_relay):
    doc_id, _ = new_request(settings, store, clock, "想借用活動中心的場地")
    accepted = step(settings, store, doc_id, TAKE, 0, clock())
    returned = step(settings, store, doc_id, BACK, 1, clock())
    # the turn-back's task runs first: the resident never heard 「已有專人接手」, so nothing is taken back
    assert staff_relay.deliver(returned.doc_id, last=False).outcome == "not_needed"
    assert staff_relay.deliver(accepted.doc_id, last=False).outcome == "already_settled"
    assert resident_pushes(line_standin) == []
    assert notice(store, accepted)["notice_superseded_by"] == staff_outbox.RETURNED


def test_notice_order_later_step_waits_while_the_accepted_push_holds_its_claim(settings, store, clock,
                                                                               line_standin, staff_relay):
    doc_id, _ = new_request(settings, store, clock, "想借用活動中心的場地")
    accepted = step(settings, store, doc_id, TAKE, 0, clock())
    completed = step(settings, store, doc_id, DONE, 1, clock())
    # Another relay has claimed the accepted notice and is pushing it now.
    assert notify.claim_notice(store, staff_outbox.NOTICES, accepted, notify.PUSH_OWNER, now=clock(),
                               lease_seconds=30) is notify.NoticeClaim.CLAIMED
    waiting = staff_relay.deliver(completed.doc_id, last=False)
    assert (waiting.outcome, waiting.http_status) == ("earlier_notice_held", 503)  # the queue retries
    assert resident_pushes(line_standin) == [] and notice(store, completed)["notice_state"] == "pending"
    last = staff_relay.deliver(completed.doc_id, last=True)
    assert (last.outcome, last.http_status) == ("earlier_notice_held", 200)  # kept pending for the sweep
    # That push lands; then the completed notice is told, after it.
    notify.mark_delivered(store, staff_outbox.NOTICES, accepted, notify.PUSH_OWNER, now=clock())
    assert staff_relay.deliver(completed.doc_id, last=False).outcome == "delivered"
    assert notice(store, accepted)["notice_state"] == "delivered"


def test_notice_order_expired_claim_of_the_accepted_notice_does_not_block(settings, store, clock, line_standin,
                                                                         staff_relay):
    doc_id, _ = new_request(settings, store, clock, "想借用活動中心的場地")
    accepted = step(settings, store, doc_id, TAKE, 0, clock())
    completed = step(settings, store, doc_id, DONE, 1, clock())
    notify.claim_notice(store, staff_outbox.NOTICES, accepted, notify.PUSH_OWNER, now=clock(), lease_seconds=30)
    clock.at += timedelta(seconds=30)  # the lease ends exactly now (end exclusive): the pusher died
    assert staff_relay.deliver(completed.doc_id, last=False).outcome == "delivered"
    assert notice(store, accepted)["notice_state"] == relay.NOT_NEEDED.value


def test_notice_order_in_order_both_are_told(settings, store, clock, line_standin, staff_relay):
    doc_id, _ = new_request(settings, store, clock, "想借用活動中心的場地")
    accepted = step(settings, store, doc_id, TAKE, 0, clock())
    completed = step(settings, store, doc_id, DONE, 1, clock())
    assert staff_relay.deliver(accepted.doc_id, last=False).outcome == "delivered"
    assert staff_relay.deliver(completed.doc_id, last=False).outcome == "delivered"
    told = resident_pushes(line_standin)
    assert len(told) == 2 and "已有專人接手" in told[0] and "處理結束" in told[1]
