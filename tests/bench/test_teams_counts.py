"""The benchmark's Teams runs count what reached Teams as its Slack runs count Slack posts
(bench/teams.py): each delivery once, by the delivery id its card carries, per conversation,
and the sends Teams refused with a 429 apart from the posts."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest

from bench import metrics, seeding
from bench.teams import TeamsBench
from core.platform import TEAMS
from core.settings import Settings
from targets.kinds import run_pass
from tests.fixtures.clock import T0
from tests.fixtures.runtime import make_runtime


@pytest.fixture
def teams_bench(env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> Iterator[TeamsBench]:
    running = TeamsBench(latency_ms=20)
    try:
        running.reset()
        for name, value in running.env().items():
            monkeypatch.setenv(name, value)
        yield running
    finally:
        running.stop()


def test_each_teams_delivery_is_counted_once_and_429s_apart(
    teams_bench: TeamsBench, db: Any, clock: Any
) -> None:
    seeded = seeding.seed(db, "teams-", 6, 3, T0, platform=TEAMS)
    conversations = sorted({s.channel for s in seeded})
    teams_bench.install(db, conversations, T0)
    rt = make_runtime(Settings.from_env(), db, clock, "worker-a")
    # Teams takes one send an hour per conversation: each second one gets a 429.
    teams_bench.standin.control("POST", "rate_limits", {"windows": [[1, 3600]]})

    run_pass(rt)  # one post per conversation: the next waits a second (pacing)
    clock.advance(timedelta(seconds=2))
    run_pass(rt)

    posts = teams_bench.posts()
    counted = metrics.deliveries(seeded, posts, T0.timestamp())
    assert (counted["delivered"], counted["duplicates"], counted["lost"]) == (3, 0, 3)
    assert {p["channel"] for p in posts} == set(conversations)
    assert teams_bench.sends() - len(posts) == 3  # the 429s
