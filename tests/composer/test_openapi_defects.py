"""What describing the API in /openapi.json found wrong in it: each answer here is now the
documented one."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.fixtures.api import call
from tests.fixtures.messages import message, seed_message
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
