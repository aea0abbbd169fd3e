"""The webhook use case: verify the signature, claim each event, dispatch it, reply.

Every call answers within LINE's 2-second budget (docs/design.md §3): store calls and the reply carry
deadlines that fit inside ``Settings.webhook_budget_seconds``. Events are handled one by one;
a failing event does not stop the others.
"""
from __future__ import annotations

import enum
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass

from shared import inbox, outbox
from shared.clock import Clock, utc_now
from shared.config import ReaderOrder, Settings
from shared.context import EventContext, Reply, event_time_of
from shared.deferred_events.task import QueuedEventTask, enqueue_all
from shared.deferred_events.task import enqueue as enqueue_event
from shared.deferred_events.worker import encode_follow_up, encode_messages
from shared.handoff import faults
from shared.identity import Actor
from shared.inbox import EventClaim, EventOutcome, QueuedReason, QueueResult
from shared.line import Delivery, LineGateway, webhook_body
from shared.line.ids import is_user_id
from shared.logs import hash_user, log
from shared.routing import dispatch_event, failure_reply, needs_claim, side_effect_free_reply
from shared.store import DocumentStore, StoreError
from shared.turn.engine import router_first_turn

#: Keep this much of the budget for answering LINE after the last outbound call (seconds).
_ANSWER_MARGIN_SECONDS = 0.15
#: The shortest timeout a recorded reply is sent with (seconds); LINE usually answers in far less.
_MIN_REPLY_SECONDS = 0.3
#: An event is handled inline only while at least this much budget is left beyond what queueing the
#: remaining events needs (seconds): enough for a fixed entry's store calls and a reply. The rest of
#: the body goes to the queue (docs/design.md §11: no resident depends on LINE's redelivery).
_INLINE_MIN_SECONDS = 0.6


class EventStatus(enum.StrEnum):
    """What became of one event of a delivery (the answer body's ``events`` list, in order)."""

    REFUSED = "refused"        # its ids are not in LINE's format: nothing stored, claimed or replied
    UNREADABLE = "unreadable"  # not in LINE's event format
    IGNORED = "ignored"        # nothing to do (standby mode, or a kind LOCAL does not answer)
    DEFERRED = "deferred"      # set aside to be queued with the rest of the body (never final)
    RETRY = "retry"            # not finished: the answer is 503 and LINE delivers it again
    DUPLICATE = "duplicate"    # finished or queued before: nothing repeated
    DONE = "done"              # finished here (replied, nothing to say, or a reply that failed)
    QUEUED = "queued"          # handed to the queued-event worker, which answers it once

    @classmethod
    def of(cls, result: QueueResult) -> "EventStatus":
        """The status of an event whose hand-over to the queue ended in ``result`` (same words)."""
        return cls(result.value)


@dataclass(frozen=True)
class WebhookResult:
    """HTTP answer for LINE: ``status`` (200, 400 or 503) and a small JSON ``body``."""

    status: int
    body: dict


class WebhookService:
    """Handles one webhook request body at a time; safe to share across threads.

    Args:
        settings: needs ``line_channel_secret`` and the deadlines.
        store: the document store (inbox, drafts, requests, preferences).
        line: the LINE gateway used for replies.
        clock: returns an aware "now"; injected by tests.
        queue: the task queue port (handoff reconcile), or None.
        memory: the client of functions/memory, or None.
        event_queue: the task queue of queued events (functions/agent), or None: then what cannot be
            finished in time is answered 503 (LINE redelivers, if the operator enabled it).
        local_events: without an ``event_queue`` (a webhook-only deployment), where an answer still
            owed by push goes: a reply LINE answered 429 or never received, or the follow-up of a
            reply of unknown outcome (``Reply.follow_up``). ``shared.deferred_events.local.LocalEventQueue``
            runs the queued-event worker on it at once, in this process; the sweep retries what is
            still pending. None: such an answer is not sent again.
        dispatch: ``(EventContext, Event) -> Reply | None``; the routing table by default. A Reply
            with ``defer=True`` hands the event to the queued-event worker.
        monotonic: seconds on a monotonic clock; a delivery's 2-second budget starts at its
            value when the delivery arrives (tests inject one that says part of it is spent).
        early_reply: ``(EventContext, Event) -> Reply | None``: the reply of an event whose routing
            has no side effects, computed before the claim, so that the claim also records the
            reply as started (one store transaction fewer); None for any other event. By default
            ``routing.side_effect_free_reply`` with the default routing table, and none with
            another ``dispatch``.
    """

    def __init__(self, settings: Settings, store: DocumentStore, line: LineGateway,
                 clock: Clock = utc_now, queue=None, memory=None, event_queue=None, dispatch=dispatch_event,
                 monotonic: Callable[[], float] = time.monotonic, early_reply=None, local_events=None):
        self.dispatch = dispatch
        self.early_reply = early_reply or (side_effect_free_reply if dispatch is dispatch_event else None)
        self.settings = settings
        self.queue = queue
        self.event_queue = event_queue
        self.local_events = local_events
        self.memory = memory
        self.store = store
        self.line = line
        self.clock = clock
        self._monotonic = monotonic

    def handle(self, body: str | bytes, signature: str | None) -> WebhookResult:
        """Verify and process one delivery.

        Args:
            body: the raw body as received (never re-serialised): bytes, or text decoded as UTF-8.
            signature: the ``X-Line-Signature`` header.
        Returns:
            200 when every event is finished (or was finished before); 400 for a missing or
            wrong signature or a malformed body (nothing processed); 503 when some event must be
            delivered again (its lease is held elsewhere, or the store was unavailable).
        """
        started = self._monotonic()
        deadline = started + self.settings.webhook_budget_seconds
        try:
            read = webhook_body.read_delivery(self.settings.line_channel_secret or "", body, signature)
        except webhook_body.DeliveryRejected as exc:
            log("WARNING", "webhook rejected", reason=exc.reason)
            return WebhookResult(exc.status, {"error": str(exc)})
        outcomes: list[EventStatus] = [EventStatus.REFUSED] * len(read)
        for item in read:
            if item.refusal is not None:
                # Not LINE's ids: nothing is stored, claimed or replied; the log names which id.
                log("WARNING", "event refused: id not in LINE's format", reason=item.refusal,
                    event_type=_event_type(item.raw))
        accepted = [i for i, item in enumerate(read) if item.refusal is None]
        handled = self._handle_events([read[i].event for i in accepted], [read[i].raw for i in accepted], deadline)
        for i, outcome in zip(accepted, handled):
            outcomes[i] = outcome
        retry = [o for o in outcomes if o is EventStatus.RETRY]
        log("INFO", "webhook handled", events=len(outcomes), retry=len(retry),
            elapsed_ms=round((self._monotonic() - started) * 1000, 1))
        if retry:
            return WebhookResult(503, {"status": "retry", "events": [o.value for o in outcomes]})
        return WebhookResult(200, {"status": "ok", "events": [o.value for o in outcomes]})

    def _handle_events(self, events: list, raw_events: list, deadline: float) -> list[EventStatus]:
        """Handle the events inline while the budget allows; hand the rest to the queue in one go.

        Returns:
            One EventStatus per event; RETRY ones make the answer 503.
        """
        deferred: list[tuple[int, str, dict, dict]] = []
        outcomes = [self._handle_event(event, raw, deadline, deferred=deferred, index=i)
                    for i, (event, raw) in enumerate(zip(events, raw_events))]
        if deferred:
            for index, outcome in self._queue_deferred(deferred, deadline).items():
                outcomes[index] = outcome
        return outcomes

    def _handle_event(self, event, raw: dict, deadline: float, *, deferred: list | None = None,
                      index: int = 0) -> EventStatus:
        event_id = raw.get("webhookEventId") if isinstance(raw, dict) else None
        user_id = getattr(getattr(event, "source", None), "user_id", None)
        if event is None:  # unreadable: still name whose it was (hashed), when its source says so in LINE's format
            source = raw.get("source") if isinstance(raw, dict) else None
            user_id = source.get("userId") if isinstance(source, dict) and is_user_id(source.get("userId")) else None
        fields = {"event_type": raw.get("type") if isinstance(raw, dict) else None,
                  "webhook_event_id": event_id, "user": hash_user(user_id)}
        if event is None:
            log("WARNING", "event unreadable: not in LINE's event format", **fields)
            return EventStatus.UNREADABLE
        if isinstance(raw, dict) and raw.get("mode") == "standby":
            # Another channel is active in this chat (Messaging API: "mode"): do not answer.
            log("INFO", "event ignored: standby mode", **fields)
            return EventStatus.IGNORED
        if not needs_claim(event):
            log("INFO", "event ignored", **fields)
            return EventStatus.IGNORED
        if event_id and deferred is not None and self.event_queue is not None and not self._inline_budget(deadline):
            deferred.append((index, event_id, raw, fields))  # queued with the rest, in one write
            return EventStatus.DEFERRED
        if time.monotonic() + self.settings.store_deadline_seconds > deadline:
            log("WARNING", "event deferred: webhook budget spent", **fields)
            return EventStatus.RETRY
        now = self.clock()
        if event_id and self.early_reply is not None and getattr(event, "reply_token", None):
            early = self._reply_before_claim(event, raw, now, deadline, fields)
            if early is not None:
                return early
        claim = None
        if event_id:
            claim = self._claim(event_id, now, deadline, fields, raw)
            status = self._unless_claimed(claim, event_id, fields)
            if status is not None:
                return status
        else:
            log("WARNING", "event without webhookEventId: not deduplicated", **fields)

        ctx = self._context(event, now, event_id, deadline, claimed=claim is not None)
        try:
            reply = self.dispatch(ctx, event)
        except StoreError as exc:
            if exc.retryable:
                if claim is not None and self.event_queue is not None:
                    log("WARNING", "event failed on the store; queued", error=exc.__class__.__name__, **fields)
                    return self._queue(event_id, claim, raw, QueuedReason.STORE_BUSY, fields)
                log("WARNING", "event failed, will be redelivered", error=exc.__class__.__name__, **fields)
                return EventStatus.RETRY
            log("ERROR", "event failed", error=exc.__class__.__name__, **fields)
            reply = failure_reply()
        except Exception as exc:  # one failing event must not drop the others
            log("ERROR", "event failed", error=exc.__class__.__name__, exc_info=True, **fields)
            reply = failure_reply()

        return self._answer(event, raw, reply, claim, deadline, fields)

    def _context(self, event, now, event_id: str | None, deadline: float, *, claimed: bool) -> EventContext:
        user_id = getattr(getattr(event, "source", None), "user_id", None)
        actor = Actor(self.settings.tenant_id, user_id) if user_id else None
        return EventContext(self.settings, self.store, self.line, now, actor, event_id, deadline,
                            queue=self.queue, memory=self.memory, text_turn=self._text_turn(claimed),
                            event_time=event_time_of(event))

    def _unless_claimed(self, claim: inbox.ClaimResult | None, event_id: str, fields: dict) -> EventStatus | None:
        """None when ``claim`` lets this attempt answer the event; else the event's status.

        An earlier attempt that started its reply and died is never replied to again: the follow-up
        it recorded (``Reply.follow_up``) is queued for a push, or, without one, the event is
        finished as ``reply_unknown``."""
        if claim is None:
            return EventStatus.RETRY
        if claim.claim in (EventClaim.DONE, EventClaim.QUEUED):
            return EventStatus.DUPLICATE
        if claim.claim is EventClaim.IN_PROGRESS:
            log("INFO", "event held by another attempt", **fields)
            return EventStatus.RETRY
        if claim.reply_attempted:
            # An earlier attempt crashed after starting its reply: never reply twice.
            queued = self._queue_follow_up(event_id, claim.attempt, fields)
            if queued is not None:
                return queued
            self._finish(event_id, claim.attempt, EventOutcome.REPLY_UNKNOWN, fields)
            return EventStatus.DONE
        return None

    def _owed_queue(self):
        """Where an answer owed by push goes: the event queue, or else ``local_events`` (or None)."""
        return self.event_queue if self.event_queue is not None else self.local_events

    def _queue_follow_up(self, event_id: str, attempt: int, fields: dict) -> EventStatus | None:
        """Queue the push of the follow-up an earlier, dead attempt recorded with its reply
        (``inbox.queue_follow_up``): QUEUED, or RETRY when the store did not answer (the follow-up
        stays recorded: 503, and LINE's redelivery or the sweep tries again); None when there is no
        follow-up (or nowhere to push it from)."""
        queue = self._owed_queue()
        if queue is None:
            return None
        try:
            if not inbox.queue_follow_up(self.store, self.settings.tenant_id, event_id, attempt, now=self.clock()):
                return None
        except StoreError as exc:
            log("WARNING", "follow-up not queued: store unavailable", error=exc.__class__.__name__, **fields)
            return EventStatus.RETRY
        enqueue_event(queue, QueuedEventTask(self.settings.tenant_id, event_id))
        log("INFO", "event queued", reason=QueuedReason.REPLY_UNKNOWN.value, with_answer=True, **fields)
        return EventStatus.QUEUED

    def _reply_before_claim(self, event, raw: dict, now, deadline: float, fields: dict) -> EventStatus | None:
        """Answer an event whose reply has no side effects (``early_reply``) with one store write fewer.

        The reply is computed first; then one transaction claims the event and records the reply as
        started (``inbox.claim_event(start_reply=True)``), and the reply is sent. A crash after that
        commit leaves a reply of unknown outcome, which a takeover never repeats, exactly as after
        ``mark_reply_attempted``. The claim is tried only while the budget still holds a reply after it.

        Returns:
            The event's status, or None when the event is not such an event, or the budget is too
            short for a claim and a reply: then it is handled the usual way.
        """
        reply_reserve = _MIN_REPLY_SECONDS + _ANSWER_MARGIN_SECONDS
        if time.monotonic() + self.settings.store_deadline_seconds > deadline - reply_reserve:
            return None
        ctx = self._context(event, now, fields["webhook_event_id"], deadline, claimed=True)
        try:
            reply = self.early_reply(ctx, event)
        except Exception:  # noqa: BLE001 - routing is deterministic: the usual path meets and answers it again
            return None
        if (reply is None or reply.defer or not reply.messages or reply.after_reply is not None
                or reply.on_reply_failed is not None or reply.follow_up):
            return None
        event_id = fields["webhook_event_id"]
        claim = self._claim(event_id, now, deadline - reply_reserve, fields, raw, start_reply=True)
        status = self._unless_claimed(claim, event_id, fields)
        if status is not None:
            return status
        # Its finish need not be fsynced (``inbox.mark_done(durable=False)``) when the reply carries
        # nothing: lost to a power loss, it leaves the durable claim's "reply started", an unknown
        # that is never repeated. A reply that carries a receipt or a notice keeps a durable finish.
        return self._send_reply(event.reply_token, raw, reply, claim, deadline, fields,
                                durable_finish=reply.carries is not None)

    # ---- the model turn (docs/design.md §3, §8) ----------------------------------------------------------

    def _text_turn(self, claimed: bool):
        """Free text's turn when a model is configured and the event can be queued (it was claimed: it
        has an id; and a queue exists): with ``LOCAL_READER=router_first`` the router answers here what
        it reads completely and the rest is queued for the model (``router_first_turn``); with
        ``model_first`` everything is queued (``defer_to_model``). Else None: the offline router,
        answered here. Source: docs/design.md §8."""
        if self.settings.model_backend == "offline" or not claimed or self.event_queue is None:
            return None
        return router_first_turn if self.settings.reader is ReaderOrder.ROUTER_FIRST else defer_to_model

    def _show_loading(self, event, deadline: float, fields: dict) -> None:
        """Best effort: LINE's loading animation while the model works (one-to-one chats only).

        Source: Messaging API, "Display a loading animation" (POST /v2/bot/chat/loading/start:
        chatId is a user id; 5–60 seconds in steps of 5; it ends when a message arrives).
        """
        source = getattr(event, "source", None)
        if getattr(source, "type", None) != "user" or not getattr(source, "user_id", None):
            return
        timeout = min(self.settings.line_timeout_seconds, deadline - time.monotonic() - _ANSWER_MARGIN_SECONDS)
        if timeout <= 0.05:
            return
        seconds = min(60, max(5, 5 * -(-int(self.settings.model_timeout_seconds + 5) // 5)))
        try:
            self.line.show_loading(source.user_id, seconds=seconds, timeout_seconds=timeout)
        except Exception as exc:  # noqa: BLE001 - an animation must never cost the answer
            log("INFO", "loading animation not shown", error=exc.__class__.__name__, **fields)

    # ---- claim -------------------------------------------------------------------------------

    def _claim(self, event_id: str, now, deadline: float, fields: dict, raw: dict, *,
               start_reply: bool = False) -> inbox.ClaimResult | None:
        """Claim the event, trying again while the budget allows (a store lock is often brief).

        Args:
            deadline: no try starts unless it can end (its store deadline) by then (monotonic seconds).
            start_reply: record the reply as started in the same transaction (``inbox.claim_event``).
        Returns None when the store never answered: nothing was recorded, so the answer is 503.
        """
        claimant = secrets.token_hex(8)  # this delivery's attempt, across its own tries
        while True:
            try:
                return inbox.claim_event(self.store, self.settings.tenant_id, event_id, now=now,
                                         lease_seconds=self.settings.event_lease_seconds, event=raw,
                                         claimant=claimant, start_reply=start_reply)
            except StoreError as exc:
                if not exc.retryable or time.monotonic() + self.settings.store_deadline_seconds > deadline:
                    log("WARNING", "event claim failed", error=exc.__class__.__name__, **fields)
                    return None

    def _queue_reserve_seconds(self) -> float:
        """Budget kept for queueing the events not handled inline: one store write, one queue write."""
        return self.settings.store_deadline_seconds + _ANSWER_MARGIN_SECONDS

    def _inline_budget(self, deadline: float) -> bool:
        """Whether enough budget is left to handle an event here and still queue the rest in time."""
        return deadline - time.monotonic() >= self._queue_reserve_seconds() + _INLINE_MIN_SECONDS

    def _queue_deferred(self, deferred: list[tuple[int, str, dict, dict]],
                        deadline: float) -> dict[int, EventStatus]:
        """Claim and queue every deferred event in one store transaction, then queue their tasks.

        Returns:
            index → QUEUED, DUPLICATE, DONE (an earlier attempt's reply may have landed) or
            RETRY (held elsewhere, or the store did not answer: 503).
        """
        if time.monotonic() + _ANSWER_MARGIN_SECONDS > deadline:
            return {index: EventStatus.RETRY for index, *_ in deferred}
        try:
            results = inbox.claim_and_queue(self.store, self.settings.tenant_id,
                                            [(event_id, raw) for _, event_id, raw, _ in deferred],
                                            now=self.clock(), reason=QueuedReason.BUDGET,
                                            lease_seconds=self.settings.event_lease_seconds)
        except StoreError as exc:
            log("WARNING", "events not queued: store unavailable", events=len(deferred),
                error=exc.__class__.__name__)
            return {index: EventStatus.RETRY for index, *_ in deferred}
        queued = [event_id for event_id, result in results.items() if result is QueueResult.QUEUED]
        enqueue_all(self.event_queue, [QueuedEventTask(self.settings.tenant_id, e) for e in queued])
        outcomes = {}
        for index, event_id, _, fields in deferred:
            outcomes[index] = EventStatus.of(results.get(event_id, QueueResult.RETRY))
            log("INFO", "event queued" if outcomes[index] is EventStatus.QUEUED else "event not queued",
                reason=QueuedReason.BUDGET.value, result=outcomes[index].value, **fields)
        return outcomes

    # ---- answer ------------------------------------------------------------------------------

    def _answer(self, event, raw: dict, reply: Reply | None, claim, deadline: float,
                fields: dict) -> EventStatus:
        """Send the reply and finish the event; anything not finished goes to the queue, or 503."""
        event_id = fields["webhook_event_id"]
        token = getattr(event, "reply_token", None)
        if reply is not None and reply.defer and claim is not None and self.event_queue is not None:
            status = self._queue(event_id, claim, raw, QueuedReason.DEFERRED, fields)  # the worker answers it
            if status is EventStatus.QUEUED:
                self._show_loading(event, deadline, fields)
            return status
        if reply is None or not reply.messages or not token:
            if event_id and claim is not None:
                self._finish(event_id, claim.attempt, EventOutcome.NO_REPLY, fields)
            return EventStatus.DONE
        if claim is not None and self.event_queue is not None and deadline - time.monotonic() < (
                self.settings.store_deadline_seconds + _MIN_REPLY_SECONDS + _ANSWER_MARGIN_SECONDS):
            # Not enough budget left to record the attempt and reply: the token is still unused, so
            # the worker may reply with it while it is fresh.
            log("INFO", "reply left to the queue: webhook budget short", **fields)
            return self._queue(event_id, claim, raw, QueuedReason.BUDGET, fields, reply=reply)
        if claim is not None:
            try:
                # What the reply carries is recorded in this same write, before it is sent.
                if not inbox.mark_reply_attempted(self.store, self.settings.tenant_id, event_id, claim.attempt,
                                                  now=self.clock(), carries=reply.carries or outbox.CARRIES_OTHER,
                                                  follow_up=encode_follow_up(reply.follow_up)):
                    return EventStatus.DONE  # a later attempt owns the event now
            except StoreError as exc:
                log("WARNING", "reply not sent: could not record the attempt", error=exc.__class__.__name__,
                    **fields)
                return self._queue(event_id, claim, raw, QueuedReason.REPLY_UNRECORDED, fields, reply=reply)
        return self._send_reply(token, raw, reply, claim, deadline, fields)

    def _send_reply(self, token: str, raw: dict, reply: Reply, claim, deadline: float, fields: dict, *,
                    durable_finish: bool = True) -> EventStatus:
        """Send the reply whose attempt is recorded (or that has no inbox entry) and finish the event
        (``durable_finish``: see ``inbox.mark_done``'s ``durable``)."""
        event_id = fields["webhook_event_id"]
        # Once the attempt is recorded the reply is always sent (a takeover would take a recorded,
        # unsent reply for one of unknown outcome and never send it): at worst a little past the
        # budget, which LINE then counts as a slow answer, not a lost one.
        reserve = self._queue_reserve_seconds() if self._owed_queue() is not None else _ANSWER_MARGIN_SECONDS
        timeout = max(_MIN_REPLY_SECONDS, min(self.settings.line_timeout_seconds,
                                              deadline - time.monotonic() - reserve))
        faults.before_reply(self.settings, owed=reply.must_reach)
        sent = outbox.send_reply(self.line, token, reply.messages, timeout_seconds=timeout)
        delivery = sent.delivery
        if delivery is not Delivery.DELIVERED:
            log("WARNING", "reply not delivered", status=sent.status, delivery=delivery.value, **fields)
        if delivery is Delivery.DELIVERED:
            self._after(reply.after_reply, "after-reply step", fields)
            outcome = EventOutcome.REPLIED
        elif delivery is Delivery.UNKNOWN:
            # LINE may have processed it: never repeated (docs/design.md §11), unless its answer must reach the
            # resident: then its follow-up is pushed once, with the event's retry key.
            followed = self._follow_up_unknown(event_id, claim, raw, reply, fields)
            if followed is not None:
                return followed
            outcome = EventOutcome.REPLY_UNKNOWN
        elif delivery.send_later and claim is not None and self._owed_queue() is not None:
            # 429 or no connection: definitely not delivered; the queue pushes the same answer later.
            reason = (QueuedReason.REPLY_NOT_DELIVERED if delivery is Delivery.NOT_DELIVERED
                      else QueuedReason.REPLY_NEVER_STARTED)
            queued = self._queue(event_id, claim, raw, reason, fields, reply=reply, reply_attempted=True)
            # The answer is definitely undelivered and only the queue can still tell it: a busy store
            # may be free a moment later (seen: the finish went through 40 ms after the queue write
            # failed, and the resident was told nothing). Try again while the budget holds a write,
            # then once more even past it: that costs what the finish below would, and a slow answer
            # is better than none. Two tries at most: a broken store fails fast and is not hammered.
            if queued is EventStatus.RETRY and deadline - time.monotonic() >= self._queue_reserve_seconds():
                queued = self._queue(event_id, claim, raw, reason, fields, reply=reply, reply_attempted=True)
            if queued is EventStatus.RETRY:
                queued = self._queue(event_id, claim, raw, reason, fields, reply=reply, reply_attempted=True)
            if queued is EventStatus.QUEUED:
                return queued
            outcome = EventOutcome.REPLY_FAILED  # not queued in time: recorded as not delivered
        else:
            outcome = EventOutcome.REPLY_FAILED  # refused for good (or nowhere to queue): definitely not delivered
        if event_id and claim is not None:
            self._finish(event_id, claim.attempt, outcome, fields, durable=durable_finish)
        if outcome is EventOutcome.REPLY_FAILED:
            self._after(reply.on_reply_failed, "reply-failed step", fields)
        return EventStatus.DONE

    def _follow_up_unknown(self, event_id: str, claim, raw: dict, reply: Reply, fields: dict) -> EventStatus | None:
        """A reply of unknown outcome whose answer must reach the resident (``Reply.follow_up``):
        the same write that records the unknown outcome queues its follow-up for one push (reason
        ``reply_unknown``). Returns QUEUED (or DONE: a later attempt owns the event); DONE too when
        the store did not take the write: the follow-up recorded with the reply's start stays, and
        the sweep (or LINE's redelivery) queues it once the lease ends. None when there is no
        follow-up, or nowhere to push it from: the event is finished ``reply_unknown``."""
        if not reply.follow_up or claim is None or not event_id or self._owed_queue() is None:
            return None
        queued = self._queue(event_id, claim, raw, QueuedReason.REPLY_UNKNOWN, fields,
                             reply=Reply(reply.follow_up, carries=reply.carries), reply_attempted=True)
        return EventStatus.DONE if queued is EventStatus.RETRY else queued

    def _queue(self, event_id: str, claim, raw: dict, reason: QueuedReason, fields: dict, *,
               reply: Reply | None = None, reply_attempted: bool = False) -> EventStatus:
        """Hand the event (and its rendered answer, if any) to the queue: QUEUED, DONE or RETRY (503).

        An answer owed by push (``reply_attempted``: the token was used, or LINE asked to be called
        later) goes to ``local_events`` when there is no event queue."""
        queue = self._owed_queue() if reply_attempted else self.event_queue
        if queue is None:
            return EventStatus.RETRY
        answer = encode_messages(reply.messages) if reply is not None and reply.messages else None
        carries = (reply.carries or outbox.CARRIES_OTHER) if answer is not None and reply is not None else None
        try:
            if not inbox.queue_event(self.store, self.settings.tenant_id, event_id, claim.attempt, event=raw,
                                     reason=reason, now=self.clock(), answer=answer,
                                     reply_attempted=reply_attempted, carries=carries,
                                     follow_up=encode_follow_up(reply.follow_up) if reply is not None else None):
                return EventStatus.DONE  # a later attempt owns the event now
        except StoreError as exc:
            log("WARNING", "event not queued: store unavailable", reason=reason.value, error=exc.__class__.__name__,
                **fields)
            return EventStatus.RETRY
        # The store holds it now; a queue that does not confirm is covered by the start-up re-queue.
        enqueue_event(queue, QueuedEventTask(self.settings.tenant_id, event_id))
        log("INFO", "event queued", reason=reason.value, with_answer=answer is not None, **fields)
        return EventStatus.QUEUED

    @staticmethod
    def _after(step, what: str, fields: dict) -> None:
        if step is None:
            return
        try:
            step()
        except Exception as exc:  # the outbox lease still ends on its own
            log("WARNING", f"{what} failed", error=exc.__class__.__name__, **fields)

    def _finish(self, event_id: str, attempt: int, outcome: EventOutcome, fields: dict, *,
                durable: bool = True) -> None:
        try:
            inbox.mark_done(self.store, self.settings.tenant_id, event_id, attempt,
                            now=self.clock(), outcome=outcome, durable=durable)
        except StoreError as exc:
            # The lease will expire; a redelivery sees reply_attempted and repeats nothing.
            log("WARNING", "could not mark event done", error=exc.__class__.__name__, **fields)
        log("INFO", "event finished", outcome=outcome.value, **fields)


def _event_type(raw) -> str | None:
    """The raw event's ``type`` when it is a short ASCII word (safe to log), else None."""
    kind = raw.get("type") if isinstance(raw, dict) else None
    return kind if isinstance(kind, str) and kind.isascii() and len(kind) <= 40 else None


def defer_to_model(ctx: EventContext, text: str) -> Reply:
    """The webhook's text turn with ``LOCAL_READER=model_first``: hand the event to functions/agent.

    The text is not read here (the worker reads it from the queued event); nothing is sent now. With
    ``router_first`` the webhook uses shared.turn.engine.router_first_turn instead.
    """
    return Reply(defer=True)
