"""查看原本服務單: the status of the user's latest handoff request, in honest words.

Reads only (the user's own documents, by ``tenant_id`` and ``user_id``). A follow-up record newer
than the latest request — an operation whose outcome could not be verified — is mentioned too,
so the user is never left believing nothing happened. Source: DESIGN §4 (human lifecycle; status).
"""
from __future__ import annotations

from linebot.v3.messaging import TextMessage

from shared.config import Settings
from shared.handoff import records, wording
from shared.identity import Actor
from shared.store import DocumentStore

_TEXT_EXCERPT_CHARS = 60


def latest_request(store: DocumentStore, actor: Actor) -> dict | None:
    """The actor's most recent request document, or None. Two reads by id, no query (so no index).

    Raises:
        StoreUnavailable: the store could not be read.
    """
    actor_doc = store.get(records.ACTORS, records.actor_doc_id(actor))
    key = (actor_doc or {}).get("latest_request_key")
    if not key:
        return None
    return store.get(records.REQUESTS, records.Operation(actor, key).doc_id)


def latest_followup(store: DocumentStore, actor: Actor) -> dict | None:
    """The actor's most recent ``needs_human_followup`` record, or None (equality filters only).

    Raises:
        StoreUnavailable: the store could not be read.
    """
    found = store.query(records.FOLLOWUPS, where={"tenant_id": actor.tenant_id, "user_id": actor.user_id,
                                                  "status": "needs_human_followup"})
    return max(found, key=lambda doc: doc.get("created_at") or "", default=None)


def status_message(settings: Settings, store: DocumentStore, actor: Actor) -> TextMessage:
    """The answer to 查看原本服務單.

    Raises:
        StoreUnavailable: the caller answers "try later".
    """
    request = latest_request(store, actor)
    followup = latest_followup(store, actor)
    lines: list[str] = []
    if request is not None:
        text = request.get("text") or ""
        excerpt = text if len(text) <= _TEXT_EXCERPT_CHARS else text[:_TEXT_EXCERPT_CHARS] + "…"
        lines += ["你最近一筆服務詢問：", f"單號：{request['request_id']}",
                  f"登記時間：{wording.local_time(settings, request['created_at'])}",
                  f"內容：{excerpt}", f"目前狀態：{wording.human_state_words(request.get('human_state'))}。"]
    if followup is not None and (request is None or followup["created_at"] > request["created_at"]):
        lines.append("另外，有一筆送出後無法自動查證是否登記的詢問，已留下紀錄請工作人員人工確認。")
    if not lines:
        lines.append(f"目前查不到你登記的服務詢問。想請真人幫忙，請輸入「{wording.HOW_TO_ASK}」。")
    return TextMessage(text="\n".join(lines))
