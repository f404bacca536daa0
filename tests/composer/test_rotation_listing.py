"""Listing rotations (`GET /rotations`, cursor pages) and a rotation's history of posted and
skipped days (`GET /rotations/{id}/deliveries`), through the `api` target on the emulator."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from processor.kind_pass import run_kind
from rotations.kind import ROTATION_DAY_KIND
from tests.fixtures.api import call
from tests.fixtures.clock import T0
from tests.fixtures.rotations import ALICE, BOB, CAROL, ROTATION, create, seed_rotation
from tests.fixtures.runtime import ROOT


def ids(answer: dict[str, Any], key: str = "rotations") -> list[str]:
    return [row["id"] for row in answer[key]]


def walk(api: Any, path: str, key: str = "rotations") -> list[list[str]]:
    """Every page of a listing, following next_cursor."""
    pages: list[list[str]] = []
    cursor = None
    while True:
        separator = "&" if "?" in path else "?"
        status, answer = call(api, "GET", path + (f"{separator}cursor={cursor}" if cursor else ""))
        assert status == 200, answer
        pages.append(ids(answer, key))
        cursor = answer["next_cursor"]
        if cursor is None:
            return pages


def due(hours: int) -> datetime:
    return datetime(2027, 1, 4, 8, 30, tzinfo=UTC) + timedelta(hours=hours)


# --- GET /rotations -----------------------------------------------------------------------


@pytest.fixture
def rota(db) -> list[str]:
    """Rotations at distinct next_run_at (one paused), with a tie broken by id."""
    seed_rotation(db, "c", next_run_at=due(48))
    seed_rotation(db, "a", next_run_at=due(24), status="paused")
    seed_rotation(db, "b", next_run_at=due(0))
    seed_rotation(db, "d", next_run_at=due(24))
    return ["b", "a", "d", "c"]


def test_rotations_are_listed_by_next_run_at_paused_ones_too(api, rota):
    status, answer = call(api, "GET", "/rotations")

    assert status == 200, answer
    assert ids(answer) == rota
    assert answer["next_cursor"] is None
    assert answer["rotations"][1]["status"] == "paused"
    assert answer["rotations"][0]["members"] == [ALICE, BOB, CAROL]
    assert answer["rotations"][0]["next_run_at"] == due(0).isoformat()


def test_rotation_pages_cover_everything_once_in_order(api, db, rota):
    assert walk(api, "/rotations?limit=1") == [[n] for n in rota]
    _, first = call(api, "GET", "/rotations?limit=2")
    seed_rotation(db, "early", next_run_at=due(-24))  # behind the cursor: no shift

    _, rest = call(api, "GET", f"/rotations?limit=2&cursor={first['next_cursor']}")

    assert (ids(first), ids(rest)) == (rota[:2], rota[2:])


def test_a_rotation_created_through_the_api_is_listed(api):
    created = create(api, ROTATION)

    assert call(api, "GET", "/rotations") == (200, {"rotations": [created], "next_cursor": None})


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ("limit=0", "limit"),
        ("limit=201", "limit"),
        ("cursor=nonsense", "cursor"),
        ("status=active", "status"),
    ],
)
def test_bad_rotation_listing_queries_name_the_parameter(api, rota, query, field):
    status, answer = call(api, "GET", f"/rotations?{query}")

    assert status == 422, answer
    assert [detail["field"] for detail in answer["details"]] == [field]


# --- GET /rotations/{id}/deliveries -------------------------------------------------------


def days(answer: dict[str, Any]) -> list[tuple[str, str | None, str, str | None]]:
    return [
        (day["occurrence_date"], day["member"], day["status"], day["reason"])
        for day in answer["deliveries"]
    ]


def test_the_history_lists_posted_and_skipped_days_newest_first(api, rt, clock, slack):
    # Monday is due at once (T0 is 10:00 in Berlin, after 09:30); Tuesday everyone is out.
    created = create(api, {**ROTATION, "skips": {"2027-01-05": [ALICE, BOB, CAROL]}})
    path = f"/rotations/{created['id']}/deliveries"
    assert run_kind(rt, ROTATION_DAY_KIND)["sent"] == 1  # Monday: Alice
    clock.set(T0 + timedelta(days=1))
    run_kind(rt, ROTATION_DAY_KIND)  # Tuesday: nobody
    clock.set(T0 + timedelta(days=3))  # nothing ran on Wednesday
    assert run_kind(rt, ROTATION_DAY_KIND)["sent"] == 1  # Thursday: Bob

    status, answer = call(api, "GET", path)

    assert status == 200, answer
    assert days(answer) == [
        ("2027-01-07", BOB, "sent", None),
        ("2027-01-06", None, "skipped", "missed"),
        ("2027-01-05", None, "skipped", "everyone_skipped"),
        ("2027-01-04", ALICE, "sent", None),
    ]
    assert answer["next_cursor"] is None
    thursday = answer["deliveries"][0]
    assert thursday["id"] == f"r:{created['id']}:2027-01-07"
    assert thursday["slack_ts"] == slack.posts()[-1].ts
    assert thursday["occurrence_at"] == "2027-01-07T08:30:00+00:00"
    assert walk(api, f"{path}?limit=3", key="deliveries") == [
        [row["id"] for row in answer["deliveries"][:3]],
        [answer["deliveries"][3]["id"]],
    ]


def test_a_new_rotation_has_an_empty_history_and_an_unknown_one_is_404(api):
    created = create(api, ROTATION)

    assert call(api, "GET", f"/rotations/{created['id']}/deliveries") == (
        200,
        {"deliveries": [], "next_cursor": None},
    )
    status, answer = call(api, "GET", "/rotations/nope/deliveries")
    assert (status, answer["error"]) == (404, "not_found")


def test_the_history_of_one_rotation_leaves_out_the_others(api, rt, db):
    seed_rotation(db, "standup")
    seed_rotation(db, "other")
    assert run_kind(rt, ROTATION_DAY_KIND)["sent"] == 2

    _, answer = call(api, "GET", "/rotations/standup/deliveries")

    assert ids(answer, "deliveries") == ["r:standup:2027-01-04"]


def test_the_history_query_has_its_composite_index():
    indexes = json.loads((ROOT / "firestore.indexes.json").read_text())["indexes"]
    fields = {
        (index["collectionGroup"], tuple((f["fieldPath"], f["order"]) for f in index["fields"]))
        for index in indexes
    }
    assert ("deliveries", (("rotation_id", "ASCENDING"), ("occurrence_at", "DESCENDING"))) in fields
