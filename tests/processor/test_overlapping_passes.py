"""Passes that overlap over one page (a pass running past its minute, a trigger fired twice,
`targets.worker` beside the tick): each message is posted once, nothing is left, and neither
pass waits for a message the other already took."""

from __future__ import annotations

import threading
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, fields, replace
from typing import Any

from core.models import message_delivery_id
from core.queues import Queue
from core.store import Snapshot
from messages.kind import MESSAGE_KIND
from processor import kind_pass
from processor.kind_pass import run_kind
from processor.lanes import lanes, rotated
from tests.fixtures.clock import T0
from tests.fixtures.messages import message, seed_message
from tests.fixtures.runtime import make_runtime


@dataclass(frozen=True)
class _ReadTogether(Queue):
    """The messages' queue, whose due read returns only once both passes have read: both
    hold the same page before either claims from it."""

    together: threading.Barrier = field(default_factory=lambda: threading.Barrier(2), compare=False)

    def due(self, *args: Any, **kwargs: Any) -> list[Snapshot]:
        page = super().due(*args, **kwargs)
        self.together.wait(timeout=60)
        return page


def test_two_passes_over_one_page_post_each_once_and_neither_waits(settings, db, slack, clock):
    mids = [seed_message(db, channel=f"C{n:04d}OVL") for n in range(12)]
    queue = _ReadTogether(**_queue_fields())
    kind = replace(MESSAGE_KIND, queue=queue)
    workers = [make_runtime(settings, db, clock, w) for w in ("worker-a", "worker-b")]

    with ThreadPoolExecutor(max_workers=2) as pool:
        summaries = list(pool.map(lambda rt: run_kind(rt, kind), workers))

    posted = Counter(slack.delivery_ids())
    assert posted == Counter(message_delivery_id(mid, T0) for mid in mids)  # each once
    assert {message(db, mid)["status"] for mid in mids} == {"sent"}  # nothing left
    assert sum(s["sent"] for s in summaries) == len(mids)
    # A claim lost to the other pass took its message: no pass waited on the channel's slot
    # to claim it again (a second try could only lose), so both ended at once.
    assert clock.slept == []


@dataclass(frozen=True)
class _AnotherPassTakes(Queue):
    """The messages' queue as worker-a reads it, with worker-b delivering a stretch of the
    page (places 10..29 of worker-a's order) between worker-a's read and its claims: worker-a
    meets worker-b's stretch ten claims in."""

    other: Any = field(default=None, compare=False)
    taken: list[str] = field(default_factory=list, compare=False)

    def due(self, db: Any, now: Any, *args: Any, **kwargs: Any) -> list[Snapshot]:
        page = super().due(db, now, *args, **kwargs)
        if self.taken or self.other is None:
            return page
        # worker-a's order, as processor.kind_pass rotates it (its worker id and start).
        order = rotated(lanes(page), f"worker-a {now.isoformat()}")
        stretch = [docs[0] for docs in order[10:30]]
        self.taken.extend(snap.id for snap in stretch)
        run_kind(self.other, replace(MESSAGE_KIND, queue=_Only(**_queue_fields(), ids=self.taken)))
        return page


@dataclass(frozen=True)
class _Only(Queue):
    ids: list[str] = field(default_factory=list, compare=False)

    def due(self, *args: Any, **kwargs: Any) -> list[Snapshot]:
        return [snap for snap in super().due(*args, **kwargs) if snap.id in self.ids]


def _queue_fields() -> dict[str, Any]:
    return {f.name: getattr(MESSAGE_KIND.queue, f.name) for f in fields(Queue)}


def test_a_pass_that_meets_another_passs_stretch_jumps_past_it_and_delivers_the_rest(
    settings, db, slack, clock, monkeypatch
):
    # One delivery in flight at a time, so the pass's order shows in what it claims.
    monkeypatch.setattr(kind_pass, "PARALLEL_POSTS", 1)
    mids = [seed_message(db, channel=f"C{n:04d}JMP") for n in range(60)]
    worker_b = make_runtime(settings, db, clock, "worker-b")
    queue = _AnotherPassTakes(**_queue_fields(), other=worker_b)
    worker_a = make_runtime(settings, db, clock, "worker-a")

    summary = run_kind(worker_a, replace(MESSAGE_KIND, queue=queue))

    assert len(queue.taken) == 20
    posted = Counter(slack.delivery_ids())
    assert posted == Counter(message_delivery_id(mid, T0) for mid in mids)  # each once
    # worker-a posted all 40 outside worker-b's stretch in this one pass: it did not end
    # its page where it met the stretch, ten in, nor claim its way through it.
    assert summary["sent"] == 40
    assert summary["duplicates"] < len(queue.taken)
