"""The LINE gateway port. Messages are line-bot-sdk v3 message models, never dicts.

Source: LINE Messaging API reference (reply tokens are single-use; ``X-Line-Retry-Key``
makes a push idempotent and a repeat answers 409 with ``x-line-accepted-request-id``).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol, Sequence


class LineApiError(Exception):
    """LINE answered with an error status; nothing was sent. ``retryable`` for 429 and 5xx."""

    def __init__(self, status: int, message: str = ""):
        self.status = status
        self.retryable = status == 429 or status >= 500
        super().__init__(f"LINE API answered {status}: {message}"[:300])


class LineOutcomeUnknown(Exception):
    """The request was sent but no answer came in time: it may or may not have been delivered."""


@dataclass(frozen=True)
class PushResult:
    """A delivered push. ``duplicate`` is True when LINE had already accepted the retry key (409)."""

    request_id: str | None
    duplicate: bool = False


class LineGateway(Protocol):
    """Outbound LINE calls, each with a timeout in seconds."""

    def reply(self, reply_token: str, messages: Sequence[Any], *, timeout_seconds: float) -> None:
        """Reply with up to 5 messages.

        Raises:
            LineApiError: rejected (e.g. 400 for a used or expired reply token).
            LineOutcomeUnknown: sent, no answer; never retry a reply blindly.
        """

    def push(self, to: str, messages: Sequence[Any], *, retry_key: str,
             timeout_seconds: float) -> PushResult:
        """Push with an ``X-Line-Retry-Key`` (a UUID string derived from the operation).

        Returns:
            PushResult; a 409 (key already accepted) counts as delivered.
        Raises:
            LineApiError, LineOutcomeUnknown: as for ``reply``; retrying with the same key is safe.
        """

    def show_loading(self, chat_id: str, *, seconds: int, timeout_seconds: float) -> None:
        """Show the loading animation (5–60 s, multiples of 5) in a one-to-one chat."""
