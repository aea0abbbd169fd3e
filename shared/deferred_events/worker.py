"""The queued-event worker core (functions/agent): handle one queued webhook event → one answer.

The webhook hands an event to the queue when it cannot finish it inside LINE's 2-second budget
(``shared.inbox.queue_event``). Each task delivery here:

1. reads the event's inbox document; anything not ``queued`` (or already settled) → 200, nothing sent;
2. claims the answer's outbox notice (``shared.outbox``, owner ``queue``): HELD by a live attempt →
   503 (the queue comes back later); settled → 200, nothing sent;
3. gets the answer: the one the webhook (or an earlier attempt) already rendered and recorded, or
   else runs the **handler** on the event (the seam: ``EventHandler``, by default the webhook's own
   dispatch table; the model turn plugs in here);
4. records what it is about to send, how, and what it carries (``inbox.record_answer``; the
   ``shared.outbox.Carried`` of the handler's Reply, or the one recorded with the webhook's
   rendered answer), then sends it: by reply while
   the reply token is fresh and unused, else by push with the event's ``X-Line-Retry-Key``;
5. settles the notice from the LINE outcome table (``shared.line.port``): delivered → delivered;
   a reply of unknown outcome → reply_unknown (never repeated), unless its answer must reach the
   resident (``Reply.follow_up``, recorded with the reply): its follow-up is then pushed once with
   the event's retry key, also when an earlier attempt died after starting the reply; a refused
   reply → pushed instead;
   429, never started, or a push of unknown outcome → 503, and the next attempt pushes the same
   answer with the same retry key (LINE delivers it once); on the last attempt an answer still
   not delivered is settled ``failed`` (or ``reply_unknown`` when it may have reached the user).
   Every settling write also drops the raw event's content and the rendered answer
   (``shared.inbox.finished``), in that same write.

A redelivery of the event to the webhook meanwhile is acknowledged and repeats nothing, so the
event is answered once. Source: docs/design.md §3, §8, §11; Cloud Tasks docs (non-2xx is retried).
"""
from __future__ import annotations

import secrets
import time
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any, Callable

from linebot.v3.messaging import Message

from shared import inbox, outbox
from shared.clock import Clock, utc_now
from shared.config import Settings
from shared.context import EventContext, Reply, event_time_of
from shared.deferred_events.task import QueuedEventTask
from shared.handoff import faults, push_refused
from shared.identity import Actor
from shared.inbox import AnswerVia, InboxState
from shared.line import Delivery, LineGateway
from shared.line.webhook_body import read_event
from shared.logs import hash_user, log
from shared.outbox import NoticeClaim
from shared.push_count import Flow, PushCounter
from shared.store import DocumentStore, StoreError

#: The seam: handle one queued event (a line-bot-sdk ``Event``) → the Reply to send, or None.
#: It runs outside any store transaction and may take up to ``Settings.agent_budget_seconds``.
EventHandler = Callable[[EventContext, Any], "Reply | None"]


def default_handler(ctx: EventContext, event: Any) -> Reply | None:
    """The webhook's own dispatch table (fixed entries, postbacks, the offline turn)."""
    from shared.routing import dispatch_event

    return dispatch_event(ctx, event)


@dataclass(frozen=True)
class WorkerResult:
    """The answer to one task delivery: ``outcome`` (machine word) and the HTTP status for the queue."""

    outcome: str
    http_status: int
    detail: dict[str, Any] = field(default_factory=dict)

    def body(self) -> dict[str, Any]:
        """The JSON body of the HTTP answer."""
        return {"outcome": self.outcome, **self.detail}


def encode_messages(messages: list[Any]) -> list[dict]:
    """line-bot-sdk message models → JSON dicts (as LINE receives them), at most 5."""
    return [m.to_dict() for m in messages[:5]]


def encode_follow_up(messages: list[Any] | None) -> list[dict] | None:
    """A Reply's ``follow_up`` as stored (JSON dicts, ``encode_messages``), or None when it has none."""
    return encode_messages(messages) if messages else None


def decode_messages(answer: list[dict]) -> list[Any]:
    """JSON dicts → line-bot-sdk message models. Raises ValueError on a malformed answer."""
    return [Message.from_dict(item) for item in answer]


class QueuedEventWorker:
    """Answers queued webhook events exactly once. Safe to share across threads.

    Args:
        settings: tenant, ``queue_max_attempts``, ``event_lease_seconds``, ``line_timeout_seconds``,
            ``reply_token_fresh_seconds``, ``agent_budget_seconds``.
        store: the document store (inbox, and whatever the handler touches).
        line: the LINE gateway.
        handler: the ``EventHandler`` (default: the webhook's dispatch table).
        queue: the reconcile task queue, passed to handlers (handoff confirmations), or None.
        memory: the functions/memory client, passed to handlers, or None.
        clock: aware "now".
    """

    def __init__(self, settings: Settings, store: DocumentStore, line: LineGateway, *,
                 handler: EventHandler | None = None, queue=None, memory=None, clock: Clock = utc_now):
        self.settings = settings
        self.store = store
        self.line = line
        self.handler = handler or default_handler
        self.queue = queue
        self.memory = memory
        self.clock = clock

    def run(self, task: QueuedEventTask, *, retry_count: int) -> WorkerResult:
        """Answer one delivery of ``task``.

        Args:
            retry_count: ``X-CloudTasks-TaskRetryCount`` (0 on the first attempt).
        Returns:
            WorkerResult: 200 when the answer is settled (or there is nothing to do), 503 when the
            queue should try again.
        """
        last = retry_count + 1 >= self.settings.queue_max_attempts
        ref = inbox.EventRef(task.tenant_id, task.webhook_event_id)
        if task.tenant_id != self.settings.tenant_id:
            result = WorkerResult("wrong_tenant", 200)
        else:
            try:
                result = self._run(ref, last)
            except StoreError as exc:
                log("WARNING", "queued event: store unavailable", error=exc.__class__.__name__)
                result = WorkerResult("store_unavailable", 503)
        log("INFO" if result.http_status < 500 else "WARNING", "queued event answered", outcome=result.outcome,
            status=result.http_status, retry_count=retry_count, last_attempt=last,
            webhook_event_id=task.webhook_event_id, **result.detail)
        return result

    # ---- one attempt ---------------------------------------------------------------------------

    def _run(self, ref: inbox.EventRef, last: bool) -> WorkerResult:
        doc = self.store.get(inbox.COLLECTION, ref.doc_id)
        if doc is None or doc.get("state") != InboxState.QUEUED:
            return WorkerResult("not_queued", 200)
        now = self.clock()
        # One owner per attempt: a second delivery of the task (or a sweep's copy) running at the
        # same time finds the claim HELD and comes back later, so an answer is sent once.
        owner = f"{inbox.QUEUE_OWNER}:{secrets.token_hex(6)}"
        claim = outbox.claim_notice(self.store, inbox.COLLECTION, ref, owner, now=now,
                                    lease_seconds=self.settings.event_lease_seconds)
        if claim is NoticeClaim.DELIVERED:
            return WorkerResult("already_answered", 200)
        if claim is NoticeClaim.HELD:
            return WorkerResult("held", 503)
        if claim is NoticeClaim.NO_NOTICE:
            log("ERROR", "queued event has no answer notice")
            return WorkerResult("no_notice", 200)
        raw = doc.get("event") or {}
        user_id = ((raw.get("source") or {}).get("userId")) if isinstance(raw, dict) else None
        result = self._claimed(ref, doc, raw, user_id, now, last, owner)
        if result.http_status >= 500:
            # This attempt is over and nothing of it is in flight: the next one may claim at once.
            try:
                outbox.release_claim(self.store, inbox.COLLECTION, ref, owner, now=self.clock())
            except StoreError as exc:  # the lease then ends on its own
                log("WARNING", "queued answer claim not released", error=exc.__class__.__name__)
        return result

    def _claimed(self, ref: inbox.EventRef, doc: dict, raw: dict, user_id: str | None, now: datetime, last: bool,
                 owner: str) -> WorkerResult:
        reply, recorded = self._answer(ref, doc, raw, user_id, now, last, owner)
        if isinstance(reply, WorkerResult):
            return reply
        if reply is not None and reply.defer:  # deferring again would never answer
            log("ERROR", "queued event's handler deferred it again")
            from shared.routing import failure_reply

            reply = failure_reply()
        if reply is not None and not recorded and reply.carries is None:
            reply = replace(reply, carries=outbox.CARRIES_OTHER)  # the handler's answer tells no notice
        if reply is None or not reply.messages:
            # Nothing to say (e.g. a confirmation whose receipt another party tells): settled as
            # "nothing sent", so whoever asks the inbox (a receipt relay) knows this event told nothing.
            outbox.settle_failed(self.store, inbox.COLLECTION, ref, owner=owner, reason="no_answer", now=self.clock(),
                                 finish=inbox.finished)
            return WorkerResult("no_answer", 200)
        return self._send(ref, doc, raw, user_id, reply, last, owner)

    def _answer(self, ref: inbox.EventRef, doc: dict, raw: dict, user_id: str | None, now: datetime,
                last: bool, owner: str) -> tuple[Reply | WorkerResult | None, bool]:
        """The answer to send: the recorded one (True), or the handler's (False)."""
        if doc.get("answer"):
            try:
                follow_up = decode_messages(doc["follow_up"]) if doc.get("follow_up") else None
                return Reply(decode_messages(doc["answer"]), carries=outbox.Carried.of(doc), follow_up=follow_up), True
            except (ValueError, TypeError, KeyError, AttributeError):
                log("ERROR", "queued event's recorded answer is unreadable")
                outbox.settle_failed(self.store, inbox.COLLECTION, ref, owner=owner,
                                     reason="answer_unreadable", now=self.clock(), finish=inbox.finished)
                return WorkerResult("answer_unreadable", 200), True
        event = read_event(raw).event  # as the webhook reads it: newer LINE values from the raw event
        if event is None:
            log("ERROR", "queued event unreadable")
            outbox.settle_failed(self.store, inbox.COLLECTION, ref, owner=owner,
                                 reason="event_unreadable", now=self.clock(), finish=inbox.finished)
            return WorkerResult("event_unreadable", 200), False
        actor = Actor(self.settings.tenant_id, user_id) if user_id else None
        ctx = EventContext(self.settings, self.store, self.line, now, actor, ref.webhook_event_id,
                           time.monotonic() + self.settings.agent_budget_seconds,
                           queue=self.queue, memory=self.memory, event_time=event_time_of(event))
        try:
            return self.handler(ctx, event), False
        except StoreError as exc:
            if exc.retryable and not last:
                log("WARNING", "queued event failed, will be retried", error=exc.__class__.__name__)
                return WorkerResult("handler_store_unavailable", 503), False
            log("ERROR", "queued event failed", error=exc.__class__.__name__)
        except Exception as exc:  # noqa: BLE001 - the resident still gets an honest answer
            log("ERROR", "queued event failed", error=exc.__class__.__name__, exc_info=True)
        from shared.routing import failure_reply

        return failure_reply(), False

    def _reply_allowed(self, doc: dict, raw: dict) -> bool:
        """A reply token still unused, and young enough (``reply_token_fresh_seconds``): a reply is free,
        a push is counted against the month's quota (docs/delivery.md#push-quota).

        Unused: never tried, or tried and definitely not delivered without being used (LINE answered
        429, which it does not process, or no connection was made: the webhook's ``queued_reason``, or
        an earlier attempt's ``answer_via`` ``reply_not_delivered``), and no push of the answer tried
        since (a push may have reached the user: then only a push with its retry key follows).
        """
        token = raw.get("replyToken") if isinstance(raw, dict) else None
        if not token or not _token_unused(doc):
            return False
        timestamp_ms = raw.get("timestamp")
        if not isinstance(timestamp_ms, (int, float)):
            return False
        age_seconds = self.clock().timestamp() - timestamp_ms / 1000.0
        return age_seconds <= self.settings.reply_token_fresh_seconds

    def _send(self, ref: inbox.EventRef, doc: dict, raw: dict, user_id: str | None, reply: Reply,
              last: bool, owner: str) -> WorkerResult:
        fields = {"user": hash_user(user_id), "queued_reason": doc.get("queued_reason")}
        if doc.get("answer_via") == AnswerVia.REPLY:
            # An earlier attempt started a reply and never learned its outcome: it may have reached
            # the user, so it is never repeated (docs/design.md §3); the follow-up it recorded, if any, is
            # pushed instead (``Reply.follow_up``).
            if not reply.follow_up:
                outbox.settle_reply_unknown(self.store, inbox.COLLECTION, ref, owner=owner,
                                            now=self.clock(), finish=inbox.finished)
                return WorkerResult("reply_unknown", 200, fields)
            reply = Reply(reply.follow_up, carries=reply.carries)
        elif self._reply_allowed(doc, raw):
            replied = self._reply(ref, raw, reply, last, owner, fields)
            if isinstance(replied, WorkerResult):
                return replied
            reply = replied
        return self._push(ref, doc, user_id, reply, last, owner, fields)

    def _reply(self, ref: inbox.EventRef, raw: dict, reply: Reply, last: bool, owner: str,
               fields: dict) -> WorkerResult | Reply:
        """Reply with the event's token: the WorkerResult when that settles this attempt, else the
        Reply to push now (refused, or the last attempt; or the follow-up of a reply of unknown outcome)."""
        answer = encode_messages(reply.messages)
        follow_up = encode_follow_up(reply.follow_up)
        if not inbox.record_answer(self.store, ref, answer=answer, via=AnswerVia.REPLY, owner=owner,
                                   now=self.clock(), carries=reply.carries, follow_up=follow_up):
            return WorkerResult("lease_lost", 503)
        faults.before_reply(self.settings, owed=reply.must_reach)
        delivery = _logged(outbox.send_reply(self.line, raw["replyToken"], reply.messages,
                                             timeout_seconds=self.settings.line_timeout_seconds))
        if delivery is Delivery.DELIVERED:
            return self._delivered(ref, reply, "replied", fields, owner)
        if delivery is Delivery.UNKNOWN:
            if reply.follow_up:  # it must reach the resident: its follow-up is pushed once, now
                return Reply(reply.follow_up, carries=reply.carries)
            outbox.settle_reply_unknown(self.store, inbox.COLLECTION, ref, owner=owner,
                                        now=self.clock(), finish=inbox.finished)
            return WorkerResult("reply_unknown", 200, fields)
        if not inbox.record_answer(self.store, ref, answer=answer, via=AnswerVia.REPLY_NOT_DELIVERED,
                                   owner=owner, now=self.clock(), carries=reply.carries):
            return WorkerResult("lease_lost", 503)
        if delivery is not Delivery.REFUSED and not last:
            # the token is unused: the next attempt replies while it is fresh, else pushes
            return WorkerResult(f"reply_{delivery.value}", 503, fields)
        return reply  # refused (e.g. the token expired), or the last attempt: definitely not delivered

    def _push(self, ref: inbox.EventRef, doc: dict, user_id: str | None, reply: Reply, last: bool, owner: str,
              fields: dict) -> WorkerResult:
        """Push the answer with the event's retry key (``inbox.answer_retry_key``) and settle it."""
        if not user_id:
            outbox.settle_failed(self.store, inbox.COLLECTION, ref, owner=owner,
                                 reason="no_user_to_push", now=self.clock(), finish=inbox.finished)
            return WorkerResult("no_user_to_push", 200, fields)
        if not inbox.record_answer(self.store, ref, answer=encode_messages(reply.messages), via=AnswerVia.PUSH,
                                   owner=owner, now=self.clock(), carries=reply.carries):
            return WorkerResult("lease_lost", 503)
        retry_key = doc.get("notice_retry_key") or inbox.answer_retry_key(ref.tenant_id, ref.webhook_event_id)
        sent = outbox.send_push(self.line, user_id, reply.messages, retry_key=retry_key,
                                timeout_seconds=self.settings.line_timeout_seconds,
                                counter=PushCounter(self.store, ref.tenant_id, self.clock), flow=Flow.EVENT_ANSWER)
        delivery = _logged(sent)
        if delivery is Delivery.DELIVERED:
            return self._delivered(ref, reply, "pushed", fields, owner)
        if sent.monthly_limit:  # never retried: a person tells the resident (the staff follow-up list)
            push_refused.record(self.store, ref.tenant_id, user_id, notice=outbox.notice_ref(inbox.COLLECTION, ref.doc_id),
                                flow=Flow.EVENT_ANSWER, messages=reply.messages, now=self.clock())
            outbox.settle_failed(self.store, inbox.COLLECTION, ref, owner=owner,
                                 reason=push_refused.REASON, now=self.clock(), finish=inbox.finished)
            self._after(reply.on_reply_failed, "answer-refused step")
            return WorkerResult("push_refused_monthly_limit", 200, fields)
        if delivery is Delivery.REFUSED:
            outbox.settle_failed(self.store, inbox.COLLECTION, ref, owner=owner,
                                 reason="push_refused", now=self.clock(), finish=inbox.finished)
            self._after(reply.on_reply_failed, "answer-refused step")
            return WorkerResult("push_refused", 200, fields)
        if not last:
            return WorkerResult(f"push_{delivery.value}", 503, fields)  # same answer, same retry key
        if delivery is Delivery.UNKNOWN:
            outbox.settle_reply_unknown(self.store, inbox.COLLECTION, ref, owner=owner,
                                        now=self.clock(), finish=inbox.finished)
            return WorkerResult("push_unknown", 200, fields)
        log("ERROR", "queued answer never delivered", delivery=delivery.value, **fields)
        outbox.settle_failed(self.store, inbox.COLLECTION, ref, owner=owner,
                             reason=f"push_{delivery.value}", now=self.clock(), finish=inbox.finished)
        return WorkerResult(f"push_{delivery.value}", 200, fields)

    def _delivered(self, ref: inbox.EventRef, reply: Reply, outcome: str, fields: dict, owner: str) -> WorkerResult:
        outbox.record_delivered(self.store, inbox.COLLECTION, ref, owner, now=self.clock(), finish=inbox.finished)
        self._after(reply.after_reply, "after-answer step")
        return WorkerResult(outcome, 200, fields)

    @staticmethod
    def _after(step: Callable[[], None] | None, what: str) -> None:
        if step is None:
            return
        try:
            step()
        except Exception as exc:  # noqa: BLE001 - the outbox's own lease and relay cover it
            log("WARNING", f"{what} failed", error=exc.__class__.__name__)


#: Why the webhook queued an answer whose reply was definitely not delivered, the token unused.
_TOKEN_UNUSED_REASONS = (inbox.QueuedReason.REPLY_NOT_DELIVERED.value, inbox.QueuedReason.REPLY_NEVER_STARTED.value)


def _token_unused(doc: dict) -> bool:
    """True when the event's reply token was never used (``QueuedEventWorker._reply_allowed``)."""
    via = doc.get("answer_via")
    if via is None:
        return not doc.get("reply_attempted") or doc.get("queued_reason") in _TOKEN_UNUSED_REASONS
    return via == AnswerVia.REPLY_NOT_DELIVERED.value


def _logged(sent: outbox.Sent) -> Delivery:
    """``sent.delivery``, logged when it is not DELIVERED."""
    if sent.error is not None:
        log("WARNING", "queued answer not delivered", error=sent.error.__class__.__name__, status=sent.status,
            delivery=sent.delivery.value, monthly_limit=sent.monthly_limit)
    return sent.delivery
