"""Due documents in no shard under DISPATCH=pubsub with SHARDS above 1, through the `tick` and
`deliver` targets: the scan of shard 0 puts them in their shard when its sweep runs (every
SWEEP_EVERY), and their shard's next scan publishes them once; the ticks themselves read no
due page, so a backlog costs no read per waiting document per tick.

Reads are counted at the Firestore client's gRPC channel (bench.rpc), by collection."""

from __future__ import annotations

import itertools
import json
from datetime import datetime, timedelta
from typing import Any

import pytest

from bench.rpc import CountedClient, RpcCounter
from core.models import message_delivery_id
from core.shards import shard_of
from core.store import MESSAGES
from processor.scan import SWEEP_EVERY
from tests.fixtures.clock import T0
from tests.fixtures.messages import message, seed_message
from tests.fixtures.pubsub import Pulled, Subscription, body_of, push
from tests.fixtures.runtime import make_runtime
from tests.fixtures.tick import answer, at, bearer, tick

SHARDS = 4
MINUTE = timedelta(minutes=1)


@pytest.fixture
def reads(
    pubsub: Subscription, db: Any, clock: Any, monkeypatch: pytest.MonkeyPatch
) -> dict[str, RpcCounter]:
    """The Firestore reads of the ticks and of `deliver` (the shards' scans), apart: each
    runtime on a client whose channel counts. SHARDS=4 for both."""
    monkeypatch.setenv("SHARDS", str(SHARDS))
    counters = {"tick": RpcCounter(), "deliver": RpcCounter()}
    instances = itertools.count(1)
    monkeypatch.setattr(
        "targets.tick.runtime_for",
        lambda s: make_runtime(s, CountedClient(db.project, counters["tick"]), clock, "tick"),
    )
    monkeypatch.setattr(
        "targets.deliver.runtime_for",
        lambda s: make_runtime(
            s, CountedClient(db.project, counters["deliver"]), clock, f"deliver-{next(instances)}"
        ),
    )
    return counters


def tick_at(tick_app: Any, pubsub: Subscription, deliver: Any, clock: Any, now: datetime) -> Any:
    """One tick at `now` and its scan requests taken by `deliver` then; what they published."""
    clock.set(now)
    summary = answer(tick(tick_app.test_client(), headers=bearer(), body=at(now)), 200)
    assert (summary["scans"], summary["due"]) == (3 * SHARDS, 0)  # rotations, messages, events
    requests = pubsub.drain()
    assert {body_of(p)["kind"] for p in requests} == {"scan"}
    assert all(push(deliver, p) == 200 for p in requests)
    occurrences: list[Pulled] = pubsub.drain()
    return occurrences


def adopted(capsys: pytest.CaptureFixture[str]) -> dict[str, int]:
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line]
    return {line["message_id"]: line["shard"] for line in lines if line.get("status") == "adopted"}


def test_a_due_document_in_no_shard_is_adopted_at_the_sweep_then_published_and_posted_once(
    tick_app, pubsub, deliver, reads, db, slack, clock, capsys
):
    tick_at(tick_app, pubsub, deliver, clock, T0)  # the shards' first scans: each sweeps
    # Written straight to Firestore by another service: no shard, no updated_at.
    seed_message(db, "no-shard", next_run_at=T0 + MINUTE)
    capsys.readouterr()

    published: list[Pulled] = []
    sweep = int(SWEEP_EVERY / MINUTE)
    for n in range(1, sweep):  # no scan finds it before shard 0's next sweep
        published += tick_at(tick_app, pubsub, deliver, clock, T0 + n * MINUTE)
    assert (published, adopted(capsys)) == ([], {})
    assert "shard" not in message(db, "no-shard")

    for n in range(sweep, sweep + 4):  # adopted at the sweep, published by its shard's scan
        published += tick_at(tick_app, pubsub, deliver, clock, T0 + n * MINUTE)
    assert adopted(capsys) == {"no-shard": shard_of("no-shard", SHARDS)}
    assert [body_of(p)["subject_id"] for p in published] == ["no-shard"]  # once
    assert push(deliver, published[0]) == 200
    assert slack.delivery_ids() == [message_delivery_id("no-shard", T0 + MINUTE)]


def test_the_ticks_of_a_five_tick_backlog_read_no_due_page(
    tick_app, pubsub, deliver, reads, db, slack, clock
):
    """With SHARDS above 1 the tick reads no due document, not even looking for documents in
    no shard; after the first, the backlog's scans read none of it either (their queries
    start from the marks)."""
    backlog = [f"b{i:02d}" for i in range(40)]
    for i, doc_id in enumerate(backlog):  # in their shards, as the API writes them
        seed_message(db, doc_id, channel=f"C0CHAN{i % 8:03d}", shard=shard_of(doc_id, SHARDS))

    first = tick_at(tick_app, pubsub, deliver, clock, T0)
    assert sorted(body_of(p)["subject_id"] for p in first) == backlog
    reads["deliver"].reset()
    later = [tick_at(tick_app, pubsub, deliver, clock, T0 + n * MINUTE) for n in range(1, 5)]

    assert later == [[], [], [], []]  # still waiting, published once
    assert reads["tick"].snapshot()["reads_by_collection"].get(MESSAGES, 0) == 0
    assert reads["deliver"].snapshot()["reads_by_collection"].get(MESSAGES, 0) == 0
