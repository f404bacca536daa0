"""A person's gates hold under concurrency (processor.gates): every gated claim and every
gated skip is committed under the version of `people/{user}` its gates read, whatever the
category reserves, so an opt-out or an opt-in answered while the person's lane was being
delivered decides their next occurrence; and a hold given back (a send proven never to have
reached Slack) is seen by the rest of the same pass."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest

from core.clock import FixedClock
from core.models import message_delivery_id
from core.store import MESSAGES, PEOPLE
from emulator.slack_standin import Fault
from messages.kind import MESSAGE_KIND
from targets.kinds import run_pass
from tests.fixtures.api import call
from tests.fixtures.clock import T0
from tests.fixtures.deliver import deliver_one
from tests.fixtures.deliveries import ledger
from tests.fixtures.people import PERSON, opt_out, person_doc, seed_category, to_person
from tests.fixtures.runtime import make_runtime
from tests.support.interleave import orchestrate


class ClockThatActs(FixedClock):
    """The test's fixed clock, which does `act` the first time the pass waits on it: between
    two posts in one person's lane (the pass paces them a second apart), mid-pass."""

    def __init__(self, instant, act: Callable[[], None]) -> None:
        super().__init__(instant)
        self._act: Callable[[], None] | None = act

    def sleep(self, seconds: float) -> None:
        act, self._act = self._act, None
        if act is not None:
            act()
        super().sleep(seconds)


def due(minutes_ago: int) -> dict[str, Any]:
    when = T0 - timedelta(minutes=minutes_ago)
    return {"send_at": when, "next_run_at": when}


def outcome(db, mid, minutes_ago):
    entry = ledger(db).get(message_delivery_id(mid, T0 - timedelta(minutes=minutes_ago)), {})
    return entry.get("status"), entry.get("reason")


def put_preferences(api, *opted_out):
    status, _ = call(api, "PUT", f"/preferences/{PERSON}", {"opted_out": list(opted_out)})
    assert status == 200


def test_an_opt_out_answered_mid_pass_stops_the_persons_next_claim(api, settings, db, slack):
    """`updates` reserves nothing (no quiet window, no cap): its claim is conditioned on the
    person's version all the same, so the opt-out answered between the lane's two posts
    fails the second claim, and the next pass skips it `opted_out`."""
    seed_category(db, "updates")
    first, second = to_person(db, "updates", **due(2)), to_person(db, "updates", **due(1))
    clock = ClockThatActs(T0, lambda: put_preferences(api, "updates"))
    rt = make_runtime(settings, db, clock, "worker-a")

    run_pass(rt)
    run_pass(rt)

    assert slack.delivery_ids() == [message_delivery_id(first, T0 - timedelta(minutes=2))]
    assert outcome(db, second, 1) == ("skipped", "opted_out")


def test_an_opt_in_answered_mid_pass_lets_the_persons_next_occurrence_go(api, settings, db, slack):
    """The person opted out of `updates`; a must-read reminder posts first in their lane, and
    the opt-in answered before the update's turn fails its skip (decided on the opt-out it
    read): the next pass sends it."""
    seed_category(db, "security", opt_out_allowed=False)
    seed_category(db, "updates")
    opt_out(db, PERSON, "updates")
    to_person(db, "security", **due(2))
    update = to_person(db, "updates", **due(1))
    clock = ClockThatActs(T0, lambda: put_preferences(api))
    rt = make_runtime(settings, db, clock, "worker-a")

    run_pass(rt)
    run_pass(rt)

    assert outcome(db, update, 1) == ("sent", None)
    assert message_delivery_id(update, T0 - timedelta(minutes=1)) in slack.delivery_ids()


@pytest.mark.parametrize(
    ("category", "gate"), [({"quiet_window_hours": 4}, "quiet_sends"), ({"daily_cap": 1}, "caps")]
)
def test_a_hold_given_back_is_seen_by_the_rest_of_the_pass(rt, db, slack, category, gate):
    """The person's first DM fails definitively (nothing reached Slack): its hold is given
    back, and their next DM, in the same pass, is sent rather than held back by it."""
    seed_category(db, "nudges", **category)
    first, second = to_person(db, "nudges", **due(2)), to_person(db, "nudges", **due(1))
    slack.inject(Fault(kind="error", code="msg_too_long", times=1))

    summary = run_pass(rt)

    assert outcome(db, first, 2)[0] == "failed"
    assert outcome(db, second, 1) == ("sent", None)
    assert slack.delivery_ids() == [message_delivery_id(second, T0 - timedelta(minutes=1))]
    assert summary["sent"] == 1 and summary["skipped"] == 0 and summary["duplicates"] == 0
    # The person's document holds the second send's hold, and nothing of the first.
    sent = message_delivery_id(second, T0 - timedelta(minutes=1))
    held = person_doc(db)[gate]
    if gate == "caps":
        held = held["nudges"][T0.date().isoformat()]
    assert list(held) == [sent]


def _race(settings, db, clock, name, category, start, write):
    """Every interleaving of one worker delivering a message of `category` to a person
    (`deliver_one`, paused before its commit: the SYNCPOINT `name`) and `write` changing the
    person's opt-outs, a person of its own per interleaving, who starts as `start` left
    them; then a pass plans again what lost. The (user, message id) of each interleaving."""
    arrivals = itertools.count()
    rounds: list[tuple[str, str]] = []

    def person() -> str:
        if next(arrivals) % 2 == 0:  # the first to arrive seeds this interleaving's person
            user = f"U0VER{len(rounds)}"
            start(user)
            rounds.append((user, to_person(db, category, user)))
        return rounds[-1][0]

    def deliver():
        person()
        snap = db.collection(MESSAGES).document(rounds[-1][1]).get()
        deliver_one(make_runtime(settings, db, clock, "worker-a"), MESSAGE_KIND, snap)

    def change():
        write(person())

    counts = orchestrate(deliver, change, name=name)
    # The write before the gates' read, between the read and the commit, and after it.
    assert counts == (2, 1) and len(rounds) == 3
    run_pass(make_runtime(settings, db, clock, "worker-b"))
    return rounds


def _landed_before(db, user, mid):
    """Whether the occurrence's decision (its ledger entry's creation) landed before the
    person's last opt-out write (their document's update time; the gates' own writes
    leave it unchanged or precede it)."""
    entry = db.collection("deliveries").document(message_delivery_id(mid, T0)).get()
    return entry.create_time < db.collection(PEOPLE).document(user).get().update_time


def test_an_opt_out_racing_a_claim_that_reserves_nothing(settings, db, clock, slack):
    """In every interleaving, a send is posted only if its claim landed before the opt-out;
    otherwise it ends skipped `opted_out` (at once, or on the next pass)."""
    seed_category(db, "updates")
    rounds = _race(
        settings,
        db,
        clock,
        "claim",
        "updates",
        lambda user: opt_out(db, user),
        lambda user: opt_out(db, user, "updates"),
    )

    posted = slack.delivery_ids()
    for user, mid in rounds:
        status, reason = outcome(db, mid, 0)
        if message_delivery_id(mid, T0) in posted:
            assert status == "sent" and _landed_before(db, user, mid), user
        else:
            assert (status, reason) == ("skipped", "opted_out"), user
    assert {outcome(db, mid, 0)[0] for _, mid in rounds} == {"sent", "skipped"}


def test_an_opt_in_racing_a_skip(settings, db, clock, slack):
    """In every interleaving, an occurrence ends skipped `opted_out` only if its skip landed
    before the opt-in; otherwise it is sent (at once, or on the next pass)."""
    seed_category(db, "updates")
    rounds = _race(
        settings,
        db,
        clock,
        "gated",
        "updates",
        lambda user: opt_out(db, user, "updates"),
        lambda user: opt_out(db, user),
    )

    posted = slack.delivery_ids()
    for user, mid in rounds:
        status, reason = outcome(db, mid, 0)
        if reason == "opted_out":
            assert status == "skipped" and _landed_before(db, user, mid), user
            assert message_delivery_id(mid, T0) not in posted
        else:
            assert status == "sent" and message_delivery_id(mid, T0) in posted, user
    assert {outcome(db, mid, 0)[0] for _, mid in rounds} == {"sent", "skipped"}
