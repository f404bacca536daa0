"""Every rotation day ends settled (issue 16, points 3 and 4): a day given back for a retry
ends posted, `failed` or `skipped` (`day_ended`) whatever the clock does, an explicit
failure is retried the same local day with backoff and alerted once, and a stored rotation
with bad members says what is wrong with them."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from emulator.slack_standin import Fault
from targets.kinds import run_pass
from tests.fixtures.rotations import ALICE, BOB, MONDAY, day_entry, rotation, seed_rotation
from tests.fixtures.runtime import alerting
from tests.fixtures.slack import alerts

TEAM = "C0123ABCD"


def turns(slack: Any) -> list[str]:
    return [p.text or "" for p in slack.posts() if p.channel == TEAM]


def log_lines(capsys: Any) -> list[dict[str, Any]]:
    return [json.loads(line) for line in capsys.readouterr().out.splitlines() if line]


def passes_every_minute(rt: Any, until: datetime) -> None:
    while rt.clock.now() <= until:
        run_pass(rt)
        rt.clock.advance(timedelta(minutes=1))


@pytest.mark.parametrize(
    ("send_time", "fault", "error_lines"),
    [
        ("23:59", Fault(kind="rate_limit", retry_after=120, channel=TEAM, times=1), 1),
        # Fails at 23:57 (alerted) and 23:58; the next try, 2 minutes on, is Tuesday's.
        ("23:57", Fault(kind="error", code="channel_not_found", channel=TEAM, times=2), 2),
    ],
    ids=["429-retry-after-past-midnight", "channel-not-found-backoff-past-midnight"],
)
def test_a_day_whose_retry_falls_after_local_midnight_ends_skipped_and_is_alerted_once(
    settings, db, slack, clock, capsys, send_time, fault, error_lines
):
    rt = alerting(settings, db, clock)
    # Monday's turn just before midnight Berlin (22:xxZ); the retry Slack or the backoff
    # asks for is on Tuesday.
    seed_rotation(db, send_time=send_time, next_run_at=datetime(2027, 1, 4, 22, 0, tzinfo=UTC))
    slack.inject(fault)
    rt.clock.set(datetime(2027, 1, 4, 22, 57, tzinfo=UTC))

    passes_every_minute(rt, datetime(2027, 1, 4, 23, 30, tzinfo=UTC))
    rt.clock.set(datetime(2027, 1, 5, 22, 59, tzinfo=UTC))  # Tuesday 23:59: its turn has come
    run_pass(rt)

    monday = day_entry(db, MONDAY)
    assert (monday["status"], monday["reason"]) == ("skipped", "day_ended")
    assert monday["slack_ts"] is None
    # Alice lost Monday's turn to the clock, not her place: she takes Tuesday's.
    assert turns(slack) == [f"Today's stand-up host: <@{ALICE}>"]
    assert day_entry(db, "2027-01-05")["member"] == ALICE
    [alert] = alerts(slack)
    assert "Rotation `standup`" in alert
    ended = [
        line
        for line in log_lines(capsys)
        if line.get("delivery_id") == f"r:standup:{MONDAY}" and line["severity"] == "ERROR"
    ]
    assert len(ended) == error_lines  # the day's one alert, and the line saying it ended
    assert ended[-1]["error_code"] == "day_ended"


@pytest.mark.parametrize(
    "later",
    [datetime(2027, 1, 5, 9, 0, tzinfo=UTC), datetime(2027, 1, 9, 9, 0, tzinfo=UTC)],
    ids=["next-turn-day", "a-saturday"],
)
def test_a_released_day_the_clock_jumped_past_is_closed_by_the_next_pass(rt, db, slack, later):
    seed_rotation(db)
    slack.inject(Fault(kind="rate_limit", retry_after=30, times=1))
    assert run_pass(rt)["released"] == 1  # Monday 10:00 Berlin, retry at 10:00:30

    rt.clock.set(later)  # no pass ran in between
    run_pass(rt)

    monday = day_entry(db, MONDAY)
    assert (monday["status"], monday["reason"]) == ("skipped", "day_ended")
    assert monday["error"]["code"] == "ratelimited"


def test_an_explicit_failure_is_retried_the_same_day_with_backoff_and_alerted_once(
    settings, db, slack, clock
):
    rt = alerting(settings, db, clock)
    seed_rotation(db)
    slack.inject(Fault(kind="error", code="channel_not_found", channel=TEAM, times=2))

    # Attempts at 09:00 and 09:01 fail (the bot is not in the channel); it is invited back
    # meanwhile, and the attempt after the 2-minute backoff posts today's turn.
    passes_every_minute(rt, datetime(2027, 1, 4, 9, 10, tzinfo=UTC))

    [turn] = turns(slack)
    assert turn == f"Today's stand-up host: <@{ALICE}>"
    entry = day_entry(db, MONDAY)
    assert (entry["status"], entry["attempts"]) == ("sent", 3)
    assert entry["sent_at"] == datetime(2027, 1, 4, 9, 3, tzinfo=UTC)
    assert len(alerts(slack)) == 1
    assert rotation(db)["cursor"] == 1


def test_an_explicit_failure_ends_failed_after_max_attempts_alerted_once(
    settings, db, slack, clock
):
    rt = alerting(settings, db, clock)
    seed_rotation(db)
    slack.inject(Fault(kind="error", code="channel_not_found", channel=TEAM))

    passes_every_minute(rt, datetime(2027, 1, 4, 10, 30, tzinfo=UTC))

    entry = day_entry(db, MONDAY)
    assert (entry["status"], entry["attempts"]) == ("failed", settings.max_attempts)
    assert entry["error"]["code"] == "channel_not_found"
    assert turns(slack) == [] and len(alerts(slack)) == 1
    doc = rotation(db)
    assert (doc["cursor"], doc["next_run_at"]) == (0, datetime(2027, 1, 5, 8, 30, tzinfo=UTC))
    slack.clear_faults()
    rt.clock.set(datetime(2027, 1, 5, 8, 30, tzinfo=UTC))
    run_pass(rt)
    assert turns(slack) == [f"Today's stand-up host: <@{ALICE}>"]


@pytest.mark.parametrize(
    ("members", "says"),
    [
        (["U1", "U2", "U3"], "['U1', 'U2', 'U3'] are not Slack user ids"),
        ([ALICE, BOB, ALICE], f"lists {ALICE} more than once"),
        ([], "non-empty list"),
    ],
    ids=["format", "duplicates", "empty"],
)
def test_a_stored_rotation_with_bad_members_says_what_is_wrong(rt, db, slack, members, says):
    seed_rotation(db, members=members)

    preview = run_pass(rt, dry_run=True)["previews"]
    run_pass(rt)

    error = rotation(db)["last_error"]
    assert error["code"] == "invalid_members" and says in error["message"]
    assert says in preview[0]["error"]["message"]
