"""Schedule math: RFC 5545 DST policy and anchors. (The recurrence issue widens this.)"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from core.errors import DocumentError
from core.schedule import Recurrence


def utc(year: int, month: int, day: int, hour: int = 0, minute: int = 0) -> datetime:
    return datetime(year, month, day, hour, minute, tzinfo=UTC)


def upcoming(rule: Recurrence, after: datetime, n: int) -> list[datetime]:
    it = rule.occurrences_after(after)
    return [next(it) for _ in range(n)]


def test_a_gap_time_fires_once_with_the_offset_before_the_gap():
    rule = Recurrence.parse("FREQ=DAILY", "2027-03-13T02:30", "America/New_York")
    assert upcoming(rule, utc(2027, 3, 13), 3) == [
        utc(2027, 3, 13, 7, 30),  # EST
        utc(2027, 3, 14, 7, 30),  # 02:30 does not exist: 03:30 EDT
        utc(2027, 3, 15, 6, 30),  # EDT
    ]


def test_a_repeated_time_fires_once_at_its_first_instance():
    rule = Recurrence.parse("FREQ=DAILY", "2027-11-06T01:30", "America/New_York")
    assert upcoming(rule, utc(2027, 11, 6), 3) == [
        utc(2027, 11, 6, 5, 30),
        utc(2027, 11, 7, 5, 30),  # 01:30 EDT, not 01:30 EST
        utc(2027, 11, 8, 6, 30),
    ]


def test_two_wall_times_mapping_to_one_instant_fire_once():
    rule = Recurrence.parse("FREQ=MINUTELY;INTERVAL=30", "2027-03-14T01:00", "America/New_York")
    got = upcoming(rule, utc(2027, 3, 14, 5, 59), 4)
    # 02:00 and 02:30 do not exist: they map to 07:00Z and 07:30Z, the same instants as
    # 03:00 and 03:30 EDT, and each instant fires once.
    assert got == [
        utc(2027, 3, 14, 6),
        utc(2027, 3, 14, 6, 30),
        utc(2027, 3, 14, 7),
        utc(2027, 3, 14, 7, 30),
    ]
    assert len(set(got)) == len(got)


def test_until_in_utc_and_count_end_a_series():
    rule = Recurrence.parse(
        "FREQ=DAILY;UNTIL=20270103T080000Z", "2027-01-01T09:00", "Europe/Berlin"
    )
    assert list(rule.occurrences_after(utc(2026, 1, 1))) == [
        utc(2027, 1, 1, 8),
        utc(2027, 1, 2, 8),
        utc(2027, 1, 3, 8),
    ]
    rule = Recurrence.parse("FREQ=DAILY;COUNT=2", "2027-01-01T09:00", "UTC")
    assert rule.next_after(utc(2027, 1, 2, 9)) is None


def test_exdates_are_left_out():
    rule = Recurrence.parse("FREQ=DAILY", "2027-01-01T09:00", "UTC", ["2027-01-02T09:00"])
    assert upcoming(rule, utc(2027, 1, 1), 2) == [utc(2027, 1, 1, 9), utc(2027, 1, 3, 9)]


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (("FREQ=DAILY", "2027-01-01T09:00", "Nowhere/Else"), "invalid_timezone"),
        (("FREQ=OFTEN", "2027-01-01T09:00", "UTC"), "invalid_rrule"),
        (("DTSTART:20270101T090000\nRRULE:FREQ=DAILY", "2027-01-01T09:00", "UTC"), "invalid_rrule"),
        (("FREQ=DAILY", "tomorrow", "UTC"), "invalid_dtstart"),
    ],
)
def test_bad_schedules_name_their_problem(args, code):
    with pytest.raises(DocumentError) as caught:
        Recurrence.parse(*args)
    assert caught.value.code == code
