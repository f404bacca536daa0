"""`POST /messages/{id}/retry`: a failed message's failed occurrence is sent once more,
through the same ledger entry; a second retry, or a retry of a message that is not failed, is
409 and posts nothing."""

from __future__ import annotations

from typing import Any

from core.models import message_delivery_id
from messages.kind import MESSAGE_KIND
from processor.kind_pass import run_kind
from tests.fixtures.api import call
from tests.fixtures.clock import T0
from tests.fixtures.deliveries import ledger
from tests.fixtures.messages import message, seed_message


def _failed(db: Any, slack: Any, rt: Any) -> str:
    """A one-off that failed because the app was not in its channel."""
    slack.set_channel("C0123ABCD", member=False)
    mid = seed_message(db)
    run_kind(rt, MESSAGE_KIND)
    assert message(db, mid)["status"] == "failed"
    slack.set_channel("C0123ABCD", member=True)
    return mid


def test_a_failed_one_off_is_sent_once_more_under_its_ledger_entry(api, db, slack, rt):
    mid = _failed(db, slack, rt)

    status, answer = call(api, "POST", f"/messages/{mid}/retry")

    assert (status, answer["status"]) == (200, "sent"), answer
    entries = ledger(db)
    assert list(entries) == [message_delivery_id(mid, T0)]  # the same entry, not a new one
    entry = entries[message_delivery_id(mid, T0)]
    assert entry["status"] == "sent"
    assert entry["operator"]["action"] == "release"
    posted = [p for p in slack.posts() if (p.delivery_id or "").startswith(f"m:{mid}:")]
    assert len(posted) == 1


def test_a_second_retry_is_409_and_posts_nothing_more(api, db, slack, rt):
    mid = _failed(db, slack, rt)
    assert call(api, "POST", f"/messages/{mid}/retry")[0] == 200

    status, answer = call(api, "POST", f"/messages/{mid}/retry")

    assert status == 409
    assert answer["details"] == [{"field": "status", "message": "sent"}]
    assert len(slack.posts()) == 1


def test_only_a_failed_message_can_be_retried(api, db, slack):
    mid = seed_message(db)
    status, answer = call(api, "POST", f"/messages/{mid}/retry")
    assert status == 409
    assert answer["details"] == [{"field": "status", "message": "pending"}]
    assert call(api, "POST", "/messages/nope/retry")[0] == 404
    assert slack.posts() == []
