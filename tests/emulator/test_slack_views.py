"""The stand-in's views.open, views.update, users.info and chat.postEphemeral, through the
real slack_sdk WebClient: a trigger_id the stand-in issued opens one view, within 3 s."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

import pytest
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from core.clock import FixedClock
from emulator.slack_standin import SlackStandIn

VIEW = {"type": "modal", "title": {"type": "plain_text", "text": "Hi"}, "blocks": []}


def _client(slack: SlackStandIn) -> WebClient:
    return WebClient(token="xoxb-test", base_url=slack.url, retry_handlers=[], timeout=5)


def _refused(call: Callable[[], object]) -> str:
    with pytest.raises(SlackApiError) as caught:
        call()
    return str(caught.value.response["error"])


def test_a_trigger_opens_one_view_within_three_seconds(slack: SlackStandIn, clock: FixedClock):
    web = _client(slack)
    fresh, late = slack.issue_trigger_id("U0ALICE00"), slack.issue_trigger_id("U0ALICE00")

    opened = web.views_open(trigger_id=fresh, view=VIEW)
    again = _refused(lambda: web.views_open(trigger_id=fresh, view=VIEW))
    clock.advance(timedelta(seconds=3, milliseconds=1))
    expired = _refused(lambda: web.views_open(trigger_id=late, view=VIEW))
    unknown = _refused(lambda: web.views_open(trigger_id="1.2.nope", view=VIEW))

    assert opened["view"]["id"].startswith("V")
    assert (again, expired, unknown) == (
        "exchanged_trigger_id",
        "expired_trigger_id",
        "invalid_trigger_id",
    )
    assert slack.views.opened() == [VIEW]
    assert slack.opened_view("U0ALICE00") == opened["view"]  # what /_control/submit submits
    web.views_update(view_id=opened["view"]["id"], view={**VIEW, "blocks": [{"type": "divider"}]})
    assert slack.views.updated()[0]["blocks"] == [{"type": "divider"}]


def test_users_info_answers_the_persons_zone(slack: SlackStandIn):
    slack.views.set_timezone("U0ALICE00", "Europe/Berlin")

    alice = _client(slack).users_info(user="U0ALICE00")["user"]
    other = _client(slack).users_info(user="U0BOB0000")["user"]

    assert (alice["tz"], alice["tz_offset"]) == ("Europe/Berlin", 3600)  # T0 is in January
    assert other["tz"] == "America/Los_Angeles"


def test_ephemeral_messages_are_recorded(slack: SlackStandIn):
    _client(slack).chat_postEphemeral(channel="C0GENERAL", user="U0ALICE00", text="only you")

    (told,) = slack.views.ephemerals()
    assert (told.channel, told.user, told.text) == ("C0GENERAL", "U0ALICE00", "only you")
