"""The Pub/Sub mode's two kinds of benchmark process (DISPATCH=pubsub):

- tick: one publishing pass (processor.publish via targets.kinds.run_pass, as the `tick`
  target runs it under DISPATCH=pubsub) over everything due: one message per due
  occurrence, ordering key its channel.
- deliver: a pull subscriber of the ordered subscription that hands every message it
  receives to the `deliver` target exactly as a push subscription would: the push body
  POSTed through functions-framework's own app for main.py's `deliver` (create_app, the
  CloudEvent conversion, authentication with the admin token as the push relay of `make
  run DISPATCH=pubsub` adds it, handle_deliver), and acknowledged on 2xx, nacked otherwise.
  Why pull and not push: the emulator pushes a subscription to one endpoint, so spreading
  it over 1, 2 or 4 processes would need a load balancer of our own; streaming pull gives
  each process its share, and the client library keeps one message in flight per ordering
  key, as ordered push does per channel. Each process serves `--threads` messages at once
  (PARALLEL_POSTS, the inline worker's posts in flight): one function instance with that
  concurrency.
"""

from __future__ import annotations

import base64
import json
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from core.runtime import Runtime
from targets.kinds import run_pass

MAIN = Path(__file__).resolve().parent.parent / "main.py"


def run_tick_publish(rt: Runtime) -> dict[str, int]:
    """One publishing pass over every kind; the summary's counts."""
    summary = run_pass(rt)
    return {k: v for k, v in summary.items() if isinstance(v, int)}


def push_body(subscription: str, message: Any) -> dict[str, Any]:
    """What a push subscription POSTs for `message` (the Pub/Sub push format)."""
    return {
        "subscription": subscription,
        "message": {
            "data": base64.b64encode(message.data).decode(),
            "messageId": message.message_id,
            "attributes": dict(message.attributes),
            "orderingKey": message.ordering_key,
            "publishTime": message.publish_time.isoformat(),
        },
    }


def run_deliver(
    rt: Runtime, deadline: float, *, subscription: str, stop: str, threads: int, token: str
) -> dict[str, Any]:
    """Serve the subscription until the `stop` file appears (or the deadline), each message
    through `deliver`; returns the counts and when the last message was done (`ended_at`)."""
    import functions_framework
    from google.cloud.pubsub_v1 import SubscriberClient
    from google.cloud.pubsub_v1.subscriber.scheduler import ThreadScheduler
    from google.cloud.pubsub_v1.types import FlowControl

    import targets.deliver

    # Every delivery in this process uses the bench's counted runtime, as one function
    # instance keeps one (core.runtime.runtime_for).
    setattr(targets.deliver, "runtime_for", lambda settings: rt)  # noqa: B010
    app = functions_framework.create_app(  # type: ignore[no-untyped-call]
        target="deliver", source=str(MAIN), signature_type="cloudevent"
    )
    local = threading.local()
    lock = threading.Lock()
    counts: Counter[str] = Counter()
    last = [0.0]
    headers = {"Authorization": f"Bearer {token}"}

    def callback(message: Any) -> None:
        client = getattr(local, "client", None) or app.test_client()
        local.client = client
        response = client.post(
            "/",
            data=json.dumps(push_body(subscription, message)),
            headers=headers,
            content_type="application/json",
        )
        ok = 200 <= response.status_code < 300
        message.ack() if ok else message.nack()
        with lock:
            counts["acked" if ok else "nacked"] += 1
            last[0] = time.time()

    subscriber = SubscriberClient()
    future = subscriber.subscribe(
        subscription,
        callback,
        flow_control=FlowControl(max_messages=threads),
        scheduler=ThreadScheduler(ThreadPoolExecutor(max_workers=threads)),
        await_callbacks_on_shutdown=True,
    )
    while not Path(stop).exists() and time.time() < deadline:
        time.sleep(0.05)
    future.cancel()
    future.result(timeout=60)
    subscriber.close()
    return {**counts, "ended_at": last[0]}
