"""functions/memory over HTTP: its own surface (auth, body, store errors) through
``create_app(...).test_client()``, and the consented-memory flow over real functions-framework
processes on loopback (webhook + memory), signed acceptance bodies and the LINE stand-in."""
from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timedelta, timezone

import pytest
import requests
from functions_framework import create_app

from shared.clock import TAIPEI
from shared.config import WEBHOOK_REQUIRED, Settings
from shared.deferred_events.task import QueuedEventTask
from shared.deferred_events.worker import QueuedEventWorker
from shared.identity import Actor
from shared.memory.tokens import issue_card
from shared.queue.embedded import EmbeddedQueue
from shared.signing import SigningKeys
from shared.store.sqlite import SqliteStore, path_from_url
from shared.webhook.service import WebhookService
from shared.wiring import line_gateway, memory_client, open_store
from tests.conftest import (
    REPO,
    FixedClock,
    all_text,
    case_bytes,
    line_body,
    postback_event,
    recorded_replies,
    reply_messages,
    sign,
    text_event,
)
from tests.memory_support import USER_A, USER_B, place_audits, postbacks, preference_of

MEMORY_SOURCE = str(REPO / "functions" / "memory" / "main.py")
AUTH = {"Authorization": "Bearer test-internal-token"}


def mint(user_id: str = USER_A, *, revision: int = 0, diet: str | None = "vegetarian", op: str = "save") -> str:
    _, token = issue_card(SigningKeys(b"test-signing-key", 1), Actor("test-tenant", user_id), revision=revision,
                          dietary_type=diet, operation=op, now=datetime.now(timezone.utc), ttl_seconds=300)
    return token


def body(token: str, user_id: str = USER_A, tenant: str = "test-tenant") -> dict:
    return {"tenant_id": tenant, "user_id": user_id, "token": token}


@pytest.fixture
def memory_app(base_env, monkeypatch):
    for name in [n for n in os.environ if n.startswith(("LINE_", "LOCAL_", "MEMORY_"))]:
        monkeypatch.delenv(name)
    for name, value in base_env.items():
        monkeypatch.setenv(name, value)
    return create_app("memory", MEMORY_SOURCE).test_client()


def test_memory_http_missing_credentials_is_401(memory_app):
    assert memory_app.post("/", json=body(mint())).status_code == 401
    assert memory_app.post("/", json=body(mint()), headers={"Authorization": "Basic x"}).status_code == 401


def test_memory_http_wrong_internal_token_is_403_and_nothing_written(memory_app, store_url):
    response = memory_app.post("/", json=body(mint()), headers={"Authorization": "Bearer nope"})
    assert response.status_code == 403
    assert preference_of(SqliteStore(path_from_url(store_url))).revision == 0


@pytest.mark.parametrize("payload", [None, [], {"tenant_id": "test-tenant", "user_id": USER_A},
                                     {"tenant_id": "other-tenant", "user_id": USER_A, "token": "x.y"},
                                     {"tenant_id": "test-tenant", "user_id": 7, "token": "x.y"}])
def test_memory_http_malformed_body_is_400(memory_app, payload):
    response = memory_app.post("/", data=json.dumps(payload), headers={**AUTH, "Content-Type": "application/json"})
    assert response.status_code == 400


def test_memory_http_get_is_405(memory_app):
    assert memory_app.get("/", headers=AUTH).status_code == 405


def test_memory_http_save_then_refusals_are_200_outcomes(memory_app):
    token = mint()
    first = memory_app.post("/", json=body(token), headers=AUTH)
    assert (first.status_code, first.get_json()["outcome"], first.get_json()["revision"]) == (200, "memory_saved", 1)
    again = memory_app.post("/", json=body(token), headers=AUTH).get_json()
    assert (again["outcome"], again["revision"]) == ("already_applied", 1)
    foreign = memory_app.post("/", json=body(token, user_id=USER_B), headers=AUTH)
    assert (foreign.status_code, foreign.get_json()["outcome"]) == (200, "invalid_memory_card")


def test_memory_http_store_unavailable_is_503(base_env, monkeypatch, tmp_path):
    for name, value in {**base_env, "LOCAL_STORE_URL": f"sqlite:///{tmp_path}/missing-dir/x.sqlite3"}.items():
        monkeypatch.setenv(name, value)
    client = create_app("memory", MEMORY_SOURCE).test_client()
    assert client.post("/", json=body(mint()), headers=AUTH).status_code == 503


@pytest.mark.slow
def test_memory_http_refuses_to_start_without_signing_key(base_env):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LINE_", "LOCAL_", "MEMORY_"))}
    env.update({k: v for k, v in base_env.items() if k != "LOCAL_SIGNING_KEY"})
    out = subprocess.run([sys.executable, "-c", "import runpy; runpy.run_path('functions/memory/main.py')"],
                         capture_output=True, text=True, cwd=REPO, env=env, timeout=60)
    assert out.returncode != 0 and "LOCAL_SIGNING_KEY is required" in out.stderr


# --- real processes: webhook + memory on loopback --------------------------------------------------

@pytest.fixture
def stack(start_function, base_env):
    memory = start_function("memory", base_env)
    webhook = start_function("webhook", {**base_env, "MEMORY_FUNCTION_URL": memory.url})
    return webhook, memory


def post_signed(url: str, raw: bytes) -> None:
    response = requests.post(url, data=raw, timeout=10,
                             headers={"Content-Type": "application/json", "X-Line-Signature": sign(raw)})
    assert response.status_code == 200, response.text


def reply_words(standin, raw: bytes) -> tuple[str, list[dict]]:
    token = json.loads(raw)["events"][0]["replyToken"]
    [reply] = recorded_replies(standin, token)
    return all_text(reply["body"]["messages"]), reply["body"]["messages"]


def tap(url: str, standin, data: str, user_id: str = USER_A) -> str:
    raw = line_body(postback_event(data, user_id=user_id))
    post_signed(url, raw)
    return reply_words(standin, raw)[0]


def user_data(env: dict) -> dict:
    full = {k: v for k, v in os.environ.items() if not k.startswith(("LINE_", "LOCAL_"))}
    full.update(env)
    out = subprocess.run([sys.executable, "-m", "tools.user_data", "--user-id", USER_A], cwd=REPO, env=full,
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout)


def tampered(data: str) -> str:
    body_part, mac = data.removeprefix("mem:").split(".")
    payload = json.loads(base64.urlsafe_b64decode(body_part + "=" * (-len(body_part) % 4)))
    payload["d"] = "lacto"
    forged = base64.urlsafe_b64encode(json.dumps(payload, separators=(",", ":")).encode()).rstrip(b"=").decode()
    assert forged != body_part
    return f"mem:{forged}.{mac}"


@pytest.mark.slow
def test_memory_http_acceptance_lifecycle_over_signed_webhooks(stack, line_standin, base_env, store_url):
    webhook, _ = stack
    store = SqliteStore(path_from_url(store_url))

    # remember → a card, nothing stored
    post_signed(webhook.url, case_bytes("text-remember-vegetarian.json"))
    words, messages = reply_words(line_standin, case_bytes("text-remember-vegetarian.json"))
    assert "用途：" in words and "有效至" in words
    approve = postbacks(messages)["同意記住"]
    assert len(approve) <= 300
    assert preference_of(store).revision == 0

    # approve → saved (through functions/memory); the same card again → already_applied
    assert "已經記住" in tap(webhook.url, line_standin, approve)
    assert (preference_of(store).dietary_type, preference_of(store).revision) == ("vegetarian", 1)
    assert user_data(base_env)["preference"]["dietary_type"] == "vegetarian"
    replay = tap(webhook.url, line_standin, approve)
    assert "已經處理過" in replay and "不會重複" in replay
    assert preference_of(store).revision == 1

    # 今天想吃素 → this_turn
    post_signed(webhook.url, case_bytes("text-today-only.json"))
    [audit] = place_audits(store)
    assert (audit["origin"], audit["effective_args"]["dietary_type"]) == ("this_turn", "vegetarian")

    # forget → removed; the old card replayed → stale, nothing restored
    post_signed(webhook.url, case_bytes("text-forget.json"))
    assert "已經忘記" in reply_words(line_standin, case_bytes("text-forget.json"))[0]
    forgotten = user_data(base_env)["preference"]
    assert forgotten == {"revision": 2}
    stale = tap(webhook.url, line_standin, approve)
    assert "失效" in stale and "什麼都沒有改變" in stale
    assert (preference_of(store).dietary_type, preference_of(store).revision) == (None, 2)

    # a card tapped by another user, and an altered card → rejected, nothing written
    fresh = postbacks(reply_words_for_text(webhook.url, line_standin, "以後都找全素，幫我記住"))["同意記住"]
    assert "無法使用" in tap(webhook.url, line_standin, fresh, user_id=USER_B)
    assert preference_of(store, USER_B).revision == 0
    assert "無法使用" in tap(webhook.url, line_standin, tampered(fresh))
    assert (preference_of(store).dietary_type, preference_of(store).revision) == (None, 2)


def reply_words_for_text(url: str, standin, words: str) -> list[dict]:
    raw = line_body(text_event(words))
    post_signed(url, raw)
    return reply_words(standin, raw)[1]


@pytest.mark.slow
def test_memory_http_twenty_concurrent_approvals_save_once(start_function, base_env, store_url):
    memory = start_function("memory", {**base_env, "LOCAL_STORE_DEADLINE_SECONDS": "5", "THREADS": "20"})
    token = mint()

    def approve(_):
        response = requests.post(memory.url, json=body(token), headers=AUTH, timeout=20)
        assert response.status_code == 200, response.text
        return response.json()

    with ThreadPoolExecutor(max_workers=20) as pool:
        results = list(pool.map(approve, range(20)))
    assert sorted(r["outcome"] for r in results) == ["already_applied"] * 19 + ["memory_saved"]
    assert {r["revision"] for r in results} == {1}
    assert preference_of(SqliteStore(path_from_url(store_url))).revision == 1


@pytest.mark.parametrize("tapped_at", ["yesterday", 1790577600000, "2026-11-30T04:00:00", ["2026-11-30T04:00:00Z"]],
                         ids=["words", "epoch_ms", "no_offset", "list"])
def test_memory_http_tap_time_not_iso_with_offset_is_400_and_nothing_written(memory_app, store_url, tapped_at):
    response = memory_app.post("/", json={**body(mint()), "tapped_at": tapped_at}, headers=AUTH)
    assert response.status_code == 400
    assert preference_of(SqliteStore(path_from_url(store_url))).revision == 0


def late_tap(data: str, user_id: str, tapped: datetime) -> dict:
    event = postback_event(data, user_id=user_id)
    event["timestamp"] = int(tapped.timestamp() * 1000)  # LINE stamps the tap; the body is signed with it
    return event


@pytest.mark.slow
def test_memory_http_consent_card_is_judged_at_the_tap_when_answered_ten_minutes_later(
        start_function, base_env, store_url, line_standin):
    """The webhook passes the tap's time (the signed event's ``timestamp``) to functions/memory, a real
    process judging by its own clock: a card tapped 1 s before its expiry and answered 10 minutes
    later, by the webhook itself (a late delivery) or by the queued-event worker, is saved; a tap at
    the expiry instant is refused (the end is exclusive)."""
    memory = start_function("memory", base_env)
    settings = Settings.from_env({**base_env, "MEMORY_FUNCTION_URL": memory.url}, required=WEBHOOK_REQUIRED)
    issued = datetime.now(timezone.utc).replace(microsecond=0) - timedelta(minutes=15)
    clock = FixedClock(issued)
    worker = QueuedEventWorker(settings, open_store(settings), line_gateway(settings),
                               memory=memory_client(settings), clock=clock)
    events = EmbeddedQueue(path_from_url(store_url), queue_name="queued-events", target_url="http://agent.invalid/",
                           auth_token=None, http=lambda url, raw, headers, timeout_seconds: worker.run(
                               QueuedEventTask.from_payload(json.loads(raw)), retry_count=0).http_status)
    budget = settings.webhook_budget_seconds
    # Without an event queue the webhook answers inline however slow the machine is.
    webhook = WebhookService(settings, open_store(settings), line_gateway(settings), clock=clock,
                             memory=memory_client(settings))
    # A delivery that arrived when only 1.2 s of LINE's budget was left: too little to answer it here.
    late_webhook = WebhookService(settings, webhook.store, webhook.line, clock=clock, memory=webhook.memory,
                                  event_queue=events, monotonic=lambda: time.monotonic() - (budget - 1.2))
    store = SqliteStore(path_from_url(store_url))
    cases = [(USER_A, "webhook", 1, "已經記住"), (USER_B, "webhook", 0, "超過有效時間"),
             ("U" + "c" * 32, "queued", 1, "已經記住"), ("U" + "d" * 32, "queued", 0, "超過有效時間")]
    for user_id, path, seconds_before, said in cases:
        clock.at = issued
        card = reply_messages(webhook, line_standin, text_event("長輩吃素，以後優先找蔬食，幫我記住", user_id=user_id))
        expiry = issued + timedelta(seconds=settings.memory_card_ttl_seconds)
        assert f"有效至 {expiry.astimezone(TAIPEI):%H:%M:%S}" in all_text(card)
        tap = late_tap(postbacks(card)["同意記住"], user_id, expiry - timedelta(seconds=seconds_before))
        clock.at = expiry + timedelta(minutes=10)  # answered 10 minutes after the tap
        if path == "webhook":
            words = all_text(reply_messages(webhook, line_standin, tap))
        else:
            body_bytes = line_body(tap)
            assert late_webhook.handle(body_bytes, sign(body_bytes)).body["events"] == ["queued"]
            while events.dispatch_due(limit=10):
                pass
            [pushed] = [c for c in line_standin.calls() if c["path"].endswith("/push") and c["body"]["to"] == user_id]
            words = all_text(pushed["body"]["messages"])
        assert said in words, (user_id, path, seconds_before, words)
        saved = preference_of(store, user_id)
        assert (saved.dietary_type, saved.revision) == (("vegetarian", 1) if seconds_before else (None, 0))
