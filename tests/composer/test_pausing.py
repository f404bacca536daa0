"""Pause and resume: a paused message is never claimed; resuming picks up from now without
firing what fell inside the pause."""

from __future__ import annotations

from datetime import timedelta

from messages.kind import MESSAGE_KIND
from processor.kind_pass import run_kind
from tests.fixtures.api import call
from tests.fixtures.clock import T0
from tests.fixtures.deliveries import ledger
from tests.fixtures.messages import message, seed_message

DAY = timedelta(days=1)


def test_a_paused_series_is_never_sent_and_resumes_from_now(api, db, slack, rt, clock):
    mid = seed_message(
        db,
        status="recurring",
        send_at=None,
        rrule="FREQ=DAILY",
        dtstart="2027-01-04T09:00",
        next_run_at=T0 + DAY,
    )
    assert call(api, "POST", f"/messages/{mid}/pause")[0] == 200

    clock.set(T0 + 3 * DAY + timedelta(hours=1))
    run_kind(rt, MESSAGE_KIND)
    assert slack.posts() == []
    status, resumed = call(api, "POST", f"/messages/{mid}/resume")

    assert status == 200
    assert resumed["status"] == "recurring"
    assert message(db, mid)["next_run_at"] == T0 + 4 * DAY  # first at or after now
    assert ledger(db) == {}  # the paused days are neither sent nor recorded
    clock.set(T0 + 4 * DAY)
    assert run_kind(rt, MESSAGE_KIND)["sent"] == 1


def test_a_one_off_resumed_after_its_send_at_goes_out_now(api, db, slack, rt, clock):
    mid = seed_message(db, next_run_at=T0 + timedelta(hours=1), send_at=T0 + timedelta(hours=1))
    call(api, "POST", f"/messages/{mid}/pause")
    clock.set(T0 + timedelta(hours=5))

    call(api, "POST", f"/messages/{mid}/resume")

    assert message(db, mid)["next_run_at"] == clock.now()
    assert run_kind(rt, MESSAGE_KIND)["sent"] == 1


def test_pause_and_resume_refuse_the_wrong_status(api, db):
    sending = seed_message(db, status="sending")
    pending = seed_message(db)

    assert call(api, "POST", f"/messages/{sending}/pause")[0] == 409
    assert call(api, "POST", f"/messages/{pending}/resume")[0] == 409
    assert call(api, "POST", "/messages/nope/pause")[0] == 404
    assert message(db, sending)["status"] == "sending"
    assert message(db, pending)["status"] == "pending"
