"""A kind's part of a processing pass: its expired leases settled, then every due document,
oldest first, at most TICK_LIMIT of them.

Each page of due messages read is delivered in lanes, one per channel (processor.lanes,
processor.deliver_page): a channel's messages go out one after another in due order, paced,
while up to PARALLEL_POSTS channels are served at once. Once another worker has won a claim,
the pass reads the page again, from the channels it reached first (its share)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import partial
from typing import Any

from core.runtime import Runtime
from core.store import ChannelRange, Snapshot
from processor.abc import Kind
from processor.channel_slots import ChannelSlots, slot_channel
from processor.deliver import claim_and_send
from processor.deliver_page import Page
from processor.dispatch import InProcess
from processor.due_page import DuePage, channel_of, fair_page
from processor.history_search import HistoryBudget
from processor.lanes import lanes
from processor.outcome import SUMMARY_KEYS
from processor.pacing import POST_INTERVAL, ChannelPacer
from processor.pass_counts import io_error
from processor.reconcile import settle_expired

# Deliveries in flight at once within a pass (across channels; one channel is sequential).
PARALLEL_POSTS = 32
# A page on which another worker won a claim is read again (without what this pass already
# handled), at most this many reads per pass.
MAX_PAGES = 20


def run_tick(
    rt: Runtime,
    kind: Kind[Any],
    *,
    dry_run: bool = False,
    history: HistoryBudget | None = None,
) -> dict[str, Any]:
    """Settle `kind`'s expired leases, then deliver what is due: oldest first within each
    channel, channels in parallel, paced per channel, within the pass's time budget.
    `history`: the pass's budget of Slack history calls (processor.history_search)."""
    now = rt.clock.now()
    if dry_run:
        return _dry_run(rt, kind, now)
    counts = settle_expired(rt, kind, history)
    reads = _Reads(rt.settings.tick_limit)
    _deliver_due(rt, kind, counts, reads)
    counts["deferred"] += len(reads.left - reads.seen)  # left for the next pass by pacing, too
    summary: dict[str, Any] = {name: counts[name] for name in SUMMARY_KEYS}
    return {**summary, "dry_run": False, "due": reads.read, "now": now.isoformat()}


@dataclass
class _Reads:
    """What a pass has read of the due documents so far, and where it reads next."""

    limit: int  # TICK_LIMIT: documents handled per pass, however often it reads
    seen: set[str] = field(default_factory=set)  # ids handed to a page (and not given back)
    left: set[str] = field(default_factory=set)  # read, but a channel's excess (due_page)
    read: int = 0  # documents read
    # Once another worker has won a claim, the channels this worker was first to reach: its
    # share, which it alone reads until it is done (None: the whole page, from the head).
    share: ChannelRange | None = None

    def take(
        self, due: DuePage, ours: Callable[[list[Snapshot]], list[Snapshot]]
    ) -> list[Snapshot]:
        """What of `due` the pass delivers now: not handled yet, `ours`, within the limit."""
        self.read += due.read
        self.left.update(due.left)
        fresh = ours([snap for snap in due.messages if snap.id not in self.seen])
        fresh = fresh[: self.limit - len(self.seen)]
        self.seen.update(snap.id for snap in fresh)
        return fresh

    def again(self, page: Page) -> bool:
        """Whether the pass reads again after `page`, and from where (`share`)."""
        if page.failed:
            return False  # the page ended on an error: its sends are on record, the rest waits
        if not page.skipped:
            if self.share is None:
                return False  # everything read was handled: the next pass reads what is left
            # Its share is done: on to what is left of the backlog, from the head, as a pass
            # that knows other workers are about (a few lanes at a time: PROBES).
            self.share = None
            return True
        self.seen.difference_update(page.skipped)
        self.share = page.share
        return True


def _deliver_due(rt: Runtime, kind: Kind[Any], counts: Counter[str], reads: _Reads) -> None:
    """Read and deliver due pages until everything read is handled, the page ends on an
    error, or MAX_PAGES reads were made."""
    budget = timedelta(seconds=rt.settings.tick_budget_seconds)
    pacer = ChannelPacer(rt.clock, budget, rt.recent_posts)
    slots = ChannelSlots(rt)
    with ThreadPoolExecutor(max_workers=PARALLEL_POSTS, thread_name_prefix="deliver") as pool:
        dispatcher = InProcess(rt, pool, slots, counts, partial(claim_and_send, kind))
        for _ in range(MAX_PAGES):
            try:
                due = _due_page(rt, kind, rt.clock.now(), reads.share)
            except Exception as exc:
                # Everything this pass sent is on record already (a page records its sends
                # before it ends); what is still due waits for the next pass.
                what = f"reading the due {kind.name}s failed"
                io_error(counts, what, exc, collection=kind.collection)
                return
            start = None if reads.share else rt.worker_id
            fresh = reads.take(due, lambda snaps: _ours(slots, pacer, snaps, rt))
            page = Page(
                rt,
                dispatcher,
                pacer,
                counts,
                slots,
                parallel=PARALLEL_POSTS,
                backlog=due.more,  # more is due than was taken: this worker will be back
                collection=kind.collection,
            )
            # A share is read from its start; the head, from a place of this worker's own.
            page.deliver(lanes(fresh, start))
            if not reads.again(page):
                return


def _dry_run(rt: Runtime, kind: Kind[Any], now: datetime) -> dict[str, Any]:
    """What a pass would do now, with the previews of what it would post; writes nothing."""
    due = _due_page(rt, kind, now, None)
    return {
        **dict.fromkeys(SUMMARY_KEYS, 0),
        "dry_run": True,
        "due": len(due.messages),
        "previews": kind.preview(due.messages, now),
        "now": now.isoformat(),
    }


def _due_page(rt: Runtime, kind: Kind[Any], now: datetime, share: ChannelRange | None) -> DuePage:
    """The due documents (in `share`, if any) a pass takes, no channel more than it can
    post to within the pass's budget (one now, then one per POST_INTERVAL)."""
    per_channel = timedelta(seconds=rt.settings.tick_budget_seconds) // POST_INTERVAL + 1
    return fair_page(
        lambda limit, excluding: kind.due(rt.db, now, limit, share, excluding),
        rt.settings.tick_limit,
        per_channel,
    )


def _ours(
    slots: ChannelSlots, pacer: ChannelPacer, due: list[Snapshot], rt: Runtime
) -> list[Snapshot]:
    """The documents of a page this worker takes: those whose channel no other worker is
    posting to right now, as far as this process knows (that worker takes them), each
    channel paced from its slot. Nothing is read here: a claim's own slot write stops it if
    another worker holds the channel, and once one has, a page reads the slots of the lanes
    it is about to begin (processor.deliver_page)."""
    now = rt.clock.now()
    channels = {c for snap in due if (c := _slotted(snap)) is not None}
    held = {c for c in channels if slots.held_elsewhere(c, now)}
    for channel in channels - held:
        if (next_post_at := slots.next_post_at(channel, now)) is not None:
            pacer.hold(channel, next_post_at)
    return [snap for snap in due if channel_of(snap) not in held]


def _slotted(snap: Snapshot) -> str | None:
    return slot_channel(channel_of(snap))
