"""`make run`'s Microsoft Teams side (emulator/run_local.py runs it beside Slack's).

- The Teams stand-in runs as a process of its own (`python -m emulator.teams_standin`),
  driven over its control API (emulator/teams_control_http.py): `TeamsStandInProcess`, which
  the benchmark uses too.
- Its TEAMS_* settings (the app id and password, Entra's token URL on HTTPS with the CA
  bundle to trust, Bot Framework's OpenID metadata, Graph) go into the environment of every
  target `make run` serves, so the tick's pass posts to it and the `teams` target checks the
  JWTs it signs.
- The app is installed into one demo channel as Teams installs it: the stand-in signs the
  install activities and posts them to the local `teams` target, which stores
  `teams_conversations/{id}`; the channel's Graph permission (ChannelMessage.Read.Group) is
  granted, so an ambiguous send there can be proven.
- Beside the Slack examples: a Teams message, a card with two buttons and a daily rotation
  whose members are Teams user ids, written as another service would write them.
- How to replay a click: the stand-in's control API builds the `adaptiveCard/action` invoke
  of a click on the card's button, signs it, and posts it to the local `teams` target.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from dataclasses import replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from google.cloud import firestore

from core.actions import button_value
from core.documents.messages import MessageField, MessageWrite, Status
from core.documents.rotations import RotationField, RotationStatus, RotationWrite
from core.models import message_delivery_id
from core.store import MESSAGES, ROTATIONS
from emulator.local_data import create_once

ROOT = Path(__file__).resolve().parent.parent
# The stand-in's Bot Connector, Graph and control API (HTTP), and its Entra token endpoint
# (HTTPS); the `teams` target, Teams' messaging endpoint for the bot.
TEAMS_PORT = int(os.environ.get("LOCAL_TEAMS_PORT", "8775"))
TEAMS_TOKEN_PORT = int(os.environ.get("LOCAL_TEAMS_TOKEN_PORT", "8776"))
TEAMS_TARGET_PORT = int(os.environ.get("LOCAL_TEAMS_TARGET_PORT", "8085"))

DEMO_TEAMS_CHANNEL = "19:demo-general@thread.tacv2"
DEMO_TEAMS_MEMBERS = ["29:1demo-ana", "29:1demo-ben", "29:1demo-cem"]
GRAPH_CHANNEL_PERMISSION = "ChannelMessage.Read.Group"
TEAMS_BUTTONS = "example-teams-buttons"
TEAMS_ROTATION = "example-teams-rotation"
# Loopback only: a developer's HTTP(S)_PROXY must not see the stand-in's traffic.
_opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))


class TeamsStandInProcess:
    """`python -m emulator.teams_standin` in a process of its own, driven over its control
    API (`control(method, path, body)`); `env()` is what points the processor at it."""

    def __init__(self, port: int = 0, token_port: int = 0) -> None:
        port, token_port = port or _free_port(), token_port or _free_port()
        self.url = f"http://127.0.0.1:{port}"
        self.control_url = f"{self.url}/_control/"
        command = [sys.executable, "-m", "emulator.teams_standin", "--port", str(port)]
        command += ["--token-port", str(token_port)]
        # Its stdout is the settings to export, which this process sets itself.
        self._process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL)
        deadline = time.monotonic() + 30
        while True:
            try:
                self._env: dict[str, str] = self.control("GET", "env")
                return
            except OSError:
                if time.monotonic() > deadline or self._process.poll() is not None:
                    self.stop()
                    raise RuntimeError("the Teams stand-in did not start") from None
                time.sleep(0.05)

    @property
    def pid(self) -> int:
        return self._process.pid

    def env(self) -> dict[str, str]:
        """TEAMS_APP_ID, TEAMS_TOKEN_URL, TEAMS_CA_BUNDLE, GRAPH_API_URL, ... (settings)."""
        return dict(self._env)

    def control(self, method: str, path: str, body: Any = None) -> Any:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(  # noqa: S310  # our own http://127.0.0.1 URL
            self.control_url + path,
            data=data,
            method=method,
            headers={"Content-Type": "application/json"},
        )
        with _opener.open(request, timeout=60) as response:
            return json.loads(response.read())

    def stop(self) -> None:
        if self._process.poll() is None:
            self._process.terminate()
            try:
                self._process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()


def _free_port() -> int:
    with socket.create_server(("127.0.0.1", 0)) as sock:
        port: int = sock.getsockname()[1]
        return port


def start_teams_standin(env: dict[str, str]) -> TeamsStandInProcess:
    """The stand-in on LOCAL_TEAMS_PORT and LOCAL_TEAMS_TOKEN_PORT, its settings put in
    `env` (what every served target and the tick get)."""
    standin = TeamsStandInProcess(TEAMS_PORT, TEAMS_TOKEN_PORT)
    env.update(standin.env())
    print(f"Teams stand-in: {standin.url} (activities: {standin.control_url}activities)")
    return standin


def set_up_teams_demo(standin: TeamsStandInProcess, db: firestore.Client, now: datetime) -> None:
    """Once the `teams` target is up: the app installed into the demo channel through it,
    the Teams examples seeded, and how to replay a click printed."""
    target_url = f"http://127.0.0.1:{TEAMS_TARGET_PORT}/"
    installed = install_demo(standin, target_url)
    print(f"Teams: the app installed into {DEMO_TEAMS_CHANNEL} (teams target: {installed})")
    seed_teams(db, DEMO_TEAMS_CHANNEL, now)
    print(teams_replay_hint(standin.control_url, target_url, now), flush=True)


def install_demo(standin: TeamsStandInProcess, target_url: str) -> list[int]:
    """The demo channel in the stand-in, our app installed into it through the `teams`
    target (signed install activities), and Graph's read of it granted. Returns the
    target's answers to the install activities."""
    standin.control("POST", "channel", {"conversation_id": DEMO_TEAMS_CHANNEL, "name": "General"})
    grant = {"conversation": DEMO_TEAMS_CHANNEL, "permission": GRAPH_CHANNEL_PERMISSION}
    standin.control("POST", "grants", grant)
    answer = standin.control(
        "POST", "install", {"conversation": DEMO_TEAMS_CHANNEL, "target_url": target_url}
    )
    statuses: list[int] = answer["statuses"]
    return statuses


def teams_examples(now: datetime) -> dict[str, MessageWrite]:
    """The Teams messages (their conversation is added as they are seeded): a message, and
    a card with two buttons."""
    one_off = MessageWrite(status=Status.PENDING, send_at=now, next_run_at=now, timezone="UTC")
    return {
        "example-teams-welcome": replace(
            one_off, text="Hello **Teams**! Posted as an _Adaptive Card_ by `make run`."
        ),
        TEAMS_BUTTONS: replace(
            one_off,
            text="Did you finish the plan? (Teams buttons: replay a click through the stand-in)",
            actions=[
                {"id": "done", "label": "Done", "style": "primary"},
                {"id": "not-yet", "label": "Not yet"},
            ],
        ),
    }


def teams_rotation(now: datetime) -> RotationWrite:
    """A daily rotation in the demo channel whose turn today was due a minute ago, each
    turn mentioning the member by their Teams id."""
    local = now.astimezone(ZoneInfo("Europe/Berlin")) - timedelta(minutes=1)
    return RotationWrite(
        name="Teams stand-up host",
        members=DEMO_TEAMS_MEMBERS,
        timezone="Europe/Berlin",
        send_time=local.strftime("%H:%M"),
        weekdays=list(range(7)),
        text="Today's stand-up host is {member} (a rotation in Teams).",
        actions=[{"id": "skip_today", "label": "Skip me today"}],
        cursor=0,
        status=RotationStatus.ACTIVE,
        next_run_at=now,
    )


def seed_teams(db: firestore.Client, conversation: str, now: datetime) -> None:
    """The Teams examples, posting to `conversation`, as another service would write them
    (the typed writes have no `teams_conversation`: it is added by its field name)."""
    for doc_id, message in teams_examples(now).items():
        data = replace(message, created_at=now, updated_at=now, version=1).to_document()
        data[MessageField.TEAMS_CONVERSATION] = conversation
        create_once(db.collection(MESSAGES).document(doc_id), data, f"(Teams) {message.text}")
    rotation = replace(teams_rotation(now), created_at=now, updated_at=now, version=1)
    data = rotation.to_document()
    data[RotationField.TEAMS_CONVERSATION] = conversation
    create_once(db.collection(ROTATIONS).document(TEAMS_ROTATION), data, f"(Teams) {rotation.text}")


def replay_click(now: datetime, target_url: str, action: str = "done") -> dict[str, Any]:
    """The control API's `invoke` body for a click by Ana on `action` of the seeded card:
    the stand-in signs it as Bot Framework does and posts it to `target_url`."""
    delivery_id = message_delivery_id(TEAMS_BUTTONS, now)
    return {
        "verb": action,
        "data": {"value": button_value(delivery_id, action)},
        "user": DEMO_TEAMS_MEMBERS[0],
        "target_url": target_url,
    }


def teams_replay_hint(control_url: str, target_url: str, now: datetime) -> str:
    """How a developer clicks a Teams button without Teams."""
    body = json.dumps(replay_click(now, target_url))
    return (
        f"teams target on {target_url}; replay a click on {TEAMS_BUTTONS} in Teams:\n"
        f"  curl -X POST {control_url}invoke -d '{body}'\n"
        f"  (its answer is what the clicker sees; the next tick updates the card: "
        f"{control_url}updates)"
    )
