"""The publishing pass (processor.publish) against the Pub/Sub emulator: what it counts, and
a failed publish that neither loses the document nor stops its channel for later ticks."""

from __future__ import annotations

import base64
import json
from datetime import timedelta
from typing import Any

import pytest
from google.api_core.exceptions import NotFound

from core.settings import Settings
from core.store import MESSAGES
from emulator.pubsub import create_topic
from messages.kind import MESSAGE_KIND
from processor.abc import Claim
from processor.claim import claim_occurrence
from targets.kinds import run_pass
from tests.fixtures.deliveries import ledger
from tests.fixtures.messages import seed_message
from tests.fixtures.pubsub import Subscription
from tests.fixtures.runtime import make_runtime


@pytest.fixture
def rt(db: Any, clock: Any, pubsub: Subscription) -> Any:
    return make_runtime(Settings.from_env(), db, clock, "tick")


def test_a_failed_publish_is_counted_and_the_next_tick_publishes_the_channel_again(
    db, clock, pubsub, project, monkeypatch, capsys
):
    seed_message(db, "m1", channel="C0AAA")
    monkeypatch.setenv("PUBSUB_TOPIC", "not-created-yet")
    rt = make_runtime(Settings.from_env(), db, clock, "tick")

    summary = run_pass(rt)

    assert (summary["published"], summary["errors"], summary["due"]) == (0, 1, 1)
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line]
    (line,) = [line for line in lines if line["severity"] == "ERROR"]
    assert (line["subject_id"], line["channel"], line["error_code"]) == (
        "m1",
        "C0AAA",
        NotFound.__name__,
    )
    assert ledger(db) == {}  # nothing claimed: the document is still due
    create_topic(f"projects/{project}/topics/not-created-yet")
    topic = f"projects/{project}/topics/not-created-yet"
    again = Subscription(topic, f"projects/{project}/subscriptions/late")

    assert run_pass(rt)["published"] == 1  # the channel's ordering key was resumed
    (pulled,) = again.pull()
    assert pulled.ordering_key == "C0AAA"


def test_the_pass_reconciles_expired_leases_and_publishes_what_they_release(
    rt, settings, db, clock, slack, pubsub
):
    # Claimed by an instance that died before posting; its lease has run out.
    seed_message(db, "m1")
    snap = db.collection(MESSAGES).document("m1").get()
    assert isinstance(
        claim_occurrence(make_runtime(settings, db, clock, "dead"), MESSAGE_KIND, snap), Claim
    )
    clock.advance(timedelta(seconds=settings.lease_seconds + 1))

    summary = run_pass(rt)

    assert (summary["reconciled"], summary["published"]) == (1, 0)
    # Released by reconciliation (Slack never got it), due again a minute later.
    clock.advance(timedelta(minutes=1))
    assert run_pass(rt)["published"] == 1
    (pulled,) = pubsub.pull()
    assert json.loads(base64.b64decode(pulled.push["message"]["data"]))["subject_id"] == "m1"
    assert slack.posts() == []
