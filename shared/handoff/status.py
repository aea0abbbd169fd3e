"""查看原本服務單: the status of the user's requests, in honest words.

Reads only (the user's own documents, by ``tenant_id`` and ``user_id``). Every request still open
(awaiting acceptance or accepted) is listed, newest first, up to OPEN_LISTED_MAX with the count of
the rest; the latest request is shown too when it is already closed. A follow-up record newer than
the latest request — an operation whose outcome could not be verified, not a notice LINE refused
for the monthly limit — is mentioned too, so the user is never left believing nothing happened. Asked with a request's number (「A7K-3QF 處理到哪了」,
``shared.handoff.codes.find_in``), that request is answered first, when it is the resident's own in
this tenant (the code's document, then the request, by id); a number that is not theirs is said
to be not found, and their own requests follow. In a group or room the status is the one-to-one
reply instead (``shared.handoff.flow.status_entry``). Source: docs/design.md §4 (human lifecycle; status).
"""
from __future__ import annotations

from linebot.v3.messaging import TextMessage

from shared.config import Settings
from shared.handoff import codes, push_refused, records, wording
from shared.handoff.staff_outbox import OPEN_STATES
from shared.identity import Actor
from shared.store import DocumentStore

_TEXT_EXCERPT_CHARS = 60
#: The most open requests one status answer lists in full (the rest are counted).
OPEN_LISTED_MAX = 3
#: The most request numbers named for the open requests past OPEN_LISTED_MAX.
_EARLIER_IDS_MAX = 5


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
    """The actor's most recent ``needs_human_followup`` record of an operation whose outcome could
    not be verified, or None (equality filters only).

    A record of a notice LINE refused for the monthly limit (reason ``push_refused.REASON``:
    ``shared.handoff.push_refused``, or reconcile's receipt push refused so) is not one: the request
    it concerns, if any, is listed as it is, and the resident is never told an inquiry went unverified.

    Raises:
        StoreUnavailable: the store could not be read.
    """
    found = store.query(records.FOLLOWUPS, where={"tenant_id": actor.tenant_id, "user_id": actor.user_id,
                                                  "status": "needs_human_followup"})
    unverified = [doc for doc in found if doc.get("reason") != push_refused.REASON]
    return max(unverified, key=lambda doc: doc.get("created_at") or "", default=None)


def request_by_code(store: DocumentStore, actor: Actor, code: codes.DisplayCode) -> dict | None:
    """The actor's own request with this display code in the actor's tenant, or None (no such code,
    another tenant's, or another resident's: the same answer, so a code tells nobody else anything).
    Two reads by id, no query.

    Raises:
        StoreUnavailable: the store could not be read.
    """
    owner = store.get(codes.CODES, codes.code_doc_id(actor.tenant_id, code))
    if owner is None or owner.get("tenant_id") != actor.tenant_id:
        return None
    request = store.get(records.REQUESTS, str(owner.get("operation_doc") or ""))
    if request is None or request.get("tenant_id") != actor.tenant_id or request.get("user_id") != actor.user_id:
        return None
    return request


def open_requests(store: DocumentStore, actor: Actor) -> list[dict]:
    """The actor's requests still open (``awaiting_acceptance`` / ``accepted``), newest first.

    One equality query on (tenant_id, user_id) (the ``requests_by_user`` index, infra/firestore.tf);
    a resident's requests are few (``LOCAL_DAILY_REQUEST_CAP`` a day).

    Raises:
        StoreUnavailable: the store could not be read.
    """
    found = store.query(records.REQUESTS, where={"tenant_id": actor.tenant_id, "user_id": actor.user_id})
    return sorted((doc for doc in found if doc.get("human_state") in OPEN_STATES),
                  key=lambda doc: (doc.get("created_at") or "", doc.get("request_id") or ""), reverse=True)


def _request_lines(settings: Settings, request: dict) -> list[str]:
    text = request.get("text") or ""
    excerpt = text if len(text) <= _TEXT_EXCERPT_CHARS else text[:_TEXT_EXCERPT_CHARS] + "…"
    return [f"單號：{wording.number(settings, request)}，{wording.local_time(settings, request['created_at'])} 登記",
            f"內容：{excerpt}；{wording.human_state_words(request.get('human_state'))}。"]


def status_message(settings: Settings, store: DocumentStore, actor: Actor,
                   code: codes.DisplayCode | None = None) -> TextMessage:
    """The answer to 查看原本服務單: each open request (up to OPEN_LISTED_MAX, the rest counted), and
    the latest request when it is closed; asked with a number (``code``), that request alone, or
    that it was not found and then the rest.

    Raises:
        StoreUnavailable: the caller answers "try later".
    """
    if code is not None:
        asked = request_by_code(store, actor, code)
        if asked is not None:
            return TextMessage(text="\n".join(_request_lines(settings, asked)))
        head = f"查不到單號 {code.grouped} 的服務詢問，請再核對一次單號。"
        return TextMessage(text="\n".join([head, *_status_lines(settings, store, actor)]))
    return TextMessage(text="\n".join(_status_lines(settings, store, actor)))


def _status_lines(settings: Settings, store: DocumentStore, actor: Actor) -> list[str]:
    request = latest_request(store, actor)
    followup = latest_followup(store, actor)
    still_open = open_requests(store, actor)
    lines: list[str] = []
    if request is not None and all(doc["request_id"] != request["request_id"] for doc in still_open):
        lines += ["你最近一筆服務詢問：", *_request_lines(settings, request)]  # closed (or not listed yet)
    if len(still_open) == 1 and not lines:
        lines += ["你最近一筆服務詢問：", *_request_lines(settings, still_open[0])]
    elif still_open:
        lines.append(("另外，" if lines else "") + f"你有 {len(still_open)} 筆服務詢問還沒結束"
                     + (f"，先列最近的 {OPEN_LISTED_MAX} 筆：" if len(still_open) > OPEN_LISTED_MAX else "："))
        for number, doc in enumerate(still_open[:OPEN_LISTED_MAX], start=1):
            first, *rest = _request_lines(settings, doc)
            lines += [f"{number}. {first}", *rest]
        if len(still_open) > OPEN_LISTED_MAX:
            earlier = [wording.number(settings, doc) for doc in still_open[OPEN_LISTED_MAX:]]
            named = "、".join(earlier[:_EARLIER_IDS_MAX]) + ("等" if len(earlier) > _EARLIER_IDS_MAX else "")
            lines.append(f"較早的 {len(earlier)} 筆也還沒結束（單號：{named}）。")
    if followup is not None and (request is None or followup["created_at"] > request["created_at"]):
        lines.append("另外，有一筆送出後無法自動查證是否登記的詢問，已留下紀錄請工作人員人工確認。")
    if not lines:
        lines.append(f"目前查不到你登記的服務詢問。想請真人幫忙，請輸入「{wording.HOW_TO_ASK}」。")
    return lines
