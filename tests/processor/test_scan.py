"""The scan of one shard (processor.scan.scan_shard) racing itself and a writer, in every
interleaving of its `# pragma: SYNCPOINT scan` points (its mark read, its mark write), against
the Firestore and Pub/Sub emulators: no document is ever left unpublished, none is
published more than twice, and once every scan is done none is published again."""

from __future__ import annotations

import itertools
from collections import Counter
from datetime import timedelta
from typing import Any

import pytest

from core.settings import Settings
from messages.kind import MESSAGE_KIND
from processor.scan import scan_shard
from tests.fixtures.clock import T0
from tests.fixtures.messages import seed_message
from tests.fixtures.pubsub import Subscription, body_of
from tests.fixtures.runtime import make_runtime
from tests.support.interleave import Rounds, orchestrate

# As every subject write stamps it (SubjectWrite.stamped), on the scans' clock.
STAMPED = {"next_run_at": T0 - timedelta(minutes=1), "updated_at": T0}


@pytest.fixture
def scans(db: Any, clock: Any, pubsub: Subscription) -> list[Any]:
    settings = Settings.from_env()
    return [make_runtime(settings, db, clock, f"scan-{n}") for n in (1, 2, 3)]


def published(pubsub: Subscription) -> Counter[str]:
    return Counter(body_of(p)["subject_id"] for p in pubsub.drain())


def test_two_scans_of_one_shard_at_once_lose_nothing_and_publish_at_most_twice(db, pubsub, scans):
    ids = (f"m{n:02d}" for n in itertools.count())
    rounds = Rounds(lambda: seed_message(db, next(ids), **STAMPED))

    def scan(rt: Any) -> Any:
        def run() -> None:
            rounds.message_for_this_round()
            scan_shard(rt, MESSAGE_KIND, 0, 1)

        return run

    orchestrate(scan(scans[0]), scan(scans[1]), name="scan")

    assert scan_shard(scans[2], MESSAGE_KIND, 0, 1)["published"] == 0
    counts = published(pubsub)
    assert sorted(counts) == sorted(rounds.messages)
    assert set(counts.values()) <= {1, 2}


def test_a_document_written_while_a_scan_runs_is_published_by_it_or_the_next(db, pubsub, scans):
    ids = (f"w{n:02d}" for n in itertools.count())
    written: list[str] = []

    def scan() -> None:
        scan_shard(scans[0], MESSAGE_KIND, 0, 1)

    def write() -> None:
        written.append(seed_message(db, next(ids), **STAMPED))  # pragma: SYNCPOINT scan

    orchestrate(scan, write, name="scan")

    scan_shard(scans[2], MESSAGE_KIND, 0, 1)  # the next scan, after them all
    assert scan_shard(scans[2], MESSAGE_KIND, 0, 1)["published"] == 0
    counts = published(pubsub)
    assert sorted(counts) == sorted(written)
    assert set(counts.values()) <= {1, 2}
