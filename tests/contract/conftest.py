"""The contract suite's fixtures: every test takes `subject`, and so runs once per kind of
send (tests/contract/subjects.py), with `world`, what subjects are seeded into."""

from __future__ import annotations

from typing import Any

import pytest

from tests.contract.subjects import SUBJECTS, Subject, World


@pytest.fixture(params=SUBJECTS, ids=[s.name for s in SUBJECTS])
def subject(request: pytest.FixtureRequest) -> Subject:
    chosen: Subject = request.param
    return chosen


@pytest.fixture
def world(db: Any, clock: Any, slack: Any, api: Any) -> World:
    return World(db, clock, slack, api)
