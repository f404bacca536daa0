"""The Teams stand-in's Entra ID and Bot Connector, seen through the real clients: MSAL for
tokens, the Teams SDK's ApiClient for sends and updates. What passes here is what the
transport will see."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest
import requests
from microsoft_teams.api import Account
from microsoft_teams.api.activities.message import MessageActivityInput
from microsoft_teams.api.clients.conversation import CreateConversationParams

from core.clock import FixedClock
from emulator.teams_standin import TeamsStandIn
from emulator.teams_tokens import BOT_SCOPE, GRAPH_SCOPE
from tests.fixtures.teams import CHANNEL, api, card, msal_app, send, update

T0 = datetime(2026, 12, 3, 9, 0, tzinfo=UTC)


@pytest.fixture
def clock() -> FixedClock:
    return FixedClock(T0)


@pytest.fixture
def teams(clock: FixedClock) -> Iterator[TeamsStandIn]:
    with TeamsStandIn(clock=clock) as running:
        running.channel(CHANNEL)
        yield running


def raw(
    teams: TeamsStandIn,
    method: str,
    path: str,
    body: Any = None,
    token: str | None = None,
    *,
    anonymous: bool = False,
) -> httpx.Response:
    """A connector call by hand: with a live bot token unless given one, or none at all."""
    headers = {} if anonymous else {"Authorization": f"Bearer {token or teams.issue_token()}"}
    return httpx.request(method, teams.service_url + path, json=body, headers=headers, timeout=5)


# -- Entra ID ---------------------------------------------------------------------------------


def test_msal_gets_a_token_from_the_https_authority_and_caches_it(teams):
    app = msal_app(teams)

    first = app.acquire_token_for_client([BOT_SCOPE])
    second = app.acquire_token_for_client([BOT_SCOPE])

    assert first["token_type"] == "Bearer" and first["access_token"]
    assert second["access_token"] == first["access_token"]
    assert teams.token_grants() == 1


def test_a_wrong_secret_is_invalid_client(teams):
    result = msal_app(teams, secret="not-it").acquire_token_for_client([BOT_SCOPE])

    assert result["error"] == "invalid_client"
    assert teams.token_grants() == 0


def test_an_unknown_scope_is_refused(teams):
    result = msal_app(teams).acquire_token_for_client(["https://example.com/.default"])

    assert result["error"] == "invalid_scope"


def test_the_token_endpoint_is_https_only_with_the_stand_ins_ca(teams):
    with pytest.raises(requests.exceptions.SSLError):
        requests.post(teams.token_url(), data={}, timeout=5)


def test_a_graph_token_does_not_open_the_connector(teams):
    graph_token = msal_app(teams).acquire_token_for_client([GRAPH_SCOPE])["access_token"]

    response = raw(
        teams,
        "POST",
        f"v3/conversations/{CHANNEL}/activities",
        {"type": "message", "text": "hi"},
        token=graph_token,
    )

    assert response.status_code == 401
    assert response.json()["error"]["code"] == "Unauthorized"
    assert teams.activities() == []


def test_a_token_expires_on_the_stand_ins_clock(teams, clock):
    token = teams.issue_token()
    clock.advance(timedelta(seconds=3600))

    response = raw(
        teams,
        "POST",
        f"v3/conversations/{CHANNEL}/activities",
        {"type": "message", "text": "hi"},
        token=token,
    )

    assert response.status_code == 401


def test_no_token_is_401_and_records_nothing(teams):
    response = raw(
        teams,
        "POST",
        f"v3/conversations/{CHANNEL}/activities",
        {"type": "message", "text": "hi"},
        anonymous=True,
    )

    assert response.status_code == 401
    assert teams.activities() == [] and teams.calls() == 0


# -- Bot Connector through the SDK ------------------------------------------------------------


def test_the_sdk_sends_a_card_and_gets_the_activity_id(teams):
    activity_id = send(teams, MessageActivityInput().add_card(card("d-1")))

    [recorded] = teams.activities(CHANNEL)
    assert recorded.id == activity_id == str(int(T0.timestamp() * 1000))
    assert recorded.delivery_id == "d-1" and teams.delivery_ids() == ["d-1"]
    assert recorded.from_app_id == teams.app_id
    assert recorded.activity["from"]["id"] == f"28:{teams.app_id}"
    assert recorded.activity["attachments"][0]["content"]["actions"][0]["verb"] == "done"
    assert teams.calls("send", CHANNEL) == 1


def test_ids_rise_within_a_conversation_at_one_instant(teams):
    first = send(teams, MessageActivityInput().with_text("one"))
    second = send(teams, MessageActivityInput().with_text("two"))

    assert int(second) == int(first) + 1


def test_the_sdk_updates_a_card_in_place(teams, clock):
    activity_id = send(teams, MessageActivityInput().add_card(card("d-1")))
    clock.advance(timedelta(minutes=2))

    updated_id = update(teams, activity_id, MessageActivityInput().add_card(card("d-1", "Done")))

    assert updated_id == activity_id
    [now] = teams.activities()
    assert now.activity["attachments"][0]["content"]["body"][0]["items"][0]["text"] == "Done"
    assert now.modified > now.created
    assert [u.id for u in teams.updates()] == [activity_id]


def test_updating_an_unknown_activity_is_404(teams):
    with pytest.raises(httpx.HTTPStatusError) as raised:
        update(teams, "1234", MessageActivityInput().with_text("x"))

    assert raised.value.response.status_code == 404
    assert raised.value.response.json()["error"]["code"] == "ActivityNotFoundInConversation"


@pytest.mark.parametrize(
    ("roster", "status", "code"),
    [
        ({}, 404, "ConversationNotFound"),
        ({"installed": False}, 403, "BotNotInConversationRoster"),
        ({"blocked": True}, 403, "ConversationBlockedByUser"),
    ],
)
def test_roster_refusals(teams, roster, status, code):
    conversation = teams.personal("29:1alex").id
    if roster:
        teams.set_roster(conversation, **roster)
    else:
        conversation = "a:1nobody"

    with pytest.raises(httpx.HTTPStatusError) as raised:
        send(teams, MessageActivityInput().with_text("hi"), conversation)

    assert raised.value.response.status_code == status
    assert raised.value.response.json()["error"]["code"] == code
    assert teams.activities() == []
    assert teams.calls("send") == 1


@pytest.mark.parametrize(
    ("activity", "names"),
    [
        ({"text": "no type"}, "type"),
        ({"type": "message"}, "empty"),
        ({"type": "message", "attachments": [{"content": {}}]}, "contentType"),
        (
            {
                "type": "message",
                "attachments": [
                    {"contentType": "application/vnd.microsoft.card.adaptive", "content": "{}"}
                ],
            },
            "AdaptiveCard",
        ),
        (
            {
                "type": "message",
                "attachments": [
                    {
                        "contentType": "application/vnd.microsoft.card.adaptive",
                        "content": {
                            "type": "AdaptiveCard",
                            "version": "1.5",
                            "body": [{"text": "x"}],
                        },
                    }
                ],
            },
            "body[0]",
        ),
    ],
)
def test_a_malformed_activity_is_bad_argument(teams, activity, names):
    response = raw(teams, "POST", f"v3/conversations/{CHANNEL}/activities", activity)

    assert response.status_code == 400
    assert response.json()["error"]["code"] == "BadArgument"
    assert names in response.json()["error"]["message"]
    assert teams.activities() == []


def test_create_conversation_opens_the_same_personal_chat(teams):
    personal = teams.personal("29:1alex")

    async def go() -> str:
        created = await api(teams).conversations.create(
            CreateConversationParams(
                members=[Account(id="29:1alex", name="Alex")], tenant_id=teams.tenant_id
            )
        )
        return str(created.id)

    assert asyncio.run(go()) == personal.id


def test_create_conversation_with_someone_without_the_app_is_403(teams):
    response = raw(
        teams,
        "POST",
        "v3/conversations",
        {"members": [{"id": "29:1stranger"}], "tenantId": teams.tenant_id},
    )

    assert response.status_code == 403
    assert response.json()["error"]["code"] == "BotNotInConversationRoster"


def test_a_message_over_100_kb_in_utf16_is_413_message_size_too_big(teams):
    # 60,000 ASCII characters are 60 KB in UTF-8 but 120 KB in UTF-16, which Teams counts.
    fits = {"type": "message", "text": "a" * 40_000}
    too_big = {"type": "message", "text": "a" * 60_000}

    small = raw(teams, "POST", f"v3/conversations/{CHANNEL}/activities", fits)
    big = raw(teams, "POST", f"v3/conversations/{CHANNEL}/activities", too_big)

    assert small.status_code == 201
    assert big.status_code == 413
    assert big.json()["error"]["code"] == "MessageSizeTooBig"
    assert len(teams.activities()) == 1
