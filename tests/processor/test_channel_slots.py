"""Pacing across workers: a channel's slot for the minute (`channel_pacing/{channel}:{minute}`)
is taken in the claim's own batch, so two workers never post to one channel within a
second; a worker leaves a channel another worker is posting to right now to that worker; and
a pass that sees no other worker reads no slots at all."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import timedelta
from decimal import Decimal

from bench.rpc import CountedClient, RpcCounter
from core.models import message_delivery_id, rotation_delivery_id
from core.store import CHANNEL_PACING, MESSAGES
from messages.kind import MESSAGE_KIND
from processor.abc import Claim
from processor.channel_slots import HANDOVER, KEEP, ChannelSlots, slot_id
from processor.claim import claim_occurrence
from processor.deliver_page import LOSING_STREAK
from processor.kind_pass import run_kind
from processor.outcome import Result
from processor.pacing import POST_INTERVAL
from targets.kinds import run_pass
from tests.fixtures.clock import T0
from tests.fixtures.deliveries import ledger
from tests.fixtures.messages import message, seed_message
from tests.fixtures.pacing import post_holding
from tests.fixtures.rotations import seed_rotation
from tests.fixtures.runtime import ROOT, make_runtime

CHANNEL = "C0PACED01"


def _slot(db, channel, at):
    return db.collection(CHANNEL_PACING).document(slot_id(channel, at)).get()


def test_an_overlapping_pass_keeps_a_channels_pace_behind_another_workers_post(
    settings, db, slack, clock
):
    first = make_runtime(settings, db, clock, "worker-a")
    second = make_runtime(settings, db, clock, "worker-b")
    m1 = seed_message(db, channel=CHANNEL)
    m2 = seed_message(db, channel=CHANNEL)
    post_holding(first, m1, CHANNEL)  # worker-a's pass posts m1, and is still going
    other = seed_message(db, channel="C0OTHER01")

    # worker-b knows nothing of the channel: its claim of m2 meets worker-a's slot and fails
    # whole; it reads the slot and claims m2 again at the slot's time.
    summary = run_kind(second, MESSAGE_KIND)

    assert (summary["sent"], summary["errors"]) == (2, 0)
    assert message(db, other)["status"] == "sent"  # the other channel went out at once
    posts = [p for p in slack.posts() if p.channel == CHANNEL]
    assert [p.delivery_id for p in posts] == [
        message_delivery_id(m1, T0),
        message_delivery_id(m2, T0),
    ]
    assert Decimal(posts[1].ts) - Decimal(posts[0].ts) >= 1
    assert (_slot(db, CHANNEL, clock.now()).to_dict() or {})["worker"] == "worker-b"


def test_a_claim_behind_another_workers_slot_fails_whole(settings, db, slack, clock):
    first = make_runtime(settings, db, clock, "worker-a")
    second = make_runtime(settings, db, clock, "worker-b")
    m1 = seed_message(db, channel=CHANNEL)
    m2 = seed_message(db, channel=CHANNEL)
    # Neither worker knows of a post to the channel this minute: both claim as its first.
    seen_by_first, seen_by_second = ChannelSlots(first), ChannelSlots(second)
    first_slots = seen_by_first.for_claim(CHANNEL, clock.now())
    won = claim_occurrence(
        first, MESSAGE_KIND, db.collection(MESSAGES).document(m1).get(), first_slots
    )
    lost = claim_occurrence(
        second,
        MESSAGE_KIND,
        db.collection(MESSAGES).document(m2).get(),
        seen_by_second.for_claim(CHANNEL, clock.now()),
    )
    assert isinstance(won, Claim) and len(won.slot_versions) == 1
    assert lost is Result.DUPLICATE
    assert message(db, m2)["status"] == "pending"  # nothing of the losing claim landed
    assert message_delivery_id(m2, T0) not in ledger(db)

    # Later, a claim conditioned on a slot version that has moved on fails the same way.
    seen_by_first.claimed(first_slots, won.slot_versions, clock.now())
    m2_as_read = db.collection(MESSAGES).document(m2).get()
    second_slots = seen_by_second.for_claim(CHANNEL, clock.now())
    # Only the slot was lost (m2 is as read): the claim may be tried again at the slot's time.
    assert seen_by_second.lost(second_slots, clock.now(), m2_as_read)
    clock.advance(timedelta(seconds=5))
    again = claim_occurrence(
        first,
        MESSAGE_KIND,
        db.collection(MESSAGES).document(m2).get(),
        seen_by_first.for_claim(CHANNEL, clock.now()),
    )
    assert isinstance(again, Claim)  # worker-a posts in the channel again: the slot moves on
    m3 = seed_message(db, channel=CHANNEL, next_run_at=clock.now())
    behind = claim_occurrence(
        second,
        MESSAGE_KIND,
        db.collection(MESSAGES).document(m3).get(),
        seen_by_second.for_claim(CHANNEL, clock.now()),
    )
    assert behind is Result.DUPLICATE
    assert message(db, m3)["status"] == "pending"


def test_a_claim_late_in_a_minute_holds_the_channel_into_the_next(settings, db, slack, clock):
    first = make_runtime(settings, db, clock, "worker-a")
    second = make_runtime(settings, db, clock, "worker-b")
    clock.advance(timedelta(seconds=59, milliseconds=500))  # 09:00:59.5
    m1 = seed_message(db, channel=CHANNEL, next_run_at=clock.now())
    assert run_kind(first, MESSAGE_KIND)["sent"] == 1
    assert _slot(db, CHANNEL, clock.now()).exists
    assert _slot(db, CHANNEL, clock.now() + timedelta(seconds=1)).exists  # 09:01's slot too

    clock.advance(timedelta(milliseconds=700))  # 09:01:00.2: a new minute, 0.7 s later
    m2 = seed_message(db, channel=CHANNEL, next_run_at=clock.now())
    # worker-b's create() of 09:01's slot meets worker-a's; it reads it and keeps the pace.
    assert run_kind(second, MESSAGE_KIND)["sent"] == 1

    posts = [p for p in slack.posts() if p.channel == CHANNEL]
    assert [p.delivery_id for p in posts] == [
        message_delivery_id(m1, T0 + timedelta(seconds=59, milliseconds=500)),
        message_delivery_id(m2, T0 + timedelta(seconds=60, milliseconds=200)),
    ]
    assert Decimal(posts[1].ts) - Decimal(posts[0].ts) >= 1


def test_a_pass_that_meets_no_other_worker_reads_no_slots(settings, db, slack, clock):
    counter = RpcCounter()
    rt = replace(
        make_runtime(settings, db, clock, "worker-a"), db=CountedClient(db.project, counter)
    )
    channels = ("C0PACED01", "C0PACED02", "C0PACED03")
    for channel in channels:
        seed_message(db, channel=channel)
    first = run_kind(rt, MESSAGE_KIND)  # each channel's first post this minute: its slot is created
    for channel in channels:
        seed_message(db, channel=channel)
    clock.advance(timedelta(seconds=1))
    second = run_kind(
        rt, MESSAGE_KIND
    )  # a warm worker's next pass: conditioned on the slots it wrote

    assert (first["sent"], second["sent"], second["duplicates"]) == (3, 3, 0)
    assert "BatchGetDocuments" not in counter.snapshot()["calls"]
    assert all((_slot(db, c, T0).to_dict() or {})["worker"] == "worker-a" for c in channels)


def test_slots_expire_a_day_after_they_were_written(settings, db, slack, clock):
    seed_message(db, channel=CHANNEL)
    assert run_kind(make_runtime(settings, db, clock, "worker-a"), MESSAGE_KIND)["sent"] == 1

    slot = _slot(db, CHANNEL, T0).to_dict() or {}
    assert slot["expires_at"] == T0 + KEEP
    overrides = json.loads((ROOT / "firestore.indexes.json").read_text())["fieldOverrides"]
    assert {"collectionGroup": "channel_pacing", "fieldPath": "expires_at", "ttl": True} in [
        {k: o[k] for k in ("collectionGroup", "fieldPath", "ttl")} for o in overrides
    ]


def test_a_fresh_worker_meeting_a_slot_of_this_minute_still_posts_in_its_pass(
    settings, db, slack, clock
):
    m1 = seed_message(db, channel=CHANNEL)
    assert run_kind(make_runtime(settings, db, clock, "worker-a"), MESSAGE_KIND)["sent"] == 1
    clock.advance(timedelta(seconds=5))  # worker-a is gone; its slot of 09:00 stays
    m2 = seed_message(db, channel=CHANNEL, next_run_at=clock.now())

    # The fresh worker's first claim in the channel is a create(), which meets worker-a's
    # slot and fails whole; the pass reads the slot and claims again, conditioned on it.
    summary = run_kind(make_runtime(settings, db, clock, "worker-b"), MESSAGE_KIND)

    assert (summary["sent"], summary["errors"]) == (1, 0)
    assert [p.delivery_id for p in slack.posts() if p.channel == CHANNEL] == [
        message_delivery_id(m1, T0),
        message_delivery_id(m2, T0 + timedelta(seconds=5)),
    ]


def test_a_worker_that_posted_its_last_message_in_a_channel_does_not_hold_it(
    settings, db, slack, clock
):
    m1 = seed_message(db, channel=CHANNEL)
    assert run_kind(make_runtime(settings, db, clock, "worker-a"), MESSAGE_KIND)["sent"] == 1
    m2 = seed_message(db, channel=CHANNEL)

    # worker-a's pass is over; worker-b keeps only the pace, not away: a second after m1's
    # claim, and the handover margin for the other worker's claim commit.
    summary = run_kind(make_runtime(settings, db, clock, "worker-b"), MESSAGE_KIND)

    assert summary["sent"] == 1
    posts = [p for p in slack.posts() if p.channel == CHANNEL]
    assert [p.delivery_id for p in posts] == [
        message_delivery_id(m1, T0),
        message_delivery_id(m2, T0),
    ]
    gap = Decimal(posts[1].ts) - Decimal(posts[0].ts)
    assert gap == Decimal(str((POST_INTERVAL + HANDOVER).total_seconds()))


def test_a_rotation_and_a_message_due_together_in_a_channel_go_out_a_second_apart(
    settings, db, slack, clock
):
    seed_rotation(db, channel=CHANNEL)
    seed_message(db, channel=CHANNEL)

    summary = run_pass(make_runtime(settings, db, clock, "worker-a"))

    assert (summary["sent"], summary["rotations"]["sent"]) == (2, 1)
    first, second = (Decimal(p.ts) for p in slack.posts() if p.channel == CHANNEL)
    assert second - first >= 1


def test_a_rotation_meeting_another_workers_slot_posts_at_the_slots_time(
    settings, db, slack, clock
):
    seed_message(db, channel=CHANNEL)
    assert run_kind(make_runtime(settings, db, clock, "worker-a"), MESSAGE_KIND)["sent"] == 1
    seed_rotation(db, channel=CHANNEL)

    # worker-b's claim of the day create()s this minute's slot, meets worker-a's, reads it
    # and claims again once the channel's second has passed.
    summary = run_pass(make_runtime(settings, db, clock, "worker-b"))

    assert (summary["rotations"]["sent"], summary["rotations"]["errors"]) == (1, 0)
    posts = [p for p in slack.posts() if p.channel == CHANNEL]
    assert [p.delivery_id for p in posts][1] == rotation_delivery_id("standup", T0.date())
    assert len(posts) == 2
    assert Decimal(posts[1].ts) - Decimal(posts[0].ts) >= 1


def test_a_pass_whose_claims_lose_only_channel_slots_still_posts_every_one(
    settings, db, slack, clock
):
    # More channels than LOSING_STREAK, each with a slot of this minute from worker-a: every
    # first claim of worker-b's pass loses only the slot, which says nothing about another
    # pass being ahead over the page, so each is claimed again at its slot's time.
    channels = [f"C0SLOT{i:03d}" for i in range(LOSING_STREAK + 2)]
    for channel in channels:
        seed_message(db, channel=channel)
    first = run_kind(make_runtime(settings, db, clock, "worker-a"), MESSAGE_KIND)
    assert first["sent"] == len(channels)
    clock.advance(timedelta(seconds=5))
    for channel in channels:
        seed_message(db, channel=channel, next_run_at=clock.now())

    summary = run_kind(make_runtime(settings, db, clock, "worker-b"), MESSAGE_KIND)

    assert (summary["sent"], summary["deferred"], summary["errors"]) == (len(channels), 0, 0)
    assert len(slack.posts()) == 2 * len(channels)
