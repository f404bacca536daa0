"""Reconciliation: an ambiguous or abandoned send is settled by asking Slack's history for
its delivery_id, once its lease has expired. Zero duplicates, zero lost."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import timedelta

from core.models import message_delivery_id
from core.platform import Outcome, PostResult
from core.store import MESSAGES
from emulator.slack_standin import Fault
from messages.kind import MESSAGE_KIND
from processor.abc import Claim
from processor.claim import claim_occurrence
from processor.finalize import finalize
from processor.kind_pass import run_kind
from processor.outcome import Result
from processor.reconcile import backoff
from tests.fixtures.clock import T0, past_lease
from tests.fixtures.deliveries import ledger
from tests.fixtures.messages import message, seed_message
from tests.fixtures.runtime import make_runtime
from tests.fixtures.slack import HISTORY


def entry(db, mid, occurrence=T0):
    return ledger(db)[message_delivery_id(mid, occurrence)]


def test_attempts_run_out_into_failed_with_an_alert(settings, db, slack, clock, capsys):
    rt = make_runtime(
        replace(settings, max_attempts=2, alert_channel="C0ALERTS1"), db, clock, "worker-a"
    )
    mid = seed_message(db)
    slack.inject(Fault(kind="server_error", channel="C0123ABCD"))
    for _ in range(2):
        run_kind(rt, MESSAGE_KIND)  # claim, ambiguous
        past_lease(rt)
        run_kind(rt, MESSAGE_KIND)  # absent: released (first time) or failed (second)
        clock.advance(backoff(1))

    doc = message(db, mid)
    assert (doc["status"], doc["last_error"]["code"]) == ("failed", "max_attempts")
    assert entry(db, mid)["status"] == "failed"
    [alert] = slack.posts()
    assert alert.channel == "C0ALERTS1"
    assert mid in (alert.text or "")
    errors = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    errors = [x for x in errors if x["severity"] == "ERROR"]
    assert [(x["status"], x["error_code"]) for x in errors] == [("failed", "max_attempts")]


def test_unreadable_history_holds_the_send_unconfirmed_and_never_resends(
    settings, db, slack, clock, capsys
):
    rt = make_runtime(replace(settings, alert_channel="C0ALERTS1"), db, clock, "worker-a")
    mid = seed_message(db)
    slack.inject(Fault(kind="drop_after_receipt", times=1))
    slack.inject(Fault(kind="error", code="missing_scope", method=HISTORY))
    run_kind(rt, MESSAGE_KIND)
    past_lease(rt)

    summary = run_kind(rt, MESSAGE_KIND)
    clock.advance(timedelta(days=1))
    run_kind(rt, MESSAGE_KIND)

    assert (summary["unconfirmed"], summary["reconciled"]) == (1, 1)
    doc = message(db, mid)
    assert (doc["status"], doc["last_error"]["code"]) == ("unconfirmed", "missing_scope")
    assert entry(db, mid)["status"] == "unconfirmed"
    posts = slack.posts()
    assert [p.channel for p in posts] == ["C0123ABCD", "C0ALERTS1"]  # the send, one alert
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert [x["status"] for x in lines if x["severity"] == "ERROR"] == ["unconfirmed"]


def test_history_rate_limited_leaves_it_claimed_and_asks_again_later(rt, db, slack):
    mid = seed_message(db)
    slack.inject(Fault(kind="drop_after_receipt", times=1))
    slack.inject(Fault(kind="rate_limit", method=HISTORY, times=1, retry_after=30))
    run_kind(rt, MESSAGE_KIND)
    past_lease(rt)

    assert run_kind(rt, MESSAGE_KIND)["reconciled"] == 0
    doc = message(db, mid)
    assert doc["status"] == "sending"
    # Taken over (fenced), and looked at again once Slack's Retry-After has passed.
    assert doc["lease"]["owner"] == rt.worker_id
    assert doc["lease"]["expires_at"] == rt.clock.now() + timedelta(seconds=30)
    rt.clock.advance(timedelta(seconds=29))
    assert run_kind(rt, MESSAGE_KIND)["reconciled"] == 0  # not before
    rt.clock.advance(timedelta(seconds=1))
    assert run_kind(rt, MESSAGE_KIND)["sent"] == 1

    assert len(slack.posts()) == 1
    assert message(db, mid)["status"] == "sent"


def test_a_history_429_holds_every_lease_of_the_process_until_its_retry_after(rt, db, slack):
    ids = [seed_message(db, channel=c) for c in ("C0123ABCD", "C0OTHER01")]
    slack.inject(Fault(kind="drop_after_receipt", times=2))
    slack.inject(Fault(kind="rate_limit", method=HISTORY, times=1, retry_after=30))
    run_kind(rt, MESSAGE_KIND)
    past_lease(rt)

    assert run_kind(rt, MESSAGE_KIND)["reconciled"] == 0
    assert slack.calls(HISTORY) == 1  # the other lease's channel was not read
    rt.clock.advance(timedelta(seconds=29))
    run_kind(rt, MESSAGE_KIND)
    assert slack.calls(HISTORY) == 1
    rt.clock.advance(timedelta(seconds=1))

    assert run_kind(rt, MESSAGE_KIND)["sent"] == 2
    assert slack.calls(HISTORY) == 3
    assert [message(db, m)["status"] for m in ids] == ["sent", "sent"]


def test_a_late_worker_cannot_overwrite_what_reconciliation_settled(rt, db, slack, settings):
    mid = seed_message(db)
    late = make_runtime(settings, db, rt.clock, "worker-late")
    claim = claim_occurrence(late, MESSAGE_KIND, db.collection(MESSAGES).document(mid).get())
    assert isinstance(claim, Claim)
    post = late.slack.post("C0123ABCD", "hi", claim.delivery_id)  # then it stalls
    past_lease(rt)
    assert run_kind(rt, MESSAGE_KIND)["sent"] == 1  # reconciliation found the post

    result = finalize(late, claim, PostResult(Outcome.FAILED, "channel_not_found"))

    assert result is Result.FENCED
    doc = message(db, mid)
    assert (doc["status"], doc["last_slack_ts"]) == ("sent", post.ts)
    assert len(slack.posts()) == 1


def test_recurring_series_is_reconciled_and_advances(rt, db, slack):
    mid = seed_message(db, status="recurring", rrule="FREQ=DAILY", dtstart="2027-01-04T09:00")
    slack.inject(Fault(kind="drop_after_receipt", times=1))
    run_kind(rt, MESSAGE_KIND)
    past_lease(rt)

    run_kind(rt, MESSAGE_KIND)

    doc = message(db, mid)
    assert (doc["status"], doc["next_run_at"]) == ("recurring", T0 + timedelta(days=1))
    assert len(slack.posts()) == 1


def test_backoff_doubles_and_is_capped():
    assert [backoff(n).total_seconds() for n in (1, 2, 3, 4)] == [60, 120, 240, 480]
    assert backoff(30) == timedelta(hours=1)
