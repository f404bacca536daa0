"""No state without a way out (issue 16, point 5): every lease reconciliation meets is
settled, or held for a person without blocking the others, escalated within a bounded time,
and ended by an operator action."""

from __future__ import annotations

import itertools
from datetime import timedelta
from typing import Any

import pytest
from google.cloud import firestore

from core.store import MESSAGES, ROTATIONS
from emulator.slack_standin import Fault
from messages.kind import MESSAGE_KIND
from processor.abc import Claim
from processor.claim import claim_occurrence
from processor.fail_held import FailHeldRefused, fail_held
from processor.one_pass import until_idle
from processor.tick import run_tick
from rotations.kind import ROTATION_DAY_KIND
from targets.kinds import KINDS, run_pass
from targets.operator import main
from tests.fixtures.clock import T0, past_lease
from tests.fixtures.deliveries import ledger
from tests.fixtures.messages import message, seed_message
from tests.fixtures.rotations import (
    ALICE,
    BOB,
    MONDAY,
    day_entry,
    mentioned,
    rotation,
    seed_rotation,
)
from tests.fixtures.runtime import alerting
from tests.fixtures.slack import ALERTS, alerts


def claimed_message(rt: Any, db: Any, **fields: Any) -> str:
    """A message claimed by a worker that then died before posting."""
    mid = seed_message(db, **fields)
    assert isinstance(
        claim_occurrence(rt, MESSAGE_KIND, db.collection(MESSAGES).document(mid).get()), Claim
    )
    return mid


def test_a_rotation_lease_repaired_from_its_ledger_is_reconciled_and_posted_once(rt, db, slack):
    seed_rotation(db)
    assert isinstance(
        claim_occurrence(rt, ROTATION_DAY_KIND, db.collection(ROTATIONS).document("standup").get()),
        Claim,
    )
    # The worker died before posting, and the rotation was then written back as it was
    # before the claim (a restore, another service): it says Monday is open, the ledger
    # holds Monday claimed. The claim repairs the rotation from the ledger.
    db.collection(ROTATIONS).document("standup").update(
        {
            "lease": firestore.DELETE_FIELD,
            "rollback": firestore.DELETE_FIELD,
            "last_processed_date": firestore.DELETE_FIELD,
            "cursor": 0,
            "next_run_at": T0,
        }
    )
    assert run_pass(rt)["duplicates"] == 1 and slack.posts() == []

    past_lease(rt)
    for _ in range(3):  # reconciled: absent from history, released; posted after 1 minute
        run_pass(rt)
        rt.clock.advance(timedelta(minutes=1))

    assert mentioned(slack) == [ALICE]
    assert day_entry(db, MONDAY)["status"] == "sent"
    assert rotation(db)["cursor"] == 1 and "lease" not in rotation(db)


def test_a_rotation_lease_stored_without_rollback_is_reconciled_too(rt, db, slack):
    # What the repair wrote before it kept `rollback`: a lease, the day taken, no rollback.
    seed_rotation(
        db,
        last_processed_date=MONDAY,
        lease={"owner": "gone", "expires_at": T0, "occurrence_date": MONDAY, "member": ALICE},
    )
    db.collection("deliveries").document(f"r:standup:{MONDAY}").set(
        {
            "kind": "rotation",
            "rotation_id": "standup",
            "occurrence_date": MONDAY,
            "occurrence_at": T0,
            "channel": "C0123ABCD",
            "member": ALICE,
            "status": "claimed",
            "worker": "gone",
            "attempts": 1,
            "claimed_at": T0,
            "lease_expires_at": T0,
        }
    )

    # Read once the claim's post would have been answered (two minutes on), then released
    # and posted a minute later.
    for _ in range(4):
        run_pass(rt)
        rt.clock.advance(timedelta(minutes=1))

    assert mentioned(slack) == [ALICE]
    assert day_entry(db, MONDAY)["status"] == "sent"


def test_held_leases_leave_the_head_of_the_page_and_are_alerted_once(settings, db, slack, clock):
    rt = alerting(settings, db, clock, tick_limit=2)
    broken = [claimed_message(rt, db) for _ in range(3)]
    db.collection(MESSAGES).document(broken[0]).update({"text": ""})  # no longer parses
    for mid in broken[1:]:  # its ledger entry says something else than `claimed`
        [entry_id] = [k for k in ledger(db) if k.startswith(f"m:{mid}:")]
        db.collection("deliveries").document(entry_id).update({"status": "sent"})
    rt.clock.advance(timedelta(seconds=10))
    good = claimed_message(rt, db, send_at=rt.clock.now(), next_run_at=rt.clock.now())
    past_lease(rt)

    for _ in range(3):  # two expired leases a page: the held ones first
        run_tick(rt, MESSAGE_KIND)
        rt.clock.advance(timedelta(seconds=1))

    [good_entry] = [v for k, v in ledger(db).items() if k.startswith(f"m:{good}:")]
    assert good_entry["status"] == "released"  # reconciled: not in history, retried
    assert len(alerts(slack)) == 3  # one per held document, not one per pass
    for mid in broken:
        lease = message(db, mid)["lease"]
        assert lease["expires_at"] > rt.clock.now() and "held_code" in lease
    rt.clock.advance(timedelta(minutes=20))
    run_tick(rt, MESSAGE_KIND)
    assert len(alerts(slack)) == 3

    # A person ends them: nothing is posted, the ledger keeps what it says.
    assert main(["fail-held", f"{MESSAGES}/{broken[1]}", "--reason", "sent by hand"]) == 0
    doc = message(db, broken[1])
    assert (doc["status"], doc["last_error"]["code"]) == ("failed", "operator_failed")
    assert "lease" not in doc
    assert [v["status"] for k, v in ledger(db).items() if k.startswith(f"m:{broken[1]}:")] == [
        "sent"
    ]


def test_a_rotation_day_whose_ledger_disagrees_is_held_alerted_and_failed_by_hand(
    settings, db, slack, clock, capsys
):
    rt = alerting(settings, db, clock)
    seed_rotation(db)
    assert isinstance(
        claim_occurrence(rt, ROTATION_DAY_KIND, db.collection(ROTATIONS).document("standup").get()),
        Claim,
    )
    db.collection("deliveries").document(f"r:standup:{MONDAY}").update({"status": "released"})
    past_lease(rt)

    for _ in range(3):
        run_pass(rt)
        rt.clock.advance(timedelta(minutes=20))

    assert len(alerts(slack)) == 1
    assert rotation(db)["lease"]["held_code"] == "ledger_mismatch"
    assert main(["fail-held", f"{ROTATIONS}/nope", "--reason", "x"]) == 2
    assert "no document" in capsys.readouterr().err
    assert main(["fail-held", f"{ROTATIONS}/standup", "--reason", "checked the channel"]) == 0
    doc = rotation(db)
    assert "lease" not in doc and doc["last_processed_date"] == MONDAY
    rt.clock.advance(timedelta(days=1))
    run_pass(rt)
    assert [p.channel for p in slack.posts()][-1] == "C0123ABCD"
    assert mentioned(slack)[-1] == BOB  # the day was given up; the order goes on


def test_a_day_held_past_the_next_turns_time_is_not_due_and_passes_go_idle(
    settings, db, slack, clock
):
    """A day held for a person keeps its lease past the time of the rotation's next turn:
    that is reconciliation's and the operator's, not a claim's, so the passes go idle."""
    rt = alerting(settings, db, clock)
    seed_rotation(db)
    snap = db.collection(ROTATIONS).document("standup").get()
    assert isinstance(claim_occurrence(rt, ROTATION_DAY_KIND, snap), Claim)
    db.collection("deliveries").document(f"r:standup:{MONDAY}").update({"status": "released"})
    past_lease(rt)
    run_pass(rt)  # held: ledger_mismatch
    rt.clock.advance(timedelta(days=1))  # Tuesday's turn time has come

    passes = list(itertools.islice(until_idle(rt, run_pass), 3))

    assert [(p["due"], p["claimed"]) for p in passes] == [(0, 0)]
    assert rotation(db)["lease"]["held_code"] == "ledger_mismatch"
    assert len([p for p in slack.posts() if p.channel != ALERTS]) == 0


def test_history_unreadable_for_an_hour_is_escalated_once(settings, db, slack, clock):
    rt = alerting(settings, db, clock)
    mid = claimed_message(rt, db)
    slack.inject(Fault(kind="server_error", status=503, method="conversations.history"))
    past_lease(rt)

    for _ in range(30):  # two and a half hours of passes, every five minutes
        run_tick(rt, MESSAGE_KIND)
        rt.clock.advance(timedelta(minutes=5))

    [alert] = alerts(slack)
    assert mid in alert and "http_503" in alert
    assert message(db, mid)["status"] == "sending"  # still held: never resent on a guess
    [entry] = [v for k, v in ledger(db).items() if k.startswith(f"m:{mid}:")]
    assert entry["history_escalated_at"] >= T0 + timedelta(hours=1)


def test_fail_held_refuses_a_live_lease_a_missing_reason_and_a_document_without_lease(rt, db):
    mid = claimed_message(rt, db)
    seed_rotation(db)

    with pytest.raises(FailHeldRefused, match="live lease"):
        fail_held(rt, KINDS, f"{MESSAGES}/{mid}", "impatient", "ana")
    with pytest.raises(FailHeldRefused, match="reason"):
        fail_held(rt, KINDS, f"{MESSAGES}/{mid}", " ", "ana")
    with pytest.raises(FailHeldRefused, match="no lease"):
        fail_held(rt, KINDS, f"{ROTATIONS}/standup", "x", "ana")
    with pytest.raises(FailHeldRefused, match="is not"):
        fail_held(rt, KINDS, f"deliveries/{mid}", "x", "ana")
    assert message(db, mid)["status"] == "sending"


def test_fail_held_ends_a_sending_message_that_has_no_lease_at_all(rt, db, slack):
    # Written by hand: `sending` with no `lease` field, which no query of reconciliation finds
    # (doctor reports it as missing_lease).
    mid = seed_message(db, status="sending")

    fail_held(rt, KINDS, f"{MESSAGES}/{mid}", "imported half-sent", "ana")

    stored = message(db, mid)
    assert (stored["status"], stored["last_error"]["code"]) == ("failed", "operator_failed")
    assert slack.posts() == []
