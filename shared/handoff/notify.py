"""Telling the user, exactly once: the notification outbox of a handoff operation.

The operation document (``handoff_operations/{operation_id}``, and ``handoff_followups/…`` for
follow-up notices) carries the notice in flat fields, written in the same transaction as what it
announces:

* ``notice_kind``: "receipt", "not_created" or "needs_human_followup";
* ``notice_state``: "pending" until a reply or push succeeded, then "delivered"; or
  "reply_unknown" when a keyed push of the queued-event worker that told it ended without an
  answer (it may have reached the user, so nobody pushes it again under another key: docs/design.md §11;
  the user can still ask 查看原本服務單). A *reply* of unknown outcome is followed by one push of
  the receipt instead, restated (``reconcile_notify``);
* ``notice_owner``: who may tell the user now: ``reply:<webhookEventId>`` (the webhook answering
  that event with its reply token) or ``push`` (functions/reconcile); ``notice_claim_until``: the
  owner's lease (ISO UTC). Another party may take over only after the lease (or once the owner
  released it: its reply was refused by LINE); ``notice_taken_from``: the owner a claim was taken
  over from, so a push can first ask the inbox what became of that reply;
* ``notice_retry_key``: the push's ``X-Line-Retry-Key`` (uuid5 of the operation and kind). Every
  first telling of the notice carries it, whoever pushes, so a push whose "delivered" was lost is
  repeated as LINE's 409. Only the push that follows a "checking" answer after another tap already
  told the receipt is keyed by that event instead (``checked:<webhookEventId>``): sent once, too.

Crash windows (docs/design.md §4, transactional outbox):

* killed after the commit and before the reply: the notice stays pending and owned by that
  event's reply until its lease ends; then either LINE's redelivery of *that* event (same owner)
  or the queue's push claims it — whichever claims first tells the user; the other sees the
  claim or "delivered" and says nothing;
* a push retried after a lost answer carries the same retry key: LINE answers 409 and the user
  sees it once; the 409 counts as delivered;
* a process that dies after LINE accepted a *reply* and before "delivered" was written, or a
  reply sent without an answer: the push reads that event's inbox document first
  (``shared.inbox.take_over_answer``): replied → "delivered", no push; unknown → one push with
  the notice's retry key, worded to be read twice; refused or never started → push. The document also records what
  that reply carried (``shared.outbox.Carried``, written with ``reply_attempted``): a reply that
  carried "checking" told nothing of the receipt, so the receipt is pushed; and the check after
  "checking" pushes nothing when the checked event's own answer carried the receipt.

Claims are plain reads-then-writes inside a store transaction, so they are Firestore-shaped.
"""
from __future__ import annotations

from shared.outbox import (  # noqa: F401  (the outbox rules, shared with queued webhook answers)
    DELIVERED,
    PENDING,
    PUSH_OWNER,
    REPLY_UNKNOWN,
    Notice,
    NoticeClaim,
    NoticeState,
    OutboxRef,
    claim_notice,
    mark_delivered,
    notice_fields,
    release_claim,
    reply_event_of,
    reply_owner,
    settle_reply_unknown,
    try_claim,
)

#: Where one outbox entry lives (a handoff ``Operation``, a staff notice, a queued event): the name
#: ``shared.staff`` uses for ``shared.outbox.OutboxRef``.
NoticeAddress = OutboxRef
