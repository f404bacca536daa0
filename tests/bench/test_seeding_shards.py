"""The scale-out runs' data (bench.scale_out seeds through bench.seeding): with SHARDS=N,
every seeded one-off is found by the product's sharded due query, each exactly once, so
the run's "every due document published" counts what a real tick can see."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from bench import seeding
from messages.kind import MESSAGE_KIND
from tests.fixtures.clock import T0


def test_seeded_with_shards_every_one_off_is_in_one_shard_of_the_due_query(db: Any) -> None:
    seeded = seeding.seed(db, "so-", 40, 8, T0, "SCALE", shards=4, threads=2)

    due = MESSAGE_KIND.queue.due(db, T0 + timedelta(seconds=1), 100, shards=4)

    assert sorted(snap.id for snap in due) == sorted(s.doc_id for s in seeded)
    assert MESSAGE_KIND.queue.outside_shards(db, T0 + timedelta(seconds=1), 100, 4) == []
