"""Messages to people through the `api` target: a message names `channel` or `user`, exactly
one; the 422 names the field. What the processor does with a `user` is in
tests/messages/test_direct_messages.py."""

from __future__ import annotations

import json
from typing import Any

from messages.kind import MESSAGE_KIND
from processor.kind_pass import run_kind
from tests.fixtures.api import call, fields_of
from tests.fixtures.messages import ONE_OFF, message
from tests.fixtures.runtime import ROOT

TO_PERSON = {k: v for k, v in ONE_OFF.items() if k != "channel"} | {"user": "U0PERSON1"}


def test_a_message_to_a_person_is_stored_with_user_and_no_channel(api, db):
    status, created = call(api, "POST", "/messages", TO_PERSON)

    assert status == 201, created
    assert created["user"] == "U0PERSON1" and "channel" not in created
    doc = message(db, created["id"])
    assert doc["user"] == "U0PERSON1" and "channel" not in doc
    assert call(api, "GET", f"/messages/{created['id']}") == (200, created)


def test_channel_and_user_together_or_neither_are_422_naming_the_field(api, db):
    both = call(api, "POST", "/messages", TO_PERSON | {"channel": "C0123ABCD"})
    neither = call(api, "POST", "/messages", {k: v for k, v in TO_PERSON.items() if k != "user"})
    not_a_user = call(api, "POST", "/messages", TO_PERSON | {"user": "C0123ABCD"})

    assert both[0] == 422 and fields_of(both[1]) == ["channel", "user"]
    assert neither[0] == 422 and fields_of(neither[1]) == ["channel"]
    assert not_a_user[0] == 422 and fields_of(not_a_user[1]) == ["user"]
    assert "not a Slack user id" in not_a_user[1]["details"][0]["message"]
    assert list(db.collection("scheduled_messages").stream()) == []
    preview = call(api, "POST", "/preview", TO_PERSON | {"channel": "C0123ABCD"})
    assert preview[0] == 422 and fields_of(preview[1]) == ["channel", "user"]
    assert call(api, "POST", "/preview", TO_PERSON)[0] == 200


def test_an_edit_moves_a_message_from_a_channel_to_a_person(api, db, slack, rt):
    status, created = call(api, "POST", "/messages", ONE_OFF)
    assert status == 201
    path = f"/messages/{created['id']}"

    both = call(api, "PUT", path, {"user": "U0PERSON1"})
    moved = call(api, "PUT", path, {"user": "U0PERSON1", "channel": None})

    assert both[0] == 422 and fields_of(both[1]) == ["channel", "user"]
    assert moved[0] == 200, moved[1]
    assert moved[1]["user"] == "U0PERSON1" and "channel" not in moved[1]
    assert "channel" not in message(db, created["id"])
    rt.clock.set(message(db, created["id"])["next_run_at"])
    run_kind(rt, MESSAGE_KIND)
    assert [p.channel for p in slack.posts()] == [slack.dm_channel("U0PERSON1")]


def test_the_channel_filter_lists_channel_messages_only(api):
    in_channel: Any = call(api, "POST", "/messages", ONE_OFF)[1]
    call(api, "POST", "/messages", TO_PERSON)

    status, listed = call(api, "GET", "/messages?channel=C0123ABCD")
    _, everything = call(api, "GET", "/messages")

    assert status == 200
    assert [m["id"] for m in listed["messages"]] == [in_channel["id"]]
    assert len(everything["messages"]) == 2


def test_the_user_filter_lists_one_persons_messages_through_its_index(api):
    call(api, "POST", "/messages", ONE_OFF)
    theirs: Any = call(api, "POST", "/messages", TO_PERSON)[1]
    call(api, "POST", "/messages", TO_PERSON | {"user": "U0SOMEONE"})

    status, listed = call(api, "GET", "/messages?user=U0PERSON1")
    pending = call(api, "GET", "/messages?user=U0PERSON1&status=pending")[1]
    bad = call(api, "GET", "/messages?user=C0123ABCD")

    assert status == 200
    assert [m["id"] for m in listed["messages"]] == [theirs["id"]]
    assert [m["id"] for m in pending["messages"]] == [theirs["id"]]
    assert bad[0] == 422 and fields_of(bad[1]) == ["user"]
    indexes = json.loads((ROOT / "firestore.indexes.json").read_text())["indexes"]
    fields = [[f["fieldPath"] for f in i["fields"]] for i in indexes]
    assert ["user", "next_run_at"] in fields and ["status", "user", "next_run_at"] in fields
