"""Properties of the recurrence engine over random zones, rules and instants (hypothesis):
occurrences strictly increase, no instant fires twice, every occurrence of the rule fires
(none skipped by a DST gap) and nothing else does, each fires at its wall time or at the
documented gap shift, and the next occurrence depends only on the anchor. A rule's own walk
is `core.rules.evaluate`'s, not dateutil's bare iteration, whose BYWEEKNO weeks are wrong
(tests/core/test_week_numbers.py holds evaluate to ISO 8601)."""

from __future__ import annotations

import itertools
from datetime import datetime, timedelta

import pytest
from dateutil.rrule import rrule, rrulestr
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from core.anchor import Anchor, last_at_or_before, restart
from core.errors import DocumentError
from core.rules import evaluate
from core.schedule import Recurrence, catch_up, to_local, to_utc
from core.working_days import WorkingDays

# Rules may carry both COUNT and UNTIL, which dateutil accepts with a DeprecationWarning.
pytestmark = pytest.mark.filterwarnings("ignore:Using both 'count' and 'until'")

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


# Rules over every frequency and rule part dateutil knows, for the anchor: INTERVAL, WKST,
# BYSETPOS, BYWEEKNO, BYYEARDAY, BYEASTER, nth weekdays, parts left to DTSTART, COUNT, UNTIL.
# Combinations that can never match (Feb 30, a 2nd of one per week, Easter on a Monday,
# every 7th day on another weekday) are not drawn: dateutil would search until year 9999.
WEEKDAYS = ["MO", "TU", "WE", "TH", "FR", "SA", "SU"]


def _listed(values: st.SearchStrategy[int], most: int) -> st.SearchStrategy[str]:
    return st.lists(values, min_size=1, max_size=most, unique=True).map(
        lambda xs: ",".join(map(str, sorted(xs)))
    )


_month_days = st.one_of(st.integers(1, 28), st.integers(-28, -1))
_weekday_lists = st.lists(st.sampled_from(WEEKDAYS), min_size=1, max_size=3, unique=True)


@st.composite
def wide_rules(draw: st.DrawFn) -> str:
    freq = draw(st.sampled_from(["YEARLY", "MONTHLY", "WEEKLY", "DAILY", "HOURLY", "MINUTELY"]))
    parts = {"FREQ": freq}
    days = draw(st.sampled_from(["dtstart", "month", "weekday", "yearday", "weekno", "easter"]))
    allowed = {  # sparse choices of days only where a period is cheap to walk
        "YEARLY": ("month", "weekday", "yearday", "weekno", "easter"),
        "MONTHLY": ("month", "weekday"),
        "WEEKLY": ("weekday", "weekno"),
        "DAILY": ("month", "weekday", "weekno"),
    }.get(freq, ("weekday",))
    if days not in allowed:
        days = "dtstart"
    if days == "month":
        parts["BYMONTHDAY"] = draw(_listed(_month_days, 2))
    if days == "yearday":
        parts["BYYEARDAY"] = draw(_listed(st.sampled_from([1, 2, 59, 60, 200, 365, -1]), 2))
    if days == "weekno":
        parts["BYWEEKNO"] = draw(_listed(st.sampled_from([1, 2, 26, 52, -1, -2]), 2))
    if days == "easter":
        parts["BYEASTER"] = str(draw(st.integers(-60, 60)))
    weekdays = draw(_weekday_lists)
    if days == "weekday" or (
        freq in ("YEARLY", "MONTHLY") and days != "easter" and draw(st.booleans())
    ):
        if freq in ("YEARLY", "MONTHLY") and days == "weekday" and draw(st.booleans()):
            nth = draw(st.sampled_from([1, 2, -1, 4]))  # in every month and year
            parts["BYDAY"] = ",".join(f"{nth:+d}{d}" for d in weekdays)
        else:
            parts["BYDAY"] = ",".join(weekdays)
    sparse = freq in ("YEARLY", "MONTHLY", "WEEKLY")  # one or a few a year is fine to walk
    if sparse and days in ("dtstart", "month", "weekday") and draw(st.booleans()):
        parts["BYMONTH"] = draw(_listed(st.integers(1, 12), 3))
    if freq in ("YEARLY", "MONTHLY", "WEEKLY", "DAILY"):
        if draw(st.booleans()):
            parts["BYHOUR"] = draw(_listed(st.integers(0, 23), 3))
        if draw(st.booleans()):
            parts["BYMINUTE"] = draw(_listed(st.sampled_from([0, 15, 30, 59]), 2))
        if draw(st.booleans()):
            # A second position only where every period has two to choose from.
            several = "," in parts.get("BYHOUR", "") or (
                freq == "WEEKLY" and "," in parts.get("BYDAY", "")
            )
            positions = [1, -1, 2, -2] if several else [1, -1]
            parts["BYSETPOS"] = draw(_listed(st.sampled_from(positions), 2))
    interval = {
        "YEARLY": st.integers(1, 3),
        "MONTHLY": st.sampled_from([1, 5, 7]),  # prime to 12: any month comes round
        "WEEKLY": st.integers(1, 3),
        "DAILY": st.integers(1, 6),  # prime to 7: any weekday comes round
        # Prime to the hours and minutes of a week: any hour of any weekday comes round.
        "HOURLY": st.sampled_from([1, 5, 11]),
        "MINUTELY": st.sampled_from([1, 11, 13]),
    }[freq]
    parts["INTERVAL"] = str(draw(interval))
    if freq == "HOURLY" and draw(st.booleans()):
        parts["BYHOUR"] = draw(_listed(st.integers(0, 23), 4))
    if freq == "MINUTELY":
        parts["BYHOUR"] = draw(_listed(st.integers(0, 23), 2))  # a day of minutes is slow
    if draw(st.booleans()):
        parts["WKST"] = draw(st.sampled_from(WEEKDAYS))
    if draw(st.booleans()):
        parts["COUNT"] = str(draw(st.integers(1, 80)))
    return ";".join(f"{name}={value}" for name, value in parts.items())


# Days up to the 28th (a default BYMONTHDAY exists in every month); often near New Year, where
# weeks cross years.
wide_starts = st.builds(
    datetime,
    st.integers(1995, 2035),
    st.sampled_from([1, 2, 3, 6, 10, 11, 12, 12]),
    st.integers(1, 28),
    st.integers(0, 23),
    st.sampled_from([0, 0, 15, 30, 59]),
    st.sampled_from([0, 0, 7]),
)


def _until(body: str, start: datetime, days: int | None) -> tuple[str, datetime]:
    if days is None:
        return body, start
    return f"{body};UNTIL={(start + timedelta(days=days)):%Y%m%dT%H%M%S}", start


# A wide rule, its start, and sometimes an UNTIL (in local time) some days after the start.
wide_rules_and_starts = st.builds(
    _until, wide_rules(), wide_starts, st.one_of(st.none(), st.integers(0, 3000))
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(wide_rules_and_starts, st.data())
def test_a_rule_restarted_at_any_of_its_occurrences_yields_the_rest_of_it(rule_and_start, data):
    body, start = rule_and_start
    rule = rrulestr(body, dtstart=start)
    assert isinstance(rule, rrule)
    horizon = 150
    walked = list(itertools.islice(evaluate(rule), horizon))
    assume(walked)  # an UNTIL before the first occurrence
    k = data.draw(st.integers(0, len(walked) - 1), label="anchor index")

    restarted, first = restart(rule, Anchor(str(rule), walked[k], k))

    assert first is not None and first <= k  # counted from the anchor's index
    assert list(itertools.islice(evaluate(restarted), len(walked) - first)) == walked[first:]
    if len(walked) < horizon:  # the series ends (COUNT, or the draw was short): so does it
        assert list(evaluate(restarted))[len(walked) - first :] == []
    # It really restarts: at the anchor, or (WEEKLY) at the start of its week; from DTSTART
    # only in DTSTART's week.
    assert first == k or walked[k] - walked[first] < timedelta(days=7)
    assert restarted is not rule or walked[k] - start < timedelta(days=7)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(wide_rules_and_starts, st.data())
def test_the_last_occurrence_before_a_bound_is_found_without_an_anchor(rule_and_start, data):
    body, start = rule_and_start
    rule = rrulestr(body, dtstart=start)
    assert isinstance(rule, rrule)
    walked = list(itertools.islice(evaluate(rule), 150))
    assume(walked)
    ended = len(walked) < 150  # else the 151st may come before a bound past the 150th
    latest = walked[-1] + timedelta(days=2) if ended else walked[-1]
    bound = data.draw(st.datetimes(start - timedelta(days=2), latest))

    found = last_at_or_before(rule, None, bound)

    before = [(i, x) for i, x in enumerate(walked) if x <= bound]
    if not before:
        assert found is None
        return
    index, local = before[-1]
    assert found is not None and found.local == local
    # Counted when the rule has a COUNT to keep (walked from DTSTART), else maybe not at all.
    assert found.index in (index, None)
    assert found.index == index or "COUNT" not in body
    restarted, first = restart(rule, found)
    assert restarted is not rule or local - start < timedelta(days=7)
    assert first is None or first <= index
    tail = itertools.dropwhile(lambda x: x < local, evaluate(restarted))
    assert list(itertools.islice(tail, len(walked) - index)) == walked[index:]


@FAST
@given(wide_rules(), wide_starts, st.integers(1, 5000))
def test_an_anchor_that_is_not_an_occurrence_or_of_another_rule_is_not_used(body, start, hours):
    rule = rrulestr(body, dtstart=start)
    assert isinstance(rule, rrule)
    walked = list(itertools.islice(evaluate(rule), 3))
    off = start + timedelta(hours=hours, seconds=1)  # no occurrence has a second of 1 or 8
    assert restart(rule, Anchor(str(rule), off, 5))[0] is rule
    assert restart(rule, Anchor("RRULE:FREQ=DAILY", walked[-1], len(walked) - 1))[0] is rule


@pytest.mark.parametrize(
    ("body", "start"),
    [
        # BYSETPOS in a week that dateutil starts on DTSTART's day (a Wednesday).
        ("FREQ=WEEKLY;BYDAY=MO,WE,FR;BYSETPOS=2", datetime(2025, 1, 1, 9)),
        ("FREQ=WEEKLY;INTERVAL=2;BYDAY=TU,TH,SA;BYSETPOS=2,-1;WKST=SU", datetime(2025, 1, 2, 9)),
        # Weeks that cross New Year, read with the calendar of the year they start in.
        ("FREQ=WEEKLY;BYWEEKNO=1,-1;BYDAY=MO,TH,SU;WKST=TH", datetime(2019, 12, 20, 8)),
        ("FREQ=WEEKLY;BYEASTER=-88", datetime(1999, 12, 1, 8)),
        (
            "FREQ=WEEKLY;INTERVAL=3;BYYEARDAY=1,-1,2,-2;BYDAY=MO,TU,WE,TH,FR,SA,SU",
            datetime(2020, 1, 1),
        ),
        ("FREQ=YEARLY;BYWEEKNO=1;BYDAY=MO", datetime(2019, 1, 1, 10)),
        ("FREQ=YEARLY;INTERVAL=2", datetime(2024, 2, 29, 10)),  # every fourth year
        ("FREQ=MONTHLY;BYMONTHDAY=31;COUNT=30", datetime(2025, 1, 31, 10)),
        ("FREQ=MONTHLY;INTERVAL=5;BYDAY=-1FR,1MO;BYSETPOS=1", datetime(2025, 3, 3, 10)),
        ("FREQ=HOURLY;INTERVAL=10;BYHOUR=1,3,6,7", datetime(2025, 3, 3, 1)),  # 3, 7 unreachable
        ("FREQ=MINUTELY;INTERVAL=25;BYHOUR=9,10", datetime(2025, 3, 3, 9, 5)),
        ("FREQ=DAILY;COUNT=40;UNTIL=20250301T000000;BYHOUR=8,20", datetime(2025, 1, 20, 8)),
    ],
)
def test_tricky_rules_restart_at_every_one_of_their_occurrences(body, start):
    rule = rrulestr(body, dtstart=start)
    assert isinstance(rule, rrule)
    walked = list(itertools.islice(evaluate(rule), 120))
    for k, local in enumerate(walked):
        restarted, first = restart(rule, Anchor(str(rule), local, k))
        assert first is not None
        # Restarted at the anchor, or at the start of its week; from DTSTART only in its week.
        assert first == k or walked[k] - walked[first] < timedelta(days=7)
        assert restarted is not rule or walked[k] - start < timedelta(days=7)
        assert list(itertools.islice(evaluate(restarted), len(walked) - first)) == walked[first:]


working_days_choices = st.sampled_from(
    [None, WorkingDays("DE"), WorkingDays("US", policy="next_working_day")]
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    zones,
    st.one_of(st.tuples(rules, starts), wide_rules_and_starts),
    working_days_choices,
    st.data(),
)
def test_an_anchored_search_finds_exactly_what_the_walk_from_dtstart_finds(
    tz, rule_and_start, working_days, data
):
    body, start = rule_and_start
    dtstart = start.strftime("%Y-%m-%dT%H:%M:%S")
    try:
        raw = list(itertools.islice(evaluate(Recurrence.parse(body, dtstart, tz).rule), 200))
        excluded = data.draw(st.lists(st.sampled_from(raw), max_size=5), label="exdates")
        exdates = [x.strftime("%Y-%m-%dT%H:%M:%S") for x in excluded]
        walk = Recurrence.parse(body, dtstart, tz, exdates, working_days)
    except DocumentError:
        # Refused (COUNT with UNTIL, no occurrence at all, or none on a working day): there
        # is no series to search.
        assume(False)
    k = data.draw(st.integers(-1, len(raw) - 1), label="anchor index (-1: none stored)")
    anchored = walk.anchored(Anchor(str(walk.rule), raw[k], k) if k >= 0 else None)
    j = data.draw(st.integers(0, len(raw) - 1), label="asked near")
    after = to_utc(raw[j], walk.tz) + timedelta(minutes=data.draw(st.integers(-2000, 2000)))

    def next_ones(series: Recurrence, t: datetime) -> list[datetime]:
        return list(itertools.islice(series.occurrences_after(t), 12))

    expected = next_ones(walk, after)
    assert next_ones(anchored, after) == expected  # an anchor anywhere, asked anywhere
    # As the processor goes: anchored for each search, each next one asked after the last.
    series, t = anchored, after
    for occurrence in expected:
        series = series.reanchored(t)
        assert series.next_after(t) == occurrence
        t = occurrence
    assert series.reanchored(t).next_after(t) == walk.next_after(t)
