"""The `teams` target: Bot Framework's JWT checked before anything is stored, and the
conversations our bot is installed in recorded, removed and installed again. Every activity
is built and signed by the Teams stand-in, as Teams would send it."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import httpx
import pytest

from tests.fixtures.clock import T0
from tests.fixtures.teams_inbound import (
    AAD_GROUP,
    BOT,
    CHANNEL,
    PERSON,
    TEAM,
    foreign_issuer_token,
    free_port,
    install,
    personal_chat,
    post,
    remove,
    send,
    serving,
    stored,
)

TENANT = "72f988bf-86f1-41af-91ab-2d7cd011db47"


def channel_install(standin: Any) -> dict[str, Any]:
    """The installationUpdate `add` Teams sends when the app is added to the channel."""
    activity: dict[str, Any] = standin.install_activity(CHANNEL)[0]
    return activity


# --- authentication ------------------------------------------------------------------------

REFUSALS = {
    "no token": "missing bearer token",
    "not a bearer token": "missing bearer token",
    "garbage": "invalid bearer token",
    "three garbage parts": "malformed",
    "expired": "expired",
    "wrong audience": "audience",
    "wrong issuer": "issuer",
    "unknown key": "unknown key",
    "retired key": "unknown key",
    "serviceurl mismatch": "serviceurl",
}


def _token(standin: Any, activity: dict[str, Any], case: str) -> str | None:
    if case == "retired key":
        retired = standin.current_kid
        standin.rotate_keys()
        return str(standin.sign(activity, kid=retired))
    made = {
        "garbage": lambda: "garbage",
        "three garbage parts": lambda: "not.a.jwt",
        "expired": lambda: standin.sign(activity, expired=True),
        "wrong audience": lambda: standin.sign(activity, audience="someone-elses-app"),
        "wrong issuer": lambda: foreign_issuer_token(standin, activity, "https://sts.example"),
        "unknown key": lambda: standin.sign(activity, kid="not-a-published-key"),
        "serviceurl mismatch": lambda: standin.sign(
            activity, service_url="https://smba.trafficmanager.net/evil/"
        ),
    }.get(case)
    return None if made is None else str(made())


@pytest.mark.parametrize("case", REFUSALS)
def test_an_unauthenticated_install_is_a_json_401_and_stores_nothing(teams, standin, db, case):
    activity = channel_install(standin)
    token = _token(standin, activity, case)
    headers = {"Authorization": "Basic YWxhZGRpbjpvcGVuc2VzYW1l"}
    if token is not None:
        headers = {"Authorization": f"Bearer {token}"}
    elif case == "no token":
        headers = {}

    answer = teams.post("/", data=json.dumps(activity), headers=headers)

    assert answer.status_code == 401
    assert answer.is_json and set(answer.get_json()) == {"error", "message", "details"}
    assert answer.get_json()["error"] == "unauthorized"
    assert REFUSALS[case] in answer.get_json()["message"]
    assert "YWxhZGRpbjpvcGVuc2VzYW1l" not in answer.get_data(as_text=True)
    if token is not None:
        assert token not in answer.get_data(as_text=True)
    assert stored(db) == {}


def test_the_same_install_signed_by_bot_framework_is_stored(teams, standin, db):
    answer = send(teams, standin, channel_install(standin))

    assert (answer.status_code, answer.get_json()) == (200, {})
    assert stored(db) == {
        CHANNEL: {
            "service_url": standin.service_url,
            "tenant_id": TENANT,
            "conversation_type": "channel",
            "name": "Platform / standups",
            "team_id": TEAM,
            "aad_group_id": AAD_GROUP,
            "channel_id": CHANNEL,
            "status": "installed",
            "installed_at": T0,
            "activity_at": T0,
            "updated_at": T0,
        }
    }


def test_without_teams_app_id_every_activity_is_refused(teams, standin, db, monkeypatch):
    monkeypatch.delenv("TEAMS_APP_ID")

    answer = send(teams, standin, channel_install(standin))

    assert answer.status_code == 401
    assert stored(db) == {}


# --- install and remove --------------------------------------------------------------------


def test_a_channel_install_is_stored(teams, standin, db):
    assert install(teams, standin, CHANNEL) == [200, 200]

    conversation = stored(db)[CHANNEL]
    assert conversation["status"] == "installed"
    assert conversation["installed_at"] == T0
    assert (conversation["team_id"], conversation["aad_group_id"]) == (TEAM, AAD_GROUP)


def test_a_personal_install_is_stored(teams, standin, db):
    chat = personal_chat(standin)

    assert install(teams, standin, chat) == [200, 200]
    assert stored(db) == {
        chat: {
            "service_url": standin.service_url,
            "tenant_id": TENANT,
            "conversation_type": "personal",
            "name": f"Personal chat ({PERSON})",
            "user_id": PERSON,
            "user_aad_id": standin.conversation(chat).user_aad_id,
            "status": "installed",
            "installed_at": T0,
            "activity_at": T0,
            "updated_at": T0,
        }
    }


def test_a_personal_install_is_named_after_the_person_and_keeps_their_ids(teams, standin, db):
    chat = standin.personal("29:1bo", user_aad_id="0b0b0b0b-0000-4000-8000-000000000b0b").id
    activity = standin.install_activity(chat)[0]
    activity["from"]["name"] = "Bo Berg"

    send(teams, standin, activity)

    conversation = stored(db)[chat]
    assert conversation["name"] == "Bo Berg"
    assert (conversation["user_id"], conversation["user_aad_id"]) == (
        "29:1bo",
        "0b0b0b0b-0000-4000-8000-000000000b0b",
    )


def test_the_bot_added_by_a_conversation_update_alone_is_an_install(teams, standin, db):
    update = standin.install_activity(CHANNEL)[1]
    assert update["type"] == "conversationUpdate"

    assert send(teams, standin, update).status_code == 200

    assert stored(db)[CHANNEL]["status"] == "installed"


def test_members_added_without_the_bot_store_nothing(teams, standin, db):
    update = standin.install_activity(CHANNEL)[1]
    update["membersAdded"] = [{"id": "29:1bo"}]

    answer = send(teams, standin, update)

    assert (answer.status_code, answer.get_json()) == (200, {})
    assert stored(db) == {}


def test_remove_then_install_again(teams, standin, db, clock):
    install(teams, standin, CHANNEL)
    clock.advance(timedelta(hours=1))

    assert remove(teams, standin, CHANNEL) == [200, 200]

    removed = stored(db)[CHANNEL]
    assert (removed["status"], removed["removed_at"]) == ("removed", clock.now())
    assert removed["installed_at"] == T0

    clock.advance(timedelta(hours=1))
    install(teams, standin, CHANNEL)

    again = stored(db)[CHANNEL]
    assert (again["status"], again["installed_at"]) == ("installed", clock.now())
    assert "removed_at" not in again


def test_the_bot_removed_by_a_conversation_update_alone_is_a_removal(teams, standin, db, clock):
    install(teams, standin, CHANNEL)
    clock.advance(timedelta(minutes=1))

    send(teams, standin, standin.remove_activity(CHANNEL)[1])

    assert stored(db)[CHANNEL]["status"] == "removed"


def test_a_removal_of_a_conversation_never_seen_is_recorded_as_removed(teams, standin, db):
    send(teams, standin, standin.remove_activity(CHANNEL)[0])

    assert stored(db)[CHANNEL]["status"] == "removed"
    assert stored(db)[CHANNEL]["service_url"] == standin.service_url


def test_an_install_said_twice_keeps_when_it_was_installed(teams, standin, db, clock):
    first, second = standin.install_activity(CHANNEL)
    send(teams, standin, first)
    clock.advance(timedelta(seconds=2))
    second["timestamp"] = clock.now().isoformat()

    send(teams, standin, second)

    assert stored(db)[CHANNEL]["installed_at"] == T0


def test_a_removal_delivered_after_a_later_install_changes_nothing(teams, standin, db, clock):
    # Teams removed the bot, then added it again; the two arrive the other way round.
    early_removal = standin.remove_activity(CHANNEL)[0]
    clock.advance(timedelta(minutes=5))
    late_install = standin.install_activity(CHANNEL)[0]
    send(teams, standin, late_install)

    answer = send(teams, standin, early_removal)

    assert answer.status_code == 200
    assert stored(db)[CHANNEL]["status"] == "installed"


# --- malformed activities, once authenticated --------------------------------------------


def test_a_body_that_is_not_json_is_a_400_once_authenticated(teams, standin, db):
    token = standin.sign({}, service_url=standin.service_url)

    answer = post(teams, b"{not json", token)

    assert answer.status_code == 400
    assert set(answer.get_json()) == {"error", "message", "details"}
    assert stored(db) == {}


def test_a_body_that_is_not_json_without_a_token_is_a_401(teams, db):
    assert post(teams, b"{not json", None).status_code == 401


@pytest.mark.parametrize(
    "path",
    [
        ("conversation", "conversationType"),
        ("conversation", "id"),
        ("recipient",),
        ("channelData", "team"),
        ("serviceUrl",),
        ("type",),
    ],
)
def test_an_install_missing_a_field_is_a_400_naming_it(teams, standin, db, path):
    activity = channel_install(standin)
    token = standin.sign(activity)
    holder = activity
    for name in path[:-1]:
        holder = holder[name]
    del holder[path[-1]]

    answer = post(teams, activity, token)

    assert answer.status_code == 400
    assert ".".join(path) in [d["field"] for d in answer.get_json()["details"]]
    assert stored(db) == {}


def test_an_unknown_conversation_type_is_a_400_naming_it(teams, standin, db):
    activity = channel_install(standin)
    activity["conversation"]["conversationType"] = "meetingRoom"

    answer = send(teams, standin, activity)

    assert answer.status_code == 400
    assert [d["field"] for d in answer.get_json()["details"]] == ["conversation.conversationType"]
    assert stored(db) == {}


# --- other activities ----------------------------------------------------------------------


def test_a_message_to_the_bot_is_acknowledged_and_stores_nothing(teams, standin, db):
    activity = channel_install(standin)
    del activity["action"]
    activity.update(type="message", text="hello", recipient={"id": BOT})

    answer = send(teams, standin, activity)

    assert (answer.status_code, answer.get_json()) == (200, {})
    assert stored(db) == {}


def test_a_card_action_naming_no_button_of_ours_records_nothing(teams, standin, db):
    click = channel_install(standin)
    del click["action"]
    click.update(
        type="invoke",
        name="adaptiveCard/action",
        replyToId="1700000000000",
        value={"action": {"type": "Action.Execute", "verb": "done", "data": {}}},
    )

    answer = send(teams, standin, click)

    assert answer.status_code == 200
    assert answer.get_json() == {
        "statusCode": 200,
        "type": "application/vnd.microsoft.activity.message",
        "value": "This button is not one of ours any more.",
    }
    assert stored(db) == {}
    assert list(db.collection("responses").stream()) == []


# --- keys ----------------------------------------------------------------------------------


def test_a_rotated_key_is_fetched_and_accepted(teams, standin, db, monkeypatch):
    # The cooldown between two fetches of the key set has passed (0 s here: no waiting).
    monkeypatch.setattr("core.teams_auth.KEY_REFRESH_COOLDOWN_SECONDS", 0)
    assert install(teams, standin, personal_chat(standin)) == [200, 200]
    standin.rotate_keys()

    answer = send(teams, standin, channel_install(standin))

    assert answer.status_code == 200
    assert stored(db)[CHANNEL]["status"] == "installed"


def test_a_key_first_seen_within_the_cooldown_is_refused(teams, standin, db):
    assert install(teams, standin, personal_chat(standin)) == [200, 200]
    standin.rotate_keys()

    answer = send(teams, standin, channel_install(standin))

    assert answer.status_code == 401
    assert CHANNEL not in stored(db)


def test_a_deep_body_is_refused_in_json_before_and_after_authentication(teams, standin, db):
    deep = b"[" * 100_000 + b"]" * 100_000
    token = standin.sign({}, service_url=standin.service_url)

    assert post(teams, deep, None).status_code == 401
    answer = post(teams, deep, token)

    assert (answer.status_code, answer.get_json()["error"]) == (400, "bad_request")
    assert stored(db) == {}


def test_a_get_is_refused_in_json(teams, standin):
    token = standin.sign({}, service_url=standin.service_url)

    anonymous = teams.get("/")
    signed = teams.get("/", headers={"Authorization": f"Bearer {token}"})

    assert (anonymous.status_code, anonymous.get_json()["error"]) == (401, "unauthorized")
    assert (signed.status_code, signed.headers["Allow"]) == (405, "POST")


def test_an_unknown_key_is_refused_after_the_key_set_is_fetched_again(
    teams, standin, db, monkeypatch
):
    monkeypatch.setattr("core.teams_auth.KEY_REFRESH_COOLDOWN_SECONDS", 0)
    assert install(teams, standin, personal_chat(standin)) == [200, 200]
    activity = channel_install(standin)

    answer = post(teams, activity, standin.sign(activity, kid="not-a-published-key"))

    assert answer.status_code == 401
    assert "unknown key" in answer.get_json()["message"]
    assert CHANNEL not in stored(db)


def test_keys_that_cannot_be_read_refuse_the_activity_and_are_read_again_next_time(
    teams, standin, db, monkeypatch
):
    # The metadata URL answers nothing at first (no server on its port), then the document.
    port = free_port()
    monkeypatch.setenv("TEAMS_OPENID_METADATA_URL", f"http://127.0.0.1:{port}/metadata")
    activity = channel_install(standin)

    refused = send(teams, standin, activity)

    assert refused.status_code == 401
    assert "signing keys unavailable" in refused.get_json()["message"]
    assert stored(db) == {}
    with serving(port, json.dumps(httpx.get(standin.openid_metadata_url).json()).encode()):
        assert send(teams, standin, activity).status_code == 200
    assert stored(db)[CHANNEL]["status"] == "installed"
