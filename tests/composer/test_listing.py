"""Listing messages (filters, order, cursor pages), a message's deliveries, and previews,
through the `api` target against the emulator."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import pytest

from core.store import DELIVERIES
from formatting.slack_text import to_slack
from messages.kind import MESSAGE_KIND
from processor.kind_pass import run_kind
from tests.fixtures.api import call
from tests.fixtures.clock import T0
from tests.fixtures.documents import update_times
from tests.fixtures.messages import seed_message
from tests.fixtures.runtime import ROOT


def at(minutes: int) -> Any:
    return T0 + timedelta(minutes=minutes)


def ids(answer: dict[str, Any], key: str = "messages") -> list[str]:
    return [row["id"] for row in answer[key]]


def walk(api: Any, path: str, key: str = "messages") -> list[list[str]]:
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


@pytest.fixture
def shelf(db) -> dict[str, str]:
    """Messages in several statuses and channels, at distinct next_run_at."""
    return {
        "a": seed_message(db, "a", status="pending", next_run_at=at(30)),
        "b": seed_message(db, "b", status="sending", next_run_at=at(10)),
        "c": seed_message(db, "c", status="recurring", next_run_at=at(20), channel="C0OTHER00"),
        "d": seed_message(db, "d", status="sent", next_run_at=at(-60)),
        "e": seed_message(db, "e", status="cancelled", deleted=True, next_run_at=at(40)),
        "f": seed_message(db, "f", status="pending", next_run_at=at(10), channel="C0OTHER00"),
    }


# --- listing ------------------------------------------------------------------------------


def test_listing_orders_every_message_by_next_run_at(api, shelf):
    status, answer = call(api, "GET", "/messages")

    assert status == 200
    # Ties on next_run_at are broken by id.
    assert ids(answer) == ["d", "b", "f", "c", "a", "e"]
    assert answer["next_cursor"] is None
    assert answer["messages"][0]["status"] == "sent"


def test_listing_filters_by_status_including_sending(api, shelf):
    assert ids(call(api, "GET", "/messages?status=sending")[1]) == ["b"]
    assert ids(call(api, "GET", "/messages?status=pending,sending")[1]) == ["b", "f", "a"]


def test_listing_filters_by_channel_and_by_both(api, shelf):
    assert ids(call(api, "GET", "/messages?channel=C0OTHER00")[1]) == ["f", "c"]
    assert ids(call(api, "GET", "/messages?status=pending&channel=C0OTHER00")[1]) == ["f"]
    assert ids(call(api, "GET", "/messages?status=failed")[1]) == []


def test_cursor_pages_cover_everything_once_in_order(api, shelf):
    assert walk(api, "/messages?limit=2") == [["d", "b"], ["f", "c"], ["a", "e"]]
    assert walk(api, "/messages?status=pending,recurring,sending&limit=1") == [
        ["b"],
        ["f"],
        ["c"],
        ["a"],
    ]


def test_a_message_added_behind_the_cursor_does_not_shift_the_pages(api, db, shelf):
    _, first = call(api, "GET", "/messages?limit=3")
    seed_message(db, "early", next_run_at=at(-120))

    _, rest = call(api, "GET", f"/messages?limit=3&cursor={first['next_cursor']}")

    assert ids(first) == ["d", "b", "f"]
    assert ids(rest) == ["c", "a", "e"]


def test_limit_defaults_to_50_and_is_capped_at_200(api, db):
    batch = db.batch()
    for n in range(201):
        batch.set(
            db.collection("scheduled_messages").document(f"m{n:03d}"),
            {"status": "pending", "next_run_at": at(n), "channel": "C0123ABCD", "text": "x"},
        )
    batch.commit()

    default = call(api, "GET", "/messages")[1]
    most = call(api, "GET", "/messages?limit=200")[1]

    assert len(default["messages"]) == 50
    assert len(most["messages"]) == 200
    assert ids(call(api, "GET", f"/messages?cursor={most['next_cursor']}")[1]) == ["m200"]


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ("status=pending,done", "status"),
        ("status=", "status"),
        ("channel=general", "channel"),
        ("limit=0", "limit"),
        ("limit=201", "limit"),
        ("limit=ten", "limit"),
        ("cursor=not-a-cursor", "cursor"),
        ("cursor=eyJpZCI6IDF9", "cursor"),
        ("sort=desc", "sort"),
    ],
)
def test_bad_listing_parameters_are_422_naming_them(api, shelf, query, field):
    status, answer = call(api, "GET", f"/messages?{query}")

    assert status == 422
    assert [detail["field"] for detail in answer["details"]] == [field]


# --- deliveries ---------------------------------------------------------------------------


def test_deliveries_list_every_outcome_newest_first(api, db, slack, rt, clock):
    mid = seed_message(
        db,
        status="recurring",
        send_at=None,
        rrule="FREQ=DAILY;BYHOUR=9;BYMINUTE=0",
        dtstart="2027-01-01T09:00",
    )
    run_kind(rt, MESSAGE_KIND)  # delivers the T0 occurrence
    ledger = db.collection(DELIVERIES)
    ledger.document(f"m:{mid}:older-skipped").set(
        {
            "message_id": mid,
            "occurrence_at": at(-2 * 1440),
            "status": "skipped",
            "reason": "misfire",
        }
    )
    ledger.document(f"m:{mid}:older-unconfirmed").set(
        {
            "message_id": mid,
            "occurrence_at": at(-1440),
            "status": "unconfirmed",
            "error": {"code": "timeout", "message": "", "at": at(-1440)},
        }
    )
    ledger.document("m:someone-else:x").set(
        {"message_id": "someone-else", "occurrence_at": at(0), "status": "sent"}
    )

    status, answer = call(api, "GET", f"/messages/{mid}/deliveries")

    assert status == 200
    rows = answer["deliveries"]
    assert [row["status"] for row in rows] == ["sent", "unconfirmed", "skipped"]
    assert [row["occurrence_at"] for row in rows] == [
        T0.isoformat(),
        at(-1440).isoformat(),
        at(-2 * 1440).isoformat(),
    ]
    assert rows[0]["slack_ts"] == slack.posts()[0].ts
    assert [row["reason"] for row in rows] == [None, "timeout", "misfire"]
    assert walk(api, f"/messages/{mid}/deliveries?limit=2", "deliveries") == [
        ids(answer, "deliveries")[:2],
        ids(answer, "deliveries")[2:],
    ]


# --- preview ------------------------------------------------------------------------------

SERIES = {
    "channel": "C0123ABCD",
    "text": "*Stand-up* <!here> & <@U024BE7LH>",
    "timezone": "America/New_York",
    "rrule": "FREQ=WEEKLY;BYDAY=SU;BYHOUR=2;BYMINUTE=30",
    "dtstart": "2027-01-03T02:30",
}


def test_preview_shows_slack_text_and_next_occurrences_and_writes_nothing(api, db, clock):
    clock.set(T0 + timedelta(weeks=9))  # 2027-03-08, so the DST Sunday comes up
    before = update_times(db)

    status, answer = call(api, "POST", "/preview?count=3", SERIES)

    assert status == 200
    rendered = to_slack(SERIES["text"])
    assert answer["text"] == rendered.text
    assert answer["blocks"] == (rendered.blocks or [])
    assert "<!here>" not in answer["text"]
    assert answer["occurrences"] == [
        # 02:30 does not exist on 2027-03-14: read with the offset before the gap.
        {
            "utc": "2027-03-14T07:30:00+00:00",
            "local": "2027-03-14T03:30:00-04:00",
            "held_back": None,
        },
        {
            "utc": "2027-03-21T06:30:00+00:00",
            "local": "2027-03-21T02:30:00-04:00",
            "held_back": None,
        },
        {
            "utc": "2027-03-28T06:30:00+00:00",
            "local": "2027-03-28T02:30:00-04:00",
            "held_back": None,
        },
    ]
    assert update_times(db) == before


def test_preview_of_a_one_off_has_its_one_occurrence(api):
    body = {"channel": "C0123ABCD", "text": "hi", "send_at": "2027-01-04T12:00:00Z"}
    body["timezone"] = "Asia/Tokyo"

    status, answer = call(api, "POST", "/preview", body)

    assert status == 200
    assert answer["occurrences"] == [
        {
            "utc": "2027-01-04T12:00:00+00:00",
            "local": "2027-01-04T21:00:00+09:00",
            "held_back": None,
        }
    ]


def test_preview_defaults_to_five_occurrences_and_allows_fifty(api):
    assert len(call(api, "POST", "/preview", SERIES)[1]["occurrences"]) == 5
    assert len(call(api, "POST", "/preview?count=50", SERIES)[1]["occurrences"]) == 50
    assert call(api, "POST", "/preview?count=51", SERIES)[0] == 422


def test_preview_validates_like_a_create(api, db):
    status, answer = call(api, "POST", "/preview", {**SERIES, "timezone": "Nowhere/Town"})

    assert status == 422
    assert [detail["field"] for detail in answer["details"]] == ["timezone"]
    assert update_times(db) == {}


# --- indexes ------------------------------------------------------------------------------


def test_every_listing_query_has_its_composite_index():
    indexes = json.loads((ROOT / "firestore.indexes.json").read_text())["indexes"]
    fields = {
        (index["collectionGroup"], tuple((f["fieldPath"], f["order"]) for f in index["fields"]))
        for index in indexes
    }
    assert {
        ("scheduled_messages", (("status", "ASCENDING"), ("next_run_at", "ASCENDING"))),
        ("scheduled_messages", (("channel", "ASCENDING"), ("next_run_at", "ASCENDING"))),
        (
            "scheduled_messages",
            (("status", "ASCENDING"), ("channel", "ASCENDING"), ("next_run_at", "ASCENDING")),
        ),
        ("deliveries", (("message_id", "ASCENDING"), ("occurrence_at", "DESCENDING"))),
    } <= fields
