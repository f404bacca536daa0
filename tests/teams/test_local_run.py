"""`make run`'s Teams side, as it wires it (emulator/run_teams.py): the Teams stand-in in a
process of its own, the app installed into the demo channel through the `teams` target over
HTTP (signed by the stand-in), the seeded Teams examples posted by a pass, and the printed
click replayed through the stand-in's control API, answered and shown on the card."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest
from werkzeug.serving import make_server

from core.settings import Settings
from core.store import RESPONSES, TEAMS_CONVERSATIONS
from core.teams_auth import forget_validators
from emulator.run_teams import (
    DEMO_TEAMS_CHANNEL,
    TeamsStandInProcess,
    install_demo,
    replay_click,
    seed_teams,
    teams_replay_hint,
)
from targets.kinds import run_pass
from tests.fixtures.clock import T0
from tests.fixtures.runtime import make_runtime


@pytest.fixture(scope="module")
def standin() -> Iterator[TeamsStandInProcess]:
    running = TeamsStandInProcess()
    try:
        yield running
    finally:
        running.stop()


@pytest.fixture
def live_teams(
    teams_app: Any,
    standin: TeamsStandInProcess,
    env: dict[str, str],
    db: Any,
    clock: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> Iterator[str]:
    """The `teams` target on a local port with the stand-in's TEAMS_* settings, as `make
    run` serves it."""
    standin.control("POST", "reset")
    for name, value in standin.env().items():
        monkeypatch.setenv(name, value)
    monkeypatch.setattr(
        "targets.teams.runtime_for", lambda s: make_runtime(s, db, clock, "teams-worker")
    )
    forget_validators()
    server = make_server("127.0.0.1", 0, teams_app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.port}/"
    finally:
        server.shutdown()
        thread.join()
        forget_validators()


def test_make_runs_teams_examples_post_once_and_a_replayed_click_is_shown(
    live_teams: str, standin: TeamsStandInProcess, db: Any, clock: Any
) -> None:
    assert install_demo(standin, live_teams) == [200, 200]
    stored = db.collection(TEAMS_CONVERSATIONS).document(DEMO_TEAMS_CHANNEL).get().to_dict()
    assert stored["status"] == "installed"
    seed_teams(db, DEMO_TEAMS_CHANNEL, T0)
    rt = make_runtime(Settings.from_env(), db, clock, "worker-a")

    run_pass(rt)
    run_pass(rt)  # nothing more to post

    posted = {_delivery_id(a): a for a in standin.control("GET", "activities")}
    assert sorted(d.split(":")[1] for d in posted) == [
        "example-teams-buttons",
        "example-teams-rotation",
        "example-teams-welcome",
    ]
    [turn] = [a for d, a in posted.items() if d.startswith("r:")]
    [mention] = turn["activity"]["attachments"][0]["content"]["msteams"]["entities"]
    assert mention["mentioned"]["id"] == "29:1demo-ana"

    clicked = standin.control("POST", "invoke", replay_click(T0, live_teams))

    assert (clicked["status"], clicked["body"]["value"]) == (200, "Your answer is in: Done")
    [answer] = [s.to_dict() for s in db.collection(RESPONSES).stream()]
    assert (answer["user"], answer["action_id"]) == ("29:1demo-ana", "done")
    run_pass(rt)  # the next tick shows the answer on the card
    [update] = standin.control("GET", "updates")
    assert "answered **Done**" in str(update["activity"]["attachments"][0]["content"])


def test_the_run_says_how_to_replay_a_teams_click() -> None:
    hint = teams_replay_hint("http://127.0.0.1:8775/_control/", "http://127.0.0.1:8085/", T0)
    assert "curl -X POST http://127.0.0.1:8775/_control/invoke -d '" in hint
    assert '"target_url": "http://127.0.0.1:8085/"' in hint


def _delivery_id(recorded: dict[str, Any]) -> str:
    """The id of the Container wrapping the card's body: the delivery it carries."""
    return str(recorded["activity"]["attachments"][0]["content"]["body"][0]["id"])
