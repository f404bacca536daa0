"""Rotation races through every interleaving of the `# pragma: SYNCPOINT` lines
(test_utils.orchestrate): two processors claiming one day, and a late worker finishing while
a reconciler takes its expired lease over. One post per day, whatever the order."""

from __future__ import annotations

import itertools
from dataclasses import replace
from datetime import date, timedelta
from math import comb
from typing import Any

from core.models import rotation_delivery_id
from core.slack import Outcome
from core.store import ROTATIONS
from processor.outcome import Result
from rotations.claim import DayClaim, claim_day
from rotations.deliver import deliver_day, post_turn
from rotations.finalize import finalize_day
from rotations.reconcile import reconcile_rotations
from tests.conftest import T0, ledger, make_runtime
from tests.interleave import orchestrate
from tests.test_rotation_processor import ALICE, BOB, rotation, seed_rotation

MONDAY = date(2027, 1, 4)


class Rounds:
    """The first worker to start a round seeds a fresh rotation; the second races for it."""

    def __init__(self, db: Any) -> None:
        self.db = db
        self.arrivals = itertools.count()
        self.rotations: list[str] = []

    def rotation_for_this_round(self) -> str:
        if next(self.arrivals) % 2 == 0:
            self.rotations.append(seed_rotation(self.db, f"r{len(self.rotations)}"))
        return self.rotations[-1]


def test_two_processors_claiming_one_day_post_it_once_in_every_interleaving(
    settings, db, slack, clock
):
    rounds = Rounds(db)

    def processor(name: str) -> Any:
        rt = make_runtime(settings, db, clock, name)

        def run() -> None:
            snap = db.collection(ROTATIONS).document(rounds.rotation_for_this_round()).get()
            deliver_day(rt, snap)  # pragma: SYNCPOINT claim

        return run

    counts = orchestrate(processor("worker-a"), processor("worker-b"), name="claim")

    assert min(counts) >= 2
    assert len(rounds.rotations) == comb(sum(counts), counts[0])
    for rid in rounds.rotations:
        assert slack.delivery_ids().count(rotation_delivery_id(rid, MONDAY)) == 1
        doc = rotation(db, rid)
        assert (doc["cursor"], doc["last_member"]) == (1, ALICE)  # advanced once, not twice
        assert ledger(db)[rotation_delivery_id(rid, MONDAY)]["status"] == "sent"
    assert len(slack.posts()) == len(rounds.rotations)


def test_a_late_finalize_racing_day_reconciliation_settles_once_in_every_interleaving(
    settings, db, slack, clock
):
    late = make_runtime(settings, db, clock, "worker-late")
    reconciler = make_runtime(settings, db, clock, "worker-reconciler")
    state: dict[str, Any] = {}
    arrivals = itertools.count()
    settled: list[str] = []

    def setup_round() -> None:
        clock.set(T0)
        rid = seed_rotation(db, f"late{len(settled)}")
        claim = claim_day(late, db.collection(ROTATIONS).document(rid).get())
        assert isinstance(claim, DayClaim)
        state["claim"] = claim
        state["post"] = post_turn(late, claim)  # Slack has it; the worker then stalls
        clock.advance(timedelta(seconds=settings.lease_seconds + 1))
        settled.append(rid)

    def late_worker() -> None:
        if next(arrivals) % 2 == 0:
            setup_round()
        finalize_day(late, state["claim"], state["post"])

    def reconcile() -> None:
        if next(arrivals) % 2 == 0:
            setup_round()
        reconcile_rotations(reconciler)

    counts = orchestrate(late_worker, reconcile, name="lease")

    assert counts[0] >= 2
    assert len(settled) == comb(sum(counts), counts[0]) >= 3
    for rid in settled:
        assert slack.delivery_ids().count(rotation_delivery_id(rid, MONDAY)) == 1
        doc = rotation(db, rid)
        assert "lease" not in doc and doc["last_slack_ts"] is not None
        assert (doc["cursor"], doc["members"][doc["cursor"]]) == (1, BOB)
        assert ledger(db)[rotation_delivery_id(rid, MONDAY)]["status"] == "sent"


def test_a_late_worker_cannot_overwrite_a_day_the_reconciler_settled(settings, db, slack, clock):
    late = make_runtime(settings, db, clock, "worker-late")
    rid = seed_rotation(db)
    claim = claim_day(late, db.collection(ROTATIONS).document(rid).get())
    assert isinstance(claim, DayClaim)
    post = post_turn(late, claim)
    clock.advance(timedelta(seconds=settings.lease_seconds + 1))
    reconcile_rotations(make_runtime(settings, db, clock, "worker-reconciler"))
    settled = rotation(db, rid)

    # The late worker wakes up believing its post failed: rolling back now would re-open
    # a day that Slack has, and post it twice.
    result = finalize_day(late, claim, replace(post, outcome=Outcome.FAILED, code="x"))

    assert result is Result.FENCED
    assert rotation(db, rid) == settled
    assert ledger(db)[rotation_delivery_id(rid, MONDAY)]["status"] == "sent"
    assert len(slack.posts()) == 1
