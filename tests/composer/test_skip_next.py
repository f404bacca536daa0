"""`POST /messages/{id}/skip-next`: a series leaves out its next occurrence (an exdate, the
one after it next), a one-off ends cancelled; `If-Match` honoured; nothing is posted for the
skipped occurrence."""

from __future__ import annotations

from datetime import timedelta

from messages.kind import MESSAGE_KIND
from processor.kind_pass import run_kind
from tests.fixtures.api import call
from tests.fixtures.clock import T0
from tests.fixtures.messages import message, seed_message, seed_series

DAY = timedelta(days=1)


def test_a_series_skips_its_next_occurrence_and_sends_the_one_after(api, db, slack, rt, clock):
    mid = seed_series(
        db, next_run_at=T0 + DAY, timezone="Europe/Berlin", dtstart="2027-01-01T10:00"
    )

    status, answer = call(api, "POST", f"/messages/{mid}/skip-next")

    assert status == 200, answer
    assert answer["exdates"] == ["2027-01-05T10:00:00"]  # Berlin wall clock of 09:00 UTC
    assert answer["next_run_at"] == (T0 + 2 * DAY).isoformat()
    clock.set(T0 + DAY)
    assert run_kind(rt, MESSAGE_KIND)["sent"] == 0
    clock.set(T0 + 2 * DAY)
    assert run_kind(rt, MESSAGE_KIND)["sent"] == 1
    assert len(slack.posts()) == 1


def test_a_one_off_skipped_ends_cancelled_and_is_never_sent(api, db, slack, rt, clock):
    mid = seed_message(db, send_at=T0 + DAY, next_run_at=T0 + DAY)

    status, answer = call(api, "POST", f"/messages/{mid}/skip-next")

    assert (status, answer["status"]) == (200, "cancelled")
    clock.set(T0 + DAY)
    run_kind(rt, MESSAGE_KIND)
    assert slack.posts() == []


def test_skip_next_honours_if_match_and_refuses_a_message_not_waiting(api, db):
    mid = seed_series(db, next_run_at=T0 + DAY)
    stale = {"If-Match": "7"}
    assert call(api, "POST", f"/messages/{mid}/skip-next", headers=stale)[0] == 412
    assert "exdates" not in message(db, mid)
    paused = seed_message(db, status="paused")
    status, answer = call(api, "POST", f"/messages/{paused}/skip-next")
    assert status == 409
    assert answer["details"] == [{"field": "status", "message": "paused"}]
