"""Fixtures of the `teams` target: functions-framework's app serving main.py's target, on
this test's Firestore project and clock, with TEAMS_APP_ID set and Bot Framework's OpenID
metadata and keys served by the Teams stand-in, which builds and signs the activities."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from google.cloud import firestore

from core.clock import FixedClock
from core.settings import Settings
from core.teams_auth import forget_validators
from emulator.teams_standin import TeamsStandIn
from tests.fixtures.runtime import MAIN, make_runtime
from tests.fixtures.teams_inbound import (
    APP_ID,
    CHANNEL,
    add_conversations,
    install,
    personal_chat,
)


@pytest.fixture(scope="session")
def teams_app() -> Iterator[Any]:
    import functions_framework

    with pytest.MonkeyPatch.context() as mp:
        mp.delenv("FUNCTION_TARGET", raising=False)
        yield functions_framework.create_app(target="teams", source=MAIN)


@pytest.fixture
def standin(clock: FixedClock) -> Iterator[TeamsStandIn]:
    """The Teams stand-in on the test's clock (its activities' timestamps; its tokens are on
    the wall clock, which PyJWT checks them by), with a channel and a personal chat."""
    with TeamsStandIn(clock=clock, app_id=APP_ID) as running:
        add_conversations(running)
        yield running


@pytest.fixture
def teams(
    teams_app: Any,
    env: dict[str, str],
    standin: TeamsStandIn,
    db: firestore.Client,
    clock: FixedClock,
    monkeypatch: pytest.MonkeyPatch,
) -> Iterator[Any]:
    """A test client of the `teams` target, its key cache empty."""
    monkeypatch.setenv("TEAMS_APP_ID", APP_ID)
    monkeypatch.setenv("TEAMS_APP_PASSWORD", standin.env()["TEAMS_APP_PASSWORD"])
    monkeypatch.setenv("TEAMS_OPENID_METADATA_URL", standin.openid_metadata_url)
    monkeypatch.setattr(
        "targets.teams.runtime_for", lambda s: make_runtime(s, db, clock, "teams-worker")
    )
    forget_validators()
    yield teams_app.test_client()
    forget_validators()


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
