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
from processor.kind_pass import run_kind
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
    queue = _ReadTogether(**{f.name: getattr(MESSAGE_KIND.queue, f.name) for f in fields(Queue)})
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
