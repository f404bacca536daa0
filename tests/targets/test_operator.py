"""Operator tools: list what needs a person, settle it with a recorded reason."""

from __future__ import annotations

import json
from collections import Counter
from datetime import timedelta

import pytest

from core.models import message_delivery_id
from core.store import MESSAGES
from emulator.slack_standin import Fault
from messages.kind import MESSAGE_KIND
from processor.abc import Claim
from processor.claim import claim_occurrence
from processor.deliver import send
from processor.finalize import finalize
from processor.kind_pass import run_kind
from processor.settle import SettleRefused
from targets.operator import main, release
from tests.fixtures.api import call
from tests.fixtures.clock import T0
from tests.fixtures.deliveries import ledger
from tests.fixtures.messages import message, seed_message
from tests.fixtures.operator import GONE, LEDGER_STATUSES, SEEN_TS

pytestmark = pytest.mark.usefixtures("cli_on_the_test_clock")


def unconfirmed_message(rt, db, slack):
    mid = seed_message(db)
    slack.inject(Fault(kind="drop_after_receipt", times=1))
    slack.inject(Fault(kind="error", code="missing_scope", method="conversations.history"))
    run_kind(rt, MESSAGE_KIND)
    rt.clock.advance(timedelta(seconds=301))
    run_kind(rt, MESSAGE_KIND)
    assert message(db, mid)["status"] == "unconfirmed"
    return mid


def test_list_shows_what_needs_a_person(rt, db, slack, capsys):
    mid = unconfirmed_message(rt, db, slack)
    capsys.readouterr()

    assert main(["list"]) == 0

    [row] = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert (row["delivery_id"], row["status"]) == (message_delivery_id(mid, T0), "unconfirmed")


def test_release_resends_a_failed_occurrence_through_the_same_ledger_entry(rt, db, slack):
    mid = seed_message(db)
    slack.inject(Fault(kind="error", code="not_in_channel", times=1))
    run_kind(rt, MESSAGE_KIND)
    delivery_id = message_delivery_id(mid, T0)

    release(rt, delivery_id, "bot invited to the channel", "ana")
    run_kind(rt, MESSAGE_KIND)

    assert slack.delivery_ids() == [delivery_id]
    entry = ledger(db)[delivery_id]
    assert (entry["status"], entry["attempts"]) == ("sent", 2)
    assert entry["operator"]["reason"] == "bot invited to the channel"


def test_an_unknown_delivery_is_refused(rt, db, slack):
    # A live lease and a missing reason: tests/contract/test_settle.py, for every kind.
    with pytest.raises(SettleRefused, match="no delivery"):
        release(rt, "m:nope:20270104T090000Z", "typo", "ana")


def test_an_old_failed_occurrence_is_not_released_while_a_newer_one_is_in_flight(
    rt, db, slack, api, capsys
):
    """The issue's case: a failed occurrence, an edit that re-arms the series, the next
    occurrence in flight; releasing the old one would take the message back from it."""
    mid = seed_message(
        db, status="recurring", send_at=None, rrule="FREQ=DAILY", dtstart="2027-01-04T09:00"
    )
    slack.inject(Fault(kind="error", code="channel_not_found", times=1))
    run_kind(rt, MESSAGE_KIND)
    old = message_delivery_id(mid, T0)
    assert (message(db, mid)["status"], ledger(db)[old]["status"]) == ("failed", "failed")
    assert call(api, "PUT", f"/messages/{mid}", {"text": "Stand-up (fixed channel)"})[0] == 200
    rt.clock.advance(timedelta(days=1))
    newer = claim_occurrence(rt, MESSAGE_KIND, db.collection(MESSAGES).document(mid).get())
    assert isinstance(newer, Claim) and newer.delivery_id == message_delivery_id(
        mid, T0 + timedelta(days=1)
    )
    capsys.readouterr()

    code = main(["release", old, "--reason", "channel fixed", "--by", "ana"])
    finalize(rt, newer, send(rt, newer))  # the worker in flight records its post
    rt.clock.advance(timedelta(minutes=10))
    run_kind(rt, MESSAGE_KIND)

    assert slack.delivery_ids() == [newer.delivery_id]  # the old occurrence is not posted
    entries = ledger(db)
    assert (entries[old]["status"], entries[newer.delivery_id]["status"]) == ("failed", "sent")
    assert message(db, mid)["status"] == "recurring"
    error = capsys.readouterr().err
    assert code == 2 and "not the current occurrence" in error
    assert old in error and newer.delivery_id in error


# --- every action against every ledger x message state ------------------------------------

MESSAGE_STATUSES = (
    "pending",
    "recurring",
    "sending",
    "sent",
    "completed",
    "failed",
    "cancelled",
    "paused",
    "unconfirmed",
)
SETTLEABLE = ("sending", "unconfirmed", "failed")
OLD, NEW = T0, T0 + timedelta(days=1)  # the occurrence acted on, and the one after it


def table():
    for action in ("release", "mark-delivered"):
        for entry_status in LEDGER_STATUSES:
            for message_status in MESSAGE_STATUSES:
                # Where the message is: on the occurrence acted on, or moved on to the next.
                for on in ("old", "new") if message_status in SETTLEABLE else ("new",):
                    yield pytest.param(
                        action,
                        entry_status,
                        message_status,
                        on,
                        id=f"{action}-{entry_status}-{message_status}-on_{on}",
                    )


def seed_state(rt, db, entry_status, message_status, on):
    """A daily series whose occurrence OLD has a ledger entry in `entry_status` (its lease
    long expired) and which is `message_status` on OLD or on NEW, as stored. A message
    `sending` NEW is claimed for real: the returned claim is the worker still in flight."""
    rt.clock.set(NEW + timedelta(minutes=1))
    mid = seed_message(
        db,
        status="recurring",
        send_at=None,
        rrule="FREQ=DAILY",
        dtstart="2027-01-01T09:00",
        next_run_at=NEW,
    )
    entry = {
        "kind": "message",
        "message_id": mid,
        "occurrence_at": OLD,
        "channel": "C0123ABCD",
        "status": entry_status,
        "worker": GONE,
        "attempts": 1,
        "claimed_at": OLD,
        "lease_expires_at": OLD + timedelta(seconds=300),
        "slack_ts": "1799000000.000001" if entry_status == "sent" else None,
        "sent_at": None,
        "error": None,
    }
    db.collection("deliveries").document(message_delivery_id(mid, OLD)).set(entry)
    ref = db.collection(MESSAGES).document(mid)
    current = OLD if on == "old" else NEW
    if message_status == "sending" and on == "new":
        claim = claim_occurrence(rt, MESSAGE_KIND, ref.get())
        assert isinstance(claim, Claim)
        return mid, claim
    fields = {"status": message_status, "next_run_at": current}
    if message_status == "sending":
        fields["lease"] = {"owner": GONE, "expires_at": OLD + timedelta(seconds=300)}
        fields["lease"]["occurrence_at"] = OLD
    elif message_status in ("pending", "recurring") and on == "old":
        fields["occurrence_at"] = OLD  # a retry pinned to OLD
    elif message_status in ("failed", "unconfirmed") and on == "new":
        db.collection("deliveries").document(message_delivery_id(mid, NEW)).set(
            entry | {"occurrence_at": NEW, "status": message_status}
        )
    ref.update(fields)
    return mid, None


@pytest.mark.parametrize(("action", "entry_status", "message_status", "on"), list(table()))
def test_no_operator_action_posts_twice_or_leaves_an_entry_stuck(
    rt, db, slack, capsys, action, entry_status, message_status, on
):
    mid, in_flight = seed_state(rt, db, entry_status, message_status, on)
    old = message_delivery_id(mid, OLD)
    before = (message(db, mid), ledger(db)[old])
    capsys.readouterr()

    args = ["--ts", SEEN_TS] if action == "mark-delivered" else []
    code = main([action, old, *args, "--reason", "checked by hand", "--by", "ana"])
    after = (message(db, mid), ledger(db)[old])

    allowed = entry_status in ("claimed", "unconfirmed", "failed") and on == "old"
    if not allowed:
        assert code == 2 and old in capsys.readouterr().err
        assert after == before  # a refused action writes nothing
        if in_flight is None:
            return  # nothing written and nobody sending: no pass can tell a difference
    if in_flight is not None:
        finalize(rt, in_flight, send(rt, in_flight))  # the worker in flight records its post
    rt.clock.advance(timedelta(minutes=10))
    run_kind(rt, MESSAGE_KIND)
    run_kind(rt, MESSAGE_KIND)
    posted = Counter(slack.delivery_ids())
    assert all(count == 1 for count in posted.values()), posted
    entries = ledger(db)
    stuck = [i for i, e in entries.items() if i != old and e["status"] in ("claimed", "released")]
    assert stuck == []
    if not allowed:
        return
    assert code == 0
    if action == "release":
        assert posted[old] == 1 and entries[old]["status"] == "sent"
    else:
        assert posted[old] == 0 and (entries[old]["status"], entries[old]["slack_ts"]) == (
            "sent",
            SEEN_TS,
        )
    assert entries[old]["operator"]["by"] == "ana"


def test_a_lease_held_for_a_person_is_settled_not_refused_as_live(rt, db, slack):
    mid = seed_message(db)
    claim = claim_occurrence(rt, MESSAGE_KIND, db.collection(MESSAGES).document(mid).get())
    assert isinstance(claim, Claim)
    # The ledger says unconfirmed while the message still holds the lease: reconciliation
    # cannot settle that, and holds the lease (its expiry pushed ahead) for a person.
    db.collection("deliveries").document(claim.delivery_id).update({"status": "unconfirmed"})
    rt.clock.advance(timedelta(seconds=301))
    run_kind(rt, MESSAGE_KIND)
    assert "held_since" in message(db, mid)["lease"]

    assert main(["mark-delivered", claim.delivery_id, "--ts", SEEN_TS, "--reason", "seen"]) == 0

    assert (message(db, mid)["status"], ledger(db)[claim.delivery_id]["status"]) == ("sent", "sent")
