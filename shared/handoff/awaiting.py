"""The prompt to leave a request was just shown (留下服務詢問, 我要找里長): the sender's next plain message may be
the request's text, so it need not start with 「新需求：」 (docs/handoff.md, the steps).

A mark per (chat, sender) in the conversation collection (``shared.conversation_store.doc_id``, ``DocKind.AWAITING``), kept
``AWAITING_WINDOW`` (10 minutes) from the prompt, with no message text. Which message is the text and which
is another ask is decided by the caller (``shared.turn.request_text``). Best-effort like the conversation
state: a store error is logged and the resident is shown the 「新需求：」 form instead.
"""
from __future__ import annotations

from datetime import datetime

from shared import conversation_store as schema
from shared.clock import from_iso, require_aware
from shared.context import EventContext
from shared.logs import log
from shared.store import TTL_FIELD, StoreError


def _doc_id(ctx: EventContext) -> str | None:
    return schema.doc_id(schema.DocKind.AWAITING, ctx)


def start(ctx: EventContext) -> bool:
    """Mark that this (chat, sender)'s next plain message may be a request's text, from ``ctx.now``.

    Returns:
        True when the mark was stored (the prompt may then say "just type it"); False without an actor or
        ``LOCAL_SIGNING_KEY``, or when the store refused (logged).
    """
    doc_id = _doc_id(ctx)
    user_hash = ctx.user_hash
    if doc_id is None or user_hash is None:
        return False
    doc = schema.awaiting_document(doc_id=doc_id, tenant_id=ctx.settings.tenant_id, user_hash=user_hash,
                                   shared_chat=ctx.shared_chat, asked_at=require_aware(ctx.now, "now"))
    try:
        schema.write(ctx.store, doc_id, doc)
    except StoreError as exc:
        log("WARNING", "awaited request text not marked", error=exc.__class__.__name__)
        return False
    return True


def _live(doc: dict, now: datetime) -> bool:
    expires = doc.get(TTL_FIELD)
    if isinstance(expires, str):
        expires = from_iso(expires)
    return doc.get("awaiting") == schema.AWAITING_REQUEST_TEXT and isinstance(expires, datetime) and now < expires


def is_awaited(ctx: EventContext) -> bool:
    """True when this (chat, sender) was shown the prompt less than ``AWAITING_WINDOW`` ago (by ``ctx.now``)
    and has not answered it yet. A store error or an unreadable mark reads as False (logged)."""
    doc_id = _doc_id(ctx)
    if doc_id is None:
        return False
    try:
        doc = schema.read(ctx.store, doc_id)
        return doc is not None and _live(doc, require_aware(ctx.now))
    except StoreError as exc:
        log("WARNING", "awaited request text unavailable", error=exc.__class__.__name__)
    except (ValueError, TypeError) as exc:
        log("WARNING", "awaited request text unreadable", error=exc.__class__.__name__)
    return False


def end(ctx: EventContext) -> None:
    """Remove the mark (answered, or another ask came instead). Best-effort; nothing when there is none."""
    schema.delete_quietly(ctx.store, _doc_id(ctx), "awaited request text")
