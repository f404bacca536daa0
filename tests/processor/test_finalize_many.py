"""Recording several sends in one commit: all of them land, and a lease taken over in the
meantime still fences its own late result without costing the others theirs."""

from __future__ import annotations

from core.models import message_delivery_id
from core.platform import Outcome, PostResult
from core.store import MESSAGES
from messages.kind import MESSAGE_KIND
from processor.abc import Claim
from processor.claim import claim_occurrence
from processor.deliver import Sent, record_sends
from processor.finalize import finalize_many
from processor.outcome import Result
from tests.fixtures.clock import T0
from tests.fixtures.deliveries import ledger
from tests.fixtures.messages import message, seed_message


def claimed(rt, db, n):
    claims = []
    for k in range(n):
        mid = seed_message(db, channel=f"C{k:04d}FIN")
        claim = claim_occurrence(rt, MESSAGE_KIND, db.collection(MESSAGES).document(mid).get())
        assert isinstance(claim, Claim)
        claims.append(claim)
    return claims


def delivered(k):
    return PostResult(Outcome.DELIVERED, ts=f"1799053200.00000{k}")


def test_several_sends_are_recorded_together(rt, db, slack):
    claims = claimed(rt, db, 3)

    results = finalize_many(rt, [(c, delivered(k)) for k, c in enumerate(claims)])

    assert results == [Result.SENT] * 3
    entries = ledger(db)
    for k, claim in enumerate(claims):
        doc = message(db, claim.subject_id)
        assert (doc["status"], doc["last_slack_ts"], doc["version"]) == ("sent", delivered(k).ts, 3)
        assert "lease" not in doc
        assert entries[message_delivery_id(claim.subject_id, T0)]["status"] == "sent"


def test_a_taken_over_lease_is_fenced_and_the_others_still_land(rt, db, slack):
    claims = claimed(rt, db, 3)
    # A reconciler took the second lease over: the message changed under our claim.
    db.collection(MESSAGES).document(claims[1].subject_id).update({"lease.owner": "reconciler"})

    results = finalize_many(rt, [(c, delivered(k)) for k, c in enumerate(claims)])

    assert results == [Result.SENT, Result.FENCED, Result.SENT]
    assert message(db, claims[1].subject_id)["status"] == "sending"
    assert message(db, claims[0].subject_id)["status"] == "sent"
    assert message(db, claims[2].subject_id)["status"] == "sent"


def test_record_sends_logs_one_line_per_outcome(rt, db, slack, capsys):
    claims = claimed(rt, db, 2)
    capsys.readouterr()

    results = record_sends(
        rt,
        [Sent(claims[0], delivered(0)), Sent(claims[1], PostResult(Outcome.FAILED, "is_archived"))],
    )

    assert results == [Result.SENT, Result.FAILED]
    lines = capsys.readouterr().out.splitlines()
    assert sum('"status": "sent"' in line for line in lines) == 1
    assert sum('"status": "failed"' in line for line in lines) == 1
    assert message(db, claims[1].subject_id)["last_error"]["code"] == "is_archived"
