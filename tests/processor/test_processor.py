"""The processor end to end against the real Firestore emulator and the Slack stand-in."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import timedelta

import pytest

from core.models import message_delivery_id
from core.store import DELIVERIES, MESSAGES
from emulator.slack_standin import Fault
from messages.kind import MESSAGE_KIND
from processor.kind_pass import run_kind
from tests.fixtures.clock import T0
from tests.fixtures.deliveries import ledger
from tests.fixtures.messages import message, seed_message


def test_due_one_off_is_sent_once_with_its_delivery_id(rt, db, slack):
    mid = seed_message(db, text="Release at *noon*")

    summary = run_kind(rt, MESSAGE_KIND)

    assert (summary["sent"], summary["claimed"], summary["failed"]) == (1, 1, 0)
    delivery_id = message_delivery_id(mid, T0)
    [post] = slack.posts()
    assert post.channel == "C0123ABCD"
    assert post.metadata == {
        "event_type": "scheduled_message",
        "event_payload": {"delivery_id": delivery_id},
    }
    doc = message(db, mid)
    assert doc["status"] == "sent"
    assert doc["last_slack_ts"] == post.ts
    assert doc["last_sent_at"] == T0
    assert doc["sent_count"] == 1
    assert "lease" not in doc
    assert doc["version"] == 3  # seeded 1, claim, finalize
    entry = ledger(db)[delivery_id]
    assert entry["status"] == "sent"
    assert entry["slack_ts"] == post.ts
    assert entry["message_id"] == mid
    assert entry["occurrence_at"] == T0
    assert entry["worker"] == "worker-a"
    assert entry["attempts"] == 1


def test_second_tick_sends_nothing_more(rt, db, slack):
    seed_message(db)
    run_kind(rt, MESSAGE_KIND)
    rt.clock.advance(timedelta(minutes=1))

    summary = run_kind(rt, MESSAGE_KIND)

    assert summary["sent"] == 0
    assert len(slack.posts()) == 1


def test_not_due_and_not_waiting_messages_are_left_alone(rt, db, slack):
    later = seed_message(db, next_run_at=T0 + timedelta(seconds=1))
    paused = seed_message(db, status="paused")
    cancelled = seed_message(db, status="cancelled")

    summary = run_kind(rt, MESSAGE_KIND)

    assert summary["due"] == 0
    assert slack.posts() == []
    assert message(db, later)["status"] == "pending"
    assert message(db, paused)["status"] == "paused"
    assert message(db, cancelled)["status"] == "cancelled"


def test_deleted_message_is_never_sent_and_leaves_the_due_queue(rt, db, slack):
    mid = seed_message(db, deleted=True)

    summary = run_kind(rt, MESSAGE_KIND)

    assert summary["skipped"] == 1
    assert slack.posts() == []
    assert message(db, mid)["status"] == "cancelled"
    assert ledger(db) == {}


def test_recurring_series_advances_from_its_anchor_then_completes(rt, db, slack):
    mid = seed_message(
        db,
        status="recurring",
        send_at=None,
        rrule="FREQ=DAILY;COUNT=2",
        dtstart="2027-01-04T10:00",
        timezone="Europe/Berlin",
        next_run_at=T0,
    )

    first = run_kind(rt, MESSAGE_KIND)
    doc = message(db, mid)
    assert (first["sent"], first["advanced"]) == (1, 1)
    assert doc["status"] == "recurring"
    assert doc["next_run_at"] == T0 + timedelta(days=1)  # 10:00 Berlin = 09:00Z

    # A late tick delivers the due occurrence; the next one still comes from the anchor.
    rt.clock.set(T0 + timedelta(days=1, minutes=17))
    second = run_kind(rt, MESSAGE_KIND)
    assert (second["sent"], second["completed"]) == (1, 1)
    assert message(db, mid)["status"] == "completed"
    assert sorted(ledger(db)) == [
        message_delivery_id(mid, T0),
        message_delivery_id(mid, T0 + timedelta(days=1)),
    ]
    assert len(slack.posts()) == 2


@pytest.mark.parametrize(
    "code", ["channel_not_found", "not_in_channel", "is_archived", "invalid_auth", "token_revoked"]
)
def test_definitive_slack_error_fails_the_message_with_its_code(rt, db, slack, code):
    mid = seed_message(db)
    slack.inject(Fault(kind="error", code=code))

    summary = run_kind(rt, MESSAGE_KIND)

    assert summary["failed"] == 1
    doc = message(db, mid)
    assert doc["status"] == "failed"
    assert doc["last_error"]["code"] == code
    assert doc["last_error"]["at"] == T0
    [entry] = ledger(db).values()
    assert entry["status"] == "failed"
    assert entry["error"]["code"] == code


def test_rate_limit_releases_then_the_same_ledger_entry_is_claimed_again(rt, db, slack):
    mid = seed_message(db)
    slack.inject(Fault(kind="rate_limit", retry_after=30, times=1))

    first = run_kind(rt, MESSAGE_KIND)

    assert (first["released"], first["failed"], first["sent"]) == (1, 0, 0)
    doc = message(db, mid)
    assert doc["status"] == "pending"
    assert doc["next_run_at"] == T0 + timedelta(seconds=30)
    assert doc["last_error"]["code"] == "ratelimited"
    delivery_id = message_delivery_id(mid, T0)
    assert ledger(db)[delivery_id]["status"] == "released"

    rt.clock.advance(timedelta(seconds=29))
    assert run_kind(rt, MESSAGE_KIND)["due"] == 0  # Retry-After is honoured
    rt.clock.advance(timedelta(seconds=1))
    second = run_kind(rt, MESSAGE_KIND)

    assert second["sent"] == 1
    [post] = slack.posts()
    assert post.delivery_id == delivery_id  # same occurrence, same ledger entry
    entry = ledger(db)[delivery_id]
    assert (entry["status"], entry["attempts"]) == ("sent", 2)
    assert len(ledger(db)) == 1


@pytest.mark.parametrize(
    ("fault", "code", "posted"),
    [
        (Fault(kind="server_error", status=503), "http_503", 0),
        (Fault(kind="error", code="fatal_error"), "fatal_error", 0),
        (Fault(kind="error", code="internal_error"), "internal_error", 0),
        (Fault(kind="drop_after_receipt"), "connection_error", 1),
        (Fault(kind="slow", delay=1.5), "timeout", 1),
    ],
)
def test_ambiguous_outcome_keeps_the_claim_and_never_resends(rt, db, slack, fault, code, posted):
    mid = seed_message(db)
    slack.inject(fault)

    summary = run_kind(rt, MESSAGE_KIND)

    assert (summary["ambiguous"], summary["sent"], summary["failed"]) == (1, 0, 0)
    doc = message(db, mid)
    assert doc["status"] == "sending"
    assert doc["lease"]["owner"] == "worker-a"
    assert doc["lease"]["occurrence_at"] == T0
    assert doc["lease"]["expires_at"] == T0 + timedelta(seconds=300)
    assert doc["last_error"]["code"] == code
    [entry] = ledger(db).values()
    assert entry["status"] == "claimed"
    assert entry["error"]["code"] == code
    slack.clear_faults()
    rt.clock.advance(timedelta(minutes=1))
    assert run_kind(rt, MESSAGE_KIND)["sent"] == 0
    assert len(slack.posts()) == posted  # Slack's copy (if any) is the only one


@pytest.mark.parametrize(
    ("fields", "code"),
    [
        ({"timezone": "Mars/Olympus"}, "invalid_timezone"),
        ({"channel": None}, "missing_channel"),
        ({"channel": "general"}, "invalid_channel"),
        ({"channel": "C0/../x"}, "invalid_channel"),
        ({"channel": ""}, "missing_channel"),
        ({"text": ""}, "empty_text"),
        ({"text": "x" * 40_001}, "text_too_long"),
        ({"rrule": "FREQ=SOMETIMES", "dtstart": "2027-01-04T09:00"}, "invalid_rrule"),
        ({"rrule": "FREQ=DAILY"}, "invalid_dtstart"),
        ({"occurrence_at": "yesterday"}, "invalid_occurrence_at"),
    ],
)
def test_bad_document_fails_with_a_code_and_the_tick_goes_on(rt, db, slack, fields, code):
    bad = seed_message(db, next_run_at=T0 - timedelta(minutes=1), **fields)
    good = seed_message(db)

    summary = run_kind(rt, MESSAGE_KIND)

    assert (summary["failed"], summary["sent"]) == (1, 1)
    doc = message(db, bad)
    assert doc["status"] == "failed"
    assert doc["last_error"]["code"] == code
    assert message(db, good)["status"] == "sent"
    assert [p.delivery_id for p in slack.posts()] == [message_delivery_id(good, T0)]


def test_a_tick_takes_at_most_tick_limit_messages_oldest_first(rt, db, slack):
    ids = [seed_message(db, next_run_at=T0 - timedelta(minutes=i)) for i in range(5)]
    rt = replace(rt, settings=replace(rt.settings, tick_limit=3))

    summary = run_kind(rt, MESSAGE_KIND)

    assert (summary["due"], summary["sent"]) == (3, 3)
    oldest_first = [message_delivery_id(i, T0 - timedelta(minutes=n)) for n, i in enumerate(ids)]
    assert slack.delivery_ids() == oldest_first[::-1][:3]


def test_message_whose_ledger_says_sent_is_repaired_not_resent(rt, db, slack):
    mid = seed_message(db)
    delivery_id = message_delivery_id(mid, T0)
    db.collection(DELIVERIES).document(delivery_id).set(
        {"message_id": mid, "occurrence_at": T0, "status": "sent", "slack_ts": "1.1"}
    )

    summary = run_kind(rt, MESSAGE_KIND)

    assert (summary["sent"], summary["duplicates"]) == (0, 1)
    assert slack.posts() == []
    assert message(db, mid)["status"] == "sent"


def test_dry_run_reports_previews_and_writes_nothing(rt, db, slack):
    mid = seed_message(db, text="Hi <!channel> & team")
    before = {d.id: d.update_time for d in db.collection(MESSAGES).stream()}

    summary = run_kind(rt, MESSAGE_KIND, dry_run=True)

    assert summary["dry_run"] is True
    assert summary["sent"] == 0
    assert summary["previews"] == [
        {
            "kind": "message",
            "id": mid,
            "channel": "C0123ABCD",
            "text": "Hi @\u2060channel &amp; team",
            "occurrence_at": T0.isoformat(),
        }
    ]
    assert {d.id: d.update_time for d in db.collection(MESSAGES).stream()} == before
    assert ledger(db) == {}
    assert slack.posts() == []


def test_one_json_log_line_per_delivery_outcome(rt, db, slack, capsys):
    sent = seed_message(db)
    failed = seed_message(db, channel="C0FAILING1")
    slack.inject(Fault(kind="error", code="channel_not_found", channel="C0FAILING1"))

    run_kind(rt, MESSAGE_KIND)

    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    outcomes = {line["message_id"]: line for line in lines if "delivery_id" in line}
    assert set(outcomes) == {sent, failed}
    assert (outcomes[sent]["severity"], outcomes[sent]["status"]) == ("INFO", "sent")
    assert outcomes[failed]["severity"] == "ERROR"
    assert (outcomes[failed]["status"], outcomes[failed]["error_code"]) == (
        "failed",
        "channel_not_found",
    )
    for line in outcomes.values():
        assert line["occurrence_at"] == T0.isoformat()
        assert "xoxb" not in json.dumps(line)
