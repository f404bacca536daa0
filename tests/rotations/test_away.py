"""Away periods through the processing pass: a member away on a day is skipped exactly as a
`skips` entry skips them, keeps their place, and takes their turn once back."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from targets.kinds import run_pass
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


def _week_of_passes(rt: Any) -> None:
    for _ in range(5):
        run_pass(rt)
        rt.clock.advance(timedelta(days=1))


def test_a_member_away_is_not_picked_and_keeps_their_place(rt, db, slack):
    seed_rotation(db, away=[{"member": ALICE, "from": MONDAY, "to": "2027-01-05"}])

    _week_of_passes(rt)  # Monday to Friday, one pass a day after 09:30 Berlin

    # Monday and Tuesday Alice is away: Bob and Carol take them; Wednesday she is back and
    # next, as a skipped member would be.
    assert mentioned(slack) == [BOB, CAROL, ALICE, BOB, CAROL]
    assert day_entry(db, MONDAY)["member"] == BOB


def test_everyone_away_records_the_day_skipped(rt, db, slack):
    away = [{"member": m, "from": MONDAY, "to": MONDAY} for m in (ALICE, BOB, CAROL)]
    seed_rotation(db, away=away)

    summary = run_pass(rt)

    assert summary["skipped"] == 1
    assert slack.posts() == []
    assert day_entry(db, MONDAY)["reason"] == "everyone_skipped"


def test_an_away_period_naming_no_member_pauses_the_rotation_with_its_code(rt, db, slack):
    seed_rotation(db, away=[{"member": "U09ZZZZZZ", "from": MONDAY, "to": MONDAY}])

    run_pass(rt)

    assert slack.posts() == []
    doc = rotation(db)
    assert (doc["status"], doc["last_error"]["code"]) == ("paused", "invalid_away")
