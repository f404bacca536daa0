"""One channel's backlog never keeps the others waiting: a channel takes one post a second,
so a pass can post only so many of its messages; the rest of the pass's page goes to the
other channels, and the backlog drains over the next passes, in order, each message once."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from decimal import Decimal
from itertools import pairwise

import pytest

from core.models import message_delivery_id
from core.store import DELIVERIES
from messages.kind import MESSAGE_KIND
from processor.one_pass import until_idle
from targets.kinds import run_pass
from tests.fixtures.clock import T0
from tests.fixtures.messages import message, seed_message
from tests.fixtures.runtime import make_runtime

OLDER = T0 - timedelta(minutes=10)
MINUTE_AGO = T0 - timedelta(minutes=1)


def seed_backlog(db, channel: str, count: int) -> list[str]:
    """`count` one-offs to `channel`, all due before anything else, oldest first, in one
    write batch per 500."""
    ids = []
    for start in range(0, count, 500):
        batch = db.batch()
        for k in range(start, min(count, start + 500)):
            at = OLDER + timedelta(milliseconds=k)
            doc_id = f"{channel}-{k:04d}"
            fields = {
                "channel": channel,
                "text": f"{channel} #{k}",
                "timezone": "UTC",
                "send_at": at,
                "next_run_at": at,
                "status": "pending",
                "version": 1,
            }
            batch.set(db.collection("scheduled_messages").document(doc_id), fields)
            ids.append(doc_id)
        batch.commit()
    return ids


def seed_others(db, count: int) -> list[str]:
    """One one-off due a minute ago in each of `count` other channels; the first expires
    two minutes from now."""
    return [
        seed_message(
            db,
            f"other-{n:02d}",
            channel=f"C0OTHER{n:02d}",
            send_at=MINUTE_AGO,
            next_run_at=MINUTE_AGO,
            expires_at=T0 + timedelta(minutes=2) if n == 0 else None,
        )
        for n in range(count)
    ]


def assert_drained_in_order_once(db, slack, backlogs: dict[str, list[str]]) -> None:
    posts = slack.posts()
    delivery_ids = [p.delivery_id for p in posts]
    assert len(delivery_ids) == len(set(delivery_ids))  # nothing posted twice
    for channel, ids in backlogs.items():
        in_channel = [p for p in posts if p.channel == channel]
        assert [p.text for p in in_channel] == [f"{channel} #{k}" for k in range(len(ids))]
        assert all(b - a >= 1 for a, b in pairwise(Decimal(p.ts) for p in in_channel))
        assert {message(db, m)["status"] for m in ids} == {"sent"}


@pytest.mark.slow
def test_a_channels_backlog_does_not_keep_twenty_other_channels_waiting(rt, db, slack):
    busy = seed_backlog(db, "C0BUSY001", 500)
    others = seed_others(db, 20)

    first = run_pass(rt)

    # Every other channel's message went out in the first pass (the one that expires too),
    # beside as many of the backlog as a pass can post to one channel.
    assert {message_delivery_id(m, MINUTE_AGO) for m in others} <= set(slack.delivery_ids())
    assert {message(db, m)["status"] for m in others} == {"sent"}
    assert first["sent"] == 20 + sum(p.channel == "C0BUSY001" for p in slack.posts())
    assert first["sent"] + first["deferred"] == 520  # the rest is counted, not hidden
    passes = list(until_idle(rt, run_pass))

    assert passes[-1]["due"] == 0
    assert sum(p["sent"] for p in passes) == 500 - (first["sent"] - 20)
    assert_drained_in_order_once(db, slack, {"C0BUSY001": busy})
    assert len(slack.posts()) == 520
    statuses = {d.to_dict()["status"] for d in db.collection(DELIVERIES).stream()}
    assert statuses == {"sent"}


@pytest.mark.parametrize(
    ("busy_channels", "backlog", "tick_limit", "budget"),
    [(3, 40, 40, 9), (12, 5, 60, 1)],
)
def test_several_backlogs_each_get_their_share_and_the_other_channels_go_out_at_once(
    settings, db, slack, clock, busy_channels, backlog, tick_limit, budget
):
    """A smaller page and budget, where each backlog fills a page: three of them; or more
    than one due query can leave out at once (Firestore allows ten values in a `not-in`)."""
    small = replace(settings, tick_limit=tick_limit, tick_budget_seconds=budget)
    rt = make_runtime(small, db, clock, "worker-a")
    channels = [f"C0BUSY{n:03d}" for n in range(busy_channels)]
    backlogs = {channel: seed_backlog(db, channel, backlog) for channel in channels}
    others = seed_others(db, 5)

    first = run_pass(rt)

    posted = slack.posts()
    assert {message_delivery_id(m, MINUTE_AGO) for m in others} <= {p.delivery_id for p in posted}
    # No channel took more than a pass can post to it: one now, then one a second.
    assert max(sum(p.channel == c for p in posted) for c in channels) == budget + 1
    assert first["sent"] + first["deferred"] >= tick_limit
    passes = list(until_idle(rt, run_pass))

    assert passes[-1]["due"] == 0
    assert_drained_in_order_once(db, slack, backlogs)
    assert len(slack.posts()) == busy_channels * backlog + 5


def test_the_due_query_can_leave_channels_out_and_still_reads_every_waiting_status(db):
    seed_message(db, "busy", channel="C0BUSY001", next_run_at=T0 - timedelta(minutes=3))
    seed_message(db, "later", channel="C0LATER01", next_run_at=T0 - timedelta(minutes=1))
    seed_message(
        db, "series", channel="C0SERIES1", status="recurring", next_run_at=T0 - timedelta(minutes=2)
    )
    seed_message(db, "not-due", channel="C0LATER01", next_run_at=T0 + timedelta(minutes=1))

    everything = [s.id for s in MESSAGE_KIND.queue.due(db, T0, 10)]
    without = [s.id for s in MESSAGE_KIND.queue.due(db, T0, 10, excluding=["C0BUSY001"])]

    assert everything == ["busy", "series", "later"]
    assert without == ["series", "later"]
    assert [s.id for s in MESSAGE_KIND.queue.due(db, T0, 1, excluding=["C0BUSY001"])] == ["series"]


def test_a_channels_backlog_does_not_keep_messages_to_people_waiting(settings, db, slack, clock):
    """A read that leaves a busy channel out (`channel not-in`) cannot find a message to a
    person, which has no channel: they are read on their own, and go out in the same pass,
    each person's at most as many as one channel's."""
    small = replace(settings, tick_limit=40, tick_budget_seconds=9)
    rt = make_runtime(small, db, clock, "worker-a")
    busy = seed_backlog(db, "C0BUSY001", 40)
    people = [
        seed_message(
            db, channel=None, user=f"U0PERSON{n}", send_at=MINUTE_AGO, next_run_at=MINUTE_AGO
        )
        for n in range(3)
    ]
    # One person with a backlog of their own, older than the channel's: capped like it.
    backlog = [
        seed_message(
            db,
            channel=None,
            user="U0BUSYONE",
            text=f"U0BUSYONE #{k}",
            send_at=OLDER - timedelta(seconds=60 - k),
            next_run_at=OLDER - timedelta(seconds=60 - k),
        )
        for k in range(15)
    ]

    first = run_pass(rt)

    posted = slack.posts()
    assert {message_delivery_id(m, MINUTE_AGO) for m in people} <= {p.delivery_id for p in posted}
    in_dm = [p for p in posted if p.channel == slack.dm_channel("U0BUSYONE")]
    assert [p.text for p in in_dm] == [f"U0BUSYONE #{k}" for k in range(10)]  # 9 s: 10 posts
    assert first["sent"] == 3 + 10 + sum(p.channel == "C0BUSY001" for p in posted)
    passes = list(until_idle(rt, run_pass))

    assert passes[-1]["due"] == 0
    assert_drained_in_order_once(db, slack, {"C0BUSY001": busy})
    assert {message(db, m)["status"] for m in people + backlog} == {"sent"}
    assert len(slack.posts()) == 40 + 3 + 15


def test_a_page_smaller_than_a_channels_share_still_has_room_for_the_other_channels(
    settings, db, slack, clock
):
    """TICK_LIMIT=20 is under what a pass can post to one channel (51 in 50 s): the busy
    channel takes what the ten others leave, they all go out in the first pass."""
    rt = make_runtime(replace(settings, tick_limit=20), db, clock, "worker-a")
    busy = seed_backlog(db, "C0BUSY001", 60)
    others = seed_others(db, 10)

    first = run_pass(rt)

    assert {message(db, m)["status"] for m in others} == {"sent"}
    assert first["sent"] == 20  # the page is full: the backlog fills the rest of it
    assert [p.channel for p in slack.posts()].count("C0BUSY001") == 10
    passes = list(until_idle(rt, run_pass))

    assert passes[-1]["due"] == 0
    assert_drained_in_order_once(db, slack, {"C0BUSY001": busy})
    assert len(slack.posts()) == 70


def test_a_channel_alone_still_fills_the_page(settings, db, slack, clock):
    rt = make_runtime(replace(settings, tick_limit=20), db, clock, "worker-a")
    busy = seed_backlog(db, "C0BUSY001", 60)

    first = run_pass(rt)

    assert first["sent"] == 20  # its share makes room for others; with none, it is all its
    assert [p.text for p in slack.posts()] == [f"C0BUSY001 #{k}" for k in range(20)]
    list(until_idle(rt, run_pass))
    assert_drained_in_order_once(db, slack, {"C0BUSY001": busy})
