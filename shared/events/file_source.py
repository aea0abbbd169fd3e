"""File adapter of the activity source: a JSON file in TDX's own response format (an array of
activity records), so ``make ingest-events FILE=…`` exercises the whole path without the network.

Source: docs/design.md §5 (versioned snapshots); an offline file so ingestion is tested without TDX.
"""
from __future__ import annotations

import json
from pathlib import Path

from shared.events.source import TDX_SOURCE_NAME, Fetched, SourceInvalid, SourceUnavailable


class FileActivitySource:
    """Reads activities from one file.

    Args:
        path: the file; its content must be a JSON array, as TDX's ``$format=JSON`` answers.
    """

    kind = "tdx"
    name = TDX_SOURCE_NAME

    def __init__(self, path: str | Path):
        self.path = Path(path)

    def fetch(self, *, if_modified_since: str | None = None) -> Fetched:
        """Read the whole file (``if_modified_since`` is ignored: a file is always read).

        Raises:
            SourceUnavailable: the file cannot be read (``file_unreadable``).
            SourceInvalid: not JSON (``not_json``) or not a JSON array (``not_a_list``).
        """
        try:
            text = self.path.read_text(encoding="utf-8")
        except OSError:
            raise SourceUnavailable("file_unreadable") from None
        try:
            records = json.loads(text)
        except json.JSONDecodeError:
            raise SourceInvalid("not_json") from None
        if not isinstance(records, list):
            raise SourceInvalid("not_a_list")
        return Fetched(records=records, last_modified=None, origin=f"file:{self.path.name}")
