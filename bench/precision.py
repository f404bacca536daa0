"""Precision (issue 34 point 6): a quiet minute, `messages` one-offs due at one instant over
as many channels, sent by one tick, inline and under DISPATCH=pubsub.

Every process starts and says it is ready first (so start-up is not measured: a function
instance already running); then the one-offs are written due at the next whole second but
one, and the processes are released at that instant, as Cloud Scheduler starts the tick at
:00. Inline, one `tick` process runs one pass (targets.kinds.run_pass, DISPATCH=inline);
under Pub/Sub one `tick` publishes and one `deliver` process serves the ordered
subscription (bench.pubsub_roles). Reported, from when each post reached the stand-in:
p50, p99 and max of posted minus due and of posted minus the tick's start (when the tick process
saw the start signal), duplicates and lost."""

from __future__ import annotations

import math
import time
from datetime import UTC, datetime
from typing import Any

from google.cloud import firestore

from bench import metrics, seeding
from bench.runs import Bench, new_project, run_workers
from bench.services import ROOT
from emulator.pubsub import create_subscription, create_topic

MESSAGES = 50
TARGET_P99_AFTER_TICK_S = 3.0


def precision(
    bench: Bench, *, messages: int = MESSAGES, cap_seconds: float = 60.0
) -> dict[str, Any]:
    """The quiet minute inline and, with the Pub/Sub emulator, under Pub/Sub."""
    runs = {"inline": _quiet_minute(bench, "inline", messages, cap_seconds)}
    if bench.pubsub is not None:
        runs["pubsub"] = _quiet_minute(bench, "pubsub", messages, cap_seconds)
    return runs


def _quiet_minute(bench: Bench, dispatch: str, messages: int, cap_seconds: float) -> dict[str, Any]:
    project = new_project(f"precision-{dispatch}")
    db = firestore.Client(project=project)
    extra = {"DISPATCH": dispatch, "ADMIN_TOKEN": "bench-admin-token"}
    roles = ["tick"]
    shape: dict[str, Any] = {"mode": "tick", "workers": 1, "count": messages}
    shape |= {"channels": messages, "threads": bench.threads, "cap_seconds": cap_seconds}
    if dispatch == "pubsub":
        topic = f"projects/{project}/topics/due-occurrences"
        subscription = f"projects/{project}/subscriptions/deliver"
        create_topic(topic)
        create_subscription(topic, subscription)
        extra["PUBSUB_TOPIC"] = topic
        roles.append("deliver")
        shape["subscription"] = subscription
    seeded: list[seeding.Seeded] = []
    due_at = [0.0]

    def seed_due_now() -> float:
        # Due at the next whole second but one: the seeding is done by then.
        due = datetime.fromtimestamp(math.floor(time.time()) + 2, UTC)
        seeded.extend(seeding.seed(db, "quiet-", messages, messages, due, "QUIET"))
        bench.standin.reset()
        due_at[0] = due.timestamp()
        return due_at[0]

    def all_posted(go: float) -> bool:
        posted = {metrics.delivery_id(p) for p in bench.standin.posts()}
        return len(posted) >= messages or time.time() > go + cap_seconds

    run = run_workers(
        bench,
        project,
        shape,
        ROOT,
        roles=roles,
        extra_env=extra,
        until=all_posted,
        before_go=seed_due_now,
    )
    posts = bench.standin.posts()
    tick_start = next((r["started"] for r in run.results if r.get("mode") == "tick"), run.go)
    counted = metrics.deliveries(seeded, posts, 0.0)
    first: dict[str, float] = {}
    for post in posts:
        key = metrics.delivery_id(post)
        first[key] = min(first.get(key, post["received_at"]), post["received_at"])
    posted = [first[s.delivery_id] for s in seeded if s.delivery_id in first]
    return {
        "dispatch": dispatch,
        "messages": messages,
        "channels": messages,
        "processes": roles,
        "tick_started_after_due_s": round(tick_start - due_at[0], 3),
        "after_due_s": _spread([p - due_at[0] for p in posted]),
        "after_tick_start_s": _spread([p - tick_start for p in posted]),
        "delivered": counted["delivered"],
        "duplicates": counted["duplicates"],
        "lost": counted["lost"],
        "worker_errors": run.errors,
    }


def _spread(values: list[float]) -> dict[str, float | None]:
    return {
        "p50": _round(metrics.percentile(values, 50)),
        "p99": _round(metrics.percentile(values, 99)),
        "max": _round(max(values, default=None)),
    }


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 3)
