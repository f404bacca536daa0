"""One processing pass: expired leases settled, then every due message, oldest first, at
most TICK_LIMIT of them.

Due messages are delivered in lanes, one per channel: a channel's messages go out one after
another in due order, paced, while up to PARALLEL_POSTS channels are served at once; the
finished sends are recorded in batched commits. Where the benchmark (README "Benchmark")
showed the time going: posts one at a time, and workers racing each other through the same
page."""

from __future__ import annotations

import threading
import zlib
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ALL_COMPLETED, FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from core import logs
from core.errors import DocumentError
from core.models import Message
from core.runtime import Runtime
from core.store import MESSAGES, ChannelRange, Snapshot, due_messages
from formatting.slack_text import to_slack
from processor.abc import Claim
from processor.channel_slots import ChannelSlots, slot_channel, slot_id
from processor.claim import planned_occurrence
from processor.deliver import Sent, claim_and_send, record_sends
from processor.due_page import DuePage, channel_of, fair_page
from processor.history_search import HistoryBudget
from processor.message_kind import MESSAGE_KIND
from processor.outcome import SUMMARY_KEYS, Result, tally
from processor.pacing import POST_INTERVAL, ChannelPacer
from processor.reconcile import reconcile_kind
from processor.unusable_leases import fail_unusable_leases

# Deliveries in flight at once within a pass (across channels; one channel is sequential).
PARALLEL_POSTS = 32
# With other workers about, lanes begun at once whose channel this worker does not hold: a
# lost race costs a claim commit each, so few are risked at a time.
PROBES = 4
# Lanes whose slots one batched read covers, when a probe is about to begin.
CHECKS = 16
# A page on which another worker won a claim is read again (without what this pass already
# handled), at most this many reads per pass.
MAX_PAGES = 20
# Finished sends recorded in one commit (two writes each; Firestore allows 500 per commit).
RECORD_BATCH = 50


def run_tick(
    rt: Runtime, *, dry_run: bool = False, history: HistoryBudget | None = None
) -> dict[str, Any]:
    """Settle expired leases, then deliver what is due: oldest first within each channel,
    channels in parallel, paced per channel, within the pass's time budget. `history`: the
    pass's budget of Slack history calls (processor.history_search)."""
    now = rt.clock.now()
    if dry_run:
        due = _due_page(rt, now, None)
        return {
            **dict.fromkeys(SUMMARY_KEYS, 0),
            "dry_run": True,
            "due": len(due.messages),
            "previews": preview_messages(due.messages, now),
            "now": now.isoformat(),
        }
    counts = _reconciled(rt, history)
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
        for _ in range(MAX_PAGES):
            try:
                due = _due_page(rt, rt.clock.now(), share)
            except Exception as exc:
                # Everything this pass sent is on record already (a page records its sends
                # before it ends); what is still due waits for the next pass.
                io_error(counts, "reading the due messages failed", exc, collection=MESSAGES)
                break
            read += due.read
            left.update(due.left)
            fresh = _ours(slots, pacer, [s for s in due.messages if s.id not in seen], rt)
            # At most TICK_LIMIT documents are handled per pass, however often it reads.
            fresh = fresh[: rt.settings.tick_limit - len(seen)]
            seen.update(snap.id for snap in fresh)
            # More is due than was taken, so this worker will be back for more.
            page = _Page(rt, pool, pacer, counts, slots, backlog=due.more)
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


def _due_page(rt: Runtime, now: datetime, share: ChannelRange | None) -> DuePage:
    """The due messages (in `share`, if any) a pass takes, no channel more than it can
    post to within the pass's budget (one now, then one per POST_INTERVAL)."""
    per_channel = timedelta(seconds=rt.settings.tick_budget_seconds) // POST_INTERVAL + 1
    return fair_page(
        lambda limit, excluding: due_messages(rt.db, now, limit, share, excluding),
        rt.settings.tick_limit,
        per_channel,
    )


def _reconciled(rt: Runtime, history: HistoryBudget | None) -> Counter[str]:
    """Expired leases settled; their query failing does not keep the pass from what is
    due (a lease left expired is settled by a later pass)."""
    counts: Counter[str] = Counter()
    try:
        counts.update(reconcile_kind(rt, MESSAGE_KIND, history))
        counts.update(fail_unusable_leases(rt))
    except Exception as exc:
        io_error(counts, "reading the expired leases failed", exc, collection=MESSAGES)
    return counts


def io_error(counts: Counter[str], message: str, exc: Exception, **concerns: Any) -> None:
    """A read or write of the pass failed (a Firestore hiccup): one ERROR line naming what
    it concerned, and one more in the summary's `errors`; the pass goes on, or ends with its
    sends on record."""
    with _COUNTS_LOCK:
        counts["errors"] += 1
    logs.error(
        message, status="error", error_code=type(exc).__name__, error_message=str(exc), **concerns
    )


def _ours(
    slots: ChannelSlots, pacer: ChannelPacer, due: list[Snapshot], rt: Runtime
) -> list[Snapshot]:
    """The documents of a page this worker takes: those whose channel no other worker is
    posting to right now, as far as this process knows (that worker takes them), each
    channel paced from its slot. Nothing is read here: a claim's own slot write stops it if
    another worker holds the channel, and once one has, a page reads the slots of the lanes
    it is about to begin (`_Page`)."""
    now = rt.clock.now()
    channels = {c for snap in due if (c := _slotted(snap)) is not None}
    held = {c for c in channels if slots.held_elsewhere(c, now)}
    for channel in channels - held:
        if (next_post_at := slots.next_post_at(channel, now)) is not None:
            pacer.hold(channel, next_post_at)
    return [snap for snap in due if channel_of(snap) not in held]


def lanes(due: list[Snapshot], worker_id: str | None) -> list[list[Snapshot]]:
    """One lane per channel, each in due order (a document without a usable channel is a lane
    of its own, after the channels), the channels in order. The lanes start at a place
    derived from the worker's id (None: at the first), so workers reading the same page
    start in different places and rarely race for the same document, and a worker starts at
    about the same place of every page, among channels it has posted to."""
    by_channel: dict[tuple[bool, str], list[Snapshot]] = {}
    for snap in due:
        channel = channel_of(snap)
        key = (False, channel) if channel is not None else (True, snap.id)
        by_channel.setdefault(key, []).append(snap)
    ordered = [by_channel[key] for key in sorted(by_channel)]
    if worker_id is None:
        return ordered
    offset = zlib.crc32(worker_id.encode()) * len(ordered) >> 32
    return ordered[offset:] + ordered[:offset]


class _Page:
    """Delivering one page of due documents: one lane per channel, at most one delivery in
    flight per lane (so a channel's order is kept and it never has two posts at once), up to
    PARALLEL_POSTS lanes at once, the earliest lanes' oldest documents first.

    The clock is only waited on (the pacer's sleep) while nothing is in flight, so under a
    test's FixedClock no delivery ever sees time move under it and a pass stays
    deterministic; with the system clock a lane whose slot comes up is started as soon as a
    delivery finishes or the slot arrives."""

    def __init__(
        self,
        rt: Runtime,
        pool: ThreadPoolExecutor,
        pacer: ChannelPacer,
        counts: Counter[str],
        slots: ChannelSlots,
        *,
        backlog: bool = False,
    ) -> None:
        self._rt = rt
        self._backlog = backlog
        self._pool = pool
        self._pacer = pacer
        self._counts = counts
        self._slots = slots
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
        self._unrecorded: list[Sent] = []
        self._busy: dict[Future[_Done], int] = {}  # deliveries in flight, by lane

    def deliver(self, lanes: list[list[Snapshot]]) -> None:
        """Deliver the lanes. Whatever raises on the way, every delivery in flight is
        awaited and every send recorded before this returns; the page then ends (`failed`),
        and what it did not begin stays due for the next pass."""
        try:
            self._deliver(lanes)
        except Exception as exc:
            self.failed = True
            io_error(self._counts, "delivering a page raised", exc, collection=MESSAGES)
        finally:
            self._settle()

    def _deliver(self, lanes: list[list[Snapshot]]) -> None:
        channels = [channel_of(lane[0]) for lane in lanes]
        cursor = [0] * len(lanes)
        busy = self._busy
        running: set[int] = set()  # busy's lanes: looked up for every lane, every round
        closed: set[int] = set()  # lanes done or deferred
        # Lanes that lost a claim, or whose channel another worker turned out to hold: their
        # rest is read again.
        lost: set[int] = set()
        checked: set[int] = set()  # lanes whose channel's slot this page has read
        # Lanes whose channel this worker holds (its slot says so): no other worker takes
        # them, so they go on whatever happens to the rest of the page.
        now = self._rt.clock.now()
        held = {i for i, c in enumerate(channels) if c is not None and self._slots.mine(c, now)}
        # Lanes begun while other workers are about, their first claim in flight: a probe,
        # since nothing says the channel's message is not being claimed by another worker.
        probing: set[int] = set()
        live = list(range(len(lanes)))  # lanes not yet done for good

        def ours(i: int) -> bool:
            return cursor[i] > 0 or i in held

        def idle() -> list[int]:
            """Lanes that could start a delivery, shallowest first (oldest first within)."""
            nonlocal live
            # Once done, lost, closed, or left unbegun on a stale page, a lane stays so.
            live = [
                i
                for i in live
                if i not in closed
                and i not in lost
                and cursor[i] < len(lanes[i])
                and (ours(i) or not self.stale)
            ]
            return sorted((i for i in live if i not in running), key=lambda i: (cursor[i], i))

        def start(i: int) -> None:
            snap = lanes[i][cursor[i]]
            channel = channels[i]
            if channel is not None and not self._pacer.acquire(channel):
                # Beyond the pass's budget: not claimed, the next pass takes them.
                with _COUNTS_LOCK:
                    self._counts["deferred"] += len(lanes[i]) - cursor[i]
                closed.add(i)
                return
            if self._slots.contended and not ours(i):
                probing.add(i)
            cursor[i] += 1
            # Whether this worker has more to post in the channel (its slot says so).
            more = self._backlog or cursor[i] < len(lanes[i])
            busy[self._pool.submit(self._one, snap, more)] = i
            running.add(i)

        while True:
            now = self._rt.clock.now()
            order = idle()
            for k, i in enumerate(order):
                if len(busy) >= PARALLEL_POSTS:
                    break
                if self._slots.contended and not ours(i):
                    if len(probing) >= PROBES:
                        continue
                    if i not in checked:
                        self._check(order[k : k + CHECKS], channels, checked, lost, ours)
                    if i in lost:
                        continue  # another worker holds its channel
                channel = channels[i]
                slot = self._pacer.ready_at(channel) if channel is not None else None
                if slot is None or slot <= now:
                    start(i)  # its slot has come: acquire takes it without waiting
            if not busy or len(self._unrecorded) >= RECORD_BATCH:
                # Before the pass waits on the clock, or ends, every send is on record.
                self._record()
            if not busy:
                waiting = idle()
                if not waiting:
                    break
                # Nothing in flight: the one place the pass waits on the clock.
                start(min(waiting, key=lambda i: self._slot_key(channels[i], cursor[i], i)))
                continue
            done, _ = wait(
                busy, timeout=self._until_next_slot(idle(), channels), return_when=FIRST_COMPLETED
            )
            for future in done:
                i = busy.pop(future)
                running.discard(i)
                probing.discard(i)
                outcome, channel = future.result(), channels[i]
                if outcome.answered is not None and channel is not None:
                    self._pacer.answered(channel, outcome.answered)
                if isinstance(outcome.outcome, Sent):
                    self._unrecorded.append(outcome.outcome)
                elif outcome.outcome is Result.DUPLICATE:
                    # Another worker won: the message, or only the channel's slot. The page
                    # is read again once this one is done, and offers whatever of this lane
                    # is still due then (this document too) to whichever worker the slots
                    # leave it to.
                    self.stale = True
                    lost.add(i)
                    cursor[i] -= 1
        if self.stale:
            for i, lane in enumerate(lanes):
                if i not in closed:
                    self.skipped.extend(snap.id for snap in lane[cursor[i] :])
            self.share = _share(channels, [n > 0 for n in cursor])

    def _check(
        self,
        candidates: list[int],
        channels: list[str | None],
        checked: set[int],
        lost: set[int],
        ours: Callable[[int], bool],
    ) -> None:
        """Read the slots of the next lanes a probe may begin, in one batched get: a lane
        whose channel another worker holds is left to it, the others keep its pace."""
        batch = [i for i in candidates if i not in checked and not ours(i)]
        checked.update(batch)
        now = self._rt.clock.now()
        slotted = {i: c for i in batch if (c := slot_channel(channels[i])) is not None}
        try:
            self._slots.read(slotted.values(), now)
        except Exception as exc:
            # Unread, these lanes go on as on a page with no other worker about: a claim's
            # own slot write still fails whole where another worker took the channel.
            ids = sorted(slot_id(c, now) for c in slotted.values())
            io_error(self._counts, "reading pacing slots failed", exc, slots=ids)
        for i, channel in slotted.items():
            if self._slots.held_elsewhere(channel, now):
                lost.add(i)
            elif (next_post_at := self._slots.next_post_at(channel, now)) is not None:
                self._pacer.hold(channel, next_post_at)

    def _slot_key(self, channel: str | None, depth: int, index: int) -> tuple[Any, ...]:
        slot = self._pacer.ready_at(channel) if channel else None
        return (slot or self._rt.clock.now(), depth, index)

    def _until_next_slot(self, waiting: list[int], channels: list[str | None]) -> float:
        """How long to wait for a delivery to finish before looking again for a lane whose
        slot has come; short, and never zero (a FixedClock does not move meanwhile)."""
        now = self._rt.clock.now()
        slots = [self._pacer.ready_at(c) for i in waiting if (c := channels[i]) is not None]
        ahead = [(slot - now).total_seconds() for slot in slots if slot is not None]
        return max(0.001, min([s for s in ahead if s > 0] + [_MAX_POLL]))

    def _one(self, snap: Snapshot, more: bool) -> _Done:
        started = self._rt.clock.now()
        channel = channel_of(snap)
        slotted = slot_channel(channel)
        slots = self._slots.for_claim(slotted, started, more=more) if slotted else ()
        try:
            outcome = claim_and_send(self._rt, snap, slots)
        except Exception as exc:
            # One document's trouble (a Firestore hiccup mid-claim) never stops the pass;
            # anything it claimed stays under its lease for reconciliation.
            self._raised([snap.id], exc)
            return _Done(None, None)
        if isinstance(outcome, Sent):
            self._slots.claimed(slots, outcome.claim.slot_versions, started)
            with _COUNTS_LOCK:
                self._counts["claimed"] += 1
            return _Done(outcome.answered_at or self._rt.clock.now(), outcome)
        if outcome is Result.DUPLICATE and slots:
            self._slots.lost(slots, self._rt.clock.now())
        with _COUNTS_LOCK:
            tally(self._counts, outcome)
        return _Done(None, outcome)

    def _settle(self) -> None:
        """Await the deliveries still in flight and record every send (the page is over)."""
        done, _ = wait(self._busy, return_when=ALL_COMPLETED)
        self._busy.clear()
        for future in done:
            try:
                outcome = future.result()
            except Exception as exc:  # its send, if any, stays under its lease: reconciled
                io_error(self._counts, "a delivery raised after its claim", exc)
                continue
            if isinstance(outcome.outcome, Sent):
                if outcome.answered is not None:
                    self._pacer.answered(_channel(outcome.outcome.claim), outcome.answered)
                self._unrecorded.append(outcome.outcome)
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
            self._raised([s.claim.subject_id for s in sends], exc)
            return
        with _COUNTS_LOCK:
            for result in results:
                tally(self._counts, result)

    def _raised(self, message_ids: list[str], exc: Exception) -> None:
        with _COUNTS_LOCK:
            self._counts["errors"] += len(message_ids)
        for message_id in message_ids:
            logs.error(
                "processing a message raised",
                message_id=message_id,
                status="error",
                error_code=type(exc).__name__,
                error_message=str(exc),
            )


@dataclass(frozen=True)
class _Done:
    answered: datetime | None  # when a claimed delivery's post was answered (pacing's start)
    outcome: Result | Sent | None  # Sent: posted (or tried), to be recorded


_COUNTS_LOCK = threading.Lock()
# The longest a pass waits on a delivery before looking again for a lane whose slot came.
_MAX_POLL = 0.05


def _share(channels: list[str | None], taken: list[bool]) -> ChannelRange | None:
    """The channels from the first lane this worker took a message of to the last, as a
    range (the lanes before the first were lost or never begun: another worker began there).
    Lanes are in channel order from their start, so a range that passes the last channel
    goes to the end (channels taken past that point are left out). Lost channels within it
    are read again and left to their holders; the channels taken beyond a lost one are this
    worker's to go on with (their slots say so), and other workers leave them."""
    first = next((i for i, t in enumerate(taken) if t), None)
    low = None if first is None else channels[first]
    if first is None or low is None:
        return None
    end = max(i for i, t in enumerate(taken) if t) + 1
    high = channels[end] if end < len(channels) else None
    return ChannelRange(low, high if high is not None and high > low else None)


def _slotted(snap: Snapshot) -> str | None:
    return slot_channel(channel_of(snap))


def _channel(claim: Claim[Any]) -> str:
    return claim.kind.channel(claim)


def preview_messages(due: list[Any], now: datetime) -> list[dict[str, Any]]:
    """What a real pass would post, from the same rendering the send uses; writes nothing."""
    previews = []
    for snap in due:
        data = snap.to_dict() or {}
        if data.get("deleted"):
            continue
        entry: dict[str, Any] = {
            "kind": "message",
            "id": snap.id,
            "channel": data.get("channel"),
            "occurrence_at": None,
        }
        try:
            message = Message.from_document(snap.id, data)
            planned = planned_occurrence(message, data, now)
            entry["occurrence_at"] = planned.isoformat() if planned else None
            if planned is None:
                entry["skipped"] = True  # expired, or every due occurrence is past its grace
            rendered = to_slack(message.text, allow_broadcast=message.allow_broadcast)
        except DocumentError as exc:
            entry |= {"text": None, "error": {"code": exc.code, "message": exc.message}}
        else:
            entry["text"] = rendered.text
        previews.append(entry)
    return previews
