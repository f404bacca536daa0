"""Rotation math: which local day is a turn, when that turn is due, who takes it, and
where the order stands after an edit. Pure functions of the stored fields and an instant,
shared by the real send, the tick's dry run and the API's preview, so that a preview can
never disagree with what is posted.

A rotation's turn on a day is due at `send_time` local time in its `timezone`, on one of its
`weekdays`, and (when `working_days` names a country) only on that country's working days.
A `send_time` that a spring-forward gap skips happens at the same instant as the wall time
after the gap (02:30 becomes 03:30); one that a fall-back repeats happens the first time.

Who takes a turn: `members[cursor]`, unless that member is out that day: listed in `skips`
for the day, or inside one of their `away` periods (`skipped_on`). Then the first member
after them who is not out takes the turn and is moved in front of the skipped ones, so the
skipped members keep their places: they are next, in the order they had, and nobody takes
two turns in one round.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from core.actions import Action, catalog
from core.documents.rotations import RotationField
from core.errors import DocumentError
from core.models import CHANNEL_ID, MAX_TEXT, TEAMS_USER_ID, USER_ID, teams_conversation
from core.platform import SLACK, TEAMS
from core.schedule import to_utc, zone
from core.working_days import WorkingDays

# Matched whole: `\Z` (not `$`, which allows a trailing newline), ASCII digits only.
SEND_TIME = re.compile(r"\A([01][0-9]|2[0-3]):[0-5][0-9]\Z")
LOCAL_DATE = re.compile(r"\A[0-9]{4}-[0-9]{2}-[0-9]{2}\Z")
DEFAULT_WEEKDAYS = (0, 1, 2, 3, 4)
PLACEHOLDER = "{member}"
# Weekdays and a holiday calendar leave a turn day within any few weeks; a year without one
# means the rotation has none (it is never due).
_SEARCH_DAYS = 366


@dataclass(frozen=True)
class Away:
    """A member out of office from `first` to `last`, inclusive local dates."""

    member: str
    first: date
    last: date


@dataclass(frozen=True)
class Rotation:
    """A stored rotation, validated for taking turns."""

    id: str
    channel: str
    members: tuple[str, ...]
    tz: ZoneInfo
    send_time: time
    weekdays: frozenset[int]
    text: str
    cursor: int
    last_processed_date: date | None
    skips: Mapping[date, frozenset[str]]
    working_days: WorkingDays | None = None
    actions: tuple[Action, ...] = ()  # the day's post's buttons (core.actions)
    platform: str = SLACK  # TEAMS: `channel` is its `teams_conversation`, members Teams ids
    away: tuple[Away, ...] = ()  # members' periods out of office (inclusive local dates)

    @classmethod
    def from_document(cls, doc_id: str, data: Mapping[str, Any]) -> Rotation:
        channel = data.get(RotationField.CHANNEL)
        teams = teams_conversation(data)
        if teams is not None:
            channel = teams.conversation
        elif not isinstance(channel, str) or not CHANNEL_ID.match(channel):
            raise DocumentError("invalid_channel", f"channel {channel!r} is not a Slack id")
        members = _members(data.get(RotationField.MEMBERS), SLACK if teams is None else TEAMS)
        timezone = data.get(RotationField.TIMEZONE) or "UTC"
        if not isinstance(timezone, str):
            raise DocumentError("invalid_timezone", f"timezone {timezone!r} is not a string")
        send_time = data.get(RotationField.SEND_TIME)
        if not isinstance(send_time, str) or not SEND_TIME.match(send_time):
            raise DocumentError("invalid_send_time", f"send_time {send_time!r} is not HH:MM")
        weekdays = data.get(RotationField.WEEKDAYS, list(DEFAULT_WEEKDAYS))
        if (
            not isinstance(weekdays, list)
            or not weekdays
            or not all(type(d) is int and 0 <= d <= 6 for d in weekdays)
        ):
            raise DocumentError(
                "invalid_weekdays", f"weekdays must be days 0 (Monday)..6, got {weekdays!r}"
            )
        text = data.get(RotationField.TEXT)
        if not isinstance(text, str) or not text.strip() or len(text) > MAX_TEXT:
            raise DocumentError("invalid_text", "text must be 1..40000 characters, not blank")
        cursor = data.get(RotationField.CURSOR, 0)
        if not isinstance(cursor, int) or isinstance(cursor, bool):
            raise DocumentError("invalid_cursor", f"cursor {cursor!r} is not an int")
        working_days = None
        if data.get(RotationField.WORKING_DAYS) is not None:
            working_days = WorkingDays.from_fields(data[RotationField.WORKING_DAYS])
        return cls(
            doc_id,
            channel,
            tuple(members),
            zone(timezone),
            time.fromisoformat(send_time),
            frozenset(weekdays),
            text,
            cursor % len(members),  # an out-of-range cursor continues the order, never fails
            _optional_date(
                data.get(RotationField.LAST_PROCESSED_DATE), RotationField.LAST_PROCESSED_DATE
            ),
            parse_skips(data.get(RotationField.SKIPS)),
            working_days,
            catalog(data.get(RotationField.ACTIONS)),
            SLACK if teams is None else TEAMS,
            parse_away(data.get(RotationField.AWAY), members),
        )

    def today(self, now: datetime) -> date:
        """The team's local date at `now`."""
        return now.astimezone(self.tz).date()

    def skipped_on(self, day: date) -> frozenset[str]:
        """The members out on the local date `day`: its `skips` entry and every member with
        an `away` period covering it. The real send, the dry run and every preview decide
        who is out through this one function."""
        away = {period.member for period in self.away if period.first <= day <= period.last}
        return self.skips.get(day, frozenset()) | away

    def is_turn_day(self, day: date) -> bool:
        if day.weekday() not in self.weekdays:
            return False
        return self.working_days is None or self.working_days.is_working_day(day)

    def due_at(self, day: date) -> datetime:
        """The UTC instant the turn of `day` is due (send_time local, gap and fold rules)."""
        instant = to_utc(datetime.combine(day, self.send_time), self.tz)
        if self.today(instant) != day:
            # A gap across local midnight (America/Nuuk jumps 23:00 -> 00:00) skips
            # send_time, and the wall time after it is already tomorrow: the turn takes the
            # last minute `day` has, so it is neither lost nor merged into tomorrow's.
            midnight = to_utc(datetime.combine(day + timedelta(days=1), time()), self.tz)
            instant = midnight - timedelta(minutes=1)
        return instant

    def day_ends_at(self, day: date) -> datetime:
        """The UTC instant `day` ends in the team's timezone (the next local midnight)."""
        return to_utc(datetime.combine(day + timedelta(days=1), time()), self.tz)

    def is_due(self, now: datetime) -> bool:
        """Today's turn is due and not claimed yet: a rotation that was down for days
        takes only today's turn."""
        today = self.today(now)
        return self.is_open(today) and now >= self.due_at(today)

    def is_open(self, day: date) -> bool:
        """A turn day not claimed yet. A `last_processed_date` after `day` (the timezone was
        moved west after a turn) closes it too: that turn was taken already."""
        return self.is_turn_day(day) and (
            self.last_processed_date is None or day > self.last_processed_date
        )

    def next_due_at(self, now: datetime, after: date | None = None) -> datetime | None:
        """When the next turn not yet claimed is due: today's if it is still open (even if
        its time has passed), else the next turn day's; from the day after `after` when
        given. None when no turn day comes within a year."""
        day = self.today(now) if after is None else after + timedelta(days=1)
        for _ in range(_SEARCH_DAYS):
            if self.is_open(day):
                return self.due_at(day)
            day += timedelta(days=1)
        return None

    def missed_days(self, today: date) -> list[date]:
        """The turn days after `last_processed_date` and before `today` (at most a year
        back): turns nobody took because nothing ran. Empty when no turn was ever taken."""
        if self.last_processed_date is None:
            return []
        day = max(self.last_processed_date, today - timedelta(days=_SEARCH_DAYS))
        missed = []
        while (day := day + timedelta(days=1)) < today:
            if self.is_turn_day(day):
                missed.append(day)
        return missed

    def turn_days(self, now: datetime, count: int) -> list[date]:
        """The next `count` turn days not yet claimed, from today on."""
        days: list[date] = []
        day = self.today(now)
        for _ in range(_SEARCH_DAYS * 2):
            if len(days) == count:
                break
            if self.is_open(day):
                days.append(day)
            day += timedelta(days=1)
        return days


@dataclass(frozen=True)
class Turn:
    """Who takes the turn of one day, and the order the rotation continues with."""

    day: date
    member: str | None  # None: every member is skipped that day
    members: tuple[str, ...]
    cursor: int


def take_turn(members: Sequence[str], cursor: int, skipped: frozenset[str], day: date) -> Turn:
    """The turn of `day`: the member at `cursor` unless skipped, else the first one after
    who is not, moved in front of the skipped ones (who keep their order and go next)."""
    order = tuple(members)
    count = len(order)
    start = cursor % count
    for step in range(count):
        index = (start + step) % count
        member = order[index]
        if member in skipped:
            continue
        if step:
            rest = [m for m in order if m != member]
            rest.insert(start if index > start else start - 1, member)
            order = tuple(rest)
            start = order.index(member)
        return Turn(day, member, order, (start + 1) % count)
    return Turn(day, None, order, start)


def give_back(
    members: Sequence[str], cursor: int, skipped: frozenset[str], member: str, day: date
) -> Turn | None:
    """The turn of `day` that `member` took, taken again as if they had been skipped too:
    the next member not skipped takes it and moves in front of them, so they keep their
    place (next). `members` and `cursor` are as the turn left them (`member` just before the
    cursor); None when the order is no longer so (an edit came in between)."""
    if not members:
        return None
    start = (cursor - 1) % len(members)
    if members[start] != member:
        return None
    return take_turn(members, start, skipped | {member}, day)


def turn_for(rotation: Rotation, day: date) -> Turn:
    return take_turn(rotation.members, rotation.cursor, rotation.skipped_on(day), day)


def upcoming_turns(rotation: Rotation, now: datetime, count: int) -> list[Turn]:
    """The next `count` turns as they would go if nothing changed in between: the same
    selection as the real send, applied day after day to the order it leaves."""
    turns = []
    members, cursor = rotation.members, rotation.cursor
    for day in rotation.turn_days(now, count):
        turn = take_turn(members, cursor, rotation.skipped_on(day), day)
        turns.append(turn)
        members, cursor = turn.members, turn.cursor
    return turns


def fill_template(text: str, member: str) -> str:
    """The Markdown of a turn: every `{member}` becomes a mention of the member. Member ids
    are validated Slack user ids, so a mention can never be anything but that user."""
    return text.replace(PLACEHOLDER, f"<@{member}>")


def cursor_after_edit(old: Sequence[str], cursor: int, new: Sequence[str]) -> int:
    """Where the order continues after `members` changed from `old` to `new`: with the
    member who was next, if they remain; else with the first one after them (in the old
    order) who remains; else from the start."""
    if not old or not new:
        return 0
    start = cursor % len(old)
    for step in range(len(old)):
        member = old[(start + step) % len(old)]
        if member in new:
            return list(new).index(member)
    return 0


def parse_skips(value: object) -> dict[date, frozenset[str]]:
    """`skips`: {"YYYY-MM-DD": ["U…", …]}, the members out of office on local dates."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise DocumentError("invalid_skips", f"skips must be a map of dates, got {value!r}")
    skips: dict[date, frozenset[str]] = {}
    for key, members in value.items():
        day = _optional_date(key, "skips")
        if day is None or not isinstance(members, list):
            raise DocumentError("invalid_skips", f"skips[{key!r}] must list member ids")
        if not all(isinstance(m, str) for m in members):
            raise DocumentError("invalid_skips", f"skips[{key!r}] must list member ids")
        skips[day] = frozenset(members)
    return skips


# Far more periods than a team plans ahead; a document is bounded before it is walked.
MAX_AWAY = 200


def parse_away(value: object, members: Sequence[str]) -> tuple[Away, ...]:
    """`away`: [{"member", "from": "YYYY-MM-DD", "to": "YYYY-MM-DD"}], a member's days out
    of office (inclusive); the member must be one of `members` and `from` not after `to`."""
    if value is None:
        return ()
    if not isinstance(value, list) or len(value) > MAX_AWAY:
        raise DocumentError("invalid_away", f"away must be a list of at most {MAX_AWAY} periods")
    periods = []
    for index, entry in enumerate(value):
        if not isinstance(entry, Mapping) or set(entry) != {"member", "from", "to"}:
            raise DocumentError("invalid_away", f"away[{index}] must be {{member, from, to}}")
        member = entry["member"]
        if member not in members:
            raise DocumentError("invalid_away", f"away[{index}]: {member!r} is not a member")
        first = _optional_date(entry["from"], "away")
        last = _optional_date(entry["to"], "away")
        if first is None or last is None or first > last:
            raise DocumentError("invalid_away", f"away[{index}]: from must be on or before to")
        periods.append(Away(member, first, last))
    return tuple(periods)


_MEMBER_IDS = {
    SLACK: (USER_ID, "Slack user ids such as U0123ABCD"),
    TEAMS: (TEAMS_USER_ID, "Teams user ids such as 29:1a2b…"),
}


def _members(members: object, platform: str) -> list[str]:
    """`members`: a non-empty list of the platform's user ids, each once; the message says
    which rule a bad list breaks (not a list, an id that is not one, or a repeated member)."""
    pattern, shape = _MEMBER_IDS[platform]
    if not isinstance(members, list) or not members:
        raise DocumentError(
            "invalid_members", f"members must be a non-empty list of {shape}, got {members!r}"
        )
    malformed = [m for m in members if not isinstance(m, str) or not pattern.match(m)]
    if malformed:
        raise DocumentError("invalid_members", f"members {malformed!r} are not {shape}")
    repeated = sorted(m for m, n in Counter(members).items() if n > 1)
    if repeated:
        raise DocumentError(
            "invalid_members", f"members lists {', '.join(repeated)} more than once"
        )
    return members


def _optional_date(value: object, field: str) -> date | None:
    if value is None:
        return None
    if isinstance(value, str) and LOCAL_DATE.match(value):
        try:
            return date.fromisoformat(value)
        except ValueError:
            pass
    raise DocumentError(f"invalid_{field}", f"{field} {value!r} is not a date YYYY-MM-DD")
