"""Documents in no shard of the due scan (no shard, or one outside 0..SHARDS-1) with SHARDS
above 1: a pass puts the due ones in their shard and sends them; the doctor reports the
others (a paused one), and `--fix` puts them in their shard. With SHARDS=1 nothing needs a
shard."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest

from core.shards import shard_of
from targets.kinds import run_pass
from targets.operator import main
from tests.fixtures.clock import T0
from tests.fixtures.messages import message, seed_message
from tests.fixtures.rotations import rotation, seed_rotation
from tests.fixtures.runtime import make_runtime

SHARDS = 4


@pytest.fixture
def sharded(rt: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    """SHARDS=4 in the environment, for the pass and the operator CLI alike."""
    monkeypatch.setenv("SHARDS", str(SHARDS))
    sharded = make_runtime(replace(rt.settings, shards=SHARDS), rt.db, rt.clock, rt.worker_id)
    monkeypatch.setattr("targets.operator.runtime_for", lambda settings: sharded)
    return sharded


def doctor(capsys: Any, *args: str) -> tuple[int, dict[str, dict[str, Any]]]:
    capsys.readouterr()
    code = main(["doctor", "--json", *args])
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    return code, {row["id"]: row for row in rows}


def seed_strays(db: Any) -> None:
    seed_message(db, "in-its-shard", shard=shard_of("in-its-shard", SHARDS))
    seed_message(db, "no-shard")  # written by hand, or before SHARDS was raised
    seed_message(db, "above", shard=SHARDS + 3)  # stored while SHARDS was larger
    seed_message(db, "a-string", shard="1")
    seed_message(db, "paused-no-shard", status="paused")  # sent again once resumed
    seed_message(db, "sent-no-shard", status="sent", next_run_at=None)  # done: left alone
    seed_rotation(db, "rotation-no-shard")


def seed_released_event(db: Any, doc_id: str, shard: int) -> None:
    """An event released for a retry (its first send was rate limited) and due again."""
    db.collection("events").document(doc_id).set(
        {
            "key": "stage-1:done",
            "delivery_id": f"e:{doc_id}",
            "created_at": T0,
            "callers": 1,
            "channel": "C0123ABCD",
            "text": "Framing is done",
            "attempts": 1,
            "status": "pending",
            "next_run_at": T0,
            "shard": shard,
        }
    )


def adopted(capsys: Any) -> dict[str, Any]:
    """The pass's `adopted` lines: each document's id and the shard it was put in."""
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    return {
        line.get("message_id") or line.get("rotation_id") or line.get("event_id"): line["shard"]
        for line in lines
        if line.get("status") == "adopted"
    }


def test_a_pass_puts_due_strays_in_their_shard_and_sends_them(sharded, db, slack, capsys):
    """A document the contract lets a service write straight to Firestore has no `shard`:
    with SHARDS above 1, the pass finds it all the same, puts it in its shard (one line
    each) and sends it; so is a released event stored while SHARDS was larger. The doctor is
    left with what is not due: the paused one."""
    seed_strays(db)
    seed_released_event(db, "event-old-modulus", SHARDS + 1)
    capsys.readouterr()

    run_pass(sharded)

    assert sorted(slack.delivery_ids()) == sorted(
        [
            "m:in-its-shard:20270104T090000Z",
            "m:no-shard:20270104T090000Z",
            "m:above:20270104T090000Z",
            "m:a-string:20270104T090000Z",
            "r:rotation-no-shard:2027-01-04",
            "e:event-old-modulus",
        ]
    )
    strays = ("no-shard", "above", "a-string", "rotation-no-shard", "event-old-modulus")
    assert adopted(capsys) == {doc_id: shard_of(doc_id, SHARDS) for doc_id in strays}
    assert message(db, "above")["shard"] == shard_of("above", SHARDS)
    assert rotation(db, "rotation-no-shard")["shard"] == shard_of("rotation-no-shard", SHARDS)
    assert "shard" not in message(db, "sent-no-shard")

    code, found = doctor(capsys)
    assert (code, {doc_id: row["code"] for doc_id, row in found.items()}) == (
        1,
        {"paused-no-shard": "missing_shard"},
    )
    code, fixed = doctor(capsys, "--fix")
    assert (code, fixed["paused-no-shard"]["fixed"]) == (0, True)
    assert doctor(capsys) == (0, {})


def test_one_fix_sets_both_a_missing_next_run_at_and_the_shard(sharded, db, capsys):
    seed_message(db, "moved-in", next_run_at=None)

    code, fixed = doctor(capsys, "--fix")

    assert (code, fixed["moved-in"]["code"], fixed["moved-in"]["fixed"]) == (
        0,
        "missing_next_run_at",
        True,
    )
    assert message(db, "moved-in")["shard"] == shard_of("moved-in", SHARDS)


@pytest.mark.usefixtures("cli_on_the_test_clock")
def test_with_one_shard_no_document_needs_one(rt, db, capsys):
    seed_strays(db)

    assert doctor(capsys) == (0, {})


def test_a_dry_run_previews_the_due_strays_a_pass_would_send(sharded, db, slack):
    """With SHARDS above 1, a dry run says what the real pass would send: due documents in
    no shard included (the pass puts them in their shard first); it writes nothing."""
    seed_strays(db)

    previewed = run_pass(sharded, dry_run=True)

    assert sorted(p["id"] for p in previewed["previews"]) == sorted(
        ["in-its-shard", "no-shard", "above", "a-string", "rotation-no-shard"]
    )
    assert "shard" not in message(db, "no-shard") and slack.posts() == []
