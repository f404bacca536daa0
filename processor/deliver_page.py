"""Delivering one page of due documents in lanes (processor.lanes): at most one delivery in
flight per lane, up to `parallel` lanes at once, the shallowest lanes' oldest documents
first, each channel paced. Each delivery goes to a Dispatcher; the finished sends are
recorded in batched commits, all of them before the page ends.

The clock is only waited on (the pacer's sleep) while nothing is in flight, so under a
test's FixedClock no delivery ever sees time move under it and a pass stays deterministic;
with the system clock a lane whose slot comes up is begun as soon as a delivery finishes or
the slot arrives.

A claim lost to an overlapping pass only for the channel's pacing slot is claimed again at
the slot's time, once; a claim lost again, or for the occurrence, ends its lane: the rest of
the channel stays due for the next pass.

Overlapping passes begin their pages at places of their own (processor.lanes.rotated) and
go round in the same direction, so a pass that loses a claim for the occurrence has met
another pass's stretch, which goes on ahead of it. It jumps: the page goes on from the
middle of what it has not begun beyond the lost lane, and leaves the stretch between for
last. Two passes that meet so split what is left between them instead of one following the
other, losing claim after claim. After a jump the page begins deliveries only while fewer
than JUMP_WINDOW are in flight, a window that widens by one for each claim won there, so a
new place that another pass holds too costs that many lost claims, not `parallel`.
LOSING_STREAK claims lost in a row for the occurrence (no claim won between them) end the
page: other passes hold what is left of it, and it stays due for the next pass, whose read
holds only what is still due. A claim begun before the last jump, lost after it, says
nothing of the new place and does not count."""

from __future__ import annotations

from collections import Counter
from concurrent.futures import ALL_COMPLETED, FIRST_COMPLETED, Future, wait
from datetime import datetime
from typing import Any

from core.platform import PLATFORMS, Destination
from core.runtime import Runtime
from core.store import Snapshot
from processor.deliver import Sent, record_sends
from processor.dispatch import Dispatcher, Done
from processor.due_page import channel_of
from processor.lanes import Lane, LaneState
from processor.outcome import Result, tally
from processor.pacing import ChannelPacer
from processor.pass_counts import COUNTS_LOCK, io_error, raised

# Finished sends recorded in one commit (two writes each; Firestore allows 500 per commit).
RECORD_BATCH = 50
# The longest the loop waits on a delivery before looking again for a lane whose slot came.
_MAX_POLL = 0.05
# Claims lost in a row for the occurrence, each begun since the page's last jump (no claim
# won between them), after which the page begins no more lanes: overlapping passes hold what
# is left of it, and the next pass's read finds only what is still due, for less than one
# failed commit each.
LOSING_STREAK = 8
# Deliveries in flight just after a jump: the new place may be another pass's too, and only
# this many claims are lost if it is. The window widens by one for each claim won there, up
# to the page's `parallel`.
JUMP_WINDOW = 2


class Page:
    """One page's delivery (`deliver`, once)."""

    def __init__(
        self,
        rt: Runtime,
        dispatcher: Dispatcher,
        pacer: ChannelPacer,
        counts: Counter[str],
        *,
        parallel: int,
        collection: str,
    ) -> None:
        self._rt = rt
        self._dispatcher = dispatcher
        self._pacer = pacer
        self._counts = counts
        self._parallel = parallel  # deliveries in flight at most
        self._window = parallel  # in flight at most now: it starts small again after a jump
        self._collection = collection  # the kind's, named in a failure's log line
        self._lanes: list[Lane] = []
        self._live: list[Lane] = []  # lanes that may still begin a delivery
        self._busy: dict[Future[Done], Lane] = {}  # deliveries in flight
        self._unrecorded: list[Sent] = []
        self._losing = 0  # claims lost that count towards LOSING_STREAK since one was won
        self._start = 0  # the lane the page's order begins at: it moves on at each jump
        self._jumps = 0  # jumps so far (Lane.jumps: how many when its delivery began)

    def deliver(self, lanes: list[list[Snapshot]]) -> None:
        """Deliver the lanes. Whatever raises on the way, every delivery in flight is
        awaited and every send recorded before this returns; the page then ends (counted in
        `errors`), and what it did not begin stays due for the next pass."""
        try:
            self._lanes = [Lane(i, channel_of(docs[0]), docs) for i, docs in enumerate(lanes)]
            self._live = list(self._lanes)
            for lane in self._lanes:
                self._hold_if_rate_limited(lane.channel)
            self._run()
        except Exception as exc:
            io_error(self._counts, "delivering a page raised", exc, collection=self._collection)
        finally:
            self._settle()

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
        # Once done, lost or deferred, a lane stays so.
        self._live = [
            lane for lane in self._live if lane.state in (LaneState.WAITING, LaneState.RUNNING)
        ]
        waiting = (lane for lane in self._live if lane.state is LaneState.WAITING)
        return sorted(waiting, key=lambda lane: (lane.begun, self._place(lane)))

    def _place(self, lane: Lane) -> int:
        """The lane's place in the page's order, from where it begins now."""
        return (lane.index - self._start) % len(self._lanes)

    def _begin_ready(self, now: datetime) -> None:
        """Begin each waiting lane whose slot has come, while fewer than the window
        (`parallel`, narrower after a jump) are in flight."""
        for lane in self._waiting():
            if len(self._busy) >= self._window:
                return
            slot = self._pacer.ready_at(lane.channel) if lane.channel is not None else None
            if slot is None or slot <= now:
                self._begin(lane)  # its slot has come: acquire takes it without waiting

    def _begin(self, lane: Lane) -> None:
        """Take the lane's slot (waiting for it) and hand its next document to the
        dispatcher; a slot beyond the pass's budget defers the rest of the lane unclaimed,
        for the next pass."""
        if lane.channel is not None and not self._pacer.acquire(lane.channel):
            self._defer(lane)
            return
        snap = lane.begin()
        lane.jumps = self._jumps
        self._busy[self._dispatcher.start(lane, snap)] = lane

    def _defer(self, lane: Lane) -> None:
        with COUNTS_LOCK:
            self._counts["deferred"] += len(lane.rest)
        lane.state = LaneState.DEFERRED

    def _finish_next(self) -> None:
        """Wait for a delivery to finish (or a slot to come) and take what finished."""
        timeout = self._until_next_slot(self._waiting())
        done, _ = wait(self._busy, timeout=timeout, return_when=FIRST_COMPLETED)
        for future in done:
            lane = self._busy.pop(future)
            outcome = future.result()
            self._take(lane, outcome)
            if outcome.outcome is Result.DUPLICATE:
                self._lost(lane, outcome.retry_at)
            else:
                if isinstance(outcome.outcome, Sent):
                    self._losing = 0
                    self._widen()
                lane.end()

    def _lost(self, lane: Lane, retry_at: datetime | None) -> None:
        """An overlapping pass won the lane's claim. If it took only the channel's slot, the
        document is claimed again at the slot's time (once); otherwise (or again) what is
        left of the lane stays due for the next pass."""
        if retry_at is not None and lane.channel is not None:
            # Only the channel's slot was lost: the document is still ours to claim, and no
            # other pass is ahead over the page.
            self._pacer.hold(lane.channel, retry_at)
            lane.give_back(retry=True)
        else:
            lane.give_back(retry=False)
            if self._jump_past(lane):
                self._losing += 1
        if lane.state is LaneState.LOST:
            with COUNTS_LOCK:
                self._counts["deferred"] += len(lane.rest) - 1
        if self._losing >= LOSING_STREAK:
            # Another pass is ahead over the rest of the page: it stays due for the next read.
            for waiting in self._waiting():
                self._defer(waiting)

    def _widen(self) -> None:
        """A claim was won: one more delivery may be in flight, up to `parallel`."""
        self._window = min(self._window + 1, self._parallel)

    def _jump_past(self, lost: Lane) -> bool:
        """Another pass claimed `lost`'s document and delivers on from there, through the
        lanes this page has not begun that follow it (past the page's own deliveries begun
        since its last jump): the page goes on from the middle of those, the stretch between
        left for last. Whether the loss counts towards LOSING_STREAK: not for a lane begun
        before the last jump, whose place was left already."""
        if lost.jumps != self._jumps:
            return False
        gap: list[Lane] = []
        for step in range(1, len(self._lanes)):
            lane = self._lanes[(lost.index + step) % len(self._lanes)]
            if lane.state is LaneState.WAITING and not lane.begun:
                gap.append(lane)
            elif gap or lane.jumps != self._jumps or lane.state is LaneState.WAITING:
                break
        if gap:
            self._start = gap[len(gap) // 2].index
            self._jumps += 1
            self._window = JUMP_WINDOW
        return True

    def _take(self, lane: Lane, done: Done) -> None:
        """A delivery finished: its channel is paced from Slack's answer, its send kept for
        the next record."""
        sent = done.outcome if isinstance(done.outcome, Sent) else None
        if done.answered is not None and lane.channel is not None:
            self._pacer.answered(lane.channel, done.answered)
            # A person's lane is keyed by their user id; Slack's wait, by the DM posted to.
            posted_to = sent.claim.kind.destination(sent.claim) if sent is not None else None
            self._hold_if_rate_limited(lane.channel, posted_to)
        if sent is not None:
            self._unrecorded.append(sent)

    def _hold_if_rate_limited(
        self, channel: str | None, posted_to: Destination | None = None
    ) -> None:
        """A channel whose chat.postMessage answered 429 (in this pass or an earlier one of
        the process; `posted_to`: where the lane's last post went, if not `channel`) has its
        next slot at the end of Slack's Retry-After: waited for within the pass's budget,
        deferred beyond it."""
        if channel is None:
            return
        if posted_to is not None:
            waiting = self._rt.to(posted_to).send_waiting_until(posted_to.conversation)
        else:  # a lane not posted yet: Slack's and Teams' ids never look alike
            waits = (self._rt.platform(p).send_waiting_until(channel) for p in PLATFORMS)
            waiting = next((w for w in waits if w is not None), None)
        if waiting is not None:
            self._pacer.hold(channel, waiting)

    def _slot_key(self, lane: Lane) -> tuple[Any, ...]:
        slot = self._pacer.ready_at(lane.channel) if lane.channel else None
        return (slot or self._rt.clock.now(), lane.begun, self._place(lane))

    def _until_next_slot(self, waiting: list[Lane]) -> float:
        """How long to wait for a delivery to finish before looking again for a lane whose
        slot has come; short, and never zero (a FixedClock does not move meanwhile)."""
        now = self._rt.clock.now()
        slots = [self._pacer.ready_at(c) for lane in waiting if (c := lane.channel) is not None]
        ahead = [(slot - now).total_seconds() for slot in slots if slot is not None]
        return max(0.001, min([s for s in ahead if s > 0] + [_MAX_POLL]))

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
