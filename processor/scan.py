"""The tick's pass under DISPATCH=pubsub, and the scan that publishes each due occurrence
once rather than by every tick while it waits (docs/pubsub.md, "The tick under pubsub").

The scan of one (kind, shard) (`scan_shard`) starts from its mark (`publish_marks`,
core.documents.publish_marks: published through `(through, after_id)`) and publishes:
1. new: waiting documents due after the mark and by now, oldest first, at most TICK_LIMIT
   (no mark: everything due);
2. written since: waiting documents due by `through` whose `updated_at` is after
   `through - MARGIN`: created, edited, resumed, released or retried with a time already
   past (every subject write stamps `updated_at`). MARGIN covers a writer that read the
   clock before the last scan and committed after it; a document Firestore says is
   unchanged since that scan began (`seen_before`) was published by it, and is left out;
3. the sweep, every SWEEP_EVERY: waiting documents due SWEEP_AGE ago or more, oldest first,
   at most TICK_LIMIT. It finds what the other two cannot: a document whose message was
   lost (a push acknowledged without a delivery, a dead letter) or that was written
   straight to Firestore without `updated_at`. With SHARDS above 1, shard 0's sweep also
   puts the kind's due documents in no shard in theirs (processor.shard_strays), once its
   window is done: each is then published once, as written since, by its shard's next scan.
Then it waits for Pub/Sub to take every message, and only then advances the mark, under the
version it read: a failed publish leaves the mark, so the next scan publishes the window
again (a duplicate is harmless: the ledger keeps exactly-once); a scan that loses the mark
to another scan of the shard stops there. A full new page moves the mark to its last
document and asks for a continuation (a scan request, core.scan_request), so no invocation
reads more than one page and a minute of 50,000 due drains over several.

The pass (`scan_pass`): per kind, expired leases reconciled as in the inline pass
(processor.reconcile.settle_expired; no page is read for strays, the sweep adopts them),
then with SHARDS=1 the one shard scanned here, with more one scan request per shard
(`deliver` scans it, targets.deliver), no due page read.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from google.api_core.exceptions import Conflict, FailedPrecondition
from google.cloud import firestore
from google.cloud.firestore_v1.base_query import FieldFilter
from google.cloud.firestore_v1.field_path import FieldPath

from core import logs
from core.documents.leases import LEASE, usable_lease
from core.documents.publish_marks import MarkWrite, PublishMark, mark_id
from core.documents.subjects import SubjectField
from core.queues import Queue
from core.runtime import Runtime
from core.scan_request import ScanRequest
from core.store import PUBLISH_MARKS, Snapshot
from processor.abc import Passes
from processor.history_search import HistoryBudget
from processor.outcome import SUMMARY_KEYS
from processor.pass_counts import io_error
from processor.publish import message_for, publish, request_scans
from processor.reconcile import settle_expired
from processor.shard_strays import adopt_strays

# How far before the last scan a write may have read the clock and still be committed after it.
MARGIN = timedelta(seconds=30)
# The sweep runs at most this often per (kind, shard), over documents due this long ago.
SWEEP_EVERY = timedelta(minutes=5)
SWEEP_AGE = timedelta(minutes=10)


def scan_pass(rt: Runtime, kinds: Sequence[Passes[Any, Any]]) -> dict[str, Any]:
    """The tick's pass: the summary has the inline pass's shape; `published` counts the due
    occurrences Pub/Sub accepted, `scans` the scan requests, `due` the documents read to
    publish, `errors` the reads and publishes that failed."""
    now = rt.clock.now()
    history = HistoryBudget.for_pass(rt)
    summary: dict[str, Any] = {**dict.fromkeys(SUMMARY_KEYS, 0), "due": 0}
    for kind in kinds:
        part = settle_expired(rt, kind, history)
        shards = rt.settings.shards
        if shards == 1:
            part.update(scan_shard(rt, kind, 0, 1))
        else:
            asks = [ScanRequest(kind.name, k, shards, now) for k in range(shards)]
            part.update(request_scans(rt, asks))
        for key in (*SUMMARY_KEYS, "due"):
            summary[key] += part[key]
        if kind.summary_key is not None:
            summary[kind.summary_key] = {key: part[key] for key in SUMMARY_KEYS}
    return summary | {"dry_run": False, "now": now.isoformat()}


def scan_shard(rt: Runtime, kind: Passes[Any, Any], shard: int, shards: int) -> Counter[str]:
    """Publish what is due in `kind`'s shard `shard` of `shards` and not published yet, then
    advance its mark. Counts: `due` (documents read to publish), `published`, `scans` (a
    continuation), `errors` (each also an ERROR line)."""
    now = rt.clock.now()
    counts: Counter[str] = Counter()
    try:
        ref = rt.db.collection(PUBLISH_MARKS).document(mark_id(kind.name, shard))
        read = ref.get()  # pragma: SYNCPOINT scan
        window = _window(rt, kind, (shard, shards), PublishMark.of(read), now)
    except Exception as exc:
        what = f"reading the due {kind.name}s failed"
        io_error(counts, what, exc, collection=kind.collection, shard=shard)
        return counts
    counts["due"] += len(window.due)
    counts.update(publish(rt, [o for snap in window.due if (o := message_for(kind, snap))]))
    if not counts["errors"]:  # else the mark stays: the next scan publishes this again
        advanced = _advance(rt, kind, shard, read, window.mark(read.read_time, now), counts)
        if advanced and window.full:
            counts.update(request_scans(rt, [ScanRequest(kind.name, shard, shards, now)]))
    if shard == 0 and window.swept:
        # Once the window is published: the scan that publishes a stray is then one that
        # read its mark after the adoption, so the scan after it leaves the stray out (`_seen`).
        counts.update(adopt_strays(rt, kind, shards))
    return counts


@dataclass(frozen=True)
class _Window:
    """What one scan publishes, and where its mark goes once it has."""

    due: list[Snapshot]
    full: bool  # the new page was full: the mark stops at its last document
    through: datetime
    after_id: str
    swept_at: datetime
    swept: bool  # this scan ran the sweep (or was the shard's first)
    # Whether every document the written-since query matched was read (the next scan may
    # then leave out what this one saw).
    written_all: bool

    def mark(self, read_at: datetime | None, now: datetime) -> MarkWrite:
        seen = read_at if self.written_all else None
        return MarkWrite(
            through=self.through,
            after_id=self.after_id,
            swept_at=self.swept_at,
            seen_before=seen,
            updated_at=now,
        )


def _window(
    rt: Runtime,
    kind: Passes[Any, Any],
    shard: tuple[int, int],
    mark: PublishMark | None,
    now: datetime,
) -> _Window:
    limit = rt.settings.tick_limit
    queries = _ShardQueries(rt.db, kind.queue, *shard)
    new = queries.new(mark, now, limit)
    full = len(new) == limit
    if full:
        through, after_id = new[-1].get(SubjectField.NEXT_RUN_AT), new[-1].id
    elif mark is not None and mark.through > now:  # a clock behind the last scan's
        through, after_id = mark.through, mark.after_id
    else:
        through, after_id = now, ""
    if mark is None:  # the first scan: everything due is new
        return _Window(_claimable(kind.queue, new), full, through, after_id, now, True, True)
    written = queries.written_since(mark.through - MARGIN, mark.through, limit)
    unseen = [snap for snap in written if not _seen(snap, mark)]
    sweep = now - mark.swept_at >= SWEEP_EVERY
    swept = queries.overdue(now - SWEEP_AGE, limit) if sweep else []
    distinct = list({snap.id: snap for snap in (*new, *unseen, *swept)}.values())
    swept_at = now if sweep else mark.swept_at
    return _Window(
        _claimable(kind.queue, distinct),
        full,
        through,
        after_id,
        swept_at,
        sweep,
        len(written) < limit,
    )


def _seen(snap: Snapshot, mark: PublishMark) -> bool:
    """Whether the scan that wrote `mark` read this version of the document (and so
    published it): Firestore's own commit time is before that scan began."""
    updated = snap.update_time
    return mark.seen_before is not None and updated is not None and updated < mark.seen_before


def _claimable(queue: Queue, snaps: list[Snapshot]) -> list[Snapshot]:
    """Without the documents under a usable lease where the collection keeps its waiting
    status while leased (a rotation's claimed day): those are reconciliation's."""
    if queue.sending is not None:
        return snaps
    return [snap for snap in snaps if not usable_lease((snap.to_dict() or {}).get(LEASE))]


@dataclass(frozen=True)
class _ShardQueries:
    """The scan's three queries over one shard of a kind's waiting documents (with SHARDS=1,
    no shard filter: a document without a `shard` is found too)."""

    db: firestore.Client
    queue: Queue
    shard: int
    shards: int

    def new(self, mark: PublishMark | None, now: datetime, limit: int) -> list[Snapshot]:
        """Due by `now` and after the mark's cursor, oldest first (then by id), through the
        (shard, status, next_run_at) index."""
        query = self._waiting().where(filter=FieldFilter(SubjectField.NEXT_RUN_AT, "<=", now))
        query = query.order_by(SubjectField.NEXT_RUN_AT).order_by(FieldPath.document_id())
        if mark is not None and mark.after_id:
            cursor = {SubjectField.NEXT_RUN_AT.value: mark.through, "__name__": mark.after_id}
            query = query.start_after(cursor)
        elif mark is not None:
            query = query.where(filter=FieldFilter(SubjectField.NEXT_RUN_AT, ">", mark.through))
        return list(query.limit(limit).stream())

    def written_since(self, since: datetime, through: datetime, limit: int) -> list[Snapshot]:
        """Written after `since` and due by `through`, through the (shard, status,
        updated_at, next_run_at) index (two inequalities: the most selective first)."""
        query = (
            self._waiting()
            .where(filter=FieldFilter(SubjectField.UPDATED_AT, ">", since))
            .where(filter=FieldFilter(SubjectField.NEXT_RUN_AT, "<=", through))
            .order_by(SubjectField.UPDATED_AT)
            .order_by(SubjectField.NEXT_RUN_AT)
        )
        return list(query.limit(limit).stream())

    def overdue(self, due_by: datetime, limit: int) -> list[Snapshot]:
        """Due by `due_by`, oldest first."""
        query = self._waiting().where(filter=FieldFilter(SubjectField.NEXT_RUN_AT, "<=", due_by))
        return list(query.order_by(SubjectField.NEXT_RUN_AT).limit(limit).stream())

    def _waiting(self) -> Any:
        statuses = list(self.queue.waiting)
        status = (
            FieldFilter(SubjectField.STATUS, "==", statuses[0])
            if len(statuses) == 1
            else FieldFilter(SubjectField.STATUS, "in", statuses)
        )
        query = self.db.collection(self.queue.collection).where(filter=status)
        if self.shards > 1:
            query = query.where(filter=FieldFilter(SubjectField.SHARD, "==", self.shard))
        return query


def _advance(
    rt: Runtime,
    kind: Passes[Any, Any],
    shard: int,
    read: Snapshot,
    mark: MarkWrite,
    counts: Counter[str],
) -> bool:
    """Write the mark under the version `read` (created when there was none); False when
    another scan of the shard wrote it in between (logged) or the write failed."""
    fields = mark.to_document()
    try:
        if read.exists:
            option = rt.db.write_option(last_update_time=read.update_time)
            read.reference.update(fields, option=option)  # pragma: SYNCPOINT scan
        else:
            read.reference.create(fields)  # pragma: SYNCPOINT scan
    except (FailedPrecondition, Conflict):  # Conflict: AlreadyExists, created meanwhile
        logs.info(
            "another scan of the shard moved its mark first; this scan stops here",
            kind=kind.name,
            shard=shard,
            status="overtaken",
        )
        return False
    except Exception as exc:
        what = "advancing the publish mark failed; the next scan publishes its window again"
        io_error(counts, what, exc, kind=kind.name, shard=shard)
        return False
    return True
