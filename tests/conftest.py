"""Fixtures: the real Firestore emulator (one per test session, one project id per test so
tests never see each other's data), the Slack stand-in, an injected clock, and a Runtime
wired to all three."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from google.cloud import firestore

from core.clock import FixedClock
from core.runtime import Runtime
from core.settings import Settings
from core.slack import SlackTransport
from core.store import MESSAGES
from emulator.firestore import FirestoreEmulator
from emulator.slack_standin import SlackStandIn
from tests.oidc import (  # noqa: F401  (fixtures, registered for every test module)
    certs_endpoint,
    certs_server,
    fresh_certs_cache,
    other_key,
    signing_key,
)
from tests.pubsub_emulator import (  # noqa: F401  (fixtures, started only by tests that ask)
    deliver,
    deliver_app,
    pubsub,
    pubsub_host,
)

ROOT = Path(__file__).resolve().parent.parent
ADMIN_TOKEN = "test-admin-token-0123456789"
T0 = datetime(2027, 1, 4, 9, 0, tzinfo=UTC)  # a Monday


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
    with SlackStandIn(clock=clock) as standin:
        yield standin


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
    for name in ("TICK_AUDIENCE", "TRIGGER_SERVICE_ACCOUNTS", "OIDC_CERTS_URL", "TICK_LIMIT"):
        monkeypatch.delenv(name, raising=False)
    for name, value in values.items():
        monkeypatch.setenv(name, value)
    return values


@pytest.fixture
def settings(env: dict[str, str]) -> Settings:
    return Settings.from_env()


def make_runtime(settings: Settings, db: firestore.Client, clock: Any, worker: str) -> Runtime:
    slack = SlackTransport(
        settings.slack_bot_token or "", settings.slack_api_url, settings.slack_timeout_seconds
    )
    return Runtime(settings=settings, db=db, slack=slack, clock=clock, worker_id=worker)


@pytest.fixture
def rt(settings: Settings, db: firestore.Client, clock: FixedClock) -> Runtime:
    return make_runtime(settings, db, clock, "worker-a")


def seed_message(db: firestore.Client, doc_id: str | None = None, **fields: Any) -> str:
    """A waiting one-off due at T0 unless fields say otherwise, as another service would
    write it directly."""
    data: dict[str, Any] = {
        "channel": "C0123ABCD",
        "text": "Stand-up in 5 minutes",
        "timezone": "UTC",
        "send_at": T0,
        "next_run_at": T0,
        "status": "pending",
        "version": 1,
    }
    data.update(fields)
    ref = db.collection(MESSAGES).document(doc_id) if doc_id else db.collection(MESSAGES).document()
    ref.set({k: v for k, v in data.items() if v is not None})
    return str(ref.id)


def message(db: firestore.Client, doc_id: str) -> dict[str, Any]:
    return db.collection(MESSAGES).document(doc_id).get().to_dict() or {}


def ledger(db: firestore.Client) -> dict[str, dict[str, Any]]:
    return {d.id: d.to_dict() or {} for d in db.collection("deliveries").stream()}


# --- the `api` target (composer) ----------------------------------------------------------


@pytest.fixture(scope="session")
def api_app() -> Iterator[Any]:
    """functions-framework's own app serving main.py's `api` target."""
    import functions_framework

    # create_app records its target in FUNCTION_TARGET; the context puts the variable back.
    with pytest.MonkeyPatch.context() as mp:
        mp.delenv("FUNCTION_TARGET", raising=False)
        yield functions_framework.create_app(target="api", source=str(ROOT / "main.py"))


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


def call(
    client: Any,
    method: str,
    path: str,
    body: Any = None,
    *,
    headers: dict[str, str] | None = None,
    auth: bool = True,
) -> tuple[int, Any]:
    """One request to the `api` target: (status, JSON body)."""
    import json

    sent = {"Authorization": f"Bearer {ADMIN_TOKEN}"} if auth else {}
    sent |= headers or {}
    data = body if isinstance(body, (str, bytes)) or body is None else json.dumps(body)
    response = client.open(
        path, method=method, headers=sent, data=data, content_type="application/json"
    )
    assert response.mimetype == "application/json", response.get_data(as_text=True)
    return response.status_code, json.loads(response.get_data(as_text=True))
