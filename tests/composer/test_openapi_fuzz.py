"""schemathesis against the live `api` target on the Firestore emulator, with the document
`GET /openapi.json` serves: every operation gets generated requests (bounded, derandomized),
and each answer must be no 5xx, have a documented status and content type, and match its
documented schema; a request the document allows must not be refused for a field whose rule
the document could say (`valid_requests_are_taken`). Generated ids never exist, so the
operations on one record run a second time aimed at records made through the API (a one-off,
a series, a rotation)."""

from __future__ import annotations

import re
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.specs.openapi.checks import (
    allow_header_conformance,
    unsupported_method,
)

from composer.openapi import document
from composer.routes import ROUTES
from tests.fixtures.api import call
from tests.fixtures.clock import T0
from tests.fixtures.openapi import AUTH
from tests.fixtures.openapi import CHECKS as CONFORMS

# Generated requests against every operation, twice: the longest run of this package.
pytestmark = pytest.mark.slow

CHECKS = [*CONFORMS, unsupported_method, allow_header_conformance]
# What a schema-valid request may still be refused for: rules on stored data, the clock or a
# database the document cannot carry (docs/api.md, "What the document cannot say").
BEYOND_THE_DOCUMENT = re.compile(
    r"^(timezone|send_at|expires_at|dtstart|exdates(\.\d+)?|rrule|working_days(\..+)?"
    r"|actions|category|cursor|opted_out|Idempotency-Key|skips\..*|teams_conversation|user"
    r"|occurrence_at)$"
)


@schemathesis.check
def valid_requests_are_taken(ctx: Any, response: Any, case: Any) -> bool | None:
    """schemathesis' positive_data_acceptance, less the refusals the document says it cannot
    rule out: a request generated as valid is not answered 400 or 422 naming another field."""
    if case.meta is None or not case.meta.generation.mode.is_positive:
        return None
    if response.status_code not in (400, 422):
        return None
    fields = [detail["field"] for detail in response.json()["details"]] or ["(none)"]
    refused = [field for field in fields if not BEYOND_THE_DOCUMENT.match(field)]
    assert not refused, f"a valid request was refused for {refused}: {response.text}"
    return True


# Enough to reach each operation's bodies, parameters and headers; small enough that the
# whole run takes well under a minute here.
EXAMPLES = 25

BOUNDED = settings(
    max_examples=EXAMPLES,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=list(HealthCheck),
)

schema = schemathesis.openapi.from_dict(document(ROUTES))


@schema.parametrize()
@BOUNDED
def test_api_answers_as_documented(case: Any, live_api: str) -> None:
    case.call_and_validate(
        base_url=live_api, headers=AUTH, checks=[*CHECKS, valid_requests_are_taken]
    )


@pytest.fixture
def records(api: Any) -> dict[str, str]:
    """Path prefix -> the id of a record made through the API."""
    made = {}
    for prefix, body in (
        ("/messages", {"channel": "C0123ABCD", "text": "Hi", "send_at": T0.isoformat()}),
        (
            "/messages",
            {
                "channel": "C0123ABCD",
                "text": "Hi",
                "rrule": "FREQ=DAILY",
                "dtstart": "2027-01-05T09:00",
            },
        ),
        (
            "/rotations",
            {
                "name": "Host",
                "channel": "C0123ABCD",
                "members": ["U0ALICE00", "U0BOB0000"],
                "timezone": "Europe/Berlin",
                "send_time": "09:30",
                "text": "{member} hosts",
            },
        ),
    ):
        status, answer = call(api, "POST", prefix, body)
        assert status == 201, answer
        made[prefix] = answer[
            "id"
        ]  # the series replaces the one-off: one-offs get sent, not edited
    made["/preferences"] = "U0ALICE00"  # a person: anyone with a Slack user id has preferences
    return made


@schema.include(path_regex=r"\{id\}").parametrize()
@BOUNDED
def test_records_answer_as_documented(case: Any, live_api: str, records: dict[str, str]) -> None:
    case.path_parameters = {"id": records["/" + case.path.split("/")[1]]}
    case.call_and_validate(base_url=live_api, headers=AUTH, checks=CHECKS)
