"""People's preferences and the categories they choose from, through the `api` target:
`GET /categories`, `GET`/`PUT /preferences/{user}`, and a message's `category`. Categories
are seeded straight into the emulator, as operators and other services write them."""

from __future__ import annotations

import json
from typing import Any

import pytest

from core.documents.categories import CategoryField
from core.documents.preferences import PreferenceField
from core.store import CATEGORIES, PREFERENCES
from tests.fixtures.api import call, fields_of
from tests.fixtures.messages import ONE_OFF, message

PERSON = "U0PERSON1"
TO_PERSON = {k: v for k, v in ONE_OFF.items() if k != "channel"} | {"user": PERSON}


def seed_category(db: Any, ident: str, **fields: Any) -> None:
    db.collection(CATEGORIES).document(ident).set(fields)


@pytest.fixture
def categories(db: Any) -> None:
    seed_category(
        db,
        "nudges",
        **{CategoryField.LABEL: "Nudges", CategoryField.QUIET_WINDOW_HOURS: 4},
    )
    seed_category(
        db,
        "security",
        **{CategoryField.LABEL: "Security notices", CategoryField.OPT_OUT_ALLOWED: False},
    )
    seed_category(db, "tips", **{CategoryField.LABEL: "Tips", CategoryField.DAILY_CAP: 2})


def test_a_person_without_preferences_sees_every_category_and_no_opt_out(api, categories):
    status, answer = call(api, "GET", f"/preferences/{PERSON}")

    assert status == 200, answer
    assert answer["user"] == PERSON and answer["opted_out"] == []
    choices = [(c["id"], c["label"], c["opt_out_allowed"]) for c in answer["categories"]]
    assert choices == [
        ("nudges", "Nudges", True),
        ("security", "Security notices", False),
        ("tips", "Tips", True),
    ]


def test_put_stores_the_opt_outs_and_get_answers_them(api, db, categories):
    status, answer = call(api, "PUT", f"/preferences/{PERSON}", {"opted_out": ["tips", "nudges"]})

    assert status == 200, answer
    assert answer["opted_out"] == ["tips", "nudges"] and len(answer["categories"]) == 3
    stored = db.collection(PREFERENCES).document(PERSON).get().to_dict()
    assert stored == {PreferenceField.OPTED_OUT: ["tips", "nudges"]}
    assert call(api, "GET", f"/preferences/{PERSON}") == (200, answer)
    # The whole list is replaced: the last write wins.
    assert call(api, "PUT", f"/preferences/{PERSON}", {"opted_out": []})[1]["opted_out"] == []
    assert db.collection(PREFERENCES).document(PERSON).get().to_dict() == {"opted_out": []}


def test_an_unknown_or_must_read_category_is_422_naming_the_item(api, db, categories):
    body = {"opted_out": ["tips", "nope", "security"]}
    status, answer = call(api, "PUT", f"/preferences/{PERSON}", body)

    assert status == 422
    assert fields_of(answer) == ["opted_out.1", "opted_out.2"]
    assert "'nope' is not a category" in answer["details"][0]["message"]
    assert "'security' is a must-read category" in answer["details"][1]["message"]
    assert not db.collection(PREFERENCES).document(PERSON).get().exists


@pytest.mark.parametrize("path", ["/preferences/C0123ABCD", "/preferences/someone"])
def test_a_path_that_is_not_a_slack_user_id_is_404_saying_so(api, db, path):
    for answer in (call(api, "GET", path), call(api, "PUT", path, {"opted_out": []})):
        assert answer[0] == 404 and "is not a Slack user id" in answer[1]["message"]
    assert list(db.collection(PREFERENCES).stream()) == []


def test_a_badly_written_category_is_listed_with_safe_defaults_and_logged(api, db, capsys):
    seed_category(db, "odd", **{CategoryField.QUIET_WINDOW_HOURS: "four"})
    seed_category(db, "strange", **{CategoryField.LABEL: 7, CategoryField.OPT_OUT_ALLOWED: "no"})
    capsys.readouterr()

    status, answer = call(api, "GET", "/categories")

    assert status == 200, answer
    assert answer["categories"] == [
        {
            "id": "odd",
            "label": "odd",
            "opt_out_allowed": True,
            "quiet_window_hours": None,
            "daily_cap": None,
        },
        {
            "id": "strange",
            "label": "strange",
            "opt_out_allowed": False,  # perhaps must-read: nobody opts out by accident
            "quiet_window_hours": 0,
            "daily_cap": None,
        },
    ]
    logged = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line]
    warned = {line["category"]: line["fields"] for line in logged if line.get("category")}
    assert warned == {"odd": ["quiet_window_hours"], "strange": ["label", "opt_out_allowed"]}
    assert all(line["severity"] == "WARNING" for line in logged if line.get("category"))
    assert call(api, "GET", f"/preferences/{PERSON}")[0] == 200


def test_a_message_names_an_existing_category(api, db, categories):
    status, created = call(api, "POST", "/messages", TO_PERSON | {"category": "nudges"})
    unknown = call(api, "POST", "/messages", TO_PERSON | {"category": "gone"})

    assert status == 201, created
    assert created["category"] == "nudges" and message(db, created["id"])["category"] == "nudges"
    assert unknown[0] == 422 and fields_of(unknown[1]) == ["category"]
    assert "'gone' is not a category" in unknown[1]["details"][0]["message"]
    path = f"/messages/{created['id']}"
    assert fields_of(call(api, "PUT", path, {"category": "gone"})[1]) == ["category"]
    moved = call(api, "PUT", path, {"category": "tips"})
    assert moved[0] == 200 and moved[1]["category"] == "tips"
    cleared = call(api, "PUT", path, {"category": None})
    assert cleared[0] == 200 and "category" not in message(db, created["id"])
