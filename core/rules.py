"""RRULE bodies: read strictly, checked against RFC 5545 before anything is evaluated, and
evaluated with a bound on work.

`parse_rule` is the one place a rule is accepted, for the API and the processor alike. It
takes the RRULE parts itself (dateutil's own reader lets `INTERVAL=0`, `BYMONTHDAY=0`,
`BYDAY=+60MO` or a month 13 through, which then loop forever or raise `IndexError` when
evaluated) and checks each against RFC 5545 section 3.3.10: the value ranges, the parts a
frequency allows, `COUNT` or `UNTIL` but not both, and that the calendar parts (`BYMONTH`,
`BYMONTHDAY`, `BYYEARDAY`) can meet on some day. Every failure is a `DocumentError` with
code `invalid_rrule` naming the part.

`evaluate` yields a rule's local wall times with a budget: dateutil searches internally,
and a rule that matches rarely (or never: an interval that skips every `BYDAY`, a weekday
that never meets a day of the month) makes it examine one period after another without
yielding, up to the year 9999. So the budget counts dateutil's own work: each period it
examines (a year, month, week or day of candidates), each instant it yields, and each step
of its time-of-day search (sub-daily rules with `BYHOUR`/`BYMINUTE` limits). dateutil has no
hook for that; `evaluate` runs dateutil's own generator with its two helpers (`_iterinfo`,
which builds each period's candidates, and `range`, which drives the search loops) rebound
to counting versions, so the engine is dateutil's, unchanged. One evaluation past its
budget raises `DocumentError("invalid_rrule")`.

Week numbers (`BYWEEKNO`) are RFC 5545's, not dateutil's: week 1 is the first week, starting
on `WKST` (Monday unless given), with at least four days in the year, so with `WKST=MO` they
are ISO 8601 week numbers (`date.isocalendar()`), and `-1` is a year's last week (52 or 53).
dateutil counts the last week of the year before from the wrong year (dateutil PR #1537,
open): `FREQ=YEARLY;BYWEEKNO=53;BYDAY=SU` yields 2022-01-02, in ISO week 52 of 2021. So the
counting helper replaces each year's week-number mask with one computed here (`_week_mask`),
for every `BYWEEKNO` value and `WKST`; dateutil still combines it with the other parts.
"""

from __future__ import annotations

import builtins
import calendar
import itertools
import re
import types
from collections.abc import Callable, Iterator
from datetime import UTC, date, datetime, timedelta
from typing import Any, NoReturn
from zoneinfo import ZoneInfo

import dateutil.rrule as dateutil_rrule
from dateutil.rrule import (
    DAILY,
    HOURLY,
    MINUTELY,
    MONTHLY,
    SECONDLY,
    WEEKLY,
    YEARLY,
    rrule,
    weekday,
)

from core.errors import DocumentError

# Periods examined plus instants yielded, per evaluation (see module doc). A daily series
# needs one of each per day; a series the budget does not reach now with needs anchoring.
MAX_STEPS = 100_000
# Iterations of dateutil's time-of-day search per evaluation (about a day of a secondly rule
# limited by BYHOUR costs 86,400; a minutely one limited by BYHOUR, 1,440).
MAX_SEARCH = 1_000_000
# Local `exdates` a series may list.
MAX_EXDATES = 1_000

_FREQS: dict[str, Any] = {
    "YEARLY": YEARLY,
    "MONTHLY": MONTHLY,
    "WEEKLY": WEEKLY,
    "DAILY": DAILY,
    "HOURLY": HOURLY,
    "MINUTELY": MINUTELY,
    "SECONDLY": SECONDLY,
}
_DAYS = ("MO", "TU", "WE", "TH", "FR", "SA", "SU")
_NUMBER = re.compile(r"[+-]?[0-9]{1,3}")
_COUNT = re.compile(r"[0-9]{1,9}")
_BYDAY = re.compile(r"([+-]?[0-9]{1,2})?(MO|TU|WE|TH|FR|SA|SU)")
_UNTIL = re.compile(r"([0-9]{8})(T[0-9]{6})?(Z?)")
# Part -> (least, greatest value): RFC 5545 section 3.3.10. BYSECOND stops at 59
# (Python has no leap second). BYEASTER (a dateutil extension: days from Easter Sunday)
# keeps the day inside Easter's own year, which is all dateutil can evaluate.
_RANGES = {
    "BYSECOND": (0, 59),
    "BYMINUTE": (0, 59),
    "BYHOUR": (0, 23),
    "BYMONTHDAY": (-31, 31),
    "BYYEARDAY": (-366, 366),
    "BYWEEKNO": (-53, 53),
    "BYMONTH": (1, 12),
    "BYSETPOS": (-366, 366),
    "BYEASTER": (-80, 250),
}
_NONZERO = ("BYMONTHDAY", "BYYEARDAY", "BYWEEKNO", "BYSETPOS")
# Parts RFC 5545 forbids with a frequency.
_NOT_WITH = {
    "BYWEEKNO": ("SECONDLY", "MINUTELY", "HOURLY", "DAILY", "WEEKLY", "MONTHLY"),
    "BYYEARDAY": ("DAILY", "WEEKLY", "MONTHLY"),
    "BYMONTHDAY": ("WEEKLY",),
}
_PARTS = ("FREQ", "INTERVAL", "COUNT", "UNTIL", "WKST", "BYDAY", *_RANGES)
# What a rule looks like, for a body that is not one (a schedule typed as words).
RULE_SHAPE = (
    "an RRULE is NAME=VALUE parts separated by ';', such as"
    " FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR;BYHOUR=9;BYMINUTE=30 (every weekday at 9:30)"
)


def parse_rule(body: str, start: datetime, tz: ZoneInfo) -> rrule:
    """`body` (one RRULE, optionally `RRULE:`-prefixed) as a dateutil rule from the naive
    local `start`. `UNTIL` may be UTC (`...Z`, read in `tz`), local, or a date (midnight)."""
    text = body.strip().upper().removeprefix("RRULE:")
    if "\n" in text or "DTSTART" in text:
        _invalid(body, "must be one RRULE body, without DTSTART")
    parts: dict[str, str] = {}
    for part in text.split(";"):
        name, equals, value = part.partition("=")
        if not equals or not value:
            _invalid(body, f"{part!r} is not NAME=VALUE: {RULE_SHAPE}")
        if name not in _PARTS:
            _invalid(body, f"{name!r} is not an RRULE part")
        if name in parts:
            _invalid(body, f"{name} is given twice")
        parts[name] = value
    freq = parts.get("FREQ")
    if freq not in _FREQS:
        _invalid(body, f"FREQ must be one of {', '.join(_FREQS)}")
    for name, freqs in _NOT_WITH.items():
        if name in parts and freq in freqs:
            _invalid(body, f"{name} is not allowed with FREQ={freq}")
    if "COUNT" in parts and "UNTIL" in parts:
        _invalid(body, "COUNT and UNTIL cannot both be given")
    kwargs: dict[str, Any] = {
        name.lower(): _numbers(body, name, value)
        for name, value in parts.items()
        if name in _RANGES
    }
    if "BYSETPOS" in parts and not any(p.startswith("BY") and p != "BYSETPOS" for p in parts):
        _invalid(body, "BYSETPOS needs another BY part to choose from")
    if "BYDAY" in parts:
        kwargs["byweekday"] = _weekdays(body, parts["BYDAY"], freq, parts)
    if "WKST" in parts:
        if parts["WKST"] not in _DAYS:
            _invalid(body, f"WKST must be one of {', '.join(_DAYS)}")
        kwargs["wkst"] = _DAYS.index(parts["WKST"])
    for name in ("INTERVAL", "COUNT"):
        if name in parts:
            if not _COUNT.fullmatch(parts[name]) or int(parts[name]) < 1:
                _invalid(body, f"{name} must be a whole number from 1 to 999999999")
            kwargs[name.lower()] = int(parts[name])
    if "UNTIL" in parts:
        kwargs["until"] = _until(body, parts["UNTIL"], tz)
    _check_calendar(body, kwargs)
    try:
        return rrule(_FREQS[freq], dtstart=start, **kwargs)
    except (ValueError, TypeError) as exc:  # e.g. BYHOUR no INTERVAL reaches
        raise DocumentError("invalid_rrule", f"rrule {body!r}: {exc}") from None


def evaluate(rule: rrule) -> Iterator[datetime]:
    """The local wall times of `rule` in order, as dateutil yields them, within one
    evaluation's budget (module doc). Raises DocumentError past the budget, and for what
    dateutil raises while evaluating."""
    budget = _Budget(rule)
    run = types.FunctionType(
        _DATEUTIL_ITER,
        dict(vars(dateutil_rrule), _iterinfo=budget.periods, range=budget.search),
        "_iter",
    )
    try:
        for local in run(rule):
            budget.spend()
            yield local
    except (ValueError, IndexError, OverflowError) as exc:
        raise DocumentError(
            "invalid_rrule", f"rrule {_text(rule)} cannot be evaluated: {exc}"
        ) from None


_DATEUTIL_ITER = vars(rrule)["_iter"].__code__
# dateutil's generator must still build periods and search times through these names, or
# the budget would count nothing: checked at import, not found out in production.
if not {"_iterinfo", "range"} <= set(_DATEUTIL_ITER.co_names):
    raise ImportError("dateutil's rrule._iter changed: core.rules cannot bound its work")
# Nor may its week-number mask move, or BYWEEKNO would silently be dateutil's own again.
if "wnomask" not in dateutil_rrule._iterinfo.__slots__:
    raise ImportError("dateutil's rrule._iterinfo changed: core.rules cannot number weeks")


class _Budget:
    """One evaluation's work so far (module doc)."""

    def __init__(self, rule: rrule) -> None:
        self.rule = rule
        self.steps = 0
        self.searched = 0

    def spend(self) -> None:
        self.steps += 1
        if self.steps > MAX_STEPS:
            raise DocumentError(
                "invalid_rrule",
                f"rrule {_text(self.rule)} needs more than {MAX_STEPS} steps (periods and"
                " instants examined) to find its occurrences: it matches too rarely, or its"
                " dtstart is too far back",
            )

    def periods(self, rule: rrule) -> Any:
        """dateutil's per-evaluation calendar helper, counting each period built."""
        info = _CountingInfo(rule)
        info.spend = self.spend
        return info

    def search(self, *args: int) -> Iterator[int]:
        """`range` for dateutil's time-of-day search loops, counting each iteration."""
        for value in builtins.range(*args):
            self.searched += 1
            if self.searched > MAX_SEARCH:
                raise DocumentError(
                    "invalid_rrule",
                    f"rrule {_text(self.rule)} needs more than {MAX_SEARCH} time-of-day"
                    " search steps: limit it with BYHOUR/BYMINUTE at a coarser FREQ",
                )
            yield value


def _spending(dayset: str) -> Callable[..., Any]:
    """dateutil's method `dayset`, spending one period of the budget on each call."""

    def counted(self: _CountingInfo, *args: int) -> Any:
        self.spend()
        return getattr(super(_CountingInfo, self), dayset)(*args)

    return counted


class _CountingInfo(dateutil_rrule._iterinfo):
    """dateutil's calendar helper; each `*dayset` call is one period examined. Its week
    numbers are RFC 5545's (module doc)."""

    spend: Callable[[], None]

    def rebuild(self, year: int, month: int) -> None:
        new_year = year != self.lastyear
        super().rebuild(year, month)
        rule: Any = self.rrule  # its parsed parts are private attributes, without types
        if new_year and rule._byweekno:
            self.wnomask = _week_mask(year, rule._wkst, frozenset(rule._byweekno))

    ydayset = _spending("ydayset")
    mdayset = _spending("mdayset")
    wdayset = _spending("wdayset")
    ddayset = _spending("ddayset")


def _week_mask(year: int, wkst: int, weeknos: frozenset[int]) -> list[int]:
    """1 for each day of `year`, and of the 7 days after it (dateutil's masks run on into the
    next year), whose week's number is in `weeknos`: RFC 5545 weeks, starting on weekday
    `wkst` (0 is Monday), numbered in the year that holds at least four of their days, and
    negative numbers counted back from that year's last week. Day numbers are proleptic
    ordinals, so years 1 and 9999 need no date before or after them."""
    first = _new_year(year)
    length = _new_year(year + 1) - first + 7
    mask = [0] * length
    # The mask's days lie in the weeks of the year before, this year and the next.
    ones = [_week_one(y, wkst) for y in range(year - 1, year + 3)]
    for one, next_one in itertools.pairwise(ones):
        weeks = (next_one - one) // 7
        for n in weeknos:
            week = n if n > 0 else weeks + 1 + n
            if 1 <= week <= weeks:
                begins = one + (week - 1) * 7 - first
                low, high = max(begins, 0), min(begins + 7, length)
                if low < high:
                    mask[low:high] = [1] * (high - low)
    return mask


def _new_year(year: int) -> int:
    """The proleptic ordinal of 1 January of `year` (`date.toordinal`, for any year)."""
    before = year - 1
    return 1 + 365 * before + before // 4 - before // 100 + before // 400


def _weekday(ordinal: int) -> int:
    """The weekday of a proleptic ordinal, 0 for Monday (`date.weekday`)."""
    return (ordinal + 6) % 7


def _week_one(year: int, wkst: int) -> int:
    """The first day of week 1 of `year`: of the week, starting on `wkst`, holding 4 January."""
    fourth = _new_year(year) + 3
    return fourth - (_weekday(fourth) - wkst) % 7


def _numbers(body: str, name: str, value: str) -> tuple[int, ...]:
    least, greatest = _RANGES[name]
    numbers = []
    for item in value.split(","):
        if not _NUMBER.fullmatch(item):
            _invalid(body, f"{name} value {item!r} is not a whole number")
        number = int(item)
        if not least <= number <= greatest or (number == 0 and name in _NONZERO):
            zero = " (not 0)" if name in _NONZERO else ""
            _invalid(body, f"{name}={item} is outside {least}..{greatest}{zero}")
        numbers.append(number)
    return tuple(numbers)


def _weekdays(body: str, value: str, freq: str, parts: dict[str, str]) -> tuple[weekday, ...]:
    """BYDAY: `MO`, or with an ordinal (`+1MO`, `-1FR`) in a MONTHLY or YEARLY rule: within
    the month (1..5) when there is one, else within the year (1..53)."""
    days = []
    for item in value.split(","):
        match = _BYDAY.fullmatch(item)
        if match is None:
            _invalid(body, f"BYDAY value {item!r} is not a weekday such as MO, +1MO or -1FR")
        ordinal, day = match.groups()
        n = int(ordinal) if ordinal else None
        if n is not None:
            if freq not in ("MONTHLY", "YEARLY") or "BYWEEKNO" in parts:
                _invalid(body, f"BYDAY={item}: an ordinal needs FREQ=MONTHLY or YEARLY")
            most = 5 if freq == "MONTHLY" or "BYMONTH" in parts else 53
            if n == 0 or abs(n) > most:
                _invalid(body, f"BYDAY={item}: the ordinal must be 1..{most} or -{most}..-1")
        days.append(weekday(_DAYS.index(day), n))
    if len({day.n is None for day in days}) > 1:
        # RFC 5545 means either (1FR,FR: the first Friday and every Friday); dateutil keeps
        # only days both name (the first Friday alone), so such a rule is refused, not
        # sent on other days than it says.
        _invalid(
            body,
            f"BYDAY={value} mixes days with and without an ordinal: give every day one, or none",
        )
    return tuple(days)


def _until(body: str, value: str, tz: ZoneInfo) -> datetime:
    match = _UNTIL.fullmatch(value)
    if match is None:
        _invalid(body, f"UNTIL={value} is not YYYYMMDD, YYYYMMDDTHHMMSS or YYYYMMDDTHHMMSSZ")
    day, time, utc = match.groups()
    try:
        until = datetime.strptime(day + (time or "T000000"), "%Y%m%dT%H%M%S")
        if utc:
            # dateutil compares UNTIL with the series' naive local wall times.
            until = until.replace(tzinfo=UTC).astimezone(tz).replace(tzinfo=None)
    except ValueError:
        _invalid(body, f"UNTIL={value} is not a date and time that exists")
    except OverflowError:
        _invalid(body, f"UNTIL={value} is out of range in {tz.key}")
    return until


def _check_calendar(body: str, kwargs: dict[str, Any]) -> None:
    """BYMONTH, BYMONTHDAY and BYYEARDAY must meet on a day of a leap or a common year."""
    months = kwargs.get("bymonth")
    monthdays = kwargs.get("bymonthday")
    yeardays = kwargs.get("byyearday")
    if [months, monthdays, yeardays].count(None) > 1:
        return
    for year in (2027, 2028):
        first, length = date(year, 1, 1), 366 if calendar.isleap(year) else 365
        for offset in range(length):
            day = first + timedelta(days=offset)
            last = calendar.monthrange(year, day.month)[1]
            if (
                (months is None or day.month in months)
                and (monthdays is None or {day.day, day.day - last - 1} & set(monthdays))
                and (yeardays is None or {offset + 1, offset - length} & set(yeardays))
            ):
                return
    given = ", ".join(n.upper() for n in ("bymonth", "bymonthday", "byyearday") if n in kwargs)
    _invalid(body, f"{given} never fall on one day")


def _text(rule: rrule) -> str:
    return repr(str(rule).rpartition("RRULE:")[2])


def _invalid(body: str, why: str) -> NoReturn:
    raise DocumentError("invalid_rrule", f"rrule {body!r}: {why}")
