"""schemathesis against the live `api` target on the Firestore emulator, with the document
`GET /openapi.json` serves: every operation gets generated requests (bounded, derandomized),
and each answer must be no 5xx, have a documented status and content type, and match its
documented schema."""

from __future__ import annotations

from typing import Any

import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from composer.openapi import document
from composer.routes import ROUTES
from tests.fixtures.runtime import ADMIN_TOKEN

AUTH = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
]
# Enough to reach each operation's bodies, parameters and headers; small enough that the
# whole run takes well under a minute here.
EXAMPLES = 30

schema = schemathesis.openapi.from_dict(document(ROUTES))


@schema.parametrize()
@settings(
    max_examples=EXAMPLES,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=list(HealthCheck),
)
def test_api_answers_as_documented(case: Any, live_api: str) -> None:
    case.call_and_validate(base_url=live_api, headers=AUTH, checks=CHECKS)
