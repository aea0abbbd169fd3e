"""The webhook use case: verify the signature, claim each event, dispatch it, reply.

Every call answers within LINE's 2-second budget (DESIGN §3): store calls and the reply carry
deadlines that fit inside ``Settings.webhook_budget_seconds``. Events are handled one by one;
a failing event does not stop the others.
"""
from __future__ import annotations

import json
import time
from dataclasses import dataclass

from linebot.v3 import WebhookParser
from linebot.v3.exceptions import InvalidSignatureError
from linebot.v3.webhooks import Event

from shared import inbox
from shared.clock import Clock, utc_now
from shared.config import Settings
from shared.context import EventContext, Reply
from shared.identity import Actor
from shared.line import LineApiError, LineGateway, LineOutcomeUnknown
from shared.logs import hash_user, log
from shared.routing import dispatch_event, failure_reply, needs_claim
from shared.store import DocumentStore, StoreError

#: Keep this much of the budget for answering LINE after the last outbound call (seconds).
_ANSWER_MARGIN_SECONDS = 0.15


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
    """

    def __init__(self, settings: Settings, store: DocumentStore, line: LineGateway,
                 clock: Clock = utc_now, queue=None, memory=None):
        self.settings = settings
        self.queue = queue
        self.memory = memory
        self.store = store
        self.line = line
        self.clock = clock
        self._parser = WebhookParser(settings.line_channel_secret or "")

    def handle(self, body_text: str, signature: str | None) -> WebhookResult:
        """Verify and process one delivery.

        Args:
            body_text: the raw body decoded as UTF-8, exactly as received (never re-serialised).
            signature: the ``X-Line-Signature`` header.
        Returns:
            200 when every event is finished (or was finished before); 400 for a missing or
            wrong signature or a malformed body (nothing processed); 503 when some event must be
            delivered again (its lease is held elsewhere, or the store was unavailable).
        """
        started = time.monotonic()
        deadline = started + self.settings.webhook_budget_seconds
        if not signature:
            log("WARNING", "webhook rejected", reason="missing_signature")
            return WebhookResult(400, {"error": "missing X-Line-Signature"})
        try:
            events = self._parser.parse(body_text, signature)
        except InvalidSignatureError:
            log("WARNING", "webhook rejected", reason="bad_signature")
            return WebhookResult(400, {"error": "invalid signature"})
        except (ValueError, KeyError, TypeError):
            # The signature held (the SDK checks it before parsing): read event by event, so one
            # malformed event does not drop the others.
            events = None
        raw_events = _raw_events(body_text)
        if raw_events is None:
            log("WARNING", "webhook rejected", reason="malformed_body")
            return WebhookResult(400, {"error": "malformed body"})
        if events is None:
            events = [_parse_event(raw) for raw in raw_events]

        outcomes = [self._handle_event(event, raw, deadline) for event, raw in zip(events, raw_events)]
        retry = [o for o in outcomes if o == "retry"]
        log("INFO", "webhook handled", events=len(outcomes), retry=len(retry),
            elapsed_ms=round((time.monotonic() - started) * 1000, 1))
        if retry:
            return WebhookResult(503, {"status": "retry", "events": outcomes})
        return WebhookResult(200, {"status": "ok", "events": outcomes})

    def _handle_event(self, event, raw: dict, deadline: float) -> str:
        event_id = raw.get("webhookEventId") if isinstance(raw, dict) else None
        user_id = getattr(getattr(event, "source", None), "user_id", None)
        fields = {"event_type": raw.get("type") if isinstance(raw, dict) else None,
                  "webhook_event_id": event_id, "user": hash_user(user_id)}
        if event is None:
            log("WARNING", "event unreadable: not in LINE's event format", **fields)
            return "unreadable"
        if isinstance(raw, dict) and raw.get("mode") == "standby":
            # Another channel is active in this chat (Messaging API: "mode"): do not answer.
            log("INFO", "event ignored: standby mode", **fields)
            return "ignored"
        if not needs_claim(event):
            log("INFO", "event ignored", **fields)
            return "ignored"
        if time.monotonic() + self.settings.store_deadline_seconds > deadline:
            log("WARNING", "event deferred: webhook budget spent", **fields)
            return "retry"
        now = self.clock()
        claim = None
        if event_id:
            try:
                claim = inbox.claim_event(self.store, self.settings.tenant_id, event_id, now=now,
                                          lease_seconds=self.settings.event_lease_seconds)
            except StoreError as exc:
                log("WARNING", "event claim failed", error=exc.__class__.__name__, **fields)
                return "retry"
            if claim.claim is inbox.Claim.DONE:
                return "duplicate"
            if claim.claim is inbox.Claim.IN_PROGRESS:
                log("INFO", "event held by another attempt", **fields)
                return "retry"
            if claim.reply_attempted:
                # An earlier attempt crashed after starting its reply: never reply twice.
                self._finish(event_id, claim.attempt, "reply_unknown", fields)
                return "done"
        else:
            log("WARNING", "event without webhookEventId: not deduplicated", **fields)

        actor = Actor(self.settings.tenant_id, user_id) if user_id else None
        ctx = EventContext(self.settings, self.store, self.line, now, actor, event_id, deadline,
                           queue=self.queue, memory=self.memory)
        try:
            reply = dispatch_event(ctx, event)
        except StoreError as exc:
            if exc.retryable:
                log("WARNING", "event failed, will be redelivered", error=exc.__class__.__name__, **fields)
                return "retry"
            log("ERROR", "event failed", error=exc.__class__.__name__, **fields)
            reply = failure_reply()
        except Exception as exc:  # one failing event must not drop the others
            log("ERROR", "event failed", error=exc.__class__.__name__, exc_info=True, **fields)
            reply = failure_reply()

        outcome = self._send_reply(event, reply, claim, deadline, fields)
        if event_id and claim is not None:
            self._finish(event_id, claim.attempt, outcome, fields)
        if outcome == "reply_failed" and reply is not None and reply.on_reply_failed is not None:
            try:
                reply.on_reply_failed()
            except Exception as exc:  # the outbox lease still ends on its own
                log("WARNING", "reply-failed step failed", error=exc.__class__.__name__, **fields)
        return "done"

    def _send_reply(self, event, reply: Reply | None, claim, deadline: float, fields: dict) -> str:
        token = getattr(event, "reply_token", None)
        if reply is None or not reply.messages or not token:
            return "no_reply"
        try:
            if claim is not None and not inbox.mark_reply_attempted(
                    self.store, self.settings.tenant_id, fields["webhook_event_id"], claim.attempt,
                    now=self.clock()):
                return "lease_lost"
        except StoreError as exc:
            log("WARNING", "reply skipped: could not record the attempt", error=exc.__class__.__name__, **fields)
            return "reply_skipped"
        timeout = min(self.settings.line_timeout_seconds,
                      deadline - time.monotonic() - _ANSWER_MARGIN_SECONDS)
        if timeout <= 0.05:
            log("WARNING", "reply skipped: webhook budget spent", **fields)
            return "reply_skipped"
        try:
            self.line.reply(token, reply.messages[:5], timeout_seconds=timeout)
        except LineOutcomeUnknown:
            log("WARNING", "reply outcome unknown", **fields)
            return "reply_unknown"
        except LineApiError as exc:
            log("WARNING", "reply rejected", status=exc.status, **fields)
            return "reply_failed"
        if reply.after_reply is not None:
            try:
                reply.after_reply()
            except Exception as exc:
                log("WARNING", "after-reply step failed", error=exc.__class__.__name__, **fields)
        return "replied"

    def _finish(self, event_id: str, attempt: int, outcome: str, fields: dict) -> None:
        try:
            inbox.mark_done(self.store, self.settings.tenant_id, event_id, attempt,
                            now=self.clock(), outcome=outcome)
        except StoreError as exc:
            # The lease will expire; a redelivery sees reply_attempted and repeats nothing.
            log("WARNING", "could not mark event done", error=exc.__class__.__name__, **fields)
        log("INFO", "event finished", outcome=outcome, **fields)


def _raw_events(body_text: str) -> list | None:
    """The body's ``events`` list, or None when the body is not a LINE webhook object."""
    try:
        payload = json.loads(body_text)
    except ValueError:
        return None
    events = payload.get("events") if isinstance(payload, dict) else None
    return events if isinstance(events, list) else None


def _parse_event(raw):
    """One event through the SDK's model, or None when it is not a readable LINE event."""
    try:
        return Event.from_dict(raw)
    except (ValueError, TypeError, KeyError, AttributeError):
        return None
