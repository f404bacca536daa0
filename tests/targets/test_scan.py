"""The scan under DISPATCH=pubsub through the `tick` and `deliver` targets, against the
Pub/Sub and Firestore emulators: each due occurrence published once however many ticks it
waits, nothing lost when a publish or a push is, a full page continued by a scan request, and
with SHARDS above 1 a tick that only asks `deliver` to scan each shard."""

from __future__ import annotations

import base64
import json
from datetime import datetime, timedelta
from typing import Any

import pytest

from core.models import message_delivery_id
from processor.scan import SWEEP_AGE, SWEEP_EVERY
from tests.fixtures.api import call
from tests.fixtures.clock import T0
from tests.fixtures.deliveries import ledger
from tests.fixtures.messages import seed_message
from tests.fixtures.pubsub import Pulled, body_of, push
from tests.fixtures.tick import answer, at, bearer, tick

MINUTE = timedelta(minutes=1)
SECOND = timedelta(seconds=1)


def run_tick(tick_app: Any, now: datetime) -> dict[str, Any]:
    return answer(tick(tick_app.test_client(), headers=bearer(), body=at(now)), 200)


def subjects(pulled: list[Pulled]) -> list[str]:
    return sorted(body_of(p)["subject_id"] for p in pulled if body_of(p)["kind"] == "message")


def seed_backlog(db: Any, count: int, channels: int) -> list[str]:
    return [
        seed_message(db, f"b{i:03d}", channel=f"C0CHAN{i % channels:03d}", next_run_at=T0)
        for i in range(count)
    ]


def test_a_backlog_that_outlives_five_ticks_is_published_once(tick_app, pubsub, deliver, db, slack):
    ids = seed_backlog(db, 40, channels=8)

    published = [run_tick(tick_app, T0 + n * MINUTE)["published"] for n in range(5)]

    assert published == [40, 0, 0, 0, 0]
    pulled = pubsub.drain()
    assert subjects(pulled) == ids  # each once
    assert all(push(deliver, p) == 200 for p in pulled)
    assert sorted(slack.delivery_ids()) == sorted(message_delivery_id(i, T0) for i in ids)


def test_a_document_written_with_a_past_time_after_a_scan_is_published_by_the_next(
    tick_app, pubsub, deliver, db, slack
):
    seed_message(db, "early")
    assert run_tick(tick_app, T0)["published"] == 1
    # Written after that scan (a resume, a retry, a service writing as the API does), with a
    # time already past; and one written as the scan ran, its clock read just before it.
    seed_message(db, "late", next_run_at=T0 - 5 * MINUTE, updated_at=T0 + 20 * SECOND)
    seed_message(db, "racing", next_run_at=T0 - MINUTE, updated_at=T0 - 2 * SECOND)

    assert run_tick(tick_app, T0 + MINUTE)["published"] == 2
    assert run_tick(tick_app, T0 + 2 * MINUTE)["published"] == 0
    pulled = pubsub.drain()
    assert subjects(pulled) == ["early", "late", "racing"]


def test_a_message_edited_through_the_api_while_it_waits_is_published_again(
    tick_app, pubsub, deliver, api, db, slack, clock
):
    seed_message(db, "m1", next_run_at=T0 - MINUTE)
    assert run_tick(tick_app, T0)["published"] == 1
    clock.set(T0 + 20 * SECOND)
    # Edited after that scan read it, still due at a time already past: the message on the
    # topic was taken from the old version.
    status, _ = call(api, "PUT", "/messages/m1", {"text": "Stand-up moved to 10:00"})
    assert status == 200

    assert run_tick(tick_app, T0 + MINUTE)["published"] == 1
    pulled = pubsub.drain()
    assert subjects(pulled) == ["m1", "m1"]
    assert all(push(deliver, p) == 200 for p in pulled)
    [post] = slack.posts()
    assert post.text == "Stand-up moved to 10:00"


def test_failed_publishes_leave_the_window_to_the_next_scan_and_the_tick_answers(
    tick_app, pubsub, deliver, db, slack, clock, monkeypatch
):
    seed_message(db, "m1")
    assert run_tick(tick_app, T0)["published"] == 1
    seed_message(db, "m2", next_run_at=T0 + MINUTE)
    seed_message(db, "m3", next_run_at=T0 + MINUTE)  # the same channel
    monkeypatch.setenv("PUBSUB_TOPIC", "no-such-topic")  # every publish fails

    failed = run_tick(tick_app, T0 + MINUTE)
    assert (failed["published"], failed["errors"]) == (0, 2)

    monkeypatch.setenv("PUBSUB_TOPIC", "due-occurrences")
    assert run_tick(tick_app, T0 + 2 * MINUTE)["published"] == 2  # m2 and m3, not m1 again
    pulled = pubsub.drain()
    assert subjects(pulled) == ["m1", "m2", "m3"]
    clock.set(T0 + 2 * MINUTE)
    assert all(push(deliver, p) == 200 for p in pulled)
    assert sorted(slack.delivery_ids()) == [
        message_delivery_id("m1", T0),
        message_delivery_id("m2", T0 + MINUTE),
        message_delivery_id("m3", T0 + MINUTE),
    ]


def test_a_lost_push_is_published_again_by_the_sweep_within_its_bound(
    tick_app, pubsub, deliver, db, slack
):
    seed_message(db, "m1")
    assert run_tick(tick_app, T0)["published"] == 1
    pubsub.drain()  # acknowledged, never delivered: the message is gone

    # Nothing publishes it again until the sweep finds it, SWEEP_AGE after it was due at
    # the earliest and one tick after SWEEP_AGE + SWEEP_EVERY at the latest.
    bound = int((SWEEP_AGE + SWEEP_EVERY + MINUTE) / MINUTE)
    found = next(n for n in range(1, bound + 1) if run_tick(tick_app, T0 + n * MINUTE)["published"])
    assert SWEEP_AGE / MINUTE <= found <= bound
    [pulled] = pubsub.drain()
    assert push(deliver, pulled) == 200
    assert slack.delivery_ids() == [message_delivery_id("m1", T0)]
    assert ledger(db)[message_delivery_id("m1", T0)]["status"] == "sent"
    # Sent: no later sweep publishes it.
    assert [run_tick(tick_app, T0 + n * MINUTE)["published"] for n in (found + 5, found + 10)] == [
        0,
        0,
    ]


def test_a_full_page_is_continued_by_a_scan_request_that_deliver_takes(
    tick_app, pubsub, deliver, db, slack, monkeypatch, capsys
):
    monkeypatch.setenv("TICK_LIMIT", "3")
    ids = seed_backlog(db, 7, channels=7)

    summary = run_tick(tick_app, T0)
    assert (summary["published"], summary["scans"]) == (3, 1)

    taken: list[Pulled] = []
    for expected in ([3, 1], [1, 0]):  # the request continues; the last page is not full
        pulled = pubsub.drain()
        [request] = [p for p in pulled if body_of(p)["kind"] == "scan"]
        assert (body_of(request)["subject_id"], body_of(request)["shards"]) == ("message-0", 1)
        assert request.ordering_key == ""
        taken += [p for p in pulled if p is not request]
        capsys.readouterr()
        assert push(deliver, request) == 200
        lines = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line]
        [line] = [line for line in lines if line["message"] == "scan request taken"]
        assert [line["published"], line["scans"]] == expected
    taken += pubsub.drain()

    assert subjects(taken) == ids  # each published once
    assert all(push(deliver, p) == 200 for p in taken)
    assert len(slack.delivery_ids()) == 7


def test_with_four_shards_the_tick_asks_deliver_to_scan_each_and_reads_no_due_page(
    tick_app, pubsub, deliver, db, slack, monkeypatch
):
    monkeypatch.setenv("SHARDS", "4")
    ids = seed_backlog(db, 12, channels=12)  # written straight: no shard yet

    summary = run_tick(tick_app, T0)

    # One request per (kind, shard): rotations, messages, events.
    assert (summary["scans"], summary["published"], summary["due"]) == (12, 0, 0)
    requests = pubsub.drain()
    assert sorted((body_of(p)["subject_id"], body_of(p)["shards"]) for p in requests) == sorted(
        (f"{kind}-{shard}", 4) for kind in ("rotation", "message", "event") for shard in range(4)
    )
    # A `deliver` deployed without SHARDS still scans the shards the tick asked for.
    monkeypatch.delenv("SHARDS")
    assert all(push(deliver, p) == 200 for p in requests)
    occurrences = pubsub.drain()
    assert subjects(occurrences) == ids
    assert all(push(deliver, p) == 200 for p in occurrences)
    assert len(slack.delivery_ids()) == 12
    # A second tick asks again; the shards' scans find nothing new.
    monkeypatch.setenv("SHARDS", "4")
    assert run_tick(tick_app, T0 + MINUTE)["scans"] == 12
    assert all(push(deliver, p) == 200 for p in pubsub.drain())
    assert pubsub.drain() == []


@pytest.mark.parametrize(
    ("subject_id", "shards", "field"),
    [
        ("message-4", 4, "subject_id"),
        ("message-x", 4, "subject_id"),
        ("nothing-0", 4, "subject_id"),
        ("message-", 4, "subject_id"),
        ("message-0", None, "shards"),
        ("message-0", 0, "shards"),
        ("message-0", "4", "shards"),
    ],
)
def test_a_scan_request_for_no_shard_is_acknowledged_as_malformed(
    deliver, pubsub, subject_id, shards, field, capsys
):
    data = {"format": 1, "kind": "scan", "subject_id": subject_id, "due_at": T0.isoformat()}
    data |= {} if shards is None else {"shards": shards}
    message = {"data": base64.b64encode(json.dumps(data).encode()).decode(), "messageId": "1"}
    pulled = Pulled("ack", "1", "", {"subscription": pubsub.path, "message": message})

    assert push(deliver, pulled) == 200
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line]
    [line] = [line for line in lines if line["severity"] == "WARNING"]
    assert (line["status"], line["field"]) == ("malformed", field)
