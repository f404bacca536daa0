"""Operator actions on rotation days, through the same CLI as messages."""

from __future__ import annotations

import json
from collections import Counter
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from core.store import ROTATIONS
from emulator.slack_standin import Fault
from processor.abc import Claim
from processor.claim import claim_occurrence
from processor.deliver import send
from processor.finalize import finalize
from processor.kind_pass import run_kind
from rotations.kind import ROTATION_DAY_KIND
from targets.kinds import run_pass
from targets.operator import main, release
from tests.fixtures.clock import LEASE, past_lease
from tests.fixtures.deliveries import ledger
from tests.fixtures.operator import GONE, LEDGER_STATUSES, SEEN_TS
from tests.fixtures.rotations import (
    ALICE,
    BOB,
    CAROL,
    MONDAY,
    day_entry,
    mentioned,
    rotation,
    seed_rotation,
)
from tests.fixtures.runtime import ROOT

pytestmark = pytest.mark.usefixtures("cli_on_the_test_clock")

DAY = f"r:standup:{MONDAY}"


def unconfirmed_day(rt, db, slack):
    seed_rotation(db)
    slack.inject(Fault(kind="drop_after_receipt", times=1))
    slack.inject(Fault(kind="error", code="missing_scope", method="conversations.history"))
    run_pass(rt)
    past_lease(rt)
    run_pass(rt)
    assert day_entry(db, MONDAY)["status"] == "unconfirmed"


def test_a_failed_day_is_not_released(rt, db, slack, capsys):
    """Its turn was rolled back and handed on: releasing it would post it twice. (A live
    lease and a missing reason are refused for every kind: tests/contract/test_settle.py.)"""
    seed_rotation(db, "broken")
    slack.inject(Fault(kind="error", code="channel_not_found"))
    for _ in range(31):  # retried with backoff up to MAX_ATTEMPTS, then failed
        rt.clock.advance(timedelta(minutes=1))
        run_pass(rt)
    assert main(["release", f"r:broken:{MONDAY}", "--reason", "x"]) == 2
    assert "rolled back" in capsys.readouterr().err


def test_release_after_an_edit_keeps_the_edit_and_gives_the_turn_back(rt, db, slack):
    seed_rotation(db)
    slack.inject(Fault(kind="server_error", status=503, times=1))
    slack.inject(Fault(kind="error", code="missing_scope", method="conversations.history"))
    run_pass(rt)
    past_lease(rt)
    run_pass(rt)  # unconfirmed, the day still claimed: Alice's turn, Bob next
    newcomer = "U04DDDDDD"
    db.collection(ROTATIONS).document("standup").update(
        {"members": [newcomer, ALICE, BOB, CAROL], "cursor": 2}  # an edit kept Bob next
    )

    release(rt, DAY, "never arrived", "ana")
    run_pass(rt)

    assert mentioned(slack) == [ALICE]
    doc = rotation(db)
    assert doc["members"] == [newcomer, ALICE, BOB, CAROL]  # the edit stands
    assert doc["members"][doc["cursor"]] == BOB  # and Bob is next again


def test_releasing_a_day_that_is_over_gives_the_member_the_next_turn_and_settles_it(rt, db, slack):
    seed_rotation(db)
    slack.inject(Fault(kind="server_error", status=503, times=1))
    slack.inject(Fault(kind="error", code="missing_scope", method="conversations.history"))
    run_pass(rt)
    past_lease(rt)
    run_pass(rt)  # Monday unconfirmed; nobody looks until Tuesday
    slack.clear_faults()
    rt.clock.set(datetime(2027, 1, 5, 8, 0, tzinfo=UTC))  # Tuesday 09:00 in Berlin

    assert main(["release", DAY, "--reason", "never arrived", "--by", "ana"]) == 0
    rt.clock.set(datetime(2027, 1, 5, 8, 31, tzinfo=UTC))
    run_pass(rt)
    run_pass(rt)

    assert mentioned(slack) == [ALICE]  # Tuesday's turn, given back to Alice
    monday = day_entry(db, MONDAY)
    assert (monday["status"], monday["reason"]) == ("skipped", "day_ended")
    assert day_entry(db, "2027-01-05")["status"] == "sent"


# --- every action against every ledger x rotation state -----------------------------------

# Where the rotation is: holding Monday under an expired lease, on Monday with no lease
# (after an unconfirmed post), claiming Tuesday right now, or back on Monday after a rate
# limited Tuesday was rolled back.
ROTATION_STATES = ("held", "open", "next_in_flight", "next_released")
MONDAY_DUE = datetime(2027, 1, 4, 8, 30, tzinfo=UTC)
TUESDAY = "2027-01-05"
TUESDAY_DUE = MONDAY_DUE + timedelta(days=1)


def day_table():
    for action in ("release", "mark-delivered"):
        for entry_status in LEDGER_STATUSES:
            for state in ROTATION_STATES:
                for status in ("active", "paused"):
                    yield pytest.param(
                        action,
                        entry_status,
                        state,
                        status,
                        id=f"{action}-{entry_status}-{state}-{status}",
                    )


def entry_of(day, due, status, member):
    return {
        "kind": "rotation",
        "rotation_id": "standup",
        "occurrence_date": day,
        "occurrence_at": due,
        "channel": "C0123ABCD",
        "member": member,
        "status": status,
        "worker": GONE,
        "attempts": 1,
        "claimed_at": due,
        "lease_expires_at": due + LEASE,
        "slack_ts": "1799000000.000001" if status == "sent" else None,
        "sent_at": None,
        "error": None,
    }


def seed_day_state(rt, db, entry_status, state, status):
    """Monday's entry in `entry_status` (its lease long expired) and the rotation in `state`
    and `status`, as stored. A rotation claiming Tuesday is claimed for real: the returned
    claim is the worker still in flight."""
    deliveries = db.collection("deliveries")
    deliveries.document(DAY).set(entry_of(MONDAY, MONDAY_DUE, entry_status, ALICE))
    rollback = {"last_processed_date": None, "cursor": 0, "members": [ALICE, BOB, CAROL]}
    fields: dict[str, Any] = {
        "last_processed_date": MONDAY,
        "cursor": 1,
        "next_run_at": TUESDAY_DUE,
    }
    if state == "held":
        rt.clock.set(MONDAY_DUE + timedelta(minutes=40))
        lease = {"owner": GONE, "expires_at": MONDAY_DUE + LEASE, "occurrence_date": MONDAY}
        fields |= {"lease": lease | {"member": ALICE}, "rollback": rollback}
    elif state == "open":
        rt.clock.set(MONDAY_DUE + timedelta(minutes=40))
        fields |= {"rollback": rollback}
    elif state == "next_released":
        rt.clock.set(TUESDAY_DUE + timedelta(minutes=10))
        fields |= {"next_run_at": TUESDAY_DUE + timedelta(minutes=5)}
        deliveries.document(f"r:standup:{TUESDAY}").set(
            entry_of(TUESDAY, TUESDAY_DUE, "released", BOB)
        )
    else:
        rt.clock.set(TUESDAY_DUE + timedelta(minutes=1))
    seed_rotation(db, **fields)
    ref = db.collection(ROTATIONS).document("standup")
    claim = (
        claim_occurrence(rt, ROTATION_DAY_KIND, ref.get()) if state == "next_in_flight" else None
    )
    assert claim is None or isinstance(claim, Claim)
    ref.update({"status": status})
    return claim


def held(db):
    return {i for i, e in ledger(db).items() if e["status"] in ("claimed", "released")}


@pytest.mark.parametrize(("action", "entry_status", "state", "status"), list(day_table()))
def test_no_operator_action_on_a_day_posts_twice_or_leaves_a_day_stuck(
    rt, db, slack, capsys, action, entry_status, state, status
):
    in_flight = seed_day_state(rt, db, entry_status, state, status)
    before = (rotation(db), day_entry(db, MONDAY))
    stuck_before = held(db) - {DAY} - ({in_flight.delivery_id} if in_flight else set())
    capsys.readouterr()

    args = ["--ts", SEEN_TS] if action == "mark-delivered" else []
    code = main([action, DAY, *args, "--reason", "checked by hand", "--by", "ana"])
    after = (rotation(db), day_entry(db, MONDAY))

    allowed = (
        entry_status in ("claimed", "unconfirmed")
        and state in ("held", "open")
        and (action == "mark-delivered" or status == "active")
    )
    if not allowed:
        assert code == 2 and DAY in capsys.readouterr().err
        assert after == before  # a refused action writes nothing
        if in_flight is None:
            return  # nothing written and nobody posting: no pass can tell a difference
    if in_flight is not None:  # the worker in flight records its post
        finalize(rt, in_flight, send(rt, in_flight))
    rt.clock.advance(timedelta(minutes=10))
    run_kind(rt, ROTATION_DAY_KIND)
    run_kind(rt, ROTATION_DAY_KIND)
    posted = Counter(slack.delivery_ids())
    assert all(count == 1 for count in posted.values()), posted
    assert held(db) - {DAY} <= stuck_before
    if not allowed:
        return
    assert code == 0
    entry = day_entry(db, MONDAY)
    if action == "release":
        assert (posted[DAY], entry["status"]) == (1, "sent")
    else:
        assert (posted[DAY], entry["status"], entry["slack_ts"]) == (0, "sent", SEEN_TS)
    assert entry["operator"]["by"] == "ana"


def test_the_newest_day_query_has_its_composite_index():
    indexes = json.loads((ROOT / "firestore.indexes.json").read_text())["indexes"]
    fields = [
        [(f["fieldPath"], f["order"]) for f in index["fields"]]
        for index in indexes
        if index["collectionGroup"] == "deliveries"
    ]
    assert [("rotation_id", "ASCENDING"), ("occurrence_date", "DESCENDING")] in fields
