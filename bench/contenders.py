"""What each worker process runs, per contender, on the same data and the same transport.

- ours: the product's own pass, `processor.kind_pass.run_kind`, until nothing is due
  (`processor.one_pass.until_idle`).
- shares: the product's pass as in ours, but each of the N workers delivers only its fixed
  share of every page it reads (the documents whose `core.shards.shard_of(id, N)` is its
  index): overlapping passes that never claim the same document, so never lose a claim.
  What N overlapping passes could drain at best on this machine (bench.overlap).
- seed: the seed-002 style processor: read each due document again inside a transaction,
  set `sending`, commit; send; write the final status. Sequential, as it was.
- floor: what any sender must do and nothing more: per message one unconditional write and
  one post. No claim, no ledger, no pacing; the share of each worker is fixed up front (index
  modulo worker count), so it needs no read at all. Same thread count per worker as ours.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, fields, replace
from typing import Any

from google.cloud import firestore
from google.cloud.firestore_v1.base_query import FieldFilter

from bench import seeding
from core.documents.messages import MessageField, MessageWrite, Status
from core.platform import Outcome, PostResult
from core.queues import Queue
from core.runtime import Runtime
from core.shards import shard_of
from core.store import MESSAGES, Snapshot
from formatting.slack_text import to_slack
from messages.kind import MESSAGE_KIND
from processor.kind_pass import run_kind
from processor.one_pass import until_idle
from processor.outcome import SUMMARY_KEYS


def run_ours(rt: Runtime, deadline: float) -> dict[str, int]:
    """Message passes back to back until idle, as `python -m targets.worker --until-idle` runs
    them (without the rotations' two queries per pass: there are no rotations here)."""
    return _until_idle(rt, MESSAGE_KIND, deadline)


def _until_idle(rt: Runtime, kind: Any, deadline: float) -> dict[str, int]:
    totals: Counter[str] = Counter()
    for summary in until_idle(rt, lambda rt: run_kind(rt, kind), lambda: time.time() < deadline):
        totals.update({k: summary[k] for k in (*SUMMARY_KEYS, "due")})
        totals["ticks"] += 1
    return dict(totals)


@dataclass(frozen=True)
class Share(Queue):
    """The messages' queue as one of `workers` processes uses it, its due reads keeping only
    its own share (see `shares` above)."""

    index: int = 0
    workers: int = 1

    @classmethod
    def of(cls, index: int, workers: int) -> Share:
        return cls(**_queue_fields(), index=index, workers=workers)

    def due(self, *args: Any, **kwargs: Any) -> list[Snapshot]:
        page = super().due(*args, **kwargs)
        return [snap for snap in page if shard_of(snap.id, self.workers) == self.index]


def run_shares(rt: Runtime, deadline: float, *, index: int, workers: int) -> dict[str, int]:
    """As run_ours, delivering only this worker's share of what is due."""
    return _until_idle(rt, replace(MESSAGE_KIND, queue=Share.of(index, workers)), deadline)


def _queue_fields() -> dict[str, Any]:
    return {f.name: getattr(MESSAGE_KIND.queue, f.name) for f in fields(Queue)}


@dataclass(frozen=True)
class _PeopleSeen(Queue):
    """The messages' queue as the pass uses it, noting the people of the due documents each
    read returns: how many people a pass met, for the gates' reads per person per pass."""

    users: set[str] = field(default_factory=set, compare=False)

    def due(self, *args: Any, **kwargs: Any) -> list[Snapshot]:
        page = super().due(*args, **kwargs)
        self.users.update(user for snap in page if (user := _user(snap)) is not None)
        return page


def _user(snap: Snapshot) -> str | None:
    try:
        user = snap.get(MessageField.USER)
    except KeyError:
        return None
    return user if isinstance(user, str) else None


def run_people(rt: Runtime, deadline: float) -> dict[str, int]:
    """As run_ours, counting also the people each pass met (`person_passes`: the sum over
    passes of the distinct people among the due messages the pass read)."""
    totals: Counter[str] = Counter()

    def people_pass(rt: Runtime) -> dict[str, Any]:
        queue = _PeopleSeen(**_queue_fields())
        summary = run_kind(rt, replace(MESSAGE_KIND, queue=queue))
        totals["person_passes"] += len(queue.users)
        return summary

    for summary in until_idle(rt, people_pass, lambda: time.time() < deadline):
        totals.update({k: summary[k] for k in (*SUMMARY_KEYS, "due")})
        totals["ticks"] += 1
    return dict(totals)


def _post(rt: Runtime, channel: str, text: str, delivery_id: str) -> PostResult:
    rendered = to_slack(text)
    return rt.slack.post(channel, rendered.text, delivery_id, blocks=rendered.blocks)


def run_seed_style(rt: Runtime, deadline: float) -> dict[str, int]:
    totals: Counter[str] = Counter()
    db = rt.db
    while time.time() < deadline:
        query = (
            db.collection(MESSAGES)
            .where(filter=FieldFilter(MessageField.STATUS, "==", Status.PENDING))
            .where(filter=FieldFilter(MessageField.NEXT_RUN_AT, "<=", rt.clock.now()))
            .order_by(MessageField.NEXT_RUN_AT)
            .limit(rt.settings.tick_limit)
        )
        due = list(query.stream())
        totals["ticks"] += 1
        if not due:
            break
        for snap in due:
            if time.time() >= deadline:
                totals["capped"] = 1
                break
            data = _take(db, snap.reference)
            if data is None:
                totals["duplicates"] += 1
                continue
            due_at, channel = data[MessageField.NEXT_RUN_AT], data[MessageField.CHANNEL]
            delivery_id = seeding.Seeded(snap.id, channel, due_at).delivery_id
            post = _post(rt, channel, data[MessageField.TEXT], delivery_id)
            ok = post.outcome is Outcome.DELIVERED
            snap.reference.update(_outcome(ok, post.ts))
            totals["sent" if ok else "failed"] += 1
    return dict(totals)


def _outcome(ok: bool, ts: str | None) -> dict[str, Any]:
    """What a contender records of its post: sent or failed, and the Slack ts."""
    status = Status.SENT if ok else Status.FAILED
    return MessageWrite(status=status, last_slack_ts=ts).to_document()


def _take(db: firestore.Client, ref: firestore.DocumentReference) -> dict[str, Any] | None:
    """Reread in a transaction; set `sending` if it is still pending (seed-002's claim)."""

    @firestore.transactional
    def take(tx: firestore.Transaction) -> dict[str, Any] | None:
        snap = ref.get(transaction=tx)
        data = snap.to_dict() or {}
        if data.get(MessageField.STATUS) != Status.PENDING:
            return None
        tx.update(ref, MessageWrite(status=Status.SENDING).to_document())
        return data

    result: dict[str, Any] | None = take(db.transaction())
    return result


def run_floor(
    rt: Runtime,
    deadline: float,
    *,
    index: int,
    workers: int,
    count: int,
    channels: int,
    prefix: str,
    due: Any,
    threads: int,
) -> dict[str, int]:
    mine = [seeding.message(prefix, n, channels, due)[0] for n in range(index, count, workers)]
    texts = {
        s.doc_id: seeding.message(prefix, n, channels, due)[1][MessageField.TEXT]
        for n, s in zip(range(index, count, workers), mine, strict=True)
    }

    def one(seeded: seeding.Seeded) -> bool:
        if time.time() >= deadline:
            return False
        post = _post(rt, seeded.channel, texts[seeded.doc_id], seeded.delivery_id)
        ok = post.outcome is Outcome.DELIVERED
        rt.db.collection(MESSAGES).document(seeded.doc_id).update(_outcome(ok, post.ts))
        return ok

    with ThreadPoolExecutor(max_workers=threads) as pool:
        sent = sum(pool.map(one, mine))
    return {"sent": sent, "failed": len(mine) - sent}


Contender = Callable[..., dict[str, int]]
