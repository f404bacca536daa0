"""`GET /teams/conversations` on the `api` target: the conversations the bot is installed in,
by name, as the `teams` target recorded them from the stand-in's install activities."""

from __future__ import annotations

from datetime import timedelta

from tests.fixtures.api import call
from tests.fixtures.clock import T0
from tests.fixtures.teams_inbound import CHANNEL, PERSON, TEAM, install, personal_chat, remove

TENANT = "72f988bf-86f1-41af-91ab-2d7cd011db47"
INCIDENTS = "19:incidents@thread.tacv2"


def test_the_installed_conversations_are_listed_by_name(teams, api, standin):
    standin.channel(INCIDENTS, name="incidents", team_id=TEAM, team_name="Platform")
    for conversation in (CHANNEL, personal_chat(standin), INCIDENTS):
        assert install(teams, standin, conversation) == [200, 200]

    status, answer = call(api, "GET", "/teams/conversations")

    assert status == 200
    assert answer == {
        "conversations": [
            {
                "id": personal_chat(standin),
                "name": f"Personal chat ({PERSON})",
                "conversation_type": "personal",
                "tenant_id": TENANT,
                "installed_at": T0.isoformat(),
            },
            {
                "id": INCIDENTS,
                "name": "Platform / incidents",
                "conversation_type": "channel",
                "tenant_id": TENANT,
                "installed_at": T0.isoformat(),
            },
            {
                "id": CHANNEL,
                "name": "Platform / standups",
                "conversation_type": "channel",
                "tenant_id": TENANT,
                "installed_at": T0.isoformat(),
            },
        ]
    }


def test_a_removed_conversation_is_not_listed(teams, api, standin, clock):
    install(teams, standin, CHANNEL)
    clock.advance(timedelta(minutes=1))
    remove(teams, standin, CHANNEL)

    assert call(api, "GET", "/teams/conversations") == (200, {"conversations": []})


def test_the_listing_needs_credentials(api):
    status, answer = call(api, "GET", "/teams/conversations", auth=False)

    assert status == 401
    assert answer["error"] == "unauthorized"
