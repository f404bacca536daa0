"""A kind's part of a processing pass: its expired leases settled, then every due document,
oldest first, at most TICK_LIMIT of them.

The due page read (processor.due_page: no channel more than it can take) is delivered in
lanes, one per channel (processor.lanes, processor.deliver_page): a channel's messages go
out one after another in due order, paced, while up to PARALLEL_POSTS channels are served at
once. Each claim is exactly-once through the ledger, so overlapping passes post each
occurrence once; the channels' pacing slots keep them a second apart in a channel. Each
pass begins its page's lanes at a place of its own (processor.lanes.rotated, from its
worker id and start), so overlapping passes claim different documents instead of the same
ones at once, and a pass that meets another's stretch jumps past it
(processor.deliver_page)."""

from __future__ import annotations

from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timedelta
from functools import partial
from typing import Any

from core.runtime import Runtime
from processor.abc import Passes
from processor.channel_slots import ChannelSlots, slot_channel
from processor.deliver import claim_and_send
from processor.deliver_page import Page
from processor.dispatch import InProcess
from processor.due_page import DuePage, channel_of, fair_page
from processor.history_search import HistoryBudget
from processor.lanes import lanes, rotated
from processor.outcome import SUMMARY_KEYS
from processor.pacing import POST_INTERVAL, ChannelPacer
from processor.pass_counts import io_error
from processor.reconcile import settle_expired
from processor.shard_strays import adopt_strays

# Deliveries in flight at once within a pass (across channels; one channel is sequential).
PARALLEL_POSTS = 32


def run_kind(
    rt: Runtime,
    kind: Passes[Any, Any],
    *,
    dry_run: bool = False,
    history: HistoryBudget | None = None,
) -> dict[str, Any]:
    """Settle `kind`'s expired leases, put its due documents in no shard in theirs
    (processor.shard_strays), then deliver what is due: oldest first within each
    channel, channels in parallel, paced per channel, within the pass's time budget.
    `history`: the pass's budget of Slack history calls (processor.history_search)."""
    now = rt.clock.now()
    if dry_run:
        return _dry_run(rt, kind, now)
    counts = settle_expired(rt, kind, history)
    # Due documents in no shard put in theirs, for the due scan that follows.
    counts.update(adopt_strays(rt, kind, rt.settings.shards))
    read = _deliver_due(rt, kind, counts)
    summary: dict[str, Any] = {name: counts[name] for name in SUMMARY_KEYS}
    return {**summary, "dry_run": False, "due": read, "now": now.isoformat()}


def _deliver_due(rt: Runtime, kind: Passes[Any, Any], counts: Counter[str]) -> int:
    """Read the due page and deliver it; the documents read."""
    try:
        due = _due_page(rt, kind, rt.clock.now())
    except Exception as exc:
        # What is due waits for the next pass.
        io_error(counts, f"reading the due {kind.name}s failed", exc, collection=kind.collection)
        return 0
    counts["deferred"] += len(due.left)  # a channel's excess: left for the next passes
    budget = timedelta(seconds=rt.settings.tick_budget_seconds)
    pacer = ChannelPacer(rt.clock, budget, rt.recent_posts)
    slots = ChannelSlots(rt)
    _paced_from_slots(slots, pacer, due, rt)
    page = due.subjects[: rt.settings.tick_limit]
    ahead = kind.read_ahead(rt, page)  # one batched read for the page's claims
    with ThreadPoolExecutor(max_workers=PARALLEL_POSTS, thread_name_prefix="deliver") as pool:
        send = partial(claim_and_send, kind, ahead=ahead)
        dispatcher = InProcess(rt, pool, slots, counts, send)
        Page(
            rt, dispatcher, pacer, counts, parallel=PARALLEL_POSTS, collection=kind.collection
        ).deliver(rotated(lanes(page), f"{rt.worker_id} {rt.clock.now().isoformat()}"))
    return due.read


def _dry_run(rt: Runtime, kind: Passes[Any, Any], now: datetime) -> dict[str, Any]:
    """What a pass would do now, with the previews of what it would post; writes nothing.
    Due documents in no shard are among them: a real pass puts them in theirs first
    (processor.shard_strays)."""
    due = _due_page(rt, kind, now)
    limit, shards = rt.settings.tick_limit, rt.settings.shards
    page = [*due.subjects, *kind.queue.outside_shards(rt.db, now, limit, shards)][:limit]
    return {
        **dict.fromkeys(SUMMARY_KEYS, 0),
        "dry_run": True,
        "due": len(page),
        "previews": kind.preview(rt, page, now),
        "now": now.isoformat(),
    }


def _due_page(rt: Runtime, kind: Passes[Any, Any], now: datetime) -> DuePage:
    """The due documents a pass takes, no channel more than it can post to within the
    pass's budget (one now, then one per POST_INTERVAL)."""
    per_channel = timedelta(seconds=rt.settings.tick_budget_seconds) // POST_INTERVAL + 1
    return fair_page(
        lambda limit, excluding: kind.due(rt, now, limit, excluding),
        rt.settings.tick_limit,
        per_channel,
    )


def _paced_from_slots(slots: ChannelSlots, pacer: ChannelPacer, due: DuePage, rt: Runtime) -> None:
    """Each channel of the page is paced from its slot, as far as this process knows it (an
    overlapping pass's, read after a claim lost to it): nothing is read here."""
    now = rt.clock.now()
    channels = {c for snap in due.subjects if (c := slot_channel(channel_of(snap))) is not None}
    for channel in channels:
        if (next_post_at := slots.next_post_at(channel, now)) is not None:
            pacer.hold(channel, next_post_at)
