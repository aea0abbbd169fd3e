"""Structured JSON logs on stderr, in Cloud Logging's field names.

Never log tokens, secrets, signatures or request text; user ids go through ``hash_user``.
"""
from __future__ import annotations

import hashlib
import json
import logging
import sys
from datetime import datetime, timezone
from typing import Any

_LOGGER = logging.getLogger("local")


class JsonFormatter(logging.Formatter):
    """One JSON object per line: ``severity``, ``message``, ``time`` (UTC) and the record's ``fields``."""

    def format(self, record: logging.LogRecord) -> str:
        entry = {
            "severity": record.levelname,
            "message": record.getMessage(),
            "time": datetime.fromtimestamp(record.created, timezone.utc).isoformat(),
            "logger": record.name,
        }
        entry.update(getattr(record, "fields", {}))
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return json.dumps(entry, ensure_ascii=False, default=str)


def configure() -> None:
    """Install the JSON handler on the ``local`` logger once (idempotent)."""
    if any(isinstance(h.formatter, JsonFormatter) for h in _LOGGER.handlers):
        return
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter())
    _LOGGER.addHandler(handler)
    _LOGGER.setLevel(logging.INFO)
    _LOGGER.propagate = False


def hash_user(user_id: str | None) -> str | None:
    """A stable, non-reversible tag for a LINE user id (first 16 hex of SHA-256)."""
    if not user_id:
        return None
    return hashlib.sha256(("local-user:" + user_id).encode()).hexdigest()[:16]


def log(severity: str, message: str, *, exc_info: Any = False, **fields: Any) -> None:
    """Emit one structured entry. ``severity`` is a Cloud Logging level (INFO, WARNING, ERROR);
    ``exc_info`` is what ``logging`` takes (True inside an ``except`` block, or an exception)."""
    configure()
    _LOGGER.log(logging.getLevelName(severity.upper()), message, extra={"fields": fields},
                exc_info=exc_info)
