"""Rotations people can run, through the `api` target: away periods (validated, honoured by
the preview and the answer's `up`), swapping two members' places, and who is up today and
next, in answers and lists."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from core.store import ROTATIONS
from tests.fixtures.api import call, fields_of
from tests.fixtures.clock import T0
from tests.fixtures.rotations import ROTATION, create

A, B, C = ROTATION["members"]
MONDAY, TUESDAY = "2027-01-04", "2027-01-05"


def preview_members(api: Any, rotation_id: str) -> list[str | None]:
    status, answer = call(api, "POST", f"/rotations/{rotation_id}/preview")
    assert status == 200, answer
    return [turn["member"] for turn in answer["turns"]]


# --- away ----------------------------------------------------------------------------------


def test_a_member_away_is_left_out_of_the_preview_and_keeps_their_place(api):
    away = [{"member": A, "from": MONDAY, "to": TUESDAY}]

    created = create(api, {**ROTATION, "away": away})

    assert created["away"] == away
    # Mon, Tue: A away (B, C take them); Wed A is back and next; then the order goes on.
    assert preview_members(api, created["id"]) == [B, C, A, B, C]
    assert created["up"]["today"] == {"date": MONDAY, "member": B}
    assert created["up"]["next"]["member"] == C


@pytest.mark.parametrize(
    ("period", "field"),
    [
        ({"member": "U09ZZZZZZ", "from": MONDAY, "to": MONDAY}, "away.0.member"),
        ({"member": A, "from": TUESDAY, "to": MONDAY}, "away.0.to"),
        ({"member": A, "from": "2027-02-30", "to": "2027-03-01"}, "away.0.from"),
        ({"member": A, "from": MONDAY, "to": "5 Jan"}, "away.0.to"),
    ],
)
def test_a_bad_away_period_is_422_naming_its_field(api, db, period, field):
    status, answer = call(api, "POST", "/rotations", {**ROTATION, "away": [period]})

    assert status == 422
    assert fields_of(answer) == [field]
    assert list(db.collection(ROTATIONS).stream()) == []


def test_removing_a_member_drops_their_away_periods(api):
    away = [
        {"member": A, "from": MONDAY, "to": TUESDAY},
        {"member": B, "from": MONDAY, "to": MONDAY},
    ]
    created = create(api, {**ROTATION, "away": away})

    status, edited = call(api, "PUT", f"/rotations/{created['id']}", {"members": [B, C]})

    assert status == 200, edited
    assert edited["away"] == [{"member": B, "from": MONDAY, "to": MONDAY}]


# --- swap ----------------------------------------------------------------------------------


def swap(api: Any, rotation_id: str, members: Any, **kwargs: Any) -> tuple[int, Any]:
    return call(api, "POST", f"/rotations/{rotation_id}/swap", {"members": members}, **kwargs)


def test_a_swap_trades_two_members_places_and_each_takes_the_others_turn(api):
    created = create(api, ROTATION)

    status, answer = swap(api, created["id"], [A, B], headers={"If-Match": '"1"'})

    assert status == 200, answer
    assert (answer["members"], answer["cursor"], answer["version"]) == ([B, A, C], 0, 2)
    assert preview_members(api, created["id"]) == [B, A, C, B, A]
    assert answer["up"]["today"] == {"date": MONDAY, "member": B}


@pytest.mark.parametrize("members", [[A, A], [A, "U09ZZZZZZ"]])
def test_a_swap_of_a_non_member_or_the_same_member_is_422_naming_members(api, db, members):
    created = create(api, ROTATION)
    before = db.collection(ROTATIONS).document(created["id"]).get()

    status, answer = swap(api, created["id"], members)

    assert status == 422
    assert set(fields_of(answer)) == {"members"}
    after = db.collection(ROTATIONS).document(created["id"]).get()
    assert after.update_time == before.update_time


def test_a_swap_under_a_stale_if_match_is_412(api):
    created = create(api, ROTATION)

    status, answer = swap(api, created["id"], [A, B], headers={"If-Match": '"7"'})

    assert status == 412, answer


def test_a_swap_while_a_day_is_claimed_is_409_and_writes_nothing(api, db):
    created = create(api, ROTATION)
    reference = db.collection(ROTATIONS).document(created["id"])
    lease = {"owner": "worker-a", "expires_at": T0 + timedelta(minutes=5), "member": A}
    reference.update({"lease": lease | {"occurrence_date": MONDAY}})
    before = reference.get()

    status, answer = swap(api, created["id"], [A, B])

    assert (status, answer["error"]) == (409, "conflict")
    assert reference.get().update_time == before.update_time


# --- up ------------------------------------------------------------------------------------


def test_up_shows_who_took_today_and_who_is_next(api, db):
    created = create(api, ROTATION)
    db.collection(ROTATIONS).document(created["id"]).update(
        {"last_processed_date": MONDAY, "cursor": 1, "last_member": A, "last_sent_at": T0}
    )

    status, answer = call(api, "GET", f"/rotations/{created['id']}")

    assert status == 200
    assert answer["up"] == {
        "today": {"date": MONDAY, "member": A},
        "next": {"date": TUESDAY, "at": "2027-01-05T08:30:00+00:00", "member": B},
    }


def test_up_on_a_day_off_has_no_today_and_a_paused_rotation_no_next(api):
    weekend = create(api, {**ROTATION, "weekdays": [5, 6]})  # T0 is a Monday
    paused = create(api, {**ROTATION, "status": "paused"})

    assert weekend["up"] == {
        "today": None,
        "next": {"date": "2027-01-09", "at": "2027-01-09T08:30:00+00:00", "member": A},
    }
    assert paused["up"]["next"] is None


def test_the_list_shows_up_for_each_rotation(api):
    first = create(api, ROTATION)
    second = create(api, {**ROTATION, "away": [{"member": A, "from": MONDAY, "to": MONDAY}]})

    status, answer = call(api, "GET", "/rotations")

    assert status == 200
    up = {r["id"]: r["up"]["today"]["member"] for r in answer["rotations"]}
    assert up == {first["id"]: A, second["id"]: B}
