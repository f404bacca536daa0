"""Time policy through the processor, against the real Firestore emulator and the Slack
stand-in: DST walks counted at Slack, the misfire policy after downtime, late and expired
one-offs, pause and resume, working days."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from core.clock import FixedClock
from core.models import Message, message_delivery_id
from core.schedule import MAX_MISSED_ENTRIES, Recurrence, resume_next_run_at
from core.store import DELIVERIES, MESSAGES
from emulator.slack_standin import Fault
from messages.claim import planned_occurrence
from messages.kind import MESSAGE_KIND
from processor.kind_pass import run_kind
from processor.outcome import Result
from tests.fixtures.clock import T0, utc
from tests.fixtures.deliver import deliver_one
from tests.fixtures.deliveries import ledger
from tests.fixtures.messages import message, seed_message, seed_series
from tests.fixtures.runtime import make_runtime


def skipped(db: Any) -> dict[str, dict[str, Any]]:
    return {k: v for k, v in ledger(db).items() if v["status"] == "skipped"}


NEW_YORK = "America/New_York"


@pytest.mark.parametrize(
    ("walk_from", "nine", "odd_time", "expected_nine", "expected_odd"),
    [
        # Spring forward on Sunday 2027-03-14 (02:00 EST -> 03:00 EDT): 09:00 EST is 14:00Z,
        # 09:00 EDT 13:00Z; 02:30 does not exist that day and fires once at 03:30 EDT.
        (
            utc(2027, 3, 12, 12),
            "2027-03-12T09:00",
            "2027-03-13T02:30",
            [
                utc(2027, 3, 12, 14),
                utc(2027, 3, 13, 14),
                utc(2027, 3, 14, 13),
                utc(2027, 3, 15, 13),
            ],
            [
                utc(2027, 3, 13, 7, 30),
                utc(2027, 3, 14, 7, 30),
                utc(2027, 3, 15, 6, 30),
                utc(2027, 3, 16, 6, 30),
            ],
        ),
        # Fall back on Sunday 2027-11-07 (02:00 EDT -> 01:00 EST): 01:30 happens twice that
        # day and fires once, at its first instance (EDT).
        (
            utc(2027, 11, 5, 12),
            "2027-11-05T09:00",
            "2027-11-06T01:30",
            [
                utc(2027, 11, 5, 13),
                utc(2027, 11, 6, 13),
                utc(2027, 11, 7, 14),
                utc(2027, 11, 8, 14),
            ],
            [
                utc(2027, 11, 6, 5, 30),
                utc(2027, 11, 7, 5, 30),
                utc(2027, 11, 8, 6, 30),
                utc(2027, 11, 9, 6, 30),
            ],
        ),
    ],
)
def test_daily_series_walk_a_new_york_transition_posting_once_a_day(
    rt, db, slack, walk_from, nine, odd_time, expected_nine, expected_odd
):
    series = {}
    for dtstart in (nine, odd_time):
        first = Recurrence.parse("FREQ=DAILY", dtstart, NEW_YORK).first()
        assert first is not None
        series[dtstart] = seed_series(db, first, dtstart=dtstart, timezone=NEW_YORK)

    # Cloud Scheduler every 30 minutes for four days, each pass with the tick's `now`
    # override, as POST {"now": ...} runs it.
    instant = walk_from
    while instant < walk_from + timedelta(days=4):
        run_kind(rt.with_clock(FixedClock(instant)), MESSAGE_KIND)
        instant += timedelta(minutes=30)

    posted = [p.delivery_id for p in slack.posts()]
    for dtstart, expected in ((nine, expected_nine), (odd_time, expected_odd)):
        mid = series[dtstart]
        assert [d for d in posted if d.startswith(f"m:{mid}:")] == [
            message_delivery_id(mid, o) for o in expected
        ]
        for occurrence in expected:
            entry = ledger(db)[message_delivery_id(mid, occurrence)]
            assert entry["status"] == "sent"
            assert entry["late_seconds"] < 1800  # caught by the first tick after it
        assert message(db, mid)["sent_count"] == 4
    for occurrence in expected_nine:
        local = occurrence.astimezone(ZoneInfo(NEW_YORK))
        assert (local.hour, local.minute) == (9, 0)
    assert skipped(db) == {}


def test_after_downtime_only_the_most_recent_occurrence_is_sent_the_rest_recorded(rt, db, slack):
    mid = seed_series(db, T0 - timedelta(days=3))  # due Friday; we were down until Monday
    rt.clock.set(T0 + timedelta(minutes=10))

    summary = run_kind(rt, MESSAGE_KIND)

    assert (summary["sent"], summary["claimed"]) == (1, 1)
    [post] = slack.posts()
    assert post.delivery_id == message_delivery_id(mid, T0)
    missed = skipped(db)
    assert sorted(missed) == [message_delivery_id(mid, T0 - timedelta(days=d)) for d in (3, 2, 1)]
    for entry in missed.values():
        assert (entry["reason"], entry["message_id"], entry["channel"]) == (
            "missed",
            mid,
            "C0123ABCD",
        )
        assert entry["missed_count"] == 1
    sent = ledger(db)[post.delivery_id]
    assert sent["late_seconds"] == 600
    doc = message(db, mid)
    assert doc["next_run_at"] == T0 + timedelta(days=1)  # from the anchor, not from now
    assert (doc["status"], doc["missed_count"], doc["sent_count"]) == ("recurring", 3, 1)

    # No burst: the next ticks send nothing until the next occurrence.
    for minutes in (11, 30, 60 * 23):
        rt.clock.set(T0 + timedelta(minutes=minutes))
        assert run_kind(rt, MESSAGE_KIND)["sent"] == 0
    assert len(slack.posts()) == 1


def test_when_even_the_most_recent_occurrence_is_past_grace_nothing_is_sent(rt, db, slack):
    mid = seed_series(db, T0 - timedelta(days=1), misfire_grace_seconds=600)
    rt.clock.set(T0 + timedelta(minutes=11))

    summary = run_kind(rt, MESSAGE_KIND)

    assert (summary["sent"], summary["claimed"], summary["skipped"]) == (0, 0, 1)
    assert slack.posts() == []
    assert sorted(skipped(db)) == [
        message_delivery_id(mid, T0 - timedelta(days=1)),
        message_delivery_id(mid, T0),
    ]
    doc = message(db, mid)
    assert (doc["status"], doc["next_run_at"]) == ("recurring", T0 + timedelta(days=1))
    assert doc["missed_count"] == 2

    rt.clock.set(T0 + timedelta(days=1))
    assert run_kind(rt, MESSAGE_KIND)["sent"] == 1  # the series goes on at its next occurrence


def test_a_series_that_ends_while_down_completes_without_sending(rt, db, slack):
    mid = seed_series(db, T0 - timedelta(days=2), rrule="FREQ=DAILY;UNTIL=20270103T090000Z")
    rt.clock.set(T0 + timedelta(days=1))

    run_kind(rt, MESSAGE_KIND)

    assert slack.posts() == []
    assert message(db, mid)["status"] == "completed"
    assert len(skipped(db)) == 2


def test_a_week_of_missed_minutes_writes_a_bounded_batch_that_accounts_for_all(rt, db, slack):
    start = T0 - timedelta(days=7)
    mid = seed_series(db, start, rrule="FREQ=MINUTELY", dtstart="2026-12-28T09:00")

    summary = run_kind(rt, MESSAGE_KIND)

    assert summary["sent"] == 1
    [post] = slack.posts()
    assert post.delivery_id == message_delivery_id(mid, T0)
    missed = skipped(db)
    assert len(missed) == MAX_MISSED_ENTRIES
    assert sum(e["missed_count"] for e in missed.values()) == 7 * 24 * 60
    summary_entry = missed[message_delivery_id(mid, start)]
    assert summary_entry["missed_count"] == 7 * 24 * 60 - (MAX_MISSED_ENTRIES - 1)
    assert summary_entry["missed_through"] == T0 - timedelta(minutes=MAX_MISSED_ENTRIES)
    assert message(db, mid)["missed_count"] == 7 * 24 * 60

    rt.clock.advance(timedelta(seconds=59))
    assert run_kind(rt, MESSAGE_KIND)["sent"] == 0


def test_two_workers_catching_up_one_series_send_once_and_record_the_misses_once(
    settings, db, slack, clock
):
    mid = seed_series(db, T0 - timedelta(days=2))
    snap_a = db.collection(MESSAGES).document(mid).get()
    snap_b = db.collection(MESSAGES).document(mid).get()  # both read it as due

    first = deliver_one(make_runtime(settings, db, clock, "worker-a"), MESSAGE_KIND, snap_a)
    second = deliver_one(make_runtime(settings, db, clock, "worker-b"), MESSAGE_KIND, snap_b)

    assert first[0] is Result.ADVANCED and first[1] is not None
    assert second == (Result.DUPLICATE, None)
    assert len(slack.posts()) == 1
    assert {e["worker"] for e in skipped(db).values()} == {"worker-a"}
    assert len(skipped(db)) == 2
    assert message(db, mid)["missed_count"] == 2


def test_an_occurrence_recorded_before_does_not_block_the_catch_up(rt, db, slack):
    # The ledger already settled one of the missed occurrences (it was sent, then an operator
    # rewound next_run_at): that entry stays as it is, the others are recorded.
    mid = seed_series(db, T0 - timedelta(days=2))
    earlier = message_delivery_id(mid, T0 - timedelta(days=1))
    db.collection(DELIVERIES).document(earlier).set(
        {"message_id": mid, "occurrence_at": T0 - timedelta(days=1), "status": "sent"}
    )

    run_kind(rt, MESSAGE_KIND)

    assert [p.delivery_id for p in slack.posts()] == [message_delivery_id(mid, T0)]
    assert ledger(db)[earlier]["status"] == "sent"
    assert sorted(skipped(db)) == [message_delivery_id(mid, T0 - timedelta(days=2))]


def test_a_released_retry_is_delivered_late_not_treated_as_a_misfire(rt, db, slack):
    mid = seed_series(db, T0)
    slack.inject(Fault(kind="rate_limit", retry_after=7200, times=1))  # beyond the grace
    assert run_kind(rt, MESSAGE_KIND)["released"] == 1

    rt.clock.advance(timedelta(hours=2))
    summary = run_kind(rt, MESSAGE_KIND)

    assert summary["sent"] == 1
    [post] = slack.posts()
    assert post.delivery_id == message_delivery_id(mid, T0)
    assert skipped(db) == {}
    assert ledger(db)[post.delivery_id]["late_seconds"] == 7200
    assert message(db, mid)["next_run_at"] == T0 + timedelta(days=1)


def test_a_late_one_off_is_sent_and_its_lateness_recorded(rt, db, slack):
    mid = seed_message(db, send_at=T0 - timedelta(hours=3), next_run_at=T0 - timedelta(hours=3))

    assert run_kind(rt, MESSAGE_KIND)["sent"] == 1

    entry = ledger(db)[message_delivery_id(mid, T0 - timedelta(hours=3))]
    assert (entry["status"], entry["late_seconds"]) == ("sent", 3 * 3600)


def test_a_one_off_past_expires_at_fails_expired_and_is_never_sent(rt, db, slack):
    due = T0 - timedelta(hours=2)
    mid = seed_message(db, send_at=due, next_run_at=due, expires_at=T0 - timedelta(hours=1))
    fresh = seed_message(db, expires_at=T0 + timedelta(minutes=5))

    summary = run_kind(rt, MESSAGE_KIND)

    assert (summary["sent"], summary["failed"]) == (1, 1)
    assert [p.delivery_id for p in slack.posts()] == [message_delivery_id(fresh, T0)]
    doc = message(db, mid)
    assert (doc["status"], doc["last_error"]["code"]) == ("failed", "expired")
    entry = ledger(db)[message_delivery_id(mid, due)]
    assert (entry["status"], entry["error"]["code"]) == ("failed", "expired")
    rt.clock.advance(timedelta(minutes=1))
    assert run_kind(rt, MESSAGE_KIND)["due"] == 0


def test_a_paused_series_is_never_claimed_and_resumes_without_the_missed_ones(rt, db, slack):
    mid = seed_series(db, T0, status="paused")
    for day in range(3):
        rt.clock.set(T0 + timedelta(days=day, minutes=1))
        assert run_kind(rt, MESSAGE_KIND)["due"] == 0

    # Resumed on Wednesday at 09:30 (what the API's resume does with the library call).
    now = T0 + timedelta(days=2, minutes=30)
    recurrence = Recurrence.parse("FREQ=DAILY", "2027-01-01T09:00", "UTC")
    next_run = resume_next_run_at(recurrence, now)
    assert next_run == T0 + timedelta(days=3)
    db.collection(MESSAGES).document(mid).update({"status": "recurring", "next_run_at": next_run})
    rt.clock.set(now)
    assert run_kind(rt, MESSAGE_KIND)["sent"] == 0
    rt.clock.set(next_run)
    assert run_kind(rt, MESSAGE_KIND)["sent"] == 1

    assert [p.delivery_id for p in slack.posts()] == [message_delivery_id(mid, next_run)]
    assert skipped(db) == {}


def test_a_working_day_series_skips_a_regional_holiday(rt, db, slack):
    # Daily 10:00 Berlin; Epiphany (Wed 2027-01-06) is a holiday in Bavaria.
    mid = seed_series(
        db,
        T0 + timedelta(days=1),
        dtstart="2027-01-05T10:00",
        timezone="Europe/Berlin",
        working_days={"country": "DE", "subdivision": "BY"},
    )
    for day in (1, 2, 3):
        rt.clock.set(T0 + timedelta(days=day))
        run_kind(rt, MESSAGE_KIND)

    assert [p.delivery_id for p in slack.posts()] == [
        message_delivery_id(mid, T0 + timedelta(days=1)),
        message_delivery_id(mid, T0 + timedelta(days=3)),
    ]
    assert skipped(db) == {}  # a holiday is not a missed occurrence


@pytest.mark.parametrize(
    ("fields", "code"),
    [
        ({"working_days": {"country": "Atlantis"}}, "invalid_working_days"),
        (
            {"working_days": {"country": "DE"}, "on_non_working_day": "never"},
            "invalid_on_non_working_day",
        ),
        ({"expires_at": "tomorrow"}, "invalid_expires_at"),
    ],
)
def test_bad_time_fields_fail_the_document_with_a_code(rt, db, slack, fields, code):
    mid = seed_series(db, T0, **fields)

    assert run_kind(rt, MESSAGE_KIND)["failed"] == 1

    assert message(db, mid)["last_error"]["code"] == code
    assert slack.posts() == []


def test_the_planned_occurrence_is_what_a_claim_at_that_moment_would_send():
    series = {
        "channel": "C0123ABCD",
        "text": "hi",
        "rrule": "FREQ=DAILY",
        "dtstart": "2027-01-01T09:00",
        "next_run_at": T0 - timedelta(days=2),
    }
    one_off = {"channel": "C0123ABCD", "text": "hi", "next_run_at": T0, "expires_at": T0}

    def planned(data: dict[str, Any], now: datetime) -> datetime | None:
        return planned_occurrence(Message.from_document("m", data), data, now)

    assert planned(series, T0 + timedelta(minutes=5)) == T0  # the most recent, in grace
    assert planned(series, T0 + timedelta(hours=2)) is None  # all past their grace
    retry = series | {"occurrence_at": T0 - timedelta(days=2)}
    assert planned(retry, T0 + timedelta(hours=2)) == T0 - timedelta(days=2)
    assert planned(one_off, T0) == T0
    assert planned(one_off, T0 + timedelta(seconds=1)) is None  # expired
