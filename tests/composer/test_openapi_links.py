"""schemathesis' stateful phase against the live `api` target: scenarios of calls that follow
the document's `links` from one answer to the next request. It shows the links are right, not
just well-formed: an edit made with the `If-Match` a link took from the answer before is
taken (2xx), and so is a page fetched with the `cursor` a link took from the page before;
and no call of any scenario gets a 5xx or an answer the document does not describe."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, Phase, settings
from schemathesis.core.parameters import ParameterLocation

from composer.idempotency import KEYS
from composer.listing import MAX_LIMIT
from composer.openapi import document
from composer.routes import ROUTES
from composer.versions import IF_MATCH
from tests.fixtures.messages import seed_message
from tests.fixtures.openapi import AUTH, CHECKS
from tests.fixtures.rotations import seed_rotation

# 200 scenarios of up to 10 calls (about 2,000 requests, well under a minute here): enough
# that scenarios reach the edits and the next pages through the links several times over.
SCENARIOS = settings(
    max_examples=200,
    stateful_step_count=10,
    phases=[Phase.generate],
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=list(HealthCheck),
)


# Scenarios share the records, and hypothesis refuses a replayed scenario that answers
# differently: acting on one occurrence answers 409 for ever after: send-now
# once it has sent, skip-next once it has cancelled a one-off, so they are left out here
# (tests/composer/test_openapi_fuzz.py checks their answers).
_ONCE = ("/send-now", "/skip-next")
REPEATABLE = tuple(route for route in ROUTES if not route.path.endswith(_ONCE))


@dataclass(frozen=True)
class Step:
    """One call of a scenario: the link it followed (None for a scenario's first call), the
    parameters the link filled in, and the answer's status."""

    method: str
    path: str
    link: str | None
    linked: frozenset[tuple[ParameterLocation, str | None]]
    status: int


def _workflow(base_url: str, steps: list[Step], db: Any) -> Any:
    machine = schemathesis.openapi.from_dict(document(REPEATABLE)).as_state_machine()

    class Workflow(machine):  # type: ignore[misc, valid-type]
        def setup(self) -> None:
            # Scenarios share the records, but not the keys: a key an earlier scenario used
            # would replay its record as that scenario left it, so one generated request
            # would answer differently from one scenario to the next, which hypothesis
            # refuses as flaky generation.
            for snap in db.collection(KEYS).stream():
                snap.reference.delete()

        def get_call_kwargs(self, case: Any) -> dict[str, Any]:
            return {"base_url": base_url, "headers": AUTH}

        def validate_response(self, response: Any, case: Any, **kwargs: Any) -> None:
            case.validate_response(response, checks=CHECKS)

        def step(self, input: Any) -> Any:
            output = super().step(input)
            steps.append(
                Step(
                    method=input.case.method,
                    path=input.case.path,
                    link=None if input.transition is None else input.transition.id,
                    linked=frozenset(input.applied_parameters),
                    status=output.response.status_code,
                )
            )
            return output

    return Workflow


@pytest.fixture
def populated(db: Any) -> None:
    """More messages and rotations than the largest page holds, so every page of either
    listing answers a `next_cursor` for the links to follow."""
    for n in range(MAX_LIMIT + 1):
        seed_message(db, f"m{n:03}")
        seed_rotation(db, f"r{n:03}")


@pytest.mark.slow
def test_scenarios_follow_the_links(live_api: str, populated: None, db: Any) -> None:
    steps: list[Step] = []
    _workflow(live_api, steps, db).run(settings=SCENARIOS)
    edits = [step for step in steps if (ParameterLocation.HEADER, IF_MATCH) in step.linked]
    pages = [step for step in steps if (ParameterLocation.QUERY, "cursor") in step.linked]
    assert [step for step in edits if 200 <= step.status < 300], edits
    assert [step for step in pages if 200 <= step.status < 300], pages
    assert not [step for step in steps if step.status >= 500]
