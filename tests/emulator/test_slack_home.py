"""The stand-in's views.publish, through the real slack_sdk: a Home tab is recorded per
person and replaced by the next publish; a view Slack would refuse is refused, unrecorded."""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from emulator.slack_standin import SlackStandIn

ANA = "U0ANA1234"


@pytest.fixture
def standin() -> Iterator[SlackStandIn]:
    with SlackStandIn() as running:
        yield running


def client(standin: SlackStandIn) -> WebClient:
    return WebClient(token="xoxb-test", base_url=standin.url, retry_handlers=[])


def home(*texts: str) -> dict[str, Any]:
    blocks = [{"type": "section", "text": {"type": "mrkdwn", "text": t}} for t in texts]
    return {"type": "home", "blocks": blocks}


def test_a_published_tab_is_read_back_per_person_and_replaced_by_the_next(standin):
    client(standin).views_publish(user_id=ANA, view=home("first"))
    client(standin).views_publish(user_id=ANA, view=home("second"))

    assert standin.home_view(ANA) == home("second")
    assert standin.home_view("U0BEN5678") is None
    with urllib.request.urlopen(standin.control_url + "home_views") as answer:  # noqa: S310
        assert json.load(answer) == {ANA: home("second")}


@pytest.mark.parametrize(
    ("user", "view", "error"),
    [
        (ANA, home(*["x"] * 101), "invalid_arguments"),
        (ANA, {"type": "modal", "blocks": []}, "invalid_arguments"),
        ("not-a-user", home("x"), "user_not_found"),
    ],
)
def test_a_view_slack_refuses_is_refused_and_not_recorded(standin, user, view, error):
    with pytest.raises(SlackApiError) as refused:
        client(standin).views_publish(user_id=user, view=view)

    assert refused.value.response["error"] == error
    assert standin.home_view(user) is None
