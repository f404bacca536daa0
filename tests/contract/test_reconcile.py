"""Reconciliation: a send whose outcome is unknown keeps its lease; once the lease has
expired, the conversation's history decides (Slack's, or Teams' read through Graph).
Found: delivered, never posted again. Absent: released and sent once later. Unreadable:
held `unconfirmed` and never resent, or (policy `retry`) sent again once."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

import pytest

from processor.reconcile import backoff
from tests.contract.chats import Chat
from tests.contract.subjects import CHANNEL, on_every_platform, one_pass

# What the post meets: its answer lost after the platform recorded it, or an answer slower
# than SLACK_TIMEOUT_SECONDS (1 s here), both posted; a 503 for a post never recorded.
POST_FAULT: dict[str, Callable[[Chat], None]] = {
    "found_dropped": lambda chat: chat.lost_after_record(),
    "found_timeout": lambda chat: chat.slow_past_timeout(),
    "absent": lambda chat: chat.server_error_before_record(),
    "unreadable_hold": lambda chat: chat.lost_after_record(),
    "unreadable_retry": lambda chat: chat.server_error_before_record(),
}
CASES = [
    (platform, s, case)
    for platform, s in on_every_platform()
    for case in POST_FAULT
    if s.retry_policy or case != "unreadable_retry"
]


@pytest.mark.parametrize(
    ("platform", "subject", "case"),
    CASES,
    ids=[f"{platform}-{s.name}-{case}" for platform, s, case in CASES],
)
def test_an_expired_lease_is_settled_by_the_conversations_history(rt, world, subject, case):
    fields = {"on_ambiguous": "retry"} if case == "unreadable_retry" else {}
    seeded = subject.seed(world, CHANNEL, fields)
    attempts = world.db.collection("deliveries").document(seeded.delivery_id).get()
    tried = (attempts.to_dict() or {}).get("attempts", 0)
    POST_FAULT[case](world.chat)
    if case.startswith("unreadable"):
        world.chat.history_unreadable()
    one_pass(rt, subject)
    world.clock.advance(timedelta(seconds=299))
    one_pass(rt, subject)  # the lease still stands: nobody touches it
    assert _entry(world, seeded)["status"] == "claimed"

    world.clock.advance(timedelta(seconds=2))
    one_pass(rt, subject)
    world.clock.advance(backoff(tried + 1))  # past a release's backoff
    one_pass(rt, subject)

    posted = [p for p in world.chat.posts() if p.delivery_id == seeded.delivery_id]
    assert len(posted) == 1
    assert len(world.chat.posts()) == 1
    entry = _entry(world, seeded)
    stored = subject.stored(world, seeded)
    if case == "unreadable_hold":
        assert (entry["status"], entry["error"]["code"]) == (
            "unconfirmed",
            world.chat.unreadable_code,
        )
        assert "lease" not in stored
        world.clock.advance(timedelta(days=1))
        one_pass(rt, subject)
        assert world.chat.delivery_ids().count(seeded.delivery_id) == 1
        assert _entry(world, seeded)["status"] == "unconfirmed"
        return
    assert (entry["status"], entry[world.chat.post_id_field]) == ("sent", posted[0].post_id)
    assert entry["attempts"] == tried + (1 if case.startswith("found") else 2)
    assert subject.delivered(stored, seeded)


def _entry(world, seeded):
    return world.db.collection("deliveries").document(seeded.delivery_id).get().to_dict() or {}
