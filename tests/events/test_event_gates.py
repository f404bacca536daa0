"""An event to a person with a `category` passes their gates (processor.gates), as a
scheduled message does: held back, it ends `skipped` with the reason, nothing is posted and
every later caller is told so; passed, it counts against the person's window and cap."""

from __future__ import annotations

import hashlib
from datetime import timedelta

from emulator.slack_standin import Fault
from targets.kinds import run_pass
from tests.fixtures.api import call
from tests.fixtures.clock import T0
from tests.fixtures.deliveries import ledger
from tests.fixtures.people import PERSON, opt_out, person_doc, seed_category, to_person


def delivery(key):
    return "e:" + hashlib.sha256(key.encode()).hexdigest()


def notify(api, key, category, **fields):
    body = {"key": key, "user": PERSON, "text": f"{key} happened", "category": category}
    return call(api, "POST", "/events", body | fields)


def test_an_opted_out_person_gets_nothing_and_every_caller_is_told_skipped(api, db, slack, capsys):
    seed_category(db, "stages")
    opt_out(db, PERSON, "stages")

    status, first = notify(api, "stage-1:done", "stages")
    again = notify(api, "stage-1:done", "stages")

    assert (status, first["status"], first["duplicate"]) == (201, "skipped", False)
    assert again == (
        200,
        {"delivery_id": delivery("stage-1:done"), "duplicate": True, "status": "skipped"},
    )
    assert slack.posts() == []
    entry = ledger(db)[delivery("stage-1:done")]
    assert (entry["status"], entry["reason"]) == ("skipped", "opted_out")
    lines = [line for line in capsys.readouterr().out.splitlines() if '"opted_out"' in line]
    assert len(lines) == 1 and delivery("stage-1:done") in lines[0]


def test_an_event_inside_a_nudges_quiet_window_is_skipped_and_one_outside_is_sent(
    api, rt, db, slack, clock
):
    seed_category(db, "nudges", quiet_window_hours=2)
    to_person(db, "nudges")
    run_pass(rt)  # the nudge is sent at T0 and opens a two-hour window

    clock.advance(timedelta(hours=1))
    _, inside = notify(api, "stage-2:done", "nudges")
    clock.advance(timedelta(hours=2))
    _, outside = notify(api, "stage-3:done", "nudges")

    assert (inside["status"], outside["status"]) == ("skipped", "sent")
    assert ledger(db)[delivery("stage-2:done")]["reason"] == "quiet_window"
    assert len(slack.posts()) == 2


def test_events_count_against_a_daily_cap_and_a_rate_limited_one_gives_it_back(
    api, rt, db, slack, clock
):
    seed_category(db, "alerts", daily_cap=1)
    slack.inject(Fault("rate_limit", retry_after=30, times=1))

    _, limited = notify(api, "build-1:red", "alerts")
    assert limited["status"] == "sending"  # released: retried by a pass
    assert person_doc(db)["caps"]["alerts"][T0.date().isoformat()] == []  # given back

    clock.advance(timedelta(seconds=31))
    run_pass(rt)  # the retry's claim reserves the cap again, and is sent
    _, over = notify(api, "build-2:red", "alerts")

    assert [p.delivery_id for p in slack.posts()] == [delivery("build-1:red")]
    assert over["status"] == "skipped"
    assert ledger(db)[delivery("build-2:red")]["reason"] == "daily_cap"
    assert person_doc(db)["caps"]["alerts"][T0.date().isoformat()] == [delivery("build-1:red")]


def test_a_released_event_held_back_on_its_retry_ends_skipped(api, rt, db, slack, clock):
    seed_category(db, "stages")
    slack.inject(Fault("rate_limit", retry_after=30, times=1))
    notify(api, "stage-4:done", "stages")
    opt_out(db, PERSON, "stages")  # before the retry

    clock.advance(timedelta(seconds=31))
    summary = run_pass(rt)

    assert slack.posts() == [] and summary["skipped"] == 1
    entry = ledger(db)[delivery("stage-4:done")]
    assert (entry["status"], entry["reason"]) == ("skipped", "opted_out")
    _, again = notify(api, "stage-4:done", "stages")
    assert again["status"] == "skipped"
