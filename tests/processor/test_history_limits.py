"""Reconciliation under Slack's real history limits (docs/slack-limits.md).

The stand-in is set as Slack treats an app that is not Marketplace-approved:
`conversations.history` at 1 call a minute and at most 15 messages a page. The channel is
busy around the claim: 200 messages by people, one every 2 seconds from 200 s before the
claim to 200 s after. The window read is [claim - 1 min, claim + 1 min + 10 s + 1 min]
(processor.history_search), which holds 95 of them; reading it from the newest, 15 a page,
one page a pass, the post is on page ceil(66 / 15) = 5 (65 newer messages, then ours), and
the whole window without it takes ceil(95 / 15) = 7 pages. Before the window was kept on the ledger,
every pass restarted at page 1 and page 2 always met the 429: the entry never settled.
"""

from __future__ import annotations

import math
from dataclasses import replace
from datetime import timedelta

import pytest

from core.models import message_delivery_id
from core.platform import Outcome
from core.store import MESSAGES
from emulator.slack_standin import Fault, SlackStandIn
from messages.kind import MESSAGE_KIND
from processor.abc import Claim
from processor.claim import claim_occurrence
from processor.deliver import send
from processor.finalize import finalize
from processor.outcome import Result
from processor.reconcile import backoff
from targets.kinds import run_pass
from tests.fixtures.clock import LEASE, T0
from tests.fixtures.deliveries import ledger
from tests.fixtures.messages import message, seed_message
from tests.fixtures.rotations import ALICE, MONDAY, seed_rotation
from tests.fixtures.runtime import make_runtime
from tests.fixtures.slack import HISTORY

BUSY = "C0BUSY001"
QUIET = "C0QUIET01"
PAGE = 15
CHATTER_EACH = timedelta(seconds=2)
CHATTER = 200
# People's messages in the window [T0 - 60 s, T0 + 130 s] newer than the post at T0, and all.
NEWER_IN_WINDOW = 65
IN_WINDOW = 95


@pytest.fixture
def rt(settings, db, clock):
    """A worker with the default SLACK_TIMEOUT_SECONDS (10), whose window this file counts."""
    return make_runtime(replace(settings, slack_timeout_seconds=10), db, clock, "worker-a")


def chatter(slack: SlackStandIn, clock, channel: str, start, count: int) -> None:
    """People talking in `channel`, one message every CHATTER_EACH from `start`."""
    back = clock.now()
    for i in range(count):
        clock.set(start + i * CHATTER_EACH)
        slack.add_message(channel, f"chatter {i}", user="U0PERSON1")
    clock.set(back)


def slack_like_limits(slack: SlackStandIn) -> None:
    slack.set_rate_limit(HISTORY, 1, per_seconds=60)
    slack.set_history_page_max(PAGE)


def busy_channel_with_ambiguous_post(rt, db, slack, fault: Fault, seed=None) -> str:
    """A message (or what `seed` seeds) due at T0 in BUSY whose post went wrong as `fault`
    says, with CHATTER messages around it; the clock ends where the lease has just expired."""
    mid = (seed or seed_message)(db, channel=BUSY)
    rt.clock.set(T0 - CHATTER_EACH * (CHATTER // 2) + timedelta(seconds=1))
    chatter(slack, rt.clock, BUSY, rt.clock.now(), CHATTER // 2)
    rt.clock.set(T0)
    slack.inject(fault)
    run_pass(rt)  # claimed at T0; the post's outcome is unknown
    chatter(slack, rt.clock, BUSY, T0 + CHATTER_EACH, CHATTER // 2)
    rt.clock.set(T0 + LEASE)
    return mid


def passes_until_settled(rt, db, delivery_id: str, limit: int = 40) -> int:
    """Minutely passes until the entry is no longer `claimed`; how many it took."""
    for passes in range(1, limit + 1):
        run_pass(rt)
        if ledger(db)[delivery_id]["status"] != "claimed":
            return passes
        rt.clock.advance(timedelta(minutes=1))
    raise AssertionError(f"not settled in {limit} passes")


def test_a_post_in_a_busy_channel_is_found_on_its_page_at_one_call_a_minute(rt, db, slack):
    slack_like_limits(slack)
    mid = busy_channel_with_ambiguous_post(
        rt, db, slack, Fault(kind="drop_after_receipt", channel=BUSY, times=1)
    )
    delivery_id = message_delivery_id(mid, T0)

    passes = passes_until_settled(rt, db, delivery_id)

    assert passes == math.ceil((NEWER_IN_WINDOW + 1) / PAGE) == 5
    ours = [p for p in slack.posts() if p.delivery_id == delivery_id]
    assert len(ours) == 1
    assert (message(db, mid)["status"], message(db, mid)["last_slack_ts"]) == ("sent", ours[0].ts)


def test_a_rotation_day_in_a_busy_channel_is_found_the_same_way(rt, db, slack):
    slack_like_limits(slack)
    rotation = busy_channel_with_ambiguous_post(
        rt,
        db,
        slack,
        Fault(kind="drop_after_receipt", channel=BUSY, times=1),
        seed=lambda db, **fields: seed_rotation(db, send_time="10:00", **fields),  # T0
    )
    delivery_id = f"r:{rotation}:{MONDAY}"

    assert passes_until_settled(rt, db, delivery_id) == 5
    ours = [p for p in slack.posts() if p.delivery_id == delivery_id]
    assert len(ours) == 1 and f"<@{ALICE}>" in (ours[0].text or "")
    assert ledger(db)[delivery_id]["status"] == "sent"


def test_a_post_that_never_landed_is_known_absent_once_the_window_is_read(rt, db, slack):
    slack_like_limits(slack)
    mid = busy_channel_with_ambiguous_post(
        rt, db, slack, Fault(kind="server_error", status=503, channel=BUSY, times=1)
    )
    delivery_id = message_delivery_id(mid, T0)

    passes = passes_until_settled(rt, db, delivery_id)

    assert passes == math.ceil(IN_WINDOW / PAGE) == 7
    assert ledger(db)[delivery_id]["status"] == "released"
    rt.clock.advance(backoff(1))
    run_pass(rt)
    ours = [p for p in slack.posts() if p.delivery_id == delivery_id]
    assert len(ours) == 1  # sent once, after the absence was proven
    assert message(db, mid)["status"] == "sent"


def test_short_pages_and_a_stale_cursor_still_settle_with_one_post(rt, db, slack):
    slack_like_limits(slack)
    slack.set_short_pages(True)  # half, empty, full pages while more remain
    mid = busy_channel_with_ambiguous_post(
        rt, db, slack, Fault(kind="drop_after_receipt", channel=BUSY, times=1)
    )
    delivery_id = message_delivery_id(mid, T0)
    run_pass(rt)  # page 1 read: the search is kept with its cursor
    assert ledger(db)[delivery_id]["search"]["pages"] == 1
    slack.inject(Fault(kind="error", code="invalid_cursor", method=HISTORY, times=1))
    rt.clock.advance(timedelta(minutes=1))

    passes = passes_until_settled(rt, db, delivery_id)

    # Short pages hold a third fewer on average, and the stale cursor costs a restart.
    assert passes <= 2 * math.ceil((NEWER_IN_WINDOW + 1) / PAGE) + 2
    assert [p.delivery_id for p in slack.posts()].count(delivery_id) == 1
    assert message(db, mid)["status"] == "sent"


def test_one_busy_channel_does_not_spend_the_history_calls_of_the_others(
    settings, db, slack, clock
):
    # No rate limit: 2 calls a pass, for two leases, the busy one first in the page.
    slack.set_history_page_max(PAGE)
    rt = make_runtime(
        replace(settings, slack_timeout_seconds=10, history_calls_per_pass=2), db, clock, "w"
    )
    busy = busy_channel_with_ambiguous_post(
        rt, db, slack, Fault(kind="drop_after_receipt", channel=BUSY, times=1)
    )
    quiet = seed_message(db, channel=QUIET, next_run_at=T0 + timedelta(seconds=1))
    clock.set(T0 + timedelta(seconds=1))
    slack.inject(Fault(kind="drop_after_receipt", channel=QUIET, times=1))
    run_pass(rt)
    clock.set(T0 + timedelta(seconds=1) + LEASE)

    run_pass(rt)

    assert message(db, quiet)["status"] == "sent"  # its one page, in the first pass
    busy_id = message_delivery_id(busy, T0)
    assert ledger(db)[busy_id]["status"] == "claimed"
    assert ledger(db)[busy_id]["search"]["pages"] == 1  # its share: one call of two
    clock.advance(timedelta(minutes=1))
    assert passes_until_settled(rt, db, busy_id) == 2  # then two pages a pass: 5 in all
    assert message(db, busy)["status"] == "sent"


@pytest.mark.parametrize(
    ("skew", "post_delay"),
    [
        (timedelta(seconds=-50), timedelta(0)),  # Slack behind: stamped before the claim
        (timedelta(seconds=50), timedelta(seconds=60)),  # ahead, posted at the deadline
    ],
)
def test_a_post_stamped_by_a_skewed_slack_clock_is_still_found(rt, db, slack, skew, post_delay):
    slack.set_skew(skew)  # Slack's clock this far from ours
    mid = seed_message(db, channel=QUIET)
    claim = claim_occurrence(rt, MESSAGE_KIND, db.collection(MESSAGES).document(mid).get())
    assert isinstance(claim, Claim)
    rt.clock.advance(post_delay)
    slack.inject(Fault(kind="drop_after_receipt", channel=QUIET, times=1))
    assert send(rt, claim).outcome is Outcome.AMBIGUOUS
    rt.clock.set(T0 + LEASE)

    run_pass(rt)

    delivery_id = message_delivery_id(mid, T0)
    assert [p.delivery_id for p in slack.posts()].count(delivery_id) == 1
    assert ledger(db)[delivery_id]["status"] == "sent"


def test_another_apps_message_with_our_delivery_id_is_not_proof(rt, db, slack):
    mid = seed_message(db, channel=QUIET)
    delivery_id = message_delivery_id(mid, T0)
    slack.inject(Fault(kind="server_error", status=503, channel=QUIET, times=1))
    run_pass(rt)  # not posted, outcome unknown
    metadata = {"event_type": "scheduled_message", "event_payload": {"delivery_id": delivery_id}}
    foreign = slack.add_message(
        QUIET, "a copy", metadata=metadata, user="U0OTHERBOT", bot_id="B0OTHER", app_id="A0OTHER"
    )
    rt.clock.set(T0 + LEASE)

    run_pass(rt)

    assert ledger(db)[delivery_id]["status"] == "released"
    rt.clock.advance(backoff(1))
    run_pass(rt)
    ours = [p for p in slack.posts() if p.delivery_id == delivery_id and p.bot_id == "B0001"]
    assert len(ours) == 1
    assert message(db, mid)["last_slack_ts"] == ours[0].ts != foreign


def test_a_post_not_started_by_its_deadline_is_released_unsent(rt, db, slack):
    mid = seed_message(db)
    claim = claim_occurrence(rt, MESSAGE_KIND, db.collection(MESSAGES).document(mid).get())
    assert isinstance(claim, Claim)
    rt.clock.advance(timedelta(seconds=61))  # the worker stalled after its claim

    post = send(rt, claim)

    assert post.code == "post_deadline_passed"
    assert slack.posts() == []
    assert finalize(rt, claim, post) is Result.RELEASED
    assert ledger(db)[message_delivery_id(mid, T0)]["status"] == "released"
