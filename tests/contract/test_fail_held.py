"""`fail-held`, the operator's way out of a lease reconciliation holds for a person (here the
document no longer parses): the subject ends failed (a rotation gives its day up), its
`claimed` ledger entry `failed`, who and why recorded, and nothing is posted, then or later.
A lease a worker is sending under is refused."""

from __future__ import annotations

from datetime import timedelta

import pytest

from processor.abc import Claim
from processor.claim import claim_occurrence
from processor.fail_held import FailHeldRefused, fail_held
from tests.contract.subjects import CHANNEL, one_pass
from tests.fixtures.deliveries import ledger

REASON, BY = "checked the channel by hand", "ana"


def test_fail_held_ends_a_held_lease_and_refuses_a_live_one(rt, world, subject):
    seeded = subject.seed(world, CHANNEL, {})
    ref = world.db.collection(subject.kind.collection).document(seeded.id)
    assert isinstance(claim_occurrence(rt, subject.kind, ref.get()), Claim)
    with pytest.raises(FailHeldRefused, match="live lease"):
        fail_held(rt, [subject.kind], seeded.path, REASON, BY)
    # The worker died; the document was then edited into one the processor rejects.
    unparseable, code = world.chat.unparseable()
    ref.update(unparseable)
    world.clock.advance(timedelta(seconds=301))
    one_pass(rt, subject)
    assert ref.get().get("lease")["held_code"] == code

    fail_held(rt, [subject.kind], seeded.path, REASON, BY)

    assert subject.failed_by_hand(subject.stored(world, seeded), seeded)
    entry = ledger(world.db)[seeded.delivery_id]
    assert (entry["status"], entry["error"]["code"]) == ("failed", "operator_failed")
    assert (entry["operator"]["reason"], entry["operator"]["by"]) == (REASON, BY)
    ref.update(world.chat.where(CHANNEL))  # put right: still never sent again
    world.clock.advance(timedelta(hours=1))
    one_pass(rt, subject)
    assert seeded.delivery_id not in world.chat.delivery_ids()
    with pytest.raises(FailHeldRefused, match="holds no lease"):
        fail_held(rt, [subject.kind], seeded.path, REASON, BY)
