"""The sharded due scan: a `shard` from a stable hash of the document id, set on create,
and a due query that reads every shard and still answers oldest first within its limit."""

from __future__ import annotations

import os
import subprocess
import sys
from collections import Counter
from dataclasses import replace
from datetime import timedelta
from typing import Any

import pytest

import core.queues
from core.errors import SettingsError
from core.settings import Settings
from core.shards import shard_of
from messages.kind import MESSAGE_KIND
from rotations.kind import ROTATION_DAY_KIND
from targets.kinds import run_pass
from tests.fixtures.api import call
from tests.fixtures.clock import T0
from tests.fixtures.messages import ONE_OFF, message, seed_message
from tests.fixtures.rotations import ROTATION, create, rotation, seed_rotation
from tests.fixtures.runtime import ROOT, make_runtime

SHARDS = 4


@pytest.fixture
def sharded(rt: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    """A runtime with SHARDS=4, and the environment the targets read their settings from."""
    monkeypatch.setenv("SHARDS", str(SHARDS))
    return make_runtime(replace(rt.settings, shards=SHARDS), rt.db, rt.clock, rt.worker_id)


@pytest.fixture
def shard_reads(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """Documents read by each query the due scan makes, keyed by its shard filter."""
    reads: Counter[str] = Counter()
    real = core.queues._due_in

    def counted(*args: Any) -> list[Any]:
        page = real(*args)
        shard = [f.value for f in args[-1] if f.field_path == "shard"]
        reads[f"shard={shard[0]}" if shard else "unsharded"] += len(page)
        reads["queries"] += 1
        return page

    monkeypatch.setattr(core.queues, "_due_in", counted)
    return reads


def _seed_spread(db: Any, count: int) -> list[str]:
    """`count` due messages, each stored in its own id's shard, oldest first by id number
    (m-00 is the oldest), written in a shuffled order."""
    ids = [f"m-{n:02d}" for n in range(count)]
    for n in reversed(range(count)):
        next_run = T0 - timedelta(minutes=count - n)
        seed_message(db, ids[n], next_run_at=next_run, shard=shard_of(ids[n], SHARDS))
    return ids


def test_the_shard_is_the_same_in_every_process():
    ids = [f"doc-{n}" for n in range(50)]
    script = (
        "import sys; from core.shards import shard_of; "
        "print([shard_of(i, 7) for i in sys.argv[1:]])"
    )
    answers = {
        subprocess.run(
            [sys.executable, "-c", script, *ids],
            cwd=ROOT,
            env={**os.environ, "PYTHONHASHSEED": seed},
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for seed in ("1", "2")
    }

    assert answers == {f"{[shard_of(i, 7) for i in ids]}\n"}
    assert set(shard_of(i, 7) for i in ids) == set(range(7))


@pytest.mark.parametrize("value", ["0", "-1", "two", "65"])
def test_a_bad_shards_setting_fails_naming_the_variable(env, monkeypatch, value):
    monkeypatch.setenv("SHARDS", value)

    with pytest.raises(SettingsError, match="SHARDS"):
        Settings.from_env()


def test_shards_default_to_one(env):
    assert Settings.from_env().shards == 1


def test_every_shard_is_scanned_and_the_oldest_come_first_within_the_limit(
    sharded, db, shard_reads
):
    ids = _seed_spread(db, 12)
    assert len({shard_of(i, SHARDS) for i in ids}) == SHARDS  # every shard holds some

    everything = [snap.id for snap in MESSAGE_KIND.queue.due(db, T0, 50, shards=SHARDS)]
    shard_reads.clear()
    oldest = [snap.id for snap in MESSAGE_KIND.queue.due(db, T0, 5, shards=SHARDS)]

    assert everything == ids
    assert oldest == ids[:5]
    # One query per shard, none reading more than the limit.
    assert shard_reads["queries"] == SHARDS
    assert all(shard_reads[f"shard={k}"] <= 5 for k in range(SHARDS))
    assert shard_reads["unsharded"] == 0


def test_exclusions_still_apply_in_every_shard(sharded, db):
    ids = _seed_spread(db, 8)
    db.collection("scheduled_messages").document(ids[3]).update({"channel": "C0BUSY001"})

    left = MESSAGE_KIND.queue.due(db, T0, 50, excluding=["C0BUSY001"], shards=SHARDS)
    assert [s.id for s in left] == ids[:3] + ids[4:]


def test_due_rotations_are_found_in_every_shard(sharded, db):
    ids = [f"rot-{n}" for n in range(8)]
    for n, rid in enumerate(ids):
        seed_rotation(
            db, rid, shard=shard_of(rid, SHARDS), next_run_at=T0 - timedelta(minutes=8 - n)
        )

    assert [snap.id for snap in ROTATION_DAY_KIND.queue.due(db, T0, 50, shards=SHARDS)] == ids
    assert [snap.id for snap in ROTATION_DAY_KIND.queue.due(db, T0, 3, shards=SHARDS)] == ids[:3]


def test_with_one_shard_documents_without_a_shard_are_found(rt, db, slack, shard_reads):
    seed_message(db, "no-shard")
    seed_message(db, "old-modulus", shard=3)
    seed_rotation(db, "rotation-no-shard")

    assert {snap.id for snap in MESSAGE_KIND.queue.due(db, T0, 10)} == {"no-shard", "old-modulus"}
    assert shard_reads == Counter({"unsharded": 2, "queries": 1})
    run_pass(rt)
    assert sorted(slack.delivery_ids()) == [
        "m:no-shard:20270104T090000Z",
        "m:old-modulus:20270104T090000Z",
        "r:rotation-no-shard:2027-01-04",
    ]


def test_documents_stored_under_fewer_shards_are_found_after_shards_is_raised(sharded, db):
    # Created with SHARDS=2, read with SHARDS=4: shards 0 and 1 are still read.
    for n in range(6):
        seed_message(db, f"m-{n}", shard=shard_of(f"m-{n}", 2), next_run_at=T0 - timedelta(n))

    assert {snap.id for snap in MESSAGE_KIND.queue.due(db, T0, 50, shards=SHARDS)} == {
        f"m-{n}" for n in range(6)
    }


def test_api_creates_store_the_shard_of_their_id(sharded, api, db):
    status, created = call(api, "POST", "/messages", ONE_OFF)
    made = create(api, ROTATION)

    assert status == 201
    assert message(db, created["id"])["shard"] == shard_of(created["id"], SHARDS)
    assert rotation(db, made["id"])["shard"] == shard_of(made["id"], SHARDS)


def test_messages_created_through_the_api_are_all_sent_across_shards(sharded, api, db, slack):
    created = [call(api, "POST", "/messages", ONE_OFF | {"text": f"n{n}"})[1] for n in range(8)]
    assert len({message(db, c["id"])["shard"] for c in created}) > 1

    sharded.clock.advance(timedelta(hours=3))
    run_pass(sharded)

    assert sorted(slack.delivery_ids()) == sorted(f"m:{c['id']}:20270104T120000Z" for c in created)
