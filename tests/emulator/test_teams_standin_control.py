"""The Teams stand-in controlled over HTTP, as `make run` and workers in other processes use
it, and run as a process."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import pytest

from core.clock import FixedClock
from emulator.teams_connector import RecordedActivity
from emulator.teams_standin import TeamsStandIn
from tests.fixtures.runtime import ROOT
from tests.fixtures.teams import AAD_GROUP, CHANNEL, send_card

T0 = datetime(2026, 12, 3, 9, 0, tzinfo=UTC)


@pytest.fixture
def teams() -> Iterator[TeamsStandIn]:
    with TeamsStandIn(clock=FixedClock(T0)) as running:
        yield running


def control(teams: TeamsStandIn, name: str, body: Any = None) -> httpx.Response:
    if body is None:
        return httpx.get(teams.control_url + name, timeout=5)
    return httpx.post(teams.control_url + name, json=body, timeout=5)


class _Bot(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        activity = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.server.received.append(activity)  # type: ignore[attr-defined]
        answer = json.dumps(
            {
                "statusCode": 200,
                "type": "application/vnd.microsoft.activity.message",
                "value": "Recorded",
            }
        ).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def bot() -> Iterator[ThreadingHTTPServer]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Bot)
    server.received = []  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()
    thread.join()


def test_conversations_rosters_faults_and_inspection_over_http(teams):
    assert control(teams, "channel", {"conversation_id": CHANNEL}).status_code == 200
    assert control(
        teams, "faults", {"kind": "server_error", "status": 504, "after_record": True, "times": 1}
    ).json() == {"ok": True}

    with pytest.raises(httpx.HTTPStatusError):
        send_card(teams, "d-1")
    [activity] = [RecordedActivity.from_json(a) for a in control(teams, "activities").json()]

    assert activity.delivery_id == "d-1"
    assert control(teams, "calls?operation=send").json() == {"calls": 1}
    control(teams, "rosters", {"conversation": CHANNEL, "installed": False})
    assert control(teams, "conversations").json()[0]["installed"] is False


def test_grants_pagination_and_messages_over_http(teams):
    control(teams, "channel", {"conversation_id": CHANNEL})
    control(teams, "grants", {"conversation": CHANNEL, "permission": "ChannelMessage.Read.Group"})
    control(teams, "pagination", {"short_pages": True})
    added = control(teams, "messages", {"conversation": CHANNEL, "text": "from a person"}).json()

    page = httpx.get(
        f"{teams.graph_url}teams/{AAD_GROUP}/channels/{CHANNEL}/messages",
        headers={
            "Authorization": f"Bearer {teams.issue_token('https://graph.microsoft.com/.default')}"
        },
        timeout=5,
    ).json()

    assert [m["id"] for m in page["value"]] == [added["id"]]


def test_rate_limits_over_http(teams):
    control(teams, "channel", {"conversation_id": CHANNEL})
    control(teams, "rate_limits", {"windows": [[1, 30]]})
    send_card(teams, "d-1")

    with pytest.raises(httpx.HTTPStatusError) as raised:
        send_card(teams, "d-2")

    assert raised.value.response.headers["Retry-After"] == "30"


def test_install_and_invoke_replay_over_http(teams, bot):
    control(teams, "channel", {"conversation_id": CHANNEL})
    target = f"http://127.0.0.1:{bot.server_port}/teams"
    installed = control(teams, "install", {"conversation": CHANNEL, "target_url": target})
    activity_id = send_card(teams, "d-1")

    clicked = control(
        teams,
        "invoke",
        {"verb": "done", "data": {"occurrence": "d-1"}, "user": "29:1alex", "target_url": target},
    ).json()

    assert installed.json() == {"statuses": [200, 200]}
    assert clicked["status"] == 200 and clicked["activity_id"] == activity_id
    assert clicked["body"]["value"] == "Recorded"
    invoke = bot.received[-1]
    assert invoke["name"] == "adaptiveCard/action" and invoke["replyToId"] == activity_id


@pytest.mark.parametrize(
    ("name", "body"),
    [
        ("faults", {"kind": "boom"}),
        ("faults", {"kind": "drop", "colour": "red"}),
        ("rosters", {"installed": False}),
        ("rosters", {"conversation": "19:unknown@thread.tacv2", "installed": False}),
        ("rate_limits", {"windows": [[0, 1]]}),
        ("grants", {"conversation": CHANNEL, "permission": "ChatMessage.Read.Chat"}),
        ("invoke", {"verb": "nobody-has-it", "user": "29:1", "target_url": "http://127.0.0.1:9/"}),
        ("conversations", {"id": "19:x@thread.tacv2", "conversation_type": "channel"}),
        ("channel", [1, 2]),
    ],
)
def test_a_bad_control_body_is_400_naming_what_is_wrong(teams, name, body):
    control(teams, "channel", {"conversation_id": CHANNEL})

    response = control(teams, name, body)

    assert response.status_code == 400
    assert response.json()["error"]["code"] == "BadRequest"
    assert response.json()["error"]["message"]


def test_reset_is_back_to_fresh(teams):
    control(teams, "channel", {"conversation_id": CHANNEL})
    send_card(teams, "d-1")

    control(teams, "reset", {})

    assert control(teams, "activities").json() == []
    assert control(teams, "conversations").json() == []


@pytest.mark.emulator
def test_runs_as_a_process_and_prints_what_to_set() -> None:
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "emulator.teams_standin",
            "--port",
            "0",
            "--token-port",
            "0",
            "--app-id",
            "app-123",
            "--app-password",
            "pw-123",
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        started = json.loads(process.stdout.readline())
        env = json.loads(started["env"])
        exports = [process.stdout.readline() for _ in range(len(env) + 1)]
        assert env["TEAMS_APP_ID"] == "app-123"
        assert any(line.strip().startswith("export TEAMS_TOKEN_URL=https://") for line in exports)
        token = httpx.post(
            env["TEAMS_TOKEN_URL"],
            data={
                "grant_type": "client_credentials",
                "client_id": "app-123",
                "client_secret": "pw-123",
                "scope": "https://api.botframework.com/.default",
            },
            verify=env["TEAMS_CA_BUNDLE"],
            trust_env=False,
            timeout=5,
        ).json()["access_token"]
        httpx.post(started["control_url"] + "channel", json={"conversation_id": CHANNEL}, timeout=5)
        sent = httpx.post(
            f"{started['service_url']}v3/conversations/{CHANNEL}/activities",
            json={"type": "message", "text": "hi"},
            headers={"Authorization": f"Bearer {token}"},
            timeout=5,
        )
        assert sent.status_code == 201
    finally:
        process.terminate()
        assert process.wait(timeout=5) == 0
