"""Settled by the operator: an occurrence held `unconfirmed` (its post's answer lost, the
conversation's history unreadable) is marked delivered with the post id a person saw, and
never posted again; or released, and sent once by the next pass through the same ledger
entry. While a worker holds a live lease on it, both are refused."""

from __future__ import annotations

from datetime import timedelta

import pytest

from processor.abc import MARK_DELIVERED, RELEASE, Claim, Settle
from processor.claim import claim_occurrence
from processor.settle import SettleRefused, settle
from tests.contract.subjects import CHANNEL, one_pass
from tests.fixtures.deliveries import ledger

REASON, BY = "checked the channel by hand", "ana"


def unconfirmed(rt, world, subject, reached: bool):
    """A due occurrence whose send cannot be verified: held `unconfirmed` for a person."""
    seeded = subject.seed(world, CHANNEL, {})
    if reached:
        world.chat.lost_after_record()
    else:
        world.chat.server_error_before_record()
    world.chat.history_unreadable()
    one_pass(rt, subject)
    world.clock.advance(timedelta(seconds=301))
    one_pass(rt, subject)
    assert ledger(world.db)[seeded.delivery_id]["status"] == "unconfirmed"
    world.chat.clear_faults()
    return seeded


@pytest.mark.parametrize("action", [MARK_DELIVERED, RELEASE])
def test_the_operator_settles_an_unconfirmed_occurrence_once(rt, world, subject, action):
    seeded = unconfirmed(rt, world, subject, reached=action == MARK_DELIVERED)
    seen = world.chat.posts()[0].post_id if action == MARK_DELIVERED else None

    now = world.clock.now()
    settle(rt, [subject.kind], Settle(action, seeded.delivery_id, REASON, BY, now, seen))
    one_pass(rt, subject)

    [post] = [p for p in world.chat.posts() if p.delivery_id == seeded.delivery_id]
    entry = ledger(world.db)[seeded.delivery_id]
    assert (entry["status"], entry[world.chat.post_id_field]) == ("sent", post.post_id)
    operator = entry["operator"]
    assert (operator["action"], operator["reason"], operator["by"]) == (action, REASON, BY)
    assert subject.delivered(subject.stored(world, seeded), seeded)
    world.clock.advance(timedelta(days=1))
    one_pass(rt, subject)
    assert world.chat.delivery_ids().count(seeded.delivery_id) == 1


def test_the_operator_cannot_settle_an_occurrence_under_a_live_lease(rt, world, subject):
    seeded = subject.seed(world, CHANNEL, {})
    snap = world.db.collection(subject.kind.collection).document(seeded.id).get()
    assert isinstance(claim_occurrence(rt, subject.kind, snap), Claim)
    before = subject.stored(world, seeded), ledger(world.db)[seeded.delivery_id]

    now = world.clock.now()
    for action, ts in ((MARK_DELIVERED, "1799000000.000100"), (RELEASE, None)):
        with pytest.raises(SettleRefused, match="live lease"):
            settle(rt, [subject.kind], Settle(action, seeded.delivery_id, REASON, BY, now, ts))
    with pytest.raises(SettleRefused, match="reason"):
        settle(rt, [subject.kind], Settle(RELEASE, seeded.delivery_id, " ", BY, now))

    assert (subject.stored(world, seeded), ledger(world.db)[seeded.delivery_id]) == before
