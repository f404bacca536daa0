"""Reconciliation: a send whose outcome is unknown keeps its lease; once the lease has
expired, Slack's history decides. Found: delivered, never posted again. Absent: released and
sent once later. Unreadable: held `unconfirmed` and never resent, or (policy `retry`) sent
again once."""

from __future__ import annotations

from datetime import timedelta

import pytest

from emulator.slack_standin import Fault
from processor.reconcile import backoff
from tests.contract.subjects import CHANNEL, SUBJECTS, one_pass
from tests.fixtures.slack import HISTORY

# What the post meets: its answer lost after Slack recorded it, or an answer slower than
# SLACK_TIMEOUT_SECONDS (1 s here), both posted; a 5xx for a post Slack never recorded.
POST_FAULT = {
    "found_dropped": Fault(kind="drop_after_receipt", times=1),
    "found_timeout": Fault(kind="slow", delay=1.5, times=1),
    "absent": Fault(kind="server_error", status=503, times=1),
    "unreadable_hold": Fault(kind="drop_after_receipt", times=1),
    "unreadable_retry": Fault(kind="server_error", status=503, times=1),
}
UNREADABLE = Fault(kind="error", code="missing_scope", method=HISTORY)
CASES = tuple(POST_FAULT)


@pytest.mark.parametrize(
    ("subject", "case"),
    [(s, case) for s in SUBJECTS for case in CASES if s.retry_policy or case != "unreadable_retry"],
    ids=lambda value: value if isinstance(value, str) else value.name,
)
def test_an_expired_lease_is_settled_by_slacks_history(rt, world, subject, case):
    fields = {"on_ambiguous": "retry"} if case == "unreadable_retry" else {}
    seeded = subject.seed(world, CHANNEL, fields)
    attempts = world.db.collection("deliveries").document(seeded.delivery_id).get()
    tried = (attempts.to_dict() or {}).get("attempts", 0)
    world.slack.inject(POST_FAULT[case])
    if case.startswith("unreadable"):
        world.slack.inject(UNREADABLE)
    one_pass(rt, subject)
    world.clock.advance(timedelta(seconds=299))
    one_pass(rt, subject)  # the lease still stands: nobody touches it
    assert _entry(world, seeded)["status"] == "claimed"

    world.clock.advance(timedelta(seconds=2))
    one_pass(rt, subject)
    world.clock.advance(backoff(tried + 1))  # past a release's backoff
    one_pass(rt, subject)

    posted = [p for p in world.slack.posts() if p.delivery_id == seeded.delivery_id]
    assert len(posted) == 1
    assert len(world.slack.posts()) == 1
    entry = _entry(world, seeded)
    stored = subject.stored(world, seeded)
    if case == "unreadable_hold":
        assert (entry["status"], entry["error"]["code"]) == ("unconfirmed", "missing_scope")
        assert "lease" not in stored
        world.clock.advance(timedelta(days=1))
        one_pass(rt, subject)
        assert world.slack.delivery_ids().count(seeded.delivery_id) == 1
        assert _entry(world, seeded)["status"] == "unconfirmed"
        return
    assert (entry["status"], entry["slack_ts"]) == ("sent", posted[0].ts)
    assert entry["attempts"] == tried + (1 if case.startswith("found") else 2)
    assert subject.delivered(stored, seeded)


def _entry(world, seeded):
    return world.db.collection("deliveries").document(seeded.delivery_id).get().to_dict() or {}
