"""A rotation's own race: a late worker's rollback against the reconciler that settled its
day is fenced, and the day is posted once. (Claim against claim, late finalize against
reconciliation and an edit racing a claim, in every interleaving and for every kind:
tests/contract/test_races.py, test_edit_races.py.)"""

from __future__ import annotations

from dataclasses import replace
from datetime import date, timedelta

from core.models import rotation_delivery_id
from core.platform import Outcome
from core.store import ROTATIONS
from processor.abc import Claim
from processor.claim import claim_occurrence
from processor.deliver import send
from processor.finalize import finalize
from processor.outcome import Result
from processor.reconcile import reconcile_kind
from rotations.kind import ROTATION_DAY_KIND
from tests.fixtures.deliveries import ledger
from tests.fixtures.rotations import rotation, seed_rotation
from tests.fixtures.runtime import make_runtime

MONDAY = date(2027, 1, 4)


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
