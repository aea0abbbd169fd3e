"""search_local_events: the read-only event search over a versioned events snapshot.

Snapshots come from the store (``shared.events.snapshots``: the newest real snapshot, written by
``functions/ingest`` from TDX's tourism activities) or, only when no real snapshot exists, from the
demo file (``data/events-demo.json``); results carry ``demo`` so every demo reply can say 示範, and a
real snapshot's source and update time so every real reply can name them. Dates are Asia/Taipei
calendar dates; ranges and an event's days are start-inclusive, end-exclusive.

Source: docs/design.md §5 (search_local_events; until real events replace them, the snapshot is demo
data and every reply says 示範).
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from pathlib import Path
from typing import Any, Callable

from shared.areas import DATA_DIR, TOWNSHIPS, UnknownArea, is_vague_area, normalize_area
from shared.clock import TAIPEI, require_aware
from shared.geo import Coordinates

DEFAULT_SNAPSHOT_PATH = DATA_DIR / "events-demo.json"

#: Event fields that may be null; a null one is listed in the event's missing_fields.
OPTIONAL_FIELDS: tuple[str, ...] = ("start_time", "meeting_point")

#: Keywords that narrow nothing ("活動" is what is being searched); they are dropped.
GENERIC_KEYWORDS = frozenset({"活動", "活動資訊", "有什麼活動"})


class EventSnapshotError(Exception):
    """The events snapshot cannot be used; searches answer "unavailable". Not retryable."""


class EventSnapshotMissing(EventSnapshotError):
    """The snapshot file does not exist or cannot be read."""


class EventSnapshotInvalid(EventSnapshotError, ValueError):
    """The snapshot file breaks the contract; the message lists every problem."""


class InvalidDateRange(ValueError):
    """date is not "YYYY-MM-DD" or "YYYY-MM-DD/YYYY-MM-DD" with the end after the start."""


#: The calendar-day type, named apart because ``Event.date`` shadows ``date`` inside the class.
CalendarDay = date


@dataclass(frozen=True)
class Event:
    """One event of a snapshot.

    Attributes:
        id: stable id, e.g. "demo-ev-003".
        title: as recorded.
        area: a township's full name.
        date: the Asia/Taipei calendar day.
        start_time: local wall-clock time, or None when the snapshot does not give it.
        meeting_point: or None when the snapshot does not give it.
        tags: keyword tags, e.g. ("蔬食", "市集").
        source_kind: "demo" for illustrative data, "tdx" for TDX's tourism activities.
        end_date: the first Asia/Taipei day after the event (exclusive); None means the one day ``date``.
        source_updated_at: the source record's own update time (ISO 8601 with offset), or None.
        organizer: as recorded, or None.
        url: the event's web page (https), or None.
        position: where it is as the source records it (TDX's ``Position``), or None.
    """

    id: str
    title: str
    area: str
    date: date
    start_time: time | None
    meeting_point: str | None
    tags: tuple[str, ...]
    source_kind: str
    end_date: CalendarDay | None = None
    source_updated_at: str | None = None
    organizer: str | None = None
    url: str | None = None
    position: Coordinates | None = None

    @property
    def last_day(self) -> CalendarDay:
        """The event's last Asia/Taipei calendar day (inclusive)."""
        return self.date if self.end_date is None else self.end_date - timedelta(days=1)

    def runs_during(self, start: CalendarDay, end_exclusive: CalendarDay) -> bool:
        """True when any day of the event falls in ``[start, end_exclusive)``: a multi-day event
        matches every day it runs."""
        return self.date < end_exclusive and self.last_day >= start

    @property
    def missing_fields(self) -> tuple[str, ...]:
        """OPTIONAL_FIELDS that are null for this event, in that order."""
        return tuple(field for field in OPTIONAL_FIELDS if getattr(self, field) is None)


@dataclass(frozen=True)
class EventSnapshot:
    """A validated, read-only events snapshot.

    Attributes:
        snapshot_version: e.g. "events-demo-2026-11-30.1"; changes whenever the content changes.
        recorded_on: the day it was recorded (Asia/Taipei).
        demo: True while the data is illustrative; replies must then say 示範.
        note: what the snapshot is.
        events: in file order.
        source_name: who published the data, in words (real snapshots), e.g. 交通部觀光署活動資料.
        source_updated_at: the newest ``UpdateTime`` among the source's records (aware), or None.
        checked_at: when LOCAL last confirmed the source still says this (aware), or None (demo).
    """

    snapshot_version: str
    recorded_on: date
    demo: bool
    note: str
    events: tuple[Event, ...]
    source_name: str | None = None
    source_updated_at: datetime | None = None
    checked_at: datetime | None = None


def _parse_event(raw: dict[str, Any]) -> Event:
    start = raw["start_time"]
    if start is not None and len(start) != 5:
        raise EventSnapshotInvalid(f"event {raw['id']!r}: start_time must be HH:MM or null")
    return Event(
        id=raw["id"],
        title=raw["title"],
        area=raw["area"],
        date=date.fromisoformat(raw["date"]),
        start_time=None if start is None else time.fromisoformat(start),
        meeting_point=raw["meeting_point"],
        tags=tuple(raw["tags"]),
        source_kind=raw["source"]["kind"],
    )


def _problems(snapshot: EventSnapshot) -> list[str]:
    problems: list[str] = []
    ids = [event.id for event in snapshot.events]
    if len(ids) != len(set(ids)):
        problems.append("event ids must be unique")
    for event in snapshot.events:
        try:
            if normalize_area(event.area) != event.area:
                problems.append(f"{event.id}: area must be a full township name")
        except UnknownArea:
            problems.append(f"{event.id}: area {event.area!r} is not a Changhua township")
        if snapshot.demo != (event.source_kind == "demo"):
            problems.append(f"{event.id}: source.kind 'demo' must match the snapshot's demo flag")
    return problems


@functools.lru_cache(maxsize=8)
def _load_cached(path: Path) -> EventSnapshot:
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise EventSnapshotMissing(f"cannot read events snapshot {path}") from exc
    except json.JSONDecodeError as exc:
        raise EventSnapshotInvalid(f"events snapshot {path} is not JSON: {exc}") from exc
    try:
        if not isinstance(raw["demo"], bool):
            raise EventSnapshotInvalid("demo must be true or false")
        snapshot = EventSnapshot(
            snapshot_version=raw["snapshot_version"],
            recorded_on=date.fromisoformat(raw["recorded_on"]),
            demo=raw["demo"],
            note=raw["note"],
            events=tuple(_parse_event(event) for event in raw["events"]),
        )
    except EventSnapshotInvalid:
        raise
    except (KeyError, TypeError, ValueError) as exc:
        raise EventSnapshotInvalid(f"events snapshot {path}: {type(exc).__name__}: {exc}") from exc
    problems = _problems(snapshot)
    if problems:
        raise EventSnapshotInvalid("; ".join(problems))
    return snapshot


def load_event_snapshot(path: str | Path | None = None) -> EventSnapshot:
    """Load and validate an events snapshot, once per resolved path per process.

    Args:
        path: JSON file; defaults to ``data/events-demo.json`` in the repository or bundle.
    Returns:
        The validated EventSnapshot (the same object on later calls with the same path).
    Raises:
        EventSnapshotMissing: the file cannot be read.
        EventSnapshotInvalid: not JSON, a bad date or time, an area outside the 26 townships,
            duplicate ids, or a source kind that disagrees with the demo flag.
    Source: docs/design.md §5 (events snapshot, demo marking).
    """
    return _load_cached(Path(path or DEFAULT_SNAPSHOT_PATH).resolve())


def parse_date_range(value: str) -> tuple[date, date]:
    """Read a date argument as a half-open range of Asia/Taipei calendar days.

    Args:
        value: "YYYY-MM-DD" (that one day) or "YYYY-MM-DD/YYYY-MM-DD" (start inclusive, end exclusive).
    Returns:
        (start, end_exclusive), with end_exclusive > start.
    Raises:
        InvalidDateRange: another shape, an impossible date, or an end not after the start.
    Source: docs/design.md §5 (a range's end is exclusive, like the campaign's).
    """
    first, slash, second = value.strip().partition("/")
    try:
        start = date.fromisoformat(first.strip())
        end = date.fromisoformat(second.strip()) if slash else start + timedelta(days=1)
    except ValueError as exc:
        raise InvalidDateRange(f"not a date or date range: {value!r}") from exc
    if end <= start:
        raise InvalidDateRange(f"the end of {value!r} must be after its start (the end is exclusive)")
    return start, end


def _format_range(start: date, end: date) -> str:
    return start.isoformat() if end - start == timedelta(days=1) else f"{start.isoformat()}/{end.isoformat()}"


def weekend_range(now: datetime) -> str:
    """The weekend that 這週末 / 週末 means, as a date range argument.

    Args:
        now: aware instant; the calendar is Asia/Taipei.
    Returns:
        "YYYY-MM-DD/YYYY-MM-DD": Saturday to the following Monday (end exclusive). Monday to
        Saturday give the coming (or current) Saturday; Sunday gives the weekend in progress.
    Raises:
        ValueError: ``now`` is naive.
    這週末 is Saturday–Sunday of this week, in Asia/Taipei (docs/design.md §7).
    """
    today = require_aware(now).astimezone(TAIPEI).date()
    saturday = today - timedelta(days=1) if today.weekday() == 6 else today + timedelta(days=5 - today.weekday())
    return f"{saturday.isoformat()}/{(saturday + timedelta(days=2)).isoformat()}"


def _effective_keyword(keyword: str | None) -> str | None:
    cleaned = (keyword or "").strip()
    return None if not cleaned or cleaned in GENERIC_KEYWORDS else cleaned


def _matches_keyword(event: Event, keyword: str | None) -> bool:
    """Every whitespace-separated term of ``keyword`` is in the title or a tag (case-insensitive); a
    term of alternatives joined by ``|`` matches when any of them is.

    「老街 散步」 finds 「老街巷弄文化散步」 (tag 老街, title 散步); 「長輩」 finds the events tagged 長輩;
    「市集|親子」 (市集跟親子活動: either) finds both the markets and the family events.
    Event keywords filter on title and tags, so a topic word narrows the list instead of being ignored.
    """
    if keyword is None:
        return True
    haystacks = [event.title.casefold(), *(tag.casefold() for tag in event.tags)]
    return all(any(choice and choice in hay for choice in term.split("|") for hay in haystacks)
               for term in keyword.casefold().split())


def _event_view(event: Event, today: date) -> dict[str, Any]:
    return {
        "id": event.id,
        "title": event.title,
        "area": event.area,
        "date": event.date.isoformat(),
        "start_time": None if event.start_time is None else event.start_time.strftime("%H:%M"),
        "meeting_point": event.meeting_point,
        "last_day": event.last_day.isoformat(),
        "tags": list(event.tags),
        "source": {"kind": event.source_kind, "updated_at": event.source_updated_at},
        "organizer": event.organizer,
        "url": event.url,
        "is_past": event.last_day < today,
        "missing_fields": list(event.missing_fields),
    }


def _source_view(snapshot: EventSnapshot, now: datetime, stale_after_seconds: float) -> dict[str, Any]:
    checked = snapshot.checked_at
    return {
        "name": snapshot.source_name,
        "updated_at": None if snapshot.source_updated_at is None else snapshot.source_updated_at.isoformat(),
        "checked_at": None if checked is None else checked.isoformat(),
        "stale": checked is not None and (now - checked).total_seconds() > stale_after_seconds,
        "stale_after_seconds": stale_after_seconds,
    }


def _areas_with_events(snapshot: EventSnapshot) -> list[str]:
    present = {event.area for event in snapshot.events}
    return [township for township in TOWNSHIPS if township in present]


def search_local_events(
    date: str | None,
    area: str | None,
    keyword: str | None,
    *,
    now: datetime,
    snapshot: EventSnapshot | None = None,
    snapshot_loader: Callable[[], EventSnapshot] | None = None,
    expected_version: str | None = None,
    stale_after_seconds: float = 172800.0,
) -> dict[str, Any]:
    """Search the events snapshot by date range, township and keyword; read-only.

    Args:
        date: "YYYY-MM-DD", "YYYY-MM-DD/YYYY-MM-DD" (end exclusive; see weekend_range), or None for
            every event that has not ended (an ended event is shown only when a past date is asked).
            A multi-day event matches every day it runs.
        area: a township name or alias, None for every township, or a vague word (附近, 彰化) for
            needs_area.
        keyword: optional text matched in title or tags; whitespace-separated terms must all match
            (each in the title or a tag), a term ``a|b`` when either does; 活動 alone is dropped.
        now: aware instant of the turn; "today" is its Asia/Taipei calendar date.
        snapshot: an already loaded snapshot; default: ``snapshot_loader()``.
        snapshot_loader: loads the snapshot (e.g. shared.events.snapshots.load_current_snapshot over
            the store); an EventSnapshotError from it gives "unavailable"; default: the demo file.
        expected_version: the snapshot_version the turn started with; a different loaded version
            gives "unavailable" rather than stale data.
        stale_after_seconds: a real snapshot last confirmed longer ago than this is ``stale``.
    Returns:
        {status: "ok"|"needs_area"|"no_match"|"unavailable",
         query: {date (canonical "YYYY-MM-DD" or "start/end") or None, area (full name) or None,
             keyword or None},
         events: [{id, title, area, date, start_time ("HH:MM" or None), meeting_point (or None),
             last_day ("YYYY-MM-DD", inclusive), tags, source {kind, updated_at}, organizer, url,
             is_past (last day before today), missing_fields}],
         total, demo (True for demo data; None when no snapshot could be read), snapshot_version, recorded_on,
         source ({name, updated_at, checked_at, stale, stale_after_seconds}; None for demo data and
             when no snapshot could be read),
         today ("YYYY-MM-DD", Asia/Taipei),
         area_choices: townships that have events (with ok, needs_area and no_match: next steps)}.
    Raises:
        ValueError: ``now`` is naive.
        InvalidDateRange: date has another shape or an end not after its start.
        UnknownArea: area is neither a township nor vague (e.g. 台北).
    Source: docs/design.md §5 (search_local_events: demo marking, past labelling, version check).
    """
    today = require_aware(now).astimezone(TAIPEI).date()
    date_range = None if date is None or not date.strip() else parse_date_range(date)
    needs_area = area is not None and (not area.strip() or is_vague_area(area))
    township = None if needs_area or area is None else normalize_area(area)
    effective_keyword = _effective_keyword(keyword)
    result: dict[str, Any] = {
        "status": "unavailable",
        "query": {
            "date": None if date_range is None else _format_range(*date_range),
            "area": township,
            "keyword": effective_keyword,
        },
        "events": [],
        "total": 0,
        "demo": True,
        "snapshot_version": None,
        "recorded_on": None,
        "source": None,
        "today": today.isoformat(),
    }
    try:
        snapshot = (snapshot_loader or load_event_snapshot)() if snapshot is None else snapshot
    except EventSnapshotError:
        return {**result, "demo": None}  # nothing read: whether the data is demo is unknown
    if expected_version is not None and expected_version != snapshot.snapshot_version:
        return {**result, "demo": snapshot.demo}
    result.update(demo=snapshot.demo, snapshot_version=snapshot.snapshot_version,
                  recorded_on=snapshot.recorded_on.isoformat(),
                  source=None if snapshot.demo else _source_view(snapshot, now, stale_after_seconds))
    if needs_area:
        return {**result, "status": "needs_area", "area_choices": _areas_with_events(snapshot)}
    found = sorted(
        (
            event for event in snapshot.events
            if (township is None or event.area == township)
            and (event.last_day >= today if date_range is None else event.runs_during(*date_range))
            and _matches_keyword(event, effective_keyword)
        ),
        key=lambda event: (event.last_day < today, event.date, event.start_time or time.min),
    )
    if not found:
        return {**result, "status": "no_match", "area_choices": _areas_with_events(snapshot)}
    return {**result, "status": "ok", "events": [_event_view(event, today) for event in found], "total": len(found),
            "area_choices": _areas_with_events(snapshot)}
