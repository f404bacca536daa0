"""`make run`: the whole product on this machine, the way it runs on Google Cloud.

Starts the Firestore emulator and the Slack stand-in (or, with SLACK_BOT_TOKEN set and no
SLACK_API_URL, uses real Slack), serves the `tick`, `api` and `interactions` targets with
functions-framework exactly as Cloud Functions would, seeds a few example schedules (one with
two buttons: the stand-in replays a click on them, signed as Slack signs it, to the local
`interactions` target), prints the composer page's address and the run's admin token, and
then plays Cloud Scheduler: an authenticated POST to
`tick` every LOCAL_TICK_SECONDS (default 15). Each delivery is printed as the function logs
it. Ctrl-C stops everything.

The emulator's documents and the admin token are kept in `.run/` (LOCAL_DATA_DIR) between runs
(emulator/local_data.py); the examples are seeded only where absent, so a restart neither
duplicates nor re-sends them. RESET=1 (`make run RESET=1`) deletes `.run/` first.

`make run DISPATCH=pubsub` (docs/pubsub.md) runs the Pub/Sub dispatcher instead: the Pub/Sub
emulator too, the tick publishing what is due, and `deliver` (served like the others) pushed
each message through an ordered push subscription; the same deliveries are printed.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Mapping
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import FrameType
from typing import Any
from zoneinfo import ZoneInfo

from google.api_core.exceptions import AlreadyExists
from google.cloud import firestore

from core.documents.messages import MessageWrite, Status
from core.documents.rotations import RotationStatus, RotationWrite
from core.schedule import Recurrence
from core.settings import PUBSUB, Settings
from core.store import MESSAGES, ROTATIONS
from core.subscription import delivery_subscriptions
from emulator.firestore import FirestoreEmulator
from emulator.local_data import LocalData, SavedOnStop, create_once
from emulator.pubsub import (
    EMULATOR_HOST_ENV,
    PubSubEmulator,
    PushRelay,
    create_push_subscription,
    create_topic,
)
from emulator.run_teams import TEAMS_TARGET_PORT, set_up_teams_demo, start_teams_standin
from emulator.slack_standin import SlackStandIn

ROOT = Path(__file__).resolve().parent.parent
# What is kept between runs (emulator/local_data.py); LOCAL_DATA_DIR moves it (tests do).
DATA_DIR_ENV = "LOCAL_DATA_DIR"
FUNCTION_PORT = int(os.environ.get("LOCAL_FUNCTION_PORT", "8080"))
API_PORT = int(os.environ.get("LOCAL_API_PORT", "8081"))
FIRESTORE_PORT = int(os.environ.get("LOCAL_FIRESTORE_PORT", "8686"))
SLACK_PORT = int(os.environ.get("LOCAL_SLACK_PORT", "8765"))
# DISPATCH=pubsub only: the Pub/Sub emulator, the `deliver` target, and the push relay.
PUBSUB_PORT = int(os.environ.get("LOCAL_PUBSUB_PORT", "8685"))
DELIVER_PORT = int(os.environ.get("LOCAL_DELIVER_PORT", "8082"))
# The `interactions` target: Slack's (here: the stand-in's replayed) clicks on buttons.
INTERACTIONS_PORT = int(os.environ.get("LOCAL_INTERACTIONS_PORT", "8084"))
PUSH_PORT = int(os.environ.get("LOCAL_PUSH_PORT", "8083"))
# The targets served for every run, in the order they start (`deliver` too with DISPATCH=pubsub).
SERVED = (
    ("tick", FUNCTION_PORT),
    ("api", API_PORT),
    ("interactions", INTERACTIONS_PORT),
    ("teams", TEAMS_TARGET_PORT),
)


WEEKLY = "FREQ=WEEKLY;BYDAY=MO,TH;BYHOUR=9;BYMINUTE=30"


def examples(now: datetime, channel: str) -> dict[str, MessageWrite]:
    """Schedules that show what the product does: some due within the first minutes, and
    some that stay waiting, so the page has sent, failed and upcoming messages at once."""
    berlin = ZoneInfo("Europe/Berlin")
    soon = now.replace(second=0, microsecond=0) + timedelta(minutes=1)
    tomorrow_nine = (now.astimezone(berlin) + timedelta(days=1)).replace(
        hour=9, minute=0, second=0, microsecond=0
    )
    today = now.astimezone(berlin).strftime("%Y-%m-%dT00:00")
    one_off = MessageWrite(channel=channel, status=Status.PENDING, send_at=now, next_run_at=now)
    return {
        "example-welcome": replace(
            one_off, text="Welcome! This one-off message was due when `make run` started."
        ),
        "example-every-minute": MessageWrite(
            channel=channel,
            text="Recurring: every minute, three times (FREQ=MINUTELY;COUNT=3).",
            timezone="Europe/Berlin",
            rrule="FREQ=MINUTELY;COUNT=3",
            dtstart=soon.astimezone(berlin).strftime("%Y-%m-%dT%H:%M"),
            status=Status.RECURRING,
            next_run_at=soon,
        ),
        "example-no-broadcast": replace(
            one_off, text="Heads up <!channel> & @here: user text never pings everyone."
        ),
        "example-buttons": replace(
            one_off,
            text="Did you finish the plan? (buttons: replay a click through the stand-in)",
            actions=[
                {"id": "done", "label": "Done", "style": "primary"},
                {"id": "not-yet", "label": "Not yet"},
            ],
        ),
        "example-bad-timezone": replace(
            one_off,
            text="This one is stored with a timezone that does not exist.",
            timezone="Mars/Olympus_Mons",
        ),
        "example-tomorrow": replace(
            one_off,
            text="*Tomorrow at 09:00 Berlin time*: a one-off still waiting; edit or cancel it.",
            timezone="Europe/Berlin",
            send_at=tomorrow_nine.astimezone(UTC),
            next_run_at=tomorrow_nine.astimezone(UTC),
        ),
        "example-weekly": MessageWrite(
            channel=channel,
            text="Weekly reminder, Mondays and Thursdays at 09:30 Berlin time:\n"
            "- fill in the _timesheet_\n- see <https://example.com|the handbook>",
            timezone="Europe/Berlin",
            rrule=WEEKLY,
            dtstart=today,
            status=Status.RECURRING,
            next_run_at=Recurrence.parse(WEEKLY, today, "Europe/Berlin").next_after(now),
        ),
    }


def name_workspace(standin: SlackStandIn, channel: str) -> None:
    """The seeded workspace's names (emulator/slack_directory.py), and the examples' ids
    named too, so the page shows #names and @Names from the first tick."""
    standin.seed_workspace()
    standin.add_channel(channel, "demo")
    for user, name, real_name in (
        ("U0DEMOANA", "ana.demo", "Ana Demo"),
        ("U0DEMOBEN", "ben.demo", "Ben Demo"),
        ("U0DEMOCEM", "cem.demo", "Cem Demo"),
    ):
        standin.add_person(user, name, real_name, f"{name}@example.com")


def example_rotation(now: datetime, channel: str) -> RotationWrite:
    """A daily rotation whose turn today was due a minute ago: the first pass posts it."""
    local = now.astimezone(ZoneInfo("Europe/Berlin")) - timedelta(minutes=1)
    return RotationWrite(
        name="Stand-up host",
        channel=channel,
        members=["U0DEMOANA", "U0DEMOBEN", "U0DEMOCEM"],
        timezone="Europe/Berlin",
        send_time=local.strftime("%H:%M"),
        weekdays=list(range(7)),
        text="Today's stand-up host is {member} (a rotation: one turn a day).",
        actions=[{"id": "skip_today", "label": "Skip me today"}],
        cursor=0,
        status=RotationStatus.ACTIVE,
        next_run_at=now,
    )


EXAMPLE_ROTATION = "example-rotation"


def seed(db: firestore.Client, channel: str, now: datetime) -> None:
    """The examples, each created only if absent: a kept one (edited, sent) stays as it is."""
    for doc_id, data in examples(now, channel).items():
        created = replace(data, created_at=now, updated_at=now, version=1)
        first_line = str(data.text).partition("\n")[0]
        create_once(db.collection(MESSAGES).document(doc_id), created.to_document(), first_line)
    rotation = replace(example_rotation(now, channel), created_at=now, updated_at=now, version=1)
    create_once(
        db.collection(ROTATIONS).document(EXAMPLE_ROTATION),
        rotation.to_document(),
        str(rotation.text),
    )


def local_data(environ: Mapping[str, str]) -> LocalData:
    """The folder this run keeps its data in; emptied first when RESET is set (to anything
    but "" or "0"), for `make run RESET=1`."""
    kept = LocalData(Path(environ.get(DATA_DIR_ENV) or ROOT / ".run"))
    if environ.get("RESET", "") not in ("", "0"):
        kept.reset()
        print(f"RESET: deleted {kept.root}; starting clean", flush=True)
    return kept


def banner(api_port: int, token: str, google_client_id: str | None = None) -> str:
    """What `make run` prints once everything is up: where the page is and how to sign in.
    Google sign-in wants the page on `localhost` (an origin its OAuth client lists)."""
    if google_client_id:
        page = f"http://localhost:{api_port}/ (sign in with Google: COMPOSER_CLIENT_ID="
        page += f"{google_client_id}; COMPOSER_USERS decides who may)"
    else:
        page = f"http://127.0.0.1:{api_port}/ (paste the admin token when the page asks, "
        page += "once per browser tab)"
    return (
        f"Composer page: {page}\n"
        f"Admin token for this run: ADMIN_TOKEN={token} (also for curl: "
        f'-H "Authorization: Bearer {token}")'
    )


def replay_hint(control_url: str, interactions_url: str) -> str:
    """How a developer clicks a button without Slack: the stand-in signs the click as Slack
    does and posts it to the `interactions` target."""
    body = json.dumps({"action_id": "done", "user": "U0DEMOANA"})
    return (
        f"interactions target on {interactions_url}; replay a click on example-buttons:\n"
        f"  curl -X POST {control_url}click -d '{body}'\n"
        f"  (then {control_url}posts shows the answer, {control_url}replies any ephemeral reply)"
    )


def native_hint(control_url: str, channel: str) -> str:
    """How a developer types `/schedule` and opens the Home tab without Slack: the stand-in
    sends them, signed as Slack signs, to the `interactions` target (docs/slack-app.md)."""
    typed = json.dumps({"user": "U0DEMOANA", "channel": channel, "command": "/schedule"})
    home = json.dumps({"event": {"type": "app_home_opened", "user": "U0DEMOANA"}})
    submitted = json.dumps({"user": "U0DEMOANA", "values": {"<action_id>": "<value>"}})
    return (
        "type /schedule as Ana (opens the modal), then submit it with its fields' values:\n"
        f"  curl -X POST {control_url}command -d '{typed}'\n"
        f"  curl -X POST {control_url}submit -d '{submitted}'\n"
        "open Ana's Home tab:\n"
        f"  curl -X POST {control_url}event -d '{home}'"
    )


def tick(token: str) -> dict[str, Any]:
    request = urllib.request.Request(
        f"http://127.0.0.1:{FUNCTION_PORT}/",
        data=b"{}",
        method="POST",
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=120) as response:  # noqa: S310 (local)
        body: dict[str, Any] = json.loads(response.read())
        return body


def serve(target: str, port: int, env: dict[str, str]) -> subprocess.Popen[bytes]:
    """One functions-framework server per target, as Cloud Functions deploys them (with a
    longer keep-alive: emulator/serve_function.py)."""
    command = [
        sys.executable,
        "-m",
        "emulator.serve_function",
        "--target",
        target,
        "--source",
        str(ROOT / "main.py"),
        "--port",
        str(port),
    ]
    return subprocess.Popen(command, cwd=ROOT, env=env)


def wait_for_function(port: int, process: subprocess.Popen[bytes]) -> None:
    """Until the server accepts connections: it listens once it has loaded its target. No
    request is sent, so no target logs a refusal (an unsigned click, a missing token) for a
    probe that no one made."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit("the functions-framework server exited; see its output above")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=2).close()
        except OSError:
            time.sleep(0.3)
        else:
            return
    raise SystemExit("the functions-framework server did not start within 60 s")


def start_pubsub(project: str, token: str, env: dict[str, str]) -> list[Any]:
    """DISPATCH=pubsub: the Pub/Sub emulator (unless PUBSUB_EMULATOR_HOST names one), the
    topic, `deliver` served by functions-framework, and an ordered push subscription to it
    through the relay that signs each push as Google would (emulator.pubsub.PushRelay)."""
    parts: list[Any] = []
    if not os.environ.get(EMULATOR_HOST_ENV):
        emulator = PubSubEmulator(port=PUBSUB_PORT)
        emulator.start()
        parts.append(emulator)
        os.environ[EMULATOR_HOST_ENV] = emulator.host_port
    env[EMULATOR_HOST_ENV] = os.environ[EMULATOR_HOST_ENV]
    env.setdefault("PUBSUB_TOPIC", "due-occurrences")
    settings = Settings.from_env(env)
    topic = settings.pubsub_topic
    assert topic is not None  # DISPATCH=pubsub requires it
    deliver = serve("deliver", DELIVER_PORT, env)
    parts.append(deliver)
    wait_for_function(DELIVER_PORT, deliver)
    relay = PushRelay(f"http://127.0.0.1:{DELIVER_PORT}/", token, port=PUSH_PORT).start()
    parts.append(relay)
    _, topic_project, _, topic_id = topic.split("/")
    subscriptions = delivery_subscriptions(
        topic_project,
        topic_id,
        relay.url,
        slack_timeout_seconds=settings.slack_timeout_seconds,
    )
    # Topics first: the dead-letter policy names a topic that must exist. An emulator kept
    # from an earlier run has them all already.
    for subscription in subscriptions:
        with contextlib.suppress(AlreadyExists):
            create_topic(subscription.path("topics", subscription.topic))
    for subscription in subscriptions:
        with contextlib.suppress(AlreadyExists):
            create_push_subscription(subscription)
    print(
        f"Pub/Sub emulator: {env[EMULATOR_HOST_ENV]}; {topic} pushes to deliver on "
        f"http://127.0.0.1:{DELIVER_PORT}/ (ordered, through {relay.url}), its dead letters "
        f"too (topic {subscriptions[1].topic})",
        flush=True,
    )
    return parts


def main() -> int:
    project = os.environ.get("GOOGLE_CLOUD_PROJECT", "demo-scheduler")
    kept = local_data(os.environ)
    token = os.environ.get("ADMIN_TOKEN") or kept.admin_token()
    interval = float(os.environ.get("LOCAL_TICK_SECONDS", "15"))
    real_slack = bool(os.environ.get("SLACK_BOT_TOKEN")) and not os.environ.get("SLACK_API_URL")
    channel = os.environ.get("DEMO_CHANNEL", "C0DEMO0001")
    if real_slack and "DEMO_CHANNEL" not in os.environ:
        raise SystemExit("sending to real Slack: set DEMO_CHANNEL to a channel id the bot is in")

    stack: list[Any] = []
    env = {**os.environ, "GOOGLE_CLOUD_PROJECT": project, "ADMIN_TOKEN": token}
    env.setdefault("SLACK_SIGNING_SECRET", secrets.token_hex(16))
    env.setdefault("APP_ENV", "development")
    try:
        if not os.environ.get("FIRESTORE_EMULATOR_HOST"):
            emulator = FirestoreEmulator(port=FIRESTORE_PORT, import_data=kept.firestore_import())
            emulator.start()
            stack.append(emulator)
            stack.append(SavedOnStop(kept, emulator.host_port, project))
            os.environ["FIRESTORE_EMULATOR_HOST"] = emulator.host_port
        env["FIRESTORE_EMULATOR_HOST"] = os.environ["FIRESTORE_EMULATOR_HOST"]
        print(f"Firestore emulator: {env['FIRESTORE_EMULATOR_HOST']} (project {project})")
        print(f"Kept between runs in {kept.root} (make run RESET=1 starts clean)", flush=True)
        if real_slack:
            print(f"Slack: real Slack, channel {channel}")
        else:
            standin = SlackStandIn(port=SLACK_PORT).start()
            stack.append(standin)
            name_workspace(standin, channel)
            env["SLACK_API_URL"] = standin.url
            print(f"Slack stand-in: {standin.url} (posts: {standin.control_url}posts)")
            interactions_url = f"http://127.0.0.1:{INTERACTIONS_PORT}/"
            standin.set_interactivity(interactions_url, env["SLACK_SIGNING_SECRET"])
            print(replay_hint(standin.control_url, interactions_url))
            print(native_hint(standin.control_url, channel))
        teams = start_teams_standin(env)
        stack.append(teams)

        if env.get("DISPATCH") == PUBSUB:
            stack.extend(start_pubsub(project, token, env))
        for target, port in SERVED:
            served = serve(target, port, env)
            stack.append(served)
            wait_for_function(port, served)
        now = datetime.now(UTC)
        db = firestore.Client(project=project)
        seed(db, channel, now)
        set_up_teams_demo(teams, db, now)
        print(
            f"tick target on http://127.0.0.1:{FUNCTION_PORT}/, ticking every {interval:g} s "
            "(Ctrl-C to stop).",
            flush=True,
        )
        print(banner(API_PORT, token, env.get("COMPOSER_CLIENT_ID")), flush=True)
        signal.signal(signal.SIGTERM, _interrupt)
        while True:
            summary = tick(token)
            counts = {k: v for k, v in summary.items() if isinstance(v, int) and v}
            print(f"tick at {summary.get('now')}: {counts or 'nothing due'}", flush=True)
            time.sleep(interval)
    except KeyboardInterrupt:
        print("stopping", flush=True)
        return 0
    finally:
        stop_all(stack)


def stop_all(stack: list[Any]) -> None:
    """Every part, newest first. The servers are all asked to stop at once, and one that
    ignores SIGTERM for 10 s is killed, so the parts under them (the export of the kept
    documents, the emulator) are always reached."""
    servers = [part for part in stack if isinstance(part, subprocess.Popen)]
    for server in servers:
        server.terminate()
    for part in reversed(stack):
        if part in servers:
            try:
                part.wait(timeout=10)
            except subprocess.TimeoutExpired:
                part.kill()
                part.wait()
        else:
            part.stop()


def _interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


if __name__ == "__main__":
    raise SystemExit(main())
