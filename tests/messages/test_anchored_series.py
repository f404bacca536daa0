"""An old series costs what a new one costs: the claim and the finalize restart its rule from
the anchor stored on the message (core.anchor), not from dtstart. Work is counted in raw
occurrences that dateutil generates, never timed. Against the Firestore emulator, the Slack
stand-in and the API."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from dateutil.rrule import rrule

import core.anchor
import core.schedule
from core.anchor import Anchor
from core.rules import evaluate
from core.schedule import catch_up, recurrence_from_fields, to_utc
from messages.kind import MESSAGE_KIND
from processor.kind_pass import run_kind
from tests.fixtures.api import call
from tests.fixtures.clock import T0
from tests.fixtures.messages import message, seed_message

# A day of a minutely series, plus as much again: more than one search may generate, however
# old the series (a search starts at most the zone's DST difference before its instant).
SEARCH_WORK = 2 * 24 * 60
NEW_YORK = ZoneInfo("America/New_York")


@pytest.fixture
def generated(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """How many raw occurrences dateutil generates, through every evaluation of a rule
    (core.rules.evaluate, as core.schedule and core.anchor call it), restarted or not."""
    counter = {"raw": 0}

    def counted(rule: rrule) -> Iterator[datetime]:
        for occurrence in evaluate(rule):
            counter["raw"] += 1
            yield occurrence

    monkeypatch.setattr(core.schedule, "evaluate", counted)
    monkeypatch.setattr(core.anchor, "evaluate", counted)
    return counter


def seed_minutely(db: Any, age: timedelta, **fields: Any) -> str:
    """A minutely series in New York that started `age` before T0, due at T0, written the way
    another service would (no anchor)."""
    dtstart = (T0 - age).astimezone(NEW_YORK).replace(tzinfo=None)
    values = {
        "status": "recurring",
        "send_at": None,
        "rrule": "FREQ=MINUTELY",
        "dtstart": dtstart.isoformat(timespec="minutes"),
        "timezone": "America/New_York",
        "next_run_at": T0,
    }
    return seed_message(db, **(values | fields))


def test_an_old_minutely_series_is_claimed_and_finalized_with_bounded_work(
    rt, db, slack, generated
):
    age = timedelta(days=90)
    mid = seed_minutely(db, age)

    # A document without an anchor (no COUNT to count) gets one in phase near the due
    # occurrence, without walking from dtstart, and stores it.
    for minute in range(4):
        rt.clock.set(T0 + timedelta(minutes=minute))
        generated["raw"] = 0
        assert run_kind(rt, MESSAGE_KIND)["advanced"] == 1
        # Claim and finalize, each a search: a few days of minutes, not 90 days' 129,600.
        assert generated["raw"] <= 2 * SEARCH_WORK < age / timedelta(minutes=1)
        doc = message(db, mid)
        assert doc["next_run_at"] == T0 + timedelta(minutes=minute + 1)
        assert doc["anchor"]["local"] < (T0 + timedelta(minutes=minute)).isoformat()
    assert len(slack.posts()) == 4


def test_a_count_series_restarted_from_its_anchor_ends_exactly_at_its_count(
    rt, db, slack, generated
):
    # 5,000 occurrences from dtstart; at T0 the 4,998th is due, so three are left.
    mid = seed_minutely(db, timedelta(minutes=4997), rrule="FREQ=MINUTELY;COUNT=5000")

    for minute in range(3):
        rt.clock.set(T0 + timedelta(minutes=minute))
        generated["raw"] = 0
        run_kind(rt, MESSAGE_KIND)
        if minute:
            assert generated["raw"] <= 2 * SEARCH_WORK  # from the anchor
    doc = message(db, mid)
    assert doc["status"] == "completed"

    rt.clock.set(T0 + timedelta(minutes=3))
    assert run_kind(rt, MESSAGE_KIND)["sent"] == 0
    assert len(slack.posts()) == 3


def test_an_anchor_of_another_rule_is_not_used(rt, db, slack):
    # The rule was changed straight in Firestore; the anchor is still the hourly one's.
    mid = seed_minutely(
        db,
        timedelta(days=3),
        rrule="FREQ=MINUTELY;INTERVAL=30",
        anchor={
            "rule": "DTSTART:20270101T000000\nRRULE:FREQ=HOURLY",
            "local": "2027-01-03T00:00:00",
            "index": 48,
        },
    )

    run_kind(rt, MESSAGE_KIND)

    doc = message(db, mid)
    assert doc["next_run_at"] == T0 + timedelta(minutes=30)
    assert "INTERVAL=30" in doc["anchor"]["rule"]


def test_an_api_edit_of_the_rule_drops_the_anchor(api, rt, db):
    status, created = call(
        api,
        "POST",
        "/messages",
        {
            "channel": "C0123ABCD",
            "text": "Every minute",
            "timezone": "UTC",
            "rrule": "FREQ=MINUTELY",
            "dtstart": "2027-01-01T09:00",
        },
    )
    assert status == 201
    run_kind(rt, MESSAGE_KIND)
    assert "anchor" in message(db, created["id"])

    status, edited = call(
        api, "PUT", f"/messages/{created['id']}", {"rrule": "FREQ=MINUTELY;INTERVAL=5"}
    )

    assert status == 200
    assert "anchor" not in edited
    assert "anchor" not in message(db, created["id"])


def test_a_years_old_secondly_series_ends_exactly_at_its_count_from_its_anchor(generated):
    # 10^8 seconds from 2024 in Berlin: the last is on 2027-03-03, more than three years on.
    count = 10**8
    fields = {"rrule": f"FREQ=SECONDLY;COUNT={count}", "dtstart": "2024-01-01T00:00:00"}
    fields |= {"timezone": "Europe/Berlin"}
    last_local = datetime(2024, 1, 1) + timedelta(seconds=count - 1)
    last = to_utc(last_local, ZoneInfo("Europe/Berlin"))
    plain = recurrence_from_fields(fields)
    assert plain is not None
    # As a pass two hours earlier stored it: a raw occurrence two hours before the last.
    stored = Anchor(str(plain.rule), last_local - timedelta(hours=2), count - 1 - 2 * 3600)
    series = recurrence_from_fields(fields | {"anchor": stored.to_fields()})
    assert series is not None
    generated["raw"] = 0

    assert series.next_after(last - timedelta(seconds=1)) == last
    assert series.reanchored(last).next_after(last) is None  # the count is used up exactly
    assert generated["raw"] <= 6 * 3600  # hours of seconds, not three years' 10^8


def test_a_month_long_catch_up_accounts_for_every_missed_occurrence(generated):
    # Down 40 days: 57,600 minutes, more than one evaluation of the rule may walk (its budget
    # counts a period and an instant per minute), walked in re-anchored pieces instead.
    series = recurrence_from_fields(
        {"rrule": "FREQ=MINUTELY", "dtstart": "2026-01-01T00:00", "timezone": "UTC"}
    )
    assert series is not None
    due = datetime(2026, 6, 1, tzinfo=UTC)
    now = due + timedelta(days=40)

    plan = catch_up(series.reanchored(due), due, now, grace_seconds=3600)

    assert plan.send == now
    assert plan.latest == now
    assert plan.missed_total == 40 * 24 * 60  # every minute from `due` up to `now`
    # Each piece is walked twice (to re-anchor at its start, then searched): linear in the
    # outage, not in the series' age, and no evaluation past the budget.
    assert 40 * 24 * 60 <= generated["raw"] <= 2 * 40 * 24 * 60 + 4 * SEARCH_WORK


@pytest.mark.parametrize("rule", ["FREQ=MINUTELY", "FREQ=MINUTELY;COUNT=900000"])
def test_an_anchor_left_far_behind_still_finds_the_next_occurrence(generated, rule):
    # Paused (or down) 40 days after its last claim stored an anchor: resume, and the finalize
    # after a catch-up, search from there. One walk of 57,600 minutes is past the budget.
    fields = {"rrule": rule, "dtstart": "2026-01-01T00:00", "timezone": "Europe/Berlin"}
    series = recurrence_from_fields(fields)
    assert series is not None
    due = datetime(2026, 6, 1, tzinfo=UTC)
    later = due + timedelta(days=40)

    anchored = series.reanchored(due)

    assert anchored.anchor is not None
    assert anchored.next_after(later) == later + timedelta(minutes=1)
    assert anchored.reanchored(later).next_after(later) == later + timedelta(minutes=1)
