"""The `interactions` target tells Slack's request shapes apart (interactions.inbound): a
signed Events API `url_verification` is answered with its challenge, a signed slash command
or view with no handler yet is acknowledged and changes nothing, and a forged one of each
is refused before it is looked at."""

from __future__ import annotations

import json
import time
import urllib.parse

import pytest

from interactions.in_time import ANSWER_WITHIN_SECONDS
from interactions.inbound import (
    COMMAND,
    EVENT,
    MESSAGE_ACTIONS,
    URL_VERIFICATION,
    VIEW_ACTIONS,
    VIEW_SUBMISSION,
    classify,
)
from tests.fixtures.clock import T0
from tests.fixtures.interactions import send

CHALLENGE = {
    "token": "x",
    "challenge": "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P",
    "type": "url_verification",
}


def _form(**fields: str) -> bytes:
    return urllib.parse.urlencode(fields).encode()


def _payload(data: dict[str, object]) -> bytes:
    return _form(payload=json.dumps(data))


@pytest.mark.parametrize(
    ("body", "kind"),
    [
        (json.dumps(CHALLENGE).encode(), URL_VERIFICATION),
        (json.dumps({"type": "event_callback", "event_id": "Ev1", "event": {}}).encode(), EVENT),
        (_form(command="/schedule", text="", user_id="U0ANA1234", trigger_id="1.2.3"), COMMAND),
        (_payload({"type": "block_actions", "container": {"type": "message"}}), MESSAGE_ACTIONS),
        (_payload({"type": "block_actions", "container": {"type": "view"}}), VIEW_ACTIONS),
        (_payload({"type": "view_submission", "view": {}}), VIEW_SUBMISSION),
    ],
)
def test_each_shape_slack_sends_is_named(body: bytes, kind: str) -> None:
    inbound = classify(body)
    assert inbound is not None and inbound.kind == kind


@pytest.mark.parametrize(
    "body",
    [
        b"",
        b"{",
        b"[]",
        b'{"type": "other"}',
        _form(text="hi"),
        _payload({"type": "dialog"}),
        b"\xff",
    ],
)
def test_what_is_no_shape_of_slack_is_none(body: bytes) -> None:
    assert classify(body) is None


def test_url_verification_is_answered_with_its_challenge(clicks) -> None:
    answer = send(clicks, json.dumps(CHALLENGE).encode(), T0)

    assert answer.status_code == 200
    assert answer.get_json() == {"challenge": CHALLENGE["challenge"]}


def test_a_forged_challenge_is_refused(clicks) -> None:
    answer = send(clicks, json.dumps(CHALLENGE).encode(), T0, secret="not-the-secret")

    assert answer.status_code == 401
    assert "challenge" not in answer.get_data(as_text=True)


def test_the_challenge_is_answered_even_while_firestore_is_slow(clicks, monkeypatch) -> None:
    # The replay check's create() is the request's only Firestore call: slower than the
    # answer's 2 s, a challenge must still come back (Slack's Request URL check fails else).
    def slow_replay_check(rt, headers):
        time.sleep(ANSWER_WITHIN_SECONDS + 1)

    monkeypatch.setattr("interactions.target.replayed", slow_replay_check)

    answer = send(clicks, json.dumps(CHALLENGE).encode(), T0)

    assert answer.get_json() == {"challenge": CHALLENGE["challenge"]}
