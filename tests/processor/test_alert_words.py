"""Alerts say what failed in words (issue 32, point 7): the destination by name, the
schedule in words, the occurrence in the schedule's own zone (never an ISO timestamp), and
the error catalog's title and action; the code stays for the operator."""

from __future__ import annotations

from typing import Any

from core.store import DIRECTORY_CHANNELS
from emulator.slack_standin import Fault
from targets.kinds import run_pass
from tests.fixtures.messages import seed_series
from tests.fixtures.rotations import seed_rotation
from tests.fixtures.runtime import alerting
from tests.fixtures.slack import alerts

# T0 (2027-01-04T09:00Z, a Monday) is 4:00 in New York.
NEW_YORK_SERIES = {
    "rrule": "FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR",
    "dtstart": "2027-01-01T04:00",
    "timezone": "America/New_York",
}


def name_channel(db: Any, channel: str, name: str) -> None:
    """The directory cache's entry for a channel, as its refresh writes it."""
    db.collection(DIRECTORY_CHANNELS).document(channel).set({"name": name})


def test_a_failed_message_alert_says_where_when_and_what_to_do_in_words(settings, db, slack, clock):
    rt = alerting(settings, db, clock)
    name_channel(db, "C0123ABCD", "general")
    mid = seed_series(db, **NEW_YORK_SERIES)
    slack.inject(Fault(kind="error", code="not_in_channel", channel="C0123ABCD"))

    run_pass(rt)

    (alert,) = alerts(slack)
    assert alert.startswith(
        f":warning: Scheduled message `{mid}` to #general (Every weekday at 4:00 AM"
        " (America/New_York)) is *failed* for Mon 4 Jan 2027 at 4:00 AM (America/New_York)."
        " The app is not in #general: Invite the app: /invite @Scheduler in #general,"
        " then Retry. (`not_in_channel`: "
    ), alert
    assert "2027-01-04T" not in alert


def test_a_channel_the_directory_does_not_know_is_named_by_its_id(settings, db, slack, clock):
    rt = alerting(settings, db, clock)
    seed_series(db, **NEW_YORK_SERIES)
    slack.inject(Fault(kind="error", code="is_archived", channel="C0123ABCD"))

    run_pass(rt)

    (alert,) = alerts(slack)
    assert " to C0123ABCD (Every weekday" in alert
    assert "C0123ABCD is archived: Unarchive C0123ABCD or pick another channel" in alert


def test_a_failed_rotation_day_alert_says_its_turns_in_words(settings, db, slack, clock):
    rt = alerting(settings, db, clock)
    name_channel(db, "C0123ABCD", "standup")
    seed_rotation(db)
    slack.inject(Fault(kind="error", code="is_archived", channel="C0123ABCD"))

    run_pass(rt)
    run_pass(rt)

    (alert,) = alerts(slack)
    assert alert.startswith(
        ":warning: Rotation `standup` to #standup (Every weekday at 9:30 (Europe/Berlin)) is"
        " *released* for Mon 4 Jan 2027 at 9:30 (Europe/Berlin). #standup is archived: Unarchive"
        " #standup or pick another channel, then Retry."
    ), alert
