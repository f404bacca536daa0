"""Pacing: never more than one post per second per channel, and a burst that does not fit
the pass's budget waits for the next pass instead of being held or lost."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import replace
from datetime import timedelta
from decimal import Decimal
from itertools import pairwise

from core.slack import SlackTransport
from emulator.slack_standin import Fault
from messages.kind import MESSAGE_KIND
from processor.kind_pass import run_kind
from tests.fixtures.clock import T0
from tests.fixtures.messages import message, seed_message
from tests.fixtures.runtime import make_runtime


def gaps_per_channel(slack):
    stamps = defaultdict(list)
    for post in slack.posts():
        stamps[post.channel].append(Decimal(post.ts))
    return {c: [b - a for a, b in pairwise(s)] for c, s in stamps.items()}


def test_a_burst_to_one_channel_is_paced_at_one_post_per_second(rt, db, slack):
    for n in range(5):
        seed_message(db, next_run_at=T0 - timedelta(minutes=5 - n))
    seed_message(db, channel="C0OTHER01")

    summary = run_kind(rt, MESSAGE_KIND)

    assert summary["sent"] == 6
    assert rt.clock.slept == [1.0, 1.0, 1.0, 1.0]  # the other channel never waited
    gaps = gaps_per_channel(slack)
    assert all(gap >= 1 for gap in gaps["C0123ABCD"])
    assert len(gaps["C0123ABCD"]) == 4


def test_what_does_not_fit_the_budget_is_left_for_the_next_pass(settings, db, slack, clock):
    rt = make_runtime(replace(settings, tick_budget_seconds=2), db, clock, "worker-a")
    ids = [seed_message(db, next_run_at=T0 - timedelta(minutes=5 - n)) for n in range(5)]

    first = run_kind(rt, MESSAGE_KIND)

    assert (first["sent"], first["deferred"], first["claimed"]) == (3, 2, 3)
    assert [message(db, i)["status"] for i in ids] == ["sent"] * 3 + ["pending"] * 2
    clock.advance(timedelta(minutes=1))
    assert run_kind(rt, MESSAGE_KIND)["sent"] == 2
    assert len(slack.posts()) == 5


def test_a_429_storm_is_waited_out_and_sent_once(rt, db, slack):
    mid = seed_message(db)
    slack.inject(Fault(kind="rate_limit", retry_after=5, times=3))

    for _ in range(3):
        assert run_kind(rt, MESSAGE_KIND)["released"] == 1
        rt.clock.advance(timedelta(seconds=5))
    assert run_kind(rt, MESSAGE_KIND)["sent"] == 1

    assert len(slack.posts()) == 1
    assert message(db, mid)["status"] == "sent"


def test_a_429_holds_its_channel_until_its_retry_after_in_this_pass_and_the_next(rt, db, slack):
    """After a chat.postMessage 429, nothing is posted to that channel before Slack's
    Retry-After, in this pass or a later one (beyond the pass's budget: left due,
    unclaimed); other channels go on."""
    ids = [seed_message(db, next_run_at=T0 - timedelta(minutes=3 - n)) for n in range(3)]
    other = seed_message(db, channel="C0OTHER01")
    slack.inject(Fault(kind="rate_limit", channel="C0123ABCD", retry_after=60, times=1))

    first = run_kind(rt, MESSAGE_KIND)

    assert (first["released"], first["deferred"], first["sent"]) == (1, 2, 1)
    assert message(db, other)["status"] == "sent"
    assert slack.calls("chat.postMessage") == 2  # the 429, and the other channel's post
    rt.clock.advance(timedelta(seconds=5))
    assert run_kind(rt, MESSAGE_KIND)["claimed"] == 0  # 55 s to go: beyond the budget
    assert slack.calls("chat.postMessage") == 2
    rt.clock.advance(timedelta(seconds=55))

    assert run_kind(rt, MESSAGE_KIND)["sent"] == 3
    assert [message(db, i)["status"] for i in ids] == ["sent"] * 3
    assert len(slack.posts()) == 4


def test_a_429_in_a_persons_dm_holds_the_rest_of_their_lane_unclaimed(rt, db, slack):
    """A person's lane is keyed by their user id, Slack's Retry-After by the DM it answered
    for: after a 429 in their DM, their next messages are left due and unclaimed (not
    claimed, refused by the process's own wait and released one by one)."""
    user = "U0PERSON1"
    ids = [
        seed_message(db, channel=None, user=user, next_run_at=T0 - timedelta(minutes=3 - n))
        for n in range(3)
    ]
    slack.inject(Fault(kind="rate_limit", channel=slack.dm_channel(user), retry_after=60, times=1))

    first = run_kind(rt, MESSAGE_KIND)

    assert (first["released"], first["deferred"], first["claimed"]) == (1, 2, 1)
    assert [message(db, i).get("last_error") is None for i in ids] == [False, True, True]
    rt.clock.advance(timedelta(seconds=60))
    assert run_kind(rt, MESSAGE_KIND)["sent"] == 3
    assert slack.calls("chat.postMessage") == 4  # the 429, then each once


class _FirstPostSlowOnTheWay(SlackTransport):
    """The first post spends 0.4 s (on the test clock) on its way to Slack; later ones
    arrive at once."""

    def __init__(self, clock, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._clock, self._posts = clock, 0

    def post(self, *args, **kwargs):
        self._posts += 1
        if self._posts == 1:
            self._clock.advance(timedelta(milliseconds=400))
        return super().post(*args, **kwargs)


def test_a_slow_post_does_not_bring_the_next_one_in_its_channel_closer_than_a_second(rt, db, slack):
    slow = _FirstPostSlowOnTheWay(rt.clock, "xoxb-test", rt.settings.slack_api_url, 10)
    rt = replace(rt, slack=slow)
    seed_message(db, next_run_at=T0 - timedelta(minutes=2))
    seed_message(db, next_run_at=T0 - timedelta(minutes=1))

    assert run_kind(rt, MESSAGE_KIND)["sent"] == 2

    # Paced from when Slack answered the first post, not from when it was sent.
    assert gaps_per_channel(slack)["C0123ABCD"] == [Decimal("1")]
