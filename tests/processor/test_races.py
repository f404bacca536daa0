"""A message's late worker against the one that took its lease over: fenced, with its ERROR
line. (Claim against claim and late finalize against reconciliation, in every interleaving
and for every kind: tests/contract/test_races.py.)"""

from __future__ import annotations

import json
from datetime import timedelta

from core.platform import Outcome, PostResult
from core.store import MESSAGES
from messages.kind import MESSAGE_KIND
from processor.abc import Claim
from processor.claim import claim_occurrence
from processor.finalize import finalize
from processor.outcome import Result
from tests.fixtures.deliveries import ledger
from tests.fixtures.messages import message, seed_message
from tests.fixtures.runtime import make_runtime


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
