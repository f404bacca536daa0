"""The `tick` target under DISPATCH=pubsub, over HTTP: what is due is published to the
Pub/Sub emulator, one message per document with its channel as ordering key, and nothing is
claimed or posted."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import flask
import functions_framework
import pytest

from core.models import message_delivery_id
from core.snapshot_codec import decode
from core.store import MESSAGES, ROTATIONS
from emulator.slack_standin import Fault
from tests.fixtures.api import call
from tests.fixtures.clock import T0
from tests.fixtures.deliveries import ledger
from tests.fixtures.messages import message, seed_message
from tests.fixtures.pubsub import Subscription, push
from tests.fixtures.runtime import ADMIN_TOKEN, MAIN


@pytest.fixture(scope="module")
def tick_app() -> Iterator[flask.Flask]:
    with pytest.MonkeyPatch.context() as mp:
        mp.delenv("FUNCTION_TARGET", raising=False)
        yield functions_framework.create_app(target="tick", source=MAIN)


def tick(app: flask.Flask, now: datetime = T0, **body: Any) -> dict[str, Any]:
    response = app.test_client().post(
        "/",
        data=json.dumps({"now": now.isoformat(), **body}),
        headers={"Authorization": f"Bearer {ADMIN_TOKEN}"},
        content_type="application/json",
    )
    assert response.status_code == 200, response.get_data(as_text=True)
    summary: dict[str, Any] = response.get_json()
    return summary


def seed_rotation(db: Any) -> str:
    """A daily rotation whose turn (09:30 Berlin) was due at T0."""
    db.collection(ROTATIONS).document("standup").set(
        {
            "name": "Stand-up host",
            "channel": "C0ROTATION",
            "members": ["U0ALICE", "U0BOB"],
            "timezone": "Europe/Berlin",
            "send_time": "09:30",
            "weekdays": [0, 1, 2, 3, 4],
            "text": "Today's host: {member}",
            "cursor": 0,
            "status": "active",
            "next_run_at": datetime(2027, 1, 4, 8, 30, tzinfo=UTC),
            "version": 1,
        }
    )
    return "standup"


def test_a_tick_publishes_each_due_document_once_ordered_by_channel_and_claims_nothing(
    tick_app, pubsub: Subscription, db, slack
):
    first = seed_message(db, "m1", channel="C0AAA", next_run_at=T0 - timedelta(minutes=2))
    second = seed_message(db, "m2", channel="C0AAA", next_run_at=T0 - timedelta(minutes=1))
    later = T0 + timedelta(hours=1)
    seed_message(db, "later", channel="C0AAA", send_at=later, next_run_at=later)
    seed_rotation(db)

    summary = tick(tick_app)

    assert (summary["published"], summary["due"], summary["claimed"]) == (3, 3, 0)
    assert summary["rotations"]["published"] == 1
    pulled = pubsub.pull(3)
    bodies = [json.loads(base64.b64decode(p.push["message"]["data"])) for p in pulled]
    assert sorted((b["kind"], b["subject_id"]) for b in bodies) == [
        ("message", first),
        ("message", second),
        ("rotation", "standup"),
    ]
    by_id = {b["subject_id"]: (b, p) for b, p in zip(bodies, pulled, strict=True)}
    body = by_id[first][0]
    assert {k: v for k, v in body.items() if k != "document"} == {
        "format": 2,
        "kind": "message",
        "subject_id": first,
        "due_at": (T0 - timedelta(minutes=2)).isoformat(),
    }
    # The document as the tick read it, at its version: `deliver` claims from it.
    carried = decode(db, base64.b64decode(body["document"]))
    stored = db.collection(MESSAGES).document(first).get()
    assert (carried.reference, carried.to_dict()) == (stored.reference, stored.to_dict())
    assert carried.update_time == stored.update_time
    assert by_id[first][1].ordering_key == "C0AAA"
    assert by_id["standup"][1].ordering_key == "C0ROTATION"
    assert by_id[first][1].push["message"]["attributes"] == {"kind": "message", "subject_id": first}
    # One channel's messages come in the order they were due.
    assert [b["subject_id"] for b in bodies if b["kind"] == "message"] == [first, second]
    assert message(db, first)["status"] == "pending"
    assert ledger(db) == {}
    assert slack.posts() == []


def test_a_dry_run_under_pubsub_previews_and_publishes_nothing(tick_app, pubsub, db, slack):
    seed_message(db, "m1")

    summary = tick(tick_app, dry_run=True)

    assert summary["dry_run"] is True
    assert [p["id"] for p in summary["previews"]] == ["m1"]
    assert summary["published"] == 0
    assert pubsub.is_empty()


def test_a_waiting_occurrence_is_published_by_one_tick_and_posted_once(
    tick_app, pubsub, deliver, db, slack
):
    seed_message(db, "m1")
    assert tick(tick_app)["published"] == 1
    # Still waiting for `deliver` a minute later: its message is on the topic already.
    assert tick(tick_app, now=T0 + timedelta(minutes=1))["published"] == 0

    [pulled] = pubsub.pull(1)
    assert push(deliver, pulled) == 200
    pubsub.ack(pulled)

    assert slack.delivery_ids() == [message_delivery_id("m1", T0)]
    assert ledger(db)[message_delivery_id("m1", T0)]["status"] == "sent"
    assert tick(tick_app, now=T0 + timedelta(minutes=2))["published"] == 0
    assert pubsub.is_empty()


def test_a_message_to_a_person_is_ordered_by_them_and_deliver_posts_it_once_in_their_dm(
    tick_app, pubsub, deliver, db, slack
):
    seed_message(db, "dm1", channel=None, user="U0PERSON1")

    assert tick(tick_app)["published"] == 1
    [pulled] = pubsub.pull(1)
    assert pulled.ordering_key == "U0PERSON1"  # their DM is one conversation
    assert push(deliver, pulled) == 200
    assert push(deliver, pulled) == 200  # redelivered: nothing more is posted
    pubsub.ack(pulled)

    [post] = slack.posts()
    assert post.channel == slack.dm_channel("U0PERSON1")
    assert post.delivery_id == message_delivery_id("dm1", T0)
    entry = ledger(db)[message_delivery_id("dm1", T0)]
    assert (entry["status"], entry["channel"]) == ("sent", post.channel)


def test_a_released_event_is_published_and_deliver_posts_it_once(
    tick_app, pubsub, deliver, api, db, slack, clock
):
    """An event rate-limited in its first caller's request is released; under
    DISPATCH=pubsub a tick publishes its retry, ordered by its channel, and `deliver` posts
    it once however often Pub/Sub pushes it."""
    slack.inject(Fault("rate_limit", retry_after=30, times=1))
    body = {"key": "stage-9:done", "channel": "C0EVENTS", "text": "Stage 9 is done"}
    status, first = call(api, "POST", "/events", body)
    assert (status, first["status"]) == (201, "sending")

    retry = T0 + timedelta(seconds=31)
    clock.set(retry)
    assert tick(tick_app, now=retry)["published"] == 1
    [pulled] = pubsub.pull(1)
    assert pulled.ordering_key == "C0EVENTS"
    assert [push(deliver, pulled), push(deliver, pulled)] == [200, 200]
    pubsub.ack(pulled)

    assert slack.delivery_ids() == [first["delivery_id"]]
    assert ledger(db)[first["delivery_id"]]["status"] == "sent"
    assert call(api, "POST", "/events", body)[1]["status"] == "sent"
