"""The Teams stand-in's Microsoft Graph: our sends read back as chatMessage resources, paged,
behind resource-specific consent; what the reconciler's proof of delivery will read."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from microsoft_teams.api.activities.message import MessageActivityInput

from core.clock import FixedClock
from emulator.teams_faults import Fault
from emulator.teams_graph import CHANNEL_PERMISSION, CHAT_PERMISSION
from emulator.teams_standin import TeamsStandIn
from emulator.teams_tokens import BOT_SCOPE
from tests.fixtures.teams import (
    AAD_GROUP,
    CHANNEL,
    card,
    graph_all,
    graph_get,
    send,
    send_card,
    update,
)

T0 = datetime(2026, 12, 3, 9, 0, tzinfo=UTC)
CHANNEL_MESSAGES = f"teams/{AAD_GROUP}/channels/{CHANNEL}/messages"
GROUP = "19:groupchat0001@thread.v2"


@pytest.fixture
def clock() -> FixedClock:
    return FixedClock(T0)


@pytest.fixture
def teams(clock: FixedClock) -> Iterator[TeamsStandIn]:
    with TeamsStandIn(clock=clock) as running:
        running.channel(CHANNEL)
        running.group_chat(GROUP)
        running.set_rate_limit(None)
        yield running


def delivery_ids_in(message: dict[str, Any]) -> list[str]:
    """What the reconciler looks for: Container ids in our cards' JSON."""
    ids = []
    for attachment in message["attachments"]:
        if attachment["contentType"] == "application/vnd.microsoft.card.adaptive":
            content = json.loads(attachment["content"])
            ids += [e["id"] for e in content["body"] if e["type"] == "Container"]
    return ids


def spaced_sends(teams: TeamsStandIn, clock: FixedClock, n: int, chat: str = CHANNEL) -> list[str]:
    ids = []
    for i in range(n):
        ids.append(send_card(teams, f"d-{i}", chat))
        clock.advance(timedelta(seconds=10))
    return ids


# -- consent ----------------------------------------------------------------------------------


def test_without_rsc_graph_answers_403_forbidden(teams):
    send_card(teams, "d-1")

    response = graph_get(teams, CHANNEL_MESSAGES)

    assert response.status_code == 403
    assert response.json()["error"]["code"] == "Forbidden"
    assert CHANNEL_PERMISSION in response.json()["error"]["message"]


def test_rsc_granted_then_taken_back(teams):
    teams.grant(CHANNEL, CHANNEL_PERMISSION)
    assert graph_get(teams, CHANNEL_MESSAGES).status_code == 200

    teams.grant(CHANNEL, CHANNEL_PERMISSION, granted=False)

    assert graph_get(teams, CHANNEL_MESSAGES).status_code == 403


def test_the_wrong_permission_for_the_conversation_is_refused(teams):
    with pytest.raises(ValueError):
        teams.grant(CHANNEL, CHAT_PERMISSION)


def test_graph_needs_a_graph_token(teams):
    teams.grant(CHANNEL, CHANNEL_PERMISSION)

    response = graph_get(teams, CHANNEL_MESSAGES, token=teams.issue_token(BOT_SCOPE))

    assert response.status_code == 401
    assert response.json()["error"]["code"] == "InvalidAuthenticationToken"


def test_an_unknown_team_or_channel_is_404(teams):
    teams.grant(CHANNEL, CHANNEL_PERMISSION)

    response = graph_get(teams, f"teams/{AAD_GROUP}/channels/19:nope@thread.tacv2/messages")

    assert response.status_code == 404


# -- the chatMessage resource --------------------------------------------------------------


def test_our_card_reads_back_as_a_chat_message_from_our_app(teams):
    teams.grant(CHANNEL, CHANNEL_PERMISSION)
    activity_id = send_card(teams, "d-42")

    [message] = graph_get(teams, CHANNEL_MESSAGES).json()["value"]

    assert message["id"] == activity_id
    assert (
        message["createdDateTime"] == message["lastModifiedDateTime"] == "2026-12-03T09:00:00.000Z"
    )
    assert message["from"]["application"]["id"] == teams.app_id
    assert message["from"]["application"]["applicationIdentityType"] == "bot"
    assert message["from"]["user"] is None
    assert message["channelIdentity"] == {"teamId": AAD_GROUP, "channelId": CHANNEL}
    [attachment] = message["attachments"]
    assert isinstance(attachment["content"], str)  # Graph gives the card as a JSON string
    assert f'<attachment id="{attachment["id"]}">' in message["body"]["content"]
    assert delivery_ids_in(message) == ["d-42"]


def test_someone_elses_messages_are_not_ours(teams):
    teams.grant(CHANNEL, CHANNEL_PERMISSION)
    teams.add_message(CHANNEL, "a person writes", user="29:1alex", user_name="Alex")
    teams.add_message(
        CHANNEL,
        card=card("d-1").model_dump(by_alias=True, exclude_none=True),
        app_id="another-app",
        app_name="Copycat",
    )

    person, bot = reversed(graph_get(teams, CHANNEL_MESSAGES).json()["value"])

    assert person["from"]["application"] is None
    assert person["from"]["user"]["displayName"] == "Alex"
    assert bot["from"]["application"]["id"] == "another-app"
    assert teams.delivery_ids() == []  # neither is ours


def test_an_update_moves_last_modified(teams, clock):
    teams.grant(GROUP, CHAT_PERMISSION)
    first = send_card(teams, "d-1", GROUP)
    clock.advance(timedelta(minutes=1))
    second = send_card(teams, "d-2", GROUP)
    clock.advance(timedelta(minutes=1))
    update(teams, first, MessageActivityInput().add_card(card("d-1", "Done")), GROUP)

    by_modified = graph_get(teams, f"chats/{GROUP}/messages").json()["value"]
    by_created = graph_get(teams, f"chats/{GROUP}/messages?$orderby=createdDateTime desc").json()[
        "value"
    ]

    assert [m["id"] for m in by_modified] == [first, second]
    assert by_modified[0]["lastEditedDateTime"] == "2026-12-03T09:02:00.000Z"
    assert [m["id"] for m in by_created] == [second, first]


# -- paging -----------------------------------------------------------------------------------


def test_pages_follow_next_link_newest_first(teams, clock):
    teams.grant(CHANNEL, CHANNEL_PERMISSION)
    ids = spaced_sends(teams, clock, 5)

    messages, sizes = graph_all(teams, f"{CHANNEL_MESSAGES}?$top=2")

    assert [m["id"] for m in messages] == ids[::-1]
    assert sizes == [2, 2, 1]


def test_a_page_is_20_by_default(teams, clock):
    teams.grant(CHANNEL, CHANNEL_PERMISSION)
    spaced_sends(teams, clock, 21)

    page = graph_get(teams, CHANNEL_MESSAGES).json()

    assert len(page["value"]) == 20 and "@odata.nextLink" in page


@pytest.mark.parametrize(
    "query",
    [
        "$top=51",
        "$top=0",
        "$top=x",
        "$filter=createdDateTime lt 2026-12-04T00:00:00Z",
        "$orderby=createdDateTime desc",
    ],
)
def test_channels_refuse_what_graph_does_not_support(teams, query):
    teams.grant(CHANNEL, CHANNEL_PERMISSION)

    response = graph_get(teams, f"{CHANNEL_MESSAGES}?{query}")

    assert response.status_code == 400
    assert response.json()["error"]["code"] == "BadRequest"


def test_short_pages_still_reach_every_message(teams, clock):
    teams.grant(CHANNEL, CHANNEL_PERMISSION)
    ids = spaced_sends(teams, clock, 7)
    teams.set_short_pages(True)

    messages, sizes = graph_all(teams, f"{CHANNEL_MESSAGES}?$top=4")

    assert [m["id"] for m in messages] == ids[::-1]
    assert sizes[:4] == [2, 0, 4, 1]


# -- chats: $orderby and $filter as Graph documents them ------------------------------------


def test_chat_filter_on_created_needs_orderby_created(teams, clock):
    teams.grant(GROUP, CHAT_PERMISSION)
    ids = spaced_sends(teams, clock, 4, GROUP)  # 09:00:00, :10, :20, :30
    before = "$filter=createdDateTime lt 2026-12-03T09:00:15Z"

    filtered = graph_get(teams, f"chats/{GROUP}/messages?$orderby=createdDateTime desc&{before}")
    ignored = graph_get(teams, f"chats/{GROUP}/messages?{before}")

    assert [m["id"] for m in filtered.json()["value"]] == [ids[1], ids[0]]
    assert len(ignored.json()["value"]) == 4  # documented: ignored without that $orderby


def test_chat_filter_on_last_modified_takes_a_window(teams, clock):
    teams.grant(GROUP, CHAT_PERMISSION)
    ids = spaced_sends(teams, clock, 4, GROUP)
    window = (
        "$orderby=lastModifiedDateTime desc&$filter=lastModifiedDateTime gt 2026-12-03T09:00:05Z"
        " and lastModifiedDateTime lt 2026-12-03T09:00:25Z"
    )

    messages, _ = graph_all(teams, f"chats/{GROUP}/messages?$top=1&{window}")

    assert [m["id"] for m in messages] == [ids[2], ids[1]]


@pytest.mark.parametrize(
    "query",
    [
        "$orderby=createdDateTime asc",
        "$orderby=createdDateTime desc&$filter=createdDateTime gt 2026-12-03T09:00:00Z",
        "$filter=id eq 1",
        "$select=id",
    ],
)
def test_chats_refuse_what_graph_does_not_support(teams, query):
    teams.grant(GROUP, CHAT_PERMISSION)

    assert graph_get(teams, f"chats/{GROUP}/messages?{query}").status_code == 400


def test_a_personal_chat_is_read_by_its_graph_id_not_its_bot_framework_id(teams):
    personal = teams.personal("29:1alex", user_aad_id="aad-alex")
    teams.grant(personal.id, CHAT_PERMISSION)
    send_card(teams, "d-1", personal.id)
    graph_id = teams.graph_chat_id(personal.id)

    by_bot_id = graph_get(teams, f"chats/{personal.id}/messages")
    by_graph_id = graph_get(teams, f"chats/{graph_id}/messages")

    assert graph_id == f"19:aad-alex_{teams.app_id}@unq.gbl.spaces"
    assert by_bot_id.status_code == 404
    [message] = by_graph_id.json()["value"]
    assert message["chatId"] == graph_id and delivery_ids_in(message) == ["d-1"]


# -- faults -----------------------------------------------------------------------------------


@pytest.mark.parametrize("status", [500, 503, 504])
def test_graph_server_errors(teams, status):
    teams.grant(CHANNEL, CHANNEL_PERMISSION)
    teams.inject(Fault("server_error", operation="graph", status=status, times=1))

    assert graph_get(teams, CHANNEL_MESSAGES).status_code == status
    assert graph_get(teams, CHANNEL_MESSAGES).status_code == 200


def test_graph_throttling_is_429_with_retry_after(teams):
    teams.grant(CHANNEL, CHANNEL_PERMISSION)
    teams.inject(Fault("rate_limit", operation="graph", retry_after=12, conversation=CHANNEL))

    response = graph_get(teams, CHANNEL_MESSAGES)

    assert response.status_code == 429 and response.headers["Retry-After"] == "12"
    assert response.json()["error"]["code"] == "TooManyRequests"
    assert teams.calls("graph", CHANNEL) == 1


def test_a_graph_fault_leaves_sends_alone(teams):
    teams.inject(Fault("server_error", operation="graph"))

    send(teams, MessageActivityInput().with_text("hi"))

    assert len(teams.activities()) == 1
