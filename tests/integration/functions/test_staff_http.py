"""The staff group over real HTTP (docs/design.md §10): webhook and reconcile as functions-framework
processes, the embedded queue, signed LINE bodies (one-to-one and group sources), the LINE stand-in.

The resident confirms a request in a one-to-one chat; the staff group (``LOCAL_STAFF_GROUP_ID``)
receives one card by push; staff buttons are postbacks from the group, checked against the
allowlist (``LOCAL_STAFF_USER_IDS``) and the card's signature.
"""
from __future__ import annotations

import json
import os
import subprocess
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
import requests

from tests.codes_support import grouped, shown_of
from tests.conftest import REPO, all_text, line_body, postback_event, text_event
from tests.handoff_support import (
    PUSH,
    REQUEST_ID,
    USER,
    env_with,
    new_card,
    post,
    replied_messages,
    reply_text,
    store_docs,
    user_data,
    wait_for,
)

pytestmark = pytest.mark.slow

GROUP = "C0a1b2c3d4e5f60718293a4b5c6d7e8f9"
OTHER_GROUP = "C99999999999999999999999999999999"
STAFF_A = "U1111111111111111111111111111aaaa"
STAFF_B = "U2222222222222222222222222222bbbb"
OUTSIDER = "U3333333333333333333333333333cccc"
STAFF_ENV = {"LOCAL_STAFF_GROUP_ID": GROUP, "LOCAL_STAFF_USER_IDS": f"{STAFF_A},{STAFF_B}"}


def group_postback(data: str, user_id: str, group_id: str = GROUP) -> dict:
    """A postback tapped in a group: ``source`` is the group, with the tapper's user id."""
    return postback_event(data, user_id=user_id, group_id=group_id)


def group_pushes(standin, statuses=(200,)) -> list[dict]:
    return [c for c in standin.calls() if c["path"] == PUSH and c["body"]["to"] == GROUP and c["status"] in statuses]


def resident_pushes(standin) -> list[str]:
    return [all_text(c["body"]["messages"]) for c in standin.calls()
            if c["path"] == PUSH and c["body"]["to"] == USER and c["status"] == 200]


def buttons_of(message: dict) -> dict[str, str]:
    footer = message["contents"].get("footer") or {"contents": []}
    return {b["action"]["label"]: b["action"]["data"] for b in footer["contents"]}


def staff_card_buttons(standin) -> dict[str, str]:
    [call] = group_pushes(standin)
    return buttons_of(call["body"]["messages"][0])


def tap(webhook_url: str, standin, data: str, user_id: str, group_id: str | None = GROUP) -> tuple[int, str, list]:
    event = group_postback(data, user_id, group_id) if group_id else postback_event(data, user_id=user_id)
    response = post(webhook_url, line_body(event))
    # An event the webhook queued (its budget spent on a loaded machine) is answered a moment later.
    queued = response.status_code == 200 and "queued" in response.json().get("events", [])
    messages = replied_messages(standin, event["replyToken"], wait_seconds=30 if queued else 0)
    return response.status_code, all_text(messages), messages


def confirm_request(webhook_url: str, standin, text: str = "新需求：想參加週六的社區走讀，需要輪椅協助") -> str:
    data = new_card(webhook_url, standin, text)["確認送出"]
    event = postback_event(data, user_id=USER)
    assert post(webhook_url, line_body(event)).status_code == 200
    receipt = reply_text(standin, event["replyToken"])
    [shown] = REQUEST_ID.findall(receipt)  # the number the resident reads; the internal id stays the key
    assert "req-" not in receipt
    return shown


def notices_settled(store_url: str) -> bool:
    """Every staff notice has been told, or ended by a later step's (a later task for it then
    changes nothing)."""
    notices = store_docs(store_url, "staff_notices")
    return bool(notices) and all(n["notice_state"] == "delivered" or n.get("notice_superseded_by")
                                 for n in notices)


def request_doc(store_url: str, shown: str) -> dict:
    """The stored request the resident knows by its number ``shown`` (``A7K-3QF``)."""
    [doc] = [d for d in store_docs(store_url, "handoff_requests") if shown_of(d) == shown]
    return doc


def make_requests(store_url: str, tenant_id: str) -> list[dict]:
    """``make requests`` against this store: one JSON object per stdout line."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LINE_", "LOCAL_"))}
    env.update({"LOCAL_STORE_URL": store_url, "LOCAL_TENANT_ID": tenant_id})
    out = subprocess.run(["make", "-s", "-o", ".venv/.installed", "requests"], cwd=REPO, env=env,
                         capture_output=True, text=True, timeout=60, check=False)
    assert out.returncode == 0, out.stderr[-2000:]
    return [json.loads(line) for line in out.stdout.splitlines()]


@pytest.fixture
def staff_functions(start_function, base_env):
    def start(**extra: str):
        reconcile = start_function("reconcile", env_with(base_env, **STAFF_ENV, **extra))
        webhook = start_function("webhook", env_with(base_env, RECONCILE_FUNCTION_URL=reconcile.url,
                                                     **STAFF_ENV, **extra))
        return webhook, reconcile

    return start


@pytest.mark.parametrize("after_processing", [False, True], ids=["lost_push", "lost_answer"])
def test_staff_http_new_request_one_card_when_push_fails_once(staff_functions, line_standin, base_env,
                                                              after_processing):
    webhook, _ = staff_functions()
    line_standin.fail_next(PUSH, 500, times=1, after_processing=after_processing)
    request_id = confirm_request(webhook.url, line_standin)

    wait_for(lambda: group_pushes(line_standin, (200, 409)), 20, "the staff card after one failed push")
    wait_for(lambda: notices_settled(base_env["LOCAL_STORE_URL"]), 20, "the queue to settle")
    attempts = group_pushes(line_standin, (200, 409, 500))
    assert [c["status"] for c in attempts] == ([500, 409] if after_processing else [500, 200])
    assert len({c["headers"]["x-line-retry-key"] for c in attempts}) == 1  # one X-Line-Retry-Key
    card = attempts[-1]["body"]["messages"][0] if not after_processing else attempts[0]["body"]["messages"][0]
    shown = all_text(card)
    assert request_id in shown and "想參加週六的社區走讀，需要輪椅協助" in shown
    assert set(buttons_of(card)) == {"我來處理", "無法處理"}
    assert USER not in json.dumps(attempts, ensure_ascii=False)  # never the resident's user id
    [notice] = [d for d in store_docs(base_env["LOCAL_STORE_URL"], "staff_notices") if d["purpose"] == "announce"]
    assert notice["notice_state"] == "delivered"


def test_staff_http_webhook_killed_after_commit_one_card(staff_functions, line_standin, base_env):
    webhook, _ = staff_functions(LOCAL_FAULTS="KILL_AFTER_COMMIT", LOCAL_EVENT_LEASE_SECONDS="1.5")
    data = new_card(webhook.url, line_standin)["確認送出"]
    event = postback_event(data, user_id=USER)
    try:  # the worker dies between the commit and anything else: no answer, or gunicorn's 5xx
        answered: int | None = post(webhook.url, line_body(event)).status_code
    except requests.RequestException:
        answered = None
    assert answered is None or answered >= 500, f"a killed worker answered {answered}"
    [request] = store_docs(base_env["LOCAL_STORE_URL"], "handoff_requests")

    # gunicorn respawns the worker; its start-up re-queue finds the pending staff notice.
    wait_for(lambda: group_pushes(line_standin), 20, "the staff card after the crash")
    wait_for(lambda: notices_settled(base_env["LOCAL_STORE_URL"]), 30, "the queue to settle")
    [card] = group_pushes(line_standin)
    assert shown_of(request) in all_text(card["body"]["messages"])
    assert len(group_pushes(line_standin, (200, 409))) == 1


def test_staff_http_concurrent_takes_one_transition_one_notice(staff_functions, line_standin, base_env):
    webhook, _ = staff_functions()
    store_url = base_env["LOCAL_STORE_URL"]
    request_id = confirm_request(webhook.url, line_standin)
    wait_for(lambda: group_pushes(line_standin), 20, "the staff card")
    take = staff_card_buttons(line_standin)["我來處理"]

    # Two staff members at the same moment, then 10 more taps from both.
    barrier = threading.Barrier(2)

    def at_once(user_id: str):
        barrier.wait()
        return tap(webhook.url, line_standin, take, user_id)

    with ThreadPoolExecutor(max_workers=2) as pool:
        first = list(pool.map(at_once, [STAFF_A, STAFF_B]))
    with ThreadPoolExecutor(max_workers=10) as pool:
        more = list(pool.map(lambda i: tap(webhook.url, line_standin, take, (STAFF_A, STAFF_B)[i % 2]), range(10)))
    answers = first + more
    assert all(status == 200 for status, _, _ in answers)

    doc = request_doc(store_url, request_id)
    assert doc["human_state"] == "accepted"
    assert [h["action"] for h in doc["staff_history"]] == ["take"]  # exactly one accepted transition
    audits = [a for a in store_docs(store_url, "staff_audit") if a["request_id"] == doc["request_id"]]
    assert [(a["action"], a["to"]) for a in audits] == [("take", "accepted")]
    winner = doc["accepted_by"]
    applied = [text for _, text, _ in answers if "已接手" in text and "已由" not in text]
    assert len(applied) == 1 and f"#{winner[:4]}" in applied[0]
    others = [text for _, text, _ in answers if text not in applied]
    assert len(others) == 11
    assert all(f"#{winner[:4]}" in text or "已由 你 接手" in text or "剛才已經完成" in text for text in others)

    wait_for(lambda: resident_pushes(line_standin), 20, "the resident's notice")
    wait_for(lambda: notices_settled(store_url), 20, "the queue to settle")
    [notice] = resident_pushes(line_standin)
    assert "已有專人接手你的服務詢問" in notice and request_id in notice
    assert STAFF_A not in json.dumps(line_standin.calls()) and STAFF_B not in json.dumps(line_standin.calls())


def test_staff_http_forged_foreign_outsider_change_nothing(staff_functions, line_standin, base_env):
    webhook, _ = staff_functions()
    store_url = base_env["LOCAL_STORE_URL"]
    request_id = confirm_request(webhook.url, line_standin)
    wait_for(lambda: group_pushes(line_standin), 20, "the staff card")
    take = staff_card_buttons(line_standin)["我來處理"]
    head, _, signature = take.rpartition(".")
    forged = head.replace(".take.", ".decline.") + "." + signature
    tampered = head + "." + ("A" if signature[0] != "A" else "B") + signature[1:]
    before = request_doc(store_url, request_id)

    cases = {
        "forged": tap(webhook.url, line_standin, forged, STAFF_A),
        "tampered": tap(webhook.url, line_standin, tampered, STAFF_A),
        "one_to_one": tap(webhook.url, line_standin, take, STAFF_A, group_id=None),
        "resident": tap(webhook.url, line_standin, take, USER, group_id=None),
        "other_group": tap(webhook.url, line_standin, take, STAFF_A, group_id=OTHER_GROUP),
        "outsider": tap(webhook.url, line_standin, take, OUTSIDER),
    }
    for name, (status, text, _) in cases.items():
        assert status == 200, name
        assert "沒有任何變更" in text, (name, text)  # refused kindly, and said so
    assert "只能在工作人員群組" in cases["one_to_one"][1] and "只能在工作人員群組" in cases["other_group"][1]
    assert "名單" in cases["outsider"][1]
    assert request_doc(store_url, request_id) == before
    assert store_docs(store_url, "staff_audit") == []

    # A staff member's text in the staff group is never a resident's turn: no card, no draft; a
    # recognized word gets the group's help, never the resident's confirmation card.
    said = text_event("新需求：幫我測試一下", user_id=STAFF_A, group_id=GROUP)
    drafts_before = len(store_docs(store_url, "handoff_drafts"))
    assert post(webhook.url, line_body(said)).status_code == 200
    helped = reply_text(line_standin, said["replyToken"])
    assert "一對一聊天" in helped and "我來處理" in helped and "確認送出" not in helped
    assert len(store_docs(store_url, "handoff_drafts")) == drafts_before
    wait_for(lambda: notices_settled(store_url), 20, "the queue to settle")
    assert resident_pushes(line_standin) == []


def test_staff_http_turn_back_tells_resident_once_it_waits_again(staff_functions, line_standin, base_env):
    webhook, _ = staff_functions()
    store_url = base_env["LOCAL_STORE_URL"]
    shown = confirm_request(webhook.url, line_standin, "新需求：巷口路燈不亮")
    wait_for(lambda: group_pushes(line_standin), 20, "the staff card")
    [card] = group_pushes(line_standin)
    assert f"單號：{shown}" in all_text(card["body"]["messages"])  # the staff read the resident's number

    _, text, messages = tap(webhook.url, line_standin, staff_card_buttons(line_standin)["我來處理"], STAFF_A)
    assert "已通知詢問者「已有專人接手」" in text
    wait_for(lambda: resident_pushes(line_standin), 20, "the taken notice")
    back_event = group_postback(buttons_of(messages[-1])["轉回待處理"], STAFF_A)
    body = line_body(back_event)
    assert post(webhook.url, body).status_code == 200
    assert post(webhook.url, body).status_code == 200  # LINE redelivers the same event: nothing repeats
    _, again, _ = tap(webhook.url, line_standin, back_event["postback"]["data"], STAFF_A)  # tapped once more
    assert "沒有重複處理" in again
    wait_for(lambda: len(resident_pushes(line_standin)) >= 2, 20, "the waiting-again notice")
    wait_for(lambda: notices_settled(store_url), 20, "the queue to settle")

    told = resident_pushes(line_standin)
    assert len(told) == 2 and "已有專人接手" in told[0] and shown in told[0]
    assert "等待工作人員接手" in told[1] and "沒有被取消" in told[1] and shown in told[1]
    assert request_doc(store_url, shown)["human_state"] == "awaiting_acceptance"


def test_staff_http_accept_complete_and_decline_tell_resident_once(staff_functions, line_standin, base_env):
    webhook, _ = staff_functions()
    store_url = base_env["LOCAL_STORE_URL"]
    first_id = confirm_request(webhook.url, line_standin, "新需求：想問社區共餐的報名方式")
    wait_for(lambda: group_pushes(line_standin), 20, "the first staff card")
    take = staff_card_buttons(line_standin)["我來處理"]

    [row] = make_requests(store_url, base_env["LOCAL_TENANT_ID"])
    assert (row["human_state"], row["display_code"], row["accepted_by"]) == ("awaiting_acceptance", first_id, None)
    assert row["request_id"] == request_doc(store_url, first_id)["request_id"]  # the key, for operators
    assert row["text"] == "想問社區共餐的報名方式" and row["announced"] == "delivered" and USER not in json.dumps(row)

    # 我來處理 → the tapper gets the next card (已完成 / 轉回待處理).
    _, text, messages = tap(webhook.url, line_standin, take, STAFF_A)
    [row] = make_requests(store_url, base_env["LOCAL_TENANT_ID"])
    assert row["human_state"] == "accepted" and row["accepted_by"].startswith("工作人員 #")
    assert "已接手" in text
    done = buttons_of(messages[-1])["已完成"]
    assert set(buttons_of(messages[-1])) == {"已完成", "轉回待處理"}
    event = group_postback(done, STAFF_B)
    body = line_body(event)
    assert post(webhook.url, body).status_code == 200
    assert request_doc(store_url, first_id)["human_state"] == "completed"
    assert post(webhook.url, body).status_code == 200  # LINE redelivers the same event: nothing repeats
    _, again, _ = tap(webhook.url, line_standin, done, STAFF_B)  # the same member again: nothing twice
    assert "沒有重複處理" in again
    _, stale, _ = tap(webhook.url, line_standin, take, STAFF_A)  # an older card: who closed it
    closer = request_doc(store_url, first_id)["closed_by"]
    assert "不是" in stale and "最新狀態" in stale and "沒有任何變更" in stale and f"#{closer[:4]}" in stale

    # The resident: told once per step, and 查看原本服務單 shows the same state.
    wait_for(lambda: notices_settled(store_url), 20, "the resident's notices")
    status_event = text_event("查看原本服務單", user_id=USER)
    assert post(webhook.url, line_body(status_event)).status_code == 200
    assert "標示這筆服務詢問結束" in reply_text(line_standin, status_event["replyToken"])

    # A second request, declined.
    second_id = confirm_request(webhook.url, line_standin, "新需求：想借用活動中心的場地")
    wait_for(lambda: len(group_pushes(line_standin)) >= 2, 20, "the second staff card")
    decline = buttons_of(group_pushes(line_standin)[-1]["body"]["messages"][0])["無法處理"]
    event = group_postback(decline, STAFF_B)
    assert post(webhook.url, line_body(event)).status_code == 200
    assert post(webhook.url, line_body(event)).status_code == 200  # redelivered
    wait_for(lambda: any("無法處理" in text for text in resident_pushes(line_standin)), 20, "the decline notice")
    wait_for(lambda: notices_settled(store_url), 20, "the queue to settle")

    told = resident_pushes(line_standin)
    # In step order, each once. The accepted notice is told first, unless its push was still being
    # retried when the completed one's turn came: then the completed one ends it (it says more).
    accepted = [n for n in store_docs(store_url, "staff_notices") if n.get("purpose") == "accepted"]
    if [n["notice_state"] for n in accepted] == ["not_needed"]:
        assert accepted[0]["notice_superseded_by"] == "completed"
        told = ["(accepted: superseded)", *told]
    assert len(told) == 3
    assert "已有專人接手" in told[0] and first_id in told[0] or told[0] == "(accepted: superseded)"
    assert "處理結束" in told[1] and first_id in told[1]
    assert "無法處理" in told[2] and second_id in told[2] and "查活動" in told[2]  # with the menu
    for text in told:
        assert not any(word in text for word in ("馬上", "一定", "保證", "已解決"))  # no promise
    history = request_doc(store_url, first_id)["staff_history"]
    assert [h["action"] for h in history] == ["take", "done"]
    assert all(STAFF_A not in json.dumps(h) and STAFF_B not in json.dumps(h) for h in history)
    assert request_doc(store_url, second_id)["human_state"] == "declined"
    assert make_requests(store_url, base_env["LOCAL_TENANT_ID"]) == []  # nothing open

    # make user-data: the requests with their staff history, staff hashed; the actions audited.
    shown = user_data(store_url, base_env["LOCAL_TENANT_ID"])
    by_id = {grouped(r["display_code"]): r for r in shown["handoff_requests"]}
    assert [h["action"] for h in by_id[first_id]["staff_history"]] == ["take", "done"]
    first_key, second_key = by_id[first_id]["request_id"], by_id[second_id]["request_id"]
    assert [(a["request_id"], a["action"]) for a in shown["staff_audit"]] == [
        (first_key, "take"), (first_key, "done"), (second_key, "decline")]
    dumped = json.dumps(shown)
    assert STAFF_A not in dumped and STAFF_B not in dumped
