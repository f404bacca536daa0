"""Rotations through the processing pass, against the Firestore emulator and the Slack
stand-in: one claimed day per timezone, the member named in the post, rollback on explicit
failure, reconciliation of ambiguous posts, and dry runs that write nothing."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from core.models import rotation_delivery_id
from core.store import ROTATIONS
from emulator.slack_standin import Fault
from processor.abc import Claim
from processor.claim import claim_occurrence
from processor.outcome import Result
from rotations import kind as rotation_kind
from rotations.kind import ROTATION_DAY_KIND
from targets.kinds import run_pass
from tests.fixtures.clock import past_lease
from tests.fixtures.deliveries import ledger
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
from tests.fixtures.runtime import make_runtime


def test_a_due_rotation_posts_todays_turn_once_naming_the_member(rt, db, slack):
    seed_rotation(db)

    summary = run_pass(rt)
    again = run_pass(rt)  # a second pass the same day finds the day claimed

    assert (summary["sent"], summary["rotations"]["sent"], again["sent"]) == (1, 1, 0)
    [post] = slack.posts()
    assert post.text == f"Today's stand-up host: <@{ALICE}>"
    assert post.delivery_id == rotation_delivery_id("standup", datetime(2027, 1, 4).date())
    doc = rotation(db)
    assert (doc["last_processed_date"], doc["cursor"], doc["last_member"]) == (MONDAY, 1, ALICE)
    assert "lease" not in doc and "rollback" not in doc
    assert doc["next_run_at"] == datetime(2027, 1, 5, 8, 30, tzinfo=UTC)  # Tuesday 09:30 CET
    entry = day_entry(db, MONDAY)
    assert (entry["status"], entry["member"], entry["slack_ts"]) == ("sent", ALICE, post.ts)
    assert entry["occurrence_date"] == MONDAY


def test_turns_follow_the_member_order_day_after_day_and_skip_the_weekend(rt, db, slack):
    seed_rotation(db)

    for _ in range(7 * 24):  # a week of hourly passes, Monday to Sunday
        run_pass(rt)
        rt.clock.advance(timedelta(hours=1))

    assert mentioned(slack) == [ALICE, BOB, CAROL, ALICE, BOB]
    days = sorted(k.split(":")[-1] for k in ledger(db))
    assert days == ["2027-01-04", "2027-01-05", "2027-01-06", "2027-01-07", "2027-01-08"]


def test_a_second_processor_sees_the_claim_and_skips(rt, db, slack, settings, clock):
    seed_rotation(db)
    other = make_runtime(settings, db, clock, "worker-b")
    snap = db.collection(ROTATIONS).document("standup").get()

    first = claim_occurrence(rt, ROTATION_DAY_KIND, snap)
    second = claim_occurrence(
        other, ROTATION_DAY_KIND, snap
    )  # read the same version before the claim landed
    fresh = claim_occurrence(
        other, ROTATION_DAY_KIND, db.collection(ROTATIONS).document("standup").get()
    )

    assert isinstance(first, Claim)
    assert (second, fresh) == (Result.DUPLICATE, Result.SKIPPED)
    assert day_entry(db, MONDAY)["worker"] == "worker-a"


def test_a_skipped_member_hands_the_turn_on_and_goes_next(rt, db, slack):
    seed_rotation(db, skips={MONDAY: [ALICE]})

    run_pass(rt)
    rt.clock.advance(timedelta(days=1))
    run_pass(rt)
    rt.clock.advance(timedelta(days=1))
    run_pass(rt)

    assert mentioned(slack) == [BOB, ALICE, CAROL]
    assert day_entry(db, MONDAY)["member"] == BOB


def test_everyone_out_records_the_day_skipped_and_nobody_loses_a_turn(rt, db, slack):
    seed_rotation(db, skips={MONDAY: [ALICE, BOB, CAROL]})

    summary = run_pass(rt)
    rt.clock.advance(timedelta(days=1))
    run_pass(rt)

    assert summary["skipped"] == 1
    assert mentioned(slack) == [ALICE]
    entry = day_entry(db, MONDAY)
    assert (entry["status"], entry["reason"]) == ("skipped", "everyone_skipped")


def test_an_explicit_failure_rolls_the_claim_back_and_records_why(rt, db, slack, capsys):
    seed_rotation(db, last_processed_date="2026-12-31", cursor=2)
    slack.inject(Fault(kind="error", code="channel_not_found"))

    summary = run_pass(rt)

    assert summary["released"] == 1 and slack.posts() == []
    doc = rotation(db)
    assert (doc["last_processed_date"], doc["cursor"]) == ("2026-12-31", 2)
    assert doc["members"] == [ALICE, BOB, CAROL]
    assert doc["last_error"]["code"] == "channel_not_found"
    assert "lease" not in doc and "rollback" not in doc
    entry = day_entry(db, MONDAY)
    assert (entry["status"], entry["error"]["code"]) == ("released", "channel_not_found")
    errors = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    [line] = [e for e in errors if e["severity"] == "ERROR"]
    assert (line["rotation_id"], line["error_code"]) == ("standup", "channel_not_found")
    # Tried again the same day with backoff until MAX_ATTEMPTS, then failed...
    for _ in range(60):
        rt.clock.advance(timedelta(minutes=1))
        run_pass(rt)
    assert day_entry(db, MONDAY)["status"] == "failed"
    # ...but once fixed (an edit re-opens the day), the same member's turn goes out once.
    slack.clear_faults()
    db.collection(ROTATIONS).document("standup").update({"next_run_at": rt.clock.now()})
    assert run_pass(rt)["sent"] == 1
    assert mentioned(slack) == [CAROL]
    assert (day_entry(db, MONDAY)["status"], day_entry(db, MONDAY)["attempts"]) == ("sent", 6)


def test_a_failed_rotation_day_is_alerted_once_in_the_alert_channel(settings, db, slack, clock):
    rt = make_runtime(replace(settings, alert_channel="C0ALERTS1"), db, clock, "worker-a")
    seed_rotation(db)
    slack.inject(Fault(kind="error", code="is_archived", channel="C0123ABCD"))

    run_pass(rt)
    run_pass(rt)

    [alert] = slack.posts()
    assert alert.channel == "C0ALERTS1"
    assert "Rotation `standup`" in (alert.text or "") and "is_archived" in (alert.text or "")
    assert alert.delivery_id == f"alert:r:standup:{MONDAY}"


def test_a_rate_limited_post_is_rolled_back_and_retried_after_retry_after(rt, db, slack):
    seed_rotation(db)
    slack.inject(Fault(kind="rate_limit", retry_after=30, times=1))

    assert run_pass(rt)["released"] == 1
    assert rotation(db)["cursor"] == 0
    rt.clock.advance(timedelta(seconds=29))
    assert run_pass(rt)["sent"] == 0
    rt.clock.advance(timedelta(seconds=1))
    assert run_pass(rt)["sent"] == 1

    assert mentioned(slack) == [ALICE]
    assert rotation(db)["cursor"] == 1


def test_an_exception_in_our_code_after_the_claim_is_never_a_silent_loss(
    rt, db, slack, monkeypatch
):
    seed_rotation(db)

    def broken(text: str, member: str) -> Any:
        raise RuntimeError("renderer crashed")

    monkeypatch.setattr(rotation_kind, "render_turn", broken)
    assert run_pass(rt)["errors"] == 1  # logged; the pass goes on
    assert rotation(db)["lease"]["occurrence_date"] == MONDAY  # claimed, under a lease
    monkeypatch.undo()
    past_lease(rt)
    run_pass(rt)  # nothing in history: rolled back for another attempt
    rt.clock.advance(timedelta(minutes=1))
    run_pass(rt)

    assert mentioned(slack) == [ALICE]
    assert day_entry(db, MONDAY)["status"] == "sent"


def test_a_rotation_down_for_days_posts_only_todays_turn(rt, db, slack):
    # Last posted the Tuesday before; the processor was down until Monday 10:00 Berlin.
    seed_rotation(db, last_processed_date="2026-12-29", cursor=1)

    run_pass(rt)

    assert mentioned(slack) == [BOB]  # only today's turn, and the order did not move
    entries = {k.split(":")[-1]: v for k, v in ledger(db).items()}
    assert entries.pop(MONDAY)["status"] == "sent"
    # The turn days nothing ran on are on record, never posted (New Year's Day included:
    # this rotation has no holiday calendar).
    assert sorted(entries) == ["2026-12-30", "2026-12-31", "2027-01-01"]
    assert {(e["status"], e["reason"], e["member"]) for e in entries.values()} == {
        ("skipped", "missed", None)
    }


def test_before_send_time_nothing_is_posted_and_the_turn_waits_for_its_time(rt, db, slack):
    seed_rotation(db, send_time="11:15")  # 10:15Z; found early because next_run_at is past

    assert run_pass(rt)["sent"] == 0
    assert rotation(db)["next_run_at"] == datetime(2027, 1, 4, 10, 15, tzinfo=UTC)
    rt.clock.set(datetime(2027, 1, 4, 10, 15, tzinfo=UTC))
    assert run_pass(rt)["sent"] == 1


@pytest.mark.parametrize(
    ("zone", "now", "local_day"),
    [
        # UTC+14: Monday 09:00 there is still Sunday in UTC.
        ("Pacific/Kiritimati", datetime(2027, 1, 3, 19, 0, tzinfo=UTC), "2027-01-04"),
        # UTC-11: Monday 09:00 there is Monday evening in UTC.
        ("Pacific/Pago_Pago", datetime(2027, 1, 4, 20, 0, tzinfo=UTC), "2027-01-04"),
    ],
)
def test_the_claimed_day_is_the_teams_local_date(rt, db, slack, zone, now, local_day):
    seed_rotation(db, timezone=zone, send_time="09:00", next_run_at=now - timedelta(days=2))
    rt.clock.set(now - timedelta(minutes=1))
    assert run_pass(rt)["sent"] == 0  # 08:59 local
    rt.clock.set(now)

    assert run_pass(rt)["sent"] == 1
    assert rotation(db)["last_processed_date"] == local_day
    assert day_entry(db, local_day)["occurrence_at"] == now


def test_a_send_time_in_the_spring_forward_gap_posts_once_that_day(rt, db, slack):
    # 02:30 does not exist in New York on 2027-03-14 (a Sunday): the turn is at 03:30 EDT.
    seed_rotation(
        db,
        timezone="America/New_York",
        send_time="02:30",
        weekdays=[6],
        next_run_at=datetime(2027, 3, 13, tzinfo=UTC),
    )
    for hour in range(5, 10):
        rt.clock.set(datetime(2027, 3, 14, hour, 29, tzinfo=UTC))
        run_pass(rt)
        rt.clock.set(datetime(2027, 3, 14, hour, 30, tzinfo=UTC))
        run_pass(rt)

    assert len(slack.posts()) == 1
    assert day_entry(db, "2027-03-14")["occurrence_at"] == datetime(2027, 3, 14, 7, 30, tzinfo=UTC)
    assert day_entry(db, "2027-03-14")["sent_at"] == datetime(2027, 3, 14, 7, 30, tzinfo=UTC)


def test_a_dry_run_writes_nothing_claims_nothing_and_posts_nothing(rt, db, slack):
    seed_rotation(db)
    seed_rotation(db, "everyone-out", skips={MONDAY: [ALICE, BOB, CAROL]})

    def update_times() -> dict[str, Any]:
        return {f"{c.id}/{d.id}": d.update_time for c in db.collections() for d in c.stream()}

    before = update_times()
    summary = run_pass(rt, dry_run=True)

    assert update_times() == before and slack.posts() == []
    previews = {p["id"]: p for p in summary["previews"] if p["kind"] == "rotation"}
    assert previews["standup"]["member"] == ALICE
    assert previews["standup"]["text"] == f"Today's stand-up host: <@{ALICE}>"
    assert previews["standup"]["occurrence_date"] == MONDAY
    assert previews["everyone-out"]["skipped"] is True
    # The real pass then does what the preview said.
    run_pass(rt)
    assert [p.text for p in slack.posts()] == [previews["standup"]["text"]]


def test_the_pass_and_its_dry_run_count_due_rotations_as_due(rt, db, slack):
    seed_rotation(db)
    seed_rotation(db, "later", send_time="11:00", next_run_at=datetime(2027, 1, 4, 10, tzinfo=UTC))

    dry = run_pass(rt, dry_run=True)
    summary = run_pass(rt)
    again = run_pass(rt)

    assert (dry["due"], summary["due"], summary["sent"]) == (1, 1, 1)
    assert again["due"] == 0  # the day is claimed: no longer due


def test_a_rotation_that_cannot_take_turns_is_paused_with_a_reason(rt, db, slack):
    seed_rotation(db, members=[])

    assert run_pass(rt)["failed"] == 1

    doc = rotation(db)
    assert (doc["status"], doc["last_error"]["code"]) == ("paused", "invalid_members")
    assert run_pass(rt)["failed"] == 0  # paused: not tried every minute


def test_around_local_midnight_the_new_day_is_claimed_once_at_its_first_minute(rt, db, slack):
    # Tokyo (UTC+9): Monday's turn was taken; Tuesday's is due at 00:00 local = 15:00Z.
    seed_rotation(
        db,
        timezone="Asia/Tokyo",
        send_time="00:00",
        last_processed_date=MONDAY,
        next_run_at=datetime(2027, 1, 4, 14, 0, tzinfo=UTC),
    )
    rt.clock.set(datetime(2027, 1, 4, 14, 55, tzinfo=UTC))  # 23:55 Monday in Tokyo

    for _ in range(10):
        run_pass(rt)
        rt.clock.advance(timedelta(minutes=1))

    [post] = slack.posts()
    entry = day_entry(db, "2027-01-05")
    assert (entry["occurrence_date"], entry["sent_at"]) == (
        "2027-01-05",
        datetime(2027, 1, 4, 15, 0, tzinfo=UTC),
    )
    assert entry["slack_ts"] == post.ts
