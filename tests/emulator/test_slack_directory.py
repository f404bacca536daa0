"""The Slack stand-in's directory methods through the real slack_sdk WebClient:
conversations.list and users.list with Slack's cursor paging, limits, types and
exclude_archived, their rate limits, and users.lookupByEmail."""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from core.clock import FixedClock
from emulator.run_local import name_workspace
from emulator.slack_directory import SEED_CHANNELS, SEED_PEOPLE
from emulator.slack_standin import SlackStandIn
from tests.fixtures.clock import T0


@pytest.fixture
def standin() -> Iterator[SlackStandIn]:
    with SlackStandIn(clock=FixedClock(T0)) as running:
        running.seed_workspace()
        yield running


def web(standin: SlackStandIn) -> WebClient:
    return WebClient(token="xoxb-test", base_url=standin.url, retry_handlers=[])


def every_page(call: Any, key: str, **params: Any) -> list[list[dict[str, Any]]]:
    pages, cursor = [], None
    while True:
        answer = call(cursor=cursor, **params)
        pages.append(answer[key])
        cursor = answer["response_metadata"]["next_cursor"]
        if cursor == "":
            return pages


def test_conversations_list_pages_by_cursor_to_an_empty_next_cursor(standin):
    pages = every_page(
        web(standin).conversations_list, "channels", types="public_channel,private_channel", limit=5
    )

    assert [len(page) for page in pages] == [5, 5, 2]
    assert [c["id"] for page in pages for c in page] == [c.id for c in SEED_CHANNELS]


def test_conversations_list_takes_public_channels_by_default_and_can_leave_archived_out(standin):
    standin.set_channel("C0RELEASES1", archived=True)
    standin.set_channel("C0DESIGN001", exists=False)
    standin.set_channel("C0MARKETIN1", member=False)
    client = web(standin)

    public = client.conversations_list()["channels"]
    current = client.conversations_list(exclude_archived=True)["channels"]

    assert len(public) == 9  # twelve, less two private and one gone
    assert not any(c["is_private"] for c in public)
    assert next(c for c in public if c["id"] == "C0RELEASES1")["is_archived"] is True
    assert "C0RELEASES1" not in {c["id"] for c in current}
    assert next(c for c in public if c["id"] == "C0MARKETIN1")["is_member"] is False


@pytest.mark.parametrize(
    ("params", "error"),
    [
        ({"limit": 1001}, "invalid_limit"),
        ({"limit": -1}, "invalid_limit"),
        ({"cursor": "bm90LWEtY3Vyc29y"}, "invalid_cursor"),
        ({"cursor": "%%%"}, "invalid_cursor"),
        ({"types": "public_channel,dms"}, "invalid_types"),
    ],
)
def test_bad_list_arguments_are_slacks_errors(standin, params, error):
    with pytest.raises(SlackApiError) as refused:
        web(standin).conversations_list(**params)
    assert refused.value.response["error"] == error


def test_users_list_pages_and_flags_deactivated_people_and_bots(standin):
    standin.set_user("U0BENCARTER", deactivated=True)
    standin.set_user("U0CHLOEWONG", bot=True)
    standin.set_user("U0DAVIDOKAF", exists=False)

    pages = every_page(web(standin).users_list, "members", limit=1000)

    (members,) = pages
    assert len(members) == len(SEED_PEOPLE) - 1
    ben = next(m for m in members if m["id"] == "U0BENCARTER")
    assert (ben["deleted"], ben["is_bot"], ben["real_name"]) == (True, False, "Ben Carter")
    assert next(m for m in members if m["id"] == "U0CHLOEWONG")["is_bot"] is True
    assert every_page(web(standin).users_list, "members")[0] == members  # default 100 > 15


def test_a_list_past_its_rate_limit_is_a_429_with_retry_after(standin):
    standin.set_rate_limit("users.list", 20, per_seconds=60)
    client = web(standin)
    for _ in range(20):
        client.users_list(limit=1)

    with pytest.raises(SlackApiError) as refused:
        client.users_list(limit=1)

    assert refused.value.response.status_code == 429
    assert refused.value.response.headers["Retry-After"] == "60"


def test_lookup_by_email_finds_a_person_in_any_case_or_answers_users_not_found(standin):
    client = web(standin)

    found = client.users_lookupByEmail(email="Maya.Patel@example.com")["user"]
    with pytest.raises(SlackApiError) as refused:
        client.users_lookupByEmail(email="nobody@example.com")

    assert (found["id"], found["profile"]["email"]) == ("U0MAYAPATEL", "maya.patel@example.com")
    assert refused.value.response["error"] == "users_not_found"


def test_the_directory_control_names_channels_and_people(standin):
    standin.reset()
    body = {
        "channels": [{"id": "C0OPS000001", "name": "ops", "is_private": True}],
        "people": [{"id": "U0ZOE000001", "name": "zoe", "real_name": "Zoe Ng", "email": "z@x.io"}],
    }
    request = urllib.request.Request(  # noqa: S310 (the local stand-in)
        standin.control_url + "directory",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request) as answer:  # noqa: S310 (the local stand-in)
        assert json.load(answer) == {"ok": True}

    channels = web(standin).conversations_list(types="private_channel")["channels"]
    assert [(c["id"], c["name"]) for c in channels] == [("C0OPS000001", "ops")]
    assert web(standin).users_lookupByEmail(email="z@x.io")["user"]["real_name"] == "Zoe Ng"


def test_make_run_names_the_seeded_workspace_and_its_examples_ids(standin):
    standin.reset()
    name_workspace(standin, "C0DEMO0001")

    channels = web(standin).conversations_list()["channels"]
    members = web(standin).users_list()["members"]

    assert {"general", "eng-standup", "releases", "demo"} <= {c["name"] for c in channels}
    assert "Ana Demo" in {m["real_name"] for m in members}
    assert len(members) == len(SEED_PEOPLE) + 3
