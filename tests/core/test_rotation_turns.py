"""Rotation turns (core/rotation.py, issue #7): which local day is a turn, when it is due
(teams far from UTC, local midnight, DST gaps and folds), a rotation that was down for days,
weekends and public holidays, who takes each turn when people are out of office (fairness),
where the order continues after the member list is edited, and which stored documents are
refused. Every instant is passed explicitly; nothing reads the wall clock."""

from __future__ import annotations

import dataclasses
from datetime import UTC, date, datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.errors import DocumentError
from core.rotation import (
    Rotation,
    cursor_after_edit,
    fill_template,
    take_turn,
    turn_for,
    upcoming_turns,
)

ANA, BEN, CHO, DAN = "UANA1", "UBEN2", "UCHO3", "UDAN4"
BASE: dict[str, Any] = {
    "name": "Standup",
    "channel": "C0123ABC",
    "members": [ANA, BEN, CHO],
    "timezone": "Europe/Berlin",
    "send_time": "09:30",
    "weekdays": [0, 1, 2, 3, 4],
    "text": "Today's host: {member}",
    "cursor": 0,
    "last_processed_date": None,
    "status": "active",
}
EVERY_DAY = [0, 1, 2, 3, 4, 5, 6]
PROPS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def rotation(**changes: Any) -> Rotation:
    return Rotation.from_document("rot1", {**BASE, **changes})


def utc(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


def d(text: str) -> date:
    return date.fromisoformat(text)


def local(instant: datetime, tz: str) -> str:
    return instant.astimezone(ZoneInfo(tz)).isoformat()


# --- 1. Day boundaries -------------------------------------------------------------------


def test_kiritimati_team_takes_its_turn_while_utc_is_still_the_day_before() -> None:
    # UTC+14: Tuesday 09:00 local is Monday 19:00 UTC.
    r = rotation(timezone="Pacific/Kiritimati", send_time="09:00", last_processed_date="2027-03-01")
    before, at = utc("2027-03-01T18:59:59"), utc("2027-03-01T19:00:00")
    assert r.today(before) == d("2027-03-02")  # local Tuesday, UTC Monday
    assert not r.is_due(before)
    assert r.next_due_at(before) == at
    assert r.is_due(at)
    assert local(at, "Pacific/Kiritimati") == "2027-03-02T09:00:00+14:00"


def test_kiritimati_utc_friday_is_a_local_saturday_with_no_turn() -> None:
    r = rotation(timezone="Pacific/Kiritimati", send_time="09:00", last_processed_date="2027-03-05")
    now = utc("2027-03-05T12:00:00")  # Friday in UTC, Saturday 02:00 in Kiritimati
    assert r.today(now) == d("2027-03-06")
    assert not r.is_due(now)
    assert not r.is_due(utc("2027-03-06T12:00:00"))  # local Sunday
    # Next turn is local Monday 09:00, which is a Sunday in UTC.
    assert r.next_due_at(now) == utc("2027-03-07T19:00:00")


def test_pago_pago_team_takes_its_turn_after_utc_has_moved_to_the_next_day() -> None:
    # UTC-11: Monday 17:00 local is Tuesday 04:00 UTC.
    r = rotation(timezone="Pacific/Pago_Pago", send_time="17:00", last_processed_date="2027-02-26")
    now = utc("2027-03-02T05:00:00")
    assert r.today(now) == d("2027-03-01")
    assert r.due_at(d("2027-03-01")) == utc("2027-03-02T04:00:00")
    assert r.is_due(now)
    assert turn_for(r, r.today(now)).day == d("2027-03-01")


def test_pago_pago_friday_turn_falls_on_a_utc_saturday() -> None:
    r = rotation(timezone="Pacific/Pago_Pago", send_time="17:00", last_processed_date="2027-03-04")
    assert not r.is_due(utc("2027-03-06T03:59:59"))
    assert r.next_due_at(utc("2027-03-06T03:59:59")) == utc("2027-03-06T04:00:00")
    assert r.is_due(utc("2027-03-06T04:00:00"))  # a UTC Saturday, local Friday 17:00
    assert r.today(utc("2027-03-06T04:00:00")) == d("2027-03-05")


def test_send_time_midnight_is_due_at_the_first_second_of_the_local_day() -> None:
    # Berlin in winter is UTC+1: local midnight of Tuesday 2027-01-12 is 23:00 UTC Monday.
    r = rotation(send_time="00:00", last_processed_date="2027-01-11")
    one_before, midnight, one_after = (
        utc("2027-01-11T22:59:59"),
        utc("2027-01-11T23:00:00"),
        utc("2027-01-11T23:00:01"),
    )
    assert r.today(one_before) == d("2027-01-11")
    assert not r.is_due(one_before)
    assert r.next_due_at(one_before) == midnight
    assert r.today(midnight) == d("2027-01-12")
    assert r.is_due(midnight)
    assert r.is_due(one_after)


def test_send_time_2359_is_due_in_the_last_minute_and_not_carried_past_midnight() -> None:
    r = rotation(send_time="23:59", last_processed_date="2027-01-08")  # Friday done
    monday_due = utc("2027-01-11T22:59:00")
    assert r.due_at(d("2027-01-11")) == monday_due
    assert not r.is_due(monday_due - timedelta(seconds=1))
    assert r.is_due(monday_due)
    assert r.is_due(utc("2027-01-11T22:59:59"))  # one second before local midnight
    # One second after local midnight Monday's turn is gone (only today's turn is taken):
    after_midnight = utc("2027-01-11T23:00:01")
    assert r.today(after_midnight) == d("2027-01-12")
    assert not r.is_due(after_midnight)
    assert r.next_due_at(after_midnight) == utc("2027-01-12T22:59:00")


@pytest.mark.parametrize(
    ("tz", "day", "before", "on", "after"),
    [
        # New York springs forward 02:00 -> 03:00 on Sunday 2027-03-14.
        (
            "America/New_York",
            "2027-03-14",
            "2027-03-13T07:30",
            "2027-03-14T07:30",
            "2027-03-15T06:30",
        ),
        # Berlin springs forward 02:00 -> 03:00 on Sunday 2027-03-28.
        ("Europe/Berlin", "2027-03-28", "2027-03-27T01:30", "2027-03-28T01:30", "2027-03-29T00:30"),
    ],
)
def test_send_time_inside_the_spring_forward_gap_is_due_at_the_wall_time_after_it(
    tz: str, day: str, before: str, on: str, after: str
) -> None:
    r = rotation(timezone=tz, send_time="02:30", weekdays=EVERY_DAY)
    gap_day = d(day)
    due = r.due_at(gap_day)
    assert due == utc(on)
    assert due.astimezone(ZoneInfo(tz)).time() == time(3, 30)  # 02:30 does not exist
    # The days either side keep 02:30 local, whatever the UTC offset.
    for other, expected in ((gap_day - timedelta(days=1), before), (gap_day + timedelta(1), after)):
        assert r.due_at(other) == utc(expected)
        assert r.due_at(other).astimezone(ZoneInfo(tz)).time() == time(2, 30)
    opened = dataclasses.replace(r, last_processed_date=gap_day - timedelta(days=1))
    assert not opened.is_due(due - timedelta(seconds=1))
    assert opened.next_due_at(due - timedelta(seconds=1)) == due
    assert opened.is_due(due)


@pytest.mark.parametrize(
    ("tz", "send", "day", "before", "on", "second", "after"),
    [
        # New York falls back 02:00 EDT -> 01:00 EST on 2027-11-07: 01:30 happens twice.
        (
            "America/New_York",
            "01:30",
            "2027-11-07",
            "2027-11-06T05:30",
            "2027-11-07T05:30",
            "2027-11-07T06:30",
            "2027-11-08T06:30",
        ),
        # Berlin falls back 03:00 CEST -> 02:00 CET on 2027-10-31: 02:30 happens twice.
        (
            "Europe/Berlin",
            "02:30",
            "2027-10-31",
            "2027-10-30T00:30",
            "2027-10-31T00:30",
            "2027-10-31T01:30",
            "2027-11-01T01:30",
        ),
    ],
)
def test_send_time_inside_the_fall_back_fold_is_due_once_the_first_time(
    tz: str, send: str, day: str, before: str, on: str, second: str, after: str
) -> None:
    r = rotation(timezone=tz, send_time=send, weekdays=EVERY_DAY)
    fold_day, wall = d(day), time.fromisoformat(send)
    assert r.due_at(fold_day) == utc(on)  # the first one, still on summer time
    assert r.due_at(fold_day - timedelta(days=1)) == utc(before)
    assert r.due_at(fold_day + timedelta(days=1)) == utc(after)
    for other in (fold_day - timedelta(days=1), fold_day, fold_day + timedelta(days=1)):
        assert r.due_at(other).astimezone(ZoneInfo(tz)).time() == wall
    # Once taken at the first 01:30, the repeated 01:30 an hour later is not a second turn.
    taken = dataclasses.replace(r, last_processed_date=fold_day)
    assert utc(second).astimezone(ZoneInfo(tz)).time() == wall
    assert not taken.is_due(utc(second))
    assert taken.next_due_at(utc(second)) == utc(after)


def test_turn_whose_send_time_a_gap_across_local_midnight_skips_is_still_taken() -> None:
    """America/Nuuk springs forward at 23:00 on Saturday 2027-03-27 straight to 00:00 on
    Sunday (-02 -> -01), so 23:30 does not exist on Saturday. Under the documented gap rule
    Saturday's turn must still happen (at the wall time after the gap), once, and Sunday's
    must happen too. A tick every minute over the weekend takes both."""
    r = rotation(
        timezone="America/Nuuk",
        send_time="23:30",
        weekdays=EVERY_DAY,
        last_processed_date="2027-03-26",
    )
    taken: list[date] = []
    now, end = utc("2027-03-27T12:00:00"), utc("2027-03-29T12:00:00")
    while now < end:
        if r.is_due(now):
            taken.append(r.today(now))
            r = dataclasses.replace(r, last_processed_date=r.today(now))
        now += timedelta(minutes=1)
    assert taken == [d("2027-03-27"), d("2027-03-28")]


# Zones with DST at 02:00/03:00, at local midnight, half-hour shifts, southern hemisphere.
DST_ZONES = [
    "America/New_York",
    "Europe/Berlin",
    "Australia/Sydney",
    "Australia/Lord_Howe",
    "America/Santiago",
    "America/Havana",
    "Africa/Cairo",
    "Pacific/Chatham",
    "Asia/Beirut",
    "Pacific/Kiritimati",
    "Pacific/Pago_Pago",
    "UTC",
]


@PROPS
@given(
    st.sampled_from(DST_ZONES),
    st.dates(min_value=date(2026, 1, 1), max_value=date(2035, 12, 31)),
    st.times().map(lambda t: t.replace(second=0, microsecond=0)),
)
def test_turn_is_due_at_its_local_wall_time_on_its_own_local_day(
    tz_name: str, day: date, send: time
) -> None:
    r = rotation(
        timezone=tz_name,
        send_time=send.strftime("%H:%M"),
        weekdays=EVERY_DAY,
        last_processed_date=(day - timedelta(days=1)).isoformat(),
    )
    tz = ZoneInfo(tz_name)
    wall = datetime.combine(day, send)
    due = r.due_at(day)
    # The two readings of the wall time (they differ only in a gap or a fold).
    first = wall.replace(tzinfo=tz, fold=0).astimezone(UTC)
    second = wall.replace(tzinfo=tz, fold=1).astimezone(UTC)
    exists = first.astimezone(tz).replace(tzinfo=None) == wall
    if exists:
        assert due == min(first, second)  # in a fold: the first one
        assert due.astimezone(tz).replace(tzinfo=None) == wall
    else:  # in a gap: as much later on the wall clock as the gap is long
        gap = second.astimezone(tz).utcoffset() - first.astimezone(tz).utcoffset()  # type: ignore[operator]
        assert due.astimezone(tz).replace(tzinfo=None) == wall + abs(gap)
    assert r.today(due) == day
    assert not r.is_due(due - timedelta(seconds=1))
    assert r.is_due(due)
    assert r.next_due_at(due - timedelta(seconds=1)) == due


# --- 2. Down for days ----------------------------------------------------------------------


def test_rotation_down_for_days_takes_only_todays_turn() -> None:
    # Last turn Wednesday 2027-03-03; the processor comes back Monday 2027-03-08 10:00 local.
    r = rotation(last_processed_date="2027-03-03")
    now = utc("2027-03-08T09:00:00")
    today = d("2027-03-08")
    assert r.today(now) == today
    assert r.is_due(now)
    assert r.next_due_at(now) == r.due_at(today) == utc("2027-03-08T08:30:00")
    # After today's turn is claimed, the next one is Tuesday's, never a missed past day.
    assert r.next_due_at(now, after=today) == utc("2027-03-09T08:30:00")
    assert r.turn_days(now, 3) == [today, d("2027-03-09"), d("2027-03-10")]
    assert [t.day for t in upcoming_turns(r, now, 2)] == [today, d("2027-03-09")]
    assert upcoming_turns(r, now, 1)[0].member == ANA  # one turn, not one per missed day


def test_rotation_down_for_days_before_todays_time_waits_for_today() -> None:
    r = rotation(last_processed_date="2027-03-03")
    now = utc("2027-03-08T06:00:00")  # Monday 07:00 local, turn at 09:30
    assert not r.is_due(now)
    assert r.next_due_at(now) == utc("2027-03-08T08:30:00")


def test_turn_taken_today_is_not_due_again_and_the_next_is_the_next_turn_day() -> None:
    r = rotation(last_processed_date="2027-03-05")  # Friday's turn taken
    for instant in ("2027-03-05T08:30:00", "2027-03-05T15:00:00", "2027-03-05T22:59:59"):
        assert not r.is_due(utc(instant))
        assert r.next_due_at(utc(instant)) == utc("2027-03-08T08:30:00")  # Monday


def test_a_turn_taken_before_the_timezone_moved_west_is_not_taken_again() -> None:
    # Friday's turn was taken in Tokyo; the team then moved to Los Angeles, where it is
    # still Thursday for hours: neither Thursday nor Friday may be posted again.
    r = rotation(last_processed_date="2027-03-05", timezone="America/Los_Angeles")
    now = utc("2027-03-05T06:00:00")  # Thursday 22:00 in Los Angeles

    assert not r.is_due(now)
    assert r.next_due_at(now) == utc("2027-03-08T17:30:00")  # Monday 09:30 PST


# --- 3. Weekdays and holidays --------------------------------------------------------------


def test_weekend_is_not_a_turn_day() -> None:
    r = rotation(last_processed_date="2027-03-05")
    saturday = utc("2027-03-06T12:00:00")
    assert not r.is_turn_day(d("2027-03-06"))
    assert not r.is_turn_day(d("2027-03-07"))
    assert not r.is_due(saturday)
    assert r.next_due_at(saturday) == utc("2027-03-08T08:30:00")
    weekend_team = rotation(weekdays=[5, 6], last_processed_date="2027-03-05")
    assert weekend_team.is_due(saturday)


def test_mondays_only_rotation_waits_for_the_next_monday() -> None:
    r = rotation(weekdays=[0], last_processed_date="2027-03-08")
    assert r.next_due_at(utc("2027-03-09T12:00:00")) == utc("2027-03-15T08:30:00")
    assert r.turn_days(utc("2027-03-09T12:00:00"), 2) == [d("2027-03-15"), d("2027-03-22")]


def test_german_new_year_is_not_a_turn_day() -> None:
    now = utc("2027-01-01T12:00:00")  # Friday, New Year's Day
    plain = rotation(last_processed_date="2026-12-31")
    assert plain.is_due(now)  # without a calendar, a Friday is a turn day
    r = rotation(working_days={"country": "DE"}, last_processed_date="2026-12-31")
    assert not r.is_turn_day(d("2027-01-01"))
    assert not r.is_due(now)
    assert r.next_due_at(now) == utc("2027-01-04T08:30:00")  # skips the holiday and weekend


def test_us_observed_independence_day_is_not_a_turn_day() -> None:
    # 2027-07-04 is a Sunday; Monday 2027-07-05 is the observed holiday.
    r = rotation(
        timezone="America/New_York",
        working_days={"country": "US"},
        last_processed_date="2027-07-02",
    )
    now = utc("2027-07-05T15:00:00")
    assert not r.is_due(now)
    assert r.next_due_at(now) == utc("2027-07-06T13:30:00")  # Tuesday 09:30 EDT
    assert r.turn_days(utc("2027-07-02T20:00:00"), 2) == [d("2027-07-06"), d("2027-07-07")]
    assert [t.day for t in upcoming_turns(r, utc("2027-07-03T12:00:00"), 1)] == [d("2027-07-06")]


# --- 4. Who takes the turn -----------------------------------------------------------------

DAY = d("2027-03-08")


def run(members: list[str], cursor: int, skips: list[set[str]]) -> list[str | None]:
    chosen: list[str | None] = []
    order: tuple[str, ...] = tuple(members)
    for offset, skipped in enumerate(skips):
        turn = take_turn(order, cursor, frozenset(skipped), DAY + timedelta(days=offset))
        chosen.append(turn.member)
        order, cursor = turn.members, turn.cursor
    return chosen


def test_members_take_turns_in_order_and_the_cursor_wraps() -> None:
    assert run([ANA, BEN, CHO], 0, [set()] * 7) == [ANA, BEN, CHO, ANA, BEN, CHO, ANA]
    assert run([ANA, BEN, CHO], 2, [set()] * 4) == [CHO, ANA, BEN, CHO]
    turn = take_turn((ANA, BEN, CHO), 2, frozenset(), DAY)
    assert (turn.member, turn.members, turn.cursor) == (CHO, (ANA, BEN, CHO), 0)


def test_skipped_member_goes_next_after_the_one_who_replaced_them() -> None:
    everyone = [ANA, BEN, CHO, DAN]
    assert run(everyone, 0, [{ANA}, set(), set(), set(), set()]) == [BEN, ANA, CHO, DAN, BEN]


def test_several_skipped_members_go_next_in_their_original_order() -> None:
    everyone = [ANA, BEN, CHO, DAN]
    assert run(everyone, 0, [{ANA, BEN}, set(), set(), set()]) == [CHO, ANA, BEN, DAN]
    # Out of office for two days running: still first once back, nobody else goes twice.
    assert run(everyone, 0, [{ANA}, {ANA}, set(), set(), set()]) == [BEN, CHO, ANA, DAN, BEN]


def test_skip_across_the_end_of_the_list_keeps_the_skipped_members_next() -> None:
    everyone = [ANA, BEN, CHO, DAN]
    assert run(everyone, 3, [{DAN}, set(), set(), set(), set()]) == [ANA, DAN, BEN, CHO, ANA]
    assert run(everyone, 3, [{DAN, ANA}, set(), set(), set()]) == [BEN, DAN, ANA, CHO]


def test_everyone_skipped_means_no_turn_and_no_change() -> None:
    turn = take_turn((ANA, BEN, CHO), 1, frozenset({ANA, BEN, CHO}), DAY)
    assert (turn.member, turn.members, turn.cursor) == (None, (ANA, BEN, CHO), 1)
    assert run([ANA, BEN, CHO], 1, [{ANA, BEN, CHO}, set()]) == [None, BEN]


def test_turn_for_reads_the_skips_of_that_local_day_only() -> None:
    r = rotation(skips={"2027-03-09": [ANA]})
    assert turn_for(r, d("2027-03-08")).member == ANA
    assert turn_for(r, d("2027-03-09")).member == BEN


def test_preview_matches_the_turns_actually_taken_day_by_day() -> None:
    r = rotation(
        skips={"2027-03-09": [BEN], "2027-03-12": [CHO, ANA]}, last_processed_date="2027-03-05"
    )
    now = utc("2027-03-08T06:00:00")
    preview = upcoming_turns(r, now, 6)
    assert [(t.day.isoformat(), t.member) for t in preview] == [
        ("2027-03-08", ANA),
        ("2027-03-09", CHO),  # Ben is out: Cho goes, Ben is next
        ("2027-03-10", BEN),
        ("2027-03-11", ANA),
        ("2027-03-12", BEN),  # Cho and Ana are out: Ben, then Cho, then Ana
        ("2027-03-15", CHO),
    ]
    # The real send: on each turn day, the turn of the stored rotation, then store the order.
    sent = []
    for t in preview:
        due = r.due_at(t.day)
        assert r.is_due(due)
        turn = turn_for(r, r.today(due))
        sent.append(turn)
        r = dataclasses.replace(
            r, members=turn.members, cursor=turn.cursor, last_processed_date=turn.day
        )
    assert sent == preview


user_ids = st.from_regex(r"U[A-Z0-9]{2,6}", fullmatch=True)


def queue(order: tuple[str, ...], cursor: int) -> tuple[str, ...]:
    """The members in the order they are up next."""
    start = cursor % len(order)
    return order[start:] + order[:start]


@PROPS
@given(
    st.lists(user_ids, min_size=1, max_size=7, unique=True),
    st.integers(min_value=0, max_value=40),
    st.data(),
)
def test_turns_are_fair_whoever_is_out_of_office(
    members: list[str], cursor: int, data: st.DataObject
) -> None:
    days = data.draw(st.integers(min_value=1, max_value=25))
    skips = [
        frozenset(data.draw(st.sets(st.sampled_from(members), max_size=len(members))))
        for _ in range(days)
    ]
    order: tuple[str, ...] = tuple(members)
    chosen: list[str | None] = []
    for offset, skipped in enumerate(skips):
        turn = take_turn(order, cursor, skipped, DAY + timedelta(days=offset))
        assert sorted(turn.members) == sorted(members)  # nobody added or lost
        assert 0 <= turn.cursor < len(members)
        before = queue(order, cursor)
        if skipped >= set(members):  # (d) everyone out: no turn, nothing moves
            assert turn.member is None
            assert turn.members == order
            assert turn.cursor == cursor % len(members)
        else:
            assert turn.member is not None
            assert turn.member not in skipped  # (a)
            if not skipped:
                assert turn.member == order[cursor % len(order)]  # (b)
            # The ones skipped in front of the chosen member keep their places and order;
            # the chosen member goes to the back of the round.
            after = queue(turn.members, turn.cursor)
            assert after == (*(m for m in before if m != turn.member), turn.member)
        chosen.append(turn.member)
        order, cursor = turn.members, turn.cursor
    # (c) Between two consecutive turns of a member (days i < j), every other member who was
    # not out on day j had a turn in between. In particular anyone out on none of the days
    # after i up to j did, and nobody takes two turns in one round.
    for j, member in enumerate(chosen):
        if member is None:
            continue
        earlier = [i for i in range(j) if chosen[i] == member]
        if not earlier:
            continue
        i = earlier[-1]
        for other in members:
            if other != member and other not in skips[j]:
                assert other in chosen[i + 1 : j], (member, other, i, j, chosen, skips)


# --- 5. cursor_after_edit ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("old", "cursor", "new", "next_up"),
    [
        ([ANA, BEN, CHO], 1, [ANA, DAN, BEN, CHO], BEN),  # add before the next person
        ([ANA, BEN, CHO], 1, [DAN, ANA, BEN, CHO], BEN),
        ([ANA, BEN, CHO], 1, [ANA, BEN, CHO, DAN], BEN),  # add at the end
        ([ANA, BEN, CHO], 1, [BEN, CHO], BEN),  # remove someone else
        ([ANA, BEN, CHO], 1, [ANA, BEN], BEN),
        ([ANA, BEN, CHO], 1, [ANA, CHO], CHO),  # remove the next person: the one after
        ([ANA, BEN, CHO], 2, [ANA, BEN], ANA),  # ... wrapping to the start
        ([ANA, BEN, CHO, DAN], 1, [ANA, DAN], DAN),  # next two removed
        ([ANA, BEN, CHO], 1, [CHO, BEN, ANA], BEN),  # reorder
        ([ANA, BEN, CHO], 1, [BEN, CHO, ANA], BEN),
    ],
)
def test_cursor_after_edit_keeps_who_is_next(
    old: list[str], cursor: int, new: list[str], next_up: str
) -> None:
    assert new[cursor_after_edit(old, cursor, new)] == next_up


def test_cursor_after_edit_starts_over_when_nobody_remains() -> None:
    assert cursor_after_edit([ANA, BEN, CHO], 2, []) == 0
    assert cursor_after_edit([ANA, BEN, CHO], 2, [DAN, "UEVE5"]) == 0


@PROPS
@given(
    st.lists(user_ids, min_size=1, max_size=6, unique=True),
    st.lists(user_ids, min_size=1, max_size=6, unique=True),
    st.integers(min_value=0, max_value=20),
    st.randoms(use_true_random=False),
)
def test_cursor_after_edit_continues_with_the_next_remaining_member(
    old: list[str], added: list[str], cursor: int, rnd: Any
) -> None:
    kept = [m for m in old if rnd.random() < 0.6]
    new = kept + [m for m in added if m not in old]
    rnd.shuffle(new)
    if not new:
        assert cursor_after_edit(old, cursor, new) == 0
        return
    result = cursor_after_edit(old, cursor, new)
    assert 0 <= result < len(new)
    up_next = queue(tuple(old), cursor)
    remaining = [m for m in up_next if m in new]
    assert new[result] == (remaining[0] if remaining else new[0])


# --- 6. from_document ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("channel", None),
        ("channel", ""),
        ("channel", "#general"),
        ("channel", "UANA1"),
        ("channel", 42),
        ("members", []),
        ("members", None),
        ("members", ANA),
        ("members", [ANA, BEN, ANA]),
        ("members", [ANA, "alice"]),
        ("members", [ANA, "C0123ABC"]),
        ("members", [ANA, 7]),
        ("timezone", "Mars/Olympus_Mons"),
        ("timezone", "Europe/Berln"),
        ("timezone", 5),
        ("send_time", "9:30"),
        ("send_time", "24:00"),
        ("send_time", "09:60"),
        ("send_time", "09:30:00"),
        ("send_time", None),
        ("send_time", 930),
        ("weekdays", []),
        ("weekdays", [7]),
        ("weekdays", [-1, 0]),
        ("weekdays", ["1"]),
        ("weekdays", "0,1"),
        ("weekdays", None),
        ("weekdays", [True]),
        ("text", ""),
        ("text", "   \n"),
        ("text", None),
        ("text", "x" * 40_001),
        ("cursor", "1"),
        ("cursor", 1.5),
        ("cursor", True),
        ("last_processed_date", "2027-02-30"),
        ("last_processed_date", "2027-13-01"),
        ("last_processed_date", "27-01-01"),
        ("last_processed_date", "2027-01-01T09:30"),
        ("last_processed_date", 20270101),
        ("skips", ["2027-03-09"]),
        ("skips", "2027-03-09"),
        ("skips", {"2027-02-30": [ANA]}),
        ("skips", {"tomorrow": [ANA]}),
        ("skips", {"2027-03-09": ANA}),
        ("skips", {"2027-03-09": [ANA, 7]}),
        ("working_days", {"country": "XX"}),
        ("working_days", "DE"),
    ],
)
def test_bad_field_is_refused_with_its_code(field: str, value: Any) -> None:
    with pytest.raises(DocumentError) as caught:
        rotation(**{field: value})
    assert caught.value.code == f"invalid_{field}"


@pytest.mark.parametrize(("cursor", "members", "next_up"), [(5, 3, CHO), (3, 3, ANA), (-1, 3, CHO)])
def test_out_of_range_cursor_continues_the_order(cursor: int, members: int, next_up: str) -> None:
    r = rotation(cursor=cursor, members=[ANA, BEN, CHO][:members])
    assert r.cursor == [ANA, BEN, CHO].index(next_up)
    assert turn_for(r, DAY).member == next_up


def test_valid_document_is_read_as_stored() -> None:
    r = rotation(
        cursor=1,
        last_processed_date="2027-03-05",
        skips={"2027-03-09": [BEN, CHO]},
        working_days={"country": "DE", "subdivision": "BY"},
        text="x" * 40_000,
    )
    assert r.members == (ANA, BEN, CHO)
    assert r.tz == ZoneInfo("Europe/Berlin")
    assert r.send_time == time(9, 30)
    assert r.weekdays == frozenset({0, 1, 2, 3, 4})
    assert r.last_processed_date == d("2027-03-05")
    assert r.skips == {d("2027-03-09"): frozenset({BEN, CHO})}
    # Bavaria's Epiphany (a Wednesday in 2027) is not a working day there.
    assert not r.is_turn_day(d("2027-01-06"))
    assert rotation(working_days={"country": "DE", "subdivision": "BE"}).is_turn_day(
        d("2027-01-06")
    )


def test_weekdays_default_to_monday_to_friday() -> None:
    data = {k: v for k, v in BASE.items() if k != "weekdays"}
    r = Rotation.from_document("rot1", data)
    assert [r.is_turn_day(d("2027-03-08") + timedelta(days=n)) for n in range(7)] == [
        True,
        True,
        True,
        True,
        True,
        False,
        False,
    ]


# --- 7. fill_template ----------------------------------------------------------------------


def test_every_placeholder_becomes_a_mention() -> None:
    assert (
        fill_template("Host: {member}. Thanks {member}!", ANA) == "Host: <@UANA1>. Thanks <@UANA1>!"
    )
    r = rotation(text="{member} runs standup")
    turn = turn_for(r, DAY)
    assert turn.member is not None
    assert fill_template(r.text, turn.member) == "<@UANA1> runs standup"


@pytest.mark.parametrize("text", ["Standup in 5 minutes", "{Member} {members} { member }", "{}"])
def test_text_without_the_placeholder_is_unchanged(text: str) -> None:
    assert fill_template(text, ANA) == text


def test_missed_days_are_the_turn_days_between_the_last_turn_and_today() -> None:
    r = rotation(last_processed_date="2027-03-03")  # Wednesday's turn taken; down until Tuesday

    assert r.missed_days(d("2027-03-09")) == [d("2027-03-04"), d("2027-03-05"), d("2027-03-08")]
    assert r.missed_days(d("2027-03-04")) == []  # the day after the last turn: nothing missed
    assert rotation().missed_days(d("2027-03-09")) == []  # no turn ever taken: nothing to miss
