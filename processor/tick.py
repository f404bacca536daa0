"""A kind's part of a processing pass: its expired leases settled, then every due document,
oldest first, at most TICK_LIMIT of them.

Each page of due messages read is delivered in lanes, one per channel (processor.lanes,
processor.deliver_page): a channel's messages go out one after another in due order, paced,
while up to PARALLEL_POSTS channels are served at once. Once another worker has won a claim,
the pass reads the page again, from the channels it reached first (its share)."""

from __future__ import annotations

from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timedelta
from typing import Any

from core.runtime import Runtime
from core.store import ChannelRange, Snapshot
from processor.abc import PagedKind
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
from processor.reconcile import reconcile_kind

# Deliveries in flight at once within a pass (across channels; one channel is sequential).
PARALLEL_POSTS = 32
# A page on which another worker won a claim is read again (without what this pass already
# handled), at most this many reads per pass.
MAX_PAGES = 20


def run_tick(
    rt: Runtime,
    kind: PagedKind[Any],
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
    counts = _reconciled(rt, kind, history)
    budget = timedelta(seconds=rt.settings.tick_budget_seconds)
    pacer = ChannelPacer(rt.clock, budget, rt.recent_posts)
    slots = ChannelSlots(rt)
    seen: set[str] = set()
    left: set[str] = set()  # read, but a channel's excess (see processor.due_page)
    read = 0
    # Once another worker has won a claim, the channels this worker was first to reach: its
    # share, which it alone reads until it is done (None: the whole page, from the head).
    share: ChannelRange | None = None
    with ThreadPoolExecutor(max_workers=PARALLEL_POSTS, thread_name_prefix="deliver") as pool:
        dispatcher = InProcess(
            rt,
            pool,
            slots,
            counts,
            lambda rt_, snap, slots_: claim_and_send(kind, rt_, snap, slots_),
        )
        for _ in range(MAX_PAGES):
            try:
                due = _due_page(rt, kind, rt.clock.now(), share)
            except Exception as exc:
                # Everything this pass sent is on record already (a page records its sends
                # before it ends); what is still due waits for the next pass.
                io_error(
                    counts, f"reading the due {kind.name}s failed", exc, collection=kind.collection
                )
                break
            read += due.read
            left.update(due.left)
            fresh = _ours(slots, pacer, [s for s in due.messages if s.id not in seen], rt)
            # At most TICK_LIMIT documents are handled per pass, however often it reads.
            fresh = fresh[: rt.settings.tick_limit - len(seen)]
            seen.update(snap.id for snap in fresh)
            # More is due than was taken, so this worker will be back for more.
            page = Page(
                rt,
                dispatcher,
                pacer,
                counts,
                slots,
                parallel=PARALLEL_POSTS,
                backlog=due.more,
                collection=kind.collection,
            )
            # A share is read from its start; the head, from a place of this worker's own.
            page.deliver(lanes(fresh, None if share else rt.worker_id))
            if page.failed:
                break  # the page ended on an error: its sends are on record, the rest waits
            if not page.skipped:
                if share is None:
                    break  # everything read was handled: the next pass reads what is left
                # Its share is done: on to what is left of the backlog, from the head, as a
                # pass that knows other workers are about (a few lanes at a time: PROBES).
                share = None
                continue
            seen.difference_update(page.skipped)
            share = page.share
    counts["deferred"] += len(left - seen)  # left for the next pass by pacing, too
    summary: dict[str, Any] = {name: counts[name] for name in SUMMARY_KEYS}
    return {**summary, "dry_run": False, "due": read, "now": now.isoformat()}


def _dry_run(rt: Runtime, kind: PagedKind[Any], now: datetime) -> dict[str, Any]:
    """What a pass would do now, with the previews of what it would post; writes nothing."""
    due = _due_page(rt, kind, now, None)
    return {
        **dict.fromkeys(SUMMARY_KEYS, 0),
        "dry_run": True,
        "due": len(due.messages),
        "previews": kind.preview(due.messages, now),
        "now": now.isoformat(),
    }


def _due_page(
    rt: Runtime, kind: PagedKind[Any], now: datetime, share: ChannelRange | None
) -> DuePage:
    """The due documents (in `share`, if any) a pass takes, no channel more than it can
    post to within the pass's budget (one now, then one per POST_INTERVAL)."""
    per_channel = timedelta(seconds=rt.settings.tick_budget_seconds) // POST_INTERVAL + 1
    return fair_page(
        lambda limit, excluding: kind.due(rt.db, now, limit, share, excluding),
        rt.settings.tick_limit,
        per_channel,
    )


def _reconciled(rt: Runtime, kind: PagedKind[Any], history: HistoryBudget | None) -> Counter[str]:
    """Expired leases settled (and what the kind sweeps up); their query failing does not
    keep the pass from what is due (a lease left expired is settled by a later pass)."""
    counts: Counter[str] = Counter()
    try:
        counts.update(reconcile_kind(rt, kind, history))
        counts.update(kind.sweep(rt))
    except Exception as exc:
        io_error(counts, "reading the expired leases failed", exc, collection=kind.collection)
    return counts


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
