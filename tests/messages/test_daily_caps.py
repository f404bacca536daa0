"""Daily caps (processor.gates): per person, per category, per local day of the message's
timezone, reserved in the claim's own commit; given back only when the send provably never
reached Slack (a definitive error, or reconciliation that found it absent), never on an
ambiguous outcome; and through a worker killed at each crash point, never exceeded and never
leaked."""

from __future__ import annotations

from datetime import timedelta

import pytest

from core.models import message_delivery_id
from emulator.slack_standin import Fault
from processor.reconcile import backoff
from targets.kinds import run_pass
from tests.fixtures.clock import T0
from tests.fixtures.crash import kill_worker_at
from tests.fixtures.deliveries import ledger
from tests.fixtures.messages import message
from tests.fixtures.people import PERSON, person_doc, seed_category, to_person

DAY = "2027-01-04"  # T0's local day in UTC


def counted(db, user=PERSON, category="digest", day=DAY):
    return person_doc(db, user).get("caps", {}).get(category, {}).get(day, [])


def at(minutes):
    when = T0 + timedelta(minutes=minutes)
    return {"send_at": when, "next_run_at": when}


def test_a_cap_holds_back_what_is_over_it_that_local_day(rt, db, slack):
    seed_category(db, "digest", daily_cap=2)
    mids = [to_person(db, "digest", **at(n)) for n in range(3)]
    for _ in range(3):
        run_pass(rt)
        rt.clock.advance(timedelta(minutes=1))
    # Tuesday 05:00 UTC: still Monday 21:00 in Los Angeles, already Tuesday in UTC.
    rt.clock.set(T0 + timedelta(hours=20))
    monday_in_la = to_person(db, "digest", timezone="America/Los_Angeles", **at(20 * 60))
    tuesday_in_utc = to_person(db, "digest", **at(20 * 60))
    run_pass(rt)

    entries = ledger(db)

    def outcome(mid, minutes):
        entry = entries[message_delivery_id(mid, T0 + timedelta(minutes=minutes))]
        return entry["status"], entry.get("reason")

    assert [outcome(m, n) for n, m in enumerate(mids)] == [
        ("sent", None),
        ("sent", None),
        ("skipped", "daily_cap"),
    ]
    assert message(db, mids[2])["status"] == "skipped"
    assert outcome(monday_in_la, 20 * 60) == ("skipped", "daily_cap")
    assert outcome(tuesday_in_utc, 20 * 60) == ("sent", None)
    assert len(slack.posts()) == 3
    assert len(counted(db)) == 2 and len(counted(db, day="2027-01-05")) == 1


def test_a_definitive_error_gives_the_cap_back(rt, db, slack):
    seed_category(db, "digest", daily_cap=1)
    failed = to_person(db, "digest")
    slack.inject(Fault("error", code="channel_not_found", times=1))
    run_pass(rt)
    assert ledger(db)[message_delivery_id(failed, T0)]["status"] == "failed"
    assert counted(db) == []

    later = to_person(db, "digest", **at(5))
    rt.clock.advance(timedelta(minutes=5))
    run_pass(rt)

    assert [p.delivery_id for p in slack.posts()] == [message_delivery_id(later, at(5)["send_at"])]
    assert counted(db) == [message_delivery_id(later, at(5)["send_at"])]


def test_an_ambiguous_send_keeps_the_cap_until_reconciliation_finds_it(rt, db, slack):
    seed_category(db, "digest", daily_cap=1)
    first = to_person(db, "digest")
    first_id = message_delivery_id(first, T0)
    slack.inject(Fault("drop_after_receipt", times=1))  # posted, the answer lost
    run_pass(rt)
    assert counted(db) == [first_id]

    second = to_person(db, "digest", **at(1))
    rt.clock.advance(timedelta(minutes=1))
    run_pass(rt)  # the first is unresolved: its count stands
    rt.clock.advance(timedelta(seconds=301))
    run_pass(rt)  # reconciliation finds the first in the DM: delivered

    entries = ledger(db)
    assert entries[first_id]["status"] == "sent"
    assert entries[message_delivery_id(second, at(1)["send_at"])]["reason"] == "daily_cap"
    assert [p.delivery_id for p in slack.posts()] == [first_id]
    assert counted(db) == [first_id]


def test_reconciliation_that_finds_a_send_absent_gives_the_cap_back(rt, db, slack):
    seed_category(db, "digest", daily_cap=1)
    first = to_person(db, "digest")
    first_id = message_delivery_id(first, T0)
    slack.inject(Fault("server_error", times=1))  # a 5xx: nothing posted, outcome unknown
    run_pass(rt)
    assert counted(db) == [first_id]  # ambiguous: kept

    rt.clock.advance(timedelta(seconds=301))
    run_pass(rt)  # absent from the DM: released, and the count given back
    assert ledger(db)[first_id]["status"] == "released"
    assert counted(db) == []
    rt.clock.advance(backoff(1))
    run_pass(rt)  # claimed again: counted again, and sent

    assert [p.delivery_id for p in slack.posts()] == [first_id]
    assert counted(db) == [first_id]


@pytest.mark.parametrize("point", ("after_claim", "after_post", "mid_finalize"))
def test_a_killed_worker_never_exceeds_nor_leaks_a_cap(rt, db, slack, env, firestore_host, point):
    """Two messages of a category capped at one a day, due together to one person; the
    worker delivering them is SIGKILLed at `point`. After the next passes, exactly one was
    posted, the other is skipped `daily_cap`, and the count holds exactly the posted one."""
    seed_category(db, "digest", daily_cap=1)
    for n in range(3):
        user, now = f"U{n:04d}CRASH", rt.clock.now()
        mids = [to_person(db, "digest", user, send_at=now, next_run_at=now) for _ in range(2)]
        kill_worker_at(point, now, env, firestore_host)
        rt.clock.advance(timedelta(seconds=301))  # past the dead worker's lease
        run_pass(rt)
        rt.clock.advance(backoff(1))  # past a release's backoff
        run_pass(rt)

        ids = [message_delivery_id(m, now) for m in mids]
        posted = [i for i in slack.delivery_ids() if i in ids]
        entries = ledger(db)
        assert len(posted) == 1, (point, n)
        assert sorted((entries[i]["status"], entries[i].get("reason")) for i in ids) == [
            ("sent", None),
            ("skipped", "daily_cap"),
        ]
        assert counted(db, user, day=now.date().isoformat()) == posted, (point, n)


def test_ids_with_dots_are_recorded_and_given_back_whole(rt, db, slack):
    """A category id and a delivery id with dots (fractional seconds) are map keys, never
    field paths: the finalize's merge records and gives back exactly the claim's entries."""
    seed_category(db, "team.nudges", quiet_window_hours=1, daily_cap=2)
    when = T0 + timedelta(microseconds=500_000)
    sent = to_person(db, "team.nudges", send_at=when, next_run_at=when)
    rt.clock.set(when)
    run_pass(rt)
    rt.clock.advance(timedelta(hours=2))
    failed = to_person(db, "team.nudges", send_at=rt.clock.now(), next_run_at=rt.clock.now())
    slack.inject(Fault("error", code="channel_not_found", times=1))
    run_pass(rt)

    person = person_doc(db)
    assert list(person["quiet_sends"]) == [message_delivery_id(sent, when)]  # failed: given back
    assert person["caps"] == {"team.nudges": {DAY: [message_delivery_id(sent, when)]}}
    assert (
        ledger(db)[message_delivery_id(failed, T0 + timedelta(hours=2, microseconds=500_000))][
            "status"
        ]
        == "failed"
    )
