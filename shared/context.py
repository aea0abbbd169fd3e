"""What an event handler receives and returns: the per-event context and the reply.

A neutral module: the webhook builds an ``EventContext`` for each verified event and sends the
``Reply`` a handler returns; the domains (turn, handoff, memory) import only this, never the webhook.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Callable

from shared.clock import from_epoch_ms
from shared.config import Settings
from shared.identity import Actor
from shared.keys import UserHasher, user_hasher
from shared.line import LineGateway
from shared.outbox import AnswerCarries, Carried
from shared.store import DocumentStore


@dataclass(frozen=True)
class EventContext:
    """One verified webhook event being handled.

    ``actor`` is None for events without a ``userId`` (some group and room events): those get
    guidance and cause no writes (docs/design.md §2). ``now`` is aware (UTC).
    """

    settings: Settings
    store: DocumentStore
    line: LineGateway
    now: datetime
    actor: Actor | None
    webhook_event_id: str | None
    deadline_monotonic: float
    queue: Any = None    # shared.queue.TaskQueue (None when no queue is configured)
    memory: Any = None   # client of functions/memory (None when MEMORY_FUNCTION_URL is unset)
    message_id: str | None = None  # LINE's id of the message a message event carries (unsend names it)
    #: Free text that no fixed entry or hook took: ``(ctx, text) -> Reply``. None: the offline
    #: router (shared.turn.engine.run_text_turn). functions/agent sets the model turn here.
    text_turn: Callable[["EventContext", str], "Reply"] | None = None
    #: A group or room (LINE source type ``group`` / ``room``): what LOCAL remembers about the sender
    #: is neither used nor shown there, and no memory is offered (docs/design.md §6: consent is one-to-one).
    shared_chat: bool = False
    #: The group or room id of a shared chat (LINE source ``groupId`` / ``roomId``), None one-to-one:
    #: with the sender it names the chat's short conversation state (shared.turn.conversation).
    chat_id: str | None = None
    #: When the event happened: the verified webhook event's ``timestamp`` (aware UTC; LINE signs it
    #: with the body), or None when it has none. A tap is judged at this time, not at ``now``, which
    #: may be much later for an event the queue answers (e.g. a consent card's expiry).
    event_time: datetime | None = None

    @property
    def user_hasher(self) -> UserHasher | None:
        """The keyed hasher of user ids for this event's settings (``shared.keys.user_hasher``: built
        once per process and key), or None without ``LOCAL_SIGNING_KEY``."""
        return user_hasher(self.settings)

    @property
    def user_hash(self) -> str | None:
        """The actor's user hash, as turn records store it; None without an actor or a signing key."""
        hasher = self.user_hasher
        return hasher(self.actor.user_id) if hasher is not None and self.actor is not None else None


def event_time_of(event: Any) -> datetime | None:
    """The aware UTC time of a line-bot-sdk webhook event's ``timestamp`` (epoch ms), or None when it
    has none a clock can read."""
    milliseconds = getattr(event, "timestamp", None)
    if isinstance(milliseconds, bool) or not isinstance(milliseconds, (int, float)):
        return None
    try:
        return from_epoch_ms(milliseconds)
    except (ValueError, OverflowError, OSError):
        return None


#: How every message pushed after a reply of unknown outcome begins (``Reply.follow_up``, a handoff
#: receipt restated): the resident may be reading it for the second time.
RESTATED_HEAD = "剛才的回覆可能沒有送到，再說一次："


@dataclass(frozen=True)
class Reply:
    """Messages to send with the event's reply token (1–5 line-bot-sdk message models).

    ``after_reply`` runs once LINE accepted the reply (e.g. mark an outbox row delivered);
    ``on_reply_failed`` runs once LINE refused it (definitely not delivered, e.g. 400 for a used
    token; not on a timeout) and the event is marked done (e.g. release an outbox claim early).
    Neither is ever called inside a store transaction function.

    ``carries`` says what the messages tell (``shared.outbox.Carried``: a handoff receipt, a
    "checking" answer); None is "nothing an outbox tracks" and is recorded as such. The webhook
    records it in the write that marks the reply started, before sending, so a later push
    deciding whether the resident still needs to be told reads it instead of guessing.

    ``follow_up`` is for an answer that must reach the resident even when its reply's outcome is
    unknown (a memory outcome: the resident cannot tell whether the tap counted): the messages
    pushed once, with the event's ``X-Line-Retry-Key``, after a reply LINE answered 5xx or not at
    all, or whose attempt died after recording it (docs/design.md §11). They restate the state, so
    reading them after the reply did land is harmless. None, for an answer the resident can simply
    ask again (a search): an unknown reply is never repeated. A handoff receipt has none: its
    outbox notice is followed up by the reconcile relay instead (``shared.handoff.reconcile_notify``).
    """

    messages: list[Any] = field(default_factory=list)
    after_reply: Callable[[], None] | None = None
    on_reply_failed: Callable[[], None] | None = None
    #: Send nothing now: hand the event to the queued-event worker (functions/agent), whose handler
    #: answers it (the model turn, docs/design.md §8). Honoured by the webhook only.
    defer: bool = False
    carries: Carried | None = None
    follow_up: list[Any] | None = None

    @property
    def must_reach(self) -> bool:
        """True when this answer must reach the resident even if its reply's outcome is unknown: it
        has a ``follow_up``, or it tells a handoff receipt (which the reconcile relay follows up)."""
        return bool(self.follow_up) or (self.carries is not None and self.carries.kind is AnswerCarries.RECEIPT)
