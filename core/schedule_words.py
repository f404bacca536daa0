"""Schedules in plain words: a one-off, every RRULE core.rules accepts, and a rotation's days,
as a person reads them, e.g. "Every weekday at 9:30 AM (America/New_York)", "Monthly on the
last Friday at 17:00 (Europe/Berlin)", "Once on Tue 8 Dec 2026 at 14:00 (Europe/Berlin)".

Words only, never RRULE syntax: each rule part has its phrase (the tables below), and a
combination with no natural sentence is still said part by part ("…, only the last of each
month's matches"), so the words are always faithful to what is sent.

Times are wall-clock times in the schedule's zone, named in parentheses at the end of the
times. One rule picks the clock: 12-hour (9:30 AM) when the zone belongs to a country that
writes times that way (`_TWELVE_HOUR_COUNTRIES`, by tzdata's zone.tab), 24-hour (17:00)
everywhere else, UTC included.

A rule's time of day comes from BYHOUR/BYMINUTE/BYSECOND where given, else from its
`dtstart` (as dateutil evaluates it); its days likewise from its BY parts, else from `dtstart`.
"""

from __future__ import annotations

import functools
import zoneinfo
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime, time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dateutil.rrule import rrule

from core.errors import DocumentError
from core.schedule import recurrence_from_fields, zone
from core.working_days import NEXT_WORKING_DAY, WorkingDays

if TYPE_CHECKING:
    from core.models import Message
    from core.rotation import Rotation

_DAY_CODES = ("MO", "TU", "WE", "TH", "FR", "SA", "SU")
_DAY_NAMES = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_MONTHS = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)
# FREQ -> (the unit it repeats by, how one repetition reads, the period BYSETPOS picks in).
_FREQS = {
    "YEARLY": ("year", "Every year", "year"),
    "MONTHLY": ("month", "Monthly", "month"),
    "WEEKLY": ("week", "Weekly", "week"),
    "DAILY": ("day", "Every day", "day"),
    "HOURLY": ("hour", "Every hour", "hour"),
    "MINUTELY": ("minute", "Every minute", "minute"),
    "SECONDLY": ("second", "Every second", "second"),
}
_SUB_DAILY = ("HOURLY", "MINUTELY", "SECONDLY")
_ORDINAL_WORDS = {1: "first", 2: "second", 3: "third", 4: "fourth", 5: "fifth", -1: "last"}
_WEEKDAYS = frozenset(range(5))
# Countries whose people write the 12-hour clock (9:30 AM); everywhere else reads 17:00.
_TWELVE_HOUR_COUNTRIES = frozenset({"US", "CA", "AU", "NZ", "IN", "PH", "PK", "BD", "EG"})
# Legacy zone names outside zone.tab, by the country they belong to.
_TWELVE_HOUR_PREFIXES = ("US/", "Canada/", "Australia/")
# Times listed one by one up to this many; more are said as minutes past a range of hours.
_MAX_LISTED_TIMES = 4


def message_schedule_text(message: Message) -> str:
    """A stored message's schedule in words (its series, or its one-off's `send_at`)."""
    if message.recurrence is None:
        if message.send_at is None:
            return f"Once ({message.timezone})"
        return once_text(message.send_at, message.timezone)
    recurrence = message.recurrence
    return series_text(
        recurrence.rule, recurrence.tz.key, len(recurrence.exdates), recurrence.working_days
    )


def rotation_schedule_text(rotation: Rotation) -> str:
    """A rotation's turns in words: its weekdays, `send_time` and zone, and working days."""
    clock = _clock(rotation.tz.key)
    days = _every_days(sorted(rotation.weekdays))
    words = f"{days} at {_time(rotation.send_time, clock)} ({rotation.tz.key})"
    return words + _working_days(rotation.working_days)


def draft_schedule_text(fields: Mapping[str, Any]) -> str | None:
    """A stored or draft message's schedule in words, from its fields (`rrule`, `dtstart`,
    `timezone`, `exdates`, `working_days`, `on_non_working_day`, or `send_at`); None when
    the fields do not make a schedule."""
    try:
        recurrence = recurrence_from_fields(fields)
        timezone = fields.get("timezone") or "UTC"
        if recurrence is not None:
            return series_text(
                recurrence.rule,
                recurrence.tz.key,
                len(recurrence.exdates),
                recurrence.working_days,
            )
        if not isinstance(timezone, str):
            return None
        zone(timezone)
    except DocumentError:
        return None
    send_at = fields.get("send_at")
    if isinstance(send_at, str):
        try:
            send_at = datetime.fromisoformat(send_at)
        except ValueError:
            return None
    if not isinstance(send_at, datetime) or send_at.tzinfo is None:
        return None
    return once_text(send_at, timezone)


def once_text(send_at: datetime, timezone: str) -> str:
    """Once on Tue 8 Dec 2026 at 14:00 (Europe/Berlin): the instant in the zone's wall time."""
    return f"Once on {moment_text(send_at, timezone)}"


def moment_text(instant: datetime, timezone: str) -> str:
    """Tue 8 Dec 2026 at 14:00 (Europe/Berlin): an aware instant as the zone's wall time."""
    local = instant.astimezone(zone(timezone))
    return f"{_date(local)} at {_time(local.time(), _clock(timezone))} ({timezone})"


def series_text(
    rule: rrule, timezone: str, exdates: int = 0, working_days: WorkingDays | None = None
) -> str:
    """A series in words: `rule` as core.rules parsed it (from its naive local `dtstart`), in
    `timezone`, with `exdates` occurrences left out and its working-day policy."""
    start, parts = _parts(rule)
    clock = _clock(timezone)
    freq = parts["FREQ"]
    words = _head(parts, start) + _times(parts, start, clock) + f" ({timezone})"
    if int(parts.get("INTERVAL", "1")) > 1:
        words += f", starting {_date(start)}"
        if freq in _SUB_DAILY:
            words += f" at {_time(start.time(), clock)}"
    weekly_steps = freq == "WEEKLY" and int(parts.get("INTERVAL", "1")) > 1
    if parts.get("WKST", "MO") != "MO" and ("BYWEEKNO" in parts or weekly_steps):
        words += f", weeks starting on {_DAY_NAMES[_DAY_CODES.index(parts['WKST'])]}"
    words += _end(parts, clock)
    if "BYSETPOS" in parts and not _setpos_said(parts):
        period = _FREQS[freq][2]
        words += f", only the {_ordinals(_ints(parts['BYSETPOS']))} of each {period}'s matches"
    if exdates:
        words += f", with {_plural(exdates, 'date')} left out"
    return words + _working_days(working_days)


def _parts(rule: rrule) -> tuple[datetime, dict[str, str]]:
    """`rule`'s naive local `dtstart`, and the RRULE parts given to it (dateutil prints only
    those), by name."""
    dtstart, _, body = str(rule).partition("\nRRULE:")
    start = _stamp(dtstart.removeprefix("DTSTART:"))
    pairs = (part.partition("=") for part in body.split(";"))
    return start, {name: value for name, _, value in pairs}


def _stamp(text: str) -> datetime:
    """A naive `YYYYMMDDTHHMMSS` as dateutil prints it (a year before 1000 unpadded)."""
    day, _, clock = text.partition("T")
    year, month, date = int(day[:-4]), int(day[-4:-2]), int(day[-2:])
    return datetime(year, month, date, int(clock[:2]), int(clock[2:4]), int(clock[4:6]))


def _head(parts: Mapping[str, str], start: datetime) -> str:
    """How often and on which days: "Every weekday", "Monthly on the last Friday"."""
    freq = parts["FREQ"]
    interval = int(parts.get("INTERVAL", "1"))
    unit, every, _ = _FREQS[freq]
    if freq in ("DAILY", "WEEKLY") and interval == 1 and _only(parts, "BYDAY", "BYMONTH"):
        days = _plain_days(parts)
        if days is None and freq == "WEEKLY":
            days = [start.weekday()]
        if days is not None:
            return _every_days(days) + _months(parts)
    head = every if interval == 1 else f"Every {interval} {unit}s"
    return head + _days(parts, start) + _months(parts)


def _days(parts: Mapping[str, str], start: datetime) -> str:
    """Which days of each period: " on the last Friday", " on 8 December"."""
    freq = parts["FREQ"]
    said = []
    weekdays = _weekdays(parts, freq)
    monthdays = _monthdays(parts)
    if weekdays and monthdays:
        said.append(f" on {weekdays} falling on {monthdays}")
    elif weekdays:
        said.append(f" on {weekdays}")
    elif monthdays:
        said.append(f" on {monthdays}")
    if "BYYEARDAY" in parts:
        said.append(f" on {_yeardays(_ints(parts['BYYEARDAY']))}")
    if "BYWEEKNO" in parts:
        said.append(f" in {_weeknos(_ints(parts['BYWEEKNO']))}")
    if "BYEASTER" in parts:
        said.append(f" on {_easter(_ints(parts['BYEASTER']))}")
    if said:
        return "".join(said)
    return _default_day(freq, parts, start)


def _default_day(freq: str, parts: Mapping[str, str], start: datetime) -> str:
    """The day dateutil takes from `dtstart` when no BY part names one."""
    if freq == "WEEKLY":
        return f" on {_DAY_NAMES[start.weekday()]}"
    if freq == "MONTHLY":
        return f" on the {_ordinal(start.day)}"
    if freq == "YEARLY":
        if "BYMONTH" in parts:
            return f" on the {_ordinal(start.day)}"
        return f" on {start.day} {_MONTHS[start.month - 1]}"
    return ""


def _weekdays(parts: Mapping[str, str], freq: str) -> str | None:
    """BYDAY in words: "Tuesdays and Thursdays", "the last Friday", "the weekdays"."""
    if "BYDAY" not in parts:
        return None
    items = parts["BYDAY"].split(",")
    plain = [_DAY_CODES.index(item) for item in items if item in _DAY_CODES]
    ordinal = [item for item in items if item not in _DAY_CODES]
    said = []
    if plain:
        if "BYSETPOS" in parts and not ordinal and _setpos_said(parts):
            positions = _ordinals(_ints(parts["BYSETPOS"]))
            said.append(f"the {positions} {_day_group(plain, singular=True)}")
        else:
            said.append(_day_group(plain, singular=False))
    within = "year" if freq == "YEARLY" and "BYMONTH" not in parts else None
    for item in sorted(ordinal, key=lambda item: (item.startswith("-"), abs(int(item[:-2])))):
        said.append(_ordinal_item(item, within))
    return _join(said)


def _ordinal_item(item: str, within: str | None) -> str:
    """ "the last Friday", "the 20th Monday of the year"."""
    day = _DAY_NAMES[_DAY_CODES.index(item[-2:])]
    return f"the {_ordinal_word(int(item[:-2]))} {day}" + (f" of the {within}" if within else "")


def _day_group(days: Sequence[int], *, singular: bool) -> str:
    """A set of weekdays: "weekday" / "weekdays", "Monday" / "Mondays"."""
    if set(days) == _WEEKDAYS:
        return "weekday" if singular else "weekdays"
    if len(days) == 7:
        return "day" if singular else "every day"
    names = [_DAY_NAMES[d] for d in sorted(days)]
    if singular:
        return " or ".join([", ".join(names[:-1]), names[-1]] if len(names) > 1 else names)
    return _join([f"{name}s" for name in names])


def _setpos_said(parts: Mapping[str, str]) -> bool:
    """BYSETPOS reads naturally ("the last weekday") when it picks among plain weekdays only."""
    if "BYSETPOS" not in parts or "BYDAY" not in parts:
        return False
    chosen = {p for p in parts if p.startswith("BY")} - {"BYSETPOS", "BYDAY", "BYMONTH"}
    times = [p for p in ("BYHOUR", "BYMINUTE", "BYSECOND") if p in parts]
    plain = all(item in _DAY_CODES for item in parts["BYDAY"].split(","))
    many_times = any(len(parts[p].split(",")) > 1 for p in times)
    return plain and not (chosen - set(times)) and not many_times


def _monthdays(parts: Mapping[str, str]) -> str | None:
    """BYMONTHDAY in words: "the 1st and 15th", "the last day", "8 December"."""
    if "BYMONTHDAY" not in parts:
        return None
    days = _ints(parts["BYMONTHDAY"])
    months = _ints(parts["BYMONTH"]) if "BYMONTH" in parts else []
    if parts["FREQ"] == "YEARLY" and len(months) == 1 and len(days) == 1 and days[0] > 0:
        return f"{days[0]} {_MONTHS[months[0] - 1]}"
    said = [_day_run(run) for run in _runs(sorted(d for d in days if d > 0))]
    for day in (d for d in days if d < 0):
        if day == -1:
            said.append("the last day")
        elif day < 0:
            said.append(f"the {_ordinal_word(day)} day")
    return _join(said)


def _runs(numbers: Sequence[int]) -> list[list[int]]:
    """Consecutive numbers grouped: [1, 2, 3, 7] -> [[1, 2, 3], [7]]."""
    runs: list[list[int]] = []
    for n in numbers:
        if runs and runs[-1][-1] == n - 1:
            runs[-1].append(n)
        else:
            runs.append([n])
    return runs


def _day_run(run: Sequence[int]) -> str:
    """ "the 10th to the 15th" for three days or more in a row, else each: "the 2nd and the 3rd"."""
    if len(run) >= 3:
        return f"the {_ordinal(run[0])} to the {_ordinal(run[-1])}"
    return _join([f"the {_ordinal(day)}" for day in run])


def _months(parts: Mapping[str, str]) -> str:
    if "BYMONTH" not in parts:
        return ""
    if parts["FREQ"] == "YEARLY" and "BYMONTHDAY" in parts and _monthdays(parts) is not None:
        months = _ints(parts["BYMONTH"])
        days = _ints(parts["BYMONTHDAY"])
        if len(months) == 1 and len(days) == 1 and days[0] > 0:
            return ""  # said with the day: "on 8 December"
    joined = _join([_MONTHS[m - 1] for m in _ints(parts["BYMONTH"])])
    return f" in {joined}"


def _yeardays(days: Sequence[int]) -> str:
    """ "the 1st, 100th and 200th day of the year", "the last day of the year"."""
    ahead = [_ordinal(d) for d in days if d > 0]
    said = [f"the {_join(ahead)} day of the year"] if ahead else []
    said += [f"the {_ordinal_word(d)} day of the year" for d in days if d < 0]
    return _join(said)


def _weeknos(weeks: Sequence[int]) -> str:
    said = [f"week {w}" if w > 0 else f"the {_ordinal_word(w)} week" for w in weeks]
    return _join(said) + " of the year"


def _easter(offsets: Sequence[int]) -> str:
    said = []
    for days in offsets:
        if days == 0:
            said.append("Easter Sunday itself")
        elif days > 0:
            said.append(f"{_plural(days, 'day')} after Easter Sunday")
        else:
            said.append(f"{_plural(-days, 'day')} before Easter Sunday")
    return _join(said)


def _times(parts: Mapping[str, str], start: datetime, clock: str) -> str:
    """The time(s) of day: " at 9:30 AM", " at 9:00 and 17:00", " at 0, 20 and 40 minutes
    past the hour, between 9:00 and 16:59"; a sub-daily rule's place in the hour."""
    freq = parts["FREQ"]
    hours = _given(parts, "BYHOUR", start.hour, freq in _SUB_DAILY)
    minutes = _given(parts, "BYMINUTE", start.minute, freq in ("MINUTELY", "SECONDLY"))
    seconds = _given(parts, "BYSECOND", start.second, freq == "SECONDLY")
    if (
        hours
        and minutes
        and seconds
        and len(hours) * len(minutes) * len(seconds) <= (_MAX_LISTED_TIMES)
    ):
        times = [time(h, m, s) for h in hours for m in minutes for s in seconds]
        return " at " + _join([_time(t, clock) for t in times])
    said = []
    if minutes == [0] and seconds in ([0], []):
        said.append(" on the hour")
    elif minutes:
        said.append(f" at {_join([str(m) for m in minutes])} {_noun(minutes, 'minute')}")
        said[-1] += " past the hour"
    if seconds and seconds != [0]:
        said.append(f" at {_join([str(s) for s in seconds])} {_noun(seconds, 'second')}")
        said[-1] += " past the minute"
    if hours:
        said.append(_hour_range(hours, clock))
    return ",".join(said)


def _given(parts: Mapping[str, str], name: str, default: int, free: bool) -> list[int]:
    """A time part's values: given, or dateutil's from `dtstart`; [] when the rule steps
    through it freely (an hourly rule's hours)."""
    if name in parts:
        return sorted(set(_ints(parts[name])))
    return [] if free else [default]


def _hour_range(hours: Sequence[int], clock: str) -> str:
    """between 9:00 and 16:59", " in the hours from 9:00 and from 17:00"."""
    if len(hours) > 1 and list(hours) == list(range(hours[0], hours[-1] + 1)):
        return f" between {_time(time(hours[0]), clock)} and {_time(time(hours[-1], 59), clock)}"
    return " in the hours from " + _join([_time(time(h), clock) for h in hours])


def _end(parts: Mapping[str, str], clock: str) -> str:
    if "COUNT" in parts:
        return f", {_plural(int(parts['COUNT']), 'time')}"
    if "UNTIL" in parts:  # local wall time, as core.rules reads it
        until = _stamp(parts["UNTIL"])
        return f", until {_date(until)} at {_time(until.time(), clock)}"
    return ""


def _working_days(working_days: WorkingDays | None) -> str:
    if working_days is None:
        return ""
    place = working_days.country
    if working_days.subdivision:
        place += f"-{working_days.subdivision}"
    if working_days.policy == NEXT_WORKING_DAY:
        return f", moved to the next working day in {place} when it falls on a day off"
    return f", only on working days in {place}"


def _every_days(days: Sequence[int]) -> str:
    if set(days) == _WEEKDAYS:
        return "Every weekday"
    if len(set(days)) == 7:
        return "Every day"
    return "Every " + _join([_DAY_NAMES[d] for d in sorted(set(days))])


def _plain_days(parts: Mapping[str, str]) -> list[int] | None:
    if "BYDAY" not in parts:
        return None
    items = parts["BYDAY"].split(",")
    if not all(item in _DAY_CODES for item in items):
        return None
    return [_DAY_CODES.index(item) for item in items]


def _only(parts: Mapping[str, str], *allowed: str) -> bool:
    """No BY part beyond `allowed` (and the time of day's)."""
    times = ("BYHOUR", "BYMINUTE", "BYSECOND")
    return all(p in allowed or p in times for p in parts if p.startswith("BY"))


def _ints(value: str) -> list[int]:
    return [int(item) for item in value.split(",")]


def _ordinal(n: int) -> str:
    """1st, 2nd, 3rd, 4th, 11th, 21st, 112th."""
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def _ordinal_word(n: int) -> str:
    """first, second, ..., last, second-to-last, 20th, 20th-to-last."""
    if n in _ORDINAL_WORDS:
        return _ORDINAL_WORDS[n]
    if n < 0:
        return f"{_ORDINAL_WORDS.get(-n, _ordinal(-n))}-to-last"
    return _ordinal(n)


def _ordinals(ns: Sequence[int]) -> str:
    return _join([_ordinal_word(n) for n in ns])


def _join(items: Sequence[str]) -> str:
    """ "a", "a and b", "a, b and c"."""
    if len(items) <= 1:
        return "".join(items)
    return f"{', '.join(items[:-1])} and {items[-1]}"


def _plural(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _noun(values: Iterable[int], noun: str) -> str:
    return noun if len(list(values)) == 1 else f"{noun}s"


def _date(moment: datetime) -> str:
    """ "Tue 8 Dec 2026"."""
    return f"{moment:%a} {moment.day} {moment:%b} {moment.year}"


def _time(moment: time, clock: str) -> str:
    """ "9:30 AM" on the 12-hour clock, "09:30"-less "9:30"/"17:00" on the 24-hour one;
    seconds only when there are some."""
    seconds = f":{moment.second:02d}" if moment.second else ""
    if clock == "24":
        return f"{moment.hour}:{moment.minute:02d}{seconds}"
    hour = moment.hour % 12 or 12
    half = "AM" if moment.hour < 12 else "PM"
    return f"{hour}:{moment.minute:02d}{seconds} {half}"


def _clock(timezone: str) -> str:
    """ "12" or "24": the clock people of the zone's country write (module doc)."""
    if timezone.startswith(_TWELVE_HOUR_PREFIXES):
        return "12"
    return "12" if _zone_countries().get(timezone) in _TWELVE_HOUR_COUNTRIES else "24"


@functools.cache
def _zone_countries() -> dict[str, str]:
    """Zone name -> its country code, from tzdata's zone.tab (where zoneinfo reads zones);
    empty when the system has none (then every zone reads the 24-hour clock)."""
    for root in zoneinfo.TZPATH:
        table = Path(root) / "zone.tab"
        if table.is_file():
            rows = (line.split("\t") for line in table.read_text().splitlines())
            return {row[2]: row[0] for row in rows if len(row) >= 3 and not row[0].startswith("#")}
    return {}
