"""Map TDX tourism activity records to LOCAL events: validate each record, never guess.

A record is the JSON object TDX's ``GET /v2/Tourism/Activity/{City}`` returns for one activity
(Tourism Data V2, 觀光資訊資料庫: ``ActivityID``, ``ActivityName``, ``Description``, ``Location``,
``Address``, ``Organizer``, ``StartTime``, ``EndTime``, ``City``, ``Class1``/``Class2``,
``WebsiteUrl``, ``UpdateTime``; the Tourism Administration's open-data copy of the same records adds
``Region``/``Town``). Times are ISO 8601 with an offset (``2026-12-05T09:00:00+08:00``).

Rules:
- the county: ``City`` must be 彰化縣 (台 or 臺, any width), or be missing while the address does not
  start with another county; else ``out_of_county``;
- the township (shared.address.read_township): ``Town`` when it names one of the 26 townships (a
  full name or an alias), else the address as Taiwan writes it (a postal code before, after or
  inside the county part, 臺灣 and 彰化縣 optional, full- or half-width; the postal code alone when
  no township name follows), else a single full township name in ``Location``. None of them:
  ``no_address`` when the record has none of the three, ``no_township`` when they name no township,
  ``out_of_county`` when the address starts with another county. A short alias inside an address
  is not trusted (street names contain them);
- the position: ``Position`` (PositionLat/PositionLon) when it is a point in or at the county,
  kept with the source ``tdx``; else none (the record is kept);
- times are Asia/Taipei; the end is exclusive. A time of exactly 00:00 is a date without a time, so
  the start time is unknown and an end at 00:00 includes that whole day;
- tags: ``Class1``/``Class2`` and the words of ``TAG_WORDS`` found in the name;
- every event keeps its source (``tdx``) and the record's ``UpdateTime``.
A record that breaks a rule is skipped and counted under its first failed reason.

Source: TDX Tourism V2 API (https://tdx.transportdata.tw, 觀光 › 活動), docs/design.md §5.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta
from typing import Any, Iterable

from shared.address import AddressSkip, read_township, record_in_county
from shared.clock import TAIPEI
from shared.events.search import Event
from shared.geo import Coordinates, checked_point, in_county

SOURCE_KIND = "tdx"

#: Longest kept text per field (characters); longer text is cut, never rejected.
MAX_TEXT_CHARS = 120
MAX_URL_CHARS = 1000

#: Words that become tags when the activity's name contains them (LOCAL's event vocabulary).
TAG_WORDS: tuple[str, ...] = (
    "蔬食", "素食", "市集", "小農", "音樂", "演唱", "展覽", "藝術", "文化", "導覽", "親子", "燈會",
    "花卉", "花海", "健走", "路跑", "自行車", "單車", "宗教", "媽祖", "美食", "講座", "體驗", "電影",
    "老街", "農業", "長輩", "藝術節", "燈節",
)

#: Why a record was skipped (the counted reasons).
SKIP_REASONS: tuple[str, ...] = (
    "not_an_object", "missing_id", "duplicate_id", "missing_name", "out_of_county", "no_address", "no_township",
    "bad_start_time", "bad_end_time", "end_before_start", "bad_update_time",
)

#: The address reader's reasons, as the counted skip reasons of a record.
_ADDRESS_SKIPS = {AddressSkip.EMPTY: "no_address", AddressSkip.NO_TOWNSHIP: "no_township",
                  AddressSkip.OTHER_COUNTY: "out_of_county"}


@dataclass
class MappedBatch:
    """The result of mapping one response.

    Attributes:
        events: the kept events, in response order.
        skipped: {reason: count} for the skipped records (reasons from SKIP_REASONS).
        newest_update: the newest ``UpdateTime`` among kept records (aware), or None.
    """

    events: list[Event] = field(default_factory=list)
    skipped: Counter = field(default_factory=Counter)
    newest_update: datetime | None = None


class _Skip(Exception):
    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


def _text(value: Any) -> str | None:
    if not isinstance(value, str):
        return None
    cleaned = " ".join(value.split())
    return cleaned[:MAX_TEXT_CHARS] if cleaned else None


def _instant(value: Any, reason: str) -> datetime:
    if not isinstance(value, str) or not value.strip():
        raise _Skip(reason)
    try:
        parsed = datetime.fromisoformat(value.strip())
    except ValueError:
        raise _Skip(reason) from None
    if parsed.tzinfo is None or parsed.utcoffset() is None:
        raise _Skip(reason)  # a time without an offset is not guessed at
    return parsed.astimezone(TAIPEI)


def _in_county(record: dict[str, Any]) -> bool:
    """shared.address.record_in_county of its ``City`` and ``Address``."""
    return record_in_county(record.get("City"), _text(record.get("Address")))


def _township(record: dict[str, Any]) -> str:
    reading = read_township(town=_text(record.get("Town")), address=_text(record.get("Address")),
                            location=_text(record.get("Location")))
    if isinstance(reading, AddressSkip):
        raise _Skip(_ADDRESS_SKIPS[reading])
    return reading.township


def _position(value: Any) -> Coordinates | None:
    """TDX's ``Position`` ({PositionLat, PositionLon, GeoHash}) as sourced coordinates, or None when it
    is missing, not two numbers in range, 0/0 (a blank position), or outside the county (shared.geo:
    the county's outline with its margin). A bad position drops the position, never the record."""
    if not isinstance(value, dict):
        return None
    point = checked_point(value.get("PositionLat"), value.get("PositionLon"))
    if point is None or (point.lat == 0 and point.lng == 0) or not in_county(point):
        return None
    return Coordinates(point.lat, point.lng, SOURCE_KIND)


def _tags(name: str, record: dict[str, Any]) -> tuple[str, ...]:
    tags: list[str] = []
    for value in (record.get("Class1"), record.get("Class2")):
        text = _text(value)
        if text and text not in tags:
            tags.append(text)
    for word in TAG_WORDS:
        if word in name and word not in tags:
            tags.append(word)
    return tuple(tags)


def _url(value: Any) -> str | None:
    text = value.strip() if isinstance(value, str) else ""
    if text.startswith("https://") and len(text) <= MAX_URL_CHARS and not any(c.isspace() for c in text):
        return text
    return None


def _days(start: datetime, end: datetime) -> tuple[date, time | None, date]:
    """(first day, start time or None, first day after the event) in Asia/Taipei."""
    start_time = None if start.time() == time(0, 0) else start.time().replace(second=0, microsecond=0)
    if end.time() == time(0, 0):
        end_exclusive = end.date() + timedelta(days=1)  # a date without a time: that whole day
    else:
        end_exclusive = (end - timedelta(microseconds=1)).date() + timedelta(days=1)
    return start.date(), start_time, end_exclusive


def map_record(record: Any) -> tuple[Event, datetime]:
    """Validate and map one TDX activity record.

    Args:
        record: one element of the API's JSON array.
    Returns:
        (the event, the record's UpdateTime as an aware datetime).
    Raises:
        ValueError: the record is skipped; ``str(exc)`` is its reason (one of SKIP_REASONS, except
            ``duplicate_id``, which only map_records can see).
    """
    try:
        return _map(record)
    except _Skip as skip:
        raise ValueError(skip.reason) from None


def _map(record: Any) -> tuple[Event, datetime]:
    if not isinstance(record, dict):
        raise _Skip("not_an_object")
    activity_id = _text(record.get("ActivityID"))
    if not activity_id:
        raise _Skip("missing_id")
    name = _text(record.get("ActivityName"))
    if not name:
        raise _Skip("missing_name")
    if not _in_county(record):
        raise _Skip("out_of_county")
    township = _township(record)
    start = _instant(record.get("StartTime"), "bad_start_time")
    end = _instant(record.get("EndTime"), "bad_end_time")
    if end < start:
        raise _Skip("end_before_start")
    updated = _instant(record.get("UpdateTime"), "bad_update_time")
    first_day, start_time, end_exclusive = _days(start, end)
    event = Event(
        id=f"{SOURCE_KIND}-{activity_id}",
        title=name,
        area=township,
        date=first_day,
        start_time=start_time,
        meeting_point=_text(record.get("Location")) or _text(record.get("Address")),
        tags=_tags(name, record),
        source_kind=SOURCE_KIND,
        end_date=end_exclusive,
        source_updated_at=updated.isoformat(),
        organizer=_text(record.get("Organizer")),
        url=_url(record.get("WebsiteUrl")),
        position=_position(record.get("Position")),
    )
    return event, updated


def map_records(records: Iterable[Any]) -> MappedBatch:
    """Validate and map a whole response; invalid records are skipped and counted.

    Args:
        records: the API's JSON array (any element may be malformed).
    Returns:
        MappedBatch: the kept events, skip counts by reason, and the newest kept UpdateTime. A
        second record with an already kept ActivityID is skipped as ``duplicate_id``.
    """
    batch = MappedBatch()
    seen: set[str] = set()
    for record in records:
        try:
            event, updated = _map(record)
            if event.id in seen:
                raise _Skip("duplicate_id")
        except _Skip as skip:
            batch.skipped[skip.reason] += 1
            continue
        seen.add(event.id)
        batch.events.append(event)
        if batch.newest_update is None or updated > batch.newest_update:
            batch.newest_update = updated
    return batch
