"""`POST /messages/{id}/occurrence`: one occurrence of a series edited alone, as an exdate of
the series and a one-off of its own, in one commit; idempotent under an Idempotency-Key."""

from __future__ import annotations

from datetime import timedelta

from messages.kind import MESSAGE_KIND
from processor.kind_pass import run_kind
from tests.fixtures.api import call
from tests.fixtures.clock import T0
from tests.fixtures.messages import message, seed_message, seed_series, stored_ids

DAY, HOUR = timedelta(days=1), timedelta(hours=1)


def test_one_occurrence_moves_and_changes_while_the_series_goes_on(api, db, slack, rt, clock):
    mid = seed_series(db, next_run_at=T0 + DAY, text="Stand-up", category=None)
    body = {
        "occurrence_at": (T0 + 2 * DAY).isoformat(),
        "text": "Stand-up moved to 10:00 today",
        "send_at": (T0 + 2 * DAY + HOUR).isoformat(),
    }

    status, answer = call(api, "POST", f"/messages/{mid}/occurrence", body)

    assert status == 201, answer
    assert answer["series"]["exdates"] == ["2027-01-06T09:00:00"]
    assert answer["series"]["next_run_at"] == (T0 + DAY).isoformat()
    one_off = answer["message"]
    assert (one_off["series_id"], one_off["status"], one_off["channel"]) == (
        mid,
        "pending",
        "C0123ABCD",
    )
    posted_by_pass = []
    for at in (T0 + DAY, T0 + 2 * DAY, T0 + 2 * DAY + HOUR, T0 + 3 * DAY):
        before = len(slack.posts())
        clock.set(at)
        run_kind(rt, MESSAGE_KIND)
        posted_by_pass.append([post.text for post in slack.posts()[before:]])
    assert posted_by_pass == [["Stand-up"], [], ["Stand-up moved to 10:00 today"], ["Stand-up"]]


def test_editing_the_next_occurrence_moves_the_series_on(api, db):
    mid = seed_series(db, next_run_at=T0 + DAY)

    status, answer = call(
        api, "POST", f"/messages/{mid}/occurrence", {"occurrence_at": (T0 + DAY).isoformat()}
    )

    assert status == 201, answer
    assert answer["message"]["send_at"] == (T0 + DAY).isoformat()
    assert message(db, mid)["next_run_at"] == T0 + 2 * DAY


def test_only_a_future_occurrence_of_a_series_is_edited_alone(api, db):
    mid = seed_series(db, next_run_at=T0 + DAY)
    one_off = seed_message(db, send_at=T0 + DAY, next_run_at=T0 + DAY)
    cases = [
        (mid, T0 + DAY + HOUR),  # not an occurrence of the rule
        (mid, T0 - DAY),  # past
        (one_off, T0 + DAY),  # not a series
    ]
    for target, at in cases:
        status, answer = call(
            api, "POST", f"/messages/{target}/occurrence", {"occurrence_at": at.isoformat()}
        )
        assert status == 422, (target, at, answer)
        assert [d["field"] for d in answer["details"]] == ["occurrence_at"]
    assert "exdates" not in message(db, mid)
    assert len(stored_ids(db)) == 2


def test_a_retry_with_the_same_idempotency_key_answers_the_same_one_off(api, db):
    mid = seed_series(db, next_run_at=T0 + DAY)
    body = {"occurrence_at": (T0 + 3 * DAY).isoformat(), "text": "Demo day"}
    key = {"Idempotency-Key": "edit-2027-01-07"}

    first = call(api, "POST", f"/messages/{mid}/occurrence", body, headers=key)
    again = call(api, "POST", f"/messages/{mid}/occurrence", body, headers=key)

    assert first[0] == again[0] == 201
    assert first[1]["message"]["id"] == again[1]["message"]["id"]
    assert len(stored_ids(db)) == 2
    assert message(db, mid)["exdates"] == ["2027-01-07T09:00:00"]
