"""Timezone-aware time. Deadlines are Asia/Taipei wall clock; end times are exclusive."""
from __future__ import annotations

from datetime import datetime, timezone, tzinfo
from typing import Callable
from zoneinfo import ZoneInfo

TAIPEI = ZoneInfo("Asia/Taipei")

#: A clock returns an aware datetime. Injected wherever a test must control time.
Clock = Callable[[], datetime]


def utc_now() -> datetime:
    """The current instant, aware, in UTC."""
    return datetime.now(timezone.utc)


def require_aware(value: datetime, name: str = "now") -> datetime:
    """Return ``value`` unchanged if it carries a UTC offset.

    Raises:
        ValueError: ``value`` is naive; LOCAL never guesses a zone.
    """
    if value.tzinfo is None or value.utcoffset() is None:
        raise ValueError(f"{name} must be timezone-aware, got a naive datetime")
    return value


def to_iso(value: datetime) -> str:
    """Aware datetime → ISO 8601 text in UTC (``...+00:00``), for storage."""
    return require_aware(value).astimezone(timezone.utc).isoformat()


def from_epoch_ms(milliseconds: int | float) -> datetime:
    """Epoch milliseconds (LINE's webhook event ``timestamp``) → aware datetime in UTC.

    Raises:
        ValueError / OverflowError / OSError: not a representable instant.
    """
    return datetime.fromtimestamp(milliseconds / 1000.0, timezone.utc)


def from_iso(text: str) -> datetime:
    """ISO 8601 text with an offset → aware datetime.

    Raises:
        ValueError: the text has no offset.
    """
    return require_aware(datetime.fromisoformat(text), "stored time")


def wall_clock_text(iso_text: str | None, tz: tzinfo, pattern: str = "%Y/%m/%d %H:%M") -> str:
    """Stored ISO text (UTC) → its wall-clock time in ``tz`` (Asia/Taipei for LOCAL), formatted with
    ``pattern`` (default ``YYYY/MM/DD HH:MM``); "" when absent.

    Raises:
        ValueError: the text has no offset (``from_iso``).
    """
    if not iso_text:
        return ""
    return from_iso(iso_text).astimezone(tz).strftime(pattern)
