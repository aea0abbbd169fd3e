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
import os
import secrets
import select
import sys
import threading
from datetime import UTC, datetime
from typing import Any

_LOGGER = logging.getLogger("local")


class JsonFormatter(logging.Formatter):
    """One JSON object per line: ``severity``, ``message``, ``time`` (UTC) and the record's ``fields``."""

    def format(self, record: logging.LogRecord) -> str:
        entry = {
            "severity": record.levelname,
            "message": record.getMessage(),
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(),
            "logger": record.name,
        }
        entry.update(getattr(record, "fields", {}))
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        line = json.dumps(entry, ensure_ascii=False, default=str)
        # A lone surrogate (from ASCII-escaped JSON) cannot be written as UTF-8: keep it escaped.
        return line.encode("utf-8", "backslashreplace").decode("utf-8")


#: A write of at most this many bytes to a pipe is atomic (POSIX ``PIPE_BUF``, 4096 on Linux): it is
#: never split, nor mixed with another thread's or process's write.
_ATOMIC_BYTES = getattr(select, "PIPE_BUF", 512)


class JsonLineHandler(logging.Handler):
    """Writes each record as one line, in one ``os.write`` on the stream's file descriptor, with no lock.

    ``logging.StreamHandler`` holds the handler's lock through ``write`` and ``flush``, and the
    ``write`` system call lets other threads run: under load, every thread that logs meanwhile waits
    on that lock and is woken after it, two context switches each (issue 14's profile: two lines per
    webhook request cost 0.1-0.25 ms of CPU under 16 connections, against about 15 µs alone). A line
    of at most ``PIPE_BUF`` bytes (nearly all) is written with one ``write`` and no lock: a pipe
    takes it whole, never interleaved with another writer's (POSIX ``write``), and Linux writes it
    to a regular file whole as well. A longer line (a traceback) is written under a lock, all of it, in as many
    ``write`` calls as it takes. A stream without a file descriptor (a test's capture) is written
    through its ``write`` under the lock, as ``StreamHandler`` does.

    Args:
        stream: where lines go (``sys.stderr`` by default).
    """

    def __init__(self, stream: Any = None) -> None:
        super().__init__()
        self.stream = stream if stream is not None else sys.stderr
        try:
            self._fd: int | None = self.stream.fileno()
            self.stream.flush()  # what it buffered so far comes first
        except (AttributeError, OSError, ValueError):
            self._fd = None
        self._long_lock = threading.Lock()
        os.register_at_fork(after_in_child=self._long_lock._at_fork_reinit)  # type: ignore[attr-defined]

    def createLock(self) -> None:
        """No handler-wide lock (see the class docstring): ``emit`` serialises only long lines."""
        self.lock = None  # type: ignore[assignment]

    def emit(self, record: logging.LogRecord) -> None:
        """Write one formatted line, ``\\n``-terminated (UTF-8 on a file descriptor)."""
        try:
            line = self.format(record) + "\n"
            if self._fd is None:
                with self._long_lock:
                    self.stream.write(line)
                    self.stream.flush()
                return
            data = line.encode("utf-8", "backslashreplace")
            view = memoryview(data)
            if len(data) <= _ATOMIC_BYTES:
                view = view[os.write(self._fd, view):]  # all of it, unless a signal or a full disk cut it
                if not view:
                    return
            with self._long_lock:
                while view:
                    view = view[os.write(self._fd, view):]
        except Exception:  # noqa: BLE001 - logging's own rule: a failing handler reports, never raises
            self.handleError(record)


def configure() -> None:
    """Install the JSON handler on the ``local`` logger once (idempotent)."""
    if any(isinstance(h.formatter, JsonFormatter) for h in _LOGGER.handlers):
        return
    handler = JsonLineHandler(sys.stderr)
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
