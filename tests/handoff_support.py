"""Helpers for the handoff tests over real HTTP: signed posts, cards, store counts, user-data, logs."""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Callable

import requests

from shared.store.sqlite import SqliteStore, path_from_url
from tests.codes_support import SHOWN_CODE
from tests.conftest import REPO, all_text, line_body, recorded_replies, replies_to, sign, text_event
from tools.demo import wait_until
from tools.function_process import read_entries

USER = "U7a1e5b0c2d3f4a5b6c7d8e9f0a1b2c3d"
#: A request number as the resident reads it (``A7K-3QF``, shared.handoff.codes).
REQUEST_ID = SHOWN_CODE
REPLY, PUSH = "/v2/bot/message/reply", "/v2/bot/message/push"

#: Short queue timings so fault cases finish in seconds (min 0.2 s, max 1 s, 3 attempts).
FAST_QUEUE = {"LOCAL_QUEUE_MIN_BACKOFF_SECONDS": "0.2", "LOCAL_QUEUE_MAX_BACKOFF_SECONDS": "1",
              "LOCAL_QUEUE_MAX_ATTEMPTS": "3", "LOCAL_RECONCILE_DELAY_SECONDS": "0.5",
              "LOCAL_QUEUE_DISPATCH_DEADLINE_SECONDS": "10"}


def env_with(base_env: dict, **extra: str) -> dict[str, str]:
    return {**base_env, **FAST_QUEUE, **extra}


def post(url: str, body: bytes, timeout: float = 10) -> requests.Response:
    return requests.post(url, data=body, headers={"Content-Type": "application/json",
                                                  "X-Line-Signature": sign(body)}, timeout=timeout)


def accepted(standin, path: str) -> list[dict]:
    return [c for c in standin.calls() if c["path"] == path and c["status"] == 200]


def replied_messages(standin, token: str, *, wait_seconds: float = 30.0) -> list[dict]:
    """The messages replied with ``token``, waiting up to ``wait_seconds`` for them to be recorded
    (``[]`` if none): a 200 does not mean the reply is on record, since an event the webhook queued
    (its budget spent on a loaded machine) is answered by the queued worker a moment later, with the
    same token. ``wait_seconds=0`` reads what is recorded now (for "nobody was told yet")."""
    calls = recorded_replies(standin, token, wait_seconds) if wait_seconds > 0 else replies_to(standin, token)
    assert len(calls) <= 1, "a reply token was used twice"
    return calls[0]["body"]["messages"] if calls else []


def reply_text(standin, token: str, *, wait_seconds: float = 30.0) -> str:
    """The text replied with ``token`` (``replied_messages``), "" if none."""
    return all_text(replied_messages(standin, token, wait_seconds=wait_seconds))


def card_postbacks(standin, token: str) -> dict[str, str]:
    """``{"確認送出": data, "取消": data}`` from the card replied with ``token`` (waiting for it); the card
    may follow a text (「前一張確認卡已換成這一張。」 when it replaces an open one)."""
    messages = replied_messages(standin, token)
    cards = [message for message in messages if message.get("type") == "flex"]
    assert cards, f"no card replied with token {token}: {messages}"
    return {b["action"]["label"]: b["action"]["data"] for b in cards[0]["contents"]["footer"]["contents"]}


def new_card(webhook_url: str, standin, text: str = "新需求：想參加週六的社區走讀，需要輪椅協助",
             user_id: str = USER) -> dict[str, str]:
    event = text_event(text, user_id=user_id)
    assert post(webhook_url, line_body(event)).status_code == 200
    return card_postbacks(standin, event["replyToken"])


def store_docs(store_url: str, collection: str) -> list[dict]:
    path = path_from_url(store_url)
    if not os.path.exists(path):
        return []
    store = SqliteStore(path, read_only=True)
    try:
        return store.query(collection)
    finally:
        store.close()


def request_rows(store_url: str) -> int:
    return len(store_docs(store_url, "handoff_requests"))


def user_data(store_url: str, tenant_id: str, user_id: str = USER) -> dict:
    """``make user-data LINE_USER_ID=…`` against this store (the venv is not rebuilt: ``-o``)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LINE_", "LOCAL_"))}
    # The test signing key keys the user hash (shared/logs.py), as in the functions under test.
    env.update({"LOCAL_STORE_URL": store_url, "LOCAL_TENANT_ID": tenant_id, "LOCAL_SIGNING_KEY": "test-signing-key"})
    out = subprocess.run(["make", "-s", "-o", ".venv/.installed", "user-data", f"LINE_USER_ID={user_id}"],
                         cwd=REPO, env=env, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout)


def wait_for(predicate: Callable[[], object], timeout_s: float, what: str, interval_s: float = 0.05):
    """``tools.demo.wait_until``, failing the test on timeout."""
    value = wait_until(predicate, timeout_s, interval_s)
    if not value:
        raise AssertionError(f"timed out after {timeout_s} s waiting for {what}")
    return value


def log_entries(log_path: Path, message: str) -> list[dict]:
    """Structured log lines with this ``message`` from a function's log file."""
    return read_entries(log_path, message)


def told_request_ids(standin, user_id: str = USER, reply_tokens: tuple[str, ...] = ()) -> list[str]:
    """Request numbers (``A7K-3QF``) the user was told, once per accepted message (replies to the tokens, and pushes)."""
    ids = []
    for call in accepted(standin, PUSH):
        if call["body"]["to"] == user_id:
            ids += REQUEST_ID.findall(all_text(call["body"]["messages"]))
    for call in accepted(standin, REPLY):
        if call["body"]["replyToken"] in reply_tokens:
            ids += REQUEST_ID.findall(all_text(call["body"]["messages"]))
    return ids
