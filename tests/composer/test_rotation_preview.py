"""`POST /rotations/{id}/preview`: the next turns of a stored rotation and the rendering of
the next post, from the code the real send uses; it writes nothing."""

from __future__ import annotations

from typing import Any

import pytest

from core.store import ROTATIONS
from tests.fixtures.api import call
from tests.fixtures.messages import seed_message
from tests.fixtures.rotations import ROTATION, create

A, B, C = ROTATION["members"]


def preview(api: Any, rotation_id: str, query: str = "", body: Any = None) -> dict[str, Any]:
    status, answer = call(api, "POST", f"/rotations/{rotation_id}/preview{query}", body)
    assert status == 200, answer
    assert isinstance(answer, dict)
    return answer


def test_preview_shows_the_next_post_and_turns_in_order(api):
    created = create(api, ROTATION)

    answer = preview(api, created["id"])

    assert answer["text"] == f"<@{A}> is on call today"
    assert isinstance(answer["blocks"], list)
    assert answer["blocks"]
    # Today's turn is still open (09:30 Berlin passed, nobody took it); weekends are left out.
    assert answer["turns"] == [
        {
            "date": day,
            "utc": f"{day}T08:30:00+00:00",
            "local": f"{day}T09:30:00+01:00",
            "member": member,
        }
        for day, member in [
            ("2027-01-04", A),
            ("2027-01-05", B),
            ("2027-01-06", C),
            ("2027-01-07", A),
            ("2027-01-08", B),
        ]
    ]


def test_preview_honours_a_skip_and_the_skipped_member_goes_next(api):
    created = create(api, {**ROTATION, "skips": {"2027-01-05": [B]}})

    turns = preview(api, created["id"])["turns"]

    assert [turn["member"] for turn in turns] == [A, C, B, A, C]


def test_preview_of_a_day_everyone_is_out_shows_nobody_and_the_next_post(api):
    created = create(api, {**ROTATION, "skips": {"2027-01-04": [A, B, C]}})

    answer = preview(api, created["id"], "?count=2")

    assert [turn["member"] for turn in answer["turns"]] == [None, A]
    assert answer["text"] == f"<@{A}> is on call today"


def test_preview_after_todays_turn_starts_tomorrow_from_the_stored_order(api, db):
    created = create(api, ROTATION)
    db.collection(ROTATIONS).document(created["id"]).update(
        {"last_processed_date": "2027-01-04", "cursor": 2}
    )

    turns = preview(api, created["id"], "?count=1")["turns"]

    assert turns == [
        {
            "date": "2027-01-05",
            "utc": "2027-01-05T08:30:00+00:00",
            "local": "2027-01-05T09:30:00+01:00",
            "member": C,
        }
    ]


def test_preview_count_defaults_to_five_and_allows_one_to_fifty(api):
    created = create(api, ROTATION)

    assert len(preview(api, created["id"])["turns"]) == 5
    assert len(preview(api, created["id"], "?count=1")["turns"]) == 1
    assert len(preview(api, created["id"], "?count=50")["turns"]) == 50


@pytest.mark.parametrize("query", ["?count=0", "?count=51", "?count=two", "?count=-1"])
def test_preview_count_out_of_range_is_422(api, query):
    created = create(api, ROTATION)

    status, answer = call(api, "POST", f"/rotations/{created['id']}/preview{query}")

    assert status == 422
    assert [d["field"] for d in answer["details"]] == ["count"]


def test_preview_refuses_unknown_query_parameters_and_body_fields(api):
    created = create(api, ROTATION)
    path = f"/rotations/{created['id']}/preview"

    query = call(api, "POST", f"{path}?members=U01AAAAAA")
    body = call(api, "POST", path, {"members": [A]})

    assert (query[0], [d["field"] for d in query[1]["details"]]) == (422, ["members"])
    assert (body[0], [d["field"] for d in body[1]["details"]]) == (422, ["members"])
    assert preview(api, created["id"], body={})["turns"]


def test_preview_of_an_unknown_rotation_is_404(api):
    assert call(api, "POST", "/rotations/nope/preview")[0] == 404


def test_preview_of_a_stored_rotation_that_cannot_take_turns_is_422_with_its_code(api, db):
    reference = db.collection(ROTATIONS).document("broken")
    reference.set({**ROTATION, "timezone": "Mars/Olympus", "status": "active"})

    status, answer = call(api, "POST", "/rotations/broken/preview")

    assert (status, answer["error"]) == (422, "validation_failed")
    assert [(d["field"], d["code"]) for d in answer["details"]] == [
        ("timezone", "invalid_timezone")
    ]


def test_preview_writes_nothing(api, db):
    created = create(
        api, {**ROTATION, "skips": {"2027-01-05": [B]}}, headers={"Idempotency-Key": "rot-preview"}
    )
    seed_message(db)
    db.collection("deliveries").document(f"r:{created['id']}:2027-01-01").set({"status": "sent"})

    def every_document() -> dict[tuple[str, str], Any]:
        return {
            (collection.id, snap.id): snap.update_time
            for collection in db.collections()
            for snap in collection.stream()
        }

    before = every_document()
    preview(api, created["id"], "?count=50")
    preview(api, created["id"], body={})

    assert {name for name, _ in before} == {
        ROTATIONS,
        "scheduled_messages",
        "deliveries",
        "idempotency_keys",
    }
    assert every_document() == before
