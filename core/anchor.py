"""Restarting a recurrence rule part-way through its series, from a stored anchor, so that
finding the next occurrence costs the same however old the series is.

dateutil finds occurrences by walking a rule from its DTSTART: a year of a minutely series is
half a million steps. A rule restarted at one of its own raw occurrences (its local wall
times, before exdates and working days) yields the same occurrences from there on, because
dateutil builds each period (year, month, week, day, hour, minute, second) from that period's
own calendar, steps INTERVAL periods on from the period it starts in, and picks BYSETPOS
within a whole period before it drops what lies before DTSTART. What makes that hold is kept:
- what dateutil takes from DTSTART when the rule leaves it out (BYMONTH and BYMONTHDAY of a
  YEARLY rule, BYMONTHDAY of a MONTHLY one, BYDAY of a WEEKLY one; BYHOUR, BYMINUTE and
  BYSECOND below their own frequency) is written out from the original DTSTART;
- COUNT becomes what is left of it (the anchor keeps how many raw occurrences came before
  it); UNTIL stays as it is;
- a WEEKLY rule restarts at the start (WKST) of the anchor's week, not at the anchor: dateutil
  builds its first week from DTSTART's day on, which would shift BYSETPOS, and it reads a week
  that crosses New Year with the calendar of the year the week starts in. In DTSTART's own
  week it is not restarted at all.
An anchor that does not fit its rule (one stored for another rule, or a wall time that is not
an occurrence of it) is not used: the rule is walked from DTSTART, which is always right.

A series without an anchor (a document another service wrote) gets one without walking from
DTSTART when its rule has no COUNT: the periods dateutil visits are DTSTART's period plus
multiples of INTERVAL, so a period in phase near the search is computed, and the rule
restarted at its start. Its anchor then has no index (none is needed without a COUNT). A
COUNT rule is walked from DTSTART once, to count. Every walk here goes through
core.rules.evaluate, so it is held to the same budget as any other evaluation of the rule.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, time, timedelta
from typing import Any

from dateutil.rrule import rrule, rrulestr

from core.errors import DocumentError
from core.rules import evaluate

_WEEKDAYS = ("MO", "TU", "WE", "TH", "FR", "SA", "SU")
# Parts that choose days: when a rule has none of them, dateutil takes the day from DTSTART.
_DAY_PARTS = ("BYWEEKNO", "BYYEARDAY", "BYMONTHDAY", "BYDAY", "BYEASTER")
_STAMP = "%Y%m%dT%H%M%S"
# A stored anchor this close to where a search starts is walked from; a farther one is
# replaced by a period in phase near the search (a rule without COUNT), which needs no walk.
NEAR = timedelta(days=2)
# Occurrences one evaluation walks before the walk restarts from an anchor there, and the
# most one walk takes in all (a minutely series' two years): past that the rule is refused
# like one past its budget, never walked for minutes.
WALK_CHUNK = 20_000
MAX_WALK = 1_000_000


@dataclass(frozen=True)
class Anchor:
    """A raw occurrence of a rule and its position: where the rule can restart."""

    rule: str  # the rule it belongs to, with its DTSTART (`str()` of the dateutil rule)
    local: datetime  # a raw occurrence of that rule (naive local wall time)
    index: int | None  # how many raw occurrences come before it; None: not counted (no COUNT)

    @classmethod
    def from_fields(cls, value: object) -> Anchor | None:
        """The stored `anchor` map. None when absent or malformed: an anchor only saves work,
        so a bad one costs one walk from DTSTART, never a failed message."""
        if not isinstance(value, Mapping):
            return None
        rule, local, index = value.get("rule"), value.get("local"), value.get("index")
        if not isinstance(rule, str) or not isinstance(local, str):
            return None
        if index is not None and (not isinstance(index, int) or isinstance(index, bool)):
            return None
        if index is not None and index < 0:
            return None
        try:
            at = datetime.fromisoformat(local)
        except ValueError:
            return None
        if at.tzinfo is not None:
            return None
        return cls(rule, at, index)

    def to_fields(self) -> dict[str, Any]:
        return {
            "rule": self.rule,
            "local": self.local.isoformat(timespec="seconds"),
            "index": self.index,
        }


def restart(rule: rrule, anchor: Anchor | None) -> tuple[rrule, int | None]:
    """A rule that yields exactly `rule`'s raw occurrences from a wall time at or before
    `anchor.local` on, and how many of `rule`'s occurrences come before its first one (None:
    not counted). Without an anchor that fits: `rule` itself, from DTSTART (0 before it)."""
    if anchor is None or anchor.rule != str(rule):
        return rule, 0
    try:
        restarted = _restarted(rule, anchor)
    except (ValueError, OverflowError):
        restarted = None
    return restarted or (rule, 0)


def last_at_or_before(rule: rrule, anchor: Anchor | None, bound: datetime) -> Anchor | None:
    """The last raw occurrence of `rule` at or before the wall time `bound`, as an anchor;
    walked from `anchor` when it is at or before `bound` and near it, else from a period in
    phase near `bound` (a rule without COUNT), else from `anchor` or DTSTART. A long walk goes
    in pieces of WALK_CHUNK occurrences, each restarted where the last ended, so every
    evaluation stays within the rule's budget. None when the rule has no occurrence that
    early."""
    if anchor is not None and anchor.local > bound:
        anchor = None
    if anchor is None or bound - anchor.local > NEAR:
        try:
            found = in_phase(rule, bound)
        except (ValueError, OverflowError):
            found = None
        if found is not None:
            return found
    for _ in range(MAX_WALK // WALK_CHUNK):
        restarted, first = restart(rule, anchor)
        last: tuple[int, datetime] | None = None
        full = False
        for walked, position in enumerate(enumerate(evaluate(restarted), first or 0), 1):
            if position[1] > bound:
                break
            last = position
            if walked == WALK_CHUNK:
                full = True
                break
        if last is None:
            return None
        found = Anchor(str(rule), last[1], None if first is None else last[0])
        if not full or (anchor is not None and found.local <= anchor.local):
            return found  # at `bound`, or a piece that cannot move on (then one walk)
        anchor = found
    raise too_long(rule)


def too_long(rule: rrule) -> DocumentError:
    return DocumentError(
        "invalid_rrule",
        f"rrule {str(rule)!r} needs a walk of more than {MAX_WALK} occurrences (a COUNT series"
        " without a stored anchor, or a catch-up over a long outage)",
    )


def in_phase(rule: rrule, bound: datetime) -> Anchor | None:
    """The last raw occurrence at or before `bound` of a rule without COUNT, found from a
    period in phase shortly before `bound` (further back, doubling, while none is found).
    None: none found after DTSTART's period (then DTSTART is as near)."""
    start, parts = _parts(rule)
    if start is None or "COUNT" in parts:
        return None
    explicit = _explicit(parts, start)
    back = 0
    while (at := _period_start(parts, start, bound, back)) is not None:
        last = None
        for local in evaluate(_rebuilt(explicit, at, None)):
            if local > bound:
                break
            last = local
        if last is not None:
            return Anchor(str(rule), last, None)
        back = 2 * back + 1
    return None


_UNITS = {
    "WEEKLY": timedelta(weeks=1),
    "DAILY": timedelta(days=1),
    "HOURLY": timedelta(hours=1),
    "MINUTELY": timedelta(minutes=1),
    "SECONDLY": timedelta(seconds=1),
}


def _period_start(
    parts: dict[str, str], start: datetime, bound: datetime, back: int
) -> datetime | None:
    """The start of a period in phase (DTSTART's period plus a multiple of INTERVAL): `back`
    such periods before the last one that begins at or before `bound`; None when that is not
    after DTSTART."""
    freq, interval = parts["FREQ"], int(parts.get("INTERVAL", "1"))
    if freq in ("YEARLY", "MONTHLY"):
        size = 12 if freq == "YEARLY" else 1  # in months
        origin = (start.year * 12 + start.month - 1) // size
        steps = ((bound.year * 12 + bound.month - 1) // size - origin) // interval - back
        month = (origin + steps * interval) * size
        at = datetime(month // 12, month % 12 + 1, 1)
    else:
        unit = _UNITS[freq]
        if freq == "WEEKLY":
            wkst = _WEEKDAYS.index(parts.get("WKST", "MO"))
            first = datetime.combine(start.date(), time())
            first -= timedelta(days=(start.weekday() - wkst) % 7)
        else:  # DTSTART's day, hour, minute or second
            first = start - (start - datetime.min) % unit
        steps = (bound - first) // (unit * interval) - back
        at = first + steps * interval * unit
    return at if at > start else None


def _restarted(rule: rrule, anchor: Anchor) -> tuple[rrule, int | None] | None:
    start, parts = _parts(rule)
    if start is None:
        return None
    at = anchor.local
    if parts["FREQ"] == "WEEKLY":
        wkst = _WEEKDAYS.index(parts.get("WKST", "MO"))
        day = at.date() - timedelta(days=(at.weekday() - wkst) % 7)
        at = datetime.combine(day, time())
        if at <= start:
            return None  # DTSTART's own week: walking from DTSTART is as short
    explicit = _explicit(parts, start)
    unbounded = _rebuilt(explicit, at, None)
    skipped = _position(unbounded, anchor.local)
    if skipped is None:
        return None  # not an occurrence of the rule
    count = parts.get("COUNT")
    if anchor.index is None:
        return None if count is not None else (unbounded, None)
    before = anchor.index - skipped  # raw occurrences of `rule` before `at`
    if count is None:
        return unbounded, before
    if before < 0 or int(count) - before <= skipped:
        return None  # an index that cannot be right
    return _rebuilt(explicit, at, int(count) - before), before


def _parts(rule: rrule) -> tuple[datetime | None, dict[str, str]]:
    """The rule's DTSTART and its parts, as dateutil writes the rule out (parts it derived
    from DTSTART are left out). DTSTART None: a year dateutil writes ambiguously (< 1000)."""
    head, body = str(rule).split("\n")
    parts = dict(part.split("=", 1) for part in body.removeprefix("RRULE:").split(";"))
    stamp = head.removeprefix("DTSTART:")
    if len(stamp) != len("YYYYMMDDTHHMMSS") or len(parts.get("UNTIL", stamp)) != len(stamp):
        return None, parts
    return datetime.strptime(stamp, _STAMP), parts


def _explicit(parts: dict[str, str], start: datetime) -> dict[str, str]:
    """`parts` with what dateutil would take from `start` written out."""
    explicit = {name: value for name, value in parts.items() if name != "COUNT"}
    freq = parts["FREQ"]
    if not any(name in parts for name in _DAY_PARTS):
        if freq == "YEARLY":
            explicit.setdefault("BYMONTH", str(start.month))
        if freq in ("YEARLY", "MONTHLY"):
            explicit["BYMONTHDAY"] = str(start.day)
        if freq == "WEEKLY":
            explicit["BYDAY"] = _WEEKDAYS[start.weekday()]
    if freq not in ("HOURLY", "MINUTELY", "SECONDLY"):
        explicit.setdefault("BYHOUR", str(start.hour))
    if freq not in ("MINUTELY", "SECONDLY"):
        explicit.setdefault("BYMINUTE", str(start.minute))
    if freq != "SECONDLY":
        explicit.setdefault("BYSECOND", str(start.second))
    return explicit


def _rebuilt(parts: dict[str, str], dtstart: datetime, count: int | None) -> rrule:
    body = ";".join(f"{name}={value}" for name, value in parts.items())
    if count is not None:
        body += f";COUNT={count}"
    rebuilt = rrulestr(body, dtstart=dtstart)
    if not isinstance(rebuilt, rrule):
        raise ValueError(f"{body!r} is not one rule")
    return rebuilt


def _position(rule: rrule, local: datetime) -> int | None:
    """How many occurrences of `rule` come before `local`, None if `local` is not one."""
    for position, occurrence in enumerate(evaluate(rule)):
        if occurrence >= local:
            return position if occurrence == local else None
    return None
