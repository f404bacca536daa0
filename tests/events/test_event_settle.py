"""An event whose send cannot be verified (the post's answer was lost and Slack's history is
unreadable) is parked `unconfirmed`, never resent by itself, and an operator settles its
`e:` ledger entry like any other (targets.operator)."""

from __future__ import annotations

import hashlib
from datetime import timedelta

import pytest

from emulator.slack_standin import Fault
from targets.kinds import run_pass
from targets.operator import mark_delivered, release
from tests.fixtures.api import call
from tests.fixtures.deliveries import ledger

pytestmark = pytest.mark.usefixtures("cli_on_the_test_clock")

KEY = "invoice-42:paid"
SHA = hashlib.sha256(KEY.encode()).hexdigest()
DELIVERY = f"e:{SHA}"
BODY = {"key": KEY, "channel": "C0123ABCD", "text": "Invoice 42 is paid"}


# The post's answer is lost after Slack recorded it.
DROPPED = Fault(kind="drop_after_receipt", times=1)


def unconfirmed_event(api, rt, db, slack, lost=DROPPED):
    slack.inject(lost)
    slack.inject(Fault(kind="error", code="missing_scope", method="conversations.history"))
    status, answer = call(api, "POST", "/events", BODY)
    assert (status, answer["status"]) == (201, "sending")
    rt.clock.advance(timedelta(seconds=301))
    run_pass(rt)
    assert ledger(db)[DELIVERY]["status"] == "unconfirmed"
    assert call(api, "POST", "/events", BODY)[1]["status"] == "unconfirmed"
    slack.clear_faults()


def test_mark_delivered_settles_an_unconfirmed_event(api, rt, db, slack):
    unconfirmed_event(api, rt, db, slack)
    [post] = slack.posts()

    mark_delivered(rt, DELIVERY, post.ts, "seen in #ops by Ana", "ana")

    entry = ledger(db)[DELIVERY]
    assert (entry["status"], entry["slack_ts"]) == ("sent", post.ts)
    assert entry["operator"]["action"] == "mark_delivered"
    assert call(api, "POST", "/events", BODY)[1] == {
        "delivery_id": DELIVERY,
        "duplicate": True,
        "status": "sent",
    }
    rt.clock.advance(timedelta(days=1))
    run_pass(rt)
    assert len(slack.posts()) == 1


def test_release_sends_an_unconfirmed_event_again_through_the_same_entry(api, rt, db, slack):
    # A 5xx: ambiguous to us, and in truth never posted.
    unconfirmed_event(api, rt, db, slack, Fault(kind="server_error", status=503, times=1))
    assert slack.posts() == []

    release(rt, DELIVERY, "not in the channel, checked by Ana", "ana")
    run_pass(rt)

    assert slack.delivery_ids() == [DELIVERY]
    entry = ledger(db)[DELIVERY]
    assert (entry["status"], entry["attempts"]) == ("sent", 2)
