"""Fixtures of the `interactions` target: functions-framework's app serving main.py's
target, on this test's Firestore project, clock and Slack stand-in, with a signing secret."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from google.cloud import firestore

from core.clock import FixedClock
from core.runtime import Runtime
from messages.kind import MESSAGE_KIND
from processor.kind_pass import run_kind
from tests.fixtures.interactions import SECRET
from tests.fixtures.messages import seed_message
from tests.fixtures.runtime import MAIN, make_runtime

ACTIONS = [
    {"id": "done", "label": "Done", "style": "primary"},
    {"id": "not-yet", "label": "Not yet"},
]


@pytest.fixture(scope="session")
def interactions_app() -> Iterator[Any]:
    import functions_framework

    with pytest.MonkeyPatch.context() as mp:
        mp.delenv("FUNCTION_TARGET", raising=False)
        yield functions_framework.create_app(target="interactions", source=MAIN)


@pytest.fixture
def clicks(
    interactions_app: Any,
    env: dict[str, str],
    db: firestore.Client,
    clock: FixedClock,
    monkeypatch: pytest.MonkeyPatch,
) -> Any:
    monkeypatch.setenv("SLACK_SIGNING_SECRET", SECRET)
    monkeypatch.setattr(
        "interactions.target.runtime_for", lambda s: make_runtime(s, db, clock, "click-worker")
    )
    return interactions_app.test_client()


@pytest.fixture
def posted(rt: Runtime, db: firestore.Client, slack: Any) -> Any:
    """Sends a message with buttons (seeded straight to Firestore) and answers its post."""

    def send(**fields: Any) -> Any:
        seed_message(db, actions=ACTIONS, **fields)
        run_kind(rt, MESSAGE_KIND)
        (post,) = [p for p in slack.posts() if p.blocks and p.blocks[-1]["type"] == "actions"]
        return post

    return send


@pytest.fixture
def posted_once(posted: Any) -> Any:
    """One post with buttons for a whole hypothesis test (its examples share it)."""
    return posted()
