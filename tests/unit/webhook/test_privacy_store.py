"""What LOCAL says it keeps equals what it keeps (the privacy answer).

Signed webhook bodies go through the in-process ``WebhookService`` (and the queued-event worker)
on a real SQLite file; then every row of every collection in that file is read back and compared
with what the privacy reply claims and with what ``make user-data`` (``tools.user_data``) lists.
No test pins a whole reply: each checks one claim of it against the store.
"""
from __future__ import annotations

import io
import json
import sqlite3

from shared import inbox
from shared.logs import hash_user
from shared.store.sqlite import path_from_url
from tests.conftest import TEST_USER, all_text, line_body, postback_event, reply_messages, sign, text_event
from tests.unit.webhook.test_queued_events import REPLY, Pair, fresh_event

#: user-data's key for each collection that may hold documents about one user.
USER_DATA_KEY = {
    "preferences": "preference", "handoff_requests": "handoff_requests", "handoff_drafts": "drafts",
    "handoff_operations": "handoff_operations", "handoff_followups": "handoff_followups",
    "memory_cards": "declined_consent_cards", "staff_notices": "staff_notices", "staff_audit": "staff_audit",
    "turn_audit": "turn_audit", "handoff_actors": "handoff_actors", "webhook_inbox": "webhook_inbox",
    "conversations": "conversations",
}


def every_row(store_url: str) -> list[tuple[str, str, str, str]]:
    """(table, collection, id, JSON text) of every row of every table of the store's SQLite file."""
    conn = sqlite3.connect(f"file:{path_from_url(store_url)}?mode=ro", uri=True)
    try:
        rows = []
        for (table,) in conn.execute("SELECT name FROM sqlite_master WHERE type='table'").fetchall():
            columns = [c[1] for c in conn.execute(f"PRAGMA table_info({table})")]
            for row in conn.execute(f"SELECT * FROM {table}").fetchall():
                values = dict(zip(columns, row))
                rows.append((table, str(values.get("collection", "")), str(values.get("id", "")),
                             json.dumps(values, ensure_ascii=False)))
        return rows
    finally:
        conn.close()


def holding(store_url: str, needle: str) -> list[tuple[str, str, str]]:
    """(table, collection, id) of every row whose stored text contains ``needle``."""
    return [(table, collection, doc_id) for table, collection, doc_id, text in every_row(store_url) if needle in text]


def user_data(base_env: dict, user_id: str = TEST_USER) -> dict:
    from tools.user_data import main

    out, err = io.StringIO(), io.StringIO()
    assert main(["--user-id", user_id], environ=base_env, stdout=out, stderr=err) == 0, err.getvalue()
    return json.loads(out.getvalue())


def privacy_words(service, standin, text: str) -> str:
    return all_text(reply_messages(service, standin, text_event(text)))


def card_postback(messages: list[dict], label: str) -> str:
    """The postback data of the button labelled ``label`` in a reply's messages."""
    found = []

    def walk(node):
        if isinstance(node, dict):
            action = node.get("action")
            if isinstance(action, dict) and action.get("label") == label and action.get("type") == "postback":
                found.append(action["data"])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(messages)
    assert found, f"no {label} button"
    return found[0]


def test_privacy_reply_says_text_is_dropped_once_answered_and_the_store_agrees(webhook_service, line_standin,
                                                                             store_url):
    typed = ["你們會記錄我打的字嗎", "員林有素食店嗎 私密字串甲", "你們會不會把我的資料給別人？我的LINE名字你們看得到嗎",
             "謝謝 私密字串乙"]
    replies = [privacy_words(webhook_service, line_standin, text) for text in typed]
    # The claim, in its own words (not a copy of the reply): a message's text is kept only until answered.
    assert "我回覆你之後就把內容刪掉" in replies[0] and "我回覆你之後就把內容刪掉" in replies[2]
    assert "不含你打的字" not in replies[0]  # the old claim, false while the inbox held the text
    for text in typed:
        assert holding(store_url, text) == [], f"{text!r} is still stored after it was answered"
    for marker in ("私密字串甲", "私密字串乙"):
        assert holding(store_url, marker) == []
    # What stays of each answered event is what the reply names: its id, time, state and account.
    docs = webhook_service.store.query(inbox.COLLECTION, where={"tenant_id": "test-tenant"})
    assert len(docs) == len(typed)
    for doc in docs:
        assert doc["state"] == "done" and doc["content_removed"] is True and doc["user_id"] == TEST_USER
        assert set(doc["event"]["message"]) == {"id", "type"} and "replyToken" not in doc["event"]
    assert "7 天" in replies[0]


def test_privacy_reply_answers_the_display_name_question_and_no_profile_is_ever_fetched(webhook_service,
                                                                                       line_standin):
    words = privacy_words(webhook_service, line_standin, "你們會不會把我的資料給別人？我的LINE名字你們看得到嗎")
    assert "LINE 名字" in words
    assert not [c for c in line_standin.calls() if "/profile" in c["path"]]


def test_cancelled_draft_text_is_deleted_and_the_reply_says_so(webhook_service, line_standin, store_url):
    text = "新需求：請幫我修門口的路燈 私密字串丙"
    card = reply_messages(webhook_service, line_standin, text_event(text))
    assert holding(store_url, "私密字串丙")  # an open draft keeps its text, as the reply says
    assert [row[1] for row in holding(store_url, "私密字串丙")] == ["handoff_drafts"]
    cancel = postback_event(card_postback(card, "取消"))
    body = line_body(cancel)
    assert webhook_service.handle(body.decode(), sign(body)).status == 200
    assert holding(store_url, "私密字串丙") == []
    short = reply_messages(webhook_service, line_standin, text_event("我的資料"))
    assert len(short[0]["text"].split("\n")) <= 5  # the short answer; the rest behind 詳細說明
    more = all_text(reply_messages(webhook_service, line_standin, postback_event(card_postback(short, "詳細說明"))))
    assert "取消" in more and "內容就刪掉" in more and "7 天" in more and "30 天" in more


def test_queued_event_text_is_dropped_when_its_answer_is_settled(base_env, clock, line_standin, store_url):
    pair = Pair({**base_env, "LOCAL_QUEUE_MAX_ATTEMPTS": "4"}, clock, line_standin)
    try:
        event = fresh_event("員林有素食店嗎 私密字串丁", TEST_USER, clock)
        line_standin.fail_next(REPLY, 429)
        assert pair.post(event) == 200
        doc = pair.store.get(inbox.COLLECTION, f"test-tenant:{event['webhookEventId']}")
        assert doc["state"] == "queued"  # the worker still needs the raw event: it is kept
        assert user_data(base_env)["webhook_inbox"][0]["text"] == event["message"]["text"]  # and shown
        pair.drain()  # answered by reply (the token was unused and fresh)
        assert [c for c in line_standin.calls() if c["path"] == REPLY and c["status"] == 200]
        assert holding(store_url, "私密字串丁") == []
        [entry] = user_data(base_env)["webhook_inbox"]
        assert entry["content_removed"] is True and "text" not in entry
    finally:
        pair.queue.close()


def test_user_data_lists_every_document_that_mentions_the_user(webhook_service, line_standin, store_url, base_env):
    for text in ("員林有素食店嗎", "我的資料", "新需求：請幫我預約社區走讀 私密字串戊"):
        reply_messages(webhook_service, line_standin, text_event(text))
    listed = user_data(base_env)
    mentions: dict[str, int] = {}
    for table, collection, _doc_id, text in every_row(store_url):
        if TEST_USER in text or hash_user(TEST_USER) in text:
            assert table == "documents", f"the user is in table {table}, which user-data does not read"
            assert collection in USER_DATA_KEY, f"user-data does not list {collection}"
            mentions[collection] = mentions.get(collection, 0) + 1
    assert {"webhook_inbox", "turn_audit", "handoff_drafts", "handoff_actors", "conversations"} <= set(mentions)
    for collection, count in mentions.items():
        shown = listed[USER_DATA_KEY[collection]]
        assert (len(shown) if isinstance(shown, list) else int(shown is not None)) == count, collection
    # Whatever of the user's words is still stored is shown too (here: the open draft's text).
    assert "私密字串戊" in json.dumps(listed, ensure_ascii=False)
