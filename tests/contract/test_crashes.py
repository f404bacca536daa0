"""Crash points: a worker process SIGKILLed after its claim, after the platform (Slack, Teams)
recorded its post (its outcome never written), and in the middle of finalize; the next
passes, past its lease and past a release's backoff, leave the occurrence delivered exactly
once (the conversation's history is readable here, so none may end unconfirmed)."""

from __future__ import annotations

from collections import Counter
from datetime import timedelta

import pytest

from processor.reconcile import backoff
from tests.contract.subjects import one_pass
from tests.fixtures.crash import kill_worker_at
from tests.fixtures.deliveries import ledger

POINTS = ("after_claim", "after_post", "mid_finalize")


def crash_trials(rt, world, subject, env, firestore_host, point, trials):
    seeded = []
    for n in range(trials):
        # A channel of its own: a worker leaves a channel another worker has just posted to
        # alone (processor.channel_slots).
        one = subject.seed(world, f"C{n:04d}CRASH", {})
        kill_worker_at(point, world.clock.now(), env, firestore_host, subject.kind_ref)
        world.clock.advance(timedelta(seconds=301))  # past the dead worker's lease
        one_pass(rt, subject)
        world.clock.advance(backoff(2))  # past a release's backoff (an event's is its 2nd)
        one_pass(rt, subject)
        seeded.append(one)
    posted = Counter(world.chat.delivery_ids())
    for one in seeded:
        assert posted[one.delivery_id] == 1, (point, one)
        assert ledger(world.db)[one.delivery_id]["status"] == "sent", (point, one)
        assert subject.delivered(subject.stored(world, one), one), (point, one)
    assert sum(posted.values()) == trials


@pytest.mark.parametrize("point", POINTS)
def test_a_killed_worker_loses_and_repeats_nothing(rt, world, subject, env, firestore_host, point):
    crash_trials(rt, world, subject, env, firestore_host, point, trials=1)


@pytest.mark.slow
@pytest.mark.parametrize("point", POINTS)
def test_seven_kills_per_crash_point_lose_and_repeat_nothing(
    rt, world, subject, env, firestore_host, point
):
    crash_trials(rt, world, subject, env, firestore_host, point, trials=7)
