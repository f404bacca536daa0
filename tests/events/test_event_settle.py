"""An event whose send cannot be verified (the post's answer was lost and Slack's history is
unreadable) is parked `unconfirmed`, never resent by itself, and an operator settles its
`e:` ledger entry like any other (targets.operator)."""

from __future__ import annotations

import hashlib
from datetime import timedelta

import pytest

from emulator.slack_standin import Fault
from targets.kinds import run_pass
from targets.operator import main, mark_delivered
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


def test_fail_held_ends_an_event_lease_reconciliation_holds(api, rt, db, slack, capsys):
    """An event's lease held for a person (its ledger entry no longer says `claimed`) has the
    operator's `fail-held` way out, as messages and rotations have: the event ends `failed`,
    nothing is posted, and its callers are told `failed` from then on."""
    slack.inject(Fault(kind="server_error", status=503, times=1))  # ambiguous, never posted
    assert call(api, "POST", "/events", BODY)[1]["status"] == "sending"
    db.collection("deliveries").document(DELIVERY).update({"status": "released"})
    rt.clock.advance(timedelta(seconds=301))
    run_pass(rt)
    assert db.collection("events").document(SHA).get().get("lease")["held_code"] == (
        "ledger_mismatch"
    )

    assert main(["fail-held", f"events/{SHA}", "--reason", "checked #ops by hand"]) == 0

    doc = db.collection("events").document(SHA).get().to_dict()
    assert (doc["status"], doc["last_error"]["code"]) == ("failed", "operator_failed")
    assert "lease" not in doc
    assert ledger(db)[DELIVERY]["status"] == "released"  # not `claimed`: it keeps what it says
    assert call(api, "POST", "/events", BODY)[1]["status"] == "failed"
    rt.clock.advance(timedelta(days=1))
    run_pass(rt)
    assert slack.posts() == []
    assert main(["fail-held", f"events/{SHA}", "--reason", "again"]) == 2
    assert "holds no lease" in capsys.readouterr().err
