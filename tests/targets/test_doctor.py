"""The operator's doctor: every stored document the processor will never send is reported
with its reason, through the CLI, and `--fix` sets what can be computed."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest

from core.store import ROTATIONS
from targets.kinds import run_pass
from targets.operator import main
from tests.fixtures.clock import T0
from tests.fixtures.messages import message, seed_message
from tests.fixtures.rotations import rotation, seed_rotation

pytestmark = pytest.mark.usefixtures("cli_on_the_test_clock")

SERIES = {
    "status": "recurring",
    "send_at": None,
    "rrule": "FREQ=DAILY",
    "dtstart": "2027-01-01T09:00",
}


def doctor(capsys, *args):
    """The doctor's exit status and its JSON findings by (collection, id)."""
    capsys.readouterr()
    code = main(["doctor", "--json", *args])
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    return code, {(row["collection"], row["id"]): row for row in rows}


def seed_the_unsendable(db):
    """Documents another service might write straight to Firestore, each broken one way."""
    seed_message(db, "ok-one-off")
    seed_message(db, "ok-series", **SERIES)
    seed_message(db, "ok-sent", status="sent", next_run_at=None)
    seed_message(db, "no-next-run", next_run_at=None)
    seed_message(db, "string-next-run", **SERIES, next_run_at="2027-01-04T09:00:00Z")
    seed_message(db, "bad-zone", timezone="Mars/Olympus_Mons")
    seed_message(db, "bad-rule", **SERIES | {"rrule": "FREQ=FORTNIGHTLY"})
    seed_message(db, "bad-channel", channel="#general")
    seed_message(db, "bad-status", status="queued")
    seed_message(db, "lease-not-a-map", status="sending", lease="x")
    seed_message(db, "sending-without-lease", status="sending")
    seed_rotation(db, "ok-rotation")
    seed_rotation(db, "rotation-no-next-run", next_run_at=None)
    seed_rotation(db, "rotation-bad-zone", timezone="Nowhere/City")
    seed_rotation(db, "rotation-bad-channel", channel="general")
    seed_rotation(db, "rotation-bad-status", status="running")
    seed_rotation(db, "rotation-lease-not-a-map", lease="x")


def test_the_doctor_lists_every_document_the_processor_will_never_send_and_why(rt, db, capsys):
    seed_the_unsendable(db)

    code, found = doctor(capsys)

    assert code == 1
    assert {key: row["code"] for key, row in found.items()} == {
        ("scheduled_messages", "no-next-run"): "missing_next_run_at",
        ("scheduled_messages", "string-next-run"): "invalid_next_run_at",
        ("scheduled_messages", "bad-zone"): "invalid_timezone",
        ("scheduled_messages", "bad-rule"): "invalid_rrule",
        ("scheduled_messages", "bad-channel"): "invalid_channel",
        ("scheduled_messages", "bad-status"): "unknown_status",
        ("scheduled_messages", "lease-not-a-map"): "invalid_lease",
        ("scheduled_messages", "sending-without-lease"): "missing_lease",
        ("rotations", "rotation-no-next-run"): "missing_next_run_at",
        ("rotations", "rotation-bad-zone"): "invalid_timezone",
        ("rotations", "rotation-bad-channel"): "invalid_channel",
        ("rotations", "rotation-bad-status"): "unknown_status",
        ("rotations", "rotation-lease-not-a-map"): "invalid_lease",
    }
    fixes = {key[1]: row["fix_next_run_at"] for key, row in found.items() if row["fix_next_run_at"]}
    assert fixes == {
        "no-next-run": T0.isoformat(),  # the one-off's send_at
        "string-next-run": T0.isoformat(),  # the series' first occurrence at or after now
        "rotation-no-next-run": T0.isoformat(),  # now: the processor computes the turn
    }
    assert "queued" in found[("scheduled_messages", "bad-status")]["reason"]
    assert "Mars/Olympus_Mons" in found[("scheduled_messages", "bad-zone")]["reason"]
    assert main(["doctor"]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == len(found)
    assert "scheduled_messages/bad-zone: invalid_timezone: " in "\n".join(lines)
    assert "rotations/rotation-no-next-run: missing_next_run_at: " in "\n".join(lines)
    assert all(
        line.endswith("[needs a person]") or "--fix sets next_run_at" in line for line in lines
    )


def test_fix_sets_the_computable_next_run_at_and_the_processor_then_sends_them(
    rt, db, slack, capsys
):
    seed_message(db, "no-next-run", next_run_at=None)
    seed_message(db, "string-next-run", **SERIES, next_run_at="2027-01-04T09:00:00Z")
    seed_message(db, "bad-zone", timezone="Mars/Olympus_Mons", next_run_at=None)
    seed_rotation(db, "rotation-no-next-run", next_run_at=None)
    run_pass(rt)
    assert slack.posts() == []  # never found: nothing says so but the doctor

    code, found = doctor(capsys, "--fix")

    assert code == 1  # the unknown timezone is left to a person
    assert {key[1]: row["fixed"] for key, row in found.items()} == {
        "no-next-run": True,
        "string-next-run": True,
        "bad-zone": False,
        "rotation-no-next-run": True,
    }
    assert message(db, "no-next-run")["next_run_at"] == T0
    assert message(db, "string-next-run")["next_run_at"] == T0
    assert "next_run_at" not in message(db, "bad-zone")
    assert rotation(db, "rotation-no-next-run")["next_run_at"] == T0
    run_pass(rt)
    assert sorted(slack.delivery_ids()) == sorted(
        [
            "m:no-next-run:20270104T090000Z",
            "m:string-next-run:20270104T090000Z",
            "r:rotation-no-next-run:2027-01-04",
        ]
    )
    assert doctor(capsys) == (
        1,
        {
            ("scheduled_messages", "bad-zone"): found[("scheduled_messages", "bad-zone")]
            | {"fixed": False}
        },
    )


def test_a_series_fixed_after_its_start_goes_on_from_now(rt, db, slack, capsys):
    seed_message(db, "moved-in", **SERIES, next_run_at=None)  # started three days ago
    rt.clock.advance(timedelta(hours=1))

    assert doctor(capsys, "--fix")[0] == 0

    assert message(db, "moved-in")["next_run_at"] == T0 + timedelta(days=1)
    run_pass(rt)
    assert slack.posts() == []  # the past occurrences are not sent in a burst


def test_the_processor_records_the_code_the_doctor_reported(rt, db, slack, capsys):
    seed_message(db, "bad-zone", timezone="Mars/Olympus_Mons")
    seed_message(db, "bad-rule", **SERIES | {"rrule": "FREQ=DAILY;BYDAY=XX"})
    seed_message(db, "bad-channel", channel="C0123ABCD ")
    seed_message(db, "empty-text", text="  ")
    seed_rotation(db, "rotation-bad-zone", timezone="Nowhere/City")
    seed_rotation(db, "rotation-bad-members", members=["U1", "U1"])
    _, found = doctor(capsys)

    run_pass(rt)

    recorded = {}
    for key in found:
        collection, doc_id = key
        data = db.collection(collection).document(doc_id).get().to_dict() or {}
        recorded[key] = data["last_error"]["code"]
    assert recorded == {key: row["code"] for key, row in found.items()}
    assert len(found) == 6
    assert slack.posts() == []
    assert db.collection(ROTATIONS).document("rotation-bad-zone").get().get("status") == "paused"


def test_the_doctor_examines_events_and_fix_makes_a_released_one_due(rt, db, slack, capsys):
    """Events are sends of the pipeline too: a released event without `next_run_at`, one
    the processor cannot parse, one held without a lease, an unknown status."""
    good = {
        "key": "stage-1:done",
        "delivery_id": "e:x",
        "created_at": T0,
        "callers": 1,
        "channel": "C0123ABCD",
        "text": "Framing is done",
        "attempts": 1,
        "status": "sent",
    }
    events = db.collection("events")
    events.document("ok-sent").set(good)
    events.document("released-no-next-run").set(good | {"status": "pending"})
    events.document("bad-channel").set(good | {"status": "pending", "channel": "#general"})
    events.document("sending-without-lease").set(good | {"status": "sending"})
    events.document("bad-status").set(good | {"status": "queued"})

    code, found = doctor(capsys, "--fix")

    assert code == 1
    assert {key[1]: (row["code"], row["fixed"]) for key, row in found.items()} == {
        "released-no-next-run": ("missing_next_run_at", True),
        "bad-channel": ("invalid_channel", False),
        "sending-without-lease": ("missing_lease", False),
        "bad-status": ("unknown_status", False),
    }
    assert {key[0] for key in found} == {"events"}
    assert events.document("released-no-next-run").get().get("next_run_at") == T0
    run_pass(rt)
    assert slack.delivery_ids() == ["e:released-no-next-run"]
