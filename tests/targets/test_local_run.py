"""`make run DISPATCH=pubsub` end to end, as a developer runs it (`python -m emulator.run_local`
with the Makefile's environment): the tick over HTTP publishes what is due, the emulator
pushes each message to `deliver` served by functions-framework, and the Slack stand-in (the
Teams stand-in, for the Teams examples) gets one post per occurrence; the subscriptions it
created are read back from the emulator. Every server it starts takes a free port, so a `make
run` on the machine cannot break it, and nothing is refused before anyone has clicked."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from google.cloud.pubsub_v1 import SubscriberClient

from core.settings import Settings
from core.subscription import (
    MAX_DELIVERY_ATTEMPTS,
    MAX_RETRY_DELAY_SECONDS,
    MIN_RETRY_DELAY_SECONDS,
)
from emulator.slack_standin import RecordedPost
from emulator.teams_connector import RecordedActivity

ROOT = Path(__file__).resolve().parent.parent.parent
# Every port run_local reads (`LOCAL_<NAME>_PORT`, its Teams side's too): each server it
# starts, one a test must move off its fixed default.
PORT_NAMES = [
    name
    for module in ("run_local.py", "run_teams.py")
    for name in re.findall(r'"LOCAL_(\w+)_PORT"', (ROOT / "emulator" / module).read_text())
]


def free_port() -> int:
    with socket.create_server(("127.0.0.1", 0)) as sock:
        port: int = sock.getsockname()[1]
        return port


def posts(slack_port: int) -> list[RecordedPost]:
    url = f"http://127.0.0.1:{slack_port}/_control/posts"
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return [RecordedPost.from_json(p) for p in json.loads(response.read())]
    except OSError:
        return []  # not up yet


def teams_posts(teams_port: int) -> list[str]:
    """The delivery id each activity the Teams stand-in recorded carries."""
    url = f"http://127.0.0.1:{teams_port}/_control/activities"
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            recorded = [RecordedActivity.from_json(a) for a in json.loads(response.read())]
    except OSError:
        return []  # not up yet
    return [a.delivery_id or "" for a in recorded]


@pytest.mark.slow
def test_make_run_with_pubsub_delivers_the_examples_once_each(
    firestore_host: str, pubsub_host: str, project: str, tmp_path: Path
) -> None:
    slack_port = free_port()
    env: dict[str, Any] = {
        k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "PUBSUB_TOPIC"))
    }
    env |= {
        "DISPATCH": "pubsub",
        "GOOGLE_CLOUD_PROJECT": project,
        "FIRESTORE_EMULATOR_HOST": firestore_host,
        "PUBSUB_EMULATOR_HOST": pubsub_host,
        "LOCAL_TICK_SECONDS": "2",
        "LOCAL_DATA_DIR": str(tmp_path / ".run"),  # not the developer's own .run/
    }
    ports = {name: free_port() for name in PORT_NAMES} | {"SLACK": slack_port}
    teams_port = ports["TEAMS"]
    env |= {f"LOCAL_{name}_PORT": str(port) for name, port in ports.items()}
    log = tmp_path / "run.log"
    with log.open("wb") as out:
        run = subprocess.Popen(
            [sys.executable, "-m", "emulator.run_local"],
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    wanted = {"example-welcome", "example-no-broadcast", "example-rotation"}
    wanted_in_teams = {"example-teams-welcome", "example-teams-buttons", "example-teams-rotation"}
    try:
        for _ in range(300):  # bounded: 0.5 s apart; the examples are due at start
            in_teams = {d.split(":")[1] for d in teams_posts(teams_port) if d}
            done = wanted <= subjects(posts(slack_port)) and wanted_in_teams <= in_teams
            if done or run.poll() is not None:
                break
            time.sleep(0.5)
        time.sleep(4)  # two more ticks: what they publish again must not post again
        final = posts(slack_port)
        in_teams_final = teams_posts(teams_port)
    finally:
        run.send_signal(signal.SIGTERM)
        run.wait(timeout=60)
    output = log.read_text()

    assert wanted <= subjects(final), output[-4000:]
    delivered = [p.delivery_id for p in final]
    assert len(delivered) == len(set(delivered)), output[-4000:]  # one post per occurrence
    in_teams_once = sorted(d.split(":")[1] for d in in_teams_final)
    assert in_teams_once == sorted(wanted_in_teams), output[-4000:]
    # `deliver` printed each delivery, as the inline mode's tick does. Only the examples due
    # at start are compared: the every-minute series may be mid-send when the run is stopped.
    lines = [json.loads(line) for line in output.splitlines() if line.startswith("{")]
    logged = {line["delivery_id"] for line in lines if line.get("status") == "sent"}
    settled = {d for d in delivered if d and d.split(":")[1] in wanted}
    assert settled <= logged, output[-4000:]
    assert "published" in output  # the tick's summary line counts what it published
    assert "interaction refused" not in output  # no start-up probe posed as a click
    hosts = (firestore_host, pubsub_host)
    given = {*ports.values(), *(int(host.rpartition(":")[2]) for host in hosts)}
    printed = {int(port) for port in re.findall(r"(?:127\.0\.0\.1|localhost):(\d+)", output)}
    assert printed <= given, output[-4000:]  # no server on a fixed port
    applied_subscriptions_are_the_deployed_ones(project)


def applied_subscriptions_are_the_deployed_ones(project: str) -> None:
    """What the run created in the emulator, read back: ordered, with the dead-letter policy
    and the ack deadline of core/subscription.py, and the dead letters pushed to `deliver`."""
    with SubscriberClient() as subscriber:
        deliver = subscriber.get_subscription(
            subscription=f"projects/{project}/subscriptions/deliver-push"
        )
        dead_letters = subscriber.get_subscription(
            subscription=f"projects/{project}/subscriptions/deliver-dead-letters"
        )
    assert deliver.enable_message_ordering
    assert deliver.topic == f"projects/{project}/topics/due-occurrences"
    policy = deliver.dead_letter_policy
    assert policy.dead_letter_topic == f"projects/{project}/topics/due-occurrences-dead-letters"
    assert policy.max_delivery_attempts == MAX_DELIVERY_ATTEMPTS
    timeout = Settings.from_env({"SLACK_API_URL": "http://127.0.0.1:1/"}).slack_timeout_seconds
    assert deliver.ack_deadline_seconds >= 2 * timeout
    assert deliver.retry_policy.minimum_backoff.total_seconds() == MIN_RETRY_DELAY_SECONDS
    assert deliver.retry_policy.maximum_backoff.total_seconds() == MAX_RETRY_DELAY_SECONDS
    assert dead_letters.topic == policy.dead_letter_topic
    assert dead_letters.push_config.push_endpoint == deliver.push_config.push_endpoint


def subjects(recorded: list[RecordedPost]) -> set[str]:
    """The ids of the documents posted (a delivery id is `<kind>:<id>:<occurrence>`)."""
    return {p.delivery_id.split(":")[1] for p in recorded if p.delivery_id}
