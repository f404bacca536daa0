"""Messages to people: a message naming `user` is posted to the person's DM, which the claim
opens with conversations.open (the real slack_sdk against the stand-in) and records on the
ledger entry, so that reconciliation reads that DM's history."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest

from core.models import message_delivery_id
from emulator.slack_standin import Fault
from processor.reconcile import backoff
from targets.kinds import run_pass
from tests.fixtures.clock import T0
from tests.fixtures.crash import kill_worker_at
from tests.fixtures.deliveries import ledger
from tests.fixtures.messages import message, seed_message, seed_series

PERSON = "U0PERSON1"


def to_person(db, user=PERSON, **fields):
    """A message to `user` written straight to Firestore, due at T0 unless told otherwise."""
    return seed_message(db, channel=None, user=user, **fields)


def test_a_message_to_a_person_is_posted_once_to_their_dm(rt, db, slack):
    mid = to_person(db, text="Your review is due")

    summary = run_pass(rt)
    run_pass(rt)  # a second pass finds nothing more to send

    delivery_id = message_delivery_id(mid, T0)
    [post] = slack.posts()
    dm = slack.dm_channel(PERSON)
    assert dm.startswith("D") and post.channel == dm
    assert post.metadata == {
        "event_type": "scheduled_message",
        "event_payload": {"delivery_id": delivery_id},
    }
    assert summary["sent"] == 1
    entry = ledger(db)[delivery_id]
    assert (entry["status"], entry["channel"], entry["user"]) == ("sent", dm, PERSON)
    assert entry["slack_ts"] == post.ts
    doc = message(db, mid)
    assert (doc["status"], doc["last_slack_ts"], doc["user"]) == ("sent", post.ts, PERSON)
    assert "channel" not in doc  # the message still names the person, not their DM


def test_a_recurring_message_to_a_person_advances(rt, db, slack):
    mid = seed_series(db, channel=None, user=PERSON)

    run_pass(rt)

    [post] = slack.posts()
    assert post.channel == slack.dm_channel(PERSON)
    doc = message(db, mid)
    assert doc["status"] == "recurring" and doc["next_run_at"] == T0 + timedelta(days=1)
    assert ledger(db)[message_delivery_id(mid, T0)]["status"] == "sent"

    rt.clock.advance(timedelta(days=1))
    run_pass(rt)

    posts = slack.posts()
    assert [p.channel for p in posts] == [slack.dm_channel(PERSON)] * 2
    assert [p.delivery_id for p in posts] == [
        message_delivery_id(mid, T0),
        message_delivery_id(mid, T0 + timedelta(days=1)),
    ]


@pytest.mark.parametrize(
    ("user", "state", "code"),
    [
        ("U0NOBODY1", {"exists": False}, "user_not_found"),
        ("U0LEFT001", {"deactivated": True}, "user_disabled"),
        ("UBOT", {}, "cannot_dm_bot"),  # the bot itself
    ],
)
def test_a_person_slack_will_not_dm_fails_with_slacks_code(
    rt, db, slack, capsys, user, state, code
):
    if state:
        slack.set_user(user, **state)
    mid = to_person(db, user=user)
    capsys.readouterr()

    summary = run_pass(rt)

    assert slack.posts() == []
    assert summary["failed"] == 1
    doc = message(db, mid)
    assert doc["status"] == "failed" and doc["last_error"]["code"] == code
    assert "lease" not in doc
    entry = ledger(db)[message_delivery_id(mid, T0)]
    assert (entry["status"], entry["error"]["code"], entry["user"]) == ("failed", code, user)
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    about = [line for line in lines if line.get("message_id") == mid]
    assert [(line["severity"], line["error_code"], line["user"]) for line in about] == [
        ("ERROR", code, user)
    ]

    rt.clock.advance(timedelta(minutes=5))
    run_pass(rt)  # failed is final: nothing is tried again
    assert slack.posts() == [] and message(db, mid)["status"] == "failed"


def test_a_dm_slack_cannot_open_now_stays_due_and_goes_out_later(rt, db, slack):
    slack.inject(Fault("rate_limit", method="conversations.open", times=1, retry_after=30))
    mid = to_person(db)

    run_pass(rt)

    assert slack.posts() == [] and ledger(db) == {}  # nothing claimed
    assert message(db, mid)["status"] == "pending"

    rt.clock.advance(timedelta(minutes=1))
    run_pass(rt)

    [post] = slack.posts()
    assert post.channel == slack.dm_channel(PERSON)
    assert message(db, mid)["status"] == "sent"


def test_a_429_from_conversations_open_is_waited_out_by_the_whole_process(rt, db, slack):
    """Slack's Retry-After for conversations.open holds the rest of the pass and every pass
    before it ends: nobody's DM is asked for again until then."""
    slack.inject(Fault("rate_limit", method="conversations.open", times=1, retry_after=90))
    first = [to_person(db, text="one"), to_person(db, text="two")]  # one lane: in turn
    later = to_person(db, user="U0PERSON2", next_run_at=T0 + timedelta(seconds=30))

    run_pass(rt)

    assert slack.calls("conversations.open") == 1  # the second was not asked for
    assert slack.posts() == [] and ledger(db) == {}
    rt.clock.advance(timedelta(seconds=60))
    run_pass(rt)  # still inside the Retry-After: all three due, none asked for
    assert slack.calls("conversations.open") == 1 and slack.posts() == []
    assert [message(db, m)["status"] for m in [*first, later]] == ["pending"] * 3

    rt.clock.advance(timedelta(seconds=31))
    run_pass(rt)

    assert slack.calls("conversations.open") == 4
    assert sorted(p.channel for p in slack.posts()) == sorted(
        [slack.dm_channel(PERSON)] * 2 + [slack.dm_channel("U0PERSON2")]
    )
    assert [message(db, m)["status"] for m in [*first, later]] == ["sent"] * 3


def test_messages_to_one_person_are_paced_in_their_dm(rt, db, slack):
    first = to_person(db, text="one")
    second = to_person(db, text="two")
    other = to_person(db, user="U0PERSON2", text="three")

    summary = run_pass(rt)

    assert summary["sent"] == 3
    posts = {p.delivery_id: p for p in slack.posts()}
    one, two = (posts[message_delivery_id(m, T0)] for m in (first, second))
    assert one.channel == two.channel == slack.dm_channel(PERSON)
    assert abs(float(two.ts) - float(one.ts)) >= 1.0  # one post a second in a conversation
    assert posts[message_delivery_id(other, T0)].channel == slack.dm_channel("U0PERSON2")


@pytest.mark.parametrize("point", ["after_claim", "after_post", "mid_finalize"])
def test_a_worker_killed_delivering_a_dm_loses_and_repeats_nothing(
    rt, db, slack, env, firestore_host, point
):
    mid = to_person(db)

    kill_worker_at(point, T0, env, firestore_host)
    delivery_id = message_delivery_id(mid, T0)
    dm = slack.dm_channel(PERSON)
    # The claim named the DM before anything was posted to it.
    assert ledger(db)[delivery_id]["channel"] == dm
    before = slack.posts()
    assert len(before) == (0 if point == "after_claim" else 1)

    rt.clock.advance(timedelta(seconds=301))  # past the dead worker's lease
    recovery = run_pass(rt)
    rt.clock.advance(backoff(1))  # past a release's backoff, if it was absent
    run_pass(rt)

    [post] = slack.posts()
    assert post.channel == dm and post.delivery_id == delivery_id
    if point == "after_post":
        # Found in the DM's history: settled as delivered, never posted again.
        assert before == [post] and recovery["reconciled"] == 1
    entry = ledger(db)[delivery_id]
    assert (entry["status"], entry["slack_ts"], entry["channel"]) == ("sent", post.ts, dm)
    assert message(db, mid)["status"] == "sent"


def test_a_dry_run_shows_the_person_and_opens_nothing(rt, db, slack):
    to_person(db)
    # One open allowed in the hour: a dry run that opened the DM would leave the real pass
    # rate limited, and nothing would go out.
    slack.set_rate_limit("conversations.open", 1, per_seconds=3600)

    summary = run_pass(rt, dry_run=True)

    [preview] = summary["previews"]
    assert (preview["user"], preview["channel"]) == (PERSON, None)
    assert preview["text"] == "Stand-up in 5 minutes"
    assert slack.posts() == [] and ledger(db) == {}
    run_pass(rt)
    assert [p.channel for p in slack.posts()] == [slack.dm_channel(PERSON)]
