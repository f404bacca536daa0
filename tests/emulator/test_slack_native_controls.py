"""The stand-in's control endpoints that send what Slack sends an app's Request URL (slash
command, shortcut, view submission, Events API callback, url_verification), seen over HTTP
from both ends: the control call, and a Request URL that records what arrived and checks
the signature with slack_sdk's own verifier."""

from __future__ import annotations

import http.client
import json
import shlex
import socket
import threading
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from slack_sdk.signature import Clock, SignatureVerifier
from werkzeug.serving import make_server
from werkzeug.wrappers import Request, Response

from core.clock import FixedClock
from emulator.run_local import native_hint
from emulator.slack_limits import SlackError
from emulator.slack_standin import SlackStandIn
from emulator.slack_users import dm_id

SECRET = "8f742231b10e8888abcd99yyyzzz85a5"
T0 = datetime(2026, 12, 3, 17, 0, tzinfo=UTC)
MODAL: dict[str, Any] = {
    "id": "V0MODAL001",
    "type": "modal",
    "callback_id": "schedule_message",
    "private_metadata": "C1",
    "title": {"type": "plain_text", "text": "Schedule"},
    "blocks": [
        {
            "type": "input",
            "block_id": "text",
            "label": {"type": "plain_text", "text": "Message"},
            "element": {"type": "plain_text_input", "action_id": "text"},
        }
    ],
}


@dataclass
class Arrived:
    headers: dict[str, str]
    body: bytes

    def form(self) -> dict[str, str]:
        return dict(urllib.parse.parse_qsl(self.body.decode(), keep_blank_values=True))

    def payload(self) -> dict[str, Any]:
        value = json.loads(self.form()["payload"])
        assert isinstance(value, dict)
        return value


@dataclass
class RequestUrl:
    """An app's Request URL: records each request and answers the next queued reply
    (default: an empty 200, Slack's plain acknowledgement)."""

    url: str = ""
    arrived: list[Arrived] = field(default_factory=list)
    replies: list[tuple[int, Any]] = field(default_factory=list)

    def __call__(self, environ: Any, start_response: Any) -> Any:
        request = Request(environ)
        self.arrived.append(Arrived(dict(request.headers), request.get_data()))
        status, body = self.replies.pop(0) if self.replies else (200, None)
        if body is None:
            return Response(status=status)(environ, start_response)
        return Response(json.dumps(body), status, mimetype="application/json")(
            environ, start_response
        )


class _At(Clock):
    def __init__(self, now: datetime) -> None:
        self._now = now

    def now(self) -> float:
        return self._now.timestamp()


@pytest.fixture
def clock() -> FixedClock:
    return FixedClock(T0)


@pytest.fixture
def app() -> Iterator[RequestUrl]:
    receiver = RequestUrl()
    server = make_server("127.0.0.1", 0, receiver, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    receiver.url = f"http://127.0.0.1:{server.port}/"
    try:
        yield receiver
    finally:
        server.shutdown()
        thread.join()


@pytest.fixture
def standin(clock: FixedClock, app: RequestUrl) -> Iterator[SlackStandIn]:
    with SlackStandIn(clock=clock) as running:
        running.set_interactivity(app.url, SECRET)
        yield running


def control(standin: SlackStandIn, path: str, body: Any) -> tuple[int, Any]:
    conn = http.client.HTTPConnection("127.0.0.1", standin.port, timeout=15)
    try:
        conn.request("POST", f"/_control/{path}", body=json.dumps(body))
        response = conn.getresponse()
        return response.status, json.loads(response.read())
    finally:
        conn.close()


def signed_by_slack(arrived: Arrived, at: datetime) -> bool:
    verifier = SignatureVerifier(SECRET, clock=_At(at))
    return verifier.is_valid_request(arrived.body, arrived.headers)


def test_a_slash_command_arrives_signed_with_a_trigger_views_open_accepts_once(
    standin: SlackStandIn, app: RequestUrl, clock: FixedClock
) -> None:
    status, sent = control(standin, "command", {"user": "U1", "channel": "C1", "text": "list"})

    assert status == 200 and sent["ok"] and sent["status"] == 200 and sent["answer"] == ""
    [arrived] = app.arrived
    assert signed_by_slack(arrived, clock.now())
    assert arrived.headers["Content-Type"] == "application/x-www-form-urlencoded"
    fields = arrived.form()
    assert (fields["command"], fields["text"], fields["user_id"]) == ("/schedule", "list", "U1")
    assert fields["channel_id"] == "C1" and fields["trigger_id"] == sent["trigger_id"]
    assert fields["response_url"].startswith(standin.control_url.removesuffix("_control/"))

    assert standin.spend_trigger_id(sent["trigger_id"]) == "U1"
    with pytest.raises(SlackError, match="exchanged_trigger_id"):
        standin.spend_trigger_id(sent["trigger_id"])


def test_a_trigger_id_expires_three_seconds_after_the_command(
    standin: SlackStandIn, clock: FixedClock
) -> None:
    _, in_time = control(standin, "command", {"user": "U1", "channel": "C1"})
    _, late = control(standin, "command", {"user": "U2", "channel": "C1"})

    clock.advance(timedelta(seconds=3))
    assert standin.spend_trigger_id(in_time["trigger_id"]) == "U1"
    clock.advance(timedelta(milliseconds=1))
    with pytest.raises(SlackError, match="expired_trigger_id"):
        standin.spend_trigger_id(late["trigger_id"])
    with pytest.raises(SlackError, match="invalid_trigger_id"):
        standin.spend_trigger_id("1.2.never-issued")


def test_a_message_shortcut_carries_the_message_it_was_chosen_on(
    standin: SlackStandIn, app: RequestUrl, clock: FixedClock
) -> None:
    ts = standin.add_message("C2", "Retro at 4", user="U2")
    standin.add_message("C3", "elsewhere, at the same ts")
    standin.add_message("C2", "later in C2")

    status, sent = control(standin, "shortcut", {"user": "U1", "ts": ts, "channel": "C2"})

    assert status == 200 and sent["status"] == 200
    [arrived] = app.arrived
    assert signed_by_slack(arrived, clock.now())
    payload = arrived.payload()
    assert (payload["type"], payload["callback_id"]) == ("message_action", "schedule_copy")
    assert payload["message"]["text"] == "Retro at 4" and payload["message"]["user"] == "U2"
    assert payload["channel"]["id"] == "C2" and payload["message_ts"] == ts
    assert payload["trigger_id"] == sent["trigger_id"]
    assert standin.spend_trigger_id(sent["trigger_id"]) == "U1"


def test_a_submission_sends_the_open_view_and_follows_the_apps_answer(
    standin: SlackStandIn, app: RequestUrl, clock: FixedClock
) -> None:
    standin.remember_view("U1", MODAL)
    errors = {"response_action": "errors", "errors": {"text": "Too long"}}
    app.replies = [(200, errors), (200, None)]

    _, refused = control(standin, "submit", {"user": "U1", "values": {"text": "x" * 5000}})
    _, taken = control(standin, "submit", {"user": "U1", "values": {"text": "Stand-up"}})
    status, gone = control(standin, "submit", {"user": "U1", "values": {"text": "again"}})

    assert refused["answer"] == errors
    assert taken["status"] == 200
    assert (status, gone["error"]) == (400, "no view is open for U1")
    first, second = (a.payload() for a in app.arrived)
    assert all(signed_by_slack(a, clock.now()) for a in app.arrived)
    assert second["type"] == "view_submission" and second["user"]["id"] == "U1"
    view = second["view"]
    assert (view["id"], view["callback_id"], view["private_metadata"]) == (
        "V0MODAL001",
        "schedule_message",
        "C1",
    )
    assert view["state"]["values"]["text"]["text"] == {
        "type": "plain_text_input",
        "value": "Stand-up",
    }
    assert first["view"]["state"]["values"]["text"]["text"]["value"] == "x" * 5000


def test_a_submission_answered_with_an_update_submits_the_updated_view_next(
    standin: SlackStandIn, app: RequestUrl
) -> None:
    standin.remember_view("U1", MODAL)
    updated = {**MODAL, "callback_id": "schedule_confirm", "blocks": []}
    app.replies = [(200, {"response_action": "update", "view": updated})]

    control(standin, "submit", {"user": "U1"})
    control(standin, "submit", {"user": "U1"})

    assert app.arrived[-1].payload()["view"]["callback_id"] == "schedule_confirm"
    assert standin.opened_view("U1") is None  # the second, plain 200, closed it


def test_an_event_and_its_retry_carry_slacks_retry_headers(
    standin: SlackStandIn, app: RequestUrl, clock: FixedClock
) -> None:
    home = {"type": "app_home_opened", "user": "U1"}
    _, first = control(standin, "event", {"event": home})
    clock.advance(timedelta(minutes=1))
    body = {"event": home, "event_id": first["event_id"], "retry_num": 1}
    _, retry = control(standin, "event", {**body, "retry_reason": "http_error"})

    original, again = app.arrived
    assert signed_by_slack(original, T0) and signed_by_slack(again, clock.now())
    assert original.headers["Content-Type"] == "application/json"
    assert "X-Slack-Retry-Num" not in original.headers
    assert (again.headers["X-Slack-Retry-Num"], again.headers["X-Slack-Retry-Reason"]) == (
        "1",
        "http_error",
    )
    sent = json.loads(original.body)
    assert json.loads(again.body)["event_id"] == sent["event_id"] == retry["event_id"]
    assert sent["type"] == "event_callback" and sent["event_time"] == int(T0.timestamp())
    assert sent["event"] == {
        "type": "app_home_opened",
        "user": "U1",
        "channel": dm_id("U1"),
        "tab": "home",
        "event_ts": f"{T0.timestamp():.6f}",
    }


def test_url_verification_returns_the_apps_answer(standin: SlackStandIn, app: RequestUrl) -> None:
    app.replies = [(200, {"challenge": "c-42"})]

    _, sent = control(standin, "url_verification", {"challenge": "c-42"})

    assert (sent["status"], sent["answer"]) == (200, {"challenge": "c-42"})
    assert json.loads(app.arrived[0].body) == {
        "token": "verification-token-not-for-checking",
        "challenge": "c-42",
        "type": "url_verification",
    }


@pytest.mark.parametrize(
    ("path", "body", "error"),
    [
        ("command", {"channel": "C1"}, "missing fields: user"),
        ("event", {"event": {"user": "U1"}}, "event is an object with a type"),
        ("event", {"event": {"type": "x"}, "retry_num": "1"}, "retry_num is a whole number"),
        ("shortcut", {"user": "U1", "ts": "1.000001"}, "no message 1.000001"),
        ("submit", {"user": "U1", "values": []}, "values is an object"),
    ],
)
def test_a_bad_control_body_is_a_400_naming_what_is_wrong(
    standin: SlackStandIn, app: RequestUrl, path: str, body: Any, error: str
) -> None:
    status, answer = control(standin, path, body)

    assert status == 400 and error in answer["error"]
    assert app.arrived == []


def test_nothing_is_sent_before_a_request_url_is_set(clock: FixedClock) -> None:
    with SlackStandIn(clock=clock) as bare:
        status, answer = control(bare, "command", {"user": "U1", "channel": "C1"})

    assert (status, answer["error"]) == (400, "no interactivity URL: set one first")


def test_the_curl_lines_make_run_prints_type_schedule_and_open_the_home_tab(
    standin: SlackStandIn, app: RequestUrl
) -> None:
    lines = native_hint(standin.control_url, "C0DEMO0001").splitlines()
    curls = [shlex.split(line) for line in lines if line.strip().startswith("curl")]
    sends = {urllib.parse.urlsplit(c[3]).path.rsplit("/", 1)[1]: json.loads(c[5]) for c in curls}

    control(standin, "command", sends["command"])
    control(standin, "event", sends["event"])

    typed, opened = app.arrived
    assert (typed.form()["command"], typed.form()["channel_id"]) == ("/schedule", "C0DEMO0001")
    home = json.loads(opened.body)["event"]
    assert (home["type"], home["user"], home["tab"]) == ("app_home_opened", "U0DEMOANA", "home")
    assert set(sends) == {"command", "submit", "event"}


def test_a_request_url_that_does_not_answer_is_a_400_naming_it(clock: FixedClock) -> None:
    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        port = unused.getsockname()[1]
    with SlackStandIn(clock=clock) as standin:
        standin.set_interactivity(f"http://127.0.0.1:{port}/", SECRET)
        status, answer = control(standin, "url_verification", {"challenge": "c"})

    assert status == 400
    assert f"the Request URL http://127.0.0.1:{port}/ did not answer" in answer["error"]


def test_reset_forgets_triggers_and_open_views(standin: SlackStandIn) -> None:
    issued = standin.issue_trigger_id("U1")
    standin.remember_view("U1", MODAL)

    standin.reset()

    assert standin.opened_view("U1") is None
    with pytest.raises(SlackError, match="invalid_trigger_id"):
        standin.spend_trigger_id(issued)
