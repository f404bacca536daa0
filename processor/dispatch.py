"""Handing a lane's next document to what delivers it. The pass loop
(processor.deliver_page) knows only `Dispatcher.start`; `InProcess` claims and sends on the
pass's thread pool, leaving the send to be recorded by the loop."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from concurrent.futures import Executor, Future
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from core.runtime import Runtime
from core.store import Snapshot
from processor.channel_slots import ChannelSlots, Slot
from processor.deliver import Sent
from processor.lanes import Lane
from processor.outcome import Result, tally
from processor.pass_counts import COUNTS_LOCK, raised

# Claims a document (with the channel's pacing slots) and posts it: deliver.claim_and_send.
ClaimAndSend = Callable[[Runtime, Snapshot, tuple[Slot, ...]], Result | Sent]


@dataclass(frozen=True)
class Done:
    answered: datetime | None  # when a claimed delivery's post was answered (pacing's start)
    outcome: Result | Sent | None  # Sent: posted (or tried), to be recorded; None: it raised
    # A claim lost to the channel's pacing slot (another pass posted there): the slot's time,
    # when the lane may claim the document again.
    retry_at: datetime | None = None


class Dispatcher(Protocol):
    def start(self, lane: Lane, snap: Snapshot) -> Future[Done]:
        """Begin delivering `snap`, the document `lane` has just begun. Called on the loop's
        thread; the future says how the delivery went, its counts already in the pass's
        summary."""
        ...


@dataclass(frozen=True)
class InProcess:
    """Claims and sends on the pass's thread pool; one document's trouble is logged and
    counted, never raised (anything it claimed stays under its lease for reconciliation)."""

    rt: Runtime
    pool: Executor
    slots: ChannelSlots
    counts: Counter[str]
    claim_and_send: ClaimAndSend

    def start(self, lane: Lane, snap: Snapshot) -> Future[Done]:
        return self.pool.submit(self._one, snap, lane.slot_channel)

    def _one(self, snap: Snapshot, slotted: str | None) -> Done:
        started = self.rt.clock.now()
        slots = self.slots.for_claim(slotted, started) if slotted else ()
        try:
            outcome = self.claim_and_send(self.rt, snap, slots)
        except Exception as exc:
            raised(self.counts, [snap.id], exc)
            return Done(None, None)
        if isinstance(outcome, Sent):
            self.slots.claimed(slots, outcome.claim.slot_versions, started)
            with COUNTS_LOCK:
                self.counts["claimed"] += 1
            return Done(outcome.answered_at or self.rt.clock.now(), outcome)
        retry_at = None
        if outcome is Result.DUPLICATE and slotted:
            now = self.rt.clock.now()
            if self.slots.lost(slots, now, snap):  # only the slot was lost: try again
                retry_at = self.slots.next_post_at(slotted, now)
        with COUNTS_LOCK:
            tally(self.counts, outcome)
        return Done(None, outcome, retry_at)
