"""Properties of the recurrence engine over random zones, rules and instants (hypothesis):
occurrences strictly increase, no instant fires twice, every occurrence of the rule fires
(none skipped by a DST gap) and nothing else does, each fires at its wall time or at the
documented gap shift, and the next occurrence depends only on the anchor."""

from __future__ import annotations

import itertools
from datetime import datetime, timedelta

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.errors import DocumentError
from core.schedule import Recurrence, catch_up, to_local, to_utc
from core.working_days import WorkingDays

# Zones with DST, 30-minute shifts, abolished or changed rules, southern-hemisphere DST, and
# any other zone the tz database has.
INTERESTING_ZONES = [
    "America/New_York",
    "Europe/Berlin",
    "Australia/Lord_Howe",
    "America/Mexico_City",
    "America/Sao_Paulo",
    "America/Santiago",
    "Pacific/Chatham",
    "Asia/Tehran",
    "Africa/Cairo",
    "Europe/Moscow",
    "UTC",
]
zones = st.one_of(st.sampled_from(INTERESTING_ZONES), st.timezone_keys(allow_prefix=False))

rules = st.one_of(
    st.builds(
        "FREQ=DAILY;BYHOUR={};BYMINUTE={}".format,
        st.lists(st.integers(0, 23), min_size=1, max_size=3, unique=True).map(
            lambda hs: ",".join(map(str, sorted(hs)))
        ),
        st.sampled_from(["0", "30", "0,30", "15,45", "10,30"]),
    ),
    st.builds("FREQ=HOURLY;INTERVAL={}".format, st.integers(1, 7)),
    st.builds("FREQ=MINUTELY;INTERVAL={}".format, st.sampled_from([10, 15, 20, 30, 40, 45])),
    st.builds(
        "FREQ=WEEKLY;BYDAY={};BYHOUR={};BYMINUTE=30".format,
        st.sampled_from(["MO", "SU", "SA,SU", "MO,WE,FR"]),
        st.integers(0, 3),
    ),
    st.just("FREQ=MONTHLY;BYDAY=1SU,-1SU;BYHOUR=2;BYMINUTE=30"),  # DST Sundays
)
# Transition days sit in spring and autumn (either hemisphere); most starts land in the small
# hours of such a month, so gaps and folds come up often.
transition_season = st.builds(
    lambda day, hour, minute: datetime(day.year, day.month, day.day, hour, minute),
    st.dates(min_value=datetime(2019, 1, 1).date(), max_value=datetime(2036, 12, 31).date()).filter(
        lambda d: d.month in (3, 4, 9, 10, 11)
    ),
    st.integers(0, 3),
    st.integers(0, 59),
)
anywhere = st.datetimes(min_value=datetime(2019, 1, 1), max_value=datetime(2036, 12, 31)).map(
    lambda d: d.replace(second=0, microsecond=0)
)
starts = st.one_of(transition_season, anywhere)
hours_after = st.one_of(st.integers(-48, 48), st.integers(-48, 24 * 40))

FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
N = 40


def rule_of(
    body: str, start: datetime, tz: str, working_days: WorkingDays | None = None
) -> Recurrence:
    return Recurrence.parse(body, start.strftime("%Y-%m-%dT%H:%M"), tz, working_days=working_days)


@FAST
@given(zones, rules, starts, hours_after)
def test_every_occurrence_fires_once_in_order_at_its_wall_time_or_its_gap_shift(
    tz, body, start, hours_after
):
    rule = rule_of(body, start, tz)
    after = to_utc(start, rule.tz) + timedelta(hours=hours_after)
    fired = list(itertools.islice(rule.occurrences_after(after), N))
    assert fired, "an unbounded rule always has a next occurrence"

    assert all(a < b for a, b in itertools.pairwise(fired))  # increasing, never twice
    assert all(o > after for o in fired)

    # Exactly the rule's wall times mapped to UTC: nothing skipped, nothing invented.
    window = rule.rule.between(
        to_local(after, rule.tz) - timedelta(days=2),
        to_local(fired[-1], rule.tz) + timedelta(days=2),
        inc=True,
    )
    expected = sorted({to_utc(w, rule.tz) for w in window})
    expected = [e for e in expected if after < e <= fired[-1]]
    assert fired == expected

    walls = set(window)
    for instant in fired:
        wall = to_local(instant, rule.tz)
        if wall in walls:
            continue
        # Not its own wall time: then it is a nonexistent wall time of the rule, read with
        # the offset before the gap, so it shows as that wall time plus the gap.
        sources = [w for w in walls if to_utc(w, rule.tz) == instant]
        assert sources, f"{instant} is not an occurrence of {body}"
        for source in sources:
            assert to_local(to_utc(source, rule.tz), rule.tz) != source  # it was in a gap
            assert timedelta(0) < wall - source <= timedelta(hours=3)


@FAST
@given(zones, rules, starts, st.data())
def test_the_next_occurrence_depends_only_on_the_anchor(tz, body, start, data):
    rule = rule_of(body, start, tz)
    fired = list(itertools.islice(rule.occurrences_after(to_utc(start, rule.tz)), N))
    first = rule.first()
    assert first is not None and first <= fired[0]
    for earlier, later in itertools.pairwise(fired):
        assert rule.next_after(earlier) == later
        # Asked at any moment between two occurrences (a late tick), the answer is the same.
        fraction = data.draw(st.floats(0, 0.999))
        asked = earlier + (later - earlier) * fraction
        assert rule.next_after(asked) == later


@FAST
@given(
    st.sampled_from([("DE", "Europe/Berlin"), ("SA", "Asia/Riyadh"), ("US", "America/New_York")]),
    st.sampled_from(["skip", "next_working_day"]),
    rules,
    starts,
)
def test_working_day_series_fire_on_working_days_only_in_order(place, policy, body, start):
    country, tz = place
    calendar = WorkingDays(country)
    plain = rule_of(body, start, tz)
    after = to_utc(start, plain.tz)
    try:
        limited = rule_of(body, start, tz, working_days=WorkingDays(country, policy=policy))
    except DocumentError as exc:
        # A rule that never lands on a working day (Sundays in Germany) has no occurrence.
        assert exc.code == "invalid_rrule"
        some = itertools.islice(plain.occurrences_after(after), N)
        assert not any(calendar.is_working_day(to_local(o, plain.tz).date()) for o in some)
        return
    fired = list(itertools.islice(limited.occurrences_after(after), N))

    assert all(a < b for a, b in itertools.pairwise(fired))
    for instant in fired:
        assert calendar.is_working_day(instant.astimezone(limited.tz).date())
    if policy == "skip" and fired:
        # Exactly the plain series' occurrences that fall on working days.
        everything = itertools.takewhile(lambda o: o <= fired[-1], plain.occurrences_after(after))
        kept = [o for o in everything if calendar.is_working_day(to_local(o, plain.tz).date())]
        assert fired == kept


@FAST
@given(
    zones,
    rules,
    starts,
    st.integers(0, 24 * 60 * 20),
    st.integers(0, 7200),
    st.integers(2, 60),
)
def test_a_catch_up_accounts_for_every_due_occurrence_once(
    tz, body, start, minutes_down, grace, max_entries
):
    rule = rule_of(body, start, tz)
    due = rule.first()
    assert due is not None
    now = due + timedelta(minutes=minutes_down)
    plan = catch_up(rule, due, now, grace, max_entries)

    due_ones = [due, *itertools.takewhile(lambda o: o <= now, rule.occurrences_after(due))]
    assert plan.latest == due_ones[-1]
    if plan.send is not None:
        assert plan.send == due_ones[-1]
        assert now - plan.send <= timedelta(seconds=grace)
    else:
        assert now - due_ones[-1] > timedelta(seconds=grace)
    assert plan.missed_total == len(due_ones) - (plan.send is not None)
    assert sum(m.count for m in plan.missed) == plan.missed_total
    assert len(plan.missed) <= max_entries
    starts_at = [m.occurrence_at for m in plan.missed]
    assert starts_at == sorted(set(starts_at))
    assert set(starts_at) <= set(due_ones)
