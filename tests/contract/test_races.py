"""Races, through every interleaving of the `# pragma: SYNCPOINT` lines
(test_utils.orchestrate): two workers claiming one due document, and a late worker's
finalize against a reconciler taking its expired lease over; then passes running at once.
Whatever the order, one claim, one ledger entry, one post."""

from __future__ import annotations

import itertools
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from math import comb
from typing import Any

from processor.abc import Claim
from processor.claim import claim_occurrence
from processor.deliver import send
from processor.finalize import finalize
from processor.reconcile import reconcile_kind
from tests.contract.subjects import CHANNEL, Seeded, Subject, World, one_pass
from tests.fixtures.deliveries import ledger
from tests.fixtures.runtime import make_runtime
from tests.support.interleave import orchestrate


class Rounds:
    """orchestrate runs each thread once per interleaving: the first to start a round seeds
    a fresh due document, the second races for it."""

    def __init__(self, world: World, subject: Subject) -> None:
        self.world, self.subject = world, subject
        self.arrivals = itertools.count()
        self.seeded: list[Seeded] = []

    def this_round(self) -> Seeded:
        if next(self.arrivals) % 2 == 0:
            self.seeded.append(self.subject.seed(self.world, CHANNEL, {}))
        return self.seeded[-1]


def _read_then_claim(rt: Any, subject: Subject, seeded: Seeded) -> Any:
    """A worker's read of the due document and its claim, with a turn between the two."""
    ref = rt.db.collection(subject.kind.collection).document(seeded.id)
    if subject.claim_syncpoint == "reclaim":
        reread = ref.get()  # pragma: SYNCPOINT reclaim
        return claim_occurrence(rt, subject.kind, reread)
    snap = ref.get()  # pragma: SYNCPOINT claim
    return claim_occurrence(rt, subject.kind, snap)


def test_two_workers_claiming_one_due_document_claim_it_once_in_every_interleaving(
    settings, world, subject
):
    rounds = Rounds(world, subject)
    results: dict[str, list[Any]] = {}

    def worker(name: str) -> Any:
        rt = make_runtime(settings, world.db, world.clock, name)

        def run() -> None:
            seeded = rounds.this_round()
            result = _read_then_claim(rt, subject, seeded)
            results.setdefault(seeded.id, []).append(result)
            if isinstance(result, Claim):  # the winner sends it
                finalize(rt, result, send(rt, result))

        return run

    counts = orchestrate(worker("worker-a"), worker("worker-b"), name=subject.claim_syncpoint)

    assert min(counts) >= 2  # each paused after its read and after its commit
    assert len(rounds.seeded) == comb(sum(counts), counts[0])
    for seeded in rounds.seeded:
        assert len([r for r in results[seeded.id] if isinstance(r, Claim)]) == 1
        assert len(results[seeded.id]) == 2
        assert list(subject.ledger_entries(world, seeded)) == [seeded.delivery_id]
        assert subject.delivered(subject.stored(world, seeded), seeded)
        assert ledger(world.db)[seeded.delivery_id]["status"] == "sent"
    posted = Counter(world.chat.delivery_ids())
    assert [posted[s.delivery_id] for s in rounds.seeded] == [1] * len(rounds.seeded)
    assert len(world.chat.posts()) == len(rounds.seeded)


def test_a_late_finalize_racing_reconciliation_settles_once_in_every_interleaving(
    settings, world, subject
):
    """A worker whose lease expired finishes as a reconciler takes the lease over: whoever
    commits first wins, the other is fenced, and the post is never repeated."""
    late = make_runtime(settings, world.db, world.clock, "worker-late")
    reconciler = make_runtime(settings, world.db, world.clock, "worker-reconciler")
    arrivals = itertools.count()
    rounds: list[tuple[Seeded, Claim[Any], Any]] = []

    def this_round() -> tuple[Seeded, Claim[Any], Any]:
        if next(arrivals) % 2 == 0:
            seeded = subject.seed(world, CHANNEL, {})
            snap = world.db.collection(subject.kind.collection).document(seeded.id).get()
            claim = claim_occurrence(late, subject.kind, snap)
            assert isinstance(claim, Claim)
            post = send(late, claim)  # Slack has it; the worker then stalls
            world.clock.advance(timedelta(seconds=settings.lease_seconds + 1))
            rounds.append((seeded, claim, post))
        return rounds[-1]

    def late_worker() -> None:
        _, claim, post = this_round()
        finalize(late, claim, post)

    def reconcile() -> None:
        this_round()
        reconcile_kind(reconciler, subject.kind)

    counts = orchestrate(late_worker, reconcile, name="lease")

    # Alone, the late worker pauses at its finalize commit; orchestrate also runs the
    # reconciler first.
    assert counts[0] >= 2
    assert len(rounds) == comb(sum(counts), counts[0]) >= 3
    for seeded, _, post in rounds:
        assert world.chat.delivery_ids().count(seeded.delivery_id) == 1
        entry = ledger(world.db)[seeded.delivery_id]
        assert (entry["status"], entry[world.chat.post_id_field]) == ("sent", post.ts)
        assert subject.delivered(subject.stored(world, seeded), seeded)


def test_passes_running_at_once_post_each_due_document_once(settings, world, subject):
    seeded = [subject.seed(world, f"C{n:04d}PASS", {}) for n in range(6)]
    workers = [make_runtime(settings, world.db, world.clock, f"worker-{n}") for n in range(4)]

    with ThreadPoolExecutor(max_workers=len(workers)) as pool:
        list(pool.map(lambda rt: one_pass(rt, subject), workers))

    posted = Counter(world.chat.delivery_ids())
    assert sum(posted.values()) == len(seeded)
    for one in seeded:
        assert posted[one.delivery_id] == 1, one
        assert ledger(world.db)[one.delivery_id]["status"] == "sent", one
        assert subject.delivered(subject.stored(world, one), one), one
