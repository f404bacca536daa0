"""The catch-up after downtime raced by two workers through every interleaving of the
`# pragma: SYNCPOINT` comments (test_utils.orchestrate): the most recent occurrence is posted
at most once and every missed one is recorded exactly once, whoever wins."""

from __future__ import annotations

import itertools
from datetime import timedelta
from math import comb

import pytest

from core.models import message_delivery_id
from core.store import MESSAGES
from messages.kind import MESSAGE_KIND
from tests.fixtures.clock import T0
from tests.fixtures.deliver import deliver_one
from tests.fixtures.deliveries import ledger
from tests.fixtures.messages import message, seed_message
from tests.fixtures.runtime import make_runtime
from tests.support.interleave import orchestrate


@pytest.mark.parametrize(
    ("late_by", "posts"),
    [(timedelta(minutes=5), 1), (timedelta(hours=2), 0)],  # within grace / past it
)
def test_two_workers_catching_up_one_series_settle_it_once(
    settings, db, slack, clock, late_by, posts
):
    clock.set(T0 + late_by)
    arrivals = itertools.count()
    series: list[str] = []

    def worker(name):
        rt = make_runtime(settings, db, clock, name)

        def run():
            if next(arrivals) % 2 == 0:  # the first to arrive seeds this round's series
                series.append(
                    seed_message(
                        db,
                        status="recurring",
                        send_at=None,
                        rrule="FREQ=DAILY",
                        dtstart="2027-01-01T09:00",
                        next_run_at=T0 - timedelta(days=2),
                    )
                )
            snap = db.collection(MESSAGES).document(series[-1]).get()
            deliver_one(rt, MESSAGE_KIND, snap)  # pragma: SYNCPOINT claim

        return run

    counts = orchestrate(worker("worker-a"), worker("worker-b"), name="claim")

    # Run alone, the first worker pauses after its read and at its catch-up commit; the
    # second then reads a settled series and stops before any commit.
    assert min(counts) >= 2  # both reached a syncpoint (a pause) when run alone
    # orchestrate ran every distinct interleaving of those turns, one round each.
    assert len(series) == comb(sum(counts), counts[0])
    entries = ledger(db)
    for mid in series:
        assert slack.delivery_ids().count(message_delivery_id(mid, T0)) == posts
        missed = {k: v for k, v in entries.items() if k.startswith(f"m:{mid}:")}
        missed = {k: v for k, v in missed.items() if v["status"] == "skipped"}
        assert sorted(missed) == [
            message_delivery_id(mid, T0 - timedelta(days=d)) for d in range(2, -1 + posts, -1)
        ]
        assert len({v["worker"] for v in missed.values()}) == 1  # one claim recorded them all
        doc = message(db, mid)
        assert doc["missed_count"] == len(missed)
        assert (doc["status"], doc["next_run_at"]) == ("recurring", T0 + timedelta(days=1))
