"""A staff transition's notice to the resident that LINE refuses for the monthly limit
(shared/staff/relay.py, shared/handoff/push_refused.py): settled, never pushed again, and on the
staff follow-up list (``make requests``, the follow-up card) with the words the resident missed.
Signed webhook bodies through a real ``WebhookService``, the relay through the real SDK gateway, and
the LINE stand-in with its month's pushes used up."""
from __future__ import annotations

from datetime import timedelta

from shared.handoff import push_refused, staff_outbox, status
from shared.handoff import records as handoff_records
from shared.identity import Actor
from shared.push_count import PushCounter
from shared.staff import cards, report
from shared.staff.relay import StaffRelay
from shared.wiring import line_gateway
from tests.conftest import all_text
from tests.unit.staff.conftest import PUSH, USER
from tests.unit.staff.test_staff_claims import confirmed_request, staff_tap


def test_staff_notice_refused_for_the_monthly_limit_is_a_follow_up_never_retried(service, line_standin, clock):
    doc_id = confirmed_request(service, line_standin)
    staff_tap(service, line_standin, doc_id, "take", "A")
    [notice] = service.store.query(staff_outbox.NOTICES, where={"audience": "resident"})
    notice_id = staff_outbox.notice_id(doc_id, notice["notice_key"] if "notice_key" in notice else notice["purpose"])
    line_standin.set_quota(200, used=200)
    relay = StaffRelay(service.settings, service.store, line_gateway(service.settings), clock=clock)
    result = relay.deliver(notice_id, last=False)
    assert (result.outcome, result.http_status) == ("push_refused_monthly_limit", 200)  # not 503: no retry
    clock.at += timedelta(seconds=service.settings.event_lease_seconds + 1)
    assert relay.deliver(notice_id, last=False).outcome == "already_settled"
    refused = [c for c in line_standin.calls() if c["path"] == PUSH and c["body"]["to"] == USER]
    assert [c["status"] for c in refused] == [429]  # one try, never a second
    [followup] = service.store.query(handoff_records.FOLLOWUPS)
    assert (followup["reason"], followup["user_id"]) == (push_refused.REASON, USER)
    assert "已有專人接手" in followup["text"]  # what the resident did not read
    [row] = [r for r in report.open_rows(service.settings, service.store, now=clock()) if r["kind"] == "followup"]
    assert row["reason"] == "monthly_limit"
    card = all_text([cards.followup_card(service.settings, followup, None).to_dict()])
    assert "通知沒有送到詢問者" in card and "已有專人接手" in card and "U" + USER[1:] not in card
    count = PushCounter(service.store, service.settings.tenant_id, clock).this_month()
    assert count.refused_monthly_limit == 1 and count.by_flow.get("staff_resident", 0) == 0


def test_staff_notice_refused_for_the_monthly_limit_is_not_an_unverified_request_to_the_resident(
        service, line_standin, clock):
    # The resident's request was registered and taken: only its notice met the monthly limit. Asked
    # 查看原本服務單, the resident reads that request as it is, never "an inquiry that could not be
    # verified" (which is what reconcile's own follow-up records mean).
    doc_id = confirmed_request(service, line_standin)
    staff_tap(service, line_standin, doc_id, "take", "A")
    [notice] = service.store.query(staff_outbox.NOTICES, where={"audience": "resident"})
    line_standin.set_quota(200, used=200)
    relay = StaffRelay(service.settings, service.store, line_gateway(service.settings), clock=clock)
    clock.at += timedelta(seconds=1)  # the follow-up record is newer than the request
    assert relay.deliver(staff_outbox.notice_id(doc_id, notice["purpose"]), last=False).outcome \
        == "push_refused_monthly_limit"
    [followup] = service.store.query(handoff_records.FOLLOWUPS)
    [request] = service.store.query(handoff_records.REQUESTS)
    assert followup["created_at"] > request["created_at"]
    told = status.status_message(service.settings, service.store, Actor(service.settings.tenant_id, USER)).text
    assert "工作人員已受理" in told  # the request's own state, as staff left it
    assert "無法自動查證" not in told and "人工確認" not in told
