"""Crash points: a worker process is SIGKILLed after its claim, after Slack recorded its post
but before finalize, and in the middle of finalize, delivering a one-off, a recurring
occurrence or a rotation day in turn. The next passes, with the clock past the lease, must
end every occurrence delivered exactly once (Slack's history is readable here, so none may
end unconfirmed)."""

from __future__ import annotations

from collections import Counter
from datetime import timedelta

import pytest

from core.models import message_delivery_id, rotation_delivery_id
from processor.reconcile import backoff
from targets.kinds import run_pass
from tests.fixtures.crash import kill_worker_at
from tests.fixtures.deliveries import ledger
from tests.fixtures.messages import message, seed_message
from tests.fixtures.rotations import rotation, seed_rotation

POINTS = ("after_claim", "after_post", "mid_finalize")


def crash_trials(rt, db, slack, env, firestore_host, point, trials):
    deliveries = []
    for n in range(trials):
        now = rt.clock.now()
        kind = ("one-off", "recurring", "rotation")[n % 3]
        # A channel of its own: the recovery passes just posted to the last one, and a worker
        # leaves a channel another worker has just posted to alone (processor.channel_slots).
        channel = f"C{n:04d}CRASH"
        if kind == "rotation":
            doc_id = seed_rotation(
                db,
                f"rotation-{n}",
                channel=channel,
                timezone="UTC",
                send_time=now.strftime("%H:%M"),
                weekdays=list(range(7)),
                next_run_at=now,
            )
            delivery_id = rotation_delivery_id(doc_id, now.date())
        else:
            extra = (
                {
                    "status": "recurring",
                    "rrule": "FREQ=DAILY",
                    "send_at": None,
                    "dtstart": now.strftime("%Y-%m-%dT%H:%M:%S"),
                }
                if kind == "recurring"
                else {}
            )
            doc_id = seed_message(
                db, **{"channel": channel, "next_run_at": now, "send_at": now, **extra}
            )
            delivery_id = message_delivery_id(doc_id, now)
        kill_worker_at(point, now, env, firestore_host)
        # The next passes: past the dead worker's lease, then past a release's backoff.
        rt.clock.advance(timedelta(seconds=301))
        run_pass(rt)
        rt.clock.advance(backoff(1))
        run_pass(rt)
        deliveries.append((kind, doc_id, delivery_id))
    posted = Counter(slack.delivery_ids())
    for kind, doc_id, delivery_id in deliveries:
        assert posted[delivery_id] == 1, (point, doc_id)
        assert ledger(db)[delivery_id]["status"] == "sent", (point, doc_id)
        if kind == "rotation":
            assert "lease" not in rotation(db, doc_id) and rotation(db, doc_id)["cursor"] == 1
        else:
            status = message(db, doc_id)["status"]
            assert status == ("recurring" if kind == "recurring" else "sent")
    assert sum(posted.values()) == trials


@pytest.mark.parametrize("point", POINTS)
def test_a_killed_worker_loses_and_repeats_nothing(rt, db, slack, env, firestore_host, point):
    crash_trials(rt, db, slack, env, firestore_host, point, trials=3)


@pytest.mark.slow
@pytest.mark.parametrize("point", POINTS)
def test_twenty_one_kills_per_crash_point_lose_and_repeat_nothing(
    rt, db, slack, env, firestore_host, point
):
    crash_trials(rt, db, slack, env, firestore_host, point, trials=21)
