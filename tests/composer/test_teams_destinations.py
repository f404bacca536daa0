"""Microsoft Teams destinations through the `api` target: a message, a rotation or an event
names `teams_conversation` (a `teams_conversations` id where the bot is installed) instead of
`channel`/`user`; previews answer the Adaptive Card; what the API stores is what the pass
finds due. Nothing here sends (the Teams transport is tested in tests/teams/)."""

from __future__ import annotations

import json
from typing import Any

import flask
from google.cloud import firestore

from core.documents.messages import WAITING
from core.queues import Queue
from core.store import EVENTS, MESSAGES, ROTATIONS
from formatting.teams_card import to_teams
from tests.fixtures.api import call, fields_of
from tests.fixtures.clock import T0
from tests.fixtures.messages import ONE_OFF, message
from tests.fixtures.runtime import ADMIN_TOKEN, ROOT

GENERAL = "19:general@thread.tacv2"
GONE = "19:gone@thread.tacv2"
TO_TEAMS = {k: v for k, v in ONE_OFF.items() if k != "channel"} | {"teams_conversation": GENERAL}
ROTATION = {
    "name": "Stand-up host",
    "teams_conversation": GENERAL,
    "members": ["29:1alice", "29:1bob"],
    "timezone": "Europe/Berlin",
    "send_time": "09:30",
    "text": "{member} hosts today's stand-up",
}


def _install(
    db: firestore.Client, conversation: str, status: str = "installed", **fields: Any
) -> None:
    """`teams_conversations/{id}` as the `teams` target stores it on install (or removal)."""
    db.collection("teams_conversations").document(conversation).set(
        {
            "service_url": "https://smba.example/teams/",
            "tenant_id": "tenant-1",
            "conversation_type": "channel",
            "name": "General",
            "status": status,
            "installed_at": T0,
            **fields,
        }
    )


def _both_installed(db: firestore.Client) -> None:
    _install(db, GENERAL)
    _install(db, GONE, status="removed")


def _messages(db: firestore.Client) -> list[dict[str, Any]]:
    return [s.to_dict() or {} for s in db.collection(MESSAGES).stream()]


# --- messages ------------------------------------------------------------------------------


def test_a_message_to_an_installed_teams_conversation_is_stored_without_channel(api, db):
    _install(db, GENERAL)

    status, created = call(api, "POST", "/messages", TO_TEAMS)

    assert status == 201, created
    assert created["teams_conversation"] == GENERAL and "channel" not in created
    stored = message(db, created["id"])
    assert stored["teams_conversation"] == GENERAL
    assert "channel" not in stored and "user" not in stored
    assert call(api, "GET", f"/messages/{created['id']}") == (200, created)


def test_a_conversation_never_installed_or_removed_is_422_and_nothing_is_stored(api, db):
    _both_installed(db)

    never = call(api, "POST", "/messages", TO_TEAMS | {"teams_conversation": "19:x@thread.v2"})
    removed = call(api, "POST", "/messages", TO_TEAMS | {"teams_conversation": GONE})

    assert never[0] == 422 and fields_of(never[1]) == ["teams_conversation"]
    assert "not installed" in never[1]["details"][0]["message"]
    assert removed[0] == 422 and fields_of(removed[1]) == ["teams_conversation"]
    assert "removed" in removed[1]["details"][0]["message"]
    assert _messages(db) == []


def test_teams_beside_channel_or_user_or_a_bad_id_is_422_naming_the_fields(api, db):
    _install(db, GENERAL)

    with_channel = call(api, "POST", "/messages", TO_TEAMS | {"channel": "C0123ABCD"})
    with_user = call(api, "POST", "/messages", TO_TEAMS | {"user": "U0PERSON1"})
    bad_id = call(api, "POST", "/messages", TO_TEAMS | {"teams_conversation": "19:a/b"})
    neither = call(
        api, "POST", "/messages", {k: v for k, v in TO_TEAMS.items() if "teams" not in k}
    )

    assert with_channel[0] == 422
    assert fields_of(with_channel[1]) == ["channel", "teams_conversation"]
    assert with_user[0] == 422 and fields_of(with_user[1]) == ["user", "teams_conversation"]
    assert bad_id[0] == 422 and fields_of(bad_id[1]) == ["teams_conversation"]
    assert "not a Teams conversation id" in bad_id[1]["details"][0]["message"]
    assert neither[0] == 422 and fields_of(neither[1]) == ["channel"]
    assert "teams_conversation" in neither[1]["details"][0]["message"]
    assert _messages(db) == []


def test_a_category_on_a_teams_channel_is_422_not_silently_ungated(api, db):
    _install(db, GENERAL)
    db.collection("categories").document("nudges").set({"label": "Nudges"})

    status, answer = call(api, "POST", "/messages", TO_TEAMS | {"category": "nudges"})

    assert status == 422 and fields_of(answer) == ["category"]
    assert "on Teams a category needs user" in answer["details"][0]["message"]
    assert _messages(db) == []


def test_a_message_to_a_teams_person_names_them_for_their_gates(api, db):
    """A personal chat with `user`, the person's Teams id, takes a category (their gates);
    a `user` who is not the person of that chat, or a Slack id, is refused."""
    chat = "a:1ana-chat"
    _install(db, chat, conversation_type="personal", user_id="29:1ana")
    db.collection("categories").document("nudges").set({"label": "Nudges"})
    to_ana = TO_TEAMS | {"teams_conversation": chat, "category": "nudges"}

    created = call(api, "POST", "/messages", to_ana | {"user": "29:1ana"})
    someone_else = call(api, "POST", "/messages", to_ana | {"user": "29:1ben"})
    a_slack_id = call(api, "POST", "/messages", to_ana | {"user": "U0123ABCD"})
    teams_id_on_slack = call(api, "POST", "/messages", ONE_OFF | {"user": "29:1ana"})

    assert created[0] == 201, created
    stored = message(db, created[1]["id"])
    assert (stored["teams_conversation"], stored["user"], stored["category"]) == (
        chat,
        "29:1ana",
        "nudges",
    )
    assert someone_else[0] == 422 and fields_of(someone_else[1]) == ["user"]
    assert a_slack_id[0] == 422 and "user" in fields_of(a_slack_id[1])
    assert teams_id_on_slack[0] == 422 and "user" in fields_of(teams_id_on_slack[1])
    assert call(api, "GET", "/preferences/29:1ana")[0] == 200


def test_an_edit_moves_a_message_to_teams_and_is_checked_like_a_create(api, db):
    _both_installed(db)
    status, created = call(api, "POST", "/messages", ONE_OFF)
    assert status == 201
    path = f"/messages/{created['id']}"

    both = call(api, "PUT", path, {"teams_conversation": GENERAL})
    removed = call(api, "PUT", path, {"teams_conversation": GONE, "channel": None})
    moved = call(api, "PUT", path, {"teams_conversation": GENERAL, "channel": None})

    assert both[0] == 422 and fields_of(both[1]) == ["channel", "teams_conversation"]
    assert removed[0] == 422 and fields_of(removed[1]) == ["teams_conversation"]
    assert moved[0] == 200, moved[1]
    assert moved[1]["teams_conversation"] == GENERAL and "channel" not in moved[1]
    stored = message(db, created["id"])
    assert stored["teams_conversation"] == GENERAL and "channel" not in stored


def test_an_edit_of_a_message_whose_conversation_was_removed_is_422(api, db):
    _install(db, GENERAL)
    created = call(api, "POST", "/messages", TO_TEAMS)[1]
    _install(db, GENERAL, status="removed")  # the app was uninstalled since

    status, answer = call(api, "PUT", f"/messages/{created['id']}", {"text": "Moved on"})

    assert status == 422 and fields_of(answer) == ["teams_conversation"]
    assert message(db, created["id"])["text"] == TO_TEAMS["text"]


def test_listing_filters_by_teams_conversation(api, db):
    _install(db, GENERAL)
    teams = call(api, "POST", "/messages", TO_TEAMS)[1]
    call(api, "POST", "/messages", ONE_OFF)

    status, listed = call(api, "GET", f"/messages?teams_conversation={GENERAL}")
    pending = call(api, "GET", f"/messages?status=pending&teams_conversation={GENERAL}")
    bad = call(api, "GET", "/messages?teams_conversation=a/b")

    assert status == 200
    assert [m["id"] for m in listed["messages"]] == [teams["id"]]
    assert [m["id"] for m in pending[1]["messages"]] == [teams["id"]]
    assert bad[0] == 422 and fields_of(bad[1]) == ["teams_conversation"]
    indexes = json.loads((ROOT / "firestore.indexes.json").read_text())["indexes"]
    fields = [[f["fieldPath"] for f in i["fields"]] for i in indexes]
    assert ["teams_conversation", "next_run_at"] in fields
    assert ["status", "teams_conversation", "next_run_at"] in fields


# --- previews (the real Teams card renderer) ----------------------------------------------


def test_a_teams_preview_answers_the_card_it_would_post(api, db):
    _install(db, GENERAL)

    status, preview = call(api, "POST", "/preview", TO_TEAMS | {"text": "**Deploy** at noon"})

    assert status == 200, preview
    assert preview["blocks"] == []
    assert preview["card"] == to_teams("**Deploy** at noon").card  # what the send posts
    assert preview["card"]["type"] == "AdaptiveCard"
    assert preview["card"]["body"][0]["text"] == "**Deploy** at noon"  # Teams' markdown
    assert preview["text"]
    assert [o["utc"] for o in preview["occurrences"]] == ["2027-01-04T12:00:00+00:00"]
    slack = call(api, "POST", "/preview", ONE_OFF)[1]
    assert "card" not in slack and slack["blocks"]


def test_a_teams_preview_is_refused_as_a_create_would_be(api, db):
    _install(db, GONE, status="removed")

    status, answer = call(api, "POST", "/preview", TO_TEAMS | {"teams_conversation": GONE})

    assert status == 422 and fields_of(answer) == ["teams_conversation"]
    assert "was removed" in answer["details"][0]["message"]


# --- rotations -----------------------------------------------------------------------------


def test_a_rotation_on_teams_takes_teams_members_and_previews_its_card(api, db):
    _install(db, GENERAL)

    status, created = call(api, "POST", "/rotations", ROTATION)

    assert status == 201, created
    assert created["teams_conversation"] == GENERAL and "channel" not in created
    stored = db.collection(ROTATIONS).document(created["id"]).get().to_dict() or {}
    assert stored["teams_conversation"] == GENERAL and stored["members"] == ROTATION["members"]
    status, preview = call(api, "POST", f"/rotations/{created['id']}/preview")
    assert status == 200, preview
    assert preview["turns"][0]["member"] == "29:1alice"
    assert preview["blocks"] == [] and "29:1alice" in json.dumps(preview["card"])


def test_rotation_members_must_be_ids_of_its_platform(api, db):
    _install(db, GENERAL)
    slack_rotation = {k: v for k, v in ROTATION.items() if k != "teams_conversation"}

    slack_on_teams = call(api, "POST", "/rotations", ROTATION | {"members": ["U0ALICE00"]})
    teams_on_slack = call(api, "POST", "/rotations", slack_rotation | {"channel": "C0123ABCD"})

    assert slack_on_teams[0] == 422 and fields_of(slack_on_teams[1]) == ["members.0"]
    assert "Teams user id" in slack_on_teams[1]["details"][0]["message"]
    assert teams_on_slack[0] == 422 and fields_of(teams_on_slack[1]) == ["members.0", "members.1"]
    assert "Slack user id" in teams_on_slack[1]["details"][0]["message"]
    assert list(db.collection(ROTATIONS).stream()) == []


def test_a_rotation_names_channel_or_teams_conversation_exactly_one(api, db):
    _both_installed(db)
    slack_rotation = {k: v for k, v in ROTATION.items() if k != "teams_conversation"}

    both = call(api, "POST", "/rotations", ROTATION | {"channel": "C0123ABCD"})
    neither = call(api, "POST", "/rotations", slack_rotation)
    removed = call(api, "POST", "/rotations", ROTATION | {"teams_conversation": GONE})

    assert both[0] == 422 and fields_of(both[1])[:2] == ["channel", "teams_conversation"]
    assert neither[0] == 422 and fields_of(neither[1])[0] == "channel"
    assert removed[0] == 422 and fields_of(removed[1]) == ["teams_conversation"]
    assert list(db.collection(ROTATIONS).stream()) == []


def test_a_rotation_edit_moves_it_to_teams_with_teams_members(api, db):
    _both_installed(db)
    slack_rotation = {k: v for k, v in ROTATION.items() if k != "teams_conversation"}
    slack_rotation |= {"channel": "C0123ABCD", "members": ["U0ALICE00", "U0BOB0000"]}
    created = call(api, "POST", "/rotations", slack_rotation)[1]
    path = f"/rotations/{created['id']}"
    move = {"teams_conversation": GENERAL, "channel": None}

    slack_members = call(api, "PUT", path, move)
    removed = call(api, "PUT", path, move | {"teams_conversation": GONE, "members": ["29:1a"]})
    moved = call(api, "PUT", path, move | {"members": ["29:1alice", "29:1bob"]})

    assert slack_members[0] == 422 and fields_of(slack_members[1]) == ["members.0", "members.1"]
    assert removed[0] == 422 and fields_of(removed[1]) == ["teams_conversation"]
    assert moved[0] == 200, moved[1]
    assert moved[1]["teams_conversation"] == GENERAL and "channel" not in moved[1]


# --- events --------------------------------------------------------------------------------


def test_an_event_to_teams_is_refused_like_a_message_and_stored_with_its_conversation(api, db):
    _both_installed(db)
    event = {"key": "stage-1:done", "teams_conversation": GENERAL, "text": "Framing done"}

    removed = call(api, "POST", "/events", event | {"teams_conversation": GONE})
    both = call(api, "POST", "/events", event | {"channel": "C0123ABCD"})
    assert removed[0] == 422 and fields_of(removed[1]) == ["teams_conversation"]
    assert both[0] == 422 and fields_of(both[1]) == ["channel", "teams_conversation"]
    assert list(db.collection(EVENTS).stream()) == []

    status, receipt = call(api, "POST", "/events", event)

    assert status == 201, receipt
    [stored] = [s.to_dict() or {} for s in db.collection(EVENTS).stream()]
    assert stored["teams_conversation"] == GENERAL and "channel" not in stored


# --- what the pass finds -------------------------------------------------------------------


def test_a_teams_message_written_by_the_api_is_due_and_dry_run_shows_its_conversation(
    api, db, tick_app: flask.Flask, env
):
    _install(db, GENERAL)
    created = call(api, "POST", "/messages", TO_TEAMS)[1]
    due_at = message(db, created["id"])["next_run_at"]

    due = Queue(MESSAGES, tuple(WAITING), None).due(db, due_at, 10)
    response = tick_app.test_client().post(
        "/",
        headers={"Authorization": f"Bearer {ADMIN_TOKEN}"},
        data=json.dumps({"dry_run": True, "now": due_at.isoformat()}),
        content_type="application/json",
    )

    assert [s.id for s in due] == [created["id"]]
    assert response.status_code == 200, response.get_data(as_text=True)
    [preview] = response.get_json()["previews"]
    assert (preview["id"], preview["teams_conversation"]) == (created["id"], GENERAL)
    assert preview["channel"] is None and preview["text"]
    assert message(db, created["id"])["status"] == "pending"  # a dry run writes nothing


def test_an_event_on_teams_names_no_person(api, db):
    _install(db, "a:1ana-chat", conversation_type="personal", user_id="29:1ana")
    body = {"key": "k-1", "teams_conversation": "a:1ana-chat", "text": "Hi", "user": "29:1ana"}

    status, answer = call(api, "POST", "/events", body)

    assert status == 422 and fields_of(answer) == ["user"]
    assert list(db.collection(EVENTS).stream()) == []
