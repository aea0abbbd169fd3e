"""The activity source port: where ingestion reads a county's activities from.

One small Protocol with two adapters: ``shared.events.tdx.TdxActivitySource`` (TDX's live API) and
``shared.events.file_source.FileActivitySource`` (a file in the API's own response format, for
``make ingest-events FILE=…`` and the tests). Only ``shared.wiring`` builds them.

Source: docs/design.md §1 (ports and adapters), §5 (TDX tourism activities, an offline file).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

#: How replies and ``make events-status`` name this data.
TDX_SOURCE_NAME = "交通部觀光署活動資料"


class SourceError(Exception):
    """The activities could not be fetched; ``reason`` is a short, secret-free word for the record.

    Attributes:
        reason: e.g. ``http_500``, ``timeout``, ``unauthorized``, ``not_json``.
    """

    retryable = False

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


class SourceUnavailable(SourceError):
    """A timeout, a refused connection, or 429/5xx after the retries; retryable later."""

    retryable = True


class SourceRefused(SourceError):
    """The source refused the request (401 after one token refresh, 403, 404, other 4xx); not retryable."""


class SourceInvalid(SourceError):
    """The answer is not the documented shape (not JSON, not a JSON array); not retryable."""


@dataclass(frozen=True)
class Fetched:
    """One fetch.

    Attributes:
        records: the response's JSON array, or None when the source said it has not changed (304).
        last_modified: the ``Last-Modified`` header to send back as ``If-Modified-Since``, or None.
        origin: where it came from, without credentials (a URL, or ``file:<path>``).
    """

    records: list[Any] | None
    last_modified: str | None
    origin: str


class ActivitySource(Protocol):
    """Fetches one county's activities in TDX's response format.

    Attributes:
        kind: the source kind kept on every event (``tdx``).
        name: the source in words, for replies.
    """

    kind: str
    name: str

    def fetch(self, *, if_modified_since: str | None = None) -> Fetched:
        """Fetch every activity.

        Args:
            if_modified_since: the previous ``Last-Modified``; a source that supports it answers
                ``records=None`` when nothing changed.
        Raises:
            SourceUnavailable, SourceRefused, SourceInvalid.
        """
