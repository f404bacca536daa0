"""What describing the API in /openapi.json found wrong in it: each answer here is now the
documented one."""

from __future__ import annotations

import json
from typing import Any

import jsonschema_rs  # schemathesis' own validator
import pytest

from tests.fixtures.api import call
from tests.fixtures.messages import message, seed_message
from tests.fixtures.rotations import seed_rotation
from tests.fixtures.runtime import ADMIN_TOKEN


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("DELETE", "/messages/m1?force=1", None),
        ("PUT", "/messages/m1?force=1", {"text": "Changed"}),
    ],
)
def test_routes_that_took_any_query_refuse_an_unknown_one_and_change_nothing(
    api: Any, db: Any, method: str, path: str, body: Any
) -> None:
    seed_message(db, "m1")
    status, answer = call(api, method, path, body)
    assert status == 422, answer
    assert [detail["field"] for detail in answer["details"]] == ["force"]
    assert message(db, "m1")["status"] == "pending"
    assert message(db, "m1")["text"] == "Stand-up in 5 minutes"


def test_listing_filters_by_every_status_of_the_contract(api: Any, db: Any) -> None:
    seed_message(db, "held", status="skipped")  # a one-off a person's gate held back
    seed_message(db, "waiting")
    status, answer = call(api, "GET", "/messages?status=skipped")
    assert status == 200, answer
    assert [row["id"] for row in answer["messages"]] == ["held"]


def test_a_stored_field_of_another_shape_is_left_out_of_the_answer_and_logged(
    api: Any, db: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    """Another service wrote `version` as text and `lease` as a string: the answer keeps
    every other field and stays what the document promises, and the log names both."""
    seed_message(db, "odd", version="7", lease="held")
    status, answer = call(api, "GET", "/messages/odd")
    assert status == 200, answer
    assert "version" not in answer and "lease" not in answer
    assert answer["text"] == "Stand-up in 5 minutes"
    status, page = call(api, "GET", "/messages")
    assert status == 200 and [row.get("version") for row in page["messages"]] == [None]
    logged = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line]
    left_out = [line for line in logged if line.get("document_id") == "odd"]
    assert left_out and left_out[0]["fields"] == ["lease", "version"]


@pytest.mark.parametrize(
    ("method", "path", "allow"),
    [("DELETE", "/preview", "POST"), ("PATCH", "/messages/m1", "GET, PUT, DELETE")],
)
def test_a_405_names_the_methods_the_path_takes_in_allow(
    api: Any, method: str, path: str, allow: str
) -> None:
    """RFC 9110: a 405 must carry `Allow`."""
    response = api.open(path, method=method, headers={"Authorization": f"Bearer {ADMIN_TOKEN}"})
    assert response.status_code == 405
    assert response.headers["Allow"] == allow
    assert response.get_json()["error"] == "method_not_allowed"


# --- what the document says a body may be --------------------------------------------------

LATER = "2030-01-07T09:00:00Z"
ONE_OFF = {"channel": "C0123ABCD", "text": "Hi", "send_at": LATER}
BUTTON = [{"id": "ok", "label": "OK"}]


def allowed(document: dict[str, Any], model: str, body: Any) -> bool:
    """Whether the served document's schema `model` takes `body`."""
    root = {"$ref": f"#/components/schemas/{model}", "components": document["components"]}
    return bool(jsonschema_rs.Draft202012Validator(root).is_valid(body))


@pytest.mark.parametrize(
    ("method", "path", "model", "body"),
    [
        ("POST", "/messages", "MessageDraft", ONE_OFF | {"channel": None}),
        ("POST", "/messages", "MessageDraft", ONE_OFF | {"user": "U0123ABCD"}),
        ("POST", "/messages", "MessageDraft", ONE_OFF | {"one_answer": True}),
        ("POST", "/messages", "MessageDraft", ONE_OFF | {"rrule": "FREQ=DAILY"}),
        ("POST", "/messages", "MessageDraft", ONE_OFF | {"text": " "}),
        ("POST", "/messages", "MessageDraft", ONE_OFF | {"on_non_working_day": "skip"}),
        ("POST", "/preview", "MessageDraft", ONE_OFF | {"channel": "#general"}),
        ("PUT", "/messages/m1", "MessageEdit", {"text": None}),
        ("PUT", "/messages/m1", "MessageEdit", {"category": ".."}),
        ("PUT", "/messages/m1", "MessageEdit", {"dtstart": "soon"}),
        ("PUT", "/rotations/standup", "RotationEdit", {"members": None}),
        ("PUT", "/rotations/standup", "RotationEdit", {"weekdays": []}),
        ("POST", "/events", "EventBody", {"key": "k", "text": "Hi"}),
    ],
)
def test_a_body_the_api_refuses_for_its_shape_is_one_the_document_refuses(
    api: Any, db: Any, method: str, path: str, model: str, body: Any
) -> None:
    """A client generated from /openapi.json cannot build these: each was schema-valid
    and answered 422."""
    seed_message(db, "m1")
    seed_rotation(db)
    _, document = call(api, "GET", "/openapi.json")
    assert not allowed(document, model, body)
    status, answer = call(api, method, path, body)
    assert status == 422, answer


def test_a_body_with_buttons_and_whole_numbers_as_floats_is_taken(api: Any) -> None:
    """JSON Schema's `integer` includes 3.0: the API takes it as 3 (it answered 422)."""
    body = ONE_OFF | {"one_answer": True, "actions": BUTTON}
    status, answer = call(api, "POST", "/messages", body)
    assert status == 201, answer
    series = {"rrule": "FREQ=DAILY", "dtstart": "2030-01-07T09:00", "misfire_grace_seconds": 60.0}
    status, answer = call(api, "POST", "/messages", ONE_OFF | {"send_at": None} | series)
    assert (status, answer.get("misfire_grace_seconds")) == (201, 60), answer


def test_an_empty_cursor_is_not_one_the_document_allows(api: Any) -> None:
    _, document = call(api, "GET", "/openapi.json")
    (cursor,) = [
        parameter["schema"]
        for parameter in document["paths"]["/messages"]["get"]["parameters"]
        if parameter["name"] == "cursor"
    ]
    root = {**cursor, "components": document["components"]}
    assert not jsonschema_rs.Draft202012Validator(root).is_valid("")
    status, _ = call(api, "GET", "/messages?cursor=")
    assert status == 422


def test_records_link_to_the_operations_on_them(api: Any) -> None:
    """The document's links carry a created record's id (and version, as the entity tag
    If-Match takes) to every operation on it, and a page's next_cursor, limit and filters to
    the next page (that schemathesis follows them to 2xx: test_openapi_links.py)."""
    _, document = call(api, "GET", "/openapi.json")
    created = document["paths"]["/messages"]["post"]["responses"]["201"]["links"]
    assert created["put_messages_by_id"]["parameters"] == {
        "id": "$response.body#/id",
        "header.If-Match": '"{$response.body#/version}"',
    }
    assert {link["operationId"] for link in created.values()} >= {
        "get_messages_by_id",
        "delete_messages_by_id",
        "get_messages_by_id_deliveries",
    }
    page = document["paths"]["/rotations"]["get"]["responses"]["200"]["links"]
    assert page["next_page"]["parameters"] == {
        "limit": "$request.query.limit",
        "cursor": "$response.body#/next_cursor",
    }
    listing = document["paths"]["/messages"]["get"]["responses"]["200"]["links"]
    assert listing["next_page"]["parameters"] == {
        "limit": "$request.query.limit",
        "status": "$request.query.status",
        "channel": "$request.query.channel",
        "user": "$request.query.user",
        "teams_conversation": "$request.query.teams_conversation",
        "created_by": "$request.query.created_by",
        "cursor": "$response.body#/next_cursor",
    }
