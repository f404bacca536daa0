"""The tick's pass under DISPATCH=pubsub: each kind's expired leases settled as in the inline
pass, then one Pub/Sub message per due document (core.pubsub.DueOccurrence), ordered by its
channel. Nothing is claimed here: `deliver` claims, sends and records each one
(targets.deliver), and the ledger keeps that exactly-once however often a document is
published (every tick republishes what is still due, and that is what makes a lost or
dropped message harmless).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from concurrent.futures import Future
from datetime import datetime
from typing import Any

from core import logs
from core.pubsub import DueOccurrence, publisher
from core.runtime import Runtime
from core.store import Snapshot
from processor.abc import Passes
from processor.due_page import channel_of
from processor.history_search import HistoryBudget
from processor.outcome import SUMMARY_KEYS
from processor.pass_counts import io_error
from processor.reconcile import settle_expired


def publish_pass(rt: Runtime, kinds: Sequence[Passes[Any, Any]]) -> dict[str, Any]:
    """One pass: per kind, leases reconciled, then at most TICK_LIMIT due documents
    published. The summary has the inline pass's shape; `published` counts the messages
    Pub/Sub accepted, `errors` the reads and publishes that failed."""
    now = rt.clock.now()
    history = HistoryBudget.for_pass(rt)
    summary: dict[str, Any] = {**dict.fromkeys(SUMMARY_KEYS, 0), "due": 0}
    for kind in kinds:
        part = _publish_kind(rt, kind, now, history)
        for key in (*SUMMARY_KEYS, "due"):
            summary[key] += part[key]
        if kind.summary_key is not None:
            summary[kind.summary_key] = {key: part[key] for key in SUMMARY_KEYS}
    return summary | {"dry_run": False, "now": now.isoformat()}


def _publish_kind(
    rt: Runtime, kind: Passes[Any, Any], now: datetime, history: HistoryBudget
) -> Counter[str]:
    counts = settle_expired(rt, kind, history)
    try:
        due = kind.due(rt, now, rt.settings.tick_limit)
    except Exception as exc:
        io_error(counts, f"reading the due {kind.name}s failed", exc, collection=kind.collection)
        return counts
    counts["due"] += len(due)
    occurrences = [occurrence for snap in due if (occurrence := _occurrence(kind, snap))]
    counts.update(publish(rt, occurrences))
    return counts


def _occurrence(kind: Passes[Any, Any], snap: Snapshot) -> DueOccurrence | None:
    """The message for a due document, carrying it as the query read it (`deliver` claims
    from it without reading it again); None when the query's own field is not an instant
    (cannot happen: the due query compares it with one)."""
    # A document without a usable channel still goes out (unordered): `deliver`'s claim
    # rejects it with its code, as the inline pass does. A message to a person is ordered
    # by their user id (processor.due_page.channel_of: it stands for their DM).
    return DueOccurrence.for_snapshot(kind.name, snap, channel_of(snap) or "")


def publish(rt: Runtime, occurrences: Sequence[DueOccurrence]) -> Counter[str]:
    """Publish each occurrence, ordering key its channel, and wait for Pub/Sub's answers:
    `published` and `errors` counted, one ERROR line per failed publish."""
    topic = rt.settings.pubsub_topic
    if topic is None:
        raise ValueError("publishing needs PUBSUB_TOPIC")
    client = publisher()
    pending: list[tuple[DueOccurrence, Future[str]]] = [
        (o, client.publish(topic, o.data(), ordering_key=o.channel, **o.attributes()))
        for o in occurrences
    ]
    counts: Counter[str] = Counter()
    for occurrence, future in pending:
        try:
            future.result(timeout=rt.settings.tick_budget_seconds)
        except Exception as exc:
            counts["errors"] += 1
            logs.error(
                "publishing a due occurrence failed; the next tick publishes it again",
                kind=occurrence.kind,
                subject_id=occurrence.subject_id,
                channel=occurrence.channel,
                status="error",
                error_code=type(exc).__name__,
                error_message=str(exc),
            )
            # A failed publish pauses its ordering key in this client until resumed: the
            # next tick must be able to publish the channel again.
            if occurrence.channel:
                client.resume_publish(topic, occurrence.channel)
            continue
        counts["published"] += 1
    return counts
