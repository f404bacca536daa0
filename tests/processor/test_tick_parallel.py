"""A pass delivers channels in parallel: each channel's messages stay in order and paced,
a lost claim makes the pass read again instead of racing on, and a worker's back-to-back
passes keep a channel's pacing."""

from __future__ import annotations

import time
from collections import defaultdict
from dataclasses import replace
from datetime import timedelta
from decimal import Decimal
from itertools import pairwise

from core.models import message_delivery_id
from core.store import DELIVERIES
from emulator.slack_standin import SlackStandIn
from messages.kind import MESSAGE_KIND
from processor.kind_pass import PARALLEL_POSTS, run_kind
from processor.lanes import lanes
from tests.fixtures.clock import T0
from tests.fixtures.messages import message, seed_message
from tests.fixtures.runtime import make_runtime


def test_channels_are_posted_in_parallel(settings, db, clock):
    latency = 0.4
    with SlackStandIn(clock=clock, latency=latency) as slow:
        rt = make_runtime(replace(settings, slack_api_url=slow.url), db, clock, "worker-a")
        for n in range(8):
            seed_message(db, channel=f"C{n:04d}PAR")

        started = time.monotonic()
        summary = run_kind(rt, MESSAGE_KIND)
        elapsed = time.monotonic() - started

        assert summary["sent"] == 8
        assert len(slow.posts()) == 8
    # One after another this would take 8 x 0.4 s; in parallel about one latency.
    assert elapsed < 4 * latency
    assert clock.slept == []  # different channels never wait for each other


def test_each_channel_keeps_its_order_and_pace_while_channels_run_in_parallel(rt, db, slack):
    ids = {
        channel: [
            seed_message(
                db,
                channel=channel,
                text=f"{channel} #{k}",
                next_run_at=T0 - timedelta(minutes=10 - k),
            )
            for k in range(3)
        ]
        for channel in ("C0001ORD", "C0002ORD", "C0003ORD", "C0004ORD")
    }

    summary = run_kind(rt, MESSAGE_KIND)

    assert summary["sent"] == 12
    posted = defaultdict(list)
    for post in slack.posts():
        posted[post.channel].append(post)
    for channel, mids in ids.items():
        posts = posted[channel]
        # Posted oldest first, one per second at most (the stand-in is on the test clock).
        assert [p.text for p in posts] == [f"{channel} #{k}" for k in range(3)]
        assert all(b - a >= 1 for a, b in pairwise(Decimal(p.ts) for p in posts))
        assert all(message(db, mid)["status"] == "sent" for mid in mids)
    # The channels waited together: two one-second waits for the whole pass, not per channel.
    assert rt.clock.slept == [1.0, 1.0]


def test_a_lost_claim_leaves_the_rest_of_the_pass_going_out(rt, db, slack):
    mids = [seed_message(db, channel=f"C{n:04d}RACE") for n in range(6)]
    # Another worker settled one occurrence already: claiming it is a duplicate.
    db.collection(DELIVERIES).document(message_delivery_id(mids[2], T0)).set(
        {"status": "sent", "message_id": mids[2], "occurrence_at": T0, "slack_ts": "1.0"}
    )

    summary = run_kind(rt, MESSAGE_KIND)

    assert (summary["sent"], summary["duplicates"]) == (5, 1)
    assert len(slack.posts()) == 5
    assert {message(db, mid)["status"] for mid in mids} == {"sent"}


def test_back_to_back_passes_keep_a_channels_pace(rt, db, slack):
    seed_message(db)
    run_kind(rt, MESSAGE_KIND)
    seed_message(db, text="right after")  # due at T0 too; the clock has not moved

    summary = run_kind(rt, MESSAGE_KIND)

    assert summary["sent"] == 1
    assert rt.clock.slept == [1.0]  # the channel posted at T0 in the previous pass
    first, second = (Decimal(p.ts) for p in slack.posts())
    assert second - first >= 1


def test_lanes_group_by_channel_in_due_order(db):
    for n in range(40):
        seed_message(db, f"lane-{n:02d}", channel=f"C{(7 * n) % 10:04d}LANE")
    snaps = [db.collection("scheduled_messages").document(f"lane-{n:02d}").get() for n in range(40)]

    made = lanes(snaps)

    assert sorted(len(lane) for lane in made) == [4] * 10
    for lane in made:
        assert [s.id for s in lane] == sorted(s.id for s in lane)
        assert len({(s.to_dict() or {})["channel"] for s in lane}) == 1
    channels = [lane[0].get("channel") for lane in made]
    assert channels == [f"C{n:04d}LANE" for n in range(10)]
    assert PARALLEL_POSTS > 1
