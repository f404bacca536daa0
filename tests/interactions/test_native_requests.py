"""Slack-native requests reach the `interactions` target as Slack sends them: from the test
fixtures (tests/fixtures/slack_native.py) through the test client, and from the stand-in's
control endpoints over HTTP, as `make run` wires them. Signed with the app's secret they are
taken; signed with another, refused."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest
from werkzeug.serving import make_server

from core.clock import FixedClock
from emulator.slack_limits import SlackError
from emulator.slack_native import event_body, url_verification
from tests.fixtures.interactions import SECRET
from tests.fixtures.slack_native import (
    app_home_opened,
    command,
    event,
    post_signed,
    shortcut,
    submit,
    trigger_id,
    verify_url,
)

VIEW = {
    "type": "modal",
    "callback_id": "schedule_message",
    "blocks": [
        {
            "type": "input",
            "block_id": "text",
            "label": {"type": "plain_text", "text": "Message"},
            "element": {"type": "plain_text_input", "action_id": "text"},
        }
    ],
}
MESSAGE = {"type": "message", "user": "U2", "ts": "1700000000.000100", "text": "Retro at 4"}


@pytest.fixture
def live_interactions(interactions_app: Any, clicks: Any) -> Iterator[str]:
    server = make_server("127.0.0.1", 0, interactions_app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.port}/"
    finally:
        server.shutdown()
        thread.join()


def test_each_fixture_request_is_taken_as_slacks(clicks: Any, clock: FixedClock) -> None:
    at = clock.now()

    answers = [
        command(clicks, "/schedule", "", user="U1", channel="C1", at=at),
        shortcut(clicks, MESSAGE, user="U1", channel="C1", at=at),
        submit(clicks, VIEW, {"text": "Stand-up"}, user="U1", at=at),
        event(clicks, app_home_opened("U1", "1700000000.000200"), at=at),
    ]
    challenge = verify_url(clicks, "c-7", at=at)

    assert [a.status_code for a in answers] == [200, 200, 200, 200]
    assert (challenge.status_code, challenge.get_json()) == (200, {"challenge": "c-7"})


def test_a_fixture_request_signed_with_another_secret_is_refused(
    clicks: Any, clock: FixedClock
) -> None:
    body = event_body(url_verification("c-8"))
    answer = post_signed(clicks, body, clock.now(), secret="not-the-apps-secret")

    assert answer.status_code == 401
    assert "challenge" not in (answer.get_json() or {})


def test_the_standin_sends_the_target_a_url_verification_and_a_command(
    live_interactions: str, slack: Any
) -> None:
    slack.set_interactivity(live_interactions, SECRET)

    verified = slack.native.url_verification("c-9")
    typed = slack.native.command("/schedule", "", user="U1", channel="C1")

    assert (verified["status"], verified["answer"]) == (200, {"challenge": "c-9"})
    assert typed["status"] == 200


def test_the_standin_signing_with_another_secret_is_refused(
    live_interactions: str, slack: Any
) -> None:
    slack.set_interactivity(live_interactions, "not-the-apps-secret")

    refused = slack.native.event({"type": "app_home_opened", "user": "U1"})

    assert refused["status"] == 401
    assert refused["answer"]["error"]


def test_a_fixture_trigger_from_the_standin_is_one_its_views_open_accepts(slack: Any) -> None:
    issued = trigger_id(slack, "U1")

    assert slack.spend_trigger_id(issued) == "U1"
    with pytest.raises(SlackError, match="invalid_trigger_id"):
        slack.spend_trigger_id(trigger_id())
