"""``make user-data LINE_USER_ID=<id>``: what LOCAL stores about one user, as one JSON document.

Reads ``LOCAL_STORE_URL`` and ``LOCAL_TENANT_ID`` (the environment wins over the Makefile's
defaults) through the store port, read-only, and prints on stdout exactly one JSON document::

    {"tenant_id": "...", "user_id": "U...",
     "preference": {"revision": 3, "dietary_type": "...", "consented_at": "..."} | {"revision": 4} | null,
     "handoff_requests": [{"request_id", "display_code" (as stored, A7K3QF), "shown_code" (as residents and
                           staff read it, A7K-3QF; only beside a stored code), "idempotency_key", "status", "human_state", "created_at", "text",
                           "staff_history": [{at, action, staff (hashed), from, to, revision}], …}],
     "drafts": [{"idempotency_key", "status", "created_at", "expires_at", "text"}],
     "handoff_operations": [...], "handoff_followups": [...], "declined_consent_cards": [...],
     "staff_notices": [... with "shown_code" too], "staff_audit": [{request_id, action, staff (hashed), from, to, at}],
     "turn_audit": [{"at", "tool", "origin", "status", "revision", "effective_args"}],
     "handoff_actors": [{"current_draft_key", "requests_day", "requests_on_day", "updated_at"}],
     "conversations": [{"shared_chat", "last_ask", "items" | "location", "updated_at", "expire_at"}],
     "webhook_inbox": [{"webhook_event_id", "event_type", "message_id", "state", "outcome", "notice_state",
                        "received_at", "queued_at", "done_at", "expire_at", "content_removed",
                        "text" / "postback_data" / "answer_held" (only while they are still held)}],
     "log_user_hash": "<16 hex>" | null}

``webhook_inbox`` is every event of this user LOCAL still remembers (``shared.inbox``: about 7
days, to deduplicate LINE's deliveries). Its message text (or postback data) and a rendered
answer not sent yet are held only until the event is answered (``content_removed`` then true);
``text`` / ``postback_data`` are printed, and ``answer_held`` is true, while they are held. A document
written before ``user_id`` was stored on it is found by its raw event's ``source.userId``, so
this reads the tenant's whole inbox.

``conversations`` is the short conversation state (``shared.conversation_store``): per chat the user
wrote in (one-to-one, or a group or room: ``shared_chat``), the last search and the items its answer
listed, kept 30 minutes from the last turn, and the last location shared there (``location``, degrees
rounded to 4 places), kept 30 minutes from when it was shared; found by the keyed hash, so empty without
``LOCAL_SIGNING_KEY``. An expired state the TTL has not deleted yet is listed too.

``log_user_hash`` is this user's keyed hash (``shared.keys.UserHasher``, keyed from
``LOCAL_SIGNING_KEY``): the ``user`` field of their log lines and the ``user_hash`` of their turn
audit; ``turn_audit`` lists the records under every hash they may carry (a rotated key's too). Without ``LOCAL_SIGNING_KEY`` it cannot be computed: it is null, ``turn_audit`` is empty,
and a log line on stderr says why.

Only fields present in the store are printed (nothing is invented); lists are sorted by
``created_at``; only documents whose ``tenant_id`` and ``user_id`` both match are included. A
SQLite store file that does not exist yet reads as empty and is not created. Logs go to stderr.

Exit status: 0 printed; 2 missing or malformed LINE_USER_ID or configuration; 1 store unreadable.
Source: docs/design.md §2 (actor = tenant + user), §6 (preferences), §9 (operator commands).
"""
from __future__ import annotations

import argparse
import json
import os
import re
import sys
from datetime import datetime
from typing import Any, Mapping, Sequence, TextIO

from shared import conversation_store, inbox, logs
from shared.clock import to_iso
from shared.config import ConfigError, Settings
from shared.handoff import codes
from shared.logs import hash_user, log
from shared.store import DocumentStore, StoreError
from shared.wiring import user_hasher

USER_ID_RE = re.compile(r"^U[0-9a-f]{32}$")
PREFERENCE_FIELDS = ("revision", "dietary_type", "consented_at")
REQUEST_FIELDS = ("request_id", "display_code", "idempotency_key", "status", "human_state", "created_at", "text",
                  "staff_history", "accepted_by", "closed_by")
DRAFT_FIELDS = ("idempotency_key", "status", "created_at", "expires_at", "text")
OPERATION_FIELDS = ("idempotency_key", "state", "request_id", "notice_kind", "notice_state", "created_at")
FOLLOWUP_FIELDS = ("idempotency_key", "status", "reason", "created_at")
CARD_FIELDS = ("status", "declined_at", "expire_at")
AUDIT_FIELDS = ("at", "tool", "origin", "status", "revision", "effective_args")
STAFF_NOTICE_FIELDS = ("request_id", "display_code", "purpose", "audience", "notice_state", "created_at")
STAFF_AUDIT_FIELDS = ("request_id", "action", "staff", "from", "to", "at", "created_at")
ACTOR_FIELDS = ("current_draft_key", "requests_day", "requests_on_day", "updated_at")
CONVERSATION_FIELDS = ("shared_chat", "last_ask", "items", "location", "updated_at", "expire_at")
INBOX_FIELDS = ("webhook_event_id", "state", "outcome", "notice_state", "received_at", "queued_at", "done_at",
                "expire_at", "content_removed")


def _pick(doc: Mapping[str, Any], fields: tuple[str, ...]) -> dict[str, Any]:
    # Instants (``expire_at``, a Timestamp in the store) are shown as ISO-8601 UTC text.
    return {name: to_iso(doc[name]) if isinstance(doc[name], datetime) else doc[name]
            for name in fields if name in doc}


def _with_shown_code(row: dict[str, Any]) -> dict[str, Any]:
    """``row`` with ``shown_code`` (``A7K-3QF``, ``shared.handoff.codes.DisplayCode.grouped``: the form
    residents and staff read) beside a stored ``display_code``; unchanged without one."""
    code = codes.of_request(row)
    return {**row, "shown_code": code.grouped} if code is not None else row


def _owned(doc: Mapping[str, Any], tenant_id: str, user_id: str) -> bool:
    return doc.get("tenant_id") == tenant_id and doc.get("user_id") == user_id


def _listed(store: DocumentStore, collection: str, tenant_id: str, user_id: str,
            fields: tuple[str, ...]) -> list[dict[str, Any]]:
    docs = store.query(collection, where={"tenant_id": tenant_id, "user_id": user_id})
    rows = [_pick(doc, fields) for doc in docs if _owned(doc, tenant_id, user_id)]
    return sorted(rows, key=lambda row: str(row.get("created_at") or ""))


def _inbox_entry(doc: Mapping[str, Any]) -> dict[str, Any]:
    row = _pick(doc, INBOX_FIELDS)
    event = doc.get("event") if isinstance(doc.get("event"), dict) else {}
    message = event.get("message") if isinstance(event.get("message"), dict) else {}
    row.update({name: value for name, value in (("event_type", event.get("type")), ("message_id", message.get("id")),
                                                ("text", message.get("text"))) if value is not None})
    postback = event.get("postback") if isinstance(event.get("postback"), dict) else {}
    if postback.get("data") is not None:
        row["postback_data"] = postback["data"]
    if doc.get("answer"):
        row["answer_held"] = True
    return row


def _inbox(store: DocumentStore, tenant_id: str, user_id: str) -> list[dict[str, Any]]:
    docs = store.query(inbox.COLLECTION, where={"tenant_id": tenant_id})
    rows = [_inbox_entry(doc) for doc in docs if doc.get("tenant_id") == tenant_id
            and (doc.get("user_id") == user_id or inbox.user_of(doc.get("event")) == user_id)]
    return sorted(rows, key=lambda row: str(row.get("received_at") or row.get("queued_at") or ""))


def collect(store: DocumentStore, tenant_id: str, user_id: str, user_hashes: Sequence[str] = ()) -> dict[str, Any]:
    """Everything printed for one actor.

    Args:
        store: a read-only document store.
        tenant_id: the configured tenant (one LINE channel).
        user_id: LINE user id, "U" + 32 lowercase hex.
        user_hashes: the hashes its turn records may carry (``UserHasher.all_hashes``); none, none listed.
    Returns:
        the document described in the module docstring.
    Raises:
        StoreUnavailable: the store could not be read.
    """
    preference_doc = store.get("preferences", f"{tenant_id}:{user_id}")
    preference = None
    if preference_doc is not None and _owned(preference_doc, tenant_id, user_id):
        preference = _pick(preference_doc, PREFERENCE_FIELDS)
    return {
        "tenant_id": tenant_id,
        "user_id": user_id,
        "preference": preference,
        "handoff_requests": [_with_shown_code(row) for row in
                             _listed(store, "handoff_requests", tenant_id, user_id, REQUEST_FIELDS)],
        "drafts": _listed(store, "handoff_drafts", tenant_id, user_id, DRAFT_FIELDS),
        # The rest of what LOCAL keeps about this account, so nothing stored goes unshown.
        "handoff_operations": _listed(store, "handoff_operations", tenant_id, user_id, OPERATION_FIELDS),
        "handoff_followups": _listed(store, "handoff_followups", tenant_id, user_id, FOLLOWUP_FIELDS),
        "declined_consent_cards": _listed(store, "memory_cards", tenant_id, user_id, CARD_FIELDS),
        # The staff side (docs/design.md §10): who was told what about the requests, and each staff action
        # (staff members appear only as keyed hashes).
        "staff_notices": [_with_shown_code(row) for row in
                          _listed(store, "staff_notices", tenant_id, user_id, STAFF_NOTICE_FIELDS)],
        "staff_audit": _listed(store, "staff_audit", tenant_id, user_id, STAFF_AUDIT_FIELDS),
        "turn_audit": sorted((_pick(doc, AUDIT_FIELDS) for user_hash in user_hashes for doc in store.query(
            "turn_audit", where={"tenant_id": tenant_id, "user_hash": user_hash})),
            key=lambda row: str(row.get("at") or "")),
        # The per-account counters of the handoff flow (daily cap, the current draft) and every
        # webhook event still remembered, with its text while it is held.
        "handoff_actors": _listed(store, "handoff_actors", tenant_id, user_id, ACTOR_FIELDS),
        "webhook_inbox": _inbox(store, tenant_id, user_id),
        "conversations": sorted((_pick(doc, CONVERSATION_FIELDS) for _, doc in conversation_store.of_user(
            store, tenant_id, user_hashes)), key=lambda row: str(row.get("updated_at") or "")),
    }


def _empty(tenant_id: str, user_id: str) -> dict[str, Any]:
    return {"tenant_id": tenant_id, "user_id": user_id, "preference": None, "handoff_requests": [], "drafts": [],
            "handoff_operations": [], "handoff_followups": [], "declined_consent_cards": [], "staff_notices": [],
            "staff_audit": [], "turn_audit": [], "handoff_actors": [], "webhook_inbox": [], "conversations": []}


def main(argv: list[str] | None = None, environ: Mapping[str, str] | None = None,
         stdout: TextIO | None = None, stderr: TextIO | None = None) -> int:
    """Print one user's stored data as JSON on stdout. Returns the exit status (0, 1 or 2)."""
    env = os.environ if environ is None else environ
    out, err = stdout or sys.stdout, stderr or sys.stderr
    parser = argparse.ArgumentParser(prog="make user-data", description=__doc__.split("\n\n")[0])
    parser.add_argument("--user-id", help="LINE user id (default: $LINE_USER_ID)")
    args = parser.parse_args(argv)

    user_id = (args.user_id or env.get("LINE_USER_ID") or "").strip()
    if not user_id:
        print("user-data: LINE_USER_ID is required, e.g. make user-data LINE_USER_ID=U0123…(32 hex)", file=err)
        return 2
    if not USER_ID_RE.match(user_id):
        print("user-data: LINE_USER_ID must be a LINE user id: U followed by 32 lowercase hex digits", file=err)
        return 2
    from tools.devserver import DEV_SECRETS

    if not env.get("LOCAL_SIGNING_KEY") and env.get("LOCAL_TENANT_ID") == DEV_SECRETS["LOCAL_TENANT_ID"]:
        # make run's development tenant (no deployment uses it): its functions run with make run's
        # development key, so the log hash an operator greps for is computed with that same key.
        env = {**env, "LOCAL_SIGNING_KEY": DEV_SECRETS["LOCAL_SIGNING_KEY"]}
        log("INFO", "user data: LOCAL_SIGNING_KEY unset on make run's development tenant: using make run's "
            "development key")
    try:
        settings = Settings.from_env(env, required=("LOCAL_STORE_URL",))
    except ConfigError as exc:
        print(f"user-data: {exc}", file=err)
        return 2

    hasher = user_hasher(settings)
    logs.use_user_hasher(hasher)
    if not settings.signing_key:
        log("WARNING", "user data: LOCAL_SIGNING_KEY is not set, so the keyed user hash (log lines, "
            "turn audit) cannot be computed: log_user_hash is null and turn_audit is empty")
    from shared.store.sqlite import file_missing

    if file_missing(settings.store_url):
        log("INFO", "user data: store file does not exist yet; nothing is stored", user=hash_user(user_id))
        result = _empty(settings.tenant_id, user_id)
    else:
        from shared.wiring import open_store

        try:
            store = open_store(settings, read_only=True)
        except ValueError as exc:
            print(f"user-data: {exc}", file=err)
            return 2
        try:
            result = collect(store, settings.tenant_id, user_id, hasher.all_hashes(user_id) if hasher else ())
        except StoreError as exc:
            print(f"user-data: cannot read the store: {exc}", file=err)
            return 1
    result["log_user_hash"] = hasher(user_id) if hasher else None
    log("INFO", "user data exported", user=hash_user(user_id), tenant=settings.tenant_id,
        preference=result["preference"] is not None, handoff_requests=len(result["handoff_requests"]),
        drafts=len(result["drafts"]), inbox_entries=len(result["webhook_inbox"]))
    out.write(json.dumps(result, ensure_ascii=False, indent=2) + "\n")
    out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
