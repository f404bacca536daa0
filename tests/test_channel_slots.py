"""Pacing across workers: a channel's slot (`channel_pacing/{channel}`) is taken in the claim's
own batch, so two workers never post to one channel within a second, and a worker leaves a
channel another worker is posting to right now to that worker."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

from core.models import message_delivery_id
from core.store import CHANNEL_PACING, MESSAGES
from processor.channel_slots import ChannelSlots
from processor.claim import Claim, claim_message
from processor.outcome import Result
from processor.tick import run_tick
from tests.conftest import T0, ledger, make_runtime, message, seed_message

CHANNEL = "C0PACED01"


def test_a_channel_another_worker_is_posting_to_is_left_to_it(settings, db, slack, clock):
    first = make_runtime(settings, db, clock, "worker-a")
    second = make_runtime(settings, db, clock, "worker-b")
    m1 = seed_message(db, channel=CHANNEL)
    assert run_tick(first)["sent"] == 1
    m2 = seed_message(db, channel=CHANNEL)
    other = seed_message(db, channel="C0OTHER01")

    at_once = run_tick(second)
    clock.advance(timedelta(seconds=2))
    still_held = run_tick(second)  # within the slot's hold: worker-a would claim it now
    clock.advance(timedelta(seconds=2))
    taken_over = run_tick(second)  # worker-a has gone quiet in the channel

    assert (at_once["sent"], still_held["sent"], taken_over["sent"]) == (1, 0, 1)
    assert message(db, other)["status"] == "sent"  # the other channel went out at once
    posts = [p for p in slack.posts() if p.channel == CHANNEL]
    assert [p.delivery_id for p in posts] == [
        message_delivery_id(m1, T0),
        message_delivery_id(m2, T0),
    ]
    assert Decimal(posts[1].ts) - Decimal(posts[0].ts) >= 1
    slot = db.collection(CHANNEL_PACING).document(CHANNEL).get().to_dict() or {}
    assert slot["worker"] == "worker-b"


def test_a_claim_behind_another_workers_slot_fails_whole(settings, db, slack, clock):
    first = make_runtime(settings, db, clock, "worker-a")
    second = make_runtime(settings, db, clock, "worker-b")
    m1 = seed_message(db, channel=CHANNEL)
    m2 = seed_message(db, channel=CHANNEL)
    # Both workers read the (absent) slot, then both claim a message in the channel.
    seen_by_first, seen_by_second = ChannelSlots(first), ChannelSlots(second)
    seen_by_first.read([CHANNEL])
    seen_by_second.read([CHANNEL])

    won = claim_message(
        first, db.collection(MESSAGES).document(m1).get(), seen_by_first.get(CHANNEL)
    )
    lost = claim_message(
        second, db.collection(MESSAGES).document(m2).get(), seen_by_second.get(CHANNEL)
    )
    assert isinstance(won, Claim) and won.slot_version is not None
    assert lost is Result.DUPLICATE
    assert message(db, m2)["status"] == "pending"  # nothing of the losing claim landed
    assert message_delivery_id(m2, T0) not in ledger(db)

    # Later, a claim conditioned on a slot version that has moved on fails the same way.
    seen_by_second.read([CHANNEL])  # sees worker-a's slot
    clock.advance(timedelta(seconds=5))
    seen_by_first.read([CHANNEL])
    again = claim_message(
        first, db.collection(MESSAGES).document(m2).get(), seen_by_first.get(CHANNEL)
    )
    assert isinstance(again, Claim)  # worker-a posts in the channel again: the slot moves on
    m3 = seed_message(db, channel=CHANNEL, next_run_at=clock.now())
    behind = claim_message(
        second, db.collection(MESSAGES).document(m3).get(), seen_by_second.get(CHANNEL)
    )
    assert behind is Result.DUPLICATE
    assert message(db, m3)["status"] == "pending"
