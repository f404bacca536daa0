"""`POST /events` answers as `/openapi.json` documents it: 201 for the first caller, 200 for
a duplicate, each validated against the served document by schemathesis."""

from __future__ import annotations

from typing import Any

from tests.composer.test_openapi import checked  # noqa: F401  (the fixture)

BODY = {"key": "stage-717:completed", "channel": "C0123ABCD", "text": "Framing is done"}


def test_events_answer_as_documented(checked: Any) -> None:  # noqa: F811
    first = checked("POST", "/events", body=BODY, status=201)
    again = checked("POST", "/events", body=BODY, status=200)

    assert (first["duplicate"], again["duplicate"]) == (False, True)
    assert first["delivery_id"] == again["delivery_id"]
