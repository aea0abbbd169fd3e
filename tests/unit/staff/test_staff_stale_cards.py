"""A tap on an older revision's staff card says the card is old and nothing changed.

The example: staff A takes a request (我來處理), taps 轉回待處理, takes it again, then taps 已完成 on the
FIRST card; an answer like 「req-… 已由 你 接手，這次沒有變更。」 would not say the card is old, and A
could believe the request was completed. The kind: every tap on a card of an older revision,
whoever taps it and whatever its button, says first that this card is not the latest and nothing was
changed, then where the request is now (for the holder: still theirs, not completed), and shows the
current card while its state has buttons. Signed webhook bodies from the staff group go through a
real ``WebhookService`` (test_staff_claims.py's helpers); the store is checked, not only the words.
"""
from __future__ import annotations

import pytest

from shared.handoff import records as handoff_records
from shared.staff import cards
from tests.conftest import all_text, postback_event, reply_messages
from tests.unit.staff.test_staff_claims import GROUP, STAFF, confirmed_request, resident_notices, staff_tap
from tools.line_messages import postbacks

OLD = "這張卡片已不是"
UNCHANGED = "沒有任何變更"


def _request(service, doc_id: str) -> dict:
    return service.store.get(handoff_records.REQUESTS, doc_id)


def _tap_at(service, standin, doc_id: str, op: str, revision: int, who: str) -> list[dict]:
    """The button ``op`` of the card made for ``revision``, tapped in the staff group → the reply."""
    data = cards.postback_data(service.settings, op, doc_id, revision)
    return reply_messages(service, standin, postback_event(data, user_id=STAFF[who], group_id=GROUP))


def _has_current_card(service, messages, doc_id: str) -> bool:
    """The reply carries a card whose buttons are for the request's current revision."""
    revision = int(_request(service, doc_id).get("staff_revision") or 0)
    current = {cards.postback_data(service.settings, op, doc_id, revision)
               for op in cards.BUTTONS.get(_request(service, doc_id)["human_state"], ())}
    return bool(current) and current <= set(postbacks(messages).values())


def _take_back_take(service, standin, who_again: str = "A") -> str:
    doc_id = confirmed_request(service, standin)
    staff_tap(service, standin, doc_id, "take", "A")        # revision 0 → 1 (the first card after 我來處理)
    staff_tap(service, standin, doc_id, "back", "A")        # 1 → 2
    staff_tap(service, standin, doc_id, "take", who_again)  # 2 → 3
    return doc_id


@pytest.mark.parametrize("op", ["done", "back"])
def test_stale_card_after_take_back_take_says_it_is_old_and_not_completed(service, line_standin, op):
    doc_id = _take_back_take(service, line_standin)
    before, notices = _request(service, doc_id), resident_notices(service)
    messages = _tap_at(service, line_standin, doc_id, op, 1, "A")  # the FIRST card's 已完成 / 轉回待處理
    text = all_text(messages)
    assert OLD in text and "最新狀態" in text and UNCHANGED in text
    assert "仍由你接手" in text and "還沒有標示為完成" in text
    assert "已標示為已完成" not in text and "已通知" not in text
    after = _request(service, doc_id)
    assert after["human_state"] == "accepted" and after["staff_revision"] == before["staff_revision"]
    assert after["accepted_by"] == before["accepted_by"] and resident_notices(service) == notices
    assert _has_current_card(service, messages, doc_id)


@pytest.mark.parametrize("op, revision", [("take", 0), ("decline", 0), ("done", 1), ("back", 1)])
def test_stale_every_old_button_of_the_holder_says_it_is_old(service, line_standin, op, revision):
    doc_id = _take_back_take(service, line_standin)
    messages = _tap_at(service, line_standin, doc_id, op, revision, "A")
    text = all_text(messages)
    assert OLD in text and UNCHANGED in text and "仍由你接手" in text
    assert _request(service, doc_id)["staff_revision"] == 3
    assert _has_current_card(service, messages, doc_id)


@pytest.mark.parametrize("op, revision", [("take", 0), ("done", 1), ("back", 1)])
def test_stale_another_member_is_told_the_card_is_old_and_who_holds_it(service, line_standin, op, revision):
    doc_id = _take_back_take(service, line_standin)
    holder = _request(service, doc_id)["accepted_by"]
    messages = _tap_at(service, line_standin, doc_id, op, revision, "B")
    text = all_text(messages)
    assert OLD in text and UNCHANGED in text and f"工作人員 #{holder[:4]}" in text and "接手" in text
    assert "你接手" not in text
    assert _request(service, doc_id)["accepted_by"] == holder and _request(service, doc_id)["staff_revision"] == 3
    assert _has_current_card(service, messages, doc_id)


def test_stale_the_holder_after_another_took_it_hears_who_holds_it(service, line_standin):
    doc_id = _take_back_take(service, line_standin, who_again="B")
    text = all_text(_tap_at(service, line_standin, doc_id, "done", 1, "A"))
    assert OLD in text and "工作人員 #" in text and "你接手" not in text
    assert _request(service, doc_id)["human_state"] == "accepted"


def test_stale_on_a_waiting_request_says_no_one_holds_it(service, line_standin):
    doc_id = confirmed_request(service, line_standin)
    staff_tap(service, line_standin, doc_id, "take", "A")
    staff_tap(service, line_standin, doc_id, "back", "A")
    messages = _tap_at(service, line_standin, doc_id, "done", 1, "B")
    text = all_text(messages)
    assert OLD in text and UNCHANGED in text and "待處理" in text
    assert _request(service, doc_id)["human_state"] == "awaiting_acceptance"
    assert _has_current_card(service, messages, doc_id)


@pytest.mark.parametrize("close", ["done", "decline"])
def test_stale_on_a_closed_request_says_old_and_closed_without_a_card(service, line_standin, close):
    doc_id = confirmed_request(service, line_standin)
    if close == "done":
        staff_tap(service, line_standin, doc_id, "take", "A")
    staff_tap(service, line_standin, doc_id, close, "A")
    messages = _tap_at(service, line_standin, doc_id, "take", 0, "B")
    text = all_text(messages)
    assert OLD in text and UNCHANGED in text
    assert ("標示為完成" if close == "done" else "標示為無法處理") in text
    assert "最新的卡片在下面" not in text and not _has_current_card(service, messages, doc_id)


def test_stale_negatives_a_current_tap_and_a_repeat_are_not_called_old(service, line_standin):
    doc_id = confirmed_request(service, line_standin)
    text = staff_tap(service, line_standin, doc_id, "take", "A")
    assert OLD not in text and "已接手" in text
    repeat = all_text(_tap_at(service, line_standin, doc_id, "take", 0, "A"))  # the card that just applied
    assert OLD not in repeat and "沒有重複處理" in repeat
    done = staff_tap(service, line_standin, doc_id, "done", "A")
    assert OLD not in done and "已完成" in done
    assert _request(service, doc_id)["human_state"] == "completed"
