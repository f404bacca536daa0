"""`GET /openapi.json`: the document covers exactly the router's table, its schemas come
from the models, and real records (created, edited, sent, previewed through the API) answer
exactly as it says."""

from __future__ import annotations

from typing import Any

import pytest
import schemathesis

from composer.answers import Message
from composer.models import MessageDraft
from composer.routes import ROUTES
from core.http import ErrorBody
from core.store import MESSAGES, ROTATIONS
from messages.kind import MESSAGE_KIND
from processor.kind_pass import run_kind
from tests.fixtures.api import call
from tests.fixtures.clock import T0
from tests.fixtures.openapi import AUTH, CHECKS

ONE_OFF = {
    "channel": "C0123ABCD",
    "text": "*Release* at <https://x.test|noon>",
    "send_at": T0.isoformat(),
}
SERIES = {
    "channel": "C0123ABCD",
    "text": "Stand-up in 5 minutes",
    "timezone": "Europe/Berlin",
    "rrule": "FREQ=DAILY;BYHOUR=9;BYMINUTE=55",
    "dtstart": "2027-01-04T09:55",
    "working_days": {"country": "DE", "subdivision": "BY"},
    "on_non_working_day": "skip",
}
ROTATION = {
    "name": "Stand-up host",
    "channel": "C0123ABCD",
    "members": ["U0ALICE00", "U0BOB0000"],
    "timezone": "Europe/Berlin",
    "send_time": "09:30",
    "text": "{member} hosts today's stand-up",
    "skips": {"2027-01-05": ["U0BOB0000"]},
}


def served(api: Any) -> dict[str, Any]:
    status, document = call(api, "GET", "/openapi.json")
    assert status == 200, document
    assert isinstance(document, dict)
    return document


def test_the_document_describes_exactly_the_routes_the_router_serves(api: Any) -> None:
    document = served(api)
    assert document["openapi"].startswith("3.1")
    described = {(path, method) for path, item in document["paths"].items() for method in item}
    assert described == {(route.path, route.method.lower()) for route in ROUTES}
    for route in ROUTES:
        responses = document["paths"][route.path][route.method.lower()]["responses"]
        assert {str(route.status), "401", "422"} <= set(responses)


def test_the_document_needs_the_same_credentials_as_every_json_route(api: Any) -> None:
    status, answer = call(api, "GET", "/openapi.json", auth=False)
    assert status == 401
    assert answer["error"] == "unauthorized"


def test_schemas_are_the_models_own(api: Any) -> None:
    document = served(api)
    schemas = document["components"]["schemas"]
    own = MessageDraft.model_json_schema(
        mode="validation", ref_template="#/components/schemas/{model}"
    )
    own.pop("$defs", None)
    assert schemas["MessageDraft"] == own
    message = Message.model_json_schema(
        mode="serialization", ref_template="#/components/schemas/{model}"
    )
    message.pop("$defs", None)
    assert schemas["Message"] == message
    error = ErrorBody.model_json_schema(
        mode="serialization", ref_template="#/components/schemas/{model}"
    )
    error.pop("$defs", None)
    assert schemas["ErrorBody"] == error
    assert error["required"] == ["error", "message", "details"]
    refs = _refs(document)
    assert refs and all(ref.removeprefix("#/components/schemas/") in schemas for ref in refs)
    assert all(ref.startswith("#/components/schemas/") for ref in refs)


def _refs(node: Any) -> list[str]:
    if isinstance(node, dict):
        found = [node["$ref"]] if isinstance(node.get("$ref"), str) else []
        return found + [ref for value in node.values() for ref in _refs(value)]
    if isinstance(node, list):
        return [ref for value in node for ref in _refs(value)]
    return []


@pytest.fixture
def checked(api: Any, live_api: str) -> Any:
    """`checked(method, path, id=..., body=..., headers=..., query=...)`: one request to
    the live target through the served document's operation; fails unless the answer is
    documented (status, content type, schema). Returns the answer's JSON."""
    schema = schemathesis.openapi.from_dict(served(api))

    def request(
        method: str,
        path: str,
        *,
        ident: str | None = None,
        body: Any = None,
        headers: dict[str, str] | None = None,
        query: dict[str, Any] | None = None,
        status: int = 200,
    ) -> Any:
        operation = schema[path][method]
        case = operation.Case(
            path_parameters={"id": ident} if ident is not None else None,
            body=body if body is not None else schemathesis.core.NOT_SET,
            headers=headers,
            query=query,
        )
        response = case.call_and_validate(base_url=live_api, headers=AUTH, checks=CHECKS)
        assert response.status_code == status, response.text
        return response.json()

    return request


# Fields an answer works out at read time: its schedule in words, a rotation's `up`.
COMPUTED = {"schedule_text", "up"}


def whole(answer: dict[str, Any], db: Any, collection: str) -> None:
    """The answer carries every field of the stored document: none was left out for not
    fitting its answer model (and the `names` every record answer adds)."""
    stored = db.collection(collection).document(answer["id"]).get().to_dict()
    assert {"id", "names", *stored} <= set(answer) <= {"id", "names", *stored, *COMPUTED}


def test_real_messages_answer_as_documented(checked: Any, rt: Any, db: Any) -> None:
    one_off = checked("POST", "/messages", body=ONE_OFF, status=201)
    series = checked(
        "POST", "/messages", body=SERIES, headers={"Idempotency-Key": "standup-1"}, status=201
    )
    checked("GET", "/messages/{id}", ident=series["id"])
    checked(
        "PUT",
        "/messages/{id}",
        ident=series["id"],
        body={"text": "Moved"},
        headers={"If-Match": '"1"'},
    )
    checked(
        "PUT",
        "/messages/{id}",
        ident=series["id"],
        body={"text": "Stale"},
        headers={"If-Match": "1"},
        status=412,
    )
    checked("POST", "/messages/{id}/pause", ident=series["id"])
    checked("POST", "/messages/{id}/resume", ident=series["id"])
    run_kind(rt, MESSAGE_KIND)  # sends the one-off: a ledger entry, a sent record
    sent = checked("GET", "/messages/{id}", ident=one_off["id"])
    assert sent["status"] == "sent"
    whole(sent, db, MESSAGES)
    checked("PUT", "/messages/{id}", ident=one_off["id"], body={"text": "Late"}, status=409)
    history = checked("GET", "/messages/{id}/deliveries", ident=one_off["id"])
    assert [entry["status"] for entry in history["deliveries"]] == ["sent"]
    page = checked("GET", "/messages", query={"limit": 1})
    assert page["next_cursor"] is not None
    checked("GET", "/messages", query={"status": "sent,recurring", "cursor": page["next_cursor"]})
    checked("POST", "/preview", body=SERIES, query={"count": 3})
    cancelled = checked("DELETE", "/messages/{id}", ident=series["id"])
    assert cancelled["status"] == "cancelled"
    whole(cancelled, db, MESSAGES)
    checked("GET", "/messages/{id}", ident="missing", status=404)
    checked("GET", "/messages", query={"status": "nope"}, status=422)


def test_real_rotations_answer_as_documented(checked: Any, db: Any) -> None:
    rotation = checked("POST", "/rotations", body=ROTATION, status=201)
    whole(checked("GET", "/rotations/{id}", ident=rotation["id"]), db, ROTATIONS)
    checked("PUT", "/rotations/{id}", ident=rotation["id"], body={"members": ["U0BOB0000"]})
    preview = checked("POST", "/rotations/{id}/preview", ident=rotation["id"], query={"count": 2})
    assert [turn["member"] for turn in preview["turns"]] == ["U0BOB0000", None]  # out on Tuesday
    checked("GET", "/openapi.json")
