"""A first caller that dies after its claim, after its post or in the middle of finalize
leaves a lease (or its send recorded), and reconciliation settles it as for any send
(events.kind): a post found in the channel's history is the event sent, never posted twice;
a post absent from it is released and sent by a later pass, once. Meanwhile and after, every
caller with the key is a duplicate that sends nothing. (A pass's retry of a released event
killed at each point: tests/contract/test_crashes.py.)"""

from __future__ import annotations

import hashlib
from datetime import timedelta

import pytest

from processor.reconcile import backoff
from targets.kinds import run_pass
from tests.fixtures.api import call
from tests.fixtures.crash import kill_caller_at
from tests.fixtures.deliveries import ledger

KEY = "stage-717:completed"
SHA = hashlib.sha256(KEY.encode()).hexdigest()
DELIVERY = f"e:{SHA}"
PERSON = "U0PERSON1"


@pytest.mark.parametrize("point", ["after_claim", "after_post", "mid_finalize"])
@pytest.mark.parametrize("to", ["channel", "user"])
def test_a_caller_that_dies_leaves_a_lease_settled_once(
    api, rt, db, slack, env, firestore_host, clock, point, to
):
    recipient = {"channel": "C0123ABCD"} if to == "channel" else {"user": PERSON}
    body = {"key": KEY, "text": "Framing is done", **recipient}
    kill_caller_at(point, body, clock.now(), env, firestore_host)

    entry = ledger(db)[DELIVERY]
    # Killed mid-finalize, the outcome's commit may have landed or not.
    left = {"claimed", "sent"} if point == "mid_finalize" else {"claimed"}
    assert (entry["status"], entry["kind"], entry["event_id"]) in {
        (status, "event", SHA) for status in left
    }
    where = "C0123ABCD" if to == "channel" else slack.dm_channel(PERSON)
    assert entry["channel"] == where  # where reconciliation reads the history
    assert len(slack.posts()) == (point != "after_claim")
    status, meanwhile = call(api, "POST", "/events", body)
    assert (status, meanwhile["duplicate"]) == (200, True)
    assert meanwhile["status"] in {"sending" if s == "claimed" else s for s in left}

    clock.advance(timedelta(seconds=301))  # past the dead caller's lease
    run_pass(rt)
    clock.advance(backoff(1))  # past a release's backoff
    run_pass(rt)

    assert slack.delivery_ids() == [DELIVERY]
    [post] = slack.posts()
    assert post.channel == where
    entry = ledger(db)[DELIVERY]
    assert (entry["status"], entry["slack_ts"]) == ("sent", post.ts)
    assert entry["attempts"] == (2 if point == "after_claim" else 1)
    event = db.collection("events").document(SHA).get().to_dict()
    assert (event["status"], event["slack_ts"], event["callers"]) == ("sent", post.ts, 2)
    status, later = call(api, "POST", "/events", body)
    assert (status, later) == (200, {"delivery_id": DELIVERY, "duplicate": True, "status": "sent"})
    assert len(slack.posts()) == 1
