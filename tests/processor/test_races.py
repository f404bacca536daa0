"""Races, tested deterministically: test_utils.orchestrate runs two workers through every
interleaving of the `# pragma: SYNCPOINT` comments in the code under test."""

from __future__ import annotations

import itertools
import json
from datetime import timedelta
from math import comb
from typing import Any

from core.models import message_delivery_id
from core.slack import Outcome, PostResult
from core.store import MESSAGES
from messages.kind import MESSAGE_KIND
from processor.abc import Claim
from processor.claim import claim_occurrence
from processor.finalize import finalize
from processor.outcome import Result
from processor.reconcile import reconcile_kind
from tests.fixtures.clock import T0
from tests.fixtures.deliver import deliver_one
from tests.fixtures.deliveries import ledger
from tests.fixtures.messages import message, seed_message
from tests.fixtures.runtime import make_runtime
from tests.support.interleave import orchestrate


class Rounds:
    """orchestrate calls each worker once per interleaving, one turn at a time; the first
    worker to start a round seeds a fresh message and the second one races for it."""

    def __init__(self, db):
        self.db = db
        self.arrivals = itertools.count()
        self.messages: list[str] = []

    def message_for_this_round(self) -> str:
        if next(self.arrivals) % 2 == 0:
            self.messages.append(seed_message(self.db))
        return self.messages[-1]


def test_two_workers_claiming_one_message_send_it_once_in_every_interleaving(
    settings, db, slack, clock
):
    rounds = Rounds(db)

    def worker(name):
        rt = make_runtime(settings, db, clock, name)

        def run():
            # Both workers read the message as due, in any order relative to the claims.
            snap = db.collection(MESSAGES).document(rounds.message_for_this_round()).get()
            deliver_one(rt, MESSAGE_KIND, snap)  # pragma: SYNCPOINT claim

        return run

    counts = orchestrate(worker("worker-a"), worker("worker-b"), name="claim")

    # Each worker pauses after its read; run alone, the second then finds the message sent.
    assert min(counts) >= 2  # both reached a syncpoint (a pause) when run alone
    # orchestrate ran every distinct interleaving of those turns, one round each.
    assert len(rounds.messages) == comb(sum(counts), counts[0])
    for mid in rounds.messages:
        assert slack.delivery_ids().count(message_delivery_id(mid, T0)) == 1
        assert message(db, mid)["status"] == "sent"
    assert len(slack.posts()) == len(rounds.messages)


def test_a_worker_whose_lease_was_taken_over_cannot_overwrite_newer_state(
    settings, db, slack, clock, capsys
):
    mid = seed_message(db)
    late = make_runtime(settings, db, clock, "worker-late")
    claim = claim_occurrence(late, MESSAGE_KIND, db.collection(MESSAGES).document(mid).get())
    assert isinstance(claim, Claim)
    # The lease expired and a reconciler handed the occurrence to another worker.
    clock.advance(timedelta(seconds=settings.lease_seconds + 1))
    db.collection(MESSAGES).document(mid).update(
        {"lease.owner": "worker-new", "lease.expires_at": clock.now() + timedelta(minutes=5)}
    )
    before = message(db, mid)
    capsys.readouterr()

    result = finalize(late, claim, PostResult(Outcome.FAILED, "channel_not_found"))

    assert result is Result.FENCED
    assert message(db, mid) == before
    [entry] = ledger(db).values()
    assert entry["status"] == "claimed"
    [line] = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert line["severity"] == "ERROR"
    assert (line["status"], line["error_code"], line["worker"]) == (
        "fenced",
        "channel_not_found",
        "worker-late",
    )


def test_a_late_finalize_racing_reconciliation_settles_once_in_every_interleaving(
    settings, db, slack, clock
):
    """A worker whose lease expired finishes at the same moment a reconciler takes over:
    whoever commits first wins, the other is fenced, and the post is never repeated."""
    late = make_runtime(settings, db, clock, "worker-late")
    reconciler = make_runtime(settings, db, clock, "worker-reconciler")
    state: dict[str, Any] = {}
    arrivals = itertools.count()
    settled: list[str] = []

    def setup_round() -> None:
        clock.set(T0)
        mid = seed_message(db)
        claim = claim_occurrence(late, MESSAGE_KIND, db.collection(MESSAGES).document(mid).get())
        assert isinstance(claim, Claim)
        state["claim"] = claim
        state["post"] = late.slack.post("C0123ABCD", "hi", claim.delivery_id)
        clock.advance(timedelta(seconds=settings.lease_seconds + 1))
        settled.append(mid)

    def late_worker():
        if next(arrivals) % 2 == 0:
            setup_round()
        finalize(late, state["claim"], state["post"])

    def reconcile():
        if next(arrivals) % 2 == 0:
            setup_round()
        reconcile_kind(reconciler, MESSAGE_KIND)

    counts = orchestrate(late_worker, reconcile, name="lease")

    # Alone, the late worker pauses at its finalize commit; the reconciler, coming second,
    # finds nothing expired. orchestrate then runs the reconciler first in some orders.
    assert counts[0] >= 2
    assert len(settled) >= 4
    for mid in settled:
        assert slack.delivery_ids().count(message_delivery_id(mid, T0)) == 1
        doc = message(db, mid)
        assert doc["status"] == "sent"
        assert doc["last_slack_ts"] is not None
        assert ledger(db)[message_delivery_id(mid, T0)]["status"] == "sent"
