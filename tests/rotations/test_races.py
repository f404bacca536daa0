"""Rotation races that are a day's own: a late worker's rollback against the reconciler that
settled its day, and an edit racing a day's claim through every interleaving of the
`# pragma: SYNCPOINT` lines (test_utils.orchestrate). One post per day, whatever the order.
(Claim against claim and late finalize against reconciliation, for every kind:
tests/contract/test_races.py.)"""

from __future__ import annotations

import itertools
from dataclasses import replace
from datetime import date, timedelta
from math import comb
from typing import Any

from core.models import rotation_delivery_id
from core.slack import Outcome
from core.store import ROTATIONS
from processor.abc import Claim
from processor.claim import claim_occurrence
from processor.deliver import send
from processor.finalize import finalize
from processor.outcome import Result
from processor.reconcile import reconcile_kind
from processor.tick import run_tick
from rotations.kind import ROTATION_DAY_KIND
from rotations.render import render_turn
from tests.fixtures.api import call
from tests.fixtures.deliveries import ledger
from tests.fixtures.rotations import ALICE, rotation, seed_rotation
from tests.fixtures.runtime import make_runtime
from tests.support.interleave import orchestrate

MONDAY = date(2027, 1, 4)


class Rounds:
    """The first worker to start a round seeds a fresh rotation; the second races for it."""

    def __init__(self, db: Any, text: str = "Today's stand-up host: {member}") -> None:
        self.db = db
        self.text = text
        self.arrivals = itertools.count()
        self.rotations: list[str] = []

    def rotation_for_this_round(self) -> str:
        if next(self.arrivals) % 2 == 0:
            rid = f"r{len(self.rotations)}"
            self.rotations.append(seed_rotation(self.db, rid, text=self.text))
        return self.rotations[-1]


def test_a_late_worker_cannot_overwrite_a_day_the_reconciler_settled(settings, db, slack, clock):
    late = make_runtime(settings, db, clock, "worker-late")
    rid = seed_rotation(db)
    claim = claim_occurrence(late, ROTATION_DAY_KIND, db.collection(ROTATIONS).document(rid).get())
    assert isinstance(claim, Claim)
    post = send(late, claim)
    clock.advance(timedelta(seconds=settings.lease_seconds + 1))
    reconcile_kind(make_runtime(settings, db, clock, "worker-reconciler"), ROTATION_DAY_KIND)
    settled = rotation(db, rid)

    # The late worker wakes up believing its post failed: rolling back now would re-open
    # a day that Slack has, and post it twice.
    result = finalize(late, claim, replace(post, outcome=Outcome.FAILED, code="x"))

    assert result is Result.FENCED
    assert rotation(db, rid) == settled
    assert ledger(db)[rotation_delivery_id(rid, MONDAY)]["status"] == "sent"
    assert len(slack.posts()) == 1


OLD, NEW = "Stand-up host today: {member}", "Stand-up moved to 10:00, host: {member}"


def test_an_edit_racing_a_day_claim_lands_first_or_is_409_in_every_interleaving(
    api_app, api, settings, db, slack, clock
):
    """An edit either lands before the claim (the post carries it), or meets the claimed
    day and answers 409, or comes after the day was settled; never a 200 whose text was
    posted by nobody, never a second post."""
    rounds = Rounds(db, OLD)
    edits: dict[str, tuple[int, Any]] = {}
    rt = make_runtime(settings, db, clock, "worker-a")

    def edit() -> None:
        rid = rounds.rotation_for_this_round()
        edits[rid] = call(api_app.test_client(), "PUT", f"/rotations/{rid}", {"text": NEW})

    def claim_and_post() -> None:
        snap = db.collection(ROTATIONS).document(rounds.rotation_for_this_round()).get()
        claim = claim_occurrence(rt, ROTATION_DAY_KIND, snap)  # pragma: SYNCPOINT edit
        if isinstance(claim, Claim):
            post = send(rt, claim)  # pragma: SYNCPOINT edit
            finalize(rt, claim, post)

    counts = orchestrate(edit, claim_and_post, name="edit")

    assert min(counts) >= 2
    assert len(rounds.rotations) == comb(sum(counts), counts[0])
    run_tick(rt, ROTATION_DAY_KIND)  # a claim that lost to the edit goes out now
    seen: set[tuple[int, str]] = set()
    for rid in rounds.rotations:
        [post] = [p for p in slack.posts() if p.delivery_id == rotation_delivery_id(rid, MONDAY)]
        posted = OLD if post.text == render_turn(OLD, ALICE).text else NEW
        assert post.text == render_turn(posted, ALICE).text
        status, answer = edits[rid]
        assert status in (200, 409), status
        assert rotation(db, rid)["text"] == (NEW if status == 200 else OLD)
        if status == 409:
            assert posted == OLD
        elif posted == OLD:  # a 200 whose text was not posted: it came after the settle
            assert answer.get("last_slack_ts") == post.ts and "lease" not in answer
        seen.add((status, posted))
    assert len(slack.posts()) == len(rounds.rotations)
    # Both sides of the race happened: an edit that landed first, and one that met the claim.
    assert (200, NEW) in seen and (409, OLD) in seen
