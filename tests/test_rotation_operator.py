"""Operator actions on rotation days, through the same CLI as messages."""

from __future__ import annotations

from datetime import timedelta

import pytest

from core.store import ROTATIONS
from emulator.slack_standin import Fault
from processor.one_pass import run_pass
from processor.operator import main, mark_delivered, release
from rotations.claim import DayClaim, claim_day
from rotations.operator import DayActionRefused
from tests.test_rotation_processor import (
    ALICE,
    BOB,
    CAROL,
    MONDAY,
    day_entry,
    mentioned,
    past_lease,
    rotation,
    seed_rotation,
)

DAY = f"r:standup:{MONDAY}"


def unconfirmed_day(rt, db, slack):
    seed_rotation(db)
    slack.inject(Fault(kind="drop_after_receipt", times=1))
    slack.inject(Fault(kind="error", code="missing_scope", method="conversations.history"))
    run_pass(rt)
    past_lease(rt)
    run_pass(rt)
    assert day_entry(db, MONDAY)["status"] == "unconfirmed"


def test_mark_delivered_settles_an_unconfirmed_day_and_the_order_goes_on(rt, db, slack):
    unconfirmed_day(rt, db, slack)
    [post] = slack.posts()

    mark_delivered(rt, DAY, post.ts, "seen in #standup", "ana")

    doc = rotation(db)
    assert (doc["last_slack_ts"], doc["last_member"], doc["cursor"]) == (post.ts, ALICE, 1)
    assert "lease" not in doc and "rollback" not in doc
    entry = day_entry(db, MONDAY)
    assert (entry["status"], entry["operator"]["reason"]) == ("sent", "seen in #standup")
    slack.clear_faults()
    rt.clock.advance(timedelta(days=1))
    run_pass(rt)
    assert mentioned(slack) == [ALICE, BOB]


def test_release_gives_the_member_their_turn_back_the_same_day(rt, db, slack):
    seed_rotation(db)
    slack.inject(Fault(kind="server_error", status=503, times=1))
    slack.inject(Fault(kind="error", code="missing_scope", method="conversations.history"))
    run_pass(rt)
    past_lease(rt)
    run_pass(rt)  # unconfirmed: Slack never had it, but history cannot say so
    assert slack.posts() == []

    assert main(["release", DAY, "--reason", "not in the channel", "--by", "ana"]) == 0
    run_pass(rt)

    assert mentioned(slack) == [ALICE]
    entry = day_entry(db, MONDAY)
    assert (entry["status"], entry["attempts"], entry["operator"]["action"]) == (
        "sent",
        2,
        "release",
    )


def test_failed_days_live_leases_and_missing_reasons_are_refused(rt, db, slack, capsys):
    seed_rotation(db)
    claim = claim_day(rt, db.collection(ROTATIONS).document("standup").get())
    assert isinstance(claim, DayClaim)

    with pytest.raises(DayActionRefused, match="live lease"):
        release(rt, DAY, "impatient", "ana")
    with pytest.raises(DayActionRefused, match="reason"):
        release(rt, DAY, " ", "ana")

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
