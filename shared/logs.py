"""Structured JSON logs on stderr, in Cloud Logging's field names.

Never log tokens, secrets, signatures or request text; user ids go through ``hash_user``, an
HMAC keyed from ``LOCAL_SIGNING_KEY``: someone who has a user id but not the key cannot find that
user's lines. An operator who holds the key finds one resident's lines with ``make user-data``
(its ``log_user_hash``) and a log query on ``jsonPayload.user`` (README, "Logs").
"""
from __future__ import annotations

import hashlib
import hmac
import json
import logging
import secrets
import sys
import threading
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
        line = json.dumps(entry, ensure_ascii=False, default=str)
        # A lone surrogate (from ASCII-escaped JSON) cannot be written as UTF-8: keep it escaped.
        return line.encode("utf-8", "backslashreplace").decode("utf-8")


def configure() -> None:
    """Install the JSON handler on the ``local`` logger once (idempotent)."""
    if any(isinstance(h.formatter, JsonFormatter) for h in _LOGGER.handlers):
        return
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter())
    _LOGGER.addHandler(handler)
    _LOGGER.setLevel(logging.INFO)
    _LOGGER.propagate = False


_USER_HASH_LABEL = b"LOCAL user hash v1"
_user_hash_key: bytes | None = None
_user_hash_lock = threading.Lock()


def user_hash_key(signing_key: str) -> bytes:
    """The key of ``hash_user``, derived from ``LOCAL_SIGNING_KEY`` for this one purpose.

    Returns:
        32 bytes: HMAC-SHA256(signing key, "LOCAL user hash v1"), so the hash key is not the
        signing key and reveals nothing about it (NIST SP 800-108 style label separation).
    """
    return hmac.new(signing_key.encode("utf-8"), _USER_HASH_LABEL, hashlib.sha256).digest()


def configure_user_hash(signing_key: str | None) -> None:
    """Key ``hash_user`` for this process; each function's entry point calls it once.

    Args:
        signing_key: ``LOCAL_SIGNING_KEY``. When None, the process uses a random key: its hashes
            are still keyed, but cannot be joined with other processes' (or found by an operator).
    """
    global _user_hash_key
    with _user_hash_lock:
        _user_hash_key = user_hash_key(signing_key) if signing_key else secrets.token_bytes(32)


def hash_user(user_id: str | None) -> str | None:
    """A stable, keyed, non-reversible tag for a LINE user id: 16 hex of HMAC-SHA256.

    Args:
        user_id: a LINE user id, or None.
    Returns:
        None for no user; else the first 16 hex digits of HMAC-SHA256(key, user id), with the key
        set by ``configure_user_hash`` (a random per-process key until then).
    """
    global _user_hash_key
    if not user_id:
        return None
    if _user_hash_key is None:
        with _user_hash_lock:
            if _user_hash_key is None:
                _user_hash_key = secrets.token_bytes(32)
    message = user_id.encode("utf-8", "backslashreplace")
    return hmac.new(_user_hash_key, message, hashlib.sha256).hexdigest()[:16]


def log(severity: str, message: str, *, exc_info: Any = False, **fields: Any) -> None:
    """Emit one structured entry. ``severity`` is a Cloud Logging level (INFO, WARNING, ERROR);
    ``exc_info`` is what ``logging`` takes (True inside an ``except`` block, or an exception)."""
    configure()
    _LOGGER.log(logging.getLevelName(severity.upper()), message, extra={"fields": fields},
                exc_info=exc_info)
