"""Create the handoff request of one confirmed operation, exactly once (docs/design.md §4 outcome table).

One store transaction, shaped for Firestore (every read before the first write, no side effects,
safe to re-run): it reads the request, the operation record, the draft and the actor document by
id, then either writes nothing (every outcome but the first) or writes, together:

* ``handoff_requests/{operation_id}`` (create-if-absent: uniqueness is the document id),
* ``handoff_operations/{operation_id}`` with the receipt notice (the outbox),
* the draft, now ``confirmed`` with the request id (one confirmation → one request),
* ``handoff_codes/{code_doc_id}``, the request's display code (``shared.handoff.codes``: unique per
  tenant, drawn deterministically per attempt, so a re-run draws the same),
* the actor's request count for the Asia/Taipei day and its latest request's key,
* when a staff group is configured, the staff group's notice (``staff_notices``, docs/design.md §10).

| status | when | writes |
|---|---|---|
| request_created | first create | the request and its notice |
| already_created | same key, same content hash | none (at most a notice claim); same receipt |
| idempotency_conflict | same key, different content hash | none |
| expired / superseded / unconfirmed_operation / withdrawn / wrong_actor | consent no longer valid | none |

Source: docs/design.md §4 (composite key, content hash compared, the same key on retry).
"""
from __future__ import annotations

import enum
from dataclasses import dataclass
from datetime import datetime
from zoneinfo import ZoneInfo

from shared.clock import from_iso, require_aware, to_iso
from shared.handoff import codes, drafts, notify, records, staff_outbox
from shared.handoff.records import Operation
from shared.store import DocumentStore, Transaction


class CreateStatus(enum.StrEnum):
    """The outcome of ``create_request`` (the module table); also a receipt's ``status``."""

    REQUEST_CREATED = "request_created"
    ALREADY_CREATED = "already_created"
    IDEMPOTENCY_CONFLICT = "idempotency_conflict"
    EXPIRED = "expired"
    SUPERSEDED = "superseded"
    UNCONFIRMED_OPERATION = "unconfirmed_operation"
    WRONG_ACTOR = "wrong_actor"
    WITHDRAWN = "withdrawn"


REQUEST_CREATED = CreateStatus.REQUEST_CREATED
ALREADY_CREATED = CreateStatus.ALREADY_CREATED
IDEMPOTENCY_CONFLICT = CreateStatus.IDEMPOTENCY_CONFLICT
EXPIRED = CreateStatus.EXPIRED
SUPERSEDED = CreateStatus.SUPERSEDED
UNCONFIRMED_OPERATION = CreateStatus.UNCONFIRMED_OPERATION
WRONG_ACTOR = CreateStatus.WRONG_ACTOR
WITHDRAWN = CreateStatus.WITHDRAWN
#: The consent is no longer valid: nothing is created, and the user is asked to send it again.
CONSENT_REFUSALS = (EXPIRED, SUPERSEDED, UNCONFIRMED_OPERATION, WITHDRAWN)

AWAITING_ACCEPTANCE = staff_outbox.AWAITING


@dataclass(frozen=True)
class Receipt:
    """What the user is told: the request is registered and waiting for a person.

    ``request_id`` is ``req-YYYYMMDD-<16 lowercase hex>`` (Asia/Taipei date), the key; ``display_code``
    the 6-character code people read (``shared.handoff.codes``; None for a request made before codes);
    ``created_at`` ISO UTC.
    """

    status: CreateStatus
    request_id: str
    human_state: str
    created_at: str
    idempotency_key: str
    display_code: codes.DisplayCode | None = None

    def as_dict(self) -> dict[str, str | None]:
        """``{status, request_id, display_code, human_state, created_at, idempotency_key}`` (docs/design.md §4);
        ``display_code`` grouped (``A7K-3QF``) or None."""
        return {"status": self.status.value, "request_id": self.request_id,
                "display_code": self.display_code.grouped if self.display_code else None,
                "human_state": self.human_state, "created_at": self.created_at,
                "idempotency_key": self.idempotency_key}

    def number_fields(self) -> dict[str, str | None]:
        """The fields ``codes.label`` reads: the code and when it was made."""
        return {"display_code": self.display_code.value if self.display_code else None,
                "created_at": self.created_at}


@dataclass(frozen=True)
class CreateResult:
    """The outcome of one create call.

    Args:
        status: the table's row.
        receipt: set for request_created and already_created.
        notice: whether this caller now owns telling the user (``notify.NoticeClaim``).
        creator_event_id: the webhook event id whose confirmation created the request (None when
            reconcile created it): a redelivery of that event must follow the outbox, a new tap not.
    """

    status: CreateStatus
    receipt: Receipt | None = None
    notice: notify.NoticeClaim = notify.NoticeClaim.NO_NOTICE
    creator_event_id: str | None = None


def receipt_of(request_doc: dict, status: CreateStatus) -> Receipt:
    """The receipt of a stored request, answered with ``status``."""
    return Receipt(status, request_doc["request_id"], request_doc.get("human_state", AWAITING_ACCEPTANCE),
                   request_doc["created_at"], request_doc["idempotency_key"], codes.of_request(request_doc))


def _owned_by(doc: dict, operation: Operation) -> bool:
    return doc.get("tenant_id") == operation.actor.tenant_id and doc.get("user_id") == operation.actor.user_id


def create_request(store: DocumentStore, operation: Operation, content_hash: str, *, now: datetime,
                   tz: ZoneInfo, source: str, notice_owner: str, lease_seconds: float,
                   void_owner: str | None = None, event_id: str | None = None,
                   staff_group_id: str | None = None,
                   confirmed_at: datetime | None = None,
                   code_source: codes.CodeSource = codes.candidate) -> CreateResult:
    """Create the request for one confirmed operation, exactly once.

    Args:
        operation: actor (tenant_id, user_id) and idempotency key (32 lowercase hex).
        content_hash: SHA-256 hex of the content the user confirmed (from the signed card).
        now: aware current time; the request id's Asia/Taipei date. Expiry is judged at the draft's
            recorded confirmation (``drafts.confirmation_time``), else at ``now``.
        tz: the wall-clock zone of request ids and the daily count (Asia/Taipei).
        source: "webhook" or "reconcile" (stored as ``created_by``).
        notice_owner: who tells the user if a request is created now (``reply:<event>`` or ``push``);
            for already_created, the owner that tries to claim the pending notice.
        lease_seconds: that owner's lease on the notice, in seconds.
        void_owner: an owner known not to have told the user (see ``notify.try_claim``).
        event_id: the confirming webhook event id (stored as ``created_by_event``).
        staff_group_id: ``LOCAL_STAFF_GROUP_ID``; when set, a created request also writes its staff
            group notice (``staff_notices``, docs/design.md §10) in this same transaction.
        confirmed_at: when the user tapped, if known otherwise (a reconcile task's ``tapped_at``);
            the earliest of it, the draft's recorded confirmation and ``now`` decides expiry.
        code_source: the display code's candidates (``codes.candidate``; injected in tests).
    Returns:
        CreateResult (see the module table).
    Raises:
        StoreTimeout: the outcome is unknown; reconcile by the same key.
        StoreUnavailable / TransactionConflict: nothing written; retryable with the same key
            (``codes.CodesExhausted`` is one: no free display code).
    Source: docs/design.md §4 (outcome table).
    """
    require_aware(now)
    doc_id = operation.doc_id
    actor_id = records.actor_doc_id(operation.actor)
    request_id = records.new_request_id(now, tz)
    day = records.local_day(now, tz)
    code_refs = codes.first_refs(operation.actor.tenant_id, doc_id, code_source)

    def txn(tx: Transaction) -> CreateResult:
        # One read of everything the create may need, the first display code's document with it.
        found = tx.get_all([(records.REQUESTS, doc_id), (records.OPERATIONS, doc_id), (records.DRAFTS, doc_id),
                            (records.ACTORS, actor_id), *code_refs])
        request, op_doc, draft, actor_doc = found[:4]
        codes_read = dict(zip(code_refs, found[4:]))
        if request is not None:
            if not _owned_by(request, operation):
                return CreateResult(WRONG_ACTOR)
            if request.get("content_hash") != content_hash:
                return CreateResult(IDEMPOTENCY_CONFLICT)
            decision, updated = notify.try_claim(op_doc, notice_owner, now=now, lease_seconds=lease_seconds,
                                                 void_owner=void_owner)
            if updated is not None:
                tx.set(records.OPERATIONS, doc_id, updated)
            return CreateResult(ALREADY_CREATED, receipt_of(request, ALREADY_CREATED), decision,
                                (op_doc or {}).get("created_by_event"))
        if draft is None:
            return CreateResult(UNCONFIRMED_OPERATION)
        if not _owned_by(draft, operation):
            return CreateResult(WRONG_ACTOR)
        if draft.get("content_hash") != content_hash:
            return CreateResult(IDEMPOTENCY_CONFLICT)
        if draft.get("status") == drafts.WITHDRAWN:
            return CreateResult(WITHDRAWN)  # the message was unsent: never a request
        if draft.get("status") != drafts.OPEN and draft.get("status") != drafts.SUPERSEDED:
            return CreateResult(UNCONFIRMED_OPERATION)
        if (draft.get("status") == drafts.SUPERSEDED
                or (actor_doc or {}).get("current_draft_key") != operation.idempotency_key):
            return CreateResult(SUPERSEDED)
        tapped = drafts.confirmation_time(draft, now)
        if confirmed_at is not None:
            tapped = min(tapped, require_aware(confirmed_at, "confirmed_at"))
        if tapped >= from_iso(draft["expires_at"]):
            return CreateResult(EXPIRED)  # judged at the tap, not at this (possibly later) create

        tenant_id = operation.actor.tenant_id
        code = codes.assign(tx, tenant_id, doc_id, source=code_source, read=codes_read)  # the last read
        created_at = to_iso(now)
        request_doc = {
            "tenant_id": operation.actor.tenant_id, "user_id": operation.actor.user_id,
            "idempotency_key": operation.idempotency_key, "content_hash": content_hash,
            "text": draft["text"], "request_id": request_id, "display_code": code.value, "status": "created",
            "human_state": AWAITING_ACCEPTANCE, "created_at": created_at, "created_by": source,
        }
        tx.create(records.REQUESTS, doc_id, request_doc)
        tx.create(codes.CODES, codes.code_doc_id(tenant_id, code), codes.code_doc(tenant_id, code, doc_id, created_at))
        tx.set(records.OPERATIONS, doc_id, {
            **(op_doc or {}),
            "tenant_id": operation.actor.tenant_id, "user_id": operation.actor.user_id,
            "idempotency_key": operation.idempotency_key, "content_hash": content_hash,
            "state": records.OperationState.CREATED.value, "request_id": request_id, "created_by": source,
            "created_by_event": event_id, "created_at": (op_doc or {}).get("created_at", created_at),
            "updated_at": created_at,
            **notify.notice_fields("receipt", notice_owner, now=now, lease_seconds=lease_seconds,
                                   retry_key=operation.retry_key("receipt")),
        })
        tx.set(records.DRAFTS, doc_id, {**draft, "status": drafts.CONFIRMED, "request_id": request_id,
                                        "display_code": code.value, "confirmed_at": created_at})
        count = (actor_doc or {}).get("requests_on_day", 0) if (actor_doc or {}).get("requests_day") == day else 0
        tx.set(records.ACTORS, actor_id, {**(actor_doc or {"tenant_id": operation.actor.tenant_id,
                                                            "user_id": operation.actor.user_id}),
                                          "requests_day": day, "requests_on_day": int(count) + 1,
                                          "latest_request_key": operation.idempotency_key,
                                          "updated_at": created_at})
        if staff_group_id:
            tx.set(staff_outbox.NOTICES, staff_outbox.notice_id(doc_id, staff_outbox.ANNOUNCE),
                   staff_outbox.notice_doc(tenant_id=operation.actor.tenant_id, user_id=operation.actor.user_id,
                                            operation_doc_id=doc_id, purpose=staff_outbox.ANNOUNCE, now=now,
                                            request_id=request_id, display_code=code))
        return CreateResult(REQUEST_CREATED, receipt_of(request_doc, REQUEST_CREATED), notify.NoticeClaim.CLAIMED,
                            event_id)

    return store.run_transaction(txn)
