"""Schedules in words (core.schedule_words): a table of rules -> words, every RFC 5545 section
3.8.5.3 example (tests/core/test_rfc5545_examples.py's list, from DTSTART in New York), zones
with DST and the 12/24-hour rule, one-offs, rotations, and a property: every rule core.rules
accepts reads as words, never as RRULE syntax."""

from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from core.errors import DocumentError
from core.models import Message
from core.rotation import Rotation
from core.rules import parse_rule
from core.schedule import zone
from core.schedule_words import (
    draft_schedule_text,
    message_schedule_text,
    rotation_schedule_text,
    series_text,
)
from tests.core.test_rfc5545_examples import EXAMPLES

pytestmark = pytest.mark.filterwarnings("ignore:Using both 'count' and 'until'")

RFC_WORDS = {
    "Daily for 10 occurrences": "Every day at 9:00 AM (America/New_York), 10 times",
    "Daily until December 24, 1997": "Every day at 9:00 AM (America/New_York), until Tue 23 Dec"
    " 1997 at 7:00 PM",
    "Every other day - forever": "Every 2 days at 9:00 AM (America/New_York), starting Tue 2 Sep"
    " 1997",
    "Every 10 days, 5 occurrences": "Every 10 days at 9:00 AM (America/New_York), starting Tue 2"
    " Sep 1997, 5 times",
    "Every day in January, for 3 years (yearly)": "Every year on every day in January at 9:00 AM"
    " (America/New_York), until Mon 31 Jan 2000 at 9:00 AM",
    "Every day in January, for 3 years (daily)": "Every day in January at 9:00 AM"
    " (America/New_York), until Mon 31 Jan 2000 at 9:00 AM",
    "Weekly for 10 occurrences": "Every Tuesday at 9:00 AM (America/New_York), 10 times",
    "Weekly until December 24, 1997": "Every Tuesday at 9:00 AM (America/New_York), until Tue 23"
    " Dec 1997 at 7:00 PM",
    "Every other week - forever": "Every 2 weeks on Tuesday at 9:00 AM (America/New_York),"
    " starting Tue 2 Sep 1997, weeks starting on Sunday",
    "Weekly on Tuesday and Thursday for five weeks (until)": "Every Tuesday and Thursday at 9:00"
    " AM (America/New_York), until Mon 6 Oct 1997 at 8:00 PM",
    "Weekly on Tuesday and Thursday for five weeks (count)": "Every Tuesday and Thursday at 9:00"
    " AM (America/New_York), 10 times",
    "Every other week on Monday, Wednesday, and Friday until December 24, 1997, starting on"
    " Monday, September 1, 1997": "Every 2 weeks on Mondays, Wednesdays and Fridays at 9:00 AM"
    " (America/New_York), starting Mon 1 Sep 1997, weeks starting on Sunday, until Tue 23 Dec"
    " 1997 at 7:00 PM",
    "Every other week on Tuesday and Thursday, for 8 occurrences": "Every 2 weeks on Tuesdays and"
    " Thursdays at 9:00 AM (America/New_York), starting Tue 2 Sep 1997, weeks starting on"
    " Sunday, 8 times",
    "Monthly on the first Friday for 10 occurrences": "Monthly on the first Friday at 9:00 AM"
    " (America/New_York), 10 times",
    "Monthly on the first Friday until December 24, 1997": "Monthly on the first Friday at 9:00"
    " AM (America/New_York), until Tue 23 Dec 1997 at 7:00 PM",
    "Every other month on the first and last Sunday of the month for 10 occurrences": "Every 2"
    " months on the first Sunday and the last Sunday at 9:00 AM (America/New_York), starting"
    " Sun 7 Sep 1997, 10 times",
    "Monthly on the second-to-last Monday of the month for 6 months": "Monthly on the"
    " second-to-last Monday at 9:00 AM (America/New_York), 6 times",
    "Monthly on the third-to-the-last day of the month, forever": "Monthly on the third-to-last"
    " day at 9:00 AM (America/New_York)",
    "Monthly on the 2nd and 15th of the month for 10 occurrences": "Monthly on the 2nd and the"
    " 15th at 9:00 AM (America/New_York), 10 times",
    "Monthly on the first and last day of the month for 10 occurrences": "Monthly on the 1st and"
    " the last day at 9:00 AM (America/New_York), 10 times",
    "Every 18 months on the 10th thru 15th of the month for 10 occurrences": "Every 18 months on"
    " the 10th to the 15th at 9:00 AM (America/New_York), starting Wed 10 Sep 1997, 10 times",
    "Every Tuesday, every other month": "Every 2 months on Tuesdays at 9:00 AM"
    " (America/New_York), starting Tue 2 Sep 1997",
    "Yearly in June and July for 10 occurrences": "Every year on the 10th in June and July at"
    " 9:00 AM (America/New_York), 10 times",
    "Every other year on January, February, and March for 10 occurrences": "Every 2 years on the"
    " 10th in January, February and March at 9:00 AM (America/New_York), starting Mon 10 Mar"
    " 1997, 10 times",
    "Every third year on the 1st, 100th, and 200th day for 10 occurrences": "Every 3 years on the"
    " 1st, 100th and 200th day of the year at 9:00 AM (America/New_York), starting Wed 1 Jan"
    " 1997, 10 times",
    "Every 20th Monday of the year, forever": "Every year on the 20th Monday of the year at 9:00"
    " AM (America/New_York)",
    "Monday of week number 20 (where the default start of the week is Monday), forever": "Every"
    " year on Mondays in week 20 of the year at 9:00 AM (America/New_York)",
    "Every Thursday in March, forever": "Every year on Thursdays in March at 9:00 AM"
    " (America/New_York)",
    "Every Thursday, but only during June, July, and August, forever": "Every year on Thursdays"
    " in June, July and August at 9:00 AM (America/New_York)",
    "Every Friday the 13th, forever": "Monthly on Fridays falling on the 13th at 9:00 AM"
    " (America/New_York), with 1 date left out",
    "The first Saturday that follows the first Sunday of the month, forever": "Monthly on"
    " Saturdays falling on the 7th to the 13th at 9:00 AM (America/New_York)",
    "Every 4 years, the first Tuesday after a Monday in November, forever (U.S. Presidential"
    " Election day)": "Every 4 years on Tuesdays falling on the 2nd to the 8th in November at"
    " 9:00 AM (America/New_York), starting Tue 5 Nov 1996",
    "The third instance into the month of one of Tuesday, Wednesday, or Thursday, for the next 3"
    " months": "Monthly on the third Tuesday, Wednesday or Thursday at 9:00 AM"
    " (America/New_York), 3 times",
    "The second-to-last weekday of the month": "Monthly on the second-to-last weekday at 9:00 AM"
    " (America/New_York)",
    "Every 3 hours from 9:00 AM to 5:00 PM on a specific day": "Every 3 hours on the hour"
    " (America/New_York), starting Tue 2 Sep 1997 at 9:00 AM, until Tue 2 Sep 1997 at 1:00 PM",
    "Every 15 minutes for 6 occurrences": "Every 15 minutes (America/New_York), starting Tue 2"
    " Sep 1997 at 9:00 AM, 6 times",
    "Every hour and a half for 4 occurrences": "Every 90 minutes (America/New_York), starting Tue"
    " 2 Sep 1997 at 9:00 AM, 4 times",
    "Every 20 minutes from 9:00 AM to 4:40 PM every day (daily)": "Every day at 0, 20 and 40"
    " minutes past the hour, between 9:00 AM and 4:59 PM (America/New_York)",
    "Every 20 minutes from 9:00 AM to 4:40 PM every day (minutely)": "Every 20 minutes between"
    " 9:00 AM and 4:59 PM (America/New_York), starting Tue 2 Sep 1997 at 9:00 AM",
    "An example where the days generated makes a difference because of WKST (MO)": "Every 2"
    " weeks on Tuesdays and Sundays at 9:00 AM (America/New_York), starting Tue 5 Aug 1997, 4"
    " times",
    "An example where the days generated makes a difference because of WKST (SU)": "Every 2"
    " weeks on Tuesdays and Sundays at 9:00 AM (America/New_York), starting Tue 5 Aug 1997,"
    " weeks starting on Sunday, 4 times",
    "An example where an invalid date (i.e., February 30) is ignored": "Monthly on the 15th and"
    " the 30th at 9:00 AM (America/New_York), 5 times",
}


def test_every_rfc_example_has_its_words() -> None:
    assert {example.title for example in EXAMPLES} == set(RFC_WORDS)


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda example: example.title[:60])
def test_rfc_example_reads_as_words(example) -> None:
    fields = {
        "rrule": example.rrule,
        "dtstart": example.dtstart,
        "timezone": "America/New_York",
        "exdates": list(example.exdates),
    }
    assert draft_schedule_text(fields) == RFC_WORDS[example.title]


# rule, dtstart (local), zone -> words
TABLE = [
    (
        "FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR;BYHOUR=9;BYMINUTE=30",
        "2026-12-01T00:00",
        "America/New_York",
        "Every weekday at 9:30 AM (America/New_York)",
    ),
    (
        "FREQ=DAILY;BYDAY=MO,TU,WE,TH,FR",
        "2026-12-01T09:30",
        "America/New_York",
        "Every weekday at 9:30 AM (America/New_York)",
    ),
    (
        "FREQ=MONTHLY;BYDAY=-1FR",
        "2026-12-01T17:00",
        "Europe/Berlin",
        "Monthly on the last Friday at 17:00 (Europe/Berlin)",
    ),
    (
        "FREQ=MONTHLY;BYMONTHDAY=-1;BYHOUR=18;BYMINUTE=0",
        "2026-12-01T09:00",
        "Asia/Tokyo",
        "Monthly on the last day at 18:00 (Asia/Tokyo)",
    ),
    (
        "FREQ=MONTHLY;BYMONTHDAY=-2",
        "2026-12-01T09:00",
        "UTC",
        "Monthly on the second-to-last day at 9:00 (UTC)",
    ),
    (
        "FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=1",
        "2026-12-01T08:15",
        "Australia/Sydney",
        "Monthly on the first weekday at 8:15 AM (Australia/Sydney)",
    ),
    (
        "FREQ=MONTHLY;BYDAY=2TU;BYMONTH=1,4,7,10",
        "2026-12-01T10:00",
        "Europe/London",
        "Monthly on the second Tuesday in January, April, July and October at 10:00"
        " (Europe/London)",
    ),
    (
        "FREQ=YEARLY",
        "2026-12-08T14:00",
        "Europe/Berlin",
        "Every year on 8 December at 14:00 (Europe/Berlin)",
    ),
    (
        "FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=29",
        "2028-02-29T12:00",
        "UTC",
        "Every year on 29 February at 12:00 (UTC)",
    ),
    (
        "FREQ=YEARLY;BYMONTH=9;BYDAY=1MO",
        "2026-12-01T09:00",
        "America/Chicago",
        "Every year on the first Monday in September at 9:00 AM (America/Chicago)",
    ),
    (
        "FREQ=YEARLY;BYEASTER=-2",
        "2027-01-01T09:00",
        "Europe/Berlin",
        "Every year on 2 days before Easter Sunday at 9:00 (Europe/Berlin)",
    ),
    (
        "FREQ=YEARLY;BYWEEKNO=-1;BYDAY=FR",
        "2027-01-01T09:00",
        "Europe/Berlin",
        "Every year on Fridays in the last week of the year at 9:00 (Europe/Berlin)",
    ),
    (
        "FREQ=YEARLY;BYYEARDAY=-1",
        "2026-12-01T23:00",
        "UTC",
        "Every year on the last day of the year at 23:00 (UTC)",
    ),
    (
        "FREQ=DAILY;BYHOUR=9,17;BYMINUTE=0",
        "2026-12-01T00:00",
        "Europe/Paris",
        "Every day at 9:00 and 17:00 (Europe/Paris)",
    ),
    (
        "FREQ=DAILY;BYHOUR=9,17;BYSETPOS=-1",
        "2026-12-01T00:00",
        "UTC",
        "Every day at 9:00 and 17:00 (UTC), only the last of each day's matches",
    ),
    (
        "FREQ=WEEKLY;BYDAY=SA,SU;BYHOUR=10;BYMINUTE=0;BYSECOND=30",
        "2026-12-01T00:00",
        "UTC",
        "Every Saturday and Sunday at 10:00:30 (UTC)",
    ),
    (
        "FREQ=HOURLY;BYMINUTE=15,45;BYDAY=MO",
        "2026-12-08T14:00",
        "UTC",
        "Every hour on Mondays at 15 and 45 minutes past the hour (UTC)",
    ),
    (
        "FREQ=SECONDLY;INTERVAL=30;BYHOUR=12",
        "2026-12-08T12:00",
        "UTC",
        "Every 30 seconds in the hours from 12:00 (UTC), starting Tue 8 Dec 2026 at 12:00",
    ),
    (
        "FREQ=DAILY;UNTIL=20270101",
        "2026-12-01T09:00",
        "Asia/Kolkata",
        "Every day at 9:00 AM (Asia/Kolkata), until Fri 1 Jan 2027 at 12:00 AM",
    ),
]


@pytest.mark.parametrize(("rule", "dtstart", "timezone", "words"), TABLE)
def test_rule_reads_as_words(rule: str, dtstart: str, timezone: str, words: str) -> None:
    fields = {"rrule": rule, "dtstart": dtstart, "timezone": timezone}
    assert draft_schedule_text(fields) == words


def test_dst_zone_says_the_wall_time_people_see_all_year() -> None:
    # 9:30 New York is 14:30Z in winter and 13:30Z in summer: the words say 9:30 either way.
    fields = {"rrule": "FREQ=DAILY", "dtstart": "2027-03-13T09:30", "timezone": "America/New_York"}
    assert draft_schedule_text(fields) == "Every day at 9:30 AM (America/New_York)"
    # A time inside the spring-forward gap is said as written (the product's gap policy sends
    # it at 3:30 on that one day: docs/schedules.md).
    fields = {
        "rrule": "FREQ=WEEKLY;BYDAY=SU",
        "dtstart": "2027-03-14T02:30",
        "timezone": "America/New_York",
    }
    assert draft_schedule_text(fields) == "Every Sunday at 2:30 AM (America/New_York)"


def test_one_off_is_said_in_its_zones_wall_time_on_either_side_of_a_dst_change() -> None:
    summer = {"send_at": datetime(2026, 7, 8, 12, 0, tzinfo=UTC), "timezone": "Europe/Berlin"}
    winter = {"send_at": datetime(2026, 12, 8, 13, 0, tzinfo=UTC), "timezone": "Europe/Berlin"}
    assert draft_schedule_text(summer) == "Once on Wed 8 Jul 2026 at 14:00 (Europe/Berlin)"
    assert draft_schedule_text(winter) == "Once on Tue 8 Dec 2026 at 14:00 (Europe/Berlin)"
    # The instant after a fall-back: 1:30 happens twice; the words show it once, as it is.
    after = {"send_at": "2026-11-01T06:30:00+00:00", "timezone": "America/New_York"}
    assert draft_schedule_text(after) == "Once on Sun 1 Nov 2026 at 1:30 AM (America/New_York)"


def test_exdates_and_working_days_are_said() -> None:
    fields = {
        "rrule": "FREQ=DAILY",
        "dtstart": "2026-12-01T09:00",
        "timezone": "Europe/Berlin",
        "exdates": ["2026-12-24T09:00", "2026-12-31T09:00"],
        "working_days": {"country": "DE", "subdivision": "BY"},
        "on_non_working_day": "next_working_day",
    }
    assert draft_schedule_text(fields) == (
        "Every day at 9:00 (Europe/Berlin), with 2 dates left out, moved to the next working"
        " day in DE-BY when it falls on a day off"
    )
    fields.pop("on_non_working_day")
    fields["exdates"] = ["2026-12-24T09:00"]
    assert draft_schedule_text(fields) == (
        "Every day at 9:00 (Europe/Berlin), with 1 date left out, only on working days in DE-BY"
    )


@pytest.mark.parametrize(
    "fields",
    [
        {},
        {"rrule": "every weekday at 9:30", "dtstart": "2026-12-01T09:30"},
        {"rrule": "FREQ=DAILY"},
        {"send_at": "tomorrow"},
        {"send_at": datetime(2026, 12, 8, 13, 0)},
        {"send_at": datetime(2026, 12, 8, 13, 0, tzinfo=UTC), "timezone": "Mars/Olympus"},
    ],
)
def test_fields_that_make_no_schedule_have_no_words(fields) -> None:
    assert draft_schedule_text(fields) is None


def test_stored_message_reads_as_its_schedule() -> None:
    base = {"channel": "C0GENERAL1", "text": "stand-up", "timezone": "America/New_York"}
    series = Message.from_document(
        "m1", {**base, "rrule": "FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR", "dtstart": "2026-12-01T09:30"}
    )
    once = Message.from_document(
        "m2", {**base, "send_at": datetime(2026, 12, 8, 14, 30, tzinfo=UTC)}
    )
    assert message_schedule_text(series) == "Every weekday at 9:30 AM (America/New_York)"
    assert message_schedule_text(once) == "Once on Tue 8 Dec 2026 at 9:30 AM (America/New_York)"


@pytest.mark.parametrize(
    ("weekdays", "send_time", "timezone", "working_days", "words"),
    [
        (
            [0, 1, 2, 3, 4],
            "09:30",
            "America/New_York",
            None,
            "Every weekday at 9:30 AM (America/New_York)",
        ),
        (
            [0, 2],
            "17:00",
            "Europe/Berlin",
            None,
            "Every Monday and Wednesday at 17:00 (Europe/Berlin)",
        ),
        (list(range(7)), "08:00", "UTC", None, "Every day at 8:00 (UTC)"),
        (
            [0, 1, 2, 3, 4],
            "09:00",
            "Europe/Berlin",
            {"country": "DE"},
            "Every weekday at 9:00 (Europe/Berlin), only on working days in DE",
        ),
    ],
)
def test_rotation_reads_as_its_days_time_and_zone(
    weekdays, send_time, timezone, working_days, words
) -> None:
    data = {
        "channel": "C0GENERAL1",
        "members": ["U0ANA", "U0BEN"],
        "timezone": timezone,
        "send_time": send_time,
        "weekdays": weekdays,
        "text": "{member} is up",
        "working_days": working_days,
    }
    assert rotation_schedule_text(Rotation.from_document("r1", data)) == words


# Rules over every part core.rules accepts (RFC 5545 section 3.3.10), with values in range.
def _list(values: st.SearchStrategy[int], size: int = 3) -> st.SearchStrategy[str]:
    return st.lists(values, min_size=1, max_size=size, unique=True).map(
        lambda xs: ",".join(map(str, xs))
    )


_nonzero = st.integers(-366, 366).filter(bool)
_byday = st.lists(
    st.tuples(
        st.one_of(st.none(), st.integers(-5, 5).filter(bool)),
        st.sampled_from(["MO", "TU", "WE", "TH", "FR", "SA", "SU"]),
    ),
    min_size=1,
    max_size=4,
    unique=True,
).map(lambda days: ",".join(f"{n or ''}{day}" for n, day in days))
PARTS = {
    "INTERVAL": st.integers(1, 30).map(str),
    "COUNT": st.integers(1, 50).map(str),
    "UNTIL": st.sampled_from(["20301231", "20301231T120000", "20301231T120000Z"]),
    "WKST": st.sampled_from(["MO", "TU", "WE", "TH", "FR", "SA", "SU"]),
    "BYDAY": _byday,
    "BYMONTHDAY": _list(st.integers(-31, 31).filter(bool)),
    "BYMONTH": _list(st.integers(1, 12)),
    "BYYEARDAY": _list(_nonzero),
    "BYWEEKNO": _list(st.integers(-53, 53).filter(bool)),
    "BYSETPOS": _list(st.integers(-5, 5).filter(bool)),
    "BYHOUR": _list(st.integers(0, 23), 6),
    "BYMINUTE": _list(st.integers(0, 59), 6),
    "BYSECOND": _list(st.integers(0, 59), 3),
    "BYEASTER": _list(st.integers(-80, 250), 2),
}
FREQS = ["YEARLY", "MONTHLY", "WEEKLY", "DAILY", "HOURLY", "MINUTELY", "SECONDLY"]
RULE_SYNTAX = re.compile(
    r"FREQ|RRULE|\bBY[A-Z]|INTERVAL|COUNT|UNTIL|WKST|[=;]|\b[+-]?\d*(MO|TU|WE|TH|FR|SA|SU)\b"
)


@st.composite
def rules(draw: st.DrawFn) -> str:
    names = draw(st.lists(st.sampled_from(sorted(PARTS)), max_size=5, unique=True))
    parts = [f"FREQ={draw(st.sampled_from(FREQS))}"]
    parts += [f"{name}={draw(PARTS[name])}" for name in names]
    return ";".join(draw(st.permutations(parts)))


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(
    rules(),
    st.datetimes(min_value=datetime(2020, 1, 1), max_value=datetime(2030, 12, 31)),
    st.sampled_from(["UTC", "America/New_York", "Europe/Berlin", "Australia/Lord_Howe"]),
    st.integers(0, 3),
)
def test_every_accepted_rule_reads_as_words_not_rrule_syntax(
    body: str, start: datetime, timezone: str, exdates: int
) -> None:
    start = start.replace(microsecond=0)
    try:
        rule = parse_rule(body, start, zone(timezone))
    except DocumentError:
        assume(False)
        raise
    words = series_text(rule, timezone, exdates)
    assert words.startswith(("Every", "Monthly", "Weekly")), words
    assert f"({timezone})" in words
    assert not RULE_SYNTAX.search(words.replace(f"({timezone})", "")), words


def test_byday_mixing_ordinal_and_plain_days_makes_no_schedule() -> None:
    # RFC 5545 reads 1FR,FR as either, dateutil as both: core.rules refuses such a rule, so
    # there is nothing to say in words (and nothing is sent on days the rule does not say).
    fields = {
        "rrule": "FREQ=MONTHLY;BYDAY=1FR,FR",
        "dtstart": "2026-12-01T09:30",
        "timezone": "UTC",
    }

    assert draft_schedule_text(fields) is None
