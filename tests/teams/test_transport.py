"""The Teams transport through the real Teams SDK and MSAL against the Teams stand-in: posts,
updates, each outcome the stand-in can reproduce, the per-conversation 429 wait, token
caching, and Graph reads for proof of delivery."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

import pytest

from core.clock import FixedClock
from core.settings import Settings
from core.slack import Outcome
from core.teams import ConversationRef, TeamsTransport
from emulator.teams_standin import TeamsStandIn
from formatting.teams_message import TeamsMessage

T0 = datetime(2026, 12, 3, 9, 0, tzinfo=UTC)
CHANNEL = "19:general0001@thread.tacv2"
TEAM = "5a6b7c8d-0000-4000-8000-00000000a001"
GROUP_CHAT = "19:groupchat0001@thread.v2"


def card(text: str) -> dict[str, Any]:
    return {
        "type": "AdaptiveCard",
        "version": "1.5",
        "body": [{"type": "TextBlock", "text": text, "wrap": True}],
    }


HELLO = TeamsMessage("Standup in 5", card("Standup in **5**"))


@pytest.fixture
def clock() -> FixedClock:
    return FixedClock(T0)


@pytest.fixture
def teams(clock: FixedClock) -> Iterator[TeamsStandIn]:
    with TeamsStandIn(clock=clock) as running:
        running.channel(CHANNEL, aad_group_id=TEAM)
        running.group_chat(GROUP_CHAT)
        yield running


@pytest.fixture
def refs(teams: TeamsStandIn) -> dict[str, ConversationRef]:
    """The stored teams_conversations, as the transport's lookup answers them."""
    return {
        CHANNEL: ConversationRef(teams.service_url, "channel", TEAM, CHANNEL),
        GROUP_CHAT: ConversationRef(teams.service_url, "groupChat"),
    }


def settings_for(teams: TeamsStandIn, **env: str) -> Settings:
    return Settings.from_env({"SLACK_BOT_TOKEN": "xoxb-test", **teams.env(), **env})


@pytest.fixture
def transport(teams, refs, clock) -> TeamsTransport:
    return TeamsTransport(settings_for(teams), refs.get, timeout_seconds=2, clock=clock)


def test_a_post_is_one_activity_carrying_its_delivery_id(teams, transport):
    result = transport.post(CHANNEL, HELLO, "d1")

    [recorded] = teams.activities(CHANNEL)
    assert (result.outcome, result.ts) == (Outcome.DELIVERED, recorded.id)
    assert recorded.delivery_id == "d1"
    assert recorded.activity["summary"] == "Standup in 5"
    [attachment] = recorded.activity["attachments"]
    [container] = attachment["content"]["body"]
    assert container["items"] == [{"type": "TextBlock", "text": "Standup in **5**", "wrap": True}]


def test_mentions_go_in_the_cards_msteams_entities(teams, transport):
    mention = {"type": "mention", "text": "<at>Ana</at>", "mentioned": {"id": "29:1ana"}}
    message = TeamsMessage("Ana's turn", card("<at>Ana</at>'s turn"), [mention])

    transport.post(CHANNEL, message, "d1")

    [recorded] = teams.activities(CHANNEL)
    assert recorded.activity["attachments"][0]["content"]["msteams"] == {"entities": [mention]}


def test_an_update_replaces_the_card_in_place_keeping_the_delivery_id(teams, transport):
    posted = transport.post(CHANNEL, HELLO, "d1")

    result = transport.update(CHANNEL, str(posted.ts), TeamsMessage("Done", card("Done")), "d1")

    assert (result.outcome, result.ts) == (Outcome.DELIVERED, posted.ts)
    [recorded] = teams.activities(CHANNEL)
    assert recorded.delivery_id == "d1"
    assert recorded.activity["summary"] == "Done"


def test_one_token_serves_many_posts(teams, transport):
    for n in range(5):
        assert transport.post(CHANNEL, HELLO, f"d{n}").outcome is Outcome.DELIVERED
    assert teams.token_grants() == 1
    assert len(teams.activities(CHANNEL)) == 5


@pytest.mark.parametrize(
    ("ref", "code"),
    [(None, "conversation_not_installed"), ("removed", "conversation_removed")],
)
def test_a_conversation_not_ours_fails_without_calling_teams(teams, refs, transport, ref, code):
    if ref is None:
        del refs[CHANNEL]
    else:
        refs[CHANNEL] = replace(refs[CHANNEL], removed=True)

    result = transport.post(CHANNEL, HELLO, "d1")

    assert (result.outcome, result.code) == (Outcome.FAILED, code)
    assert (teams.calls(), teams.token_grants()) == (0, 0)


@pytest.mark.parametrize(
    ("roster", "code"),
    [
        ({"installed": False}, "BotNotInConversationRoster"),
        ({"blocked": True}, "ConversationBlockedByUser"),
    ],
)
def test_a_roster_refusal_fails_with_teams_code(teams, transport, roster, code):
    teams.set_roster(CHANNEL, **roster)

    result = transport.post(CHANNEL, HELLO, "d1")

    assert (result.outcome, result.code) == (Outcome.FAILED, code)
    assert teams.activities() == []


def test_a_conversation_teams_does_not_know_fails(teams, refs, transport):
    refs["19:gone@thread.tacv2"] = refs[CHANNEL]

    result = transport.post("19:gone@thread.tacv2", HELLO, "d1")

    assert (result.outcome, result.code) == (Outcome.FAILED, "ConversationNotFound")


def test_a_malformed_card_fails_as_a_bad_argument(teams, transport):
    broken = TeamsMessage("x", {"type": "AdaptiveCard", "body": []})  # no version

    result = transport.post(CHANNEL, broken, "d1")

    assert (result.outcome, result.code) == (Outcome.FAILED, "BadArgument")
    assert teams.activities() == []


def test_an_update_of_an_unknown_activity_fails(teams, transport):
    result = transport.update(CHANNEL, "1764752400000", HELLO, "d1")
    assert (result.outcome, result.code) == (Outcome.FAILED, "ActivityNotFoundInConversation")


def test_a_refused_connection_is_provably_not_delivered(teams, refs, transport):
    # Nothing listens on port 9 of loopback here: the request never leaves this machine.
    refs[CHANNEL] = replace(refs[CHANNEL], service_url="http://127.0.0.1:9/teams/")

    result = transport.post(CHANNEL, HELLO, "d1")

    assert (result.outcome, result.code) == (Outcome.RETRY_LATER, "connection_refused")


def test_a_secret_the_token_endpoint_refuses_fails_before_any_post(teams, refs, clock):
    settings = settings_for(teams, TEAMS_APP_PASSWORD="wrong")
    transport = TeamsTransport(settings, refs.get, timeout_seconds=2, clock=clock)

    result = transport.post(CHANNEL, HELLO, "d1")

    assert (result.outcome, result.code) == (Outcome.FAILED, "token_refused")
    assert teams.calls() == 0


def test_an_unreachable_token_endpoint_is_retried_later(teams, refs, clock):
    unreachable = "https://127.0.0.1:9/tenant/oauth2/v2.0/token"
    settings = settings_for(teams, TEAMS_TOKEN_URL=unreachable)
    transport = TeamsTransport(settings, refs.get, timeout_seconds=2, clock=clock)

    result = transport.post(CHANNEL, HELLO, "d1")

    assert (result.outcome, result.code) == (Outcome.RETRY_LATER, "token_unavailable")
    assert teams.calls() == 0
