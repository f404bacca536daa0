"""What the tick publishes under DISPATCH=pubsub (processor.scan decides what): one Pub/Sub
message per due document (core.pubsub.DueOccurrence), ordered by its channel, and scan
requests (core.scan_request). Nothing is claimed here: `deliver` claims, sends and records
each occurrence (targets.deliver), and the ledger keeps that exactly-once however often a
document is published.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future
from typing import Any, Protocol, TypeVar

from core import logs
from core.pubsub import DueOccurrence, publisher
from core.runtime import Runtime
from core.scan_request import ScanRequest
from core.store import Snapshot
from processor.abc import Passes
from processor.due_page import channel_of


def message_for(kind: Passes[Any, Any], snap: Snapshot) -> DueOccurrence | None:
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
    topic = _topic(rt)
    counts: Counter[str] = Counter()
    paused: set[str] = set()
    for occurrence, exc in _answered(rt, topic, occurrences, lambda o: o.channel):
        if exc is None:
            counts["published"] += 1
            continue
        counts["errors"] += 1
        logs.error(
            "publishing a due occurrence failed; the next scan publishes it again",
            kind=occurrence.kind,
            subject_id=occurrence.subject_id,
            channel=occurrence.channel,
            status="error",
            error_code=type(exc).__name__,
            error_message=str(exc),
        )
        if occurrence.channel:
            paused.add(occurrence.channel)
    # A failed publish pauses its ordering key in this client until resumed, once (the
    # client refuses to resume a key that is not paused): the next scan must be able to
    # publish the channel again.
    for channel in paused:
        publisher().resume_publish(topic, channel)
    return counts


def request_scans(rt: Runtime, requests: Sequence[ScanRequest]) -> Counter[str]:
    """Publish each scan request (no ordering key) and wait for Pub/Sub's answers: `scans`
    and `errors` counted, one ERROR line per failed publish (the next tick asks again)."""
    counts: Counter[str] = Counter()
    for request, exc in _answered(rt, _topic(rt), requests, lambda _: ""):
        if exc is None:
            counts["scans"] += 1
            continue
        counts["errors"] += 1
        logs.error(
            "publishing a scan request failed; the next tick asks again",
            kind=request.kind,
            shard=request.shard,
            status="error",
            error_code=type(exc).__name__,
            error_message=str(exc),
        )
    return counts


class _Message(Protocol):
    def data(self) -> bytes: ...

    def attributes(self) -> dict[str, str]: ...


M = TypeVar("M", bound=_Message)


def _answered(
    rt: Runtime, topic: str, messages: Sequence[M], ordering_key: Callable[[M], str]
) -> Iterator[tuple[M, Exception | None]]:
    """Publish every message at once, then wait for each answer in turn (at most
    TICK_BUDGET_SECONDS each): each message with the exception its publish raised, if any."""
    client = publisher()
    pending: list[tuple[M, Future[str]]] = [
        (m, client.publish(topic, m.data(), ordering_key=ordering_key(m), **m.attributes()))
        for m in messages
    ]
    for message, future in pending:
        try:
            future.result(timeout=rt.settings.tick_budget_seconds)
        except Exception as exc:
            yield message, exc
            continue
        yield message, None


def _topic(rt: Runtime) -> str:
    topic = rt.settings.pubsub_topic
    if topic is None:
        raise ValueError("publishing needs PUBSUB_TOPIC")
    return topic
