"""Scale-out (issue 34 point 3): N one-offs due in one minute, with SHARDS 1, 4 and 16 under
DISPATCH=pubsub, until every due document was published. Nothing is posted to Slack.

Per (N, SHARDS), in a fresh emulator project: N one-offs due now over `channels` channels,
each with its shard (core.shards, as the API writes it), seeded 500 to a commit, 8 commits
at a time; a topic and an unordered pull subscription on it; one `tick` process running
one pass (targets.kinds.run_pass, as the `tick` target does) and one `count` process
(bench.tick_roles) that counts every due occurrence reaching the subscription and hands
each scan request to main.py's `deliver`, released together. Reported: the tick's own
wall time, the scan requests the tick published and the scans `deliver` ran, the time from
the start until the last due document reached the subscription, and Firestore's billed
reads (every process's) per published document.

With the fan-out (processor/scan.py) in the tree, TICK_LIMIT keeps its default (500, one
scan's page) and scans continue page by page; without it, TICK_LIMIT is N, so the tick's
one pass publishes everything (SHARDS then only splits the due query) and the harness
measures that (`fan_out` false in the result)."""

from __future__ import annotations

import importlib.util
import time
from datetime import UTC, datetime
from typing import Any

from google.cloud import firestore

from bench import seeding
from bench.runs import Bench, new_project, run_workers
from bench.services import ROOT
from emulator.pubsub import create_topic

SIZES = (1_000, 10_000, 50_000)
SHARDS = (1, 4, 16)
CHANNELS = 500
_SEED_THREADS = 8


def fan_out_present() -> bool:
    """Whether this tree's tick fans out (issue 34's processor/scan.py)."""
    return importlib.util.find_spec("processor.scan") is not None


def scale_out(
    bench: Bench,
    *,
    sizes: tuple[int, ...] = SIZES,
    shards: tuple[int, ...] = SHARDS,
    cap_seconds: float = 600.0,
) -> dict[str, Any]:
    """Every (size, shards) run, smallest first."""
    fan_out = fan_out_present()
    runs = []
    for size in sizes:
        for n in shards:
            print(f"bench: scale-out, {size} due, SHARDS={n}...", flush=True)
            runs.append(_run(bench, size, n, fan_out, cap_seconds))
    return {"fan_out": fan_out, "channels": CHANNELS, "runs": runs}


def _run(bench: Bench, size: int, shards: int, fan_out: bool, cap: float) -> dict[str, Any]:
    project = new_project(f"scale-out-{size}-{shards}")
    db = firestore.Client(project=project)
    started = time.perf_counter()
    due = datetime.now(UTC).replace(microsecond=0)
    seeding.seed(db, "so-", size, CHANNELS, due, "SCALE", shards=shards, threads=_SEED_THREADS)
    seed_seconds = time.perf_counter() - started
    topic = f"projects/{project}/topics/due-occurrences"
    subscription = f"projects/{project}/subscriptions/count"
    create_topic(topic)
    _unordered_subscription(topic, subscription)
    extra = {
        "DISPATCH": "pubsub",
        "PUBSUB_TOPIC": topic,
        "ADMIN_TOKEN": "bench-admin-token",
        "SHARDS": str(shards),
        **({} if fan_out else {"TICK_LIMIT": str(size)}),
    }
    shape: dict[str, Any] = {"mode": "count", "workers": 1, "count": size, "channels": CHANNELS}
    shape |= {"threads": bench.threads, "cap_seconds": cap, "subscription": subscription}
    run = run_workers(bench, project, shape, ROOT, roles=["tick", "count"], extra_env=extra)
    tick = next((r for r in run.results if r["mode"] == "tick"), None)
    count = next((r for r in run.results if r["mode"] == "count"), None)
    reads = sum(r["rpcs"].get("billing", {}).get("reads", 0) for r in run.results)
    distinct = count["totals"].get("distinct", 0) if count else 0
    last_new = count["totals"].get("last_new_at", 0.0) if count else 0.0
    scans_run = count["totals"].get("scan_requests", 0) if count else 0
    tick_scans = tick["totals"].get("scans", 0) if tick else 0
    return {
        "due": size,
        "shards": shards,
        "seed_seconds": round(seed_seconds, 1),
        "tick_seconds": round(tick["ended"] - tick["started"], 3) if tick else None,
        "tick_published": tick["totals"].get("published", 0) if tick else None,
        "tick_scan_requests": tick_scans,
        "scans_in_deliver": scans_run,
        "scans_failed": count["totals"].get("scan_failed", 0) if count else None,
        # The tick's own scan (SHARDS=1, or a tree without the fan-out) counts as one; with
        # SHARDS above 1 the tick asks one scan per kind and shard and reads no due page.
        # Scans still queued when the last due document arrived are not counted.
        "scan_invocations": scans_run + (1 if shards == 1 or not fan_out else 0),
        "published_distinct": distinct,
        "received": count["totals"].get("received", 0) if count else 0,
        "all_published_s": round(last_new - run.go, 3) if distinct >= size else None,
        "billed_reads": reads,
        "reads_per_published": round(reads / distinct, 3) if distinct else None,
        "capped": any(r["capped"] for r in run.results),
        "worker_errors": run.errors,
    }


def _unordered_subscription(topic: str, subscription: str) -> None:
    """A pull subscription without ordering: the counter takes messages as fast as they come."""
    from google.cloud.pubsub_v1 import SubscriberClient

    with SubscriberClient() as subscriber:
        subscriber.create_subscription(
            request={"name": subscription, "topic": topic, "ack_deadline_seconds": 60}
        )
