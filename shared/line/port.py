"""The LINE gateway port and its one outcome table. Messages are line-bot-sdk v3 models, never dicts.

Every LINE send (a webhook reply, a queued answer, a handoff notice, a reconcile push) ends in one
of five outcomes, decided here and nowhere else (docs/design.md §11):

| what LINE (or the network) did                 | ``Delivery``      | what the caller does next          |
|------------------------------------------------|-------------------|------------------------------------|
| 2xx; a push's 409 (retry key accepted before)  | ``DELIVERED``     | record it delivered                |
| 4xx other than 429                             | ``REFUSED``       | final (a reply may become a push)  |
| 429 (rate limit)                               | ``NOT_DELIVERED`` | later, by push with a retry key    |
| 429 "You have reached your monthly limit."     | ``REFUSED``       | final: the staff follow-up list    |
| 5xx, a timeout, a connection lost mid-call     | ``UNKNOWN``       | never repeated blindly (¹)         |
| a connection that was never made               | ``NEVER_STARTED`` | nothing reached LINE: send later   |

(¹) LINE may have processed it. A push may be repeated with the same ``X-Line-Retry-Key`` (LINE
deduplicates it and answers 409); a reply, which has no retry key, never is.

Sources: LINE Messaging API reference, "Status codes" and "Retry an API request" (a 5xx or a
timeout may have been processed; retry only with ``X-Line-Retry-Key``; 409 carries
``x-line-accepted-request-id``); reply tokens are single-use. A 429 is told apart by the ``message``
of its JSON body (``TooMany``): LINE sends 429 for a rate limit and for a month's messages used up,
and a request answered 429 was not processed
(https://developers.line.biz/en/docs/messaging-api/handling-http-429-errors/).
"""
from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any, Protocol, Sequence


class Delivery(enum.Enum):
    """What became of one LINE send (see the module's table)."""

    DELIVERED = "delivered"
    REFUSED = "refused"
    NOT_DELIVERED = "not_delivered"
    UNKNOWN = "unknown"
    NEVER_STARTED = "never_started"

    @property
    def may_have_reached_user(self) -> bool:
        """True for DELIVERED and UNKNOWN: sending the same thing again (without a retry key) could say it twice."""
        return self in (Delivery.DELIVERED, Delivery.UNKNOWN)

    @property
    def send_later(self) -> bool:
        """True for NOT_DELIVERED and NEVER_STARTED: definitely not delivered, and worth another try."""
        return self in (Delivery.NOT_DELIVERED, Delivery.NEVER_STARTED)


#: The ``message`` of LINE's 429 body when the month's messages are used up (free plan, or the
#: target limit for additional messages): https://developers.line.biz/en/docs/messaging-api/handling-http-429-errors/
MONTHLY_LIMIT_MESSAGE = "You have reached your monthly limit."


class TooMany(enum.Enum):
    """Why LINE answered 429, read from the body's ``message`` (``too_many_of``)."""

    RATE = "rate"        # a rate or concurrency limit: try again later, same retry key
    MONTHLY = "monthly"  # the month's messages are used up: final until the month (or the plan) changes


def too_many_of(status: int, body_message: str | None) -> TooMany | None:
    """The kind of a 429 (None for any other status): MONTHLY for LINE's monthly-limit message,
    RATE for every other 429 (the rate limits, concurrent operations, or a body not read)."""
    if status != 429:
        return None
    return TooMany.MONTHLY if (body_message or "").strip() == MONTHLY_LIMIT_MESSAGE else TooMany.RATE


def delivery_of_status(status: int, *, push_with_retry_key: bool = False,
                       too_many: TooMany | None = None) -> Delivery:
    """The table's row for one HTTP status from the Messaging API.

    Args:
        status: the HTTP status LINE answered (100-599).
        push_with_retry_key: the call was a push carrying ``X-Line-Retry-Key``; then 409 means the
            key was accepted before, i.e. delivered.
        too_many: for a 429, its kind (``too_many_of``); MONTHLY is REFUSED (never retried blindly),
            anything else NOT_DELIVERED.
    Returns:
        Delivery. Anything not 2xx/4xx (1xx, 3xx, 5xx) is UNKNOWN: LINE may have processed it.
    """
    if 200 <= status < 300:
        return Delivery.DELIVERED
    if status == 409 and push_with_retry_key:
        return Delivery.DELIVERED
    if status == 429:
        return Delivery.REFUSED if too_many is TooMany.MONTHLY else Delivery.NOT_DELIVERED
    if 400 <= status < 500:
        return Delivery.REFUSED
    return Delivery.UNKNOWN


class LineSendError(Exception):
    """Base of every failed LINE send; ``delivery`` is its row of the outcome table.

    ``retryable`` is True when another try may help (429, never started, and an unknown outcome,
    which only a push with the same retry key may repeat).
    """

    delivery: Delivery = Delivery.UNKNOWN

    @property
    def retryable(self) -> bool:
        return self.delivery is not Delivery.REFUSED


class LineApiError(LineSendError):
    """LINE answered with an error status. ``status`` is that status; ``delivery`` from the table;
    ``too_many`` the kind of a 429 (``TooMany``, from ``body_message``, the JSON body's ``message``)
    or None."""

    def __init__(self, status: int, message: str = "", *, body_message: str | None = None):
        self.status = status
        self.too_many = too_many_of(status, body_message)
        self.delivery = delivery_of_status(status, too_many=self.too_many)
        self.accepted_request_id: str | None = None
        super().__init__(f"LINE API answered {status}: {message}"[:300])

    @property
    def monthly_limit(self) -> bool:
        """True when LINE refused the send because the month's messages are used up."""
        return self.too_many is TooMany.MONTHLY


class LineOutcomeUnknown(LineSendError):
    """The request was sent but no answer came in time (or the connection broke): it may or may
    not have been delivered."""

    delivery = Delivery.UNKNOWN


class LineNeverStarted(LineSendError):
    """No connection to LINE was ever made (refused, DNS, connect timeout): nothing was sent."""

    delivery = Delivery.NEVER_STARTED


def delivery_of(exc: BaseException | None) -> Delivery:
    """The table's row for the outcome of one send: None (no exception) is DELIVERED.

    Raises:
        TypeError: ``exc`` is not a LineSendError (a programming error, not a LINE outcome).
    """
    if exc is None:
        return Delivery.DELIVERED
    if isinstance(exc, LineSendError):
        return exc.delivery
    raise TypeError(f"not a LINE send outcome: {exc.__class__.__name__}")


def monthly_limit(exc: BaseException | None) -> bool:
    """True when ``exc`` is LINE's 429 for the month's messages used up (``TooMany.MONTHLY``)."""
    return isinstance(exc, LineApiError) and exc.monthly_limit


@dataclass(frozen=True)
class Quota:
    """This month's push messages as LINE counts them (GET /v2/bot/message/quota and
    /v2/bot/message/quota/consumption).

    Args:
        limit: the month's target limit in messages, or None when LINE sets none (``type: none``).
        used: messages sent this month that count against it (``totalUsage``).
    """

    limit: int | None
    used: int

    @property
    def share(self) -> float | None:
        """``used / limit`` (0.0 and up), or None without a limit (or a limit of 0 with nothing used)."""
        if self.limit is None or (self.limit <= 0 and self.used <= 0):
            return None
        return self.used / self.limit if self.limit > 0 else float("inf")


@dataclass(frozen=True)
class PushResult:
    """A delivered push. ``duplicate`` is True when LINE had already accepted the retry key (409)."""

    request_id: str | None
    duplicate: bool = False


class LineGateway(Protocol):
    """Outbound LINE calls, each with a timeout in seconds. Failures raise a ``LineSendError``
    whose ``delivery`` is the module table's row."""

    def reply(self, reply_token: str, messages: Sequence[Any], *, timeout_seconds: float) -> None:
        """Reply with up to 5 messages.

        Raises:
            LineApiError: REFUSED (e.g. 400 for a used or expired reply token) or NOT_DELIVERED (429);
                UNKNOWN for 5xx.
            LineOutcomeUnknown: sent, no answer; never retry a reply blindly.
            LineNeverStarted: no connection was made; the token is unused.
        """

    def push(self, to: str, messages: Sequence[Any], *, retry_key: str,
             timeout_seconds: float) -> PushResult:
        """Push with an ``X-Line-Retry-Key`` (a UUID string derived from the operation).

        Returns:
            PushResult; a 409 (key already accepted) counts as delivered.
        Raises:
            LineApiError, LineOutcomeUnknown, LineNeverStarted: as for ``reply``; retrying with the
                same key is safe (LINE deduplicates it).
        """

    def show_loading(self, chat_id: str, *, seconds: int, timeout_seconds: float) -> None:
        """Show the loading animation (5–60 s, multiples of 5) in a one-to-one chat."""

    def quota(self, *, timeout_seconds: float) -> Quota:
        """This month's target limit and use (two GET calls).

        Raises:
            LineApiError, LineOutcomeUnknown, LineNeverStarted: the quota could not be read.
        """
