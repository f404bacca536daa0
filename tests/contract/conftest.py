"""The contract suite's fixtures: every test takes `subject`, and so runs once per kind of
send (tests/contract/subjects.py) and per platform it is sent on (`platform`: Slack, Teams),
with `world`, what subjects are seeded into and read from (tests/contract/chats.py)."""

from __future__ import annotations

from typing import Any

import pytest

from core.platform import TEAMS
from tests.contract.chats import SlackChat, TeamsChat
from tests.contract.subjects import World, on_every_platform


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """(platform, subject) for a test taking `subject`, unless it chooses its own."""
    own = {name for m in metafunc.definition.iter_markers("parametrize") for name in _names(m)}
    if "subject" in metafunc.fixturenames and "subject" not in own:
        pairs = on_every_platform()
        ids = [f"{platform}-{s.name}" for platform, s in pairs]
        metafunc.parametrize(("platform", "subject"), pairs, ids=ids)


def _names(marker: pytest.Mark) -> list[str]:
    names = marker.args[0]
    return [n.strip() for n in names.split(",")] if isinstance(names, str) else list(names)


@pytest.fixture
def env(
    env: dict[str, str], platform: str, request: pytest.FixtureRequest, monkeypatch: Any
) -> dict[str, str]:
    """The deployment's environment; on Teams, with the Teams stand-in's settings too (a
    worker process started by a test sees them as well)."""
    if platform != TEAMS:
        return env
    standin = request.getfixturevalue("standin")
    for name, value in standin.env().items():
        monkeypatch.setenv(name, value)
    return {**env, **standin.env()}


@pytest.fixture
def world(
    db: Any, clock: Any, slack: Any, api: Any, platform: str, request: pytest.FixtureRequest
) -> World:
    if platform == TEAMS:
        standin, target = request.getfixturevalue("standin"), request.getfixturevalue("teams")
        return World(db, clock, TeamsChat(standin, target, slack), api)
    return World(db, clock, SlackChat(slack), api)
