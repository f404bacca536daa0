"""Rotations through the `api` target: create, read, edit in place, validation; the preview
answers 501 until the rotations issue brings the selection logic."""

from __future__ import annotations

from typing import Any

import pytest

from core.store import ROTATIONS
from tests.conftest import T0, call

ROTATION = {
    "name": "On-call",
    "channel": "C0123ABCD",
    "members": ["U01AAAAAA", "U02BBBBBB", "U03CCCCCC"],
    "timezone": "Europe/Berlin",
    "send_time": "09:30",
    "text": "{member} is on call today",
}


def create(api: Any, body: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
    status, answer = call(api, "POST", "/rotations", body, **kwargs)
    assert status == 201, answer
    assert isinstance(answer, dict)
    return answer


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
    # The cursor pointed past the shorter list: the order starts again.
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


def test_rotation_preview_is_not_implemented_yet(api, db):
    created = create(api, ROTATION)

    status, answer = call(api, "POST", f"/rotations/{created['id']}/preview")

    assert (status, answer["error"]) == (501, "not_implemented")
