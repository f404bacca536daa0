"""Delivering one page of due documents in lanes (processor.lanes): at most one delivery in
flight per lane, up to `parallel` lanes at once, the shallowest lanes' oldest documents
first, each channel paced. Each delivery goes to a Dispatcher; the finished sends are
recorded in batched commits, all of them before the page ends.

The clock is only waited on (the pacer's sleep) while nothing is in flight, so under a
test's FixedClock no delivery ever sees time move under it and a pass stays deterministic;
with the system clock a lane whose slot comes up is begun as soon as a delivery finishes or
the slot arrives.

Once another worker has won a claim (`ChannelSlots.contended`), a lane whose channel this
worker does not hold is a probe: at most PROBES are in flight at once, and the slots of the
next CHECKS lanes are read in one batched get before one begins."""

from __future__ import annotations

from collections import Counter
from concurrent.futures import ALL_COMPLETED, FIRST_COMPLETED, Future, wait
from datetime import datetime
from typing import Any

from core.runtime import Runtime
from core.store import ChannelRange, Snapshot
from processor.channel_slots import ChannelSlots, slot_id
from processor.deliver import Sent, record_sends
from processor.dispatch import Dispatcher, Done
from processor.due_page import channel_of
from processor.lanes import Lane, LaneState
from processor.outcome import Result, tally
from processor.pacing import ChannelPacer
from processor.pass_counts import COUNTS_LOCK, io_error, raised

# With other workers about, lanes begun at once whose channel this worker does not hold: a
# lost race costs a claim commit each, so few are risked at a time.
PROBES = 4
# Lanes whose slots one batched read covers, when a probe is about to begin.
CHECKS = 16
# Finished sends recorded in one commit (two writes each; Firestore allows 500 per commit).
RECORD_BATCH = 50
# The longest the loop waits on a delivery before looking again for a lane whose slot came.
_MAX_POLL = 0.05


class Page:
    """One page's delivery (`deliver`, once); what it leaves to the pass is in `failed`,
    `skipped` and `share`."""

    def __init__(
        self,
        rt: Runtime,
        dispatcher: Dispatcher,
        pacer: ChannelPacer,
        counts: Counter[str],
        slots: ChannelSlots,
        *,
        parallel: int,
        backlog: bool = False,
        collection: str,
    ) -> None:
        self._rt = rt
        self._dispatcher = dispatcher
        self._pacer = pacer
        self._counts = counts
        self._slots = slots
        self._parallel = parallel  # deliveries in flight at most
        self._backlog = backlog  # more is due than the page holds
        self._collection = collection  # the kind's, named in a failure's log line
        # Another worker won a claim here: the lanes of channels this worker does not hold
        # (begun on this page, or its slot says so) are probably that worker's now, and wait
        # for the page's next read; the others go on.
        self.stale = False
        # Ids to read again: left unattempted when the page went stale, or lost to a slot.
        self.skipped: list[str] = []
        # Once stale: the channels from the first lane this worker took to the last, its to
        # read from then on (None: it took none, or the lanes had no channels).
        self.share: ChannelRange | None = None
        # A read or write of the page raised out of it: the page ended there (see deliver).
        self.failed = False
        self._lanes: list[Lane] = []
        self._live: list[Lane] = []  # lanes that may still begin a delivery
        self._busy: dict[Future[Done], Lane] = {}  # deliveries in flight
        self._probes: set[Lane] = set()  # probes in flight
        self._unrecorded: list[Sent] = []

    def deliver(self, lanes: list[list[Snapshot]]) -> None:
        """Deliver the lanes. Whatever raises on the way, every delivery in flight is
        awaited and every send recorded before this returns; the page then ends (`failed`),
        and what it did not begin stays due for the next pass."""
        try:
            self._lanes = self._make_lanes(lanes)
            self._live = list(self._lanes)
            self._run()
            if self.stale:
                self._hand_back()
        except Exception as exc:
            self.failed = True
            io_error(self._counts, "delivering a page raised", exc, collection=self._collection)
        finally:
            self._settle()

    def _make_lanes(self, lanes: list[list[Snapshot]]) -> list[Lane]:
        now = self._rt.clock.now()
        made = []
        for index, docs in enumerate(lanes):
            channel = channel_of(docs[0])
            held = channel is not None and self._slots.mine(channel, now)
            made.append(Lane(index, channel, docs, held=held, backlog=self._backlog))
        return made

    def _run(self) -> None:
        """Until no lane can begin: begin the lanes whose slot has come, then take the
        deliveries as they finish; with none in flight, wait for the earliest slot."""
        while True:
            self._begin_ready(self._rt.clock.now())
            if not self._busy or len(self._unrecorded) >= RECORD_BATCH:
                # Before the pass waits on the clock, or ends, every send is on record.
                self._record()
            if self._busy:
                self._finish_next()
                continue
            waiting = self._waiting()
            if not waiting:
                return
            # Nothing in flight: the one place the pass waits on the clock (acquire's sleep).
            self._begin(min(waiting, key=self._slot_key))

    def _waiting(self) -> list[Lane]:
        """Lanes that could begin a delivery, shallowest first (oldest first within)."""
        # Once done, lost, deferred, or left unbegun on a stale page, a lane stays so.
        self._live = [
            lane
            for lane in self._live
            if lane.state in (LaneState.WAITING, LaneState.RUNNING)
            and (lane.ours or not self.stale)
        ]
        waiting = (lane for lane in self._live if lane.state is LaneState.WAITING)
        return sorted(waiting, key=lambda lane: (lane.begun, lane.index))

    def _begin_ready(self, now: datetime) -> None:
        """Begin each waiting lane whose slot has come, while fewer than `parallel` are in
        flight (and, on a contended page, fewer than PROBES probes)."""
        order = self._waiting()
        for k, lane in enumerate(order):
            if len(self._busy) >= self._parallel:
                return
            if self._slots.contended and not lane.ours:
                if len(self._probes) >= PROBES:
                    continue
                if not lane.checked:
                    self._check(order[k : k + CHECKS])
                if lane.state is LaneState.LOST:
                    continue  # another worker holds its channel
            slot = self._pacer.ready_at(lane.channel) if lane.channel is not None else None
            if slot is None or slot <= now:
                self._begin(lane)  # its slot has come: acquire takes it without waiting

    def _begin(self, lane: Lane) -> None:
        """Take the lane's slot (waiting for it) and hand its next document to the
        dispatcher; a slot beyond the pass's budget defers the rest of the lane unclaimed,
        for the next pass."""
        if lane.channel is not None and not self._pacer.acquire(lane.channel):
            with COUNTS_LOCK:
                self._counts["deferred"] += len(lane.rest)
            lane.state = LaneState.DEFERRED
            return
        if self._slots.contended and not lane.ours:
            # Nothing says another worker is not claiming this channel's message right now.
            self._probes.add(lane)
        snap = lane.begin()
        self._busy[self._dispatcher.start(lane, snap)] = lane

    def _finish_next(self) -> None:
        """Wait for a delivery to finish (or a slot to come) and take what finished."""
        timeout = self._until_next_slot(self._waiting())
        done, _ = wait(self._busy, timeout=timeout, return_when=FIRST_COMPLETED)
        for future in done:
            lane = self._busy.pop(future)
            self._probes.discard(lane)
            outcome = future.result()
            self._take(lane, outcome)
            if outcome.outcome is Result.DUPLICATE:
                # Another worker won: the message, or only the channel's slot. The page is
                # read again once this one is done, and offers whatever of this lane is
                # still due then (this document too) to whichever worker the slots leave
                # it to.
                self.stale = True
                lane.give_back()
            else:
                lane.end()

    def _take(self, lane: Lane, done: Done) -> None:
        """A delivery finished: its channel is paced from Slack's answer, its send kept for
        the next record."""
        if done.answered is not None and lane.channel is not None:
            self._pacer.answered(lane.channel, done.answered)
        if isinstance(done.outcome, Sent):
            self._unrecorded.append(done.outcome)

    def _check(self, candidates: list[Lane]) -> None:
        """Read the slots of the next lanes a probe may begin, in one batched get: a lane
        whose channel another worker holds is left to it, the others keep its pace."""
        batch = [lane for lane in candidates if not lane.checked and not lane.ours]
        for lane in batch:
            lane.checked = True
        now = self._rt.clock.now()
        slotted = {lane: c for lane in batch if (c := lane.slot_channel) is not None}
        try:
            self._slots.read(slotted.values(), now)
        except Exception as exc:
            # Unread, these lanes go on as on a page with no other worker about: a claim's
            # own slot write still fails whole where another worker took the channel.
            ids = sorted(slot_id(c, now) for c in slotted.values())
            io_error(self._counts, "reading pacing slots failed", exc, slots=ids)
        for lane, channel in slotted.items():
            if self._slots.held_elsewhere(channel, now):
                lane.state = LaneState.LOST
            elif (next_post_at := self._slots.next_post_at(channel, now)) is not None:
                self._pacer.hold(channel, next_post_at)

    def _slot_key(self, lane: Lane) -> tuple[Any, ...]:
        slot = self._pacer.ready_at(lane.channel) if lane.channel else None
        return (slot or self._rt.clock.now(), lane.begun, lane.index)

    def _until_next_slot(self, waiting: list[Lane]) -> float:
        """How long to wait for a delivery to finish before looking again for a lane whose
        slot has come; short, and never zero (a FixedClock does not move meanwhile)."""
        now = self._rt.clock.now()
        slots = [self._pacer.ready_at(c) for lane in waiting if (c := lane.channel) is not None]
        ahead = [(slot - now).total_seconds() for slot in slots if slot is not None]
        return max(0.001, min([s for s in ahead if s > 0] + [_MAX_POLL]))

    def _hand_back(self) -> None:
        """The page went stale: what this worker did not begin (but did not defer) is read
        again, from its share."""
        for lane in self._lanes:
            if lane.state is not LaneState.DEFERRED:
                self.skipped.extend(snap.id for snap in lane.rest)
        self.share = _share(self._lanes)

    def _settle(self) -> None:
        """Await the deliveries still in flight and record every send (the page is over)."""
        done, _ = wait(self._busy, return_when=ALL_COMPLETED)
        busy, self._busy = self._busy, {}
        for future in done:
            try:
                outcome = future.result()
            except Exception as exc:  # its send, if any, stays under its lease: reconciled
                io_error(self._counts, "a delivery raised after its claim", exc)
                continue
            self._take(busy[future], outcome)
        self._record()

    def _record(self) -> None:
        """Record the finished sends, one commit for all of them (see finalize_many)."""
        sends, self._unrecorded = self._unrecorded, []
        if not sends:
            return
        try:
            results = record_sends(self._rt, sends)
        except Exception as exc:
            # Not recorded: every claim stays under its lease; reconciliation asks Slack.
            raised(self._counts, [s.claim.subject_id for s in sends], exc)
            return
        with COUNTS_LOCK:
            for result in results:
                tally(self._counts, result)


def _share(lanes: list[Lane]) -> ChannelRange | None:
    """The channels from the first lane this worker took a message of to the last, as a
    range (the lanes before the first were lost or never begun: another worker began there).
    Lanes are in channel order from their start, so a range that passes the last channel
    goes to the end (channels taken past that point are left out). Lost channels within it
    are read again and left to their holders; the channels taken beyond a lost one are this
    worker's to go on with (their slots say so), and other workers leave them."""
    taken = [i for i, lane in enumerate(lanes) if lane.begun > 0]
    low = lanes[taken[0]].channel if taken else None
    if low is None:
        return None
    end = taken[-1] + 1
    high = lanes[end].channel if end < len(lanes) else None
    return ChannelRange(low, high if high is not None and high > low else None)
