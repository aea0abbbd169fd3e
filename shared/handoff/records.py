"""Where handoff data lives: collection names, document ids and the identifiers of one operation.

One operation = one draft = one idempotency key. Its draft, its request and its operation record
share one document id derived from ``(tenant_id, user_id, idempotency_key)``, so uniqueness of the
request *is* the document id (Firestore ``create`` / SQLite primary key), whatever the number of
taps, redeliveries or reconcile attempts.

Collections (every document carries ``tenant_id`` and ``user_id``):

* ``handoff_drafts/{operation_id}``: the text the user is asked to confirm, its content hash,
  ``status`` (open | confirmed | cancelled | superseded), ``expires_at``.
* ``handoff_requests/{operation_id}``: the request for the staff (one per confirmed operation).
* ``handoff_operations/{operation_id}``: the operation's state and its notification outbox
  (``notice_*`` fields), written in the same transaction as the request.
* ``handoff_followups/{operation_id}``: operations whose outcome could not be verified
  automatically (``needs_human_followup``), for a person to check.
* ``handoff_actors/{actor_id}``: per user, the current draft (a newer draft supersedes older
  cards) and the number of requests on the current Asia/Taipei day (the daily cap).

Source: docs/design.md §4 (keyed by tenant_id + user_id + idempotency_key).
"""
from __future__ import annotations

import enum
import hashlib
import json
import secrets
import uuid
from dataclasses import dataclass
from datetime import datetime
from functools import cached_property
from zoneinfo import ZoneInfo

from shared.clock import require_aware
from shared.identity import Actor

DRAFTS = "handoff_drafts"
REQUESTS = "handoff_requests"
OPERATIONS = "handoff_operations"
FOLLOWUPS = "handoff_followups"
ACTORS = "handoff_actors"


class OperationState(enum.StrEnum):
    """``handoff_operations/{operation_id}``'s ``state`` (stored as the plain value)."""

    PENDING_VERIFICATION = "pending_verification"  # the create's outcome is unknown: reconcile checks it
    CREATED = "created"                            # the request exists
    NOT_CREATED = "not_created"                    # settled without a request (``reason`` says why)

#: Namespace of every X-Line-Retry-Key LOCAL derives for handoff pushes (uuid5).
RETRY_KEY_NAMESPACE = uuid.UUID("5f0c1d2e-8b7a-5c3d-9e4f-0a1b2c3d4e5f")

_KEY_HEX_CHARS = 32


def _digest(*parts: str) -> str:
    """SHA-256 hex of a JSON array of the parts: unambiguous whatever characters they hold."""
    return hashlib.sha256(json.dumps(list(parts), ensure_ascii=False).encode("utf-8")).hexdigest()


def new_idempotency_key() -> str:
    """A fresh operation key: 128 random bits from ``secrets``, as 32 lowercase hex."""
    return secrets.token_hex(_KEY_HEX_CHARS // 2)


def is_idempotency_key(value: object) -> bool:
    """True for 32 lowercase hex characters (the shape ``new_idempotency_key`` makes)."""
    return (isinstance(value, str) and len(value) == _KEY_HEX_CHARS
            and all(c in "0123456789abcdef" for c in value))


@dataclass(frozen=True)
class Operation:
    """One handoff operation: who (actor) and which confirmation (idempotency key).

    Args:
        actor: (tenant_id, user_id) from the verified webhook event.
        idempotency_key: 32 lowercase hex, allocated when the draft was made.
    """

    actor: Actor
    idempotency_key: str

    @cached_property
    def doc_id(self) -> str:
        """64 lowercase hex: the id of the draft, request and operation documents (computed once)."""
        return _digest("handoff-operation", self.actor.tenant_id, self.actor.user_id, self.idempotency_key)

    def retry_key(self, purpose: str = "receipt") -> str:
        """The ``X-Line-Retry-Key`` for one push about this operation (a UUID string).

        Deterministic (uuid5 over tenant/user/key/purpose), so every retry of the same push —
        from any process, after any restart — carries the same key and LINE delivers it once.

        Args:
            purpose: "receipt" (the operation's one receipt notice), ``checked:<webhookEventId>``
                (the result after that event's "checking" answer), "not_created" or
                "needs_human_followup".
        """
        name = "/".join((self.actor.tenant_id, self.actor.user_id, self.idempotency_key, purpose))
        return str(uuid.uuid5(RETRY_KEY_NAMESPACE, name))


def actor_doc_id(actor: Actor) -> str:
    """64 lowercase hex: the id of the actor's ``handoff_actors`` document."""
    return _digest("handoff-actor", actor.tenant_id, actor.user_id)


def content_hash(text: str) -> str:
    """SHA-256 (64 lowercase hex) of the canonical JSON of the request content.

    Canonical JSON: sorted keys, no spaces, UTF-8, non-ASCII unescaped. The hash binds the consent
    (the card) to the exact text; it compares content, it is not a credential.
    Source: docs/design.md §4 (content hash).
    """
    canonical = json.dumps({"kind": "handoff_request", "text": text, "v": 1},
                           ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def new_request_id(now: datetime, tz: ZoneInfo) -> str:
    """``req-YYYYMMDD-<16 lowercase hex>``; the date is ``now`` on the wall clock of ``tz``.

    Raises:
        ValueError: ``now`` is naive.
    Source: docs/design.md §4 (receipt).
    """
    day = require_aware(now).astimezone(tz).strftime("%Y%m%d")
    return f"req-{day}-{secrets.token_hex(8)}"


def local_day(now: datetime, tz: ZoneInfo) -> str:
    """``YYYY-MM-DD`` of ``now`` on the wall clock of ``tz`` (Asia/Taipei): the daily cap's day."""
    return require_aware(now).astimezone(tz).date().isoformat()
