"""From what the stand-in recorded and what the workers said to the figures we report."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable
from itertools import pairwise
from typing import Any

from bench.seeding import Seeded

# Timing noise at the stand-in (and, between two workers, the handover margin's limits) can
# bring two paced posts a few ms under a second apart.
PACING_TOLERANCE = 0.05
# Pairs of posts closer than a second kept in the result, with their claims from the ledger.
MAX_CLOSE_PAIRS = 20


def percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    rank = max(0, min(len(ordered) - 1, round(q / 100 * len(ordered) + 0.5) - 1))
    return ordered[rank]


def deliveries(seeded: list[Seeded], posts: list[dict[str, Any]], go: float) -> dict[str, Any]:
    """Delivered, duplicates, lost and lag (due, or the start signal if later, to the post's
    arrival at the stand-in), counted by delivery id."""
    expected = {s.delivery_id: s for s in seeded}
    first: dict[str, float] = {}
    per_id: Counter[str] = Counter()
    for post in posts:
        key = delivery_id(post)
        per_id[key] += 1
        first[key] = min(first.get(key, post["received_at"]), post["received_at"])
    unknown = sum(n for d, n in per_id.items() if d not in expected)
    duplicates = sum(n - 1 for d, n in per_id.items() if d in expected and n > 1) + unknown
    lags = [first[d] - max(s.due.timestamp(), go) for d, s in expected.items() if d in first]
    return {
        "seeded": len(expected),
        "delivered": sum(1 for d in expected if d in first),
        "duplicates": duplicates,
        "lost": sum(1 for d in expected if d not in first),
        "lag_p50_s": _round(percentile(lags, 50)),
        "lag_p99_s": _round(percentile(lags, 99)),
        "lag_max_s": _round(max(lags, default=None)),
    }


def pacing(posts: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """Per channel, the smallest gap between two consecutive posts' arrivals, how many
    channels had a gap under one second (less the tolerance), and the first few such pairs
    of posts by delivery id (to be explained from the ledger)."""
    stamps: dict[str, list[tuple[float, str]]] = defaultdict(list)
    for post in posts:
        stamps[post["channel"]].append((post["received_at"], delivery_id(post)))
    pairs = {channel: list(pairwise(sorted(s))) for channel, s in stamps.items()}
    gaps = {c: min((b[0] - a[0] for a, b in p), default=None) for c, p in pairs.items()}
    real = [g for g in gaps.values() if g is not None]
    close = [
        {"channel": channel, "gap_s": _round(b[0] - a[0]), "delivery_ids": [a[1], b[1]]}
        for channel, p in pairs.items()
        for a, b in p
        if b[0] - a[0] < 1 - PACING_TOLERANCE
    ]
    return {
        "channels": len(stamps),
        "min_gap_s": _round(min(real, default=None)),
        "channels_over_one_per_second": sum(1 for g in real if g < 1 - PACING_TOLERANCE),
        "tolerance_s": PACING_TOLERANCE,
        "close_pairs": close[:MAX_CLOSE_PAIRS],
    }


def delivery_id(post: dict[str, Any]) -> str:
    """The delivery id a post carries in its metadata (the stand-in keeps it)."""
    return str(((post.get("metadata") or {}).get("event_payload") or {}).get("delivery_id"))


def workers(results: list[dict[str, Any]], go: float, delivered: int) -> dict[str, Any]:
    """Drain time, throughput, Firestore RPCs and billing units (bench.rpc) per delivered
    message, amortised over every process of the run (the tick's too, in the Pub/Sub mode)."""
    calls: Counter[str] = Counter()
    totals: Counter[str] = Counter()
    billing: Counter[str] = Counter()
    documents = 0
    published = None
    for result in results:
        if "published" in result["totals"]:
            published = (published or 0) + result["totals"]["published"]
        calls.update(result["rpcs"]["calls"])
        documents += result["rpcs"]["documents"]
        billing.update(result["rpcs"].get("billing", {}))
        totals.update(result["totals"])
    drain = max((r["ended"] for r in results), default=go) - go
    rpcs = sum(calls.values())
    return {
        "drain_s": round(drain, 3),
        "messages_per_s": round(delivered / drain, 1) if drain > 0 else None,
        "capped": any(r["capped"] for r in results),
        "rpcs": dict(calls),
        "rpcs_per_delivered": round(rpcs / delivered, 2) if delivered else None,
        "documents_read": documents,
        "billing": dict(billing),
        "billing_per_delivered": {
            unit: round(n / delivered, 2) if delivered else None for unit, n in billing.items()
        },
        # Under DISPATCH=pubsub: the messages Pub/Sub accepted from the tick, per delivery.
        "publishes_per_delivered": (
            round(published / delivered, 2) if delivered and published is not None else None
        ),
        # Messages `deliver` handled beyond one per publish: Pub/Sub's redeliveries (an ack
        # deadline passed while a message waited or ran), each answered by the ledger.
        "pubsub_redeliveries": (
            totals["acked"] + totals["nacked"] - published if published is not None else None
        ),
        "worker_totals": dict(totals),
        "cpu_seconds": {"workers": round(sum(r.get("cpu_seconds", 0.0) for r in results), 2)},
    }


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 3)
