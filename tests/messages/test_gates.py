"""A person's gates, in the claim (processor.gates): opted out, quiet window, daily cap, in
that order, after "already sent". A gated occurrence is a `skipped` ledger entry with its
reason, nothing is posted, a series moves on and a one-off ends `skipped`."""

from __future__ import annotations

import itertools
from datetime import timedelta
from math import comb

import pytest

from core.models import message_delivery_id
from core.store import MESSAGES, PEOPLE
from messages.kind import MESSAGE_KIND
from targets.kinds import run_pass
from tests.fixtures.api import call
from tests.fixtures.clock import T0
from tests.fixtures.deliver import deliver_one
from tests.fixtures.deliveries import ledger
from tests.fixtures.messages import message
from tests.fixtures.people import (
    PERSON,
    opt_out,
    person_doc,
    seed_category,
    series_to_person,
    to_person,
)
from tests.fixtures.runtime import make_runtime
from tests.support.interleave import orchestrate


def entry(db, mid, at=T0):
    return ledger(db)[message_delivery_id(mid, at)]


def test_an_opted_out_one_off_ends_skipped_and_posts_nothing(rt, db, slack, capsys):
    seed_category(db, "nudges")
    opt_out(db, PERSON, "nudges")
    mid = to_person(db, "nudges")

    summary = run_pass(rt)

    assert slack.posts() == [] and summary["skipped"] == 1 and summary["sent"] == 0
    assert (entry(db, mid)["status"], entry(db, mid)["reason"]) == ("skipped", "opted_out")
    assert message(db, mid)["status"] == "skipped"
    lines = [line for line in capsys.readouterr().out.splitlines() if '"opted_out"' in line]
    assert len(lines) == 1 and mid in lines[0]


def test_an_opted_out_series_moves_on_to_its_next_occurrence(rt, db, slack):
    seed_category(db, "nudges")
    opt_out(db, PERSON, "nudges")
    mid = series_to_person(db, "nudges")

    run_pass(rt)

    assert slack.posts() == []
    assert entry(db, mid)["reason"] == "opted_out"
    doc = message(db, mid)
    assert (doc["status"], doc["next_run_at"]) == ("recurring", T0 + timedelta(days=1))


def test_a_must_read_category_and_an_uncategorised_message_pass_an_opt_out(rt, db, slack):
    seed_category(db, "security", opt_out_allowed=False)
    opt_out(db, PERSON, "security", "nudges")
    must_read = to_person(db, "security")
    plain = to_person(db, None, send_at=T0, text="no category")

    run_pass(rt)

    assert sorted(p.delivery_id for p in slack.posts()) == sorted(
        message_delivery_id(m, T0) for m in (must_read, plain)
    )


def test_two_nudges_due_the_same_minute_send_one_and_skip_the_other(rt, db, slack):
    seed_category(db, "nudges", quiet_window_hours=48)
    first, second = to_person(db, "nudges"), to_person(db, "nudges")

    summary = run_pass(rt)

    [post] = slack.posts()
    held = {first, second} - {post.delivery_id.split(":")[1]}
    [other] = held
    assert (entry(db, other)["status"], entry(db, other)["reason"]) == ("skipped", "quiet_window")
    assert message(db, other)["status"] == "skipped"
    assert summary["sent"] == 1 and summary["skipped"] == 1
    # The window runs from the sent one's claim; the skipped one reserved nothing.
    assert person_doc(db)["quiet_sends"] == {post.delivery_id: T0}  # claimed at T0


def test_the_quiet_window_closes_after_its_hours(rt, db, slack):
    seed_category(db, "nudges", quiet_window_hours=2)
    to_person(db, "nudges")
    later = to_person(
        db, "nudges", send_at=T0 + timedelta(hours=1), next_run_at=T0 + timedelta(hours=1)
    )
    last = to_person(
        db, "nudges", send_at=T0 + timedelta(hours=3), next_run_at=T0 + timedelta(hours=3)
    )

    run_pass(rt)
    rt.clock.advance(timedelta(hours=1))
    run_pass(rt)
    rt.clock.advance(timedelta(hours=2))
    run_pass(rt)

    assert len(slack.posts()) == 2
    assert entry(db, later, T0 + timedelta(hours=1))["reason"] == "quiet_window"
    assert entry(db, last, T0 + timedelta(hours=3))["status"] == "sent"


def test_a_reminder_inside_the_window_is_sent(rt, db, slack):
    seed_category(db, "nudges", quiet_window_hours=48)
    seed_category(db, "reminders")  # quiet_window_hours 0: exempt
    to_person(db, "nudges")
    run_pass(rt)
    reminder = to_person(
        db, "reminders", send_at=T0 + timedelta(hours=1), next_run_at=T0 + timedelta(hours=1)
    )

    rt.clock.advance(timedelta(hours=1))
    run_pass(rt)

    assert len(slack.posts()) == 2
    assert entry(db, reminder, T0 + timedelta(hours=1))["status"] == "sent"


def test_a_reminder_does_not_open_a_window(rt, db, slack):
    seed_category(db, "nudges", quiet_window_hours=48)
    seed_category(db, "reminders")
    to_person(db, "reminders")
    run_pass(rt)
    nudge = to_person(
        db, "nudges", send_at=T0 + timedelta(minutes=1), next_run_at=T0 + timedelta(minutes=1)
    )

    rt.clock.advance(timedelta(minutes=1))
    run_pass(rt)

    assert len(slack.posts()) == 2
    assert entry(db, nudge, T0 + timedelta(minutes=1))["status"] == "sent"
    # The nudge opened a window, the reminder did not.
    assert list(person_doc(db)["quiet_sends"]) == [
        message_delivery_id(nudge, T0 + timedelta(minutes=1))
    ]


@pytest.mark.parametrize("quiet", [0, 48])
def test_gates_run_in_order_opted_out_first(rt, db, slack, quiet):
    seed_category(db, "nudges", quiet_window_hours=quiet, daily_cap=0)
    opt_out(db, PERSON, "nudges")
    mid = to_person(db, "nudges")

    run_pass(rt)

    assert entry(db, mid)["reason"] == "opted_out"


def test_two_workers_claiming_two_nudges_to_one_person_at_once_send_one(settings, db, slack, clock):
    """Every interleaving of two workers' claims, sends and finalizes (SYNCPOINTs): the
    loser either sees the winner's reservation and is skipped `quiet_window`, or fails its
    claim on the person's document and is skipped so by the next pass. Never two posts."""
    seed_category(db, "nudges", quiet_window_hours=48)
    arrivals = itertools.count()
    rounds: list[tuple[str, str, str]] = []

    def worker(name, which):
        rt = make_runtime(settings, db, clock, name)

        def run():
            if next(arrivals) % 2 == 0:  # the first to arrive seeds this round's pair
                user = f"U0RACE{len(rounds)}"
                rounds.append((user, to_person(db, "nudges", user), to_person(db, "nudges", user)))
            snap = db.collection(MESSAGES).document(rounds[-1][which]).get()
            deliver_one(rt, MESSAGE_KIND, snap)  # pragma: SYNCPOINT claim

        return run

    counts = orchestrate(worker("worker-a", 1), worker("worker-b", 2), name="claim")

    assert min(counts) >= 2 and len(rounds) == comb(sum(counts), counts[0])
    run_pass(make_runtime(settings, db, clock, "worker-c"))  # settles any claim that lost
    entries = ledger(db)
    for user, *mids in rounds:
        ids = [message_delivery_id(m, T0) for m in mids]
        assert sum(slack.delivery_ids().count(i) for i in ids) == 1
        assert sorted((entries[i]["status"], entries[i].get("reason")) for i in ids) == [
            ("sent", None),
            ("skipped", "quiet_window"),
        ]
        [sent] = [i for i in ids if i in slack.delivery_ids()]
        assert list(person_doc(db, user)["quiet_sends"]) == [sent]


def test_the_dry_run_reports_each_gate_and_agrees_with_the_real_send(rt, db, slack):
    seed_category(db, "nudges", quiet_window_hours=48)
    seed_category(db, "digest", daily_cap=1)
    seed_category(db, "security", opt_out_allowed=False)
    opt_out(db, "U0OUT", "nudges", "security")
    db.collection(PEOPLE).document("U0QUIET").set(
        {"quiet_sends": {"m:a:b": T0 - timedelta(hours=1)}}
    )
    seeded = [
        to_person(db, "nudges", "U0OUT"),  # opted out
        to_person(db, "security", "U0OUT"),  # must-read: sent
        to_person(db, "nudges", "U0PAIR"),  # one of these two is held by the other's window
        to_person(db, "nudges", "U0PAIR"),
        to_person(db, "digest", "U0CAP"),  # one of these two is over the cap
        to_person(db, "digest", "U0CAP"),
        to_person(db, "nudges", "U0QUIET"),  # inside a window a sent nudge opened
        to_person(db, None, "U0OUT"),  # no category: no gate
    ]

    dry = run_pass(rt, dry_run=True)
    assert ledger(db) == {} and slack.posts() == []
    predicted = {p["id"]: p["held_back"] for p in dry["previews"]}
    run_pass(rt)

    entries = ledger(db)
    actual = {mid: entries[message_delivery_id(mid, T0)].get("reason") for mid in seeded}
    assert predicted == actual
    assert sorted(r for r in actual.values() if r) == [
        "daily_cap",
        "opted_out",
        "quiet_window",
        "quiet_window",
    ]
    assert len(slack.posts()) == 4


def test_post_preview_reports_each_occurrences_gate_and_the_sends_agree(api, rt, db, slack):
    """A daily nudge with a 48-hour window: `POST /preview` says which occurrences the window
    holds back; the same series, stored and sent day by day, is held back on those days."""
    seed_category(db, "nudges", quiet_window_hours=48)
    draft = {
        "user": PERSON,
        "category": "nudges",
        "text": "Your plan is waiting",
        "rrule": "FREQ=DAILY;BYHOUR=9;BYMINUTE=0",
        "dtstart": "2027-01-05T09:00",
    }

    status, preview = call(api, "POST", "/preview", draft)
    assert status == 200
    predicted = [o["held_back"] for o in preview["occurrences"]]
    opt_out(db, PERSON, "nudges")
    _, opted = call(api, "POST", "/preview", draft)
    opt_out(db, PERSON)
    start = T0 + timedelta(days=1)
    mid = series_to_person(db, "nudges", dtstart="2027-01-05T09:00", next_run_at=start)
    for day in range(5):
        rt.clock.set(start + timedelta(days=day))
        run_pass(rt)

    entries = ledger(db)
    days = [entries[message_delivery_id(mid, start + timedelta(days=d))] for d in range(5)]
    assert predicted == [e.get("reason") for e in days]
    assert predicted == [None, "quiet_window", None, "quiet_window", None]
    assert [o["held_back"] for o in opted["occurrences"]] == ["opted_out"] * 5
