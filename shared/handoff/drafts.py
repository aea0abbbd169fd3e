"""Drafts: the text a user is asked to confirm, before anything reaches the staff.

The app allocates the operation's idempotency key here, before any card is sent (docs/design.md §4:
the key must exist before the first send, so a lost answer can be reconciled by it). One
transaction writes the draft, marks the user's previous open draft ``superseded`` and points
the user's ``handoff_actors`` document at the new key.

Limits (docs/design.md §4): a draft is valid ``draft_ttl_seconds`` (600); the text holds at most
``request_text_max_chars`` characters (500); each user may have at most ``daily_request_cap``
requests per Asia/Taipei day, and a new draft is refused once that many exist today (a user
has at most one open draft: a newer one supersedes it).

A draft's text is kept only while it may still become a request: a draft cancelled (「取消」),
superseded by a newer one, or withdrawn (its message unsent) loses its ``text`` in the same write
(``text_removed_at`` is set), unless its 「確認送出」 was recorded (``confirm_requested_at``): then a
request may exist whose outcome is being checked, and a person following it up needs the text.
A draft left open past its expiry keeps its text until it is cancelled or superseded.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta

from shared.clock import from_iso, require_aware, to_iso
from shared.config import Settings
from shared.handoff import records
from shared.handoff.records import Operation
from shared.identity import Actor
from shared.store import DocumentStore, Transaction

#: Text that starts a draft, e.g. ``新需求：想參加週六的社區走讀``.
DRAFT_PREFIXES = ("新需求：", "新需求:")

OPEN, CONFIRMED, CANCELLED, SUPERSEDED = "open", "confirmed", "cancelled", "superseded"
#: The user unsent (收回) the message the draft was made from: cancelled, and its text deleted.
WITHDRAWN = "withdrawn"


def _without_text(doc: dict, now: datetime) -> dict:
    """A closed draft as kept: no ``text`` unless its confirmation was recorded (module docstring)."""
    if doc.get("confirm_requested_at") or doc.get("text") is None:
        return doc
    return {**doc, "text": None, "text_removed_at": to_iso(now)}


#: ``新需求`` at the start, optionally in brackets (【新需求】, [新需求], 「新需求」), then any colon
#: (: ： ︰ ∶ ﹕), a dash, an arrow (→, ->, =>, ➜), or space, or nothing; several separators are all
#: stripped, so 新需求 想報名…, 新需求 : 路燈壞了, 新需求︰…, 【新需求】… and a bare 新需求 all
#: open a draft, and 新需求→想找志工… does not keep the → in the request text.
_DRAFT_PREFIX = re.compile(r"^\s*[【\[「『(（<＜]?\s*新需求\s*[】\]」』)）>＞]?(?:\s*[:：︰∶﹕꞉\-－—–→⇒➔➜➡⟶=＝>＞~～])*\s*")


_SEPARATOR = r"[:：︰∶﹕꞉\-－—–→⇒➔➜➡⟶=＝>＞~～]"
#: A sentence that asks to create a request (so 幫我建立服務單：路燈壞了 is not read as a status
#: question): an optional asker (幫我, 我要, 麻煩你, 請) and a create verb (建立, 開, 建, 新增, 填, 送, 留,
#: 登記, 申請) with a request noun (服務單, 單子, 單, 服務詢問, 需求), e.g. 幫我開一張單, 我要建單; or a create
#: verb alone with a colon or a dash (幫我登記：…, 報修：…). Then the separators and spaces, the request
#: text, or nothing (the caller shows the exact form). A status or cancel question (我的服務單呢, 登記了嗎,
#: 幫我取消服務單) has no create verb at the start and is not read; text that starts with a status word
#: after the phrase (幫我開的單呢, 建立的單子處理了沒) is not a request text either. Traditional or
#: Simplified characters, as residents type them.
_ASKER = r"(?:(?:請|请)?(?:麻煩|麻烦)?(?:你|妳|您)?(?:幫|帮|替)(?:我|忙)?|我(?:要|想要?|需要)|(?:請|请)|(?:麻煩|麻烦)(?:你|妳|您)?)?"
_MEASURE = r"(?:一)?(?:張|张|個|个|筆|笔|份|件)?(?:新的?)?"
_NOUN = r"(?:服務單|服务单|服務詢問|服务询问|單子|单子|需求單|需求单|需求|(?:單|单)(?![位車车獨独純纯身人點点品據据字]))"
_CREATE_WITH_NOUN = rf"(?:建立|建|開立|开立|開|开|新增|填寫?|填写|送出?|留|登記|登记|申請|申请|提出?)\s*{_MEASURE}\s*{_NOUN}"
_CREATE_WITH_COLON = rf"(?:建立|新增|登記|登记|報修|报修|反映|反應|反应)\s*{_SEPARATOR}"
_CREATE_PREFIX = re.compile(rf"^\s*{_ASKER}\s*(?:{_CREATE_WITH_NOUN}|{_CREATE_WITH_COLON})(?:\s*(?:{_SEPARATOR}|[，,、。]))*\s*")
#: Words after the phrase that make it a question about a request, not its text (幫我開的單呢).
_NOT_REQUEST_TEXT = re.compile(r"^(?:的|了|嗎|吗|呢|沒|没|好了|處理|处理|進度|进度|在哪|怎|有人|[?？])")


def request_text_of(message_text: str) -> str | None:
    """The request text of a ``新需求：…`` message or a create sentence (``幫我建立服務單：…``, stripped),
    or None for any other message.

    Args:
        message_text: the whole message; only its start is read.
    Returns:
        The text after the prefix ("" for a bare 新需求 or 我要建單: the caller shows the exact form),
        or None when the message starts with neither.
    """
    found = _DRAFT_PREFIX.match(message_text)
    if found is None:
        found = _CREATE_PREFIX.match(message_text)
        if found is None or _NOT_REQUEST_TEXT.match(message_text[found.end():].strip()):
            return None
    return message_text[found.end():].strip()


@dataclass(frozen=True)
class Draft:
    """A stored draft. Times are aware UTC."""

    operation: Operation
    text: str
    content_hash: str
    created_at: datetime
    expires_at: datetime


@dataclass(frozen=True)
class DraftResult:
    """What ``create_draft`` did.

    ``status``: "draft_created" (``draft`` set), "text_empty", "text_too_long" (``length`` and
    ``limit`` set) or "daily_cap_reached" (``limit`` set). Only "draft_created" wrote anything;
    ``replaced`` is True when it superseded an open, unexpired, unconfirmed card.
    """

    status: str
    draft: Draft | None = None
    length: int = 0
    limit: int = 0
    #: A card the resident could still confirm was superseded by this one (said beside the new card).
    replaced: bool = False


def _requests_today(actor_doc: dict | None, day: str) -> int:
    if not actor_doc or actor_doc.get("requests_day") != day:
        return 0
    return int(actor_doc.get("requests_on_day") or 0)


def create_draft(store: DocumentStore, actor: Actor, text: str, *, now: datetime,
                 settings: Settings, source_message_id: str | None = None) -> DraftResult:
    """Store a new draft for ``actor`` and make it the current one, in one transaction.

    Args:
        actor: (tenant_id, user_id) of the verified event.
        text: the request text, already without the ``新需求：`` prefix.
        now: aware current time.
        settings: ``draft_ttl_seconds``, ``request_text_max_chars``, ``daily_request_cap``, ``tz``.
        source_message_id: LINE's id of the message the text came from (an unsend names it).
    Returns:
        DraftResult; refusals write nothing.
    Raises:
        StoreUnavailable / StoreTimeout / TransactionConflict: the draft may or may not exist;
            no card was shown, so the user simply sends the text again (a new draft supersedes).
    Source: docs/design.md §4 (draft, limits, superseded).
    """
    require_aware(now)
    text = text.strip()
    if not text:
        return DraftResult("text_empty")
    if len(text) > settings.request_text_max_chars:
        return DraftResult("text_too_long", length=len(text), limit=settings.request_text_max_chars)
    operation = Operation(actor, records.new_idempotency_key())
    draft = Draft(operation, text, records.content_hash(text), now,
                  now + timedelta(seconds=settings.draft_ttl_seconds))
    day = records.local_day(now, settings.tz)
    actor_id = records.actor_doc_id(actor)

    def txn(tx: Transaction) -> DraftResult:
        actor_doc = tx.get(records.ACTORS, actor_id)
        previous_key = (actor_doc or {}).get("current_draft_key")
        previous_id = Operation(actor, previous_key).doc_id if previous_key else None
        previous = tx.get(records.DRAFTS, previous_id) if previous_id else None
        if _requests_today(actor_doc, day) >= settings.daily_request_cap:
            return DraftResult("daily_cap_reached", limit=settings.daily_request_cap)
        replaced = False
        if previous is not None and previous.get("status") == OPEN:
            replaced = not previous.get("confirm_requested_at") and now < from_iso(previous["expires_at"])
            tx.set(records.DRAFTS, previous_id,
                   _without_text({**previous, "status": SUPERSEDED, "closed_at": to_iso(now)}, now))
        tx.create(records.DRAFTS, operation.doc_id, {
            "tenant_id": actor.tenant_id, "user_id": actor.user_id,
            "idempotency_key": operation.idempotency_key, "text": text, "content_hash": draft.content_hash,
            "status": OPEN, "created_at": to_iso(now), "expires_at": to_iso(draft.expires_at),
            "request_id": None, "confirmed_at": None, "closed_at": None,
            "source_message_id": source_message_id,
        })
        base = actor_doc or {"tenant_id": actor.tenant_id, "user_id": actor.user_id,
                             "requests_day": day, "requests_on_day": 0}
        tx.set(records.ACTORS, actor_id, {**base, "current_draft_key": operation.idempotency_key,
                                          "updated_at": to_iso(now)})
        return DraftResult("draft_created", draft=draft, replaced=replaced)

    return store.run_transaction(txn)


#: ``confirm_state`` of a draft whose 「確認送出」 was tapped in time: the confirmation is durable before
#: anything else, so a sweep can settle it however long reconcile is down (docs/design.md §4, §11).
CONFIRMING = "confirming"


def mark_confirming(store: DocumentStore, operation: Operation, content_hash: str, *, now: datetime,
                    event_id: str | None) -> bool:
    """Record, before the create, that the user confirmed this draft at ``now`` (the first tap wins).

    The draft keeps ``confirm_state`` "confirming", ``confirm_requested_at`` (the tap's time, which
    decides expiry from now on) and ``confirm_event`` (the webhook event told "checking" if the
    create's outcome is unknown). Nothing is written for a draft that is missing, someone else's,
    of other content, no longer open, or already expired at the tap: the create refuses those.

    Returns:
        True when the draft now carries (or already carried) the confirmation.
    Raises:
        StoreUnavailable / StoreTimeout / TransactionConflict: the confirmation may not be recorded.
    """
    require_aware(now)

    def txn(tx: Transaction) -> bool:
        doc = tx.get(records.DRAFTS, operation.doc_id)
        if (doc is None or doc.get("user_id") != operation.actor.user_id
                or doc.get("tenant_id") != operation.actor.tenant_id or doc.get("content_hash") != content_hash
                or doc.get("status") != OPEN):
            return False
        if doc.get("confirm_requested_at"):
            return True
        if now >= from_iso(doc["expires_at"]):
            return False
        tx.set(records.DRAFTS, operation.doc_id, {**doc, "confirm_state": CONFIRMING,
                                                  "confirm_requested_at": to_iso(now), "confirm_event": event_id})
        return True

    return store.run_transaction(txn)


def confirmation_time(draft: dict, now: datetime) -> datetime:
    """When the user confirmed: the recorded tap (``confirm_requested_at``), else ``now``.

    Expiry is judged by this time, not by the clock of whoever creates the request later (a
    reconcile after an outage): the consent was given when the user tapped.
    """
    recorded = draft.get("confirm_requested_at")
    return min(from_iso(recorded), now) if recorded else now


def confirming_drafts(store: DocumentStore, tenant_id: str) -> list[dict]:
    """Open drafts of the tenant whose confirmation is recorded (candidates for the sweep).

    Raises:
        StoreUnavailable: the store could not be read.
    """
    return store.query(records.DRAFTS, where={"tenant_id": tenant_id, "status": OPEN, "confirm_state": CONFIRMING})


def withdraw_draft(store: DocumentStore, actor: Actor, message_id: str, *, now: datetime) -> bool:
    """The user unsent a message: cancel the open draft made from it and delete its text.

    Only the actor's current draft can still be confirmed (a newer one supersedes older cards), so
    only it is looked at. The draft keeps its key, content hash and times (a card tapped later is
    told the message was withdrawn); its ``text`` becomes None. A draft already confirmed is a
    request for a person and stays as it is.

    Returns:
        True when a draft was withdrawn now.
    Raises:
        StoreUnavailable / StoreTimeout / TransactionConflict: retryable.
    Source: LINE Messaging API, unsend event ("delete the message content you have stored").
    """
    require_aware(now)
    actor_id = records.actor_doc_id(actor)

    def txn(tx: Transaction) -> bool:
        actor_doc = tx.get(records.ACTORS, actor_id)
        key = (actor_doc or {}).get("current_draft_key")
        if not key:
            return False
        doc_id = Operation(actor, key).doc_id
        doc = tx.get(records.DRAFTS, doc_id)
        if doc is None or doc.get("source_message_id") != message_id or doc.get("status") != OPEN:
            return False
        tx.set(records.DRAFTS, doc_id, {**doc, "status": WITHDRAWN, "text": None, "closed_at": to_iso(now),
                                        "confirm_state": None, "text_removed_at": to_iso(now)})
        return True

    return store.run_transaction(txn)


@dataclass(frozen=True)
class CancelResult:
    """What ``cancel_draft`` found: "cancelled", "already_cancelled", "already_confirmed"
    (``request_id`` set, and the request's ``display_code`` and ``confirmed_at`` ISO UTC for its number),
    "superseded", "withdrawn", "expired" or "not_found". Only "cancelled" and "expired" (the text
    deleted) wrote."""

    status: str
    request_id: str | None = None
    display_code: str | None = None
    confirmed_at: str | None = None

    def number_fields(self) -> dict[str, str | None]:
        """The fields ``shared.handoff.codes.label`` reads (the draft was confirmed when its request was made)."""
        return {"display_code": self.display_code, "created_at": self.confirmed_at}


def cancel_draft(store: DocumentStore, operation: Operation, content_hash: str, *,
                 now: datetime) -> CancelResult:
    """Cancel an open draft (the card's 「取消」), and delete its text in the same write (unless its
    confirmation was recorded: module docstring). A confirmed draft stays confirmed. 「取消」 on an
    expired draft answers "expired" and deletes its text too (its status stays).

    Raises:
        StoreUnavailable / StoreTimeout / TransactionConflict: retryable; nothing certain.
    """
    require_aware(now)

    def txn(tx: Transaction) -> CancelResult:
        doc = tx.get(records.DRAFTS, operation.doc_id)
        if doc is None or doc.get("content_hash") != content_hash or doc.get("user_id") != operation.actor.user_id:
            return CancelResult("not_found")
        status = doc.get("status")
        if status == CONFIRMED:
            return CancelResult("already_confirmed", doc.get("request_id"), doc.get("display_code"),
                                doc.get("confirmed_at"))
        if status == CANCELLED:
            return CancelResult("already_cancelled")
        if status == SUPERSEDED:
            return CancelResult("superseded")
        if status == WITHDRAWN:
            return CancelResult("withdrawn")
        if now >= from_iso(doc["expires_at"]):
            cleared = _without_text(doc, now)
            if cleared is not doc:
                tx.set(records.DRAFTS, operation.doc_id, cleared)
            return CancelResult("expired")
        tx.set(records.DRAFTS, operation.doc_id,
               _without_text({**doc, "status": CANCELLED, "closed_at": to_iso(now)}, now))
        return CancelResult("cancelled")

    return store.run_transaction(txn)
