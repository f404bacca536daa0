"""Schedule math: the RFC 5545 DST policy in several zones, anchors, working days, the
misfire plan, resume and preview. Pure: no Firestore needed."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from core.errors import DocumentError
from core.schedule import (
    Missed,
    Recurrence,
    catch_up,
    recurrence_from_fields,
    resume_next_run_at,
    upcoming,
)
from core.working_days import WorkingDays
from tests.fixtures.clock import utc


def next_n(rule: Recurrence, after: datetime, n: int) -> list[datetime]:
    it = rule.occurrences_after(after)
    return [next(it) for _ in range(n)]


def test_a_gap_time_fires_once_with_the_offset_before_the_gap():
    rule = Recurrence.parse("FREQ=DAILY", "2027-03-13T02:30", "America/New_York")
    assert next_n(rule, utc(2027, 3, 13), 3) == [
        utc(2027, 3, 13, 7, 30),  # EST
        utc(2027, 3, 14, 7, 30),  # 02:30 does not exist: 03:30 EDT
        utc(2027, 3, 15, 6, 30),  # EDT
    ]


def test_a_repeated_time_fires_once_at_its_first_instance():
    rule = Recurrence.parse("FREQ=DAILY", "2027-11-06T01:30", "America/New_York")
    assert next_n(rule, utc(2027, 11, 6), 3) == [
        utc(2027, 11, 6, 5, 30),
        utc(2027, 11, 7, 5, 30),  # 01:30 EDT, not 01:30 EST
        utc(2027, 11, 8, 6, 30),
    ]


def test_two_wall_times_mapping_to_one_instant_fire_once():
    rule = Recurrence.parse("FREQ=MINUTELY;INTERVAL=30", "2027-03-14T01:00", "America/New_York")
    got = next_n(rule, utc(2027, 3, 14, 5, 59), 4)
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
    assert next_n(rule, utc(2027, 1, 1), 2) == [utc(2027, 1, 1, 9), utc(2027, 1, 3, 9)]


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


# --- DST policy, zone by zone ---------------------------------------------------------------
# (zone, local wall time that falls in a gap or a fold, the instant it fires at)
DST_CASES = [
    # New York: 02:00 EST -> 03:00 EDT on 2027-03-14; 02:00 EDT -> 01:00 EST on 2027-11-07.
    ("America/New_York", "2027-03-14T02:30", utc(2027, 3, 14, 7, 30)),  # = 03:30 EDT
    ("America/New_York", "2027-11-07T01:30", utc(2027, 11, 7, 5, 30)),  # 01:30 EDT, first
    # Berlin: 02:00 CET -> 03:00 CEST on 2027-03-28; 03:00 CEST -> 02:00 CET on 2027-10-31.
    ("Europe/Berlin", "2027-03-28T02:30", utc(2027, 3, 28, 1, 30)),  # = 03:30 CEST
    ("Europe/Berlin", "2027-10-31T02:30", utc(2027, 10, 31, 0, 30)),  # 02:30 CEST, first
    # Lord Howe moves by 30 minutes: 02:00 -> 02:30 (+10:30 -> +11) on 2027-10-03,
    # 02:00 -> 01:30 on 2027-04-04.
    ("Australia/Lord_Howe", "2027-10-03T02:15", utc(2027, 10, 2, 15, 45)),  # = 02:45 +11
    ("Australia/Lord_Howe", "2027-04-04T01:45", utc(2027, 4, 3, 14, 45)),  # 01:45 +11, first
    # Mexico City dropped DST after 2022: a gap in April 2022, none in April 2023.
    ("America/Mexico_City", "2022-04-03T02:30", utc(2022, 4, 3, 8, 30)),  # = 03:30 CDT
    ("America/Mexico_City", "2023-04-02T02:30", utc(2023, 4, 2, 8, 30)),  # plain CST
]


@pytest.mark.parametrize(("tz", "wall", "expected"), DST_CASES)
def test_gap_and_fold_times_fire_exactly_once_per_the_rfc_policy(tz, wall, expected):
    day_before = (datetime.fromisoformat(wall) - timedelta(days=1)).isoformat()
    rule = Recurrence.parse("FREQ=DAILY;COUNT=3", day_before, tz)
    fired = list(rule.occurrences_after(utc(1970, 1, 1)))
    assert len(fired) == 3  # nothing skipped, nothing doubled
    assert fired[1] == expected
    assert rule.first() == fired[0]


@pytest.mark.parametrize(
    ("tz", "dtstart", "days", "expected_offsets"),
    [
        # (UTC offsets, in hours, of a daily 09:00 across both transitions)
        ("America/New_York", "2027-03-13T09:00", [0, 1], [-5, -4]),
        ("America/New_York", "2027-03-13T09:00", [238, 239], [-4, -5]),  # Nov 6 -> Nov 7
        ("Europe/Berlin", "2027-03-27T09:00", [0, 1], [1, 2]),
        ("Europe/Berlin", "2027-03-27T09:00", [217, 218], [2, 1]),  # Oct 30 -> Oct 31
        ("Australia/Lord_Howe", "2027-04-03T09:00", [0, 1], [11, 10.5]),
        ("Australia/Lord_Howe", "2027-04-03T09:00", [182, 183], [10.5, 11]),  # Oct 2 -> 3
        ("America/Mexico_City", "2022-10-29T09:00", [0, 1, 160], [-5, -6, -6]),  # no DST in 2023
    ],
)
def test_a_daily_nine_oclock_stays_at_nine_local_across_transitions(
    tz, dtstart, days, expected_offsets
):
    rule = Recurrence.parse("FREQ=DAILY", dtstart, tz)
    fired = next_n(rule, utc(2000, 1, 1), max(days) + 1)
    for day, offset in zip(days, expected_offsets, strict=True):
        local = fired[day].astimezone(rule.tz)
        assert (local.hour, local.minute) == (9, 0)
        assert local.utcoffset() == timedelta(hours=offset)
        assert local.date() == (datetime.fromisoformat(dtstart) + timedelta(days=day)).date()


def test_distinct_wall_times_around_a_gap_keep_their_order():
    # Every 40 minutes from 01:50 on 2027-03-14: 02:30 does not exist and fires at 07:30Z
    # (= 03:30 EDT), after 03:10 EDT (07:10Z), which must not be lost for coming later.
    rule = Recurrence.parse("FREQ=MINUTELY;INTERVAL=40", "2027-03-14T01:50", "America/New_York")
    assert next_n(rule, utc(2027, 3, 14), 4) == [
        utc(2027, 3, 14, 6, 50),
        utc(2027, 3, 14, 7, 10),
        utc(2027, 3, 14, 7, 30),
        utc(2027, 3, 14, 7, 50),
    ]


def test_the_next_occurrence_comes_from_the_anchor_not_from_when_it_is_asked():
    rule = Recurrence.parse("FREQ=HOURLY;INTERVAL=5", "2027-01-04T09:17", "UTC")
    late = utc(2027, 1, 4, 13, 59) + timedelta(seconds=59)  # asked at an odd moment
    assert rule.next_after(late) == utc(2027, 1, 4, 14, 17)
    assert rule.next_after(utc(2027, 1, 4, 14, 17)) == utc(2027, 1, 4, 19, 17)


# --- Working days ---------------------------------------------------------------------------


def weekdays_fired(rule: Recurrence, after: datetime, n: int) -> list[str]:
    return [i.astimezone(rule.tz).strftime("%a %d") for i in next_n(rule, after, n)]


@pytest.mark.parametrize(
    ("country", "tz", "expected"),
    [
        # Saudi Arabia rests Friday and Saturday; Iran Friday alone; Germany Sat-Sun.
        ("SA", "Asia/Riyadh", ["Sun 10", "Mon 11", "Tue 12", "Wed 13", "Thu 14", "Sun 17"]),
        ("IR", "Asia/Tehran", ["Sun 10", "Mon 11", "Tue 12", "Wed 13", "Thu 14", "Sat 16"]),
        ("DE", "Europe/Berlin", ["Mon 11", "Tue 12", "Wed 13", "Thu 14", "Fri 15", "Mon 18"]),
    ],
)
def test_each_country_has_its_own_weekend(country, tz, expected):
    rule = Recurrence.parse("FREQ=DAILY", "2027-01-10T09:00", tz, working_days=WorkingDays(country))
    assert weekdays_fired(rule, utc(2027, 1, 9), 6) == expected


def test_a_weekend_that_changed_is_applied_by_date():
    # The UAE moved its weekend from Fri-Sat to Sat-Sun on 2022-01-01.
    rule = Recurrence.parse(
        "FREQ=WEEKLY;BYDAY=FR,SU", "2021-12-17T09:00", "Asia/Dubai", working_days=WorkingDays("AE")
    )
    fired = [i.astimezone(rule.tz).date().isoformat() for i in next_n(rule, utc(2021, 12, 20), 3)]
    # Fridays 12-24 and 12-31 rest in 2021, Sundays 01-02 and 01-09 rest in 2022.
    assert fired == ["2021-12-26", "2022-01-07", "2022-01-14"]


def test_public_holidays_of_a_subdivision_are_skipped():
    # Epiphany (2027-01-06) is a holiday in Bavaria, not in Germany as a whole.
    body, start = "FREQ=DAILY;BYDAY=MO,TU,WE,TH,FR", "2027-01-05T09:00"
    bavaria = Recurrence.parse(body, start, "Europe/Berlin", working_days=WorkingDays("DE", "BY"))
    germany = Recurrence.parse(body, start, "Europe/Berlin", working_days=WorkingDays("DE"))
    assert weekdays_fired(bavaria, utc(2027, 1, 5), 2) == ["Tue 05", "Thu 07"]
    assert weekdays_fired(germany, utc(2027, 1, 5), 2) == ["Tue 05", "Wed 06"]


def test_next_working_day_moves_an_occurrence_past_holidays_and_weekends():
    # July 4 2027 is a Sunday; the US observes it on Monday July 5. A Sunday series moves to
    # Tuesday the 6th, same wall time; one post, not two, with Tuesday's own.
    rule = Recurrence.parse(
        "FREQ=WEEKLY;BYDAY=SU,TU;BYHOUR=15;BYMINUTE=0",
        "2027-06-27T00:00",
        "America/New_York",
        working_days=WorkingDays("US", policy="next_working_day"),
    )
    assert next_n(rule, utc(2027, 7, 1), 3) == [
        utc(2027, 7, 6, 19),  # Sunday's occurrence, moved; Tuesday's own is the same instant
        utc(2027, 7, 12, 19),  # Sunday the 11th, moved to Monday
        utc(2027, 7, 13, 19),
    ]


def test_a_moved_occurrence_is_ordered_among_the_series_own():
    # Good Friday (Mar 26) and Easter Monday (Mar 29) 2027: Friday 17:00 moves to Tuesday
    # 17:00, after Tuesday's own 09:00.
    rule = Recurrence.parse(
        "FREQ=WEEKLY;BYDAY=FR,TU;BYHOUR=9,17;BYMINUTE=0",
        "2027-03-01T00:00",
        "Europe/Berlin",
        exdates=["2027-03-26T09:00"],
        working_days=WorkingDays("DE", policy="next_working_day"),
    )
    assert next_n(rule, utc(2027, 3, 25), 3) == [
        utc(2027, 3, 30, 7),
        utc(2027, 3, 30, 15),  # the moved Friday 17:00, once, with Tuesday's own 17:00
        utc(2027, 4, 2, 7),
    ]


def test_a_rule_that_never_lands_on_a_working_day_is_exhausted_not_searched_forever():
    # Exhausted at once, so it has no occurrence at all: refused like any empty schedule.
    with pytest.raises(DocumentError, match="no occurrence at all") as raised:
        Recurrence.parse(
            "FREQ=WEEKLY;BYDAY=SA", "2027-01-02T09:00", "UTC", working_days=WorkingDays("DE")
        )
    assert raised.value.code == "invalid_rrule"


@pytest.mark.parametrize(
    ("fields", "code"),
    [
        ({"working_days": {"country": "XX"}}, "invalid_working_days"),
        ({"working_days": {"country": "DE", "subdivision": "ZZ"}}, "invalid_working_days"),
        ({"working_days": {"subdivision": "BY"}}, "invalid_working_days"),
        ({"working_days": "DE"}, "invalid_working_days"),
        ({"working_days": {"country": "DE", "region": "BY"}}, "invalid_working_days"),
        (
            {"working_days": {"country": "DE"}, "on_non_working_day": "later"},
            "invalid_on_non_working_day",
        ),
        ({"on_non_working_day": "skip"}, "invalid_on_non_working_day"),
    ],
)
def test_bad_working_days_name_their_problem(fields, code):
    draft = {"rrule": "FREQ=DAILY", "dtstart": "2027-01-01T09:00", "timezone": "UTC", **fields}
    with pytest.raises(DocumentError) as caught:
        recurrence_from_fields(draft)
    assert caught.value.code == code


# --- Misfire plan ---------------------------------------------------------------------------

DAILY_9 = Recurrence.parse("FREQ=DAILY", "2027-01-01T09:00", "UTC")


def test_an_on_time_occurrence_is_sent_and_nothing_is_missed():
    plan = catch_up(DAILY_9, utc(2027, 1, 4, 9), utc(2027, 1, 4, 9, 0), 3600)
    assert (plan.send, plan.missed, plan.missed_total) == (utc(2027, 1, 4, 9), (), 0)


def test_after_downtime_only_the_most_recent_occurrence_within_grace_is_sent():
    plan = catch_up(DAILY_9, utc(2027, 1, 1, 9), utc(2027, 1, 4, 9, 59), 3600)
    assert plan.send == utc(2027, 1, 4, 9)
    assert plan.missed == tuple(Missed(utc(2027, 1, d, 9)) for d in (1, 2, 3))
    assert plan.missed_total == 3


def test_when_even_the_most_recent_is_past_grace_nothing_is_sent():
    plan = catch_up(
        DAILY_9,
        utc(2027, 1, 3, 9),
        utc(
            2027,
            1,
            4,
            10,
            0,
        ),
        3599,
    )
    assert plan.send is None
    assert plan.missed == (Missed(utc(2027, 1, 3, 9)), Missed(utc(2027, 1, 4, 9)))
    assert plan.latest == utc(2027, 1, 4, 9)
    assert DAILY_9.next_after(plan.latest) == utc(2027, 1, 5, 9)


def test_grace_is_inclusive_and_zero_grace_means_on_time_only():
    assert catch_up(DAILY_9, utc(2027, 1, 4, 9), utc(2027, 1, 4, 10), 3600).send is not None
    assert catch_up(DAILY_9, utc(2027, 1, 4, 9), utc(2027, 1, 4, 9), 0).send is not None
    late = utc(2027, 1, 4, 9) + timedelta(seconds=1)
    assert catch_up(DAILY_9, utc(2027, 1, 4, 9), late, 0).send is None


def test_a_week_of_missed_minutes_is_accounted_for_in_a_bounded_number_of_entries():
    minutely = Recurrence.parse("FREQ=MINUTELY", "2027-01-01T00:00", "UTC")
    now = utc(2027, 1, 8)
    plan = catch_up(minutely, utc(2027, 1, 1), now, 3600, max_entries=50)
    assert plan.send == now
    assert len(plan.missed) == 50
    summary, *individual = plan.missed
    assert summary.occurrence_at == utc(2027, 1, 1)
    assert sum(m.count for m in plan.missed) == plan.missed_total == 7 * 24 * 60
    # The individual entries are the 49 most recent, right before the one sent.
    assert [m.occurrence_at for m in individual] == [
        now - timedelta(minutes=k) for k in range(49, 0, -1)
    ]
    assert summary.through == now - timedelta(minutes=50)


# --- Resume and preview ---------------------------------------------------------------------


def test_resume_continues_at_the_next_occurrence_without_the_missed_ones():
    assert resume_next_run_at(DAILY_9, utc(2027, 1, 7, 9, 30)) == utc(2027, 1, 8, 9)
    assert resume_next_run_at(DAILY_9, utc(2027, 1, 7, 9)) == utc(2027, 1, 7, 9)
    ended = Recurrence.parse("FREQ=DAILY;COUNT=2", "2027-01-01T09:00", "UTC")
    assert resume_next_run_at(ended, utc(2027, 1, 7)) is None


def test_upcoming_lists_utc_and_local_times_of_a_draft_series():
    draft = {
        "rrule": "FREQ=DAILY;BYHOUR=2;BYMINUTE=30",
        "dtstart": "2027-03-13T00:00",
        "timezone": "America/New_York",
    }
    got = upcoming(draft, utc(2027, 3, 13), 3)
    assert [(o.utc, o.local.isoformat()) for o in got] == [
        (utc(2027, 3, 13, 7, 30), "2027-03-13T02:30:00-05:00"),
        (utc(2027, 3, 14, 7, 30), "2027-03-14T03:30:00-04:00"),  # the gap shift, shown
        (utc(2027, 3, 15, 6, 30), "2027-03-15T02:30:00-04:00"),
    ]


def test_upcoming_of_a_one_off_is_its_send_at():
    draft = {"send_at": utc(2027, 7, 1, 12), "timezone": "Europe/Berlin"}
    [only] = upcoming(draft, utc(2027, 1, 1), 5)
    assert only.utc == utc(2027, 7, 1, 12)
    assert only.local.isoformat() == "2027-07-01T14:00:00+02:00"


@pytest.mark.parametrize(
    ("draft", "code"),
    [
        ({}, "invalid_send_at"),
        ({"send_at": datetime(2027, 1, 1)}, "invalid_send_at"),  # naive
        ({"send_at": utc(2027, 1, 1), "timezone": "Mars/Base"}, "invalid_timezone"),
        ({"rrule": "FREQ=DAILY"}, "invalid_dtstart"),
    ],
)
def test_upcoming_names_what_is_wrong_with_a_draft(draft, code):
    with pytest.raises(DocumentError) as caught:
        upcoming(draft, utc(2027, 1, 1), 3)
    assert caught.value.code == code
