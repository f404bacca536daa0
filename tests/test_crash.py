"""Crash points: a worker process is SIGKILLed after its claim, after Slack recorded its post
but before finalize, and in the middle of finalize. The next passes, with the clock past the
lease, must end every occurrence delivered exactly once (Slack's history is readable here,
so none may end unconfirmed)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections import Counter
from datetime import timedelta

import pytest

from core.models import message_delivery_id
from processor.reconcile import backoff
from processor.tick import run_tick
from tests.conftest import ROOT, message, seed_message

POINTS = ("after_claim", "after_post", "mid_finalize")


def crash_trials(rt, db, slack, env, firestore_host, point, trials):
    worker_env = {**os.environ, **env, "FIRESTORE_EMULATOR_HOST": firestore_host}
    deliveries = []
    for n in range(trials):
        now = rt.clock.now()
        recurring = n % 2 == 1
        extra = (
            {
                "status": "recurring",
                "rrule": "FREQ=DAILY",
                "send_at": None,
                "dtstart": now.strftime("%Y-%m-%dT%H:%M:%S"),
            }
            if recurring
            else {}
        )
        mid = seed_message(db, **{"next_run_at": now, "send_at": now, **extra})
        worker = subprocess.run(
            [sys.executable, "-m", "tests.crash_worker", point, now.isoformat()],
            cwd=ROOT,
            env=worker_env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert worker.returncode == -signal.SIGKILL, worker.stderr[-2000:]
        # The next passes: past the dead worker's lease, then past a release's backoff.
        rt.clock.advance(timedelta(seconds=301))
        run_tick(rt)
        rt.clock.advance(backoff(1))
        run_tick(rt)
        deliveries.append((mid, message_delivery_id(mid, now), recurring))
    posted = Counter(slack.delivery_ids())
    for mid, delivery_id, recurring in deliveries:
        assert posted[delivery_id] == 1, (point, mid)
        assert message(db, mid)["status"] == ("recurring" if recurring else "sent")
    assert sum(posted.values()) == trials


@pytest.mark.parametrize("point", POINTS)
def test_a_killed_worker_loses_and_repeats_nothing(rt, db, slack, env, firestore_host, point):
    crash_trials(rt, db, slack, env, firestore_host, point, trials=2)


@pytest.mark.slow
@pytest.mark.parametrize("point", POINTS)
def test_twenty_kills_per_crash_point_lose_and_repeat_nothing(
    rt, db, slack, env, firestore_host, point
):
    crash_trials(rt, db, slack, env, firestore_host, point, trials=20)
