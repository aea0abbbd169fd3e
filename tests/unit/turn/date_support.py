"""What a message's date asks, as calendar days: the date tests assert days, never a DateSpec's encoding."""
from __future__ import annotations

from datetime import date, timedelta

from shared.text import reading_form
from shared.turn.dates import read_date
from shared.turn.datespec import UnreadableDate

#: A date the text names but that resolves to no day (the reply asks again: 「我看不懂這個日期」).
NOT_READ = "not read"


def span(first: date, days: int = 1) -> tuple[date, date]:
    """``days`` calendar days from ``first``: (start, end exclusive)."""
    return first, first + timedelta(days=days)


def asked(text: str, today: date, *, apart: bool = False) -> tuple | str | None:
    """The days the message's date asks on ``today`` (Asia/Taipei): (start, end exclusive), or with
    ``apart`` each date of two said apart (明天或週六) as its own span; NOT_READ when it names a date
    that resolves to none; None when it names no date."""
    spec = read_date(reading_form(text))
    if spec is None:
        return None
    try:
        return spec.spans(today) if apart else spec.resolve(today)
    except UnreadableDate:
        return NOT_READ
