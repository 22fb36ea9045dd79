"""Dates of papers: reading them from sources, date filters, date order, date histograms.

Engine-free, stdlib only (:mod:`datetime`, :mod:`email.utils`). A paper's
dates are calendar days in UTC (arXiv stamps its versions in GMT, and shows
"Submitted 14 Mar 2025" for the first version's day):

* :func:`parse_day` reads the dates sources give: ISO ``2025-03-14``, ISO
  timestamps (``2025-03-14T23:30:00-05:00`` is the UTC day 2025-03-15),
  RFC 2822 (``Mon, 2 Apr 2007 19:18:42 GMT``, the arXiv OAI ``versions``),
  and ``2025-03`` (the month's first day).
* :class:`DateFilter` is a range of days, inclusive at both ends; a paper
  matches when its submitted day is known and lies in it (a paper with only
  a year never matches a date filter: use the year filter for those).
* :func:`sort_keys` places papers in the ``newest`` / ``oldest`` orders:
  by submitted day; a paper with only a year follows every dated paper of
  its year in both orders (its day is unknown, so it is placed after the
  papers known to be of that year); a paper with neither comes last.
* :func:`histogram` bins days by years, months or days, chosen by the span
  of the hits (:func:`bin_unit`).
"""

from __future__ import annotations

import calendar
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import date, datetime, timedelta, timezone

from searchengine.errors import QueryError

#: Earliest plausible year of a paper; a source's earlier year is a typo.
FIRST_YEAR = 1900

_ISO_DAY = re.compile(r"(\d{4})-(\d{2})-(\d{2})")
_ISO_MONTH = re.compile(r"(\d{4})-(\d{2})")
_ISO_YEAR = re.compile(r"(\d{4})")
_ISO_STAMP = re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}.*")
_RANGE = ".."


def last_plausible_year(today: date | None = None) -> int:
    """The latest year a paper may carry: next year (a preprint of December is
    sometimes dated by its journal's next volume)."""
    return (today or utc_today()).year + 1


def plausible_year(year: int, today: date | None = None) -> bool:
    """Whether ``year`` can be a paper's (:data:`FIRST_YEAR` to next year)."""
    return FIRST_YEAR <= year <= last_plausible_year(today)


def utc_today() -> date:
    """Today's date in UTC (the day relative filters count back from)."""
    return datetime.now(timezone.utc).date()


def parse_day(text: str) -> date:
    """The UTC calendar day a source's date names.

    Accepts ``YYYY-MM-DD``, ``YYYY-MM`` (the month's first day), an ISO 8601
    timestamp (``2025-03-14T10:00:00Z``, with any offset, turned to UTC; one
    without an offset is taken as UTC) and RFC 2822 (``Mon, 2 Apr 2007
    19:18:42 GMT``).

    Raises:
        ValueError: ``text`` is none of these, or not a real day
            (``2025-02-30``); the message quotes it.
    """
    raw = text.strip()
    try:
        if _ISO_DAY.fullmatch(raw):
            return date.fromisoformat(raw)
        if _ISO_MONTH.fullmatch(raw):
            return date.fromisoformat(raw + "-01")
        if _ISO_STAMP.fullmatch(raw):
            stamp = datetime.fromisoformat(raw.replace("Z", "+00:00").replace("z", "+00:00"))
            if stamp.tzinfo is not None:
                stamp = stamp.astimezone(timezone.utc)
            return stamp.date()
        if "," in raw or re.search(r"[A-Za-z]{3}", raw):
            from email.utils import parsedate_to_datetime

            stamp = parsedate_to_datetime(raw)
            if stamp.tzinfo is not None:
                stamp = stamp.astimezone(timezone.utc)
            return stamp.date()
    except (ValueError, TypeError, IndexError, OverflowError):
        pass
    raise ValueError(f"date {raw!r} is not a date (YYYY-MM-DD, YYYY-MM, an ISO timestamp or RFC 2822)")


def iso(day: date | None) -> str | None:
    """``day`` as ``YYYY-MM-DD``, or ``None``."""
    return None if day is None else day.isoformat()


def from_iso(text: str | None) -> date | None:
    """The day a stored ``YYYY-MM-DD`` names, ``None`` for none (or an unreadable value)."""
    if not text:
        return None
    try:
        return date.fromisoformat(str(text)[:10])
    except ValueError:
        return None


def shown(day: date) -> str:
    """``day`` as arXiv writes it: ``14 Mar 2025``."""
    return f"{day.day} {day.strftime('%b')} {day.year}"


@dataclass(frozen=True)
class DateFilter:
    """Days ``low..high`` inclusive (``None``: that end open); ``text`` as written, for messages."""

    low: date | None
    high: date | None
    text: str = ""

    def matches(self, day: date | None) -> bool:
        """True when ``day`` lies in the range (never for an unknown day)."""
        if day is None:
            return False
        return (self.low is None or day >= self.low) and (self.high is None or day <= self.high)


def _period(text: str, what: str) -> tuple[date, date]:
    """The first and last day of ``2025``, ``2025-03`` or ``2025-03-14``.

    Raises:
        QueryError: naming ``text`` and ``what`` it was given as.
    """
    raw = text.strip()
    try:
        if _ISO_DAY.fullmatch(raw):
            day = date.fromisoformat(raw)
            return day, day
        if _ISO_MONTH.fullmatch(raw):
            first = date.fromisoformat(raw + "-01")
            return first, first.replace(day=calendar.monthrange(first.year, first.month)[1])
        if _ISO_YEAR.fullmatch(raw) and int(raw) >= 1:
            return date(int(raw), 1, 1), date(int(raw), 12, 31)
    except ValueError:
        pass
    raise QueryError(f"{what} {raw!r} is not a date (use YYYY-MM-DD, YYYY-MM or YYYY, e.g. 2025-03-14)")


def parse_since(text: str) -> DateFilter:
    """``--since`` / ``since=``: from the first day of ``text`` on (``2025-03`` → 2025-03-01).

    Raises:
        QueryError: ``text`` is not a date.
    """
    return DateFilter(_period(text, "since date")[0], None, f"since {text.strip()}")


def parse_until(text: str) -> DateFilter:
    """``--until`` / ``until=``: up to the last day of ``text`` (``2025-06`` → 2025-06-30).

    Raises:
        QueryError: ``text`` is not a date.
    """
    return DateFilter(None, _period(text, "until date")[1], f"until {text.strip()}")


def check_order(since: DateFilter | None, until: DateFilter | None) -> None:
    """Refuse a ``since`` that starts after ``until`` ends: a range given
    backwards, which would otherwise find nothing without saying why.

    Raises:
        QueryError: naming both values.
    """
    if since is not None and until is not None and since.low and until.high and since.low > until.high:
        raise QueryError(
            f"the dates are reversed: '{since.text}' starts after '{until.text}' ends (swap the two dates)"
        )


def parse_range(text: str) -> DateFilter:
    """A ``date:`` value: ``2025-03-14``, ``2025-03`` or ``2025`` (that whole
    period), ``2025-03..2025-06`` (March 1 to June 30), ``2025-03..`` and
    ``..2025-06`` (open ends). Both ends inclusive.

    Raises:
        QueryError: an end is not a date, or the range is reversed.
    """
    raw = text.strip()
    if _RANGE not in raw:
        first, last = _period(raw, "date")
        return DateFilter(first, last, raw)
    start, _, end = raw.partition(_RANGE)
    if not start.strip() and not end.strip():
        raise QueryError(f"date range {raw!r} has no date (write e.g. 2025-03..2025-06)")
    low = _period(start, "date")[0] if start.strip() else None
    high = _period(end, "date")[1] if end.strip() else None
    if low is not None and high is not None and low > high:
        raise QueryError(f"date range {raw!r} is reversed (did you mean {end.strip()}..{start.strip()}?)")
    return DateFilter(low, high, raw)


def intersection(ranges: Iterable[DateFilter]) -> tuple[date | None, date | None]:
    """``(low, high)`` of the days every one of ``ranges`` allows (date filters
    AND): one range for an engine to search instead of several. ``low > high``
    means no day."""
    lows = [r.low for r in ranges if r.low is not None]
    highs = [r.high for r in ranges if r.high is not None]
    return (max(lows) if lows else None), (min(highs) if highs else None)


#: Relative date choices of the web page: name → days back from today (UTC).
PAST = {"week": 7, "month": 30, "year": 365}


def parse_past(name: str, today: date | None = None) -> DateFilter:
    """``past=week|month|year``: papers submitted in the last 7, 30 or 365
    days, today (UTC) included: from ``today - (N - 1) days`` to today (a
    paper dated after today is in no past period).

    Raises:
        QueryError: ``name`` is not one of :data:`PAST` (in any letter case).
    """
    key = name.strip()
    if not key.isascii() or key.lower() not in PAST:  # "K" (the Kelvin sign) lowers to "k"
        raise QueryError(f"past {name!r} is not one of {', '.join(PAST)}")
    key = key.lower()
    today = today or utc_today()
    return DateFilter(today - timedelta(days=PAST[key] - 1), today, f"past {key}")


def sort_keys(day: date | int | None, year: int | None) -> tuple[int | None, int | None]:
    """``(newest key, oldest key)`` of a paper: the larger newest key comes
    first in ``newest``, the smaller oldest key first in ``oldest``; ``None``
    (neither a day nor a year) comes last in both.

    ``day`` may be a :class:`date` or its day number (``toordinal``). A dated
    paper's keys are its day number (``date.toordinal``) times two
    (plus one for newest). A year-only paper is keyed as the first day of its
    year in newest and as the last in oldest, just after the dated papers of
    that day, so it follows every dated paper of its year in both orders.
    """
    if day:
        number = day if isinstance(day, int) else day.toordinal()
        return number * 2 + 1, number * 2
    if year is not None and 1 <= year <= 9999:
        return date(year, 1, 1).toordinal() * 2, date(year, 12, 31).toordinal() * 2 + 1
    return None, None


#: Histogram bin units, coarsest first.
UNITS = ("year", "month", "day")
#: Spans (days from the first hit's day to the last's) above which the
#: histogram bins by years, and by months: about three years and two months.
YEAR_SPAN_DAYS = 3 * 365
MONTH_SPAN_DAYS = 62


def bin_unit(first: date, last: date) -> str:
    """The histogram unit for hits from ``first`` to ``last``: ``year`` when
    they span more than :data:`YEAR_SPAN_DAYS`, ``month`` when more than
    :data:`MONTH_SPAN_DAYS`, else ``day``."""
    span = (last - first).days
    if span > YEAR_SPAN_DAYS:
        return "year"
    if span > MONTH_SPAN_DAYS:
        return "month"
    return "day"


def bin_start(day: date, unit: str) -> date:
    """The first day of the ``unit`` bin holding ``day``."""
    if unit == "year":
        return date(day.year, 1, 1)
    if unit == "month":
        return date(day.year, day.month, 1)
    return day


def next_bin(start: date, unit: str) -> date:
    """The first day of the bin after the one starting at ``start``."""
    if unit == "year":
        return date(start.year + 1, 1, 1)
    if unit == "month":
        return date(start.year + start.month // 12, start.month % 12 + 1, 1)
    return start + timedelta(days=1)


@dataclass
class DateHistogram:
    """Hits per period of their submitted day.

    Attributes:
        unit: ``year``, ``month`` or ``day`` (:func:`bin_unit`), ``None`` when no hit has a day.
        rows: ``[(first day of the bin, hits)]`` from the earliest hit's bin to
            the latest's, empty bins included.
        undated: hits without a submitted day.
    """

    unit: str | None
    rows: list[tuple[date, int]]
    undated: int = 0

    def to_dict(self) -> dict[str, object]:
        """``{"bin": unit, "rows": [["2025-03-01", 12], ...], "undated": n}``, as in JSON."""
        return {
            "bin": self.unit,
            "rows": [[start.isoformat(), count] for start, count in self.rows],
            "undated": self.undated,
        }


def histogram(counts: Mapping[date, int], undated: int = 0) -> DateHistogram:
    """The :class:`DateHistogram` of ``{day: hits}`` (days as :class:`date`)."""
    days = [day for day, count in counts.items() if count]
    if not days:
        return DateHistogram(None, [], undated)
    first, last = min(days), max(days)
    unit = bin_unit(first, last)
    binned: Counter[date] = Counter()
    for day, count in counts.items():
        binned[bin_start(day, unit)] += count
    return DateHistogram(unit, fill(binned, unit), undated)


def fill(binned: Mapping[date, int], unit: str) -> list[tuple[date, int]]:
    """``[(bin start, count)]`` from the first bin of ``binned`` to its last, empty bins as 0."""
    if not binned:
        return []
    rows: list[tuple[date, int]] = []
    start, end = min(binned), max(binned)
    while start <= end:
        rows.append((start, binned.get(start, 0)))
        start = next_bin(start, unit)
    return rows


def days_of(values: Iterable[int]) -> Counter[date]:
    """``{date: count}`` from day numbers (``date.toordinal``; 0 for none is skipped)."""
    counted = Counter(values)
    counted.pop(0, None)
    return Counter({date.fromordinal(number): count for number, count in counted.items()})
