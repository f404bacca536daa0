"""The Slack-native bodies (emulator/slack_native.py): each is the shape the `interactions`
target names it by (interactions.inbound.classify), carries the fields Slack's samples carry,
and a view submission's state holds what the person chose, as Slack builds it."""

from __future__ import annotations

import json
import urllib.parse
from typing import Any

import pytest

from emulator.slack_native import (
    app_home_opened,
    command_body,
    content_type,
    event_body,
    event_callback,
    message_shortcut,
    payload_body,
    retry_headers,
    slash_command,
    state_values,
    url_verification,
    view_submission,
)
from emulator.slack_users import dm_id
from interactions import inbound

MODAL: dict[str, Any] = {
    "type": "modal",
    "callback_id": "schedule_message",
    "private_metadata": '{"channel": "C1"}',
    "title": {"type": "plain_text", "text": "Schedule"},
    "submit": {"type": "plain_text", "text": "Schedule"},
    "blocks": [
        {
            "type": "input",
            "block_id": "text",
            "label": {"type": "plain_text", "text": "Message"},
            "element": {"type": "rich_text_input", "action_id": "text"},
        },
        {
            "type": "input",
            "block_id": "repeat",
            "label": {"type": "plain_text", "text": "Repeat"},
            "element": {
                "type": "static_select",
                "action_id": "repeat",
                "options": [
                    {"text": {"type": "plain_text", "text": "Once"}, "value": "once"},
                    {"text": {"type": "plain_text", "text": "Daily"}, "value": "daily"},
                ],
                "initial_option": {"text": {"type": "plain_text", "text": "Once"}, "value": "once"},
            },
        },
        {
            "type": "input",
            "block_id": "when",
            "label": {"type": "plain_text", "text": "Date"},
            "element": {"type": "datepicker", "action_id": "date", "initial_date": "2026-12-04"},
        },
        {
            "type": "input",
            "block_id": "time",
            "label": {"type": "plain_text", "text": "Time"},
            "element": {"type": "timepicker", "action_id": "time"},
        },
        {
            "type": "input",
            "optional": True,
            "block_id": "category",
            "label": {"type": "plain_text", "text": "Category"},
            "element": {"type": "plain_text_input", "action_id": "category"},
        },
        {"type": "section", "text": {"type": "mrkdwn", "text": "Sent in your time zone."}},
    ],
}


def form(body: bytes) -> dict[str, str]:
    return dict(urllib.parse.parse_qsl(body.decode(), keep_blank_values=True))


def test_a_slash_command_is_the_form_slack_posts() -> None:
    fields = slash_command(
        "/schedule", "list", user="U1", channel="C1", trigger_id="1.2.3", response_url="https://r"
    )
    body = command_body(fields)

    named = inbound.classify(body)
    assert named is not None and named.kind == inbound.COMMAND
    assert named.fields["command"] == "/schedule" and named.fields["text"] == "list"
    assert set(form(body)) == {
        "token", "team_id", "team_domain", "channel_id", "channel_name", "user_id",
        "user_name", "command", "text", "api_app_id", "is_enterprise_install",
        "response_url", "trigger_id",
    }  # fmt: skip
    assert (named.fields["user_id"], named.fields["channel_id"]) == ("U1", "C1")
    assert named.fields["trigger_id"] == "1.2.3"
    assert content_type(body) == "application/x-www-form-urlencoded"


def test_a_message_shortcut_carries_the_message_and_its_conversation() -> None:
    message = {"type": "message", "user": "U2", "ts": "1700000000.000100", "text": "Ship it"}
    payload = message_shortcut(
        message, user="U1", channel="C1", trigger_id="1.2.3", response_url="https://r"
    )

    named = inbound.classify(payload_body(payload))
    assert named is not None and named.kind == inbound.MESSAGE_SHORTCUT
    assert named.fields["callback_id"] == "schedule_copy"
    assert named.fields["message"]["text"] == "Ship it"
    assert named.fields["message_ts"] == "1700000000.000100"
    assert named.fields["channel"]["id"] == "C1" and named.fields["user"]["id"] == "U1"
    assert named.fields["trigger_id"] == "1.2.3" and named.fields["response_url"] == "https://r"


def test_a_view_submission_echoes_the_view_with_what_was_chosen() -> None:
    payload = view_submission(
        MODAL,
        {"text": "Stand-up", "repeat": "daily", "time": "09:30"},
        user="U1",
        trigger_id="1.2.3",
    )

    named = inbound.classify(payload_body(payload))
    assert named is not None and named.kind == inbound.VIEW_SUBMISSION
    view = named.fields["view"]
    assert view["callback_id"] == "schedule_message"
    assert view["private_metadata"] == '{"channel": "C1"}'
    assert named.fields["user"]["id"] == "U1"
    values = view["state"]["values"]
    assert values["text"]["text"]["rich_text_value"]["elements"][0]["elements"] == [
        {"type": "text", "text": "Stand-up"}
    ]
    assert values["repeat"]["repeat"]["selected_option"]["value"] == "daily"
    assert values["time"]["time"] == {"type": "timepicker", "selected_time": "09:30"}


def test_untouched_inputs_hold_their_initial_value_or_null() -> None:
    values = state_values(MODAL, {})

    assert values["when"]["date"] == {"type": "datepicker", "selected_date": "2026-12-04"}
    assert values["repeat"]["repeat"]["selected_option"]["value"] == "once"
    assert values["category"]["category"] == {"type": "plain_text_input", "value": None}
    assert values["time"]["time"]["selected_time"] is None
    assert set(values) == {"text", "repeat", "when", "time", "category"}  # no plain section


@pytest.mark.parametrize(
    ("values", "named"),
    [({"nope": "x"}, "action_id nope"), ({"repeat": "hourly"}, "no option 'hourly'")],
)
def test_a_value_the_view_cannot_hold_is_refused(values: dict[str, Any], named: str) -> None:
    with pytest.raises(ValueError, match=named):
        state_values(MODAL, values)


def test_an_event_callback_is_the_events_api_envelope() -> None:
    inner = app_home_opened("U1", "1700000000.000100")
    body = event_body(event_callback(inner, event_id="Ev1", event_time=1700000000))

    named = inbound.classify(body)
    assert named is not None and named.kind == inbound.EVENT
    assert named.fields["event"] == {
        "type": "app_home_opened",
        "user": "U1",
        "channel": dm_id("U1"),
        "tab": "home",
        "event_ts": "1700000000.000100",
    }
    assert (named.fields["event_id"], named.fields["event_time"]) == ("Ev1", 1700000000)
    assert named.fields["authorizations"][0]["is_bot"] is True
    assert content_type(body) == "application/json"


def test_url_verification_and_retry_headers() -> None:
    named = inbound.classify(event_body(url_verification("c-123")))

    assert named is not None and named.kind == inbound.URL_VERIFICATION
    assert named.fields["challenge"] == "c-123"
    assert retry_headers(None) == {}
    assert retry_headers(2, "http_error") == {
        "X-Slack-Retry-Num": "2",
        "X-Slack-Retry-Reason": "http_error",
    }
    assert json.loads(event_body(url_verification("c")))["type"] == "url_verification"
