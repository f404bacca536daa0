"""Fixtures for DISPATCH=pubsub: the official Pub/Sub emulator (one per session, started only
by a test that asks for it), a topic and an ordered pull subscription per test (in the
test's own project), and functions-framework's test client of the `deliver` target.

`Subscription` plays Pub/Sub's push from a pull subscription, so a test decides when a
message is delivered, redelivered (`nack`: its ack deadline set to 0, which is also what an
expired deadline does), or acknowledged: the message and its redeliveries are Pub/Sub's own.
"""

from __future__ import annotations

import base64
import itertools
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

import pytest
from google.cloud import firestore
from google.cloud.pubsub_v1 import SubscriberClient

from core.clock import FixedClock
from emulator.pubsub import EMULATOR_HOST_ENV, PubSubEmulator, create_subscription, create_topic

MAIN = str(Path(__file__).resolve().parent.parent / "main.py")
TOPIC_ID = "due-occurrences"
ADMIN = {"Authorization": "Bearer test-admin-token-0123456789"}  # tests.conftest.ADMIN_TOKEN


@pytest.fixture(scope="session")
def pubsub_host() -> Iterator[str]:
    emulator = PubSubEmulator()
    emulator.start()
    os.environ[EMULATOR_HOST_ENV] = emulator.host_port
    try:
        yield emulator.host_port
    finally:
        emulator.stop()
        os.environ.pop(EMULATOR_HOST_ENV, None)


class Pulled(NamedTuple):
    """A message as a subscriber received it: what acknowledging it takes, and the body a
    push subscription would POST for it."""

    ack_id: str
    message_id: str
    ordering_key: str
    push: dict[str, Any]


class Subscription:
    """An ordered pull subscription to the test's topic."""

    def __init__(self, topic: str, path: str) -> None:
        create_subscription(topic, path)
        self.path = path
        self.client = SubscriberClient()

    def pull(self, count: int = 1) -> list[Pulled]:
        """The next `count` messages Pub/Sub hands out (a bounded number of pulls)."""
        got: list[Pulled] = []
        for _ in range(20):
            response = self.client.pull(
                request={"subscription": self.path, "max_messages": count - len(got)},
                timeout=10,
            )
            got.extend(self._pulled(r) for r in response.received_messages)
            if len(got) >= count:
                return got
        raise AssertionError(f"pulled {len(got)} of {count} messages from {self.path}")

    def _pulled(self, received: Any) -> Pulled:
        message = received.message
        push = {
            "subscription": self.path,
            "message": {
                "data": base64.b64encode(message.data).decode(),
                "messageId": message.message_id,
                "attributes": dict(message.attributes),
                "orderingKey": message.ordering_key,
                "publishTime": message.publish_time.isoformat(),
            },
        }
        return Pulled(received.ack_id, message.message_id, message.ordering_key, push)

    def ack(self, *pulled: Pulled) -> None:
        ids = [p.ack_id for p in pulled]
        self.client.acknowledge(request={"subscription": self.path, "ack_ids": ids})

    def nack(self, *pulled: Pulled) -> None:
        """Hand the messages back for redelivery now (the subscriber client's nack)."""
        self.client.modify_ack_deadline(
            request={
                "subscription": self.path,
                "ack_ids": [p.ack_id for p in pulled],
                "ack_deadline_seconds": 0,
            }
        )

    def is_empty(self) -> bool:
        response = self.client.pull(
            request={"subscription": self.path, "max_messages": 1}, timeout=3
        )
        return not response.received_messages


@pytest.fixture
def pubsub(
    pubsub_host: str, env: dict[str, str], project: str, monkeypatch: pytest.MonkeyPatch
) -> Subscription:
    """DISPATCH=pubsub for this test: its topic, and a subscription reading it."""
    topic = f"projects/{project}/topics/{TOPIC_ID}"
    create_topic(topic)
    monkeypatch.setenv("DISPATCH", "pubsub")
    monkeypatch.setenv("PUBSUB_TOPIC", TOPIC_ID)
    return Subscription(topic, f"projects/{project}/subscriptions/deliver-pull")


@pytest.fixture(scope="session")
def deliver_app() -> Iterator[Any]:
    """functions-framework's own app serving main.py's `deliver` target."""
    import functions_framework

    with pytest.MonkeyPatch.context() as mp:
        mp.delenv("FUNCTION_TARGET", raising=False)
        yield functions_framework.create_app(
            target="deliver", source=MAIN, signature_type="cloudevent"
        )


@pytest.fixture
def deliver(
    deliver_app: Any,
    env: dict[str, str],
    db: firestore.Client,
    clock: FixedClock,
    monkeypatch: pytest.MonkeyPatch,
) -> Any:
    """A test client of `deliver` on this test's project and clock; every push runs as a
    new function instance (a worker id of its own), as Pub/Sub's pushes may."""
    from tests.conftest import make_runtime

    instances = itertools.count(1)
    monkeypatch.setattr(
        "targets.deliver.runtime_for",
        lambda s: make_runtime(s, db, clock, f"deliver-{next(instances)}"),
    )
    return deliver_app.test_client()


def push(client: Any, pulled: Pulled, headers: dict[str, str] | None = None) -> int:
    """POST the message to `deliver` as a push subscription would: the status it answers
    (2xx: Pub/Sub acknowledges it)."""
    response = client.post(
        "/",
        data=json.dumps(pulled.push),
        headers=ADMIN if headers is None else headers,
        content_type="application/json",
    )
    status: int = response.status_code
    return status
