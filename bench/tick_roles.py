"""Two more benchmark processes for DISPATCH=pubsub (bench.pubsub_roles has the first two):

- ticks: the `tick` target's pass (targets.kinds.run_pass) every `tick_every` seconds
  until the stop file appears: a backlog that outlives several ticks, as Cloud Scheduler
  would tick a minute apart while `deliver` drains;
- count: a pull subscriber of an unordered subscription on the topic that counts what the
  ticks published (each due occurrence once by kind and subject id, with when it first
  arrived) and posts nothing to Slack; a scan request (`kind` "scan", docs/pubsub.md) goes
  to main.py's `deliver` through functions-framework's app, as a push would, so the fan-out
  runs as it does in production. It stops once `count` distinct occurrences arrived (or at
  the deadline).
"""

from __future__ import annotations

import json
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

from bench.pubsub_roles import MAIN, push_body
from core.runtime import Runtime
from targets.kinds import run_pass

# The `kind` attribute of a scan request (core/scan_request.py, issue 34's design).
SCAN_KIND = "scan"


def run_ticks(rt: Runtime, deadline: float, *, stop: str, tick_every: float) -> dict[str, Any]:
    """Passes every `tick_every` seconds until the stop file (or the deadline): the counts
    of all of them summed, `ticks` and each tick's start (epoch seconds, `tick_starts`)."""
    totals: Counter[str] = Counter()
    starts: list[float] = []
    while not Path(stop).exists() and time.time() < deadline:
        started = time.time()
        starts.append(started)
        summary = run_pass(rt)
        totals.update({k: v for k, v in summary.items() if isinstance(v, int)})
        while time.time() < started + tick_every and not Path(stop).exists():
            time.sleep(0.05)
    return {**totals, "ticks": len(starts), "tick_starts": starts}


def run_count(
    rt: Runtime, deadline: float, *, subscription: str, count: int, token: str, threads: int
) -> dict[str, Any]:
    """Count the due occurrences reaching `subscription` until `count` distinct ones did
    (or the deadline), handing scan requests to `deliver`: `distinct`, `received`,
    `scan_requests` (and `scan_failed`: answered other than 2xx, redelivered), and
    `last_new_at`, when the last new occurrence arrived (epoch seconds)."""
    import functions_framework
    from google.cloud.pubsub_v1 import SubscriberClient
    from google.cloud.pubsub_v1.types import FlowControl

    import targets.deliver

    setattr(targets.deliver, "runtime_for", lambda settings: rt)  # noqa: B010
    app = functions_framework.create_app(  # type: ignore[no-untyped-call]
        target="deliver", source=str(MAIN), signature_type="cloudevent"
    )
    local = threading.local()
    lock = threading.Lock()
    seen: set[tuple[str, str]] = set()
    counts: Counter[str] = Counter()
    last_new = [0.0]
    done = threading.Event()
    headers = {"Authorization": f"Bearer {token}"}

    def scan(message: Any) -> bool:
        client = getattr(local, "client", None) or app.test_client()
        local.client = client
        response = client.post(
            "/",
            data=json.dumps(push_body(subscription, message)),
            headers=headers,
            content_type="application/json",
        )
        status: int = response.status_code
        return 200 <= status < 300

    def callback(message: Any) -> None:
        kind = message.attributes.get("kind", "")
        if kind == SCAN_KIND:
            ok = scan(message)
            message.ack() if ok else message.nack()
            with lock:
                counts["scan_requests" if ok else "scan_failed"] += 1
            return
        message.ack()
        key = (kind, message.attributes.get("subject_id", ""))
        with lock:
            counts["received"] += 1
            if key not in seen:
                seen.add(key)
                last_new[0] = time.time()
            if len(seen) >= count:
                done.set()

    subscriber = SubscriberClient()
    future = subscriber.subscribe(
        subscription, callback, flow_control=FlowControl(max_messages=max(threads, 1000))
    )
    done.wait(timeout=max(0.0, deadline - time.time()))
    future.cancel()
    future.result(timeout=60)
    subscriber.close()
    return {**counts, "distinct": len(seen), "last_new_at": last_new[0]}
