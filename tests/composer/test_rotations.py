"""Rotations through the `api` target: create, read, edit in place, validation, when the
next turn is due, fairness under edits, and the preview of the next turns."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from core.store import DELIVERIES, ROTATIONS
from rotations.kind import ROTATION_DAY_KIND
from tests.fixtures.api import call
from tests.fixtures.clock import T0
from tests.fixtures.rotations import ROTATION, create


def stored(db: Any) -> dict[str, dict[str, Any]]:
    return {snap.id: snap.to_dict() or {} for snap in db.collection(ROTATIONS).stream()}


def test_create_stores_the_rotation_with_its_defaults(api, db):
    created = create(api, ROTATION)

    assert created["weekdays"] == [0, 1, 2, 3, 4]
    assert (created["cursor"], created["status"], created["version"]) == (0, "active", 1)
    assert created["created_at"] == T0.isoformat()
    assert stored(db)[created["id"]]["members"] == ROTATION["members"]
    assert call(api, "GET", f"/rotations/{created['id']}") == (200, created)


def test_a_retried_rotation_create_returns_the_original(api, db):
    first = create(api, ROTATION, headers={"Idempotency-Key": "rot-1"})

    again = create(api, ROTATION, headers={"Idempotency-Key": "rot-1"})

    assert again["id"] == first["id"]
    assert list(stored(db)) == [first["id"]]


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"members": []}, "members"),
        ({"members": ["U01AAAAAA", "U01AAAAAA"]}, "members"),
        ({"members": ["alice"]}, "members.0"),
        ({"send_time": "9:30"}, "send_time"),
        ({"send_time": "24:00"}, "send_time"),
        ({"weekdays": [0, 7]}, "weekdays"),
        ({"weekdays": []}, "weekdays"),
        ({"weekdays": [1, 1]}, "weekdays"),
        ({"timezone": "Berlin"}, "timezone"),
        ({"channel": "#general"}, "channel"),
        ({"text": ""}, "text"),
        ({"name": " "}, "name"),
        ({"cursor": 3}, "cursor"),
        ({"status": "asleep"}, "status"),
        ({"last_processed_date": "2027-01-01"}, "last_processed_date"),
        ({"next_run_at": "2027-01-05T08:30:00Z"}, "next_run_at"),
        ({"lease": {}}, "lease"),
        ({"skips": {"2027-13-01": ["U01AAAAAA"]}}, "skips.2027-13-01"),
        ({"skips": {"tomorrow": ["U01AAAAAA"]}}, "skips.tomorrow"),
        ({"skips": {"2027-01-05": ["U09ZZZZZZ"]}}, "skips.2027-01-05"),
        ({"skips": {"2027-01-05": ["U01AAAAAA", "U01AAAAAA"]}}, "skips.2027-01-05"),
        ({"skips": {"2027-01-05": "U01AAAAAA"}}, "skips.2027-01-05"),
        ({"skips": ["2027-01-05"]}, "skips"),
        ({"working_days": {"country": "de"}}, "working_days.country"),
        ({"working_days": {"country": "QQ"}}, "working_days"),
        ({"working_days": {"country": "DE", "subdivision": "XX"}}, "working_days"),
        ({"working_days": {"country": "DE", "region": "BY"}}, "working_days.region"),
        # Weekends only, in a country whose weekends are days off: never a turn day.
        ({"weekdays": [5, 6], "working_days": {"country": "DE"}}, "working_days"),
        ({"on_ambiguous": "maybe"}, "on_ambiguous"),
    ],
)
def test_an_invalid_rotation_is_422_naming_the_field(api, db, change, field):
    status, answer = call(api, "POST", "/rotations", {**ROTATION, **change})

    assert status == 422
    assert [detail["field"] for detail in answer["details"]] == [field]
    assert stored(db) == {}


def test_put_edits_in_place_with_if_match(api, db):
    created = create(api, {**ROTATION, "cursor": 2})
    path = f"/rotations/{created['id']}"

    status, edited = call(api, "PUT", path, {"members": ["U01AAAAAA"]}, headers={"If-Match": "1"})
    stale = call(api, "PUT", path, {"send_time": "10:00"}, headers={"If-Match": "1"})

    assert status == 200
    # The next member (U03) was removed, and nobody after them remains but U01.
    assert (edited["members"], edited["cursor"], edited["version"]) == (["U01AAAAAA"], 0, 2)
    assert edited["send_time"] == "09:30"
    assert stale[0] == 412
    assert list(stored(db)) == [created["id"]]
    assert stored(db)[created["id"]]["version"] == 2


def test_put_keeps_what_the_processor_recorded(api, db):
    created = create(api, ROTATION)
    db.collection(ROTATIONS).document(created["id"]).update(
        {"last_processed_date": "2027-01-04", "cursor": 1}
    )

    status, edited = call(api, "PUT", f"/rotations/{created['id']}", {"status": "paused"})

    assert status == 200
    assert (edited["last_processed_date"], edited["cursor"]) == ("2027-01-04", 1)
    assert edited["status"] == "paused"


def test_an_invalid_edit_is_422_and_changes_nothing(api, db):
    created = create(api, ROTATION)

    status, answer = call(api, "PUT", f"/rotations/{created['id']}", {"members": None})

    assert status == 422
    assert [d["field"] for d in answer["details"]] == ["members"]
    assert stored(db)[created["id"]]["version"] == 1


def test_unknown_rotations_are_404(api):
    assert call(api, "GET", "/rotations/nope")[0] == 404
    assert call(api, "PUT", "/rotations/nope", {"name": "x"})[0] == 404
    assert call(api, "POST", "/rotations/nope/preview")[0] == 404


def doc(db: Any, rotation_id: str) -> dict[str, Any]:
    return db.collection(ROTATIONS).document(rotation_id).get().to_dict() or {}


# --- when the next turn is due -------------------------------------------------------------


def test_create_after_todays_send_time_is_due_at_once(api, db):
    # T0 is Monday 10:00 in Berlin; today's 09:30 turn has passed but nobody took it.
    created = create(api, ROTATION)

    assert created["next_run_at"] == "2027-01-04T08:30:00+00:00"
    assert doc(db, created["id"])["next_run_at"] == datetime(2027, 1, 4, 8, 30, tzinfo=UTC)
    assert [snap.id for snap in ROTATION_DAY_KIND.queue.due(db, T0, 10)] == [created["id"]]


@pytest.mark.parametrize(
    ("change", "due"),
    [
        ({"send_time": "11:00"}, "2027-01-04T10:00:00+00:00"),  # later today
        ({"weekdays": [2]}, "2027-01-06T08:30:00+00:00"),  # Wednesdays only
        # 6 January is a public holiday in Bavaria: the Wednesday turn moves a week.
        (
            {"weekdays": [2], "working_days": {"country": "DE", "subdivision": "BY"}},
            "2027-01-13T08:30:00+00:00",
        ),
    ],
)
def test_create_sets_next_run_at_to_the_next_open_turn(api, db, change, due):
    created = create(api, {**ROTATION, **change})

    assert created["next_run_at"] == due
    assert ROTATION_DAY_KIND.queue.due(db, T0, 10) == []


def test_create_stores_skips_working_days_and_on_ambiguous(api, db):
    extra = {
        "skips": {"2027-01-05": ["U02BBBBBB"]},
        "working_days": {"country": "DE", "subdivision": "BY"},
        "on_ambiguous": "retry",
    }
    created = create(api, {**ROTATION, **extra})

    stored_doc = doc(db, created["id"])
    assert {name: stored_doc[name] for name in extra} == extra
    assert {name: created[name] for name in extra} == extra


def test_a_rotation_without_optional_fields_stores_none_of_them(api, db):
    created = create(api, ROTATION)

    assert not {"skips", "working_days", "on_ambiguous"} & set(doc(db, created["id"]))


def test_an_edit_recomputes_next_run_at_from_now(api, db, clock):
    created = create(api, ROTATION)
    clock.advance(timedelta(hours=2))  # 12:00 Berlin

    status, edited = call(api, "PUT", f"/rotations/{created['id']}", {"send_time": "13:00"})

    assert status == 200
    assert edited["next_run_at"] == "2027-01-04T12:00:00+00:00"


def test_an_edit_reopens_a_day_whose_post_failed(api, db):
    created = create(api, ROTATION)
    # What a definitive failure leaves: the claim rolled back, the rotation moved on.
    db.collection(ROTATIONS).document(created["id"]).update(
        {
            "last_processed_date": "2027-01-01",
            "next_run_at": datetime(2027, 1, 5, 8, 30, tzinfo=UTC),
            "last_error": {"code": "channel_not_found", "message": "", "at": T0},
        }
    )

    status, edited = call(api, "PUT", f"/rotations/{created['id']}", {"channel": "C0NEWCHAN"})

    assert status == 200
    assert edited["next_run_at"] == "2027-01-04T08:30:00+00:00"
    assert [snap.id for snap in ROTATION_DAY_KIND.queue.due(db, T0, 10)] == [created["id"]]


def test_an_edit_keeps_a_retry_after_wait(api, db):
    created = create(api, ROTATION)
    retry_at = T0 + timedelta(minutes=10)
    db.collection(DELIVERIES).document(f"r:{created['id']}:2027-01-04").set(
        {"rotation_id": created["id"], "status": "released", "retry_at": retry_at}
    )
    db.collection(ROTATIONS).document(created["id"]).update({"next_run_at": retry_at})

    status, edited = call(api, "PUT", f"/rotations/{created['id']}", {"text": "{member}: you"})

    assert status == 200
    assert edited["next_run_at"] == retry_at.isoformat()


def test_pausing_leaves_the_due_query_and_resuming_rejoins_it(api, db, clock):
    created = create(api, ROTATION)
    path = f"/rotations/{created['id']}"

    paused = call(api, "PUT", path, {"status": "paused"})[1]
    due_while_paused = ROTATION_DAY_KIND.queue.due(db, T0, 10)
    resumed = call(api, "PUT", path, {"status": "active"})[1]

    assert (paused["status"], due_while_paused) == ("paused", [])
    assert resumed["next_run_at"] == "2027-01-04T08:30:00+00:00"
    assert [snap.id for snap in ROTATION_DAY_KIND.queue.due(db, T0, 10)] == [created["id"]]


# --- fairness under edits ------------------------------------------------------------------

A, B, C, D = "U01AAAAAA", "U02BBBBBB", "U03CCCCCC", "U04DDDDDD"


@pytest.mark.parametrize(
    ("members", "cursor", "next_member"),
    [
        ([A, B, C, D], 1, B),  # someone added at the end
        ([D, A, B, C], 2, B),  # someone added in front
        ([B, C], 0, B),  # someone else removed
        ([A, C], 1, C),  # the next person removed: the one after them
        ([A, D], 0, A),  # next and the one after removed: the order wraps to A
        ([C, B, A], 1, B),  # reordered: still B
    ],
)
def test_a_members_edit_keeps_who_is_next(api, db, members, cursor, next_member):
    created = create(api, {**ROTATION, "cursor": 1})  # B is next

    status, edited = call(api, "PUT", f"/rotations/{created['id']}", {"members": members})

    assert status == 200
    assert (edited["cursor"], members[edited["cursor"]]) == (cursor, next_member)
    assert doc(db, created["id"])["cursor"] == cursor


def test_an_explicit_cursor_wins(api, db):
    created = create(api, {**ROTATION, "cursor": 1})

    status, edited = call(
        api, "PUT", f"/rotations/{created['id']}", {"members": [A, C, D], "cursor": 2}
    )
    too_far = call(api, "PUT", f"/rotations/{created['id']}", {"members": [A], "cursor": 1})

    assert (status, edited["cursor"]) == (200, 2)
    assert too_far[0] == 422
    assert [d["field"] for d in too_far[1]["details"]] == ["cursor"]


def test_removing_a_member_drops_their_days_off(api, db):
    skips = {"2027-01-05": [B], "2027-01-06": [B, C]}
    created = create(api, {**ROTATION, "skips": skips})

    status, edited = call(api, "PUT", f"/rotations/{created['id']}", {"members": [A, C]})

    assert status == 200
    assert edited["skips"] == doc(db, created["id"])["skips"] == {"2027-01-06": [C]}


def test_explicit_skips_must_name_members(api, db):
    created = create(api, ROTATION)

    status, answer = call(
        api, "PUT", f"/rotations/{created['id']}", {"members": [A, C], "skips": {"2027-01-05": [B]}}
    )

    assert status == 422
    assert [d["field"] for d in answer["details"]] == ["skips.2027-01-05"]


def test_optional_fields_are_removed_by_null(api, db):
    extra = {"skips": {"2027-01-05": [B]}, "working_days": {"country": "DE"}}
    created = create(api, {**ROTATION, **extra, "on_ambiguous": "retry"})

    status, edited = call(
        api,
        "PUT",
        f"/rotations/{created['id']}",
        {"skips": None, "working_days": None, "on_ambiguous": None},
    )

    assert status == 200
    gone = {"skips", "working_days", "on_ambiguous"}
    assert not gone & set(edited)
    assert not gone & set(doc(db, created["id"]))


# --- what the processor owns ---------------------------------------------------------------


def test_an_edit_while_a_day_is_claimed_is_409_and_writes_nothing(api, db):
    created = create(api, ROTATION)
    reference = db.collection(ROTATIONS).document(created["id"])
    reference.update(
        {
            "lease": {
                "owner": "worker-a",
                "expires_at": T0 + timedelta(minutes=5),
                "occurrence_date": "2027-01-04",
                "member": A,
            }
        }
    )
    before = reference.get()

    status, answer = call(api, "PUT", f"/rotations/{created['id']}", {"members": [B, C]})

    assert (status, answer["error"]) == (409, "conflict")
    assert [d["field"] for d in answer["details"]] == ["lease"]
    assert reference.get().update_time == before.update_time


PROCESSOR_OWNED = {
    "last_processed_date": "2027-01-04",
    "attempts": 1,
    "rollback": {"last_processed_date": None, "cursor": 0, "members": [A, B, C]},
    "last_error": {"code": "ratelimited", "message": "slow down", "at": T0},
    "last_sent_at": T0,
    "last_slack_ts": "1799053561.000100",
    "last_member": A,
    "sent_count": 7,
}


def test_an_edit_keeps_every_field_the_processor_owns(api, db):
    created = create(api, ROTATION)
    db.collection(ROTATIONS).document(created["id"]).update(PROCESSOR_OWNED | {"cursor": 1})

    status, edited = call(
        api,
        "PUT",
        f"/rotations/{created['id']}",
        {"text": "{member} has the pager", "members": [A, B, C, D]},
    )

    assert status == 200
    after = doc(db, created["id"])
    assert {name: after[name] for name in PROCESSOR_OWNED} == PROCESSOR_OWNED
    assert (after["text"], after["members"], after["cursor"]) == (
        "{member} has the pager",
        [A, B, C, D],
        1,
    )
    # Today's turn was taken: the next one is Tuesday's.
    assert after["next_run_at"] == datetime(2027, 1, 5, 8, 30, tzinfo=UTC)
    assert edited["last_processed_date"] == "2027-01-04"
    assert edited["last_sent_at"] == T0.isoformat()


@pytest.mark.parametrize("name", [*PROCESSOR_OWNED, "next_run_at", "lease"])
def test_processor_owned_fields_cannot_be_edited(api, db, name):
    created = create(api, ROTATION)

    status, answer = call(api, "PUT", f"/rotations/{created['id']}", {name: None})

    assert status == 422
    assert [d["field"] for d in answer["details"]] == [name]
    assert doc(db, created["id"])["version"] == 1


def test_an_edit_brings_a_directly_written_cursor_into_range(api, db):
    created = create(api, ROTATION)
    db.collection(ROTATIONS).document(created["id"]).update({"cursor": 4})  # 4 % 3: B

    status, edited = call(api, "PUT", f"/rotations/{created['id']}", {"name": "Pager"})

    assert (status, edited["cursor"]) == (200, 1)
