"""Pacing under DISPATCH=pubsub across `deliver` instances: four functions-framework
processes serve `deliver`, the emulator's ordered push subscription spreads a channel's
messages over them (through a relay that hands each push to the next process), and the
Slack stand-in still sees one post a second in the channel, each occurrence once."""

from __future__ import annotations

import os
import time
from datetime import timedelta
from itertools import pairwise
from typing import Any

import pytest
from google.cloud import firestore

from core.clock import SystemClock
from core.settings import Settings
from emulator.pubsub import EMULATOR_HOST_ENV, PushRelay, create_subscription, create_topic
from emulator.run_local import serve, wait_for_function
from emulator.slack_standin import SlackStandIn
from processor.scan import scan_pass
from targets.kinds import KINDS
from tests.fixtures.messages import seed_message
from tests.fixtures.runtime import ADMIN_TOKEN, make_runtime
from tests.targets.test_local_run import free_port

MESSAGES = 30
INSTANCES = 4
CHANNEL = "C0PACED01"


@pytest.mark.slow
def test_four_deliver_processes_post_a_channel_once_a_second_each_occurrence_once(
    pubsub_host: str,
    firestore_host: str,
    project: str,
    env: dict[str, str],
    db: firestore.Client,
    slack: SlackStandIn,
) -> None:
    now = SystemClock().now()
    due = now - timedelta(minutes=1)
    ids = {
        seed_message(db, f"paced-{i:02d}", channel=CHANNEL, send_at=due, next_run_at=due)
        for i in range(MESSAGES)
    }
    topic = f"projects/{project}/topics/due-occurrences"
    create_topic(topic)
    served = {
        **{k: v for k, v in os.environ.items() if not k.startswith("PUBSUB_TOPIC")},
        **env,
        "FIRESTORE_EMULATOR_HOST": firestore_host,
        EMULATOR_HOST_ENV: pubsub_host,
        "DISPATCH": "pubsub",
        "PUBSUB_TOPIC": topic,
    }
    ports = [free_port() for _ in range(INSTANCES)]
    processes = [serve("deliver", port, served) for port in ports]
    urls = [f"http://127.0.0.1:{port}/" for port in ports]
    relay = PushRelay(urls[0], ADMIN_TOKEN, more=urls[1:])
    try:
        for port, process in zip(ports, processes, strict=True):
            wait_for_function(port, process)
        relay.start()
        create_subscription(topic, f"projects/{project}/subscriptions/paced", relay.url)
        settings = Settings.from_env(served)
        rt = make_runtime(settings, db, SystemClock(), "tick")
        assert scan_pass(rt, KINDS)["published"] == MESSAGES
        posts = _posts_when(slack, MESSAGES)
    finally:
        relay.stop()
        for process in processes:
            process.terminate()
        for process in processes:
            process.wait(timeout=30)

    delivered = [p.delivery_id.split(":")[1] for p in posts if p.delivery_id]
    assert sorted(delivered) == sorted(ids)  # every occurrence posted, none twice
    times = sorted(p.received_at for p in posts)
    gaps = [later - earlier for earlier, later in pairwise(times)]
    assert min(gaps) >= 1.0, gaps


def _posts_when(slack: SlackStandIn, count: int) -> list[Any]:
    """The stand-in's posts once it holds `count` (a bounded wait: pacing takes ~count s),
    and a few seconds on, so a late duplicate would show."""
    for _ in range(4 * count + 120):
        if len(slack.posts()) >= count:
            break
        time.sleep(0.5)
    time.sleep(3)
    return slack.posts()
