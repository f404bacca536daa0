"""Fixtures of tests/teams/: a worker's Runtime on the Teams stand-in once the app is
installed (the stand-in and the `teams` target's fixtures are tests/fixtures/teams_target.py,
registered for every test in tests/conftest.py)."""

from __future__ import annotations

from typing import Any

import pytest
from google.cloud import firestore

from core.clock import FixedClock
from core.settings import Settings
from emulator.teams_standin import TeamsStandIn
from tests.fixtures.runtime import make_runtime
from tests.fixtures.teams_inbound import CHANNEL, install, personal_chat


@pytest.fixture
def teams_rt(
    teams: Any,
    standin: TeamsStandIn,
    db: firestore.Client,
    clock: FixedClock,
    monkeypatch: pytest.MonkeyPatch,
) -> Any:
    """A worker's Runtime with the Teams transport pointed at the stand-in, after the app
    was installed (through the `teams` target) in the channel and Ana's personal chat."""
    for name, value in standin.env().items():
        monkeypatch.setenv(name, value)
    for conversation in (CHANNEL, personal_chat(standin)):
        assert set(install(teams, standin, conversation)) == {200}
    return make_runtime(Settings.from_env(), db, clock, "worker-a")
