"""The deployed Firestore configuration: rules that shut client SDKs out, and an index for
every query the processor makes."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

import pytest

from tests.fixtures.messages import seed_message
from tests.fixtures.runtime import ROOT


def _client_sdk_request(
    firestore_host: str, project: str, method: str, path: str, body: dict[str, Any] | None = None
) -> int:
    """A request as a browser or mobile client SDK would send it: no server credentials."""
    url = f"http://{firestore_host}/v1/projects/{project}/databases/(default)/documents/{path}"
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(
        url, data=data, method=method, headers={"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:  # noqa: S310 (loopback)
            return int(response.status)
    except urllib.error.HTTPError as exc:
        return exc.code


@pytest.mark.parametrize(
    "collection",
    [
        "scheduled_messages",
        "deliveries",
        "rotations",
        "channel_pacing",
        "events",
        "teams_conversations",
    ],
)
def test_client_sdks_can_neither_read_nor_write(firestore_host, project, db, collection):
    doc_id = seed_message(db) if collection == "scheduled_messages" else "x"

    read = _client_sdk_request(firestore_host, project, "GET", f"{collection}/{doc_id}")
    write = _client_sdk_request(
        firestore_host,
        project,
        "PATCH",
        f"{collection}/{doc_id}",
        {"fields": {"status": {"stringValue": "pending"}}},
    )

    assert (read, write) == (403, 403)


def test_the_due_query_has_its_composite_index():
    indexes = json.loads((ROOT / "firestore.indexes.json").read_text())["indexes"]
    fields = [
        [(f["fieldPath"], f["order"]) for f in index["fields"]]
        for index in indexes
        if index["collectionGroup"] == "scheduled_messages"
    ]
    assert [("status", "ASCENDING"), ("next_run_at", "ASCENDING")] in fields


def test_the_expired_lease_query_has_its_composite_index():
    indexes = json.loads((ROOT / "firestore.indexes.json").read_text())["indexes"]
    fields = [
        [(f["fieldPath"], f["order"]) for f in index["fields"]]
        for index in indexes
        if index["collectionGroup"] == "scheduled_messages"
    ]
    assert [("status", "ASCENDING"), ("lease.expires_at", "ASCENDING")] in fields


def test_the_due_rotations_query_has_its_composite_index():
    indexes = json.loads((ROOT / "firestore.indexes.json").read_text())["indexes"]
    fields = [
        [(f["fieldPath"], f["order"]) for f in index["fields"]]
        for index in indexes
        if index["collectionGroup"] == "rotations"
    ]
    assert [("status", "ASCENDING"), ("next_run_at", "ASCENDING")] in fields


@pytest.mark.parametrize("collection", ["scheduled_messages", "rotations"])
def test_the_sharded_due_queries_have_their_composite_indexes(collection):
    indexes = json.loads((ROOT / "firestore.indexes.json").read_text())["indexes"]
    fields = [
        [f["fieldPath"] for f in index["fields"]]
        for index in indexes
        if index["collectionGroup"] == collection
    ]
    assert ["shard", "status", "next_run_at"] in fields
    assert ["shard", "status", "next_run_at", "channel"] in fields  # a channel range


@pytest.mark.parametrize("collection", ["scheduled_messages", "rotations", "events"])
def test_the_scans_written_since_queries_have_their_composite_indexes(collection):
    """processor.scan: waiting, `updated_at` after and `next_run_at` by a mark, ordered by
    both (two inequalities: Firestore needs both in the index), with and without a shard."""
    indexes = json.loads((ROOT / "firestore.indexes.json").read_text())["indexes"]
    fields = [
        [(f["fieldPath"], f["order"]) for f in index["fields"]]
        for index in indexes
        if index["collectionGroup"] == collection
    ]
    written_since = [("status", "ASCENDING"), ("updated_at", "ASCENDING")]
    written_since.append(("next_run_at", "ASCENDING"))
    assert written_since in fields
    assert [("shard", "ASCENDING"), *written_since] in fields


def test_the_due_query_leaving_channels_out_reads_people_through_their_index():
    """A page that leaves channels out reads messages to people by `user not-in`
    (core.queues.Queue.due), with and without shards."""
    indexes = json.loads((ROOT / "firestore.indexes.json").read_text())["indexes"]
    fields = [
        [f["fieldPath"] for f in index["fields"]]
        for index in indexes
        if index["collectionGroup"] == "scheduled_messages"
    ]
    assert ["status", "next_run_at", "user"] in fields
    assert ["shard", "status", "next_run_at", "user"] in fields


def test_the_event_queries_have_their_composite_indexes():
    """Released events due again, with and without shards and channel ranges, and events
    whose lease expired (core.store.due_events, expired_event_leases)."""
    indexes = json.loads((ROOT / "firestore.indexes.json").read_text())["indexes"]
    fields = [
        [f["fieldPath"] for f in index["fields"]]
        for index in indexes
        if index["collectionGroup"] == "events"
    ]
    assert ["status", "next_run_at"] in fields
    assert ["shard", "status", "next_run_at"] in fields
    assert ["status", "next_run_at", "channel"] in fields
    assert ["shard", "status", "next_run_at", "channel"] in fields
    assert ["status", "lease.expires_at"] in fields


def test_the_pending_answers_query_has_its_composite_index():
    indexes = json.loads((ROOT / "firestore.indexes.json").read_text())["indexes"]
    fields = [
        [(f["fieldPath"], f["order"]) for f in index["fields"]]
        for index in indexes
        if index["collectionGroup"] == "responses"
    ]
    assert [("pending_update", "ASCENDING"), ("answered_at", "ASCENDING")] in fields


def test_the_teams_conversations_listing_has_its_composite_index():
    indexes = json.loads((ROOT / "firestore.indexes.json").read_text())["indexes"]
    fields = [
        [(f["fieldPath"], f["order"]) for f in index["fields"]]
        for index in indexes
        if index["collectionGroup"] == "teams_conversations"
    ]
    assert [("status", "ASCENDING"), ("name", "ASCENDING")] in fields
