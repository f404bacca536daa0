"""`BYWEEKNO` counts RFC 5545 weeks (issue 29, point 11): with `WKST=MO` (the default) they
are ISO 8601 weeks, `date.isocalendar()`'s, where dateutil alone is wrong (its PR #1537, open:
the last week of the year before is counted from the wrong year); with another `WKST`, week 1
is still the first week with at least four days in the year, the weeks starting on that day.
Checked through `POST /preview` and against a brute-force walk over every day."""

from __future__ import annotations

import functools
import itertools
from datetime import date, datetime, time, timedelta
from zoneinfo import ZoneInfo

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.rules import evaluate, parse_rule
from tests.fixtures.api import call
from tests.fixtures.messages import SERIES

WEEKDAYS = ("MO", "TU", "WE", "TH", "FR", "SA", "SU")
NEW_YORK = ZoneInfo("America/New_York")


def test_the_preview_shows_the_sundays_of_iso_week_53_only(api):
    draft = {
        **SERIES,
        "timezone": "America/New_York",
        "rrule": "FREQ=YEARLY;BYWEEKNO=53;BYDAY=SU",
        "dtstart": "1999-01-03T09:00",
    }

    status, body = call(api, "POST", "/preview?count=6", draft)

    assert status == 200, body
    days = [o["local"][:10] for o in body["occurrences"]]
    # From the clock's 2027-01-04 on. dateutil alone also gives 2039-01-02 (ISO 2038-W52).
    assert days == [
        "2033-01-02",
        "2038-01-03",
        "2044-01-03",
        "2049-01-03",
        "2055-01-03",
        "2061-01-02",
    ]


def test_the_issues_week_53_sundays_from_1999():
    rule = parse_rule("FREQ=YEARLY;BYWEEKNO=53;BYDAY=SU", datetime(1999, 1, 3, 9), NEW_YORK)

    days = [local.date().isoformat() for local in itertools.islice(evaluate(rule), 7)]

    # dateutil alone also gives 2011-01-02 and 2022-01-02, in ISO week 52.
    assert days == [
        "1999-01-03",
        "2005-01-02",
        "2010-01-03",
        "2016-01-03",
        "2021-01-03",
        "2027-01-03",
        "2033-01-02",
    ]


# Week numbers dateutil gets wrong near New Year come up often; any other may too.
_weeknos = st.one_of(
    st.sampled_from([1, 2, 52, 53, -1, -2, -52, -53]),
    st.integers(-53, 53).filter(bool),
)


@st.composite
def weekno_rules(draw: st.DrawFn) -> tuple[str, datetime, datetime]:
    """A YEARLY BYWEEKNO rule (maybe with BYDAY, BYMONTH, BYMONTHDAY, BYSETPOS, WKST), its
    start, and an UNTIL
    (local) up to 12 years later, so a rule that never matches ends too."""
    parts = {"FREQ": "YEARLY"}
    weeknos = draw(st.lists(_weeknos, min_size=1, max_size=3, unique=True))
    parts["BYWEEKNO"] = ",".join(map(str, weeknos))
    if draw(st.booleans()):
        days = draw(st.lists(st.sampled_from(WEEKDAYS), min_size=1, max_size=3, unique=True))
        parts["BYDAY"] = ",".join(days)
    if draw(st.integers(0, 9)) == 0:  # rarely: most never meet the weeks, searched to 9999
        months = draw(st.lists(st.integers(1, 12), min_size=1, max_size=2, unique=True))
        parts["BYMONTH"] = ",".join(map(str, months))
    if draw(st.integers(0, 5)) == 0:
        parts["BYMONTHDAY"] = str(draw(st.sampled_from([1, 2, 28, -1, -2])))  # in every month
    if draw(st.integers(0, 3)) == 0:
        positions = draw(st.lists(st.sampled_from([1, 2, -1]), min_size=1, max_size=2, unique=True))
        parts["BYSETPOS"] = ",".join(map(str, positions))
    if draw(st.booleans()):
        parts["WKST"] = draw(st.sampled_from(WEEKDAYS))
    start = draw(
        st.builds(
            datetime,
            st.integers(1990, 2040),
            st.sampled_from([1, 1, 12, 12, 6]),
            st.integers(1, 28),
            st.integers(0, 23),
            st.sampled_from([0, 30]),
        )
    )
    until = start + timedelta(days=draw(st.integers(0, 12 * 366)))
    parts["UNTIL"] = f"{until:%Y%m%dT%H%M%S}"
    return ";".join(f"{k}={v}" for k, v in parts.items()), start, until


@pytest.mark.slow
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(weekno_rules())
def test_every_occurrence_is_in_a_listed_week_and_none_is_missing(drawn):
    body, start, until = drawn
    parts = dict(part.split("=") for part in body.split(";"))

    found = list(evaluate(parse_rule(body, start, NEW_YORK)))

    assert found == reference(parts, start, until), body


def reference(parts: dict[str, str], start: datetime, until: datetime) -> list[datetime]:
    """Every day of each year from `start`'s to `until`'s that the rule's parts allow (BYSETPOS
    choosing among a whole year's), at `start`'s time, from `start` to `until`."""
    weeknos = {int(n) for n in parts["BYWEEKNO"].split(",")}
    weekdays = {WEEKDAYS.index(d) for d in parts.get("BYDAY", ",".join(WEEKDAYS)).split(",")}
    months = {int(m) for m in parts.get("BYMONTH", "1,2,3,4,5,6,7,8,9,10,11,12").split(",")}
    monthday = int(parts.get("BYMONTHDAY", "0"))
    positions = [int(p) for p in parts.get("BYSETPOS", "").split(",") if p]
    wkst = WEEKDAYS.index(parts.get("WKST", "MO"))
    found = []
    for year in range(start.year, until.year + 1):
        days = (date(year, 1, 1) + timedelta(days=n) for n in range(366))
        chosen = [
            day
            for day in days
            if day.year == year
            and day.weekday() in weekdays
            and day.month in months
            and monthday in (0, day.day, day.day - _month_length(day) - 1)
            and not weeknos.isdisjoint(week_numbers(day, wkst))
        ]
        if positions:
            picked = {chosen[p - 1 if p > 0 else p] for p in positions if abs(p) <= len(chosen)}
            chosen = sorted(picked)
        found += [datetime.combine(day, time(start.hour, start.minute)) for day in chosen]
    return [at for at in found if start <= at <= until]


def _month_length(day: date) -> int:
    following = date(day.year + day.month // 12, day.month % 12 + 1, 1)
    return (following - date(day.year, day.month, 1)).days


def week_numbers(day: date, wkst: int) -> tuple[int, int]:
    """The day's week number, counted forward and back (-1: the last week of its year).
    With WKST=MO, ISO 8601's by `isocalendar`; else RFC 5545's, by counting days."""
    if wkst == 0:
        year, week, _ = day.isocalendar()
        weeks = date(year, 12, 28).isocalendar().week  # 28 December is in the last week
        return week, week - weeks - 1
    start = day - timedelta(days=(day.weekday() - wkst) % 7)
    in_year = days_by_year(start)
    year = max(in_year, key=in_year.__getitem__)  # the year holding 4 or more of its days
    first = _first_week(year, wkst)
    week = (start - first).days // 7 + 1
    weeks = (_first_week(year + 1, wkst) - first).days // 7
    return week, week - weeks - 1


def days_by_year(start: date) -> dict[int, int]:
    """How many of the seven days from `start` fall in each year."""
    counts: dict[int, int] = {}
    for n in range(7):
        year = (start + timedelta(days=n)).year
        counts[year] = counts.get(year, 0) + 1
    return counts


@functools.cache
def _first_week(year: int, wkst: int) -> date:
    """The first day of the first week, starting on `wkst`, with four days or more in `year`."""
    start = date(year - 1, 12, 25)
    while start.weekday() != wkst or days_by_year(start).get(year, 0) < 4:
        start += timedelta(days=1)
    return start


def test_a_created_series_is_next_due_on_the_next_sunday_of_an_iso_week_53(api):
    body = {
        **SERIES,
        "timezone": "America/New_York",
        "rrule": "FREQ=YEARLY;BYWEEKNO=53;BYDAY=SU",
        "dtstart": "2038-01-04T09:00",
    }

    status, created = call(api, "POST", "/messages", body)

    assert status == 201, created
    # 2044-01-03 is ISO 2043-W53's Sunday; dateutil alone takes 2039-01-02 (ISO 2038-W52).
    assert created["next_run_at"].startswith("2044-01-03T14:00:00"), created
