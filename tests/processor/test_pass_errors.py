"""A Firestore read that fails inside a pass (ServiceUnavailable, say) never ends the pass
with posts made and not recorded: the error is logged with what it concerned and counted in
the summary's `errors`, every send is recorded, and what was left stays due for the next
pass. One call of the real client is made to fail once; everything else is real."""

from __future__ import annotations

import json
from typing import Any

import pytest
from google.api_core.exceptions import ServiceUnavailable

from core.queues import Queue
from messages.kind import MESSAGE_KIND
from processor.pacing import ChannelPacer
from processor.tick import run_tick
from tests.fixtures.deliveries import ledger
from tests.fixtures.messages import message, seed_message


def error_lines(capsys: pytest.CaptureFixture[str]) -> list[dict[str, Any]]:
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line]
    return [line for line in lines if line["severity"] == "ERROR"]


def fail_once(monkeypatch, owner, name, *, on_call: int = 1, exc: Exception | None = None):
    """`owner.name` raises on its `on_call`-th call, and is the real one otherwise."""
    real = getattr(owner, name)
    calls = []

    def wrapped(*args, **kwargs):
        calls.append(args)
        if len(calls) == on_call:
            raise exc or ServiceUnavailable("injected: the service is unavailable")
        return real(*args, **kwargs)

    monkeypatch.setattr(owner, name, wrapped)
    return calls


def assert_every_post_recorded_once(db, slack) -> None:
    """Each post is in the stand-in once and on record: its message `sent` and its ledger
    entry `sent`; nothing is left `sending` or `claimed` for reconciliation."""
    delivery_ids = slack.delivery_ids()
    assert len(delivery_ids) == len(set(delivery_ids))
    entries = ledger(db)
    for delivery_id in delivery_ids:
        assert entries[delivery_id]["status"] == "sent"
        assert message(db, entries[delivery_id]["message_id"])["status"] == "sent"
    assert {entry["status"] for entry in entries.values()} == {"sent"}


def test_a_failure_inside_a_page_records_the_posts_in_flight_and_ends_the_pass(
    rt, db, slack, monkeypatch, capsys
):
    """Whatever raises inside a page (here the pacer, standing for any step of it), the
    deliveries in flight are awaited and recorded; what the page did not begin stays due,
    and the next pass sends it, once."""
    ids = [seed_message(db, f"m-{n:02d}", channel=f"C0PAGE{n:03d}") for n in range(40)]
    fail_once(monkeypatch, ChannelPacer, "acquire", on_call=35, exc=RuntimeError("injected"))

    summary = run_tick(rt, MESSAGE_KIND)

    # The 35th lane was not begun; the 34 begun before it were awaited and recorded.
    assert (summary["sent"], summary["errors"]) == (34, 1)
    assert_every_post_recorded_once(db, slack)
    statuses = [message(db, m)["status"] for m in ids]
    assert set(statuses) == {"sent", "pending"}  # begun and recorded, or not begun at all
    [line] = error_lines(capsys)
    assert (line["error_code"], line["collection"]) == ("RuntimeError", "scheduled_messages")

    monkeypatch.undo()
    again = run_tick(rt, MESSAGE_KIND)

    assert again["sent"] == statuses.count("pending")
    assert len(slack.posts()) == len(ids)
    assert_every_post_recorded_once(db, slack)


def test_the_expired_lease_query_failing_does_not_keep_the_pass_from_what_is_due(
    rt, db, slack, monkeypatch, capsys
):
    due = seed_message(db)
    fail_once(monkeypatch, Queue, "expired")

    summary = run_tick(rt, MESSAGE_KIND)

    assert (summary["sent"], summary["errors"]) == (1, 1)
    assert message(db, due)["status"] == "sent"
    [line] = error_lines(capsys)
    assert (line["error_code"], line["collection"]) == ("ServiceUnavailable", "scheduled_messages")
