"""Passes back to back until nothing is due (`python -m targets.worker --until-idle`, and the
benchmark's workers): a pass that found messages due but could claim none of them, because
another worker is posting to their channels, is followed by a pause, not by the same reads
again at once."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

from core.models import message_delivery_id
from messages.kind import MESSAGE_KIND
from processor.kind_pass import run_kind
from processor.one_pass import until_idle
from tests.fixtures.clock import T0
from tests.fixtures.messages import message, seed_message
from tests.fixtures.pacing import post_holding
from tests.fixtures.runtime import ROOT, make_runtime

CHANNEL = "C0IDLE001"


def test_passes_until_idle_keep_the_pace_behind_another_workers_post(settings, db, slack, clock):
    first = make_runtime(settings, db, clock, "worker-a")
    second = make_runtime(settings, db, clock, "worker-b")
    m1 = seed_message(db, channel=CHANNEL)
    m2 = seed_message(db, channel=CHANNEL)
    post_holding(first, m1, CHANNEL)  # an overlapping pass of worker-a posted m1
    passes: list[dict[str, Any]] = []

    for summary in until_idle(
        second, lambda rt: run_kind(rt, MESSAGE_KIND), lambda: len(passes) < 20
    ):
        passes.append(summary)

    # m2's claim meets worker-a's slot, and is claimed again at the slot's time.
    assert [p["claimed"] for p in passes] == [1, 0]  # m2, then nothing due: it ended
    assert passes[-1]["due"] == 0
    assert message(db, m2)["status"] == "sent"
    posts = slack.posts()
    assert [p.delivery_id for p in posts] == [
        message_delivery_id(m1, T0),
        message_delivery_id(m2, T0),
    ]
    assert Decimal(posts[1].ts) - Decimal(posts[0].ts) >= 1


def test_the_command_line_runs_one_pass_or_passes_until_idle(env, db, slack, firestore_host):
    # The command runs on the wall clock, so the messages are due by it.
    due_at = datetime.now(UTC).replace(microsecond=0) - timedelta(minutes=1)
    for n in range(3):
        seed_message(db, f"cli-{n}", channel=f"C0CLI{n:04d}", send_at=due_at, next_run_at=due_at)
    worker_env = {**os.environ, **env, "FIRESTORE_EMULATOR_HOST": firestore_host}

    def run(*args: str) -> list[dict[str, Any]]:
        done = subprocess.run(
            [sys.executable, "-m", "targets.worker", *args],
            cwd=ROOT,
            env=worker_env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr[-2000:]
        return [json.loads(line)["tick"] for line in done.stdout.splitlines() if '"tick"' in line]

    once = run("--once")
    idle = run("--until-idle")

    assert [t["sent"] for t in once] == [3]
    assert [(t["due"], t["sent"]) for t in idle] == [(0, 0)]
    assert len(slack.delivery_ids()) == 3
