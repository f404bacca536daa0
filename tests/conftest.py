"""Fixtures: the real Firestore emulator (one per test session, one project id per test so
tests never see each other's data), the Slack stand-in, an injected clock, and a Runtime
wired to all three."""

from __future__ import annotations

import os
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _pytest.mark.expression import Expression
from google.cloud import firestore
from werkzeug.serving import make_server

from core.clock import FixedClock
from core.runtime import Runtime
from core.settings import Settings
from emulator.firestore import FirestoreEmulator
from emulator.slack_standin import SlackStandIn
from tests.fixtures.clock import T0
from tests.fixtures.oidc import (  # noqa: F401  (fixtures, registered for every test module)
    certs_endpoint,
    certs_server,
    fresh_certs_cache,
    other_key,
    signing_key,
)
from tests.fixtures.pubsub import (  # noqa: F401  (fixtures, started only by tests that ask)
    deliver,
    deliver_app,
    pubsub,
    pubsub_host,
)
from tests.fixtures.runtime import ADMIN_TOKEN, MAIN, ROOT, make_runtime
from tests.fixtures.teams_target import (  # noqa: F401  (fixtures of tests/teams/, tests/contract/)
    standin,
    teams,
    teams_app,
)

# `pytester`: tests/emulator/test_tiers.py runs pytest on probe tests to check the tiers.
pytest_plugins = ("pytester",)


# The tiers (docs/testing.md, "Tiers"). A test is marked `emulator` when it uses one of these
# fixtures, directly or through other fixtures: the Firestore emulator, the Pub/Sub emulator,
# headless Chromium. Tests that start such a process themselves carry the mark by hand.
# A browser test is `slow` too: about a second each, most of a minute for tests/web/.
EMULATOR_FIXTURES = frozenset({"firestore_host", "pubsub_host", "browser"})
SLOW_FIXTURES = frozenset({"browser"})


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Marks every test that needs an emulator `emulator` (and a browser test `slow`), so no
    test can forget the mark and `-m "not emulator"` never starts one."""
    for item in items:
        fixtures = set(getattr(item, "fixturenames", ()))
        if fixtures & EMULATOR_FIXTURES:
            item.add_marker(pytest.mark.emulator)
        if fixtures & SLOW_FIXTURES:
            item.add_marker(pytest.mark.slow)


# Collecting this file builds every schemathesis case up front: most of the time a collection
# takes here. Each of its tests is `emulator` and `slow`, so a run whose -m leaves such tests
# out (both tiers) does not collect the file at all.
FUZZ = Path(__file__).parent / "composer" / "test_openapi_fuzz.py"
FUZZ_MARKS = frozenset({"emulator", "slow"})


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    markexpr = config.getoption("markexpr")
    if collection_path != FUZZ or not markexpr:
        return None
    selected = Expression.compile(markexpr).evaluate(lambda name, /, **kwargs: name in FUZZ_MARKS)
    return None if selected else True


@pytest.fixture(scope="session")
def firestore_host() -> Iterator[str]:
    # Always our own emulator, with our security rules loaded, whatever the shell points at.
    emulator = FirestoreEmulator(rules=ROOT / "firestore.rules")
    emulator.start()
    os.environ["FIRESTORE_EMULATOR_HOST"] = emulator.host_port
    try:
        yield emulator.host_port
    finally:
        emulator.stop()
        os.environ.pop("FIRESTORE_EMULATOR_HOST", None)


@pytest.fixture
def project(firestore_host: str) -> str:
    return f"test-{uuid.uuid4().hex[:12]}"


@pytest.fixture
def db(project: str) -> firestore.Client:
    return firestore.Client(project=project)


@pytest.fixture
def clock() -> FixedClock:
    return FixedClock(T0)


@pytest.fixture
def slack(clock: FixedClock) -> Iterator[SlackStandIn]:
    # On the test's clock, so message ts line up with the instants the processor sees.
    with SlackStandIn(clock=clock) as running:
        yield running


@pytest.fixture
def env(project: str, slack: SlackStandIn, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """The environment a deployed function would see, pointed at the local stand-ins."""
    values = {
        "GOOGLE_CLOUD_PROJECT": project,
        "SLACK_API_URL": slack.url,
        "SLACK_BOT_TOKEN": "xoxb-test",
        "APP_ENV": "development",
        "ADMIN_TOKEN": ADMIN_TOKEN,
        "SLACK_TIMEOUT_SECONDS": "1",
        "LEASE_SECONDS": "300",
    }
    unset = ("TICK_AUDIENCE", "TRIGGER_SERVICE_ACCOUNTS", "OIDC_CERTS_URL", "TICK_LIMIT")
    for name in (*unset, "COMPOSER_CLIENT_ID", "COMPOSER_USERS"):
        monkeypatch.delenv(name, raising=False)
    for name, value in values.items():
        monkeypatch.setenv(name, value)
    return values


@pytest.fixture
def settings(env: dict[str, str]) -> Settings:
    return Settings.from_env()


@pytest.fixture
def rt(settings: Settings, db: firestore.Client, clock: FixedClock) -> Runtime:
    return make_runtime(settings, db, clock, "worker-a")


# --- the `api` target (composer) ----------------------------------------------------------


@pytest.fixture(scope="session")
def api_app() -> Iterator[Any]:
    """functions-framework's own app serving main.py's `api` target."""
    import functions_framework

    # create_app records its target in FUNCTION_TARGET; the context puts the variable back.
    with pytest.MonkeyPatch.context() as mp:
        mp.delenv("FUNCTION_TARGET", raising=False)
        yield functions_framework.create_app(target="api", source=MAIN)


@pytest.fixture
def api(
    api_app: Any,
    env: dict[str, str],
    db: firestore.Client,
    clock: FixedClock,
    monkeypatch: pytest.MonkeyPatch,
) -> Any:
    """A test client of the `api` target whose runtime uses this test's Firestore project
    and clock (the deployed target builds the same runtime with the system clock)."""
    monkeypatch.setattr(
        "composer.routes.runtime_for", lambda s: make_runtime(s, db, clock, "api-worker")
    )
    return api_app.test_client()


# --- the `tick` target ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def tick_app() -> Iterator[Any]:
    """functions-framework's app serving main.py's `tick` target."""
    import functions_framework

    with pytest.MonkeyPatch.context() as mp:
        mp.delenv("FUNCTION_TARGET", raising=False)
        yield functions_framework.create_app(target="tick", source=MAIN)


# --- the operator CLI ----------------------------------------------------------------------


@pytest.fixture
def cli_on_the_test_clock(rt: Runtime, monkeypatch: pytest.MonkeyPatch) -> None:
    """The CLI builds its runtime from the environment: here, this test's (and its clock).
    The operator tests opt in with `pytestmark = pytest.mark.usefixtures(...)`."""
    monkeypatch.setattr("targets.operator.runtime_for", lambda settings: rt)


@pytest.fixture
def live_api(api_app: Any, api: Any) -> Iterator[str]:
    """The `api` target served over real HTTP (for a browser or schemathesis): the base URL.
    It shares the `api` fixture's runtime, so its Firestore project and clock are the test's."""
    server = make_server("127.0.0.1", 0, api_app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.port}"
    finally:
        server.shutdown()
        thread.join()
