"""Dead letters under DISPATCH=pubsub: a message Pub/Sub gave up on after repeated failed
pushes comes back to `deliver` from the dead-letter topic's subscription. It is escalated
once (an ERROR line and an alert naming the subject, the kind and the attempts),
acknowledged, and sends nothing; the occurrence stays due and is posted exactly once by a
later tick's message.

The Pub/Sub emulator keeps the dead-letter policy but forwards nothing to the dead-letter
topic (docs/pubsub.md, "Dead letters"), so the test adds to the message the tick published
the attributes Pub/Sub adds when it forwards one."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from core.models import message_delivery_id
from core.pubsub import DueOccurrence
from processor.dead_letter import DELIVERY_COUNT, SOURCE_SUBSCRIPTION
from processor.publish import publish
from tests.fixtures.clock import T0
from tests.fixtures.deliveries import ledger
from tests.fixtures.messages import message, seed_message
from tests.fixtures.pubsub import Pulled, Subscription, push
from tests.fixtures.runtime import make_runtime
from tests.fixtures.slack import ALERTS, alerts

ATTEMPTS = 5


@pytest.fixture
def rt(settings: Any, db: Any, clock: Any, pubsub: Subscription) -> Any:
    """The tick's runtime (settings read after the fixture set DISPATCH=pubsub)."""
    from core.settings import Settings

    return make_runtime(Settings.from_env(), db, clock, "tick")


def published(rt: Any, doc_id: str, kind: str = "message") -> None:
    counts = publish(rt, [DueOccurrence(kind, doc_id, T0, "C0123ABCD")])
    assert counts["published"] == 1


def dead_lettered(pulled: Pulled, source: str, attempts: int = ATTEMPTS) -> Pulled:
    """The message as Pub/Sub forwards it to the dead-letter topic: the same data, with the
    attributes naming the subscription that gave up and the attempts it made."""
    body = copy.deepcopy(pulled.push)
    body["message"]["attributes"] |= {
        SOURCE_SUBSCRIPTION: source,
        "CloudPubSubDeadLetterSourceSubscriptionProject": source.split("/")[1],
        "CloudPubSubDeadLetterSourceTopicPublishTime": body["message"]["publishTime"],
        DELIVERY_COUNT: str(attempts),
    }
    body["subscription"] = source.replace("deliver-pull", "deliver-dead-letters")
    return pulled._replace(push=body)


def error_lines(out: str) -> list[dict[str, Any]]:
    lines = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    return [line for line in lines if line["severity"] == "ERROR"]


def occurrence_posts(slack: Any) -> list[str | None]:
    return [p.delivery_id for p in slack.posts() if p.channel != ALERTS]


def test_a_message_that_failed_every_push_is_escalated_once_then_posted_once_later(
    rt, pubsub, deliver, db, slack, monkeypatch, capsys
):
    monkeypatch.setenv("ALERT_CHANNEL", ALERTS)
    seed_message(db, "m1")
    published(rt, "m1")
    monkeypatch.setenv("LEASE_SECONDS", "1")  # a broken deployment: every push answers 500
    for _ in range(ATTEMPTS):
        (failing,) = pubsub.pull()
        assert push(deliver, failing) == 500
        pubsub.nack(failing)
    monkeypatch.setenv("LEASE_SECONDS", "300")  # fixed; Pub/Sub had given up meanwhile
    capsys.readouterr()

    assert push(deliver, dead_lettered(failing, pubsub.path)) == 200  # acknowledged

    (line,) = error_lines(capsys.readouterr().out)
    assert line["status"] == "dead_lettered"
    assert (line["message_id"], line["kind"], line["attempts"]) == ("m1", "message", ATTEMPTS)
    assert line["source_subscription"] == pubsub.path
    (alert,) = alerts(slack)
    assert "`m1`" in alert and "message m1" in alert and f"after {ATTEMPTS} delivery" in alert
    assert occurrence_posts(slack) == []  # nothing claimed or sent for the dead letter
    assert ledger(db) == {}
    assert message(db, "m1")["status"] == "pending"  # still due

    (forwarded,) = pubsub.pull()  # Pub/Sub removes what it forwarded from deliver-push
    pubsub.ack(forwarded)
    published(rt, "m1")  # the next tick finds it due again
    (again,) = pubsub.pull()
    assert again.message_id != failing.message_id
    assert push(deliver, again) == 200

    delivery_id = message_delivery_id("m1", T0)
    assert occurrence_posts(slack) == [delivery_id]
    assert ledger(db)[delivery_id]["status"] == "sent"
    assert len(alerts(slack)) == 1


def test_a_dead_lettered_rotation_is_escalated_by_its_rotation_id(
    rt, pubsub, deliver, db, slack, monkeypatch, capsys
):
    monkeypatch.setenv("ALERT_CHANNEL", ALERTS)
    published(rt, "r1", kind="rotation")
    (pulled,) = pubsub.pull()
    capsys.readouterr()

    assert push(deliver, dead_lettered(pulled, pubsub.path, attempts=7)) == 200

    (line,) = error_lines(capsys.readouterr().out)
    assert (line["rotation_id"], line["kind"], line["attempts"]) == ("r1", "rotation", 7)
    (alert,) = alerts(slack)
    assert "Rotation `r1`" in alert and "after 7 delivery" in alert
    assert occurrence_posts(slack) == []
