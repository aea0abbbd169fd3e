"""The date a message asks about, as a value: a ``DateSpec`` that resolves itself against a day.

``shared.turn.dates.read_date`` reads one from a message without a clock; the turn engine resolves it
with the turn's Asia/Taipei day: ``spec.resolve(today)`` → ``(start, end)``, calendar days, the end
exclusive. A day, month or holiday without a year is its *nearest* occurrence (11/22 on 2026-12-01 is
2026-11-22, shown as past; 1/9 is 2027-01-09); weeks start on Monday. A date that is not read is
``Unreadable``, never "all dates": resolving it raises ``UnreadableDate`` and the engine answers
「我看不懂這個日期」 with choices.

The kinds (frozen dataclasses):

- ``RelativeDay(offset)``: today + offset days, −3 … 3 (大前天 … 大後天);
- ``Days(first, last)``: two relative days said together (明天跟後天): both, and the days between;
- ``Week(weeks, weekend)``: the Monday-to-Sunday week ``weeks`` from this one (這週 0, 下週 1, 上上週 −2),
  or only its Saturday and Sunday (週末, 下下週末);
- ``Weekday(day, weeks)``: a weekday (0 = Monday … 6 = Sunday) in that week, or with ``weeks`` None
  the coming one (today counts: 週六 on a Saturday is today);
- ``MonthDay(month, day, year)``: 12/5 (the nearest), 2026/12/5 (with its year);
- ``Span(start, end)``: calendar days given whole (a postback's or the model's range);
- ``Month(month)``: a whole month, the nearest (1月, 年底); ``RelativeMonth(months)``: 上個月 −1,
  這個月 0, 下個月 1; ``MonthPart(month, part)``: its days 1–10 (``early``), 11–20 (``mid``) or 21 to
  its end (``late``): 下個月初, 12月底;
- ``DayOfMonth(day, month)``: a day of a relative month (上個月22號), or with ``month`` None the coming
  one (25號: this month's unless passed, today counts, else the next month that has it);
- ``Holiday(name)``: a day the Taiwan calendar names (its zh_TW name: 中秋節, 農曆除夕), or LOCAL's
  own ``lunar_new_year`` (the whole 春節 block, eve included), ``lantern`` (元宵: the first 春節 day
  + 14) and ``mothers_day`` (the second Sunday of May);
- ``LongWeekend(around)``: a holiday with the weekend days and calendar holidays next to it (元旦連假);
- ``LunarDate(month, day, leap)``, ``LunarDay(day)`` (the coming lunar DD), ``LunarMonth(month)``:
  the lunar calendar, converted by ``lunardate``; ``NewYearDay(day)``: the Nth day of the Lunar New
  Year (大年初五: the calendar's first 春節 day + N − 1);
- ``Both(first, second)``: two dates (明天或週六), searched as one range covering both, whose
  ``spans`` are the two apart; ``Range(first, last)``: from the first's start to the last's end
  (下週一到週三); an end before its start is unreadable, never re-ordered;
- ``Unreadable()``: the text names a date that is not read.

Encoding. Inside a turn a date is a ``DateSpec``; only three boundaries carry it as text: postback
data, model tool arguments and the audit record. There ``spec.encode()`` writes, and
``DateSpec.parse(text)`` reads, this one grammar (MM, DD two digits, N a signed integer):

====================================================  ======================================
``today`` ``tomorrow`` ``day_after_tomorrow``         RelativeDay(0), (1), (2), (3);
``three_days_later`` ``yesterday``                    (−1), (−2), (−3)
``day_before_yesterday`` ``three_days_ago``
``days:<relative day>/<relative day>``                Days
``this_week`` ``next_week`` ``last_week``             Week(0), (1), (−1)
``weekend`` ``next_weekend`` ``last_weekend``         Week(0 / 1 / −1, weekend=True)
``week_offset:N/week`` ``week_offset:N/weekend``      Week(N), Week(N, weekend=True)
``saturday`` ``sunday`` ``weekday:D`` (D 0–6)         Weekday(D): the coming one
``this_weekday:D`` ``next_weekday:D``                 Weekday(D, 0), (D, 1) (``next_saturday``,
``last_weekday:D`` ``week_offset:N/D``                ``next_sunday``), (D, −1), (D, N)
``md:MM-DD`` / ``YYYY-MM-DD``                         MonthDay without / with its year
``YYYY-MM-DD/YYYY-MM-DD``                             Span (end exclusive)
``month:MM``                                          Month
``this_month`` ``next_month`` ``last_month``          RelativeMonth(0), (1), (−1)
``month_part:<this|next|last|MM>/<early|mid|late>``   MonthPart
``day:DD``, ``<this|next|last>_month_day:DD``         DayOfMonth (coming / in that month)
``holiday:<name>``                                    Holiday
``long_weekend:<md:… or holiday:…>``                  LongWeekend
``lunar:MM-DD`` / ``lunar:LMM-DD`` (a leap month)     LunarDate
``lunar_day:DD`` ``lunar_month:MM`` ``cny_day:DD``    LunarDay, LunarMonth, NewYearDay
``both:<spec>|<spec>``                                Both (sides are no Both or Range)
``range:<spec>|<spec>`` (``mdrange:MM-DD/MM-DD``)     Range
``unreadable``                                        Unreadable
====================================================  ======================================

``encode`` writes the first form of each row (``next_saturday`` for Weekday(5, 1)); ``parse`` also
reads the others, as earlier replies' postbacks and audit records hold them.

Source: README, the offline router's dates; https://pypi.org/project/lunardate/
(LunarDate.to_solar_date / from_solar_date); https://python-holidays.readthedocs.io (country_holidays("TW")).
"""
from __future__ import annotations

import functools
import re
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any, ClassVar, Literal, cast

Part = Literal["early", "mid", "late"]
#: A month part's days: first day, and the first day after it (None: the month's end).
_PART_DAYS: dict[str, tuple[int, int | None]] = {"early": (1, 11), "mid": (11, 21), "late": (21, None)}


class UnreadableDate(ValueError):
    """A date names no real day (12/32, 2/30, 13月), is ``Unreadable``, or its text is not the
    grammar of ``DateSpec.parse``; not retryable."""


class DateSpec(ABC):
    """A date a message asks about; see the module docstring for the kinds and their encoding."""

    #: Fields the encoding writes as two digits (MM, DD): each is 0–99. An impossible day (2/30, 13月)
    #: is kept, to be refused by ``resolve``; a value no encoding can write is refused when built.
    _two_digit_fields: ClassVar[tuple[str, ...]] = ()

    def __post_init__(self) -> None:
        """Raises ValueError for a field outside ``_two_digit_fields``' 0–99."""
        if not all(0 <= getattr(self, name) <= 99 for name in self._two_digit_fields):
            raise ValueError(f"no two-digit encoding for {self!r}")

    @abstractmethod
    def resolve(self, today: date) -> tuple[date, date]:
        """The Asia/Taipei calendar days asked, (start, end exclusive), for the turn's ``today``.

        Raises:
            UnreadableDate: the date names no real day near ``today``, or is ``Unreadable``.
        """

    def spans(self, today: date) -> tuple[tuple[date, date], ...]:
        """The day spans asked, in order: one (``resolve``), or two apart for ``Both``."""
        return (self.resolve(today),)

    @abstractmethod
    def encode(self) -> str:
        """This date in the boundary grammar (module docstring): ``DateSpec.parse(encode()) == self``."""

    @staticmethod
    def parse(text: str) -> DateSpec:
        """Read the boundary grammar (module docstring) back into a DateSpec.

        Raises:
            UnreadableDate: the text is not the grammar (a tampered or unknown value).
        """
        return _parse(text.strip())


def _span(start: date, days: int = 1) -> tuple[date, date]:
    return start, start + timedelta(days=days)


def _monday(today: date, weeks: int = 0) -> date:
    return today - timedelta(days=today.weekday()) + timedelta(days=7 * weeks)


def _month_start(today: date, months: int) -> date:
    """The first day of the month ``months`` from today's."""
    first = today.replace(day=1)
    for _ in range(abs(months)):
        first = (first + timedelta(days=32) if months > 0 else first - timedelta(days=1)).replace(day=1)
    return first


def _month_span(year: int, month: int) -> tuple[date, date]:
    start = date(year, month, 1)
    return start, (start + timedelta(days=32)).replace(day=1)


def _nearest(today: date, spans: list[tuple[date, date]]) -> tuple[date, date]:
    """The span nearest to today (one containing today first; a tie goes to the future one)."""
    def distance(span: tuple[date, date]) -> tuple[int, int]:
        start, end = span
        if start <= today < end:
            return 0, 0
        if start > today:
            return (start - today).days, 0
        return (today - end).days + 1, 1
    if not spans:
        raise UnreadableDate("no such day near today")
    return min(spans, key=distance)


def _dates(year: int, month: int, day: int) -> list[date]:
    """The real dates month/day in year-1 … year+1."""
    found = []
    for candidate_year in (year - 1, year, year + 1):
        try:
            found.append(date(candidate_year, month, day))
        except ValueError:
            continue
    return found


def coming_day_of_month(day: int, today: date) -> date:
    """A day of the month said without a month (25號, 廿五號): this month's day when it has not
    passed (today counts), else the next month that has that day. Never silently a past day.

    Args:
        day: 1–31.
        today: the Asia/Taipei calendar day of the turn.
    Returns:
        On 2026-12-01: 25 → 2026-12-25, 1 → 2026-12-01 (today). On 2026-12-26: 25 → 2027-01-25.
        On 2027-01-31: 30 → 2027-03-30 (February has no 30th).
    Raises:
        UnreadableDate: a day outside 1–31.
    Source: README, the offline router's dates (a bare day is the coming one; 上個月22號 says the past
    explicitly).
    """
    if not 1 <= day <= 31:
        raise UnreadableDate(f"no day {day} in any month")
    first = today.replace(day=1)
    for _ in range(3):
        try:
            candidate = first.replace(day=day)
        except ValueError:
            candidate = None
        if candidate is not None and candidate >= today:
            return candidate
        first = (first + timedelta(days=32)).replace(day=1)
    raise UnreadableDate(f"no day {day} soon")  # unreachable: two months in a row have every day ≤ 31


#: The Taiwan calendar's categories of named days: days off (public), the optional 軍人節, and the
#: observances that are working days (植樹節, 婦女節, 國父誕辰紀念日 …).
_NAMED_CATEGORIES = ("public", "optional", "workday")


@functools.lru_cache(maxsize=16)
def tw_calendar(year: int, named: bool = False) -> tuple[tuple[date, str], ...]:
    """Taiwan holidays of year-1 … year+1 with their zh_TW names (the holidays package), by day.

    Args:
        year: the middle year.
        named: False: public holidays only (the days off); True: every named day (_NAMED_CATEGORIES).
    """
    # holidays, like cn2an and lunardate, loads on first use, not at import: a cold start answering
    # a fixed entry reads no date (README, Benchmarks: P1 cold start).
    import holidays

    found = holidays.country_holidays("TW", years=(year - 1, year, year + 1), language="zh_TW",
                                      categories=_NAMED_CATEGORIES if named else ("public",))
    return tuple(sorted(found.items()))


# -- days and weeks --------------------------------------------------------------------------------

#: A relative day's encoding, by offset.
_DAY_NAMES = {0: "today", 1: "tomorrow", 2: "day_after_tomorrow", 3: "three_days_later", -1: "yesterday",
              -2: "day_before_yesterday", -3: "three_days_ago"}


@dataclass(frozen=True)
class RelativeDay(DateSpec):
    """Today + ``offset`` days (−3 … 3: 大前天 … 大後天)."""

    offset: int

    def __post_init__(self) -> None:
        if self.offset not in _DAY_NAMES:
            raise ValueError(f"no relative day {self.offset}")

    def resolve(self, today: date) -> tuple[date, date]:
        return _span(today + timedelta(days=self.offset))

    def encode(self) -> str:
        return _DAY_NAMES[self.offset]


@dataclass(frozen=True)
class Days(DateSpec):
    """Two relative days said together (明天跟後天, 今天和後天): both, and every day between, in
    either order."""

    first: RelativeDay
    last: RelativeDay

    def resolve(self, today: date) -> tuple[date, date]:
        spans = [self.first.resolve(today), self.last.resolve(today)]
        return min(start for start, _ in spans), max(end for _, end in spans)

    def encode(self) -> str:
        return f"days:{self.first.encode()}/{self.last.encode()}"


#: Week offsets with a word of their own in the encoding.
_WEEK_WORDS = {0: "this", 1: "next", -1: "last"}


@dataclass(frozen=True)
class Week(DateSpec):
    """The Monday-to-Sunday week ``weeks`` from this one, or only its Saturday and Sunday.

    這週末 on a Sunday is the weekend in progress (this week's Saturday and Sunday).
    """

    weeks: int
    weekend: bool = False

    def resolve(self, today: date) -> tuple[date, date]:
        monday = _monday(today, self.weeks)
        return _span(monday + timedelta(days=5), 2) if self.weekend else _span(monday, 7)

    def encode(self) -> str:
        word = _WEEK_WORDS.get(self.weeks)
        if word is None:
            return f"week_offset:{self.weeks}/{'weekend' if self.weekend else 'week'}"
        if self.weekend:
            return "weekend" if self.weeks == 0 else f"{word}_weekend"
        return f"{word}_week"


@dataclass(frozen=True)
class Weekday(DateSpec):
    """A weekday (``day`` 0 = Monday … 6 = Sunday) of the week ``weeks`` from this one; with ``weeks``
    None the coming one (today counts)."""

    day: int
    weeks: int | None = None

    def __post_init__(self) -> None:
        if not 0 <= self.day <= 6:
            raise ValueError(f"no weekday {self.day}")

    def resolve(self, today: date) -> tuple[date, date]:
        if self.weeks is None:
            return _span(today + timedelta(days=(self.day - today.weekday()) % 7))
        return _span(_monday(today, self.weeks) + timedelta(days=self.day))

    def encode(self) -> str:
        weekend_day = {5: "saturday", 6: "sunday"}.get(self.day)
        if self.weeks is None:
            return weekend_day or f"weekday:{self.day}"
        if self.weeks == 1 and weekend_day:
            return f"next_{weekend_day}"
        word = _WEEK_WORDS.get(self.weeks)
        return f"{word}_weekday:{self.day}" if word else f"week_offset:{self.weeks}/{self.day}"


# -- written days and months -----------------------------------------------------------------------

@dataclass(frozen=True)
class MonthDay(DateSpec):
    """A month and day (12/5: the nearest such day; 2026/12/5: that year's). An impossible one
    (2/30, 13/1) is read as written and raises at ``resolve``."""

    month: int
    day: int
    year: int | None = None

    _two_digit_fields = ("month", "day")

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.year is not None and not 1000 <= self.year <= 9999:
            raise ValueError(f"no four-digit encoding for year {self.year}")

    def resolve(self, today: date) -> tuple[date, date]:
        if self.year is None:
            return _nearest(today, [_span(day) for day in _dates(today.year, self.month, self.day)])
        try:
            return _span(date(self.year, self.month, self.day))
        except ValueError as exc:
            raise UnreadableDate(f"no such day: {self.encode()!r}") from exc

    def encode(self) -> str:
        if self.year is None:
            return f"md:{self.month:02d}-{self.day:02d}"
        return f"{self.year:04d}-{self.month:02d}-{self.day:02d}"


@dataclass(frozen=True)
class Span(DateSpec):
    """Calendar days given whole, start to end (exclusive): a postback's or the model's range."""

    start: date
    end: date

    def resolve(self, today: date) -> tuple[date, date]:
        if self.end <= self.start:
            raise UnreadableDate(f"the end of {self.encode()!r} is not after its start")
        return self.start, self.end

    def encode(self) -> str:
        return f"{self.start.isoformat()}/{self.end.isoformat()}"


@dataclass(frozen=True)
class Month(DateSpec):
    """A whole month by its number (1月, 年底 = 12): the nearest one."""

    month: int

    _two_digit_fields = ("month",)

    def resolve(self, today: date) -> tuple[date, date]:
        if not 1 <= self.month <= 12:
            raise UnreadableDate(f"no month {self.month}")
        return _nearest(today, [_month_span(year, self.month) for year in (today.year - 1, today.year, today.year + 1)])

    def encode(self) -> str:
        return f"month:{self.month:02d}"


@dataclass(frozen=True)
class RelativeMonth(DateSpec):
    """The month ``months`` from this one: 上個月 −1, 這個月 0, 下個月 1."""

    months: int

    def __post_init__(self) -> None:
        if self.months not in _WEEK_WORDS:
            raise ValueError(f"no relative month {self.months}")

    def resolve(self, today: date) -> tuple[date, date]:
        first = _month_start(today, self.months)
        return first, _month_start(first, 1)

    def encode(self) -> str:
        return f"{_WEEK_WORDS[self.months]}_month"


@dataclass(frozen=True)
class MonthPart(DateSpec):
    """Early (days 1–10), middle (11–20) or late (21 to the end) in a month: 下個月初, 月中, 12月底."""

    month: Month | RelativeMonth
    part: Part

    def __post_init__(self) -> None:
        if self.part not in _PART_DAYS:
            raise ValueError(f"no month part {self.part!r}")

    def resolve(self, today: date) -> tuple[date, date]:
        first_day, after = self.month.resolve(today)
        start, end = _PART_DAYS[self.part]
        return first_day.replace(day=start), first_day.replace(day=end) if end else after

    def encode(self) -> str:
        which = _WEEK_WORDS[self.month.months] if isinstance(self.month, RelativeMonth) else f"{self.month.month:02d}"
        return f"month_part:{which}/{self.part}"


@dataclass(frozen=True)
class DayOfMonth(DateSpec):
    """A day of a relative month (上個月22號, 下個月3號), or with ``month`` None the coming day DD
    (25號: see ``coming_day_of_month``)."""

    day: int
    month: RelativeMonth | None = None

    _two_digit_fields = ("day",)

    def resolve(self, today: date) -> tuple[date, date]:
        if self.month is None:
            return _span(coming_day_of_month(self.day, today))
        try:
            return _span(self.month.resolve(today)[0].replace(day=self.day))
        except ValueError as exc:
            raise UnreadableDate(f"no such day: {self.encode()!r}") from exc

    def encode(self) -> str:
        if self.month is None:
            return f"day:{self.day:02d}"
        return f"{_WEEK_WORDS[self.month.months]}_month_day:{self.day:02d}"


# -- holidays --------------------------------------------------------------------------------------

def _lantern_spans(today: date) -> list[tuple[date, date]]:
    """元宵 (lunar 1/15): the calendar's first 春節 day of each year + 14 days."""
    firsts: dict[int, date] = {}
    for day, title in tw_calendar(today.year):
        if title == "春節":
            firsts.setdefault(day.year, day)
    return [_span(first + timedelta(days=14)) for first in sorted(firsts.values())]


def _mothers_day_spans(today: date) -> list[tuple[date, date]]:
    """母親節: the second Sunday of May (Taiwan observes the international date)."""
    return [_span(date(year, 5, 1) + timedelta(days=(6 - date(year, 5, 1).weekday()) % 7 + 7))
            for year in (today.year - 1, today.year, today.year + 1)]


def _calendar_spans(name: str, today: date) -> list[tuple[date, date]]:
    """Each occurrence of a calendar holiday as a span of consecutive days (make-up days included;
    ``lunar_new_year``: the eve and every 春節 day, 補假 too)."""
    wanted: tuple[str, ...] = ("農曆除夕", "春節") if name == "lunar_new_year" else (name,)
    days = [day for day, title in tw_calendar(today.year, named=True) if any(word in title for word in wanted)
            and (name == "lunar_new_year" or "補假" not in title)]
    spans: list[tuple[date, date]] = []
    for day in days:
        if spans and spans[-1][1] >= day:  # consecutive, or within the block
            spans[-1] = (spans[-1][0], day + timedelta(days=1))
        else:
            spans.append((day, day + timedelta(days=1)))
    return spans


#: LOCAL's computed holidays, by name; any other name is the Taiwan calendar's.
_COMPUTED: dict[str, Callable[[date], list[tuple[date, date]]]] = {
    "lantern": _lantern_spans, "mothers_day": _mothers_day_spans}


@dataclass(frozen=True)
class Holiday(DateSpec):
    """A named holiday, the nearest occurrence: a Taiwan calendar name (中秋節, 農曆除夕, 植樹節),
    ``lunar_new_year``, ``lantern`` or ``mothers_day``."""

    name: str

    def __post_init__(self) -> None:
        if not self.name or self.name != self.name.strip() or "|" in self.name:
            raise ValueError(f"no encoding for holiday {self.name!r}")

    def resolve(self, today: date) -> tuple[date, date]:
        spans = _COMPUTED.get(self.name, functools.partial(_calendar_spans, self.name))(today)
        return _nearest(today, spans)

    def encode(self) -> str:
        return f"holiday:{self.name}"


@dataclass(frozen=True)
class LongWeekend(DateSpec):
    """A holiday with the weekend days and calendar holidays next to it (元旦連假 2027: Friday 1/1 to
    Sunday 1/3)."""

    around: MonthDay | Holiday

    def resolve(self, today: date) -> tuple[date, date]:
        start, end = self.around.resolve(today)
        off = {day for day, _ in tw_calendar(start.year)}

        def day_off(day: date) -> bool:
            return day.weekday() >= 5 or day in off
        while day_off(end):
            end += timedelta(days=1)
        while day_off(start - timedelta(days=1)):
            start -= timedelta(days=1)
        return start, end

    def encode(self) -> str:
        return f"long_weekend:{self.around.encode()}"


def _new_year_firsts(today: date) -> list[date]:
    """The first day of each Lunar New Year near today: a 春節 day the day before which is none."""
    calendar = tw_calendar(today.year)
    spring = {day for day, title in calendar if title == "春節"}
    return sorted(day for day in spring if day - timedelta(days=1) not in spring)


@dataclass(frozen=True)
class NewYearDay(DateSpec):
    """The Nth day of the Lunar New Year (大年初五: N = 5), the nearest; N is 1–15."""

    day: int

    _two_digit_fields = ("day",)

    def resolve(self, today: date) -> tuple[date, date]:
        if not 1 <= self.day <= 15:
            raise UnreadableDate(f"not a lunar new year day: {self.day}")
        return _nearest(today, [_span(first + timedelta(days=self.day - 1)) for first in _new_year_firsts(today)])

    def encode(self) -> str:
        return f"cny_day:{self.day:02d}"


# -- the lunar calendar ----------------------------------------------------------------------------

def _solar(year: int, month: int, day: int, leap: bool = False) -> date | None:
    """A lunar day's solar date (``lunardate``), or None when that lunar year has no such day."""
    from lunardate import LunarDate  # on first use (see tw_calendar)

    try:
        return LunarDate(year, month, day, leap).to_solar_date()
    except ValueError:
        return None


def _lunar_of(day: date) -> Any:
    """``lunardate``'s lunar date of a solar day."""
    from lunardate import LunarDate

    try:
        return LunarDate.from_solar_date(day.year, day.month, day.day)
    except ValueError as exc:  # outside lunardate's table (1900–2099)
        raise UnreadableDate(f"no lunar date for {day}") from exc


@dataclass(frozen=True)
class LunarDate(DateSpec):
    """A lunar month and day (農曆十一月十五, 臘月初八; ``leap``: 閏六月), the nearest such day (the
    lunar year before, of, or after today's). Raises at ``resolve`` when no nearby year has it."""

    month: int
    day: int
    leap: bool = False

    _two_digit_fields = ("month", "day")

    def resolve(self, today: date) -> tuple[date, date]:
        this_year = _lunar_of(today).year
        days = [found for year in (this_year - 1, this_year, this_year + 1)
                if (found := _solar(year, self.month, self.day, self.leap)) is not None]
        return _nearest(today, [_span(found) for found in days])

    def encode(self) -> str:
        return f"lunar:{'L' if self.leap else ''}{self.month:02d}-{self.day:02d}"


@dataclass(frozen=True)
class LunarDay(DateSpec):
    """The coming lunar day DD of a month (農曆十五, 農曆初一; today counts)."""

    day: int

    _two_digit_fields = ("day",)

    def resolve(self, today: date) -> tuple[date, date]:
        for ahead in range(62):  # two lunar months at most: every lunar month has 29 or 30 days
            candidate = today + timedelta(days=ahead)
            if _lunar_of(candidate).day == self.day:
                return _span(candidate)
        raise UnreadableDate(f"no lunar day {self.day} soon")

    def encode(self) -> str:
        return f"lunar_day:{self.day:02d}"


@dataclass(frozen=True)
class LunarMonth(DateSpec):
    """A whole lunar month (農曆七月; never its leap month), the nearest: its first day to the next
    month's."""

    month: int

    _two_digit_fields = ("month",)

    def resolve(self, today: date) -> tuple[date, date]:
        this_year = _lunar_of(today).year
        spans = []
        for year in (this_year - 1, this_year, this_year + 1):
            first = _solar(year, self.month, 1)
            last = _solar(year, self.month, 30) or _solar(year, self.month, 29)
            if first is not None and last is not None:
                spans.append((first, last + timedelta(days=1)))
        return _nearest(today, spans)

    def encode(self) -> str:
        return f"lunar_month:{self.month:02d}"


# -- two dates -------------------------------------------------------------------------------------

def _one_side(spec: DateSpec) -> DateSpec:
    """A side of Both or Range: any one date (its encoding holds no ``|``)."""
    if isinstance(spec, (Both, Range)):
        raise ValueError("a side of two dates is one date")
    return spec


@dataclass(frozen=True)
class Both(DateSpec):
    """Two dates (明天或週六, 聖誕節跟跨年): one range covering both, whose ``spans`` are the two apart,
    so a search can leave out the days between."""

    first: DateSpec
    second: DateSpec

    def __post_init__(self) -> None:
        _one_side(self.first)
        _one_side(self.second)

    def resolve(self, today: date) -> tuple[date, date]:
        spans = self.spans(today)
        return min(start for start, _ in spans), max(end for _, end in spans)

    def spans(self, today: date) -> tuple[tuple[date, date], ...]:
        return tuple(sorted((self.first.resolve(today), self.second.resolve(today))))

    def encode(self) -> str:
        return f"both:{self.first.encode()}|{self.second.encode()}"


#: How far into the next year a range's bare month-day end may fall (12/28到1/3, not 12/7到12/5).
_RANGE_NEXT_YEAR_DAYS = 92


def _month_day_without_year(spec: DateSpec) -> bool:
    return isinstance(spec, MonthDay) and spec.year is None


@dataclass(frozen=True)
class Range(DateSpec):
    """From the first date's start to the last's end (下週一到週三, 12/5到12/7); never re-ordered.

    A last end said without its own anchor is the first such day from the start on: a bare weekday
    (週五到週一), a bare day of the month (12月28號到3號), and between two month-days without a year
    (12/28到1/3, 12/5到聖誕節) the month-day within ``_RANGE_NEXT_YEAR_DAYS`` days of the next year.

    Raises (at ``resolve``):
        UnreadableDate: the end is before the start (下週五到週三, 12/7到12/5).
    """

    first: DateSpec
    last: DateSpec

    def __post_init__(self) -> None:
        _one_side(self.first)
        _one_side(self.last)

    def resolve(self, today: date) -> tuple[date, date]:
        start = self.first.resolve(today)[0]
        last = self.last
        if isinstance(last, Weekday) and last.weeks is None:
            return start, start + timedelta(days=(last.day - start.weekday()) % 7 + 1)
        if isinstance(last, DayOfMonth) and last.month is None:
            return start, coming_day_of_month(last.day, start) + timedelta(days=1)
        if _month_day_without_year(self.first) and _month_day_without_year(last):
            assert isinstance(last, MonthDay)
            ends = [day for day in _dates(start.year, last.month, last.day) if day >= start]
            if ends and min(ends).year > start.year and (min(ends) - start).days > _RANGE_NEXT_YEAR_DAYS:
                ends = []
            if not ends:
                raise UnreadableDate(f"range end before its start: {self.encode()!r}")
            return start, min(ends) + timedelta(days=1)
        final, end = last.resolve(today)
        if final < start:
            raise UnreadableDate(f"range end before its start: {self.encode()!r}")
        return start, end

    def encode(self) -> str:
        return f"range:{self.first.encode()}|{self.last.encode()}"


@dataclass(frozen=True)
class Unreadable(DateSpec):
    """The text names a date that is not read (12/1/3, 下下下週, 大大後天, 護士節): never "all dates"."""

    def resolve(self, today: date) -> tuple[date, date]:
        raise UnreadableDate("the date was not read")

    def encode(self) -> str:
        return "unreadable"


# -- the grammar, read back ------------------------------------------------------------------------

#: Encodings that are a whole value.
_WORDS: dict[str, DateSpec] = {
    **{name: RelativeDay(offset) for offset, name in _DAY_NAMES.items()},
    **{Week(weeks, weekend).encode(): Week(weeks, weekend) for weeks in _WEEK_WORDS for weekend in (False, True)},
    **{RelativeMonth(months).encode(): RelativeMonth(months) for months in _WEEK_WORDS},
    "saturday": Weekday(5), "sunday": Weekday(6), "next_saturday": Weekday(5, 1), "next_sunday": Weekday(6, 1),
    "unreadable": Unreadable(),
}
_TWO = r"(\d{1,2})"
_ISO = re.compile(r"(\d{4})-(\d{2})-(\d{2})")


def _number(pattern: str, text: str) -> tuple[int, ...]:
    found = re.fullmatch(pattern, text)
    if found is None:
        raise UnreadableDate(f"not a date: {text!r}")
    return tuple(int(group) for group in found.groups())


def _one(pattern: str, text: str) -> int:
    return _number(pattern, text)[0]


def _two_sides(rest: str) -> tuple[DateSpec, DateSpec]:
    first, bar, second = rest.partition("|")
    if not bar:
        raise UnreadableDate(f"not two dates: {rest!r}")
    return _parse(first), _parse(second)


def _weekday_in(weeks: int | None) -> Callable[[str], DateSpec]:
    return lambda rest: Weekday(_one(r"([0-6])", rest), weeks)


def _day_in(months: int) -> Callable[[str], DateSpec]:
    return lambda rest: DayOfMonth(_one(_TWO, rest), RelativeMonth(months))


def _week_offset(rest: str) -> DateSpec:
    weeks, _, part = rest.partition("/")
    offset = _one(r"(-?\d{1,3})", weeks)
    if part in ("week", "weekend"):
        return Week(offset, part == "weekend")
    return Weekday(_one(r"([0-6])", part), offset)


def _month_part(rest: str) -> DateSpec:
    which, _, part = rest.partition("/")
    relative = {word: months for months, word in _WEEK_WORDS.items()}
    month: Month | RelativeMonth = (RelativeMonth(relative[which]) if which in relative
                                    else Month(_one(_TWO, which)))
    if part not in _PART_DAYS:
        raise UnreadableDate(f"no month part {part!r}")
    return MonthPart(month, cast(Part, part))


def _days(rest: str) -> DateSpec:
    first, _, last = rest.partition("/")
    first_day, last_day = _WORDS.get(first), _WORDS.get(last)
    if not (isinstance(first_day, RelativeDay) and isinstance(last_day, RelativeDay)):
        raise UnreadableDate(f"not two relative days: {rest!r}")
    return Days(first_day, last_day)


def _long_weekend(rest: str) -> DateSpec:
    around = _parse(rest)
    if not isinstance(around, (MonthDay, Holiday)):
        raise UnreadableDate(f"no long weekend around {rest!r}")
    return LongWeekend(around)


def _lunar(rest: str) -> DateSpec:
    month, day = _number(rf"{_TWO}-{_TWO}", rest.removeprefix("L"))
    return LunarDate(month, day, rest.startswith("L"))


def _month_day(rest: str) -> MonthDay:
    month, day = _number(rf"{_TWO}-{_TWO}", rest)
    return MonthDay(month, day)


def _md_range(rest: str) -> DateSpec:
    first, _, second = rest.partition("/")
    return Range(_month_day(first), _month_day(second))


#: ``<kind>:<rest>`` encodings, by kind.
_KINDS: dict[str, Callable[[str], DateSpec]] = {
    "md": _month_day,
    "month": lambda rest: Month(_one(_TWO, rest)),
    "day": lambda rest: DayOfMonth(_one(_TWO, rest)),
    **{f"{word}_month_day": _day_in(months) for months, word in _WEEK_WORDS.items()},
    "weekday": _weekday_in(None), "this_weekday": _weekday_in(0), "next_weekday": _weekday_in(1),
    "last_weekday": _weekday_in(-1), "week_offset": _week_offset, "month_part": _month_part, "days": _days,
    "holiday": Holiday, "long_weekend": _long_weekend, "lunar": _lunar,
    "lunar_day": lambda rest: LunarDay(_one(_TWO, rest)),
    "lunar_month": lambda rest: LunarMonth(_one(_TWO, rest)),
    "cny_day": lambda rest: NewYearDay(_one(_TWO, rest)),
    "both": lambda rest: Both(*_two_sides(rest)), "range": lambda rest: Range(*_two_sides(rest)),
    "mdrange": _md_range,
}


def _iso_spec(text: str) -> DateSpec:
    """``YYYY-MM-DD`` (a MonthDay with its year) or ``YYYY-MM-DD/YYYY-MM-DD`` (a Span)."""
    first, slash, second = text.partition("/")
    if not slash:
        year, month, day = _number(_ISO.pattern, first)
        return MonthDay(month, day, year)
    try:
        return Span(date.fromisoformat(first), date.fromisoformat(second))
    except ValueError as exc:
        raise UnreadableDate(f"not a date range: {text!r}") from exc


def _parse(text: str) -> DateSpec:
    if text in _WORDS:
        return _WORDS[text]
    if _ISO.match(text):
        return _iso_spec(text)
    kind, colon, rest = text.partition(":")
    reader = _KINDS.get(kind) if colon else None
    if reader is None:
        raise UnreadableDate(f"not a date: {text!r}")
    try:
        return reader(rest)
    except ValueError as exc:  # UnreadableDate included; a field out of its encodable range
        raise UnreadableDate(f"not a date: {text!r}") from exc


def date_arg(value: str | None) -> DateSpec | None:
    """A date carried as text across a boundary (postback data, a model tool argument) → a DateSpec;
    None when there is none; ``Unreadable()`` when the text is not the grammar, so the turn answers
    「我看不懂這個日期」 with choices instead of failing."""
    if not value:
        return None
    try:
        return DateSpec.parse(value)
    except UnreadableDate:
        return Unreadable()


def encoded(value: object) -> object:
    """An argument as a boundary record holds it: a DateSpec's encoding, any other value as it is."""
    return value.encode() if isinstance(value, DateSpec) else value
