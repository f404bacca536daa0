"""Pacing across workers: a channel's slot for the minute (`channel_pacing/{channel}:{minute}`)
is taken in the claim's own batch, so two workers never post to one channel within a
second; a worker leaves a channel another worker is posting to right now to that worker; and
a pass that sees no other worker reads no slots at all."""

from __future__ import annotations

import itertools
import json
import threading
from dataclasses import replace
from datetime import timedelta
from decimal import Decimal

import pytest

from bench.rpc import CountedClient, RpcCounter
from core.models import message_delivery_id, rotation_delivery_id
from core.store import CHANNEL_PACING, MESSAGES, ChannelRange
from core.store import due_messages as real_due
from messages import kind as message_kind
from messages.kind import MESSAGE_KIND
from processor import tick
from processor.abc import Claim
from processor.channel_slots import HANDOVER, KEEP, ChannelSlots, slot_id
from processor.claim import claim_occurrence
from processor.deliver import Sent, claim_and_send
from processor.deliver_page import CHECKS, PROBES
from processor.lanes import lanes
from processor.outcome import Result
from processor.pacing import POST_INTERVAL
from processor.tick import run_tick
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


def test_a_channel_another_worker_is_posting_to_is_left_to_it(settings, db, slack, clock):
    first = make_runtime(settings, db, clock, "worker-a")
    second = make_runtime(settings, db, clock, "worker-b")
    m1 = seed_message(db, channel=CHANNEL)
    m2 = seed_message(db, channel=CHANNEL)
    post_holding(first, m1, CHANNEL)  # worker-a posts m1 with m2 in hand
    other = seed_message(db, channel="C0OTHER01")

    # worker-b knows nothing of the channel: its claim of m2 meets worker-a's slot and fails
    # whole; from then on its pass reads the slots and leaves the channel to worker-a.
    at_once = run_tick(second, MESSAGE_KIND)
    clock.advance(timedelta(seconds=2))
    still_held = run_tick(
        second, MESSAGE_KIND
    )  # within the slot's hold: worker-a would claim it now
    clock.advance(timedelta(seconds=2))
    taken_over = run_tick(second, MESSAGE_KIND)  # worker-a has gone quiet in the channel

    assert (at_once["sent"], still_held["sent"], taken_over["sent"]) == (1, 0, 1)
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
    first_slots = seen_by_first.for_claim(CHANNEL, clock.now(), more=False)
    won = claim_occurrence(
        first, MESSAGE_KIND, db.collection(MESSAGES).document(m1).get(), first_slots
    )
    lost = claim_occurrence(
        second,
        MESSAGE_KIND,
        db.collection(MESSAGES).document(m2).get(),
        seen_by_second.for_claim(CHANNEL, clock.now(), more=False),
    )
    assert isinstance(won, Claim) and len(won.slot_versions) == 1
    assert lost is Result.DUPLICATE
    assert message(db, m2)["status"] == "pending"  # nothing of the losing claim landed
    assert message_delivery_id(m2, T0) not in ledger(db)

    # Later, a claim conditioned on a slot version that has moved on fails the same way.
    seen_by_first.claimed(first_slots, won.slot_versions, clock.now())
    seen_by_second.read([CHANNEL], clock.now())  # sees worker-a's slot
    clock.advance(timedelta(seconds=5))
    again = claim_occurrence(
        first,
        MESSAGE_KIND,
        db.collection(MESSAGES).document(m2).get(),
        seen_by_first.for_claim(CHANNEL, clock.now(), more=False),
    )
    assert isinstance(again, Claim)  # worker-a posts in the channel again: the slot moves on
    m3 = seed_message(db, channel=CHANNEL, next_run_at=clock.now())
    behind = claim_occurrence(
        second,
        MESSAGE_KIND,
        db.collection(MESSAGES).document(m3).get(),
        seen_by_second.for_claim(CHANNEL, clock.now(), more=False),
    )
    assert behind is Result.DUPLICATE
    assert message(db, m3)["status"] == "pending"


def test_a_claim_late_in_a_minute_holds_the_channel_into_the_next(settings, db, slack, clock):
    first = make_runtime(settings, db, clock, "worker-a")
    second = make_runtime(settings, db, clock, "worker-b")
    clock.advance(timedelta(seconds=59, milliseconds=500))  # 09:00:59.5
    m1 = seed_message(db, channel=CHANNEL, next_run_at=clock.now())
    assert run_tick(first, MESSAGE_KIND)["sent"] == 1
    assert _slot(db, CHANNEL, clock.now()).exists
    assert _slot(db, CHANNEL, clock.now() + timedelta(seconds=1)).exists  # 09:01's slot too

    clock.advance(timedelta(milliseconds=700))  # 09:01:00.2: a new minute, 0.7 s later
    m2 = seed_message(db, channel=CHANNEL, next_run_at=clock.now())
    # worker-b's create() of 09:01's slot meets worker-a's; it reads it and keeps the pace.
    assert run_tick(second, MESSAGE_KIND)["sent"] == 1

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
    first = run_tick(rt, MESSAGE_KIND)  # each channel's first post this minute: its slot is created
    for channel in channels:
        seed_message(db, channel=channel)
    clock.advance(timedelta(seconds=1))
    second = run_tick(
        rt, MESSAGE_KIND
    )  # a warm worker's next pass: conditioned on the slots it wrote

    assert (first["sent"], second["sent"], second["duplicates"]) == (3, 3, 0)
    assert "BatchGetDocuments" not in counter.snapshot()["calls"]
    assert all((_slot(db, c, T0).to_dict() or {})["worker"] == "worker-a" for c in channels)


def test_slots_expire_a_day_after_they_were_written(settings, db, slack, clock):
    seed_message(db, channel=CHANNEL)
    assert run_tick(make_runtime(settings, db, clock, "worker-a"), MESSAGE_KIND)["sent"] == 1

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
    assert run_tick(make_runtime(settings, db, clock, "worker-a"), MESSAGE_KIND)["sent"] == 1
    clock.advance(timedelta(seconds=5))  # worker-a is gone; its slot of 09:00 stays
    m2 = seed_message(db, channel=CHANNEL, next_run_at=clock.now())

    # The fresh worker's first claim in the channel is a create(), which meets worker-a's
    # slot and fails whole; the pass reads the slot and claims again, conditioned on it.
    summary = run_tick(make_runtime(settings, db, clock, "worker-b"), MESSAGE_KIND)

    assert (summary["sent"], summary["errors"]) == (1, 0)
    assert [p.delivery_id for p in slack.posts() if p.channel == CHANNEL] == [
        message_delivery_id(m1, T0),
        message_delivery_id(m2, T0 + timedelta(seconds=5)),
    ]


def test_a_rotation_due_in_a_channel_another_worker_is_posting_to_is_left_to_it(
    settings, db, slack, clock
):
    first = make_runtime(settings, db, clock, "worker-a")
    second = make_runtime(settings, db, clock, "worker-b")
    m1 = seed_message(db, channel=CHANNEL)
    m2 = seed_message(db, channel=CHANNEL)
    post_holding(first, m1, CHANNEL)  # worker-a posts m1 with m2 in hand
    seed_rotation(db, channel=CHANNEL)

    # worker-b's claim of the day meets worker-a's slot and fails whole; its pass then reads
    # the slot and leaves the channel, rotation and message alike, to worker-a.
    held = run_pass(second)
    clock.advance(timedelta(seconds=4))
    taken_over = run_pass(second)  # worker-a has gone quiet in the channel

    assert (held["sent"], held["rotations"]["sent"], held["errors"]) == (0, 0, 0)
    assert (taken_over["sent"], taken_over["rotations"]["sent"]) == (2, 1)
    posts = [p.delivery_id for p in slack.posts() if p.channel == CHANNEL]
    assert posts == [
        message_delivery_id(m1, T0),
        rotation_delivery_id("standup", T0.date()),
        message_delivery_id(m2, T0),
    ]


def test_a_worker_that_posted_its_last_message_in_a_channel_does_not_hold_it(
    settings, db, slack, clock
):
    m1 = seed_message(db, channel=CHANNEL)
    assert run_tick(make_runtime(settings, db, clock, "worker-a"), MESSAGE_KIND)["sent"] == 1
    m2 = seed_message(db, channel=CHANNEL)

    # worker-a's pass is over; worker-b keeps only the pace, not away: a second after m1's
    # claim, and the handover margin for the other worker's claim commit.
    summary = run_tick(make_runtime(settings, db, clock, "worker-b"), MESSAGE_KIND)

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
    assert run_tick(make_runtime(settings, db, clock, "worker-a"), MESSAGE_KIND)["sent"] == 1
    seed_rotation(db, channel=CHANNEL)

    # worker-b's claim of the day create()s this minute's slot, meets worker-a's, reads it
    # and claims again once the channel's second has passed.
    summary = run_pass(make_runtime(settings, db, clock, "worker-b"))

    assert (summary["rotations"]["sent"], summary["rotations"]["errors"]) == (1, 0)
    posts = [p for p in slack.posts() if p.channel == CHANNEL]
    assert [p.delivery_id for p in posts][1] == rotation_delivery_id("standup", T0.date())
    assert len(posts) == 2
    assert Decimal(posts[1].ts) - Decimal(posts[0].ts) >= 1


def test_with_another_worker_about_a_pass_risks_few_claims_at_once(
    settings, db, slack, clock, monkeypatch
):
    """Once a pass has lost a claim, it begins at most PROBES lanes at a time whose channel
    it does not hold: when another worker has just taken a whole page, that costs a few
    lost claims, not one per channel."""
    mine = make_runtime(settings, db, clock, "worker-b")
    other = make_runtime(settings, db, clock, "worker-a")
    first = seed_message(db, channel="C0PROBE00")
    later = [
        seed_message(db, channel=f"C0PROBE{n:02d}", next_run_at=T0 + timedelta(seconds=1))
        for n in range(1, 21)
    ]
    real_read = ChannelSlots.read
    inside: list[bool] = []  # worker-a's own pass goes through the same functions: not intercepted

    def due(db_, now, limit, channels=None, excluding=()):
        if inside:
            return real_due(db_, now, limit, channels, excluding)
        if len(reads) == 1:
            clock.advance(timedelta(seconds=1))  # the twenty come due before the next read
        page = real_due(
            db_, clock.now(), limit, channels, excluding
        )  # the pass's `now`, or after it
        reads.append(len(page))
        if len(reads) == 1:
            other_pass()  # worker-a takes the one due message right after our read
        return page

    def read(self, channels, now):
        real_read(self, channels, now)
        if not inside and not slot_reads:
            slot_reads.append(sorted(channels))
            other_pass()  # and the twenty, after we read (empty) slots

    def other_pass():
        inside.append(True)
        try:
            run_tick(other, MESSAGE_KIND)
        finally:
            inside.pop()

    reads: list[int] = []
    slot_reads: list[list[str]] = []
    monkeypatch.setattr(message_kind, "due_messages", due)
    monkeypatch.setattr(ChannelSlots, "read", read)

    summary = run_tick(mine, MESSAGE_KIND)

    assert reads == [1, 20, 0]  # the page read after each lost claim
    assert len(slot_reads[0]) == CHECKS  # the slots of the next lanes, not of the page
    assert (summary["sent"], summary["duplicates"]) == (0, 1 + PROBES)
    delivery_ids = [p.delivery_id for p in slack.posts()]
    assert len(delivery_ids) == len(set(delivery_ids)) == 21  # each once, by worker-a
    assert {message(db, m)["status"] for m in [first, *later]} == {"sent"}


def test_a_slot_known_to_be_held_elsewhere_is_not_read_again_while_its_hold_lasts(
    settings, db, slack, clock
):
    first = make_runtime(settings, db, clock, "worker-a")
    counter = RpcCounter()
    second = replace(
        make_runtime(settings, db, clock, "worker-b"), db=CountedClient(db.project, counter)
    )
    held = [f"C0HELD{n:03d}" for n in range(3)]
    for channel in held:
        # worker-a posts in each channel with more in hand: the channel is its to go on with.
        m1 = seed_message(db, channel=channel)
        seed_message(db, channel=channel)
        post_holding(first, m1, channel)

    # worker-b's claims meet worker-a's slots and fail; it reads each lost slot once, and
    # its next read of the page leaves the three channels to worker-a without reading
    # their slots again.
    summary = run_tick(second, MESSAGE_KIND)

    assert (summary["sent"], summary["duplicates"]) == (0, 3)
    assert counter.snapshot()["documents_by"]["BatchGetDocuments"] == len(held)
    assert [p.channel for p in slack.posts()] == held  # worker-a's three posts only


def test_after_a_lost_claim_a_pass_leaves_a_channel_another_worker_holds_unraced(
    settings, db, slack, clock, monkeypatch
):
    """Once a pass has lost a claim, it reads the slots of the lanes it is about to begin;
    a channel another worker holds (with more in hand) is left to it without a claim."""
    mine = make_runtime(settings, db, clock, "worker-b")
    other = make_runtime(settings, db, clock, "worker-a")
    h1 = seed_message(db, channel=CHANNEL)
    h2 = seed_message(db, channel=CHANNEL, next_run_at=T0 + timedelta(seconds=1))
    taken = seed_message(db, channel="C0TAKEN01")
    post_holding(other, h1, CHANNEL)  # worker-a holds CHANNEL: it posted h1 with h2 in hand
    reads: list[int] = []

    def due(db_, now, limit, channels=None, excluding=()):
        if reads:
            clock.advance(timedelta(seconds=1))  # h2 comes due for the second read
        page = real_due(db_, clock.now(), limit, channels, excluding)
        reads.append(len(page))
        if len(reads) == 1:  # worker-a claims `taken` right after our first read
            snap = db.collection(MESSAGES).document(taken).get()
            claimed = claim_and_send(
                MESSAGE_KIND,
                other,
                snap,
                ChannelSlots(other).for_claim("C0TAKEN01", clock.now(), more=False),
            )
            assert isinstance(claimed, Sent)
        return page

    monkeypatch.setattr(message_kind, "due_messages", due)

    summary = run_tick(mine, MESSAGE_KIND)

    assert reads == [1, 1]
    assert (summary["sent"], summary["duplicates"]) == (0, 1)  # `taken` only: h2 not raced
    assert message(db, h2)["status"] == "pending"  # worker-a's to post


# With twelve channels worker-d starts at the second, worker-b at the tenth (its share runs
# past the last channel, to the end). worker-a has taken the first message of a few channels:
# after this worker's last lanes; or its first lane (the share begins after it), one in the
# middle (inside the share) and its last two. It goes on in them (`held`), or has posted its
# last message in each.
@pytest.mark.parametrize(
    ("worker", "lanes_taken", "share"),
    [
        ("worker-d", (9, 10, 11), ChannelRange("C0SHARE01", "C0SHARE10")),
        ("worker-d", (0, 5, 10, 11), ChannelRange("C0SHARE02", "C0SHARE11")),
        ("worker-b", (9, 10, 11), ChannelRange("C0SHARE09", None)),
    ],
)
@pytest.mark.parametrize("held", [True, False])
def test_after_a_lost_claim_a_pass_reads_only_the_channels_it_reached_first(
    settings, db, slack, clock, monkeypatch, worker, lanes_taken, share, held
):
    """Workers reading one backlog start at different channels of it (lanes are in channel
    order). Once this pass loses a claim, its share is the channels from the first lane it
    took to the last, and it reads only those until they are done: the rest of the backlog
    is the other workers' to read, not every worker's. A channel within it that another
    worker took is read again; so is the rest, from the head, once the share is done. Such
    a channel is left to the worker that holds it, or taken over."""
    mine = make_runtime(settings, db, clock, worker)
    other = make_runtime(settings, db, clock, "worker-a")
    channels = [f"C0SHARE{n:02d}" for n in range(12)]
    ids = {c: [seed_message(db, f"{c}-{k}", channel=c) for k in range(3)] for c in channels}
    head = real_due(db, clock.now(), settings.tick_limit)
    start = channels.index(lanes(head, worker)[0][0].get("channel"))
    theirs = [channels[(start + k) % 12] for k in lanes_taken]
    reads: list[tuple[ChannelRange | None, list[str]]] = []

    def due(db_, now, limit, share=None, excluding=()):
        page = real_due(db_, now, limit, share, excluding)
        reads.append((share, [snap.get("channel") for snap in page]))
        if len(reads) == 1:  # worker-a takes the first message of its channels meanwhile
            for channel in theirs:
                slots = ChannelSlots(other).for_claim(channel, clock.now(), more=held)
                snap = db.collection(MESSAGES).document(ids[channel][0]).get()
                assert isinstance(claim_and_send(MESSAGE_KIND, other, snap, slots), Sent)
        return page

    real_claim = claim_and_send
    first_wave = threading.Barrier(len(channels))
    claims = itertools.count()

    def claim(kind, rt, snap, slots):  # processor.tick's claim_and_send
        # The first claim in every channel is in flight before any of them returns, as with
        # a slower database: which lanes began before the first loss is not left to chance.
        if next(claims) < len(channels):
            first_wave.wait(timeout=30)
        return real_claim(kind, rt, snap, slots)

    monkeypatch.setattr(message_kind, "due_messages", due)
    monkeypatch.setattr(tick, "claim_and_send", claim)

    summary = run_tick(mine, MESSAGE_KIND)

    inside = [c for c in theirs if share.low <= c and (share.high is None or c < share.high)]
    left = theirs if held else [c for c in theirs if c not in inside]
    assert [r[0] for r in reads] == [None, share, None]
    assert len(reads[0][1]) == 36
    assert sorted(reads[1][1]) == sorted(inside * 2)  # its own are done: worker-a's within
    assert sorted(reads[2][1]) == sorted(left * 2)  # what is left: worker-a's channels
    taken_over = 0 if held else 2 * len(theirs)
    sent = 36 - 3 * len(theirs) + taken_over
    assert (summary["sent"], summary["duplicates"]) == (sent, len(theirs))
    posted = [p.channel for p in slack.posts()]
    assert all(posted.count(c) == 3 for c in set(channels) - set(theirs))
    for channel in theirs:
        rest = [message(db, m)["status"] for m in ids[channel][1:]]
        assert rest == ["pending" if held else "sent"] * 2  # held: worker-a's to go on with
        stamps = [Decimal(p.ts) for p in slack.posts() if p.channel == channel]
        assert all(b - a >= 1 for a, b in itertools.pairwise(stamps))
