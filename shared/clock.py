"""Timezone-aware time. Deadlines are Asia/Taipei wall clock; end times are exclusive."""
from __future__ import annotations

from datetime import datetime, timezone
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


def from_iso(text: str) -> datetime:
    """ISO 8601 text with an offset → aware datetime.

    Raises:
        ValueError: the text has no offset.
    """
    return require_aware(datetime.fromisoformat(text), "stored time")
